# /// script
# requires-python = ">=3.10"
# dependencies = ["torch", "triton", "numpy"]
#
# [tool.snippet]
# gpu = { min-cc = "8.0", timing = true }
# cpu = { skip = "counts compiled variants; the interpreter compiles nothing", skip-zh = "数的是编译出的变体；解释器不做编译" }
# ///
"""Claim: a runtime value passed as tl.constexpr compiles one variant per distinct value.

On a CUDA GPU:  python claim_constexpr_variants.py
Launches the same copy kernel for five lengths, once with the length as a tl.constexpr and once
as a plain argument, counts compilations with triton.knobs.runtime.jit_post_compile_hook and
times each call (synchronized), compile included.
"""

import json
import statistics
import time
from collections import Counter

import torch
import triton
import triton.language as tl

if not torch.cuda.is_available():
    raise SystemExit("This snippet needs a CUDA GPU: the interpreter compiles nothing.")


# --8<-- [start:kernels]
@triton.jit
def copy_const_n(x_ptr, out_ptr, n_elements: tl.constexpr, BLOCK_SIZE: tl.constexpr):  # (1)!
    offsets = tl.program_id(axis=0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    tl.store(out_ptr + offsets, tl.load(x_ptr + offsets, mask=mask), mask=mask)


@triton.jit
def copy_plain_n(x_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):  # (2)!
    offsets = tl.program_id(axis=0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    tl.store(out_ptr + offsets, tl.load(x_ptr + offsets, mask=mask), mask=mask)


# --8<-- [end:kernels]

# --8<-- [start:count]
compiles = Counter()
triton.knobs.runtime.jit_post_compile_hook = lambda **kw: compiles.update([kw["fn"].name])


def timed_call_ms(kernel, n: int) -> float:
    x = torch.rand(n, device="cuda")
    out = torch.empty_like(x)
    torch.cuda.synchronize()
    start = time.perf_counter()
    kernel[(triton.cdiv(n, 1024),)](x, out, n, BLOCK_SIZE=1024)
    torch.cuda.synchronize()
    elapsed = (time.perf_counter() - start) * 1e3
    torch.testing.assert_close(out, x, rtol=0, atol=0)
    return elapsed


lengths = [1000, 1001, 1002, 1003, 1005]  # (1)!
plain_ms = [timed_call_ms(copy_plain_n, n) for n in lengths]  # (2)!
const_ms = [timed_call_ms(copy_const_n, n) for n in lengths]
print(f"length as a plain argument: {compiles['copy_plain_n']} variant for {len(lengths)} lengths")
print(f"length as tl.constexpr: {compiles['copy_const_n']} variants for {len(lengths)} lengths")
# --8<-- [end:count]

assert compiles["copy_const_n"] == len(lengths), compiles
assert compiles["copy_plain_n"] == 1, compiles


def figure(values: list[float], op: str, compile: str) -> dict:
    return {
        "value": round(statistics.median(values), 3),
        "unit": "ms",
        "statistic": "median",
        "spread": "min-max",
        "low": round(min(values), 3),
        "high": round(max(values), 3),
        "repeats": len(values),
        "op": op,
        "shape": "n=1000..1005",
        "dtype": "float32",
        "compile": compile,
        "clock": "wall",
    }


figures = {
    "const_call_ms": figure(
        const_ms, "copy_const_n call with a new constexpr length (synchronized)", "included"
    ),
    "plain_call_ms": figure(
        plain_ms[1:], "copy_plain_n call with a new plain length (synchronized)", "excluded"
    ),
    "const_variants": {"value": compiles["copy_const_n"], "statistic": "count"},
}
assert figures["const_call_ms"]["value"] > 10 * figures["plain_call_ms"]["value"], figures
print("figures: " + json.dumps(figures))
print("claim_constexpr_variants: all checks passed")
