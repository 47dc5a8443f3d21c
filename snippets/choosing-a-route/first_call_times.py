# /// script
# requires-python = ">=3.10"
# dependencies = ["torch", "triton", "numpy"]
#
# [tool.snippet]
# gpu = { min-cc = "8.0", timing = true }
# cpu = { interpreter = false }
# timeout = 300
# ///
"""How long the first call takes on each route that compiles on the user's machine.

On a CPU or a CUDA GPU:  python first_call_times.py
The same operation, a * b + c on a million float32 elements: torch.compile's first call
(TorchDynamo, Inductor and the compiler it drives) and, on a GPU, a Triton kernel's first
launch. Each three times in fresh processes with empty caches: on a GPU the three at once, on a
CPU one after another. Python start-up and `import torch` are outside the clock. Each result is
checked against a * b + c.
"""

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

import torch
import triton
import triton.language as tl

# Three by default. The site's test suite sets SNIPPET_REPEATS=1: it runs files side by side,
# where no time means anything, and keeps none; the records are made with the default.
REPEATS = int(os.environ.get("SNIPPET_REPEATS", "3"))
N = 1 << 20


# --8<-- [start:child]
@triton.jit
def muladd_kernel(a_ptr, b_ptr, c_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    x = tl.load(a_ptr + offsets, mask=mask) * tl.load(b_ptr + offsets, mask=mask)
    tl.store(out_ptr + offsets, x + tl.load(c_ptr + offsets, mask=mask), mask=mask)


def triton_muladd(a: torch.Tensor, b: torch.Tensor, c: torch.Tensor) -> torch.Tensor:
    out = torch.empty_like(a)
    muladd_kernel[(triton.cdiv(N, 1024),)](a, b, c, out, N, BLOCK=1024)
    return out


def first_call(route: str) -> dict:
    """In a fresh process with empty caches: seconds of the first call, and of the second."""
    device = "cuda" if torch.cuda.is_available() else "cpu"
    a, b, c = (torch.randn(N, generator=torch.Generator().manual_seed(i)) for i in range(3))
    a, b, c = a.to(device), b.to(device), c.to(device)
    compiled = torch.compile(lambda a, b, c: a * b + c)  # (1)!
    fn = compiled if route == "compile" else triton_muladd
    times = []
    for _ in range(2):
        if device == "cuda":
            torch.cuda.synchronize()
        start = time.perf_counter()
        out = fn(a, b, c)
        if device == "cuda":
            torch.cuda.synchronize()
        times.append(time.perf_counter() - start)
    torch.testing.assert_close(out, a * b + c)
    return {"first_s": times[0], "second_s": times[1]}


# --8<-- [end:child]


# --8<-- [start:parent]
def fresh_runs(route: str, at_once: bool) -> list[dict]:
    """REPEATS first calls, each in a fresh process with its own empty caches."""
    with tempfile.TemporaryDirectory() as root:
        procs, outputs = [], []
        for i in range(REPEATS):
            env = {
                **os.environ,
                "TORCHINDUCTOR_CACHE_DIR": os.path.join(root, f"inductor{i}"),  # (1)!
                "TRITON_CACHE_DIR": os.path.join(root, f"triton{i}"),
            }
            env.pop("TRITON_INTERPRET", None)
            command = [sys.executable, __file__, "--child", route]
            procs.append(subprocess.Popen(command, env=env, stdout=subprocess.PIPE, text=True))
            if not at_once:  # (2)!
                outputs.append(procs[-1].communicate()[0])
        if at_once:
            outputs = [p.communicate()[0] for p in procs]
        assert all(p.returncode == 0 for p in procs), route
    return [json.loads(out.strip().splitlines()[-1]) for out in outputs]


# --8<-- [end:parent]


def figure(seconds: list[float], op: str) -> dict:
    return {
        "value": round(statistics.median(seconds), 2),
        "unit": "s",
        "statistic": "median",
        "spread": "min-max",
        "low": round(min(seconds), 2),
        "high": round(max(seconds), 2),
        "repeats": len(seconds),
        "op": op,
        "shape": f"n={N}",
        "dtype": "float32",
        "compile": "included",
    }


if __name__ == "__main__":
    if "--child" in sys.argv:
        print(json.dumps(first_call(sys.argv[-1])))
        sys.exit(0)
    on_gpu = torch.cuda.is_available()
    kind = "cuda" if on_gpu else "cpu"
    print(f"first_call_times on {torch.cuda.get_device_name() if on_gpu else 'CPU'}")
    routes = ["compile", "triton"] if on_gpu else ["compile"]  # the interpreter compiles nothing
    figures = {}
    for route in routes:
        runs = fresh_runs(route, at_once=on_gpu)
        first = [r["first_s"] for r in runs]
        second = [r["second_s"] for r in runs]
        assert statistics.median(second) < statistics.median(first), (route, runs)
        print(f"{route}: first calls " + ", ".join(f"{t:.2f} s" for t in first))
        what = "torch.compile(lambda a, b, c: a * b + c)" if route == "compile" else "Triton kernel"
        how = "three processes at once" if on_gpu else "one process after another"
        figures[f"{route}_first_call_{kind}_s"] = figure(
            first, f"first call of {what} in a fresh process, empty caches ({how})"
        )
    print("figures: " + json.dumps(figures))
    print("first_call_times: all checks passed")
