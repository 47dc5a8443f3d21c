# /// script
# requires-python = ">=3.10"
# dependencies = ["torch", "triton", "numpy"]
#
# [tool.snippet]
# gpu = { min-cc = "8.0", timing = true }
# cpu = { skip = "the interpreter runs the kernel before the launch returns: there is nothing asynchronous to time", skip-zh = "解释器在启动调用返回前就把内核跑完了，没有异步可测" }
# ///
"""Timing a kernel without torch.cuda.synchronize() measures the launch, not the kernel.

On a CUDA GPU:  python timing_sync.py
Times one kernel three ways: the wall clock around the launch alone, the wall clock around the
launch and a synchronize, and triton.testing.do_bench (CUDA events, L2 cleared before each run).
"""

import json
import statistics
import time

import torch
import triton
import triton.language as tl

REPEATS = 50


@triton.jit
def scale_kernel(x_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    offsets = tl.program_id(axis=0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    tl.store(out_ptr + offsets, tl.load(x_ptr + offsets, mask=mask) * 2, mask=mask)


def figure(values_ms: list[float], op: str, clock: str) -> dict:
    """Median in microseconds, with the 20 % and 80 % quantiles."""
    us = sorted(v * 1e3 for v in values_ms)
    q = statistics.quantiles(us, n=5)
    return {
        "value": round(statistics.median(us), 1),
        "unit": "µs",
        "statistic": "median",
        "spread": "p20-p80",
        "low": round(q[0], 1),
        "high": round(q[3], 1),
        "repeats": len(us),
        "op": op,
        "shape": "n=2**27",
        "dtype": "float32",
        "compile": "excluded",
        "clock": clock,
    }


if __name__ == "__main__":
    if not torch.cuda.is_available():
        raise SystemExit("This snippet needs a CUDA GPU.")
    n = 2**27
    x = torch.rand(n, device="cuda")
    out = torch.empty_like(x)
    grid = (triton.cdiv(n, 1024),)
    launch = lambda: scale_kernel[grid](x, out, n, BLOCK_SIZE=1024)
    launch()  # compile before timing
    torch.cuda.synchronize()
    torch.testing.assert_close(out, x * 2, rtol=0, atol=0)
    # --8<-- [start:timing]
    no_sync, with_sync = [], []
    for _ in range(REPEATS):
        torch.cuda.synchronize()  # (1)!
        start = time.perf_counter()
        launch()
        no_sync.append((time.perf_counter() - start) * 1e3)  # (2)!
        torch.cuda.synchronize()

        start = time.perf_counter()
        launch()
        torch.cuda.synchronize()  # (3)!
        with_sync.append((time.perf_counter() - start) * 1e3)
    bench = triton.testing.do_bench(launch, rep=50, return_mode="all")  # (4)!
    # --8<-- [end:timing]
    figures = {
        "no_sync_us": figure(no_sync, "wall clock around the launch call only", "wall"),
        "with_sync_us": figure(
            with_sync, "wall clock around launch + torch.cuda.synchronize()", "wall"
        ),
        "do_bench_us": figure(bench, "triton.testing.do_bench (CUDA events)", "call"),
    }
    figures["sync_over_no_sync"] = {
        "value": round(figures["with_sync_us"]["value"] / figures["no_sync_us"]["value"], 1),
        "statistic": "ratio",
        "op": "median with synchronize over median without",
    }
    no_sync_median = figures["no_sync_us"]["value"]
    assert 5 * no_sync_median < figures["do_bench_us"]["value"], figures
    assert 5 * no_sync_median < figures["with_sync_us"]["value"], figures
    print("without synchronize the clock stopped before the kernel had run")
    print("figures: " + json.dumps(figures))
    print("timing_sync: all checks passed")
