# /// script
# requires-python = ">=3.10"
# dependencies = ["torch", "triton", "numpy"]
#
# [tool.snippet]
# gpu = { min-cc = "8.0" }
# cpu = { interpreter = false }
# ///
"""Claim: what decides whether the vector add loads 128 bits at a time, and how a block is laid
out over threads, in the code the compiler generates for an H200.

Runs on any machine: python claim_vector_width.py
Compiles for CUDA compute capability 9.0 without a GPU, with the specializations a launch would
pass, and reads the layout (Triton GPU IR) and the loads (PTX).
"""

import os
import re
import tempfile

os.environ.pop("TRITON_INTERPRET", None)
os.environ["TRITON_CACHE_DIR"] = tempfile.mkdtemp()

import torch
import triton
import triton.language as tl
from triton.backends.compiler import GPUTarget


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr, MASKED: tl.constexpr):
    offsets = tl.program_id(axis=0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    if MASKED:
        mask = offsets < n_elements
        x = tl.load(x_ptr + offsets, mask=mask)
        y = tl.load(y_ptr + offsets, mask=mask)
        tl.store(out_ptr + offsets, x + y, mask=mask)
    else:
        tl.store(out_ptr + offsets, tl.load(x_ptr + offsets) + tl.load(y_ptr + offsets))


@triton.jit
def transpose_kernel(
    x_ptr, out_ptr, M, N, stride_xm, stride_xn, stride_on, stride_om,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
):  # fmt: skip
    offs_m = tl.program_id(axis=0) * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.program_id(axis=1) * BLOCK_N + tl.arange(0, BLOCK_N)
    mask = (offs_m[:, None] < M) & (offs_n[None, :] < N)
    tile = tl.load(x_ptr + offs_m[:, None] * stride_xm + offs_n[None, :] * stride_xn, mask=mask)
    tl.store(out_ptr + offs_n[None, :] * stride_on + offs_m[:, None] * stride_om, tile, mask=mask)


@triton.jit
def dot_kernel(a_ptr, b_ptr, c_ptr, BLOCK: tl.constexpr):
    rows, cols = tl.arange(0, BLOCK)[:, None], tl.arange(0, BLOCK)[None, :]
    a, b = tl.load(a_ptr + rows * BLOCK + cols), tl.load(b_ptr + rows * BLOCK + cols)
    tl.store(c_ptr + rows * BLOCK + cols, tl.dot(a, b))


H200 = GPUTarget("cuda", 90, 32)
BACKEND = triton.compiler.make_backend(H200)
POINTERS = {"x_ptr": "*fp32", "y_ptr": "*fp32", "out_ptr": "*fp32"}


# --8<-- [start:claim]
def specialization(value, name: str) -> list:
    """The attribute a launch passes for this argument: 16-byte aligned, or divisible by 16."""
    if isinstance(value, torch.Tensor):
        desc = BACKEND.get_tensor_specialization(value, align=True)  # (1)!
    else:
        desc = BACKEND.get_int_specialization(value, align=True)
    return BACKEND.parse_attr(desc)


def compile_add(offset: int, n: int, masked: bool, block: int = 1024, warps: int = 4) -> dict:
    buffer = torch.empty(4096 + 4, dtype=torch.float32)
    x = buffer[offset : offset + 4096]  # (2)!
    values = {"x_ptr": x, "y_ptr": x, "out_ptr": x, "n_elements": n}
    attrs = {(i,): specialization(v, k) for i, (k, v) in enumerate(values.items())}
    source = triton.compiler.ASTSource(
        fn=add_kernel,
        signature={
            **POINTERS,
            "n_elements": "i32",
            "BLOCK_SIZE": "constexpr",
            "MASKED": "constexpr",
        },
        constexprs={"BLOCK_SIZE": block, "MASKED": masked},
        attrs={k: v for k, v in attrs.items() if v},
    )
    compiled = triton.compile(source, target=H200, options={"num_warps": warps})
    ptx, ttgir = compiled.asm["ptx"], compiled.asm["ttgir"]
    return {
        "128-bit loads": len(re.findall(r"ld\.global(\.\w+)*\.v4\.b32", ptx)),  # (3)!
        "32-bit loads": len(re.findall(r"ld\.global(\.(?!v\d)\w+)*\.b32", ptx)),
        "sizePerThread": re.search(r"sizePerThread = (\[\d+\])", ttgir).group(1),  # (4)!
        "threads": int(re.search(r"\.reqntid (\d+)", ptx).group(1)),
    }


CASES = {
    "aligned, n=4096, masked": (0, 4096, True),
    "aligned, n=4100, masked": (0, 4100, True),
    "aligned, n=4100, no mask": (0, 4100, False),  # (5)!
    "pointers 4 bytes off, n=4096, masked": (1, 4096, True),
}
results = {name: compile_add(*case) for name, case in CASES.items()}
for name, info in results.items():
    print(f"{name + ':':38} {info}")
small = compile_add(0, 4096, True, block=64, warps=4)
print(f"BLOCK_SIZE=64, num_warps=4: {small}")  # (6)!
# --8<-- [end:claim]

# --8<-- [start:shared]
source = triton.compiler.ASTSource(
    fn=transpose_kernel,
    signature={
        "x_ptr": "*fp32",
        "out_ptr": "*fp32",
        "M": "i32",
        "N": "i32",
        "stride_xm": "i32",
        "stride_xn": "constexpr",
        "stride_on": "i32",
        "stride_om": "constexpr",
        "BLOCK_M": "constexpr",
        "BLOCK_N": "constexpr",
    },  # fmt: skip
    constexprs={"stride_xn": 1, "stride_om": 1, "BLOCK_M": 32, "BLOCK_N": 32},  # (1)!
    attrs={(i,): [["tt.divisibility", 16]] for i in (0, 1, 2, 3, 4, 6)},
)
compiled = triton.compile(source, target=H200)
layouts = re.findall(r"sizePerThread = (\[\d+, \d+\])", compiled.asm["ttgir"])  # (2)!
conversions = compiled.asm["ttgir"].count("ttg.convert_layout")
print(
    f"transpose, 32 x 32 float32 tile: layouts {layouts}, {conversions} layout conversion, "
    f"{compiled.metadata.shared} bytes of shared memory"  # (3)!
)
dot = triton.compile(
    triton.compiler.ASTSource(
        fn=dot_kernel,
        signature={"a_ptr": "*fp16", "b_ptr": "*fp16", "c_ptr": "*fp32", "BLOCK": "constexpr"},
        constexprs={"BLOCK": 64},
        attrs={(i,): [["tt.divisibility", 16]] for i in (0, 1, 2)},
    ),
    target=H200,
)
print(f"tl.dot of two 64 x 64 float16 blocks: {dot.metadata.shared} bytes of shared memory")  # (4)!
# --8<-- [end:shared]

assert results["aligned, n=4096, masked"]["128-bit loads"] > 0
assert results["aligned, n=4096, masked"]["32-bit loads"] == 0
assert results["aligned, n=4100, masked"]["128-bit loads"] == 0
assert results["aligned, n=4100, no mask"]["128-bit loads"] > 0
assert results["aligned, n=4100, no mask"]["32-bit loads"] == 0
assert results["pointers 4 bytes off, n=4096, masked"]["128-bit loads"] == 0
assert all(results[k]["sizePerThread"] == "[4]" for k in list(CASES)[:3]), results
assert small["sizePerThread"] == "[1]" and small["threads"] == 128, small
assert layouts == ["[1, 4]", "[4, 1]"] and conversions == 1, (layouts, conversions)
assert compiled.metadata.shared == 32 * 32 * 4, compiled.metadata.shared
assert dot.metadata.shared >= 2 * 64 * 64 * 2, dot.metadata.shared
print("claim_vector_width: holds")
