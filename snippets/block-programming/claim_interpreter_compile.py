# /// script
# requires-python = ">=3.10"
# dependencies = ["torch", "triton", "numpy"]
#
# [tool.snippet]
# gpu = { skip = "checks a limit of the CPU interpreter; on a GPU, vector_add_compile.py runs the kernel inside torch.compile", skip-zh = "检查的是 CPU 解释器的限制；GPU 上由 vector_add_compile.py 在 torch.compile 里运行内核" }
# cpu = { interpreter = true }
# ///
"""Claim: torch.compile(fullgraph=True) cannot trace a kernel launch under TRITON_INTERPRET=1.

Fails the day a release lets it through, so the page that says so gets updated.
"""

import os

os.environ["TRITON_INTERPRET"] = "1"

import torch
import triton
import triton.language as tl


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    offsets = tl.program_id(axis=0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    tl.store(out_ptr + offsets, x + y, mask=mask)


# --8<-- [start:claim]
@torch.compile(fullgraph=True)
def compiled_add(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    out = torch.empty_like(x)
    add_kernel[(triton.cdiv(x.numel(), 128),)](x, y, out, x.numel(), BLOCK_SIZE=128)
    return out


x = y = torch.ones(1000)
try:
    compiled_add(x, y)
except torch._dynamo.exc.Unsupported as exc:
    first_line = str(exc).splitlines()[0]
    print(f"torch.compile(fullgraph=True) over an interpreted kernel: {type(exc).__name__}")
    print(f"  {first_line}")
else:
    raise AssertionError("torch.compile now traces interpreted kernels: update the pages")
# --8<-- [end:claim]
