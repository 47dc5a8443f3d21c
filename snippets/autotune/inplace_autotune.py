# /// script
# requires-python = ">=3.10"
# dependencies = ["torch", "triton", "numpy"]
#
# [tool.snippet]
# gpu = { min-cc = "8.0" }
# cpu = { interpreter = true }
# ///
"""Autotuning runs the kernel many times: what that does to a kernel that writes its inputs.

An in-place +1 kernel and a kernel that adds a sum into its output, each autotuned without and
with reset_to_zero / restore_value. Each variant runs in its own fresh process.
On a CUDA GPU:  python inplace_autotune.py
On a CPU:       TRITON_INTERPRET=1 python inplace_autotune.py
"""

import json
import os
import subprocess
import sys
import time

import torch
import triton
import triton.language as tl

INTERPRETED = os.environ.get("TRITON_INTERPRET") == "1"
DEVICE = "cpu" if INTERPRETED else "cuda"
N = 1000


def cpu_do_bench(fn, quantiles):
    """Stand-in for the GPU timer under TRITON_INTERPRET=1: run fn three times."""
    times_ms = []
    for _ in range(3):
        start = time.perf_counter()
        fn()
        times_ms.append((time.perf_counter() - start) * 1e3)
    times_ms.sort()
    return [times_ms[round(q * (len(times_ms) - 1))] for q in quantiles]


CONFIGS = [triton.Config({"BLOCK_SIZE": 128}), triton.Config({"BLOCK_SIZE": 256})]


# --8<-- [start:kernels]
def add_one(x_ptr, n_elements, BLOCK_SIZE: tl.constexpr):  # (1)!
    offsets = tl.program_id(axis=0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    tl.store(x_ptr + offsets, tl.load(x_ptr + offsets, mask=mask) + 1, mask=mask)


def add_sum(x_ptr, total_ptr, n_elements, BLOCK_SIZE: tl.constexpr):  # (2)!
    offsets = tl.program_id(axis=0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    block = tl.load(x_ptr + offsets, mask=offsets < n_elements, other=0)
    tl.atomic_add(total_ptr, tl.sum(block, axis=0))


def tuned(fn, **options):
    return triton.autotune(
        configs=CONFIGS,
        key=["n_elements"],
        do_bench=cpu_do_bench if INTERPRETED else None,
        **options,  # (3)!
    )(triton.jit(fn))


# --8<-- [end:kernels]

grid = lambda meta: (triton.cdiv(meta["n_elements"], meta["BLOCK_SIZE"]),)


# --8<-- [start:child]
def run_variant(variant: str) -> dict:
    """In a fresh process: call each kernel twice and report what the tensors hold."""
    fixed = variant == "fixed"
    inc = tuned(add_one, **({"restore_value": ["x_ptr"]} if fixed else {}))
    x = torch.zeros(N, dtype=torch.int32, device=DEVICE)
    inc[grid](x, N)  # (1)!
    after_one = x.unique().tolist()
    inc[grid](x, N)
    after_two = x.unique().tolist()

    ones = torch.ones(N, dtype=torch.int32, device=DEVICE)
    result = {"x": [after_one, after_two]}
    for name in ("reset_to_zero", "restore_value") if fixed else ("none",):
        acc = tuned(add_sum, **({name: ["total_ptr"]} if fixed else {}))
        total = torch.full((1,), 5, dtype=torch.int32, device=DEVICE)  # (2)!
        acc[grid](ones, total, N)
        first = total.item()
        acc[grid](ones, total, N)
        result[name] = [first, total.item()]
    return result


# --8<-- [end:child]


def in_fresh_process(variant: str) -> dict:
    proc = subprocess.run(
        [sys.executable, __file__, "--child", variant], capture_output=True, text=True, check=True
    )
    return json.loads(proc.stdout.strip().splitlines()[-1])


if __name__ == "__main__":
    if "--child" in sys.argv:
        print(json.dumps(run_variant(sys.argv[-1])))
        sys.exit(0)
    if not INTERPRETED and not torch.cuda.is_available():
        raise SystemExit(
            "No CUDA GPU here. On a CPU, run: TRITON_INTERPRET=1 python inplace_autotune.py"
        )
    # --8<-- [start:parent]
    plain = in_fresh_process("plain")  # (1)!
    fixed = in_fresh_process("fixed")
    x_plain = plain["x"][0]
    print(f"add_one, nothing: x == 1 after the first call: {x_plain == [1]}")
    print(
        f"add_one, restore_value=['x_ptr']: x after one call {fixed['x'][0]}, after two {fixed['x'][1]}"
    )
    print(
        f"add_sum into 5, nothing: total == {5 + N} after the first call: {plain['none'][0] == 5 + N}"
    )
    print(
        f"add_sum into 5, reset_to_zero=['total_ptr']: after one call and two {fixed['reset_to_zero']}"
    )  # (2)!
    print(
        f"add_sum into 5, restore_value=['total_ptr']: after one call and two {fixed['restore_value']}"
    )
    # --8<-- [end:parent]
    assert len(x_plain) == 1 and x_plain[0] > 1, plain
    assert plain["none"][0] > 5 + N, plain
    assert fixed == {
        "x": [[1], [2]],
        "reset_to_zero": [N, 2 * N],
        "restore_value": [5 + N, 5 + 2 * N],
    }, fixed
    figures = {
        "x_without_restore": {
            "value": x_plain[0],
            "statistic": "count",
            "op": f"x after one call of the autotuned in-place +1 kernel on zeros, no restore_value ({DEVICE})",
            "shape": f"n={N}",
            "dtype": "int32",
        },
        "sum_without_reset": {
            "value": plain["none"][0],
            "statistic": "count",
            "op": f"5 + sum of {N} ones after one call of the autotuned kernel, no reset_to_zero ({DEVICE})",
            "shape": f"n={N}",
            "dtype": "int32",
        },
    }
    print("figures: " + json.dumps(figures))
    print("inplace_autotune: all checks passed")
