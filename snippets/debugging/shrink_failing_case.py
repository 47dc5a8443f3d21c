# /// script
# requires-python = ">=3.10"
# dependencies = ["torch", "triton", "numpy"]
#
# [tool.snippet]
# gpu = { min-cc = "8.0" }
# cpu = { interpreter = true }
# ///
"""Shrink a failing case: bisect a failing size down to the smallest input that still fails,
save that input with torch.save, and reload it to reproduce the failure.

The kernel under test has a deliberate bug. On a CUDA GPU:  python shrink_failing_case.py
On a CPU:  TRITON_INTERPRET=1 python shrink_failing_case.py
"""

import os
import tempfile

import torch
import triton
import triton.language as tl

INTERPRETED = os.environ.get("TRITON_INTERPRET") == "1"
DEVICE = "cpu" if INTERPRETED else "cuda"


# --8<-- [start:buggy]
@triton.jit
def sum_kernel(x_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    offsets = tl.arange(0, BLOCK_SIZE)
    x = tl.load(x_ptr + offsets, mask=offsets < n_elements, other=0.0)
    tl.store(out_ptr, tl.sum(x))


def buggy_sum(x: torch.Tensor) -> torch.Tensor:
    out = torch.empty(1, dtype=x.dtype, device=x.device)
    block_size = min(triton.next_power_of_2(x.numel()), 1024)  # (1)!
    sum_kernel[(1,)](x, out, x.numel(), BLOCK_SIZE=block_size)
    return out[0]


# --8<-- [end:buggy]


# --8<-- [start:shrink]
def make_input(n: int) -> torch.Tensor:
    generator = torch.Generator().manual_seed(n)  # (1)!
    return torch.randint(1, 10, (n,), generator=generator).float().to(DEVICE)


def fails(x: torch.Tensor) -> bool:
    return bool(buggy_sum(x) != x.sum())  # (2)!


def smallest_failing_size(passing: int, failing: int) -> tuple[int, int]:
    """Bisect between a size that passes and one that fails; return (size, runs)."""
    runs = 0
    while failing - passing > 1:
        middle = (passing + failing) // 2
        runs += 1
        if fails(make_input(middle)):
            failing = middle
        else:
            passing = middle
    return failing, runs


# --8<-- [end:shrink]

if __name__ == "__main__":
    if not INTERPRETED and not torch.cuda.is_available():
        raise SystemExit(
            "No CUDA GPU here. On a CPU: TRITON_INTERPRET=1 python shrink_failing_case.py"
        )
    # --8<-- [start:run]
    big = make_input(100_000)
    print(f"100000 elements: kernel {buggy_sum(big).item()}, torch {big.sum().item()}")
    assert fails(big) and not fails(make_input(1))
    size, runs = smallest_failing_size(passing=1, failing=100_000)
    print(f"bisection: {runs} runs, smallest failing size {size}")
    assert fails(make_input(size)) and not fails(make_input(size - 1))  # (1)!

    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "failing_input.pt")
        torch.save({"x": make_input(size).cpu(), "seed": size}, path)  # (2)!
        saved = torch.load(path)  # (3)!
    x = saved["x"].to(DEVICE)
    got, want = buggy_sum(x).item(), x.sum().item()
    print(f"reloaded failing_input.pt ({x.numel()} elements): kernel {got}, torch {want}")
    print(f"the difference is x[1024] = {x[1024].item()}: elements past 1024 are never read")
    # --8<-- [end:run]
    assert got != want and want - got == x[1024].item()
    assert size == 1025
