# /// script
# requires-python = ">=3.10"
# dependencies = ["torch", "triton", "numpy"]
#
# [tool.snippet]
# gpu = { min-cc = "8.0" }
# cpu = { interpreter = false }
# ///
"""Claim: a process that finds a kernel in the on-disk cache does not compile it, so its
tl.static_print stays silent; TRITON_ALWAYS_COMPILE=1 compiles it again anyway, and so does
MLIR_ENABLE_DUMP=1, which is part of the cache key and prints the IR before each compiler pass.

Runs on any machine: python claim_always_compile.py
Compiles for an H200 (CUDA compute capability 9.0) in four fresh processes that share one cache
directory, and counts the static_print lines and the IR dumps (one before each compiler pass).
"""

import os
import subprocess
import sys
import tempfile

import triton
import triton.language as tl


@triton.jit
def double(x_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    offsets = tl.program_id(axis=0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask)
    tl.static_print("static_print: x is", x)
    tl.store(out_ptr + offsets, x * 2, mask=mask)


def compile_once() -> None:
    from triton.backends.compiler import GPUTarget

    source = triton.compiler.ASTSource(
        fn=double,
        signature={
            "x_ptr": "*fp32",
            "out_ptr": "*fp32",
            "n_elements": "i32",
            "BLOCK_SIZE": "constexpr",
        },
        constexprs={"BLOCK_SIZE": 16},
    )
    triton.compile(source, target=GPUTarget("cuda", 90, 32))


if "--child" in sys.argv:
    compile_once()
    sys.exit(0)


# --8<-- [start:claim]
def compile_in_fresh_process(cache_dir: str, **settings: str) -> tuple[int, int]:
    """Compiles the kernel in a new process; returns its static_print lines and MLIR IR dumps."""
    env = {**os.environ, "TRITON_CACHE_DIR": cache_dir, **settings}  # (1)!
    for name in ("TRITON_INTERPRET", "TRITON_ALWAYS_COMPILE", "MLIR_ENABLE_DUMP"):
        if name not in settings:
            env.pop(name, None)
    child = subprocess.run(
        [sys.executable, __file__, "--child"], env=env, capture_output=True, text=True, check=True
    )
    return child.stdout.count("static_print: x is"), child.stderr.count("IR Dump Before")


with tempfile.TemporaryDirectory() as cache_dir:
    cases = {
        "empty cache": {},
        "kernel in the cache": {},  # (2)!
        "kernel in the cache, TRITON_ALWAYS_COMPILE=1": {"TRITON_ALWAYS_COMPILE": "1"},
        "kernel in the cache, MLIR_ENABLE_DUMP=1": {"MLIR_ENABLE_DUMP": "1"},  # (4)!
    }
    counts = {case: compile_in_fresh_process(cache_dir, **env) for case, env in cases.items()}
for case, (prints, dumps) in counts.items():
    print(f"{case}: {prints} static_print lines, {dumps} MLIR pass dumps")  # (3)!
# --8<-- [end:claim]

prints = [p for p, _ in counts.values()]
dumps = [d for _, d in counts.values()]
assert prints == [1, 0, 1, 1], counts
assert dumps[:3] == [0, 0, 0] and dumps[3] > 10, counts
print("claim_always_compile: holds")
