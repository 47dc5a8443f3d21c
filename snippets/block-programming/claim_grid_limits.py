# /// script
# requires-python = ">=3.10"
# dependencies = ["torch", "triton", "numpy"]
#
# [tool.snippet]
# gpu = { min-cc = "8.0" }
# cpu = { interpreter = true }
# ///
"""Claim: grid axes 1 and 2 hold at most 65,535 programs on an NVIDIA GPU; the interpreter has no
such limit, so a test that passes there says nothing about it.

On a CUDA GPU:  python claim_grid_limits.py
On a CPU:       TRITON_INTERPRET=1 python claim_grid_limits.py
Each program adds 1 to a counter, so the counter says how many programs ran.
"""

import os

import torch
import triton
import triton.language as tl

INTERPRETED = os.environ.get("TRITON_INTERPRET") == "1"


# --8<-- [start:claim]
@triton.jit
def count_programs(counter_ptr):
    tl.atomic_add(counter_ptr, 1)


def launch(grid: tuple) -> str:
    counter = torch.zeros(1, dtype=torch.int32, device="cpu" if INTERPRETED else "cuda")
    try:
        count_programs[grid](counter)
        ran = int(counter.item())  # waits for the kernel
    except RuntimeError as exc:  # (1)!
        return f"{type(exc).__name__}: {str(exc).splitlines()[0]}"
    return f"ran {ran} programs"


if INTERPRETED:
    print(f"grid (1, 65536) under the interpreter: {launch((1, 65536))}")
else:
    results = {grid: launch(grid) for grid in [(1, 65536), (1, 1, 65536), (1, 65535), (65536,)]}
    for grid, result in results.items():
        print(f"grid {grid} on the GPU: {result}")  # (2)!
# --8<-- [end:claim]

if INTERPRETED:
    assert launch((1, 3)) == "ran 3 programs"
else:
    assert results[(1, 65535)] == "ran 65535 programs", results
    assert results[(65536,)] == "ran 65536 programs", results
    for grid in [(1, 65536), (1, 1, 65536)]:
        assert "invalid argument" in results[grid], results
print("claim_grid_limits: holds")
