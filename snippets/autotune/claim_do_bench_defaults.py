# /// script
# requires-python = ">=3.10"
# dependencies = ["torch", "triton", "numpy"]
#
# [tool.snippet]
# gpu = { min-cc = "8.0" }
# cpu = { interpreter = true }
# ///
"""Claim: triton.testing.do_bench returns the mean by default, and the autotuner ranks by median.

do_bench is run with a fake GPU clock (a stand-in driver) on 100 timed runs: 80 of 1 ms and
20 of 11 ms, so the mean (3.0) and the median (1.0) differ. The docstring said "median" up to
triton 3.7; from 3.8 it says "mean". The autotuner asks its timer for the quantiles 0.5, 0.2,
0.8 and keeps the config whose list is smallest: the lowest median first.
Runs on any machine: natively on a GPU, else it turns the interpreter on itself.
"""

import inspect
import itertools
import os

import torch

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
if DEVICE == "cpu":  # no GPU: the interpreter, switched on before any kernel is decorated
    os.environ["TRITON_INTERPRET"] = "1"
import triton
import triton.language as tl
import triton.testing
from triton.runtime import driver

# --8<-- [start:signature]
params = str(inspect.signature(triton.testing.do_bench))
print(f"do_bench{params}")
assert params == "(fn, warmup=25, rep=100, grad_to_none=None, quantiles=None, return_mode='mean')"
first_line = inspect.getdoc(triton.testing.do_bench).splitlines()[0]
print(f"docstring: {first_line}")  # (1)!
version = tuple(int(part) for part in triton.__version__.split(".")[:2])
assert ("median" in first_line) == (version < (3, 8))  # "mean" from 3.8
# --8<-- [end:signature]


class FakeClock:
    now_ms = 0.0


class FakeEvent:
    def __init__(self, enable_timing: bool = True):
        self.at_ms = 0.0

    def record(self):
        self.at_ms = FakeClock.now_ms

    def elapsed_time(self, end: "FakeEvent") -> float:
        return end.at_ms - self.at_ms


class FakeDevice:
    Event = FakeEvent

    def synchronize(self):
        pass


class FakeDriver:
    """Just what do_bench asks of the active driver."""

    def get_device_interface(self):
        return FakeDevice()

    def get_empty_cache_for_benchmark(self):
        return None

    def clear_cache(self, cache):
        pass


durations_ms = iter(())


def fake_kernel():
    FakeClock.now_ms += next(durations_ms)


# --8<-- [start:statistics]
def bench(**options):
    """do_bench on the fake clock: 1 + 5 runs to estimate (1 ms each, so 25 warm-up and
    100 timed runs follow), then 25 warm-up runs, then 80 runs of 1 ms and 20 of 11 ms."""
    global durations_ms
    durations_ms = itertools.chain([1.0] * 6, [1.0] * 25, [1.0] * 80, [11.0] * 20)
    return triton.testing.do_bench(fake_kernel, **options)


driver.set_active(FakeDriver())  # (1)!
default = bench()
median = bench(return_mode="median")
quantiles = [round(q, 6) for q in bench(quantiles=[0.5, 0.2, 0.8])]
every_run = bench(return_mode="all")
print(
    f"fake clock, 80 runs at 1.0 and 20 at 11.0: default {default}, return_mode='median' {median}, "
    f"quantiles=[0.5, 0.2, 0.8] {quantiles}, return_mode='all' {len(every_run)} times"
)
assert default == 3.0 and median == 1.0 and quantiles == [1.0, 1.0, 3.0]  # (2)!
assert len(every_run) == 100
# --8<-- [end:statistics]
if DEVICE == "cuda":
    driver.reset_active()  # the real driver again, for the kernel below


@triton.jit
def copy_kernel(x_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    offsets = tl.program_id(axis=0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    tl.store(out_ptr + offsets, tl.load(x_ptr + offsets, mask=mask), mask=mask)


# --8<-- [start:ranking]
asked = []
answers = iter([[2.0, 1.0, 9.0], [3.0, 0.5, 3.1]])  # (1)!


def scripted_bench(fn, quantiles):
    asked.append(quantiles)
    return next(answers)


kernel = triton.autotune(
    configs=[triton.Config({"BLOCK_SIZE": 128}), triton.Config({"BLOCK_SIZE": 256})],
    key=["n_elements"],
    do_bench=scripted_bench,
)(copy_kernel)
x = torch.rand(1000, device=DEVICE)
kernel[lambda meta: (triton.cdiv(1000, meta["BLOCK_SIZE"]),)](x, torch.empty_like(x), 1000)
print(
    f"the autotuner asks its timer for quantiles {asked[0]} and chose "
    f"BLOCK_SIZE={kernel.best_config.kwargs['BLOCK_SIZE']} (median 2.0 against 3.0)"
)
assert asked == [(0.5, 0.2, 0.8)] * 2 and kernel.best_config.kwargs["BLOCK_SIZE"] == 128
# --8<-- [end:ranking]
print("claim_do_bench_defaults: all checks passed")
