# /// script
# requires-python = ">=3.10"
# dependencies = ["torch", "triton", "numpy"]
#
# [tool.snippet]
# gpu = { skip = "checks a limit of the CPU interpreter on a machine without a GPU", skip-zh = "检查的是没有 GPU 的机器上 CPU 解释器的限制" }
# cpu = { interpreter = true }
# ///
"""Claim: without a GPU, @triton.autotune with several configs fails under the interpreter,
because its default timer needs a GPU driver; a CPU timer passed as do_bench= makes it run.

Fails the day a release times configs on the CPU by itself, so the page gets updated.
Runs on a machine without a GPU: it turns the interpreter on itself.
"""

import os

os.environ["TRITON_INTERPRET"] = "1"

import statistics
import time

import torch
import triton
import triton.language as tl

CONFIGS = [triton.Config({"BLOCK_SIZE": 64}), triton.Config({"BLOCK_SIZE": 256})]


def double(x_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    offsets = tl.program_id(axis=0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    tl.store(out_ptr + offsets, tl.load(x_ptr + offsets, mask=mask) * 2, mask=mask)


def launch(kernel, x: torch.Tensor) -> torch.Tensor:
    out = torch.empty_like(x)
    grid = lambda meta: (triton.cdiv(x.numel(), meta["BLOCK_SIZE"]),)
    kernel[grid](x, out, x.numel())
    return out


x = torch.arange(1000, dtype=torch.float32)

# --8<-- [start:claim]
default_timer = triton.autotune(configs=CONFIGS, key=["n_elements"])(triton.jit(double))
try:
    launch(default_timer, x)
except RuntimeError as exc:
    print(f"autotune, 2 configs, default timer: RuntimeError: {exc}")
else:
    raise AssertionError("autotune ran without a GPU: update the page")

one_config = triton.autotune(configs=CONFIGS[:1], key=["n_elements"])(triton.jit(double))
torch.testing.assert_close(launch(one_config, x), x * 2, rtol=0, atol=0)
print("autotune, 1 config, default timer: ran (nothing to time), result correct")

timed = []


def cpu_timer(fn, quantiles=None):  # (1)!
    times = []
    for _ in range(3):
        start = time.perf_counter()
        fn()
        times.append((time.perf_counter() - start) * 1e3)
    timed.append(fn)
    median = statistics.median(times)
    return [median, min(times), max(times)] if quantiles else median


cpu_timed = triton.autotune(configs=CONFIGS, key=["n_elements"], do_bench=cpu_timer)(
    triton.jit(double)
)
torch.testing.assert_close(launch(cpu_timed, x), x * 2, rtol=0, atol=0)
print(f"autotune, 2 configs, do_bench=cpu_timer: ran, timed {len(timed)} configs, result correct")
# --8<-- [end:claim]
assert len(timed) == 2, timed
