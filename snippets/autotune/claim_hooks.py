# /// script
# requires-python = ">=3.10"
# dependencies = ["torch", "triton", "numpy"]
#
# [tool.snippet]
# gpu = { min-cc = "8.0" }
# cpu = { interpreter = true }
# ///
"""Claim: restore_value and reset_to_zero run inside the call the autotuner's timer measures, and
a pre_hook of your own replaces the hook that does them.

On a CUDA GPU:  python claim_hooks.py
On a CPU:       TRITON_INTERPRET=1 python claim_hooks.py
A stand-in timer runs each benchmark call twice and logs the tensor operations inside it.
"""

import os

import torch
import triton
import triton.language as tl
from torch.overrides import TorchFunctionMode

INTERPRETED = os.environ.get("TRITON_INTERPRET") == "1"
DEVICE = "cpu" if INTERPRETED else "cuda"
N = 1000
CONFIGS = [triton.Config({"BLOCK_SIZE": 128}), triton.Config({"BLOCK_SIZE": 256})]
grid = lambda meta: (triton.cdiv(meta["n_elements"], meta["BLOCK_SIZE"]),)


def add_one(x_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    offsets = tl.program_id(axis=0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    tl.store(x_ptr + offsets, tl.load(x_ptr + offsets, mask=mask) + 1, mask=mask)


def add_sum(x_ptr, total_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    offsets = tl.program_id(axis=0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    block = tl.load(x_ptr + offsets, mask=offsets < n_elements, other=0)
    tl.atomic_add(total_ptr, tl.sum(block, axis=0))


# --8<-- [start:timed]
class CopiesLog(TorchFunctionMode):
    """Records the tensor copies and fills that run while it is active."""

    def __init__(self):
        super().__init__()
        self.calls = []

    def __torch_function__(self, func, types, args=(), kwargs=None):
        if getattr(func, "__name__", "") in ("clone", "copy_", "zero_"):
            self.calls.append(func.__name__)
        return func(*args, **(kwargs or {}))


log = CopiesLog()


def logging_timer(fn, quantiles):  # (1)!
    with log:
        fn()
        fn()
    return [1.0] * len(quantiles)


def tuned(fn, **options):
    return triton.autotune(CONFIGS, key=["n_elements"], do_bench=logging_timer, **options)(
        triton.jit(fn)
    )


x = torch.zeros(N, dtype=torch.int32, device=DEVICE)
total = torch.zeros(1, dtype=torch.int32, device=DEVICE)
tuned(add_one, restore_value=["x_ptr"])[grid](x, N)
print(f"restore_value=['x_ptr'], inside one timed call: {log.calls[: len(log.calls) // 4]}")  # (2)!
log.calls.clear()
tuned(add_sum, reset_to_zero=["total_ptr"])[grid](x, total, N)
print(f"reset_to_zero=['total_ptr'], inside one timed call: {log.calls[: len(log.calls) // 4]}")
# --8<-- [end:timed]
assert x.unique().tolist() == [1], x.unique()
assert total.tolist() == [N], total

# --8<-- [start:pre-hook]
received = []


def own_hook(kwargs, reset_only=False):  # (1)!
    received.append((sorted(kwargs), reset_only))


x = torch.zeros(N, dtype=torch.int32, device=DEVICE)
try:
    tuned(add_one, restore_value=["x_ptr"], pre_hook=own_hook)[grid](x, N)  # (2)!
    outcome = f"no error; x after one call: {x.unique().tolist()}"
except AttributeError as exc:
    outcome = f"AttributeError: {exc}"
print(f"restore_value plus pre_hook: {outcome}")

ones = torch.ones(N, dtype=torch.int32, device=DEVICE)
total = torch.full((1,), 5, dtype=torch.int32, device=DEVICE)
tuned(add_sum, reset_to_zero=["total_ptr"], pre_hook=own_hook)[grid](ones, total, N)
print(f"reset_to_zero plus pre_hook: total {total.item()} after one call, {N} if zeroed")  # (3)!
print(f"the pre_hook received: {received[0][0]}, reset_only={sorted({r for _, r in received})}")
# --8<-- [end:pre-hook]

assert "AttributeError" in outcome or outcome != "no error; x after one call: [1]", outcome
assert total.item() > 5 + N, total
print("claim_hooks: holds")
