# /// script
# requires-python = ">=3.10"
# dependencies = ["torch", "triton", "numpy"]
#
# [tool.snippet]
# gpu = { min-cc = "8.0" }
# cpu = { skip = "the interpreter runs programs one after another, so atomics always add in the same order", skip-zh = "解释器逐个运行程序实例，原子加总是按同一顺序执行" }
# ///
"""Run-to-run differences: acceptable (atomics reorder a float sum) or a bug (a race)?

On a CUDA GPU:  python determinism.py
Sums 2**24 float32 values 20 times with three kernels: atomic adds across programs, a
deterministic two-pass reduction, and a racy read-modify-write. Each result is checked against
a float64 sum and a rounding-error bound derived from the order of the additions.
"""

import json

import numpy as np
import torch
import triton
import triton.language as tl

N, BLOCK, RUNS = 2**24, 1024, 20


# --8<-- [start:kernels]
@triton.jit
def sum_atomic_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    partial = tl.sum(tl.load(x_ptr + offs, mask=offs < n, other=0.0), axis=0)
    tl.atomic_add(out_ptr, partial)  # (1)!


@triton.jit
def sum_partials_kernel(x_ptr, partials_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    partial = tl.sum(tl.load(x_ptr + offs, mask=offs < n, other=0.0), axis=0)
    tl.store(partials_ptr + tl.program_id(0), partial)  # (2)!


@triton.jit
def sum_final_kernel(partials_ptr, out_ptr, n_partials, BLOCK: tl.constexpr):
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    for start in range(0, n_partials, BLOCK):  # (3)!
        offs = start + tl.arange(0, BLOCK)
        acc += tl.load(partials_ptr + offs, mask=offs < n_partials, other=0.0)
    tl.store(out_ptr, tl.sum(acc, axis=0))


@triton.jit
def sum_racy_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    partial = tl.sum(tl.load(x_ptr + offs, mask=offs < n, other=0.0), axis=0)
    tl.store(out_ptr, tl.load(out_ptr) + partial)  # (4)!


# --8<-- [end:kernels]


def run(name: str, x: torch.Tensor) -> float:
    programs = triton.cdiv(x.numel(), BLOCK)
    out = torch.zeros(1, device=x.device)
    if name == "two-pass":
        partials = torch.empty(programs, device=x.device)
        sum_partials_kernel[(programs,)](x, partials, x.numel(), BLOCK=BLOCK)
        sum_final_kernel[(1,)](partials, out, programs, BLOCK=BLOCK)
    else:
        kernel = sum_atomic_kernel if name == "atomic" else sum_racy_kernel
        kernel[(programs,)](x, out, x.numel(), BLOCK=BLOCK)
    return out.item()


def count(value: int, op: str) -> dict:
    return {"value": value, "statistic": "count", "op": op, "shape": f"n={N}", "dtype": "float32"}


if __name__ == "__main__":
    if not torch.cuda.is_available():
        raise SystemExit("This snippet needs a CUDA GPU: it shows the order of atomic adds.")
    # --8<-- [start:run]
    x = torch.rand(N, generator=torch.Generator().manual_seed(0)).cuda()  # (1)!
    exact = x.double().sum().item()
    programs = N // BLOCK
    bound = (BLOCK + programs) * 2.0**-24 * exact  # (2)!
    ulp = float(np.spacing(np.float32(exact)))
    results = {name: [run(name, x) for _ in range(RUNS)] for name in ("atomic", "two-pass", "racy")}
    for name, sums in results.items():
        differ = sum(s != sums[0] for s in sums)
        outside = sum(abs(s - exact) > bound for s in sums)
        print(f"{name}: {differ} of {RUNS} runs differ from the first, {outside} outside the bound")
    # --8<-- [end:run]
    atomic, two_pass, racy = results["atomic"], results["two-pass"], results["racy"]
    assert all(abs(s - exact) <= bound for s in atomic + two_pass), "a correct sum is off"
    assert len(set(two_pass)) == 1, "the two-pass reduction is not deterministic"
    print(f"two-pass: all {RUNS} runs bitwise equal, within the bound")
    figures = {
        "atomic_runs_differing": count(
            sum(s != atomic[0] for s in atomic), f"runs of {RUNS} whose atomic sum differs"
        ),
        "atomic_distinct": count(len(set(atomic)), f"distinct atomic sums in {RUNS} runs"),
        "atomic_spread_ulps": count(
            round((max(atomic) - min(atomic)) / ulp),
            f"largest minus smallest atomic sum of {RUNS} runs, in float32 ulps",
        ),
        "atomic_error_ulps": count(
            round(max(abs(s - exact) for s in atomic) / ulp),
            f"largest error of the atomic sum against float64, of {RUNS} runs, in ulps",
        ),
        "two_pass_error_ulps": count(
            round(abs(two_pass[0] - exact) / ulp),
            "error of the two-pass sum against float64, in ulps",
        ),
        "bound_ulps": count(
            round(bound / ulp), "rounding-error bound for this order of additions, in ulps"
        ),
        "racy_runs_outside": count(
            sum(abs(s - exact) > bound for s in racy),
            f"runs of {RUNS} whose racy sum is outside the bound",
        ),
        "racy_median_fraction": {
            "value": float(f"{float(np.median(racy)) / exact:.3g}"),
            "statistic": "ratio",
            "op": f"median racy sum of {RUNS} runs over the float64 sum",
            "shape": f"n={N}",
            "dtype": "float32",
        },
    }
    print("figures: " + json.dumps(figures))
    print("determinism: all checks passed")
