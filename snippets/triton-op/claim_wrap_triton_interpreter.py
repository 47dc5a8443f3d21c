# /// script
# requires-python = ">=3.10"
# dependencies = ["torch", "triton", "numpy"]
#
# [tool.snippet]
# gpu = { skip = "checks a limit of the CPU interpreter; on a GPU, sigmoid_mul_op.py runs wrap_triton natively", skip-zh = "检查的是 CPU 解释器的限制；GPU 上由 sigmoid_mul_op.py 原生运行 wrap_triton" }
# cpu = { interpreter = true }
# ///
"""Claim: under TRITON_INTERPRET=1, torch.library.wrap_triton rejects the kernel up to torch 2.12
and returns it unchanged from torch 2.13 on (pytorch/pytorch#185597), so a triton_op runs
interpreted on CPU tensors only from 2.13. Whatever the triton version: torch decides.

Asserts each lock's truth by version and fails the day a release changes it.
"""

import os

os.environ["TRITON_INTERPRET"] = "1"

import torch
import triton
import triton.language as tl
from torch.library import triton_op, wrap_triton

TORCH = tuple(int(p) for p in torch.__version__.split("+")[0].split(".")[:2])
# Checked with torch 2.11.0, 2.12.0, 2.12.1 (rejects) and 2.13.0, 2.14.0, 2.14.1, 2.15.0 (accepts),
# each with its own triton and with others; the change is pytorch/pytorch#185597, in 2.13.0.
ACCEPTS_INTERPRETED = TORCH >= (2, 13)


@triton.jit
def sigmoid_mul_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    offsets = tl.program_id(axis=0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    tl.store(out_ptr + offsets, x * tl.sigmoid(y), mask=mask)


@triton_op("mylib::sigmoid_mul", mutates_args=())  # no CPU kernel registered
def sigmoid_mul(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    out = torch.empty_like(x)
    n = out.numel()
    wrap_triton(sigmoid_mul_kernel)[(triton.cdiv(n, 128),)](x, y, out, n, BLOCK_SIZE=128)
    return out


# --8<-- [start:claim]
print(f"@triton.jit under TRITON_INTERPRET=1 gives: {type(sigmoid_mul_kernel).__name__}")  # (1)!
try:
    wrapped = wrap_triton(sigmoid_mul_kernel)
    wrap_result = f"returns the kernel unchanged: {wrapped is sigmoid_mul_kernel}"
except RuntimeError as exc:
    wrap_result = f"{type(exc).__name__}: {exc}"
print(f"wrap_triton under TRITON_INTERPRET=1: {wrap_result}")

x, y = torch.randn(1000), torch.randn(1000)
try:
    out = torch.ops.mylib.sigmoid_mul(x, y)  # (2)!
    torch.testing.assert_close(out, x * torch.sigmoid(y))
    op_result = "runs interpreted, same values as x * sigmoid(y)"
except RuntimeError as exc:
    op_result = f"{type(exc).__name__}: {exc}"
print(f"a triton_op with no CPU kernel, on CPU tensors: {op_result}")
# --8<-- [end:claim]

if ACCEPTS_INTERPRETED:
    assert wrap_result == "returns the kernel unchanged: True", wrap_result
    assert op_result.startswith("runs interpreted"), op_result
else:
    message = "wrap_triton only works on functions annotated with triton.jit or triton.autotune"
    assert wrap_result == f"RuntimeError: {message}", wrap_result
    assert op_result == f"RuntimeError: {message}", op_result
