# /// script
# requires-python = ">=3.10"
# dependencies = ["torch", "triton", "numpy"]
#
# [tool.snippet]
# gpu = { min-cc = "8.0" }
# cpu = { skip = "reads the code the compiler generates for the GPU; the interpreter compiles nothing", skip-zh = "读的是编译器为 GPU 生成的代码；解释器不做编译" }
# ///
"""Read what Triton generated for a kernel: the files in TRITON_CACHE_DIR, the compiled kernel's
.asm dictionary, and a few lines of each stage worth knowing.

On a CUDA GPU:  python generated_code.py
"""

import os
import tempfile

# --8<-- [start:cache]
CACHE_DIR = tempfile.mkdtemp(prefix="triton-cache-")
os.environ["TRITON_CACHE_DIR"] = CACHE_DIR  # (1)!

import re

import torch
import triton
import triton.language as tl


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(axis=0)
    offsets = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    tl.store(out_ptr + offsets, x + y, mask=mask)


def compile_add():
    x, y = torch.rand(4096, device="cuda"), torch.rand(4096, device="cuda")
    out = torch.empty_like(x)
    compiled = add_kernel[(4,)](x, y, out, 4096, BLOCK_SIZE=1024)  # (2)!
    torch.testing.assert_close(out, x + y, rtol=0, atol=0)
    return compiled


# --8<-- [end:cache]


# --8<-- [start:read]
def describe(compiled, cache_dir: str, source_file: str) -> dict:
    name = compiled.name  # (1)!
    files = sorted(
        f.removeprefix(name)
        for _, _, found in os.walk(cache_dir)
        for f in found
        if f.startswith(name + ".")
    )
    print(f"in TRITON_CACHE_DIR: {name} + {files}")
    print(f"compiled.asm keys: {sorted(compiled.asm.keys())}")  # (2)!

    ttir, ttgir, ptx = compiled.asm["ttir"], compiled.asm["ttgir"], compiled.asm["ptx"]
    signature = next(line for line in ttir.splitlines() if "tt.func" in line)
    print(f"TTIR: arguments marked tt.divisibility = 16: {signature.count('tt.divisibility = 16')}")
    layout = next(line for line in ttgir.splitlines() if line.startswith("#blocked"))
    print(f"TTGIR: {layout}")  # (3)!
    for directive in (".target", ".reqntid"):
        line = next(line for line in ptx.splitlines() if line.strip().startswith(directive))
        print(f"PTX: {line.strip()}")  # (4)!
    loads = re.findall(r"ld\.global\.v4\.b32", ptx)
    print(f"PTX: {len(loads)} x ld.global.v4.b32 (128-bit loads)")

    lines = ptx.splitlines()
    first_load = next(i for i, line in enumerate(lines) if "ld.global.v4.b32" in line)
    loc = next(line for line in reversed(lines[:first_load]) if line.strip().startswith(".loc"))
    source_line = int(loc.split()[2])  # (5)!
    with open(source_file) as f:
        text = f.read().splitlines()[source_line - 1].strip()
    print(f"PTX: the first 128-bit load comes from source line {source_line}: {text}")

    sass = compiled.asm["sass"]  # (6)!
    print(f"SASS: {sass.count('LDG.E.128')} x LDG.E.128, {sass.count('STG.E.128')} x STG.E.128")
    return {"files": files, "loads": len(loads), "text": text}


# --8<-- [end:read]

if __name__ == "__main__":
    if not torch.cuda.is_available():
        raise SystemExit("This snippet needs a CUDA GPU: it reads the code compiled for it.")
    # --8<-- [start:run]
    found = describe(compile_add(), CACHE_DIR, __file__)
    # --8<-- [end:run]
    assert {".ttir", ".ttgir", ".llir", ".ptx", ".cubin", ".json"} <= set(found["files"]), found
    assert found["loads"] > 0 and found["text"].startswith("x = tl.load"), found
    print("generated_code: all checks passed")
