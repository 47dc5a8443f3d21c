# /// script
# requires-python = ">=3.10"
# dependencies = ["torch", "triton", "numpy"]
#
# [tool.snippet]
# gpu = { min-cc = "8.0" }
# cpu = { interpreter = true }
# ///
"""Claim: a grid callable is called with a dict of every kernel argument by name.

Not only the meta-parameters: the pointers and plain integers too, so a grid can read
meta["n_elements"] as well as meta["BLOCK_SIZE"]. Launch options such as num_warps are not in it.
On a CUDA GPU:  python claim_grid_arguments.py
On a CPU:       TRITON_INTERPRET=1 python claim_grid_arguments.py
"""

import os

import torch
import triton
import triton.language as tl

INTERPRETED = os.environ.get("TRITON_INTERPRET") == "1"


@triton.jit
def copy_kernel(x_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    offsets = tl.program_id(axis=0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    tl.store(out_ptr + offsets, tl.load(x_ptr + offsets, mask=mask), mask=mask)


# --8<-- [start:claim]
calls: list[dict] = []


def grid(meta: dict) -> tuple[int]:
    calls.append(meta)
    return (triton.cdiv(meta["n_elements"], meta["BLOCK_SIZE"]),)


x = torch.rand(1000, device="cpu" if INTERPRETED else "cuda")
out = torch.empty_like(x)
copy_kernel[grid](x, out, x.numel(), BLOCK_SIZE=128, num_warps=2)
print(f"the grid callable got: {sorted(calls[0])}")
assert sorted(calls[0]) == ["BLOCK_SIZE", "n_elements", "out_ptr", "x_ptr"]
assert torch.equal(out, x)
# --8<-- [end:claim]
print("claim_grid_arguments: all checks passed")
