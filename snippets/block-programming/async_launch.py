# /// script
# requires-python = ">=3.10"
# dependencies = ["torch", "triton", "numpy"]
#
# [tool.snippet]
# gpu = { min-cc = "8.0", timing = true }
# cpu = { skip = "the interpreter runs the kernel before the launch returns: there is nothing asynchronous to show", skip-zh = "解释器在启动调用返回之前就把内核跑完了，没有异步可言" }
# ///
"""A kernel launch returns before the kernel has run: time it only after synchronizing.

On a CUDA GPU:  python async_launch.py
Adds two vectors of 2**28 float32 elements 20 times; each time measures when the launch call
returned and when torch.cuda.synchronize() did.
"""

import json
import statistics
import time

import torch
import triton
import triton.language as tl

REPEATS = 20


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(axis=0)
    offsets = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    tl.store(out_ptr + offsets, x + y, mask=mask)


def figure(values: list[float], unit: str, op: str) -> dict:
    return {
        "value": round(statistics.median(values), 3),
        "unit": unit,
        "statistic": "median",
        "spread": "min-max",
        "low": round(min(values), 3),
        "high": round(max(values), 3),
        "repeats": len(values),
        "op": op,
        "shape": "n=2**28",
        "dtype": "float32",
        "compile": "excluded",
        "clock": "wall",
    }


if __name__ == "__main__":
    if not torch.cuda.is_available():
        raise SystemExit("This snippet needs a CUDA GPU.")
    n = 2**28
    x, y = torch.rand(n, device="cuda"), torch.rand(n, device="cuda")
    out = torch.empty_like(x)
    grid = (triton.cdiv(n, 1024),)
    add_kernel[grid](x, y, out, n, BLOCK_SIZE=1024)  # compile before timing
    torch.cuda.synchronize()
    # --8<-- [start:run]
    returned_us, finished_ms = [], []
    for _ in range(REPEATS):
        start = time.perf_counter()
        add_kernel[grid](x, y, out, n, BLOCK_SIZE=1024)
        returned = time.perf_counter()  # (1)!
        torch.cuda.synchronize()  # (2)!
        finished = time.perf_counter()
        returned_us.append((returned - start) * 1e6)
        finished_ms.append((finished - start) * 1e3)
    # --8<-- [end:run]
    torch.testing.assert_close(out, x + y, rtol=0, atol=0)
    print(
        f"launch returned after {statistics.median(returned_us):.0f} us; "
        f"kernel finished after {statistics.median(finished_ms):.3f} ms (medians of {REPEATS})"
    )
    assert statistics.median(returned_us) * 1e-3 * 5 < statistics.median(finished_ms)
    figures = {
        "launch_returned_us": figure(returned_us, "µs", "add_kernel launch call returns"),
        "kernel_finished_ms": figure(finished_ms, "ms", "add_kernel launch + synchronize"),
    }
    print("figures: " + json.dumps(figures))
    print("async_launch: all checks passed")
