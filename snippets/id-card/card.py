# /// script
# requires-python = ">=3.10"
# dependencies = ["torch", "triton", "numpy"]
#
# [tool.snippet]
# gpu = { min-cc = "8.0", timing = true }
# cpu = { interpreter = false }
# ///
"""An ID card for a performance number: what it must carry, filled in and checked.

On a CUDA GPU:  python card.py      (on a CPU it runs too, timing the CPU with a plain timer)
measure() times a function and returns the number with its card; validate() lists what a card
lacks. Copy both into a project and refuse any number whose card is incomplete.
"""

import json
import platform
import statistics
import subprocess
import time

import torch
import triton

# --8<-- [start:fields]
REQUIRED = {
    "op": "what was measured, in words",
    "reference": "what it is compared with, measured in the same run",  # (1)!
    "inputs": "shapes, dtype and how the values were drawn",
    "device": "the GPU (or CPU) by name",
    "driver": "the driver version",
    "versions": "torch, triton, CUDA, Python",
    "statistic": "median (or mean, min) of how many runs",
    "clock": "kernel time, call time (host launch included) or wall-clock time",  # (3)!
    "spread": "the 20-80 % quantiles or the range, over the same runs",
    "compile": "whether compile time and the first call are in the number",  # (2)!
    "commit": "the code that was measured, and whether it had local changes",
}
# --8<-- [end:fields]


# --8<-- [start:machine]
def git(*args: str) -> str:
    try:
        out = subprocess.run(["git", *args], capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return ""
    return out.stdout.strip() if out.returncode == 0 else ""


def machine() -> dict:
    if torch.cuda.is_available():
        device = torch.cuda.get_device_name()
        query = ["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader", "-i", "0"]
        try:
            driver = subprocess.run(
                query, capture_output=True, text=True, timeout=30
            ).stdout.strip()
        except (OSError, subprocess.SubprocessError):
            driver = "unknown (no nvidia-smi)"
    else:
        device, driver = f"CPU ({platform.processor() or platform.machine()})", "none"
    commit = git("rev-parse", "HEAD") or "unknown (not a git checkout)"
    dirty = bool(git("status", "--porcelain", "--untracked-files=no"))  # (1)!
    return {
        "device": device,
        "driver": driver,
        "versions": {
            "torch": torch.__version__,
            "triton": triton.__version__,
            "cuda": torch.version.cuda or "none",
            "python": platform.python_version(),
        },
        "commit": commit + (" with local changes" if dirty else ""),
    }


# --8<-- [end:machine]


# --8<-- [start:measure]
def times_ms(fn) -> tuple[list[float], str]:
    fn()  # (1)!
    if torch.cuda.is_available():
        times = triton.testing.do_bench(fn, warmup=25, rep=50, return_mode="all")  # (2)!
        return times, "call time: CUDA events around each call, host launch included"
    times = []
    for _ in range(20):
        start = time.perf_counter()
        fn()
        times.append((time.perf_counter() - start) * 1e3)
    return times, "wall-clock time of each call"


def measure(fn, reference_fn, *, op: str, reference: str, inputs: str) -> dict:
    """fn and its reference, timed in the same run: medians and 20/80 % quantiles."""
    (times, clock), (ref_times, _) = times_ms(fn), times_ms(reference_fn)
    q = statistics.quantiles(times, n=5)
    return {
        "op": op,
        "reference": f"{reference}: median {statistics.median(ref_times):.4f} ms",  # (3)!
        "inputs": inputs,
        **machine(),
        "value_ms": round(statistics.median(times), 4),
        "statistic": f"median of {len(times)} runs",
        "clock": clock,
        "spread": f"p20-p80 {q[0]:.4f}-{q[3]:.4f} ms",
        "compile": "excluded: one call before timing",
    }


def validate(card: dict) -> list[str]:
    """What a card lacks: missing or empty fields, and a statistic of too few runs."""
    problems = [f"no {key}" for key in REQUIRED if not card.get(key)]
    runs = [int(w) for w in str(card.get("statistic", "")).split() if w.isdigit()]
    if card.get("statistic") and (not runs or runs[0] < 3):
        problems.append("a statistic of fewer than 3 runs")
    return problems


# --8<-- [end:measure]

if __name__ == "__main__":
    # --8<-- [start:run]
    device = "cuda" if torch.cuda.is_available() else "cpu"
    x = torch.rand(2**22, generator=torch.Generator().manual_seed(0)).to(device)
    card = measure(
        lambda: x * 2,
        lambda: x.clone(),
        op="x * 2, a new tensor",
        reference="x.clone(), the same bytes read and written",
        inputs="x: 2**22 float32, uniform in [0, 1)",
    )
    print(f"measured: {json.dumps(card)}")
    assert validate(card) == [], validate(card)
    print(f"card fields: {sorted(REQUIRED)}")
    bare = {"op": card["op"], "statistic": "1 run", "device": card["device"]}  # (1)!
    print(f"a bare number's card lacks: {validate(bare)}")
    assert "no spread" in validate(bare) and "a statistic of fewer than 3 runs" in validate(bare)
    # --8<-- [end:run]
    if device == "cuda":
        low, high = (float(v) for v in card["spread"].split()[1].split("-"))
        figure = {
            "value": card["value_ms"], "unit": "ms", "statistic": "median",
            "spread": "p20-p80", "low": low, "high": high,
            "repeats": int(card["statistic"].split()[2]), "op": card["op"], "clock": "call",
            "shape": "2**22", "reference": "x.clone()", "dtype": "float32", "compile": "excluded",
        }  # fmt: skip
        print("figures: " + json.dumps({"x_times_2_ms": figure}))
    print("card: all checks passed")
