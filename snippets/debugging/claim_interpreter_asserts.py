# /// script
# requires-python = ">=3.10"
# dependencies = ["torch", "triton", "numpy"]
#
# [tool.snippet]
# gpu = { skip = "checks the CPU interpreter; claim_device_assert_gpu.py checks the GPU", skip-zh = "检查的是 CPU 解释器；GPU 上的情况由 claim_device_assert_gpu.py 检查" }
# cpu = { interpreter = true }
# ///
"""Claim: under TRITON_INTERPRET=1, tl.device_assert never fires, even with TRITON_DEBUG=1 and
@triton.jit(debug=True); a Python assert fires on a scalar but not on a block.

The interpreter converts a block to True whatever it holds, and its compile options have
debug=False. Fails the day a release changes either, so the page gets updated.
"""

import os

os.environ["TRITON_INTERPRET"] = "1"
os.environ["TRITON_DEBUG"] = "1"  # read when triton is imported

import warnings

import torch
import triton
import triton.language as tl

warnings.filterwarnings("ignore", "invalid value encountered in sqrt")  # NumPy, for sqrt(-1)


# --8<-- [start:kernel]
@triton.jit(debug=True)  # (1)!
def checked_sqrt(x_ptr, out_ptr, n_elements, CHECK: tl.constexpr, BLOCK_SIZE: tl.constexpr):
    offsets = tl.program_id(axis=0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask, other=0.0)
    if CHECK == "tl.device_assert(x >= 0)":
        tl.device_assert(x >= 0, "x must be >= 0")
    if CHECK == "tl.device_assert(tl.min(x) >= 0)":
        tl.device_assert(tl.min(x) >= 0, "x must be >= 0")
    if CHECK == "assert x >= 0":
        assert x >= 0, "x must be >= 0"  # (2)!
    if CHECK == "assert tl.min(x) >= 0":
        assert tl.min(x) >= 0, "x must be >= 0"  # (3)!
    tl.store(out_ptr + offsets, tl.sqrt(x), mask=mask)


# --8<-- [end:kernel]

# --8<-- [start:claim]
x = torch.tensor([4.0, -1.0, 9.0])  # (1)!
out = torch.empty_like(x)
results = {}
for check in (
    "tl.device_assert(x >= 0)",
    "tl.device_assert(tl.min(x) >= 0)",
    "assert x >= 0",
    "assert tl.min(x) >= 0",
):
    try:
        checked_sqrt[(1,)](x, out, 3, CHECK=check, BLOCK_SIZE=4)
        results[check] = f"no error, out = {out.tolist()}"
    except triton.runtime.errors.InterpreterError as exc:
        results[check] = f"{type(exc).__name__}: {exc}"
    print(f"interpreter, {check:33}: {results[check]}")
# --8<-- [end:claim]
assert triton.knobs.runtime.debug is True
assert results["tl.device_assert(x >= 0)"].startswith("no error")
assert results["tl.device_assert(tl.min(x) >= 0)"].startswith("no error")
assert results["assert x >= 0"].startswith("no error")
assert results["assert tl.min(x) >= 0"] == "InterpreterError: AssertionError('x must be >= 0')"
