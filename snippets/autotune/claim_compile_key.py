# /// script
# requires-python = ">=3.10"
# dependencies = ["torch", "triton", "numpy"]
#
# [tool.snippet]
# gpu = { min-cc = "8.0" }
# cpu = { skip = "torch.compile does not trace a kernel under TRITON_INTERPRET=1", skip-zh = "在 TRITON_INTERPRET=1 下 torch.compile 无法追踪内核" }
# ///
"""Claim: inside torch.compile, Inductor ignores triton.autotune's key= and cache_results=: it
tunes a user kernel once per compiled graph, so with dynamic shapes every size runs the config
tuned for the first one. prune_configs_by and reset_to_zero are honoured.

On a CUDA GPU:  python claim_compile_key.py
Counts Inductor's rounds of tuning by wrapping CachingAutotuner.autotune_to_one_config, and has
the kernel write the BLOCK_SIZE it ran with, for each size.
"""

import glob
import os
import tempfile

ROOT = tempfile.mkdtemp()
os.environ["TRITON_CACHE_DIR"] = os.path.join(ROOT, "triton")
os.environ["TORCHINDUCTOR_CACHE_DIR"] = os.path.join(ROOT, "inductor")
os.environ.pop("TRITON_INTERPRET", None)

import torch
import triton
import triton.language as tl
from torch._inductor.runtime import triton_heuristics

torch._inductor.config.force_disable_caches = True
SIZES = (1000, 4096, 2**20)
CONFIGS = [triton.Config({"BLOCK_SIZE": 128}), triton.Config({"BLOCK_SIZE": 1024}, num_warps=8)]
grid = lambda meta: (triton.cdiv(meta["n_elements"], meta["BLOCK_SIZE"]),)


def copy_and_tell(x_ptr, out_ptr, ran_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    offsets = tl.program_id(axis=0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    tl.store(out_ptr + offsets, tl.load(x_ptr + offsets, mask=mask), mask=mask)
    if tl.program_id(axis=0) == 0:
        tl.store(ran_ptr, BLOCK_SIZE)


def add_sum(x_ptr, total_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    offsets = tl.program_id(axis=0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    block = tl.load(x_ptr + offsets, mask=offsets < n_elements, other=0)
    tl.atomic_add(total_ptr, tl.sum(block, axis=0))


rounds = []
tune = triton_heuristics.CachingAutotuner.autotune_to_one_config


def counted_tune(self, *args, **kwargs):
    rounds.append(1)
    return tune(self, *args, **kwargs)


triton_heuristics.CachingAutotuner.autotune_to_one_config = counted_tune


def autotuned(fn, **options):
    return triton.autotune(configs=CONFIGS, key=["n_elements"], **options)(triton.jit(fn))


# --8<-- [start:claim]
def sizes_through(kernel, compile_options: dict | None) -> list[int]:
    """Runs the kernel once per size, eager or compiled; returns the BLOCK_SIZE each size ran."""

    def run(x):
        out, ran = torch.empty_like(x), torch.zeros(1, dtype=torch.int32, device=x.device)
        kernel[grid](x, out, ran, x.numel())
        return out, ran

    if compile_options is not None:
        torch._dynamo.reset()
        run = torch.compile(run, fullgraph=True, **compile_options)  # (1)!
    ran_with = []
    for n in SIZES:
        x = torch.randn(n, device="cuda")
        out, ran = run(x)
        torch.testing.assert_close(out, x, rtol=0, atol=0)
        ran_with.append(int(ran.item()))
    return ran_with


kernel = autotuned(copy_and_tell)
sizes_through(kernel, None)
print(
    f"eager, key=['n_elements'], {len(SIZES)} sizes: {len(kernel.cache)} rounds of tuning"
)  # (2)!
results = {}
for dynamic in (False, None, True):
    rounds.clear()
    ran_with = sizes_through(autotuned(copy_and_tell), {"dynamic": dynamic})
    results[dynamic] = len(rounds), ran_with
    print(
        f"torch.compile(dynamic={dynamic}), {len(SIZES)} sizes: {len(rounds)} rounds of tuning; "
        f"one config for every size: {len(set(ran_with)) == 1}"  # (3)!
    )
# --8<-- [end:claim]

# --8<-- [start:honoured]
rounds.clear()
keep_first = {"early_config_prune": lambda configs, named_args, **kwargs: configs[:1]}
ran_with = sizes_through(autotuned(copy_and_tell, prune_configs_by=keep_first), {"dynamic": True})
prune_rounds, pruned_ran_with = len(rounds), ran_with
print(f"compiled, prune_configs_by keeps the first: {len(rounds)} rounds, ran {set(ran_with)}")

ones = torch.ones(10_000, dtype=torch.int32, device="cuda")
total = torch.full((1,), 5, dtype=torch.int32, device="cuda")
summing = autotuned(add_sum, reset_to_zero=["total_ptr"])
torch._dynamo.reset()
accumulate = torch.compile(lambda x, t: summing[grid](x, t, x.numel()), fullgraph=True)
accumulate(ones, total)
print(f"compiled, reset_to_zero: total {total.item()} after one call (10000 when zeroed)")

eager_cached = autotuned(copy_and_tell, cache_results=True)
sizes_through(eager_cached, None)
eager_files = len(glob.glob(os.path.join(ROOT, "**", "*.autotune.json"), recursive=True))
sizes_through(autotuned(copy_and_tell, cache_results=True), {"dynamic": True})
compiled_files = (
    len(glob.glob(os.path.join(ROOT, "**", "*.autotune.json"), recursive=True)) - eager_files
)
print(f"cache_results=True: {eager_files} .autotune.json files eager, {compiled_files} compiled")
# --8<-- [end:honoured]

assert len(kernel.cache) == len(SIZES), kernel.cache
assert results[False][0] == len(SIZES), results
assert results[None][0] == 2, results
assert results[True][0] == 1 and len(set(results[True][1])) == 1, results
assert prune_rounds == 0 and pruned_ran_with == [128] * len(SIZES), (prune_rounds, pruned_ran_with)
assert total.item() == 10_000, total
assert eager_files == len(SIZES) and compiled_files == 0, (eager_files, compiled_files)
print("claim_compile_key: holds")
