# /// script
# requires-python = ">=3.10"
# dependencies = ["torch", "triton", "numpy"]
#
# [tool.snippet]
# gpu = { min-cc = "8.0" }
# cpu = { interpreter = true }
# ///
"""Past 2**31 elements, `pid * BLOCK_SIZE` wraps around in 32 bits; `pid.to(tl.int64)` fixes it.

On a CUDA GPU:  python offsets_int64.py   (also adds two tensors of 2**31 + 5 int8 elements)
On a CPU:       TRITON_INTERPRET=1 python offsets_int64.py
The first part stores each program's start offset instead of touching memory there, so the
wrong offsets are shown, never used.
"""

import os

import torch
import triton
import triton.language as tl

INTERPRETED = os.environ.get("TRITON_INTERPRET") == "1"


# --8<-- [start:starts]
@triton.jit
def block_starts(out_ptr, BLOCK_SIZE: tl.constexpr, WIDE: tl.constexpr):
    pid = tl.program_id(axis=0)  # a 32-bit integer
    if WIDE:
        start = pid.to(tl.int64) * BLOCK_SIZE  # (1)!
    else:
        start = pid * BLOCK_SIZE  # (2)!
    tl.store(out_ptr + pid, start)


block = 2**20
programs = 2**31 // block + 1  # the last program starts at element 2**31
for wide in (False, True):
    starts = torch.empty(programs, dtype=torch.int64, device="cpu" if INTERPRETED else "cuda")
    block_starts[(programs,)](starts, BLOCK_SIZE=block, WIDE=wide)
    print(f"WIDE={wide}: the last program starts at {starts[-1].item()}")
# --8<-- [end:starts]
assert starts[-1].item() == 2**31


# --8<-- [start:add]
@triton.jit
def add_kernel_64(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(axis=0)
    offsets = pid.to(tl.int64) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)  # (1)!
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    tl.store(out_ptr + offsets, x + y, mask=mask)


# --8<-- [end:add]


def guarded_add(n: int, device: str) -> None:
    """add_kernel_64 into the first n elements of a longer buffer: the rest must not change."""
    x = torch.ones(n, dtype=torch.int8, device=device)
    y = torch.full((n,), 2, dtype=torch.int8, device=device)
    buffer = torch.full((n + 1024,), 7, dtype=torch.int8, device=device)
    add_kernel_64[(triton.cdiv(n, 1024),)](x, y, buffer[:n], n, BLOCK_SIZE=1024)
    assert int((buffer[:n] == 3).sum()) == n, f"n={n}: wrong sums"
    assert bool((buffer[n:] == 7).all()), f"n={n}: the kernel wrote past its output"


for n in (1, 1000, 1029):
    guarded_add(n, "cpu" if INTERPRETED else "cuda")
print("small sizes with int64 offsets: correct, nothing written past the end")

if INTERPRETED:
    print("skipping the 2**31-element add on the CPU (6 GiB, far too slow interpreted)")
else:
    n = 2**31 + 5
    guarded_add(n, "cuda")  # every element, the last 5 past 2**31 included
    print(f"int64 offsets: all {n} sums correct, including the 5 past 2**31")
print("offsets_int64: all checks passed")
