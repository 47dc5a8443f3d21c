# /// script
# requires-python = ">=3.10"
# dependencies = ["torch", "triton", "numpy"]
#
# [tool.snippet]
# gpu = { min-cc = "8.0" }
# cpu = { interpreter = true }
# ///
"""A kernel without a mask writes past the end of its output, silently; a guarded buffer shows it.

On a CUDA GPU:  python missing_mask.py
On a CPU:       TRITON_INTERPRET=1 python missing_mask.py
The input and the output are views cut from larger buffers that this file owns, so the stray
reads and writes land on memory nobody else uses, and the file counts what they changed.
"""

import os

import torch
import triton
import triton.language as tl

INTERPRETED = os.environ.get("TRITON_INTERPRET") == "1"
DEVICE = "cpu" if INTERPRETED else "cuda"


# --8<-- [start:kernels]
@triton.jit
def double_unmasked(x_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    offsets = tl.program_id(axis=0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    x = tl.load(x_ptr + offsets)  # (1)!
    tl.store(out_ptr + offsets, x * 2)


@triton.jit
def double(x_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    offsets = tl.program_id(axis=0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements  # (2)!
    x = tl.load(x_ptr + offsets, mask=mask)
    tl.store(out_ptr + offsets, x * 2, mask=mask)


# --8<-- [end:kernels]


# --8<-- [start:guard]
SENTINEL = -7.0


def guarded_run(kernel, x: torch.Tensor, block_size: int) -> tuple[torch.Tensor, int]:
    """Run kernel on x into a view of a sentinel-filled buffer; count what changed outside it."""
    n, pad = x.numel(), block_size
    source = torch.ones(n + pad, device=x.device)  # (1)!
    source[:n] = x
    buffer = torch.full((pad + n + pad,), SENTINEL, device=x.device)  # (2)!
    out = buffer[pad : pad + n]
    kernel[(triton.cdiv(n, block_size),)](source[:n], out, n, BLOCK_SIZE=block_size)
    outside = torch.cat([buffer[:pad], buffer[pad + n :]])
    return out, int((outside != SENTINEL).sum())


x = torch.arange(1000.0).to(DEVICE)
out, changed = guarded_run(double_unmasked, x, block_size=256)
print(f"no mask, n=1000, BLOCK_SIZE=256: {changed} elements past the end of out overwritten")
out, changed = guarded_run(double, x, block_size=256)
print(f"with the mask: {changed} elements outside out changed")  # (3)!
# --8<-- [end:guard]

assert changed == 0
torch.testing.assert_close(out, x * 2, rtol=0, atol=0)
_, stray = guarded_run(double_unmasked, x, block_size=256)
assert stray == 4 * 256 - 1000, stray  # the last block's 24 elements past the end

torch.manual_seed(0)
for n in (0, 1, 255, 256, 257, 1000):
    for block_size in (64, 256):
        xs = torch.randn(n).to(DEVICE)
        out, changed = guarded_run(double, xs, block_size)
        assert changed == 0, (n, block_size, changed)
        torch.testing.assert_close(out, xs * 2, rtol=0, atol=0)
special = torch.tensor([float("nan"), float("inf"), -float("inf"), -0.0]).to(DEVICE)
out, changed = guarded_run(double, special, 64)
torch.testing.assert_close(out, special * 2, rtol=0, atol=0, equal_nan=True)
print("double: sizes 0 to 1000 and NaN/Inf equal to x * 2, nothing written outside")
print("missing_mask: all checks passed")
