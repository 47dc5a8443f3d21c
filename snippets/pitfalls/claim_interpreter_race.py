# /// script
# requires-python = ">=3.10"
# dependencies = ["torch", "triton", "numpy"]
#
# [tool.snippet]
# gpu = { min-cc = "8.0" }
# cpu = { interpreter = true }
# ///
"""Claim: the interpreter runs a grid's programs one after another, so a data race between
programs gives the right answer there and a wrong one on the GPU.

On a CUDA GPU:  python claim_interpreter_race.py   (the racy sum is wrong, the atomic one right)
On a CPU:       TRITON_INTERPRET=1 python claim_interpreter_race.py   (both are right)
"""

import os

import torch
import triton
import triton.language as tl

INTERPRETED = os.environ.get("TRITON_INTERPRET") == "1"


# --8<-- [start:kernels]
@triton.jit
def sum_racy(x_ptr, total_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    offsets = tl.program_id(axis=0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    partial = tl.sum(tl.load(x_ptr + offsets, mask=offsets < n_elements, other=0), axis=0)
    tl.store(total_ptr, tl.load(total_ptr) + partial)  # (1)!


@triton.jit
def sum_atomic(x_ptr, total_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    offsets = tl.program_id(axis=0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    partial = tl.sum(tl.load(x_ptr + offsets, mask=offsets < n_elements, other=0), axis=0)
    tl.atomic_add(total_ptr, partial)  # (2)!


# --8<-- [end:kernels]


# --8<-- [start:run]
def total(kernel, n: int, device: str) -> int:
    x = torch.ones(n, dtype=torch.int32, device=device)
    result = torch.zeros(1, dtype=torch.int32, device=device)
    kernel[(triton.cdiv(n, 256),)](x, result, n, BLOCK_SIZE=256)
    return int(result.item())


where, n = ("interpreter", 2**14) if INTERPRETED else ("GPU", 2**22)  # (1)!
device = "cpu" if INTERPRETED else "cuda"
racy, atomic = total(sum_racy, n, device), total(sum_atomic, n, device)
programs = triton.cdiv(n, 256)
print(f"{where}, {programs} programs, load + store: {'right' if racy == n else 'wrong'} sum")
print(f"{where}, {programs} programs, tl.atomic_add: {'right' if atomic == n else 'wrong'} sum")
# --8<-- [end:run]

assert atomic == n, atomic
if INTERPRETED:
    assert racy == n, "the interpreter now runs programs concurrently: update the pages"
else:
    assert racy < n, "the racy sum came out right on the GPU this time: rerun"
for size in (0, 1, 255, 257):
    assert total(sum_atomic, size, device) == size
print("claim_interpreter_race: all checks passed")
