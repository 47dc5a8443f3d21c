# /// script
# requires-python = ">=3.10"
# dependencies = ["torch", "triton", "numpy"]
#
# [tool.snippet]
# gpu = { min-cc = "8.0" }
# cpu = { interpreter = true }
# ///
"""Claim: prune_configs_by decides which configs are benchmarked for each new key.

early_config_prune drops configs before timing; perf_model + top_k keeps the k configs with the
lowest estimate. When one config is left: triton 3.6 still benchmarks it, from triton 3.8 on it does not.
Runs on any machine (natively on a GPU, else it turns the interpreter on itself) and counts
calls to a stand-in timer.
"""

import os

import torch

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
if DEVICE == "cpu":  # no GPU: the interpreter, switched on before any kernel is decorated
    os.environ["TRITON_INTERPRET"] = "1"
import triton
import triton.language as tl

CONFIGS = [
    triton.Config({"BLOCK_SIZE": block}, num_warps=warps)
    for block in (128, 512, 2048, 8192)
    for warps in (2, 8)
]
timed = []


def counting_bench(fn, quantiles):
    timed.append(fn)
    return [1.0, 1.0, 1.0]


def copy(x_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    offsets = tl.program_id(axis=0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    tl.store(out_ptr + offsets, tl.load(x_ptr + offsets, mask=mask), mask=mask)


grid = lambda meta: (triton.cdiv(meta["n_elements"], meta["BLOCK_SIZE"]),)


# --8<-- [start:early]
def drop_oversized(configs, named_args, **kwargs):  # (1)!
    """Keep blocks no larger than the data, rounded up to a power of two."""
    limit = max(128, triton.next_power_of_2(named_args["n_elements"]))
    return [c for c in configs if c.kwargs["BLOCK_SIZE"] <= limit]


kernel = triton.autotune(
    configs=CONFIGS,
    key=["n_elements"],
    prune_configs_by={"early_config_prune": drop_oversized},
    do_bench=counting_bench,
)(triton.jit(copy))
for n, expected in ((100, 2), (1000, 4), (100_000, 8)):
    x = torch.rand(n, device=DEVICE)
    out = torch.empty_like(x)
    timed.clear()
    kernel[grid](x, out, n)  # (2)!
    assert torch.equal(out, x)
    print(f"early_config_prune, n={n}: {len(timed)} of {len(CONFIGS)} configs benchmarked")
    assert len(timed) == expected
# --8<-- [end:early]


# --8<-- [start:model]
def made_up_model(BLOCK_SIZE, num_warps, **kwargs):  # (1)!
    """An estimated time per config: prefers big blocks, then fewer warps."""
    return -BLOCK_SIZE + num_warps


version = tuple(int(part) for part in triton.__version__.split(".")[:2])
for top_k, expected in ((2, 2), (1, 1 if version < (3, 8) else 0)):  # (2)!
    kernel = triton.autotune(
        configs=CONFIGS,
        key=["n_elements"],
        prune_configs_by={"perf_model": made_up_model, "top_k": top_k},
        do_bench=counting_bench,
    )(triton.jit(copy))
    x = torch.rand(100_000, device=DEVICE)
    timed.clear()
    kernel[grid](x, torch.empty_like(x), x.numel())
    best = kernel.best_config
    print(
        f"perf_model, top_k={top_k}: {len(timed)} configs benchmarked, "
        f"chosen BLOCK_SIZE={best.kwargs['BLOCK_SIZE']}, num_warps={best.num_warps}"
    )
    assert len(timed) == expected and best.kwargs["BLOCK_SIZE"] == 8192 and best.num_warps == 2
# --8<-- [end:model]
print("claim_prune_configs: all checks passed")
