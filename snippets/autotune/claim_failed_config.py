# /// script
# requires-python = ">=3.10"
# dependencies = ["torch", "triton", "numpy"]
#
# [tool.snippet]
# gpu = { min-cc = "8.0" }
# cpu = { interpreter = true }
# ///
"""Claim: on the GPU, a config that fails to compile is timed as infinity and dropped without a
word; under the interpreter the same config raises.

On a CUDA GPU:  python claim_failed_config.py
On a CPU:       TRITON_INTERPRET=1 python claim_failed_config.py
"""

import math
import os

import torch
import triton
import triton.language as tl

INTERPRETED = os.environ.get("TRITON_INTERPRET") == "1"
DEVICE = "cpu" if INTERPRETED else "cuda"


# --8<-- [start:claim]
def run_twice(fn, quantiles):  # a stand-in timer: runs each config, times nothing
    fn()
    fn()
    return [1.0] * len(quantiles)


@triton.autotune(
    configs=[triton.Config({"BLOCK_SIZE": 128}), triton.Config({"BLOCK_SIZE": 256})],
    key=["n_elements"],
    do_bench=run_twice,
)
@triton.jit
def add_one(x_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    tl.static_assert(BLOCK_SIZE <= 128, "this kernel takes blocks of at most 128")  # (1)!
    offsets = tl.program_id(axis=0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    tl.store(x_ptr + offsets, tl.load(x_ptr + offsets, mask=mask) + 1, mask=mask)


x = torch.zeros(1000, device=DEVICE)
where = "under the interpreter" if INTERPRETED else "on the GPU"
raised = None
try:
    add_one[lambda meta: (triton.cdiv(1000, meta["BLOCK_SIZE"]),)](x, 1000)
    timings = {str(c.kwargs): t for c, t in add_one.configs_timings.items()}
    print(f"BLOCK_SIZE=256 fails its static_assert, {where}: timings {timings}")  # (2)!
    print(f"  chosen: {add_one.best_config.kwargs}, no error or warning")
except Exception as exc:
    raised = type(exc).__name__
    print(f"BLOCK_SIZE=256 fails its static_assert, {where}: {raised}")
# --8<-- [end:claim]

if INTERPRETED:
    assert raised == "InterpreterError", raised
    assert not hasattr(add_one, "configs_timings") or len(getattr(add_one, "cache", {})) == 0
else:
    assert raised is None, raised
    assert add_one.best_config.kwargs == {"BLOCK_SIZE": 128}
    assert all(math.isinf(t) for t in timings["{'BLOCK_SIZE': 256}"]), timings
print("claim_failed_config: holds")
