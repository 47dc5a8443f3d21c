# /// script
# requires-python = ">=3.10"
# dependencies = ["torch", "triton", "numpy"]
#
# [tool.snippet]
# gpu = { min-cc = "8.0" }
# cpu = { interpreter = true }
# ///
"""A kernel that treats memory as one flat run of elements, given non-contiguous tensors.

On a CUDA GPU:  python non_contiguous.py
On a CPU:       TRITON_INTERPRET=1 python non_contiguous.py
The launcher without a layout check returns wrong numbers without an error; the one that calls
.contiguous() is right for every layout. Checks both against x * y.
"""

import os

import torch
import triton
import triton.language as tl

INTERPRETED = os.environ.get("TRITON_INTERPRET") == "1"
DEVICE = "cpu" if INTERPRETED else "cuda"


@triton.jit
def mul_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    offsets = tl.program_id(axis=0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    tl.store(out_ptr + offsets, x * y, mask=mask)


# --8<-- [start:bug]
def mul_unchecked(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    out = torch.empty_like(x)  # (1)!
    n = out.numel()
    mul_kernel[(triton.cdiv(n, 1024),)](x, y, out, n, BLOCK_SIZE=1024)  # (2)!
    return out


# --8<-- [end:bug]


# --8<-- [start:fix]
def mul(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    if x.shape != y.shape or x.dtype != y.dtype or x.device != y.device:
        raise ValueError("x and y must have one shape, dtype and device")
    x, y = x.contiguous(), y.contiguous()  # (1)!
    out = torch.empty(x.shape, dtype=x.dtype, device=x.device)  # (2)!
    n = out.numel()
    mul_kernel[(triton.cdiv(n, 1024),)](x, y, out, n, BLOCK_SIZE=1024)
    return out


# --8<-- [end:fix]

# --8<-- [start:run]
torch.manual_seed(0)
a, b = torch.randn(64, 48, device=DEVICE), torch.randn(64, 48, device=DEVICE)
wide = torch.randn(48, 128, device=DEVICE)
cases = {
    "both contiguous": (a.t().contiguous(), b.t().contiguous()),
    "both transposed": (a.t(), b.t()),  # (1)!
    "x contiguous, y transposed": (a.t().contiguous(), b.t()),
    "both sliced with a step": (wide[:, ::2], wide[:, 1::2]),  # (2)!
}
for name, (x, y) in cases.items():
    wrong = (mul_unchecked(x, y) != x * y).sum().item()
    print(f"flat kernel, {name + ':':28} {wrong} of {x.numel()} elements wrong, no error")
fixed = all(torch.equal(mul(x, y), x * y) for x, y in cases.values())
print(f"with .contiguous() in the launcher: every case equal to x * y: {fixed}")
# --8<-- [end:run]

wrong = {name: (mul_unchecked(x, y) != x * y).sum().item() for name, (x, y) in cases.items()}
assert wrong["both contiguous"] == 0 and wrong["both transposed"] == 0, wrong
assert wrong["x contiguous, y transposed"] > 0 and wrong["both sliced with a step"] > 0, wrong
assert fixed
print("non_contiguous: all checks passed")
