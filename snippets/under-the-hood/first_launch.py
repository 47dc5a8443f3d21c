# /// script
# requires-python = ">=3.10"
# dependencies = ["torch", "triton", "numpy"]
#
# [tool.snippet]
# gpu = { min-cc = "8.0", timing = true }
# cpu = { skip = "measures compilation and CUDA start-up, which the interpreter does not have", skip-zh = "测的是编译和 CUDA 启动的耗时，解释器没有这两样" }
# ///
"""Where a kernel's first launch spends its time: one-time start-up, or compiling?

On a CUDA GPU:  python first_launch.py
Runs the same measurement in 3 fresh processes with an empty Triton cache, then 3 more that find
the compiled kernel in the on-disk cache, and reports the median and range of each part (wall
clock, synchronized).
"""

import time

T0 = time.perf_counter()

import json
import os
import pathlib
import statistics
import subprocess
import sys
import tempfile

import torch
import triton
import triton.language as tl

IMPORT_MS = (time.perf_counter() - T0) * 1e3
REPEATS = 3


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(axis=0)
    offsets = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    tl.store(out_ptr + offsets, x + y, mask=mask)


# --8<-- [start:child]
hook_calls = 0


def on_compile(**kwargs):  # (1)!
    global hook_calls
    hook_calls += 1


triton.knobs.runtime.jit_post_compile_hook = on_compile


def timed_ms(fn) -> float:
    torch.cuda.synchronize()
    start = time.perf_counter()
    fn()
    torch.cuda.synchronize()
    return (time.perf_counter() - start) * 1e3


def measure_one_process() -> dict:
    """Run in a fresh process: time each step of getting a kernel to run."""
    n = 4096
    x = y = out = None

    def create_context():
        torch.cuda.init()
        torch.cuda.synchronize()

    def make_tensors():
        nonlocal x, y, out
        x, y = torch.rand(n, device="cuda"), torch.rand(n, device="cuda")
        out = torch.empty_like(x)

    def launch(block_size: int):
        return lambda: add_kernel[(triton.cdiv(n, block_size),)](
            x, y, out, n, BLOCK_SIZE=block_size
        )

    times = {"import_ms": IMPORT_MS}
    start = time.perf_counter()
    create_context()  # (2)!
    times["cuda_context_ms"] = (time.perf_counter() - start) * 1e3
    times["first_tensors_ms"] = timed_ms(make_tensors)
    times["first_launch_ms"] = timed_ms(launch(256))  # (3)!
    cache = pathlib.Path(os.environ["TRITON_CACHE_DIR"])
    times["c_modules"] = sorted(p.name.split(".")[0] for p in cache.rglob("*.so"))  # (4)!
    times["cached_launch_ms"] = timed_ms(launch(256))  # (5)!
    times["new_variant_ms"] = timed_ms(launch(512))  # (6)!
    torch.testing.assert_close(out, x + y, rtol=0, atol=0)
    times["hook_calls"] = hook_calls
    return times


# --8<-- [end:child]


def run_child(cache_dir: str) -> dict:
    env = {**os.environ, "TRITON_CACHE_DIR": cache_dir}
    env.pop("TRITON_INTERPRET", None)
    proc = subprocess.run(
        [sys.executable, __file__, "--child"], env=env, capture_output=True, text=True, check=True
    )
    return json.loads(proc.stdout.strip().splitlines()[-1])


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
        "shape": "n=4096",
        "dtype": "float32",
        "compile": compile,
        "clock": "wall",
    }


if __name__ == "__main__":
    if "--child" in sys.argv:
        print(json.dumps(measure_one_process()))
        sys.exit(0)
    if not torch.cuda.is_available():
        raise SystemExit(
            "This snippet needs a CUDA GPU: it measures compilation and CUDA start-up."
        )
    # --8<-- [start:parent]
    cold, warm = [], []
    with tempfile.TemporaryDirectory() as root:
        for i in range(REPEATS):
            cache_dir = os.path.join(root, f"cache-{i}")
            cold.append(run_child(cache_dir))  # (1)!
            warm.append(run_child(cache_dir))  # (2)!
    print(
        f"{'process':>7} {'cache':>5} {'import':>7} {'context':>8} {'tensors':>8} "
        f"{'1st launch':>11} {'new variant':>12} {'cached':>8}  (ms)"
    )
    for i, (c, w) in enumerate(zip(cold, warm, strict=True)):
        for kind, t in (("empty", c), ("warm", w)):
            print(
                f"{i:>7} {kind:>5} {t['import_ms']:7.0f} {t['cuda_context_ms']:8.0f} "
                f"{t['first_tensors_ms']:8.1f} {t['first_launch_ms']:11.1f} "
                f"{t['new_variant_ms']:12.1f} {t['cached_launch_ms']:8.3f}"
            )
    print(f"C modules in an empty cache after its first launch: {cold[0]['c_modules']}")
    # --8<-- [end:parent]
    assert all(t["hook_calls"] == 2 for t in cold), cold
    assert all(t["hook_calls"] == 2 for t in warm), warm
    print(
        "post-compile hook calls in a process that found both variants in the on-disk cache: "
        f"{warm[0]['hook_calls']}"
    )
    col = lambda runs, key: [t[key] for t in runs]
    # the first compile in a process: its cold first launch minus its warm one
    first_compile = [
        c - w
        for c, w in zip(col(cold, "first_launch_ms"), col(warm, "first_launch_ms"), strict=True)
    ]
    startup = statistics.median(col(warm, "first_launch_ms"))
    variant = statistics.median(col(cold, "new_variant_ms"))
    assert startup > variant, (startup, variant)  # start-up costs more than a compile
    assert all({"__triton_launcher", "cuda_utils"} <= set(c["c_modules"]) for c in cold), cold
    figures = {
        "first_launch_ms": figure(
            col(cold, "first_launch_ms"), "first launch in a fresh process, empty cache", "included"
        ),
        "first_launch_warm_ms": figure(
            col(warm, "first_launch_ms"),
            "first launch in a fresh process, kernel in the on-disk cache",
            "excluded",
        ),
        "first_compile_ms": figure(
            first_compile, "first launch, empty cache minus warm cache, per process", "included"
        ),
        "new_variant_ms": figure(
            col(cold, "new_variant_ms"),
            "launch of a new BLOCK_SIZE variant, same process",
            "included",
        ),
        "cached_launch_ms": figure(
            col(cold, "cached_launch_ms"), "launch of a compiled variant (synchronized)", "excluded"
        ),
        "cuda_context_ms": figure(
            col(cold + warm, "cuda_context_ms"),
            "torch.cuda.init() and the first synchronize in a fresh process: the CUDA context",
            "excluded",
        ),
        "first_tensors_ms": figure(
            col(cold + warm, "first_tensors_ms"),
            "first CUDA tensors, context already created",
            "excluded",
        ),
    }
    print(
        f"medians: first launch {statistics.median(col(cold, 'first_launch_ms')):.0f} ms, "
        f"of which start-up {startup:.0f} ms and first compile {statistics.median(first_compile):.0f} ms; "
        f"a later variant compiles in {variant:.0f} ms"
    )
    print("figures: " + json.dumps(figures))
    print("first_launch: all checks passed")
