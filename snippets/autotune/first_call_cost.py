# /// script
# requires-python = ">=3.10"
# dependencies = ["torch", "triton", "numpy"]
#
# [tool.snippet]
# gpu = { min-cc = "8.0", timing = true }
# cpu = { skip = "measures compile and benchmark time on the GPU, which the interpreter does not have", skip-zh = "测的是 GPU 上的编译和基准测试耗时，解释器没有这两样" }
# ///
"""How long the first call of an autotuned kernel takes, and how fast the config it finds is.

A memory-bound kernel (vector add of 2**26 float32) autotuned over 2, 8 and 32 candidate configs.
All in one process, after Triton has compiled, run and timed another kernel, so process start-up
is not in any figure. Each measurement uses a new JIT function, a new autotuner and an empty
TRITON_CACHE_DIR: every config is compiled from scratch. Then, for 8 configs, the same
measurement with the compiled kernels on disk, and with the tuning result on disk
(cache_results=True). Three repeats of everything.
On a CUDA GPU:  python first_call_cost.py
"""

import json
import os
import statistics
import tempfile
import time

import torch
import triton
import triton.language as tl
import triton.testing

N = 2**26
REPEATS = 3


def add(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    offsets = tl.program_id(axis=0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    tl.store(out_ptr + offsets, x + y, mask=mask)


@triton.jit
def scale_kernel(x_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    offsets = tl.program_id(axis=0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    tl.store(out_ptr + offsets, tl.load(x_ptr + offsets, mask=mask) * 3, mask=mask)


grid = lambda meta: (triton.cdiv(meta["n_elements"], meta["BLOCK_SIZE"]),)

# --8<-- [start:candidates]
CANDIDATES = {
    2: [  # (1)!
        triton.Config({"BLOCK_SIZE": 128}, num_warps=4),
        triton.Config({"BLOCK_SIZE": 1024}, num_warps=8),
    ],
    8: [  # (2)!
        triton.Config({"BLOCK_SIZE": block}, num_warps=warps)
        for block in (256, 1024, 4096, 16384)
        for warps in (2, 8)
    ],
    32: [  # (3)!
        triton.Config({"BLOCK_SIZE": block}, num_warps=warps)
        for block in (128, 256, 512, 1024, 2048, 4096, 8192, 16384)
        for warps in (1, 2, 4, 8)
    ],
}
# --8<-- [end:candidates]

# --8<-- [start:first-call]
timer_calls = []


def counted_do_bench(fn, quantiles):  # (1)!
    timer_calls.append(fn)
    return triton.testing.do_bench(fn, quantiles=quantiles)


def first_call(configs, cache_dir: str, cache_results: bool = False):
    """Time one call of a freshly autotuned vector add; return (ms, kernel, configs timed)."""
    os.environ["TRITON_CACHE_DIR"] = cache_dir  # (2)!
    kernel = triton.autotune(
        configs=configs,
        key=["n_elements"],
        do_bench=counted_do_bench,
        cache_results=cache_results,
    )(triton.jit(add))  # (3)!
    timer_calls.clear()
    torch.cuda.synchronize()
    start = time.perf_counter()
    kernel[grid](x, y, out, N)  # (4)!
    torch.cuda.synchronize()
    return (time.perf_counter() - start) * 1e3, kernel, len(timer_calls)


# --8<-- [end:first-call]


def warm_up_triton(root: str) -> None:
    """Compile, run, time and autotune another kernel, so that Triton's one-time start-up
    (loading the compiler, the driver bindings, the timer) is paid before any measurement."""
    os.environ["TRITON_CACHE_DIR"] = os.path.join(root, "warm-up")
    small = torch.rand(4096, device="cuda")
    scale_kernel[(4,)](small, torch.empty_like(small), 4096, BLOCK_SIZE=1024)
    triton.testing.do_bench(lambda: scale_kernel[(4,)](small, small, 4096, BLOCK_SIZE=1024))
    tuned = triton.autotune(configs=CANDIDATES[2], key=["n_elements"])(scale_kernel)
    tuned[grid](small, torch.empty_like(small), 4096)
    torch.cuda.synchronize()


def summary(values: list[float], unit: str, op: str, compile: str, spread="min-max") -> dict:
    values = sorted(values)
    if spread == "min-max":
        low, high = values[0], values[-1]
    else:
        q = statistics.quantiles(values, n=5)
        low, high = q[0], q[3]
    return {
        "value": round(statistics.median(values), 3),
        "unit": unit,
        "statistic": "median",
        "spread": spread,
        "low": round(low, 3),
        "high": round(high, 3),
        "repeats": len(values),
        "op": op,
        "shape": f"n=2**26 ({N})",
        "dtype": "float32",
        "compile": compile,
    }


def run_times_us(kernel, **meta) -> list[float]:
    """Every run's time of one launch over all elements, in microseconds."""
    launch = lambda: kernel[grid](x, y, out, N, **meta)
    return [t * 1e3 for t in triton.testing.do_bench(launch, rep=50, return_mode="all")]


if __name__ == "__main__":
    if not torch.cuda.is_available():
        raise SystemExit("This snippet needs a CUDA GPU: it measures compiling and benchmarking.")
    torch.manual_seed(0)
    x, y = torch.rand(N).cuda(), torch.rand(N).cuda()
    out = torch.empty_like(x)
    first_ms = {size: [] for size in CANDIDATES}
    best_us = {size: [] for size in CANDIDATES}
    spread_ratio, fastest_us, slowest_us = [], [], []
    warm_ms, cached_ms = [], []
    with tempfile.TemporaryDirectory() as root:
        warm_up_triton(root)
        # --8<-- [start:measure]
        for repeat in range(REPEATS):
            for size, configs in CANDIDATES.items():
                cache_dir = os.path.join(root, f"{size}-{repeat}")  # empty
                ms, kernel, timed = first_call(configs, cache_dir, cache_results=True)
                assert timed == size  # every config was benchmarked
                torch.testing.assert_close(out, x + y, rtol=0, atol=0)
                first_ms[size].append(ms)
                best_us[size] += run_times_us(kernel)  # (1)!
                best = kernel.best_config
                print(
                    f"repeat {repeat}, {size:2} configs: first call {ms:7.0f} ms, chose "
                    f"BLOCK_SIZE={best.kwargs['BLOCK_SIZE']}, num_warps={best.num_warps}"
                )
                if size == 32:
                    medians = [t[0] for t in kernel.configs_timings.values() if t[0] < float("inf")]
                    fastest_us.append(min(medians) * 1e3)
                    slowest_us.append(max(medians) * 1e3)
                    spread_ratio.append(max(medians) / min(medians))
                if size == 8:  # (2)!
                    ms_warm, _, timed_warm = first_call(configs, cache_dir, cache_results=False)
                    ms_cached, cached, timed_cached = first_call(configs, cache_dir, True)
                    assert (timed_warm, timed_cached) == (8, 0), (timed_warm, timed_cached)
                    assert cached.best_config == best
                    warm_ms.append(ms_warm)
                    cached_ms.append(ms_cached)
        # --8<-- [end:measure]
    fixed = triton.jit(add)
    out.zero_()
    fixed_us = run_times_us(fixed, BLOCK_SIZE=1024, num_warps=4)
    torch.testing.assert_close(out, x + y, rtol=0, atol=0)

    figures = {}
    for size in CANDIDATES:
        figures[f"first_call_{size}_ms"] = summary(
            first_ms[size],
            "ms",
            f"first call of the vector add autotuned over {size} configs, empty cache, "
            "Triton already warmed up by another kernel",
            "included",
        )
        figures[f"best_{size}_us"] = summary(
            best_us[size],
            "µs",
            f"one run of the vector add with the config chosen from {size} candidates, "
            "all runs of the three repeats",
            "excluded",
            spread="p20-p80",
        )
    figures["per_config_32_ms"] = summary(
        [ms / 32 for ms in first_ms[32]],
        "ms",
        "first call with 32 configs divided by 32: compiling and benchmarking one config",
        "included",
    )
    figures["fixed_us"] = summary(
        fixed_us,
        "µs",
        "one run of the vector add with BLOCK_SIZE=1024, num_warps=4, no autotuning",
        "excluded",
        spread="p20-p80",
    )
    figures["fastest_of_32_us"] = summary(
        fastest_us,
        "µs",
        "fastest of the 32 configs, the autotuner's median, per repeat",
        "excluded",
    )
    figures["slowest_of_32_us"] = summary(
        slowest_us,
        "µs",
        "slowest of the 32 configs, the autotuner's median, per repeat",
        "excluded",
    )
    figures["slowest_over_fastest_32"] = {
        "value": round(statistics.median(spread_ratio), 2),
        "statistic": "ratio",
        "op": "slowest over fastest of the 32 configs (autotuner's medians), median of 3 repeats",
    }
    figures["first_call_8_warm_ms"] = summary(
        warm_ms,
        "ms",
        "first call, 8 configs, new autotuner, compiled kernels already in TRITON_CACHE_DIR",
        "excluded",
    )
    figures["first_call_8_cached_ms"] = summary(
        cached_ms,
        "ms",
        "first call, 8 configs, new autotuner with cache_results=True, tuning result on disk",
        "excluded",
    )
    print("figures: " + json.dumps(figures))
    print("first_call_cost: all checks passed")
