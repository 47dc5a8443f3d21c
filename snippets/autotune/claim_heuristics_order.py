# /// script
# requires-python = ">=3.10"
# dependencies = ["torch", "triton", "numpy"]
#
# [tool.snippet]
# gpu = { min-cc = "8.0" }
# cpu = { interpreter = true }
# ///
"""Claim: a heuristic that reads an autotuned meta-parameter needs @triton.autotune outermost.

Decorators apply from the bottom up, and each wrapper fills in its meta-parameters before calling
the one below it. With @triton.heuristics on top, the heuristic runs before the autotuner has
chosen BLOCK_SIZE: KeyError. Fails the day a release changes either order's behaviour.
On a CUDA GPU:  python claim_heuristics_order.py
On a CPU:       TRITON_INTERPRET=1 python claim_heuristics_order.py
"""

import os
import time

import torch
import triton
import triton.language as tl

INTERPRETED = os.environ.get("TRITON_INTERPRET") == "1"
DEVICE = "cpu" if INTERPRETED else "cuda"


def cpu_do_bench(fn, quantiles):
    """Stand-in for the GPU timer under TRITON_INTERPRET=1: run fn three times."""
    times_ms = []
    for _ in range(3):
        start = time.perf_counter()
        fn()
        times_ms.append((time.perf_counter() - start) * 1e3)
    times_ms.sort()
    return [times_ms[round(q * (len(times_ms) - 1))] for q in quantiles]


TIMER = cpu_do_bench if INTERPRETED else None
CONFIGS = [triton.Config({"BLOCK_SIZE": 128}), triton.Config({"BLOCK_SIZE": 256})]


# --8<-- [start:right]
@triton.autotune(configs=CONFIGS, key=["n_elements"], do_bench=TIMER)  # (1)!
@triton.heuristics({"EVEN": lambda args: args["n_elements"] % args["BLOCK_SIZE"] == 0})  # (2)!
@triton.jit
def copy_kernel(x_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr, EVEN: tl.constexpr):
    offsets = tl.program_id(axis=0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    if EVEN:  # (3)!
        tl.store(out_ptr + offsets, tl.load(x_ptr + offsets))
    else:
        mask = offsets < n_elements
        tl.store(out_ptr + offsets, tl.load(x_ptr + offsets, mask=mask), mask=mask)


# --8<-- [end:right]


# --8<-- [start:wrong]
@triton.heuristics({"EVEN": lambda args: args["n_elements"] % args["BLOCK_SIZE"] == 0})
@triton.autotune(configs=CONFIGS, key=["n_elements"], do_bench=TIMER)
@triton.jit
def copy_kernel_wrong(x_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr, EVEN: tl.constexpr):
    offsets = tl.program_id(axis=0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    tl.store(out_ptr + offsets, tl.load(x_ptr + offsets, mask=mask), mask=mask)


grid = lambda meta: (triton.cdiv(meta["n_elements"], meta["BLOCK_SIZE"]),)
for n in (1000, 1024):  # (1)!
    x = torch.rand(n, device=DEVICE)
    out = torch.empty_like(x)
    copy_kernel[grid](x, out, n)
    assert torch.equal(out, x)
print("autotune outermost: copies 1000 and 1024 elements correctly")
try:
    copy_kernel_wrong[grid](x, out, x.numel())
except KeyError as exc:
    print(f"heuristics outermost: KeyError: {exc}")
    assert str(exc) == "'BLOCK_SIZE'"
else:
    raise AssertionError("heuristics outermost now sees BLOCK_SIZE: update the page")
# --8<-- [end:wrong]
print("claim_heuristics_order: all checks passed")
