# /// script
# requires-python = ">=3.10"
# dependencies = ["torch", "triton", "numpy"]
#
# [tool.snippet]
# gpu = { skip = "checks a limit of the CPU interpreter; on a GPU, vector_add.py covers bfloat16", skip-zh = "检查的是 CPU 解释器的限制；GPU 上的 bfloat16 由 vector_add.py 验证" }
# cpu = { interpreter = true }
# ///
"""Claim: under TRITON_INTERPRET=1, a bfloat16 kernel runs without an error and gives wrong sums.

Fails the day a Triton release fixes it (the assert) or starts raising (the exception), so the
page that says so gets updated.
Runs on any machine: it turns the interpreter on itself.
"""

# --8<-- [start:switch]
import os

os.environ["TRITON_INTERPRET"] = "1"  # (1)!

import torch
import triton
import triton.language as tl

# --8<-- [end:switch]


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    offsets = tl.program_id(axis=0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    tl.store(out_ptr + offsets, x + y, mask=mask)


# --8<-- [start:claim]
def interpreted_add(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    out = torch.empty_like(x)
    add_kernel[(triton.cdiv(x.numel(), 128),)](x, y, out, x.numel(), BLOCK_SIZE=128)
    return out


torch.manual_seed(0)
x, y = torch.randn(1000), torch.randn(1000)
assert torch.equal(interpreted_add(x, y), x + y)  # (1)!

xb, yb = x.bfloat16(), y.bfloat16()
result = interpreted_add(xb, yb)  # (2)!
wrong = (result != xb + yb).float().mean().item()
print(f"bfloat16 under TRITON_INTERPRET=1: no error, {wrong:.0%} of the elements differ from x + y")
assert wrong > 0.5, "bfloat16 now works under the interpreter: update the pages and vector_add.py"
# --8<-- [end:claim]
