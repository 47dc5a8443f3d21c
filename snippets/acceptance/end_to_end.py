# /// script
# requires-python = ">=3.10"
# dependencies = ["torch", "triton", "numpy"]
#
# [tool.snippet]
# gpu = { min-cc = "8.0", timing = true }
# cpu = { skip = "measures a model step on the GPU: latency, memory and compile time", skip-zh = "测的是模型一步在 GPU 上的延迟、显存和编译时间" }
# timeout = 400
# ///
"""End to end: a model step with and without the custom operator, eager and compiled.

On a CUDA GPU:  python end_to_end.py
One SwiGLU MLP block (4096 -> 2 x 14336 -> 4096, bfloat16) on 4096 tokens, inference. For
each of four variants: latency and throughput (do_bench median and 20/80 % quantiles), peak
memory of a step; the first eager step in a fresh process with and without the custom operator
(three child processes each, CUDA started and the model built before the clock starts); the
first call of a new variant of the kernel in a warm process; and the compile time of
torch.compile with and without it, with every cache disabled.
"""

import os

os.environ["TORCHINDUCTOR_FORCE_DISABLE_CACHES"] = "1"  # every compile starts cold
os.environ["TORCHINDUCTOR_COMPILE_THREADS"] = "1"  # compile in this process, under our cache dir

import json
import statistics
import subprocess
import sys
import tempfile
import time

import torch
import torch.nn.functional as F
import triton
import triton.language as tl
from torch.library import triton_op, wrap_triton

DIM, HIDDEN, TOKENS, LAYERS = 4096, 14336, 4096, 1
SHAPE = f"x: ({TOKENS}, {DIM}); {LAYERS} block(s) {DIM} -> 2 x {HIDDEN} -> {DIM}"
SALT = [0]  # a constant of the kernel that changes nothing but its cache key


@triton.jit
def silu_mul_kernel(
    a_ptr, b_ptr, out_ptr, M, N,
    stride_am, stride_an, stride_bm, stride_bn, stride_om, stride_on,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, FP64: tl.constexpr, SALT: tl.constexpr,
):  # fmt: skip
    pid = tl.program_id(axis=0)
    blocks_n = tl.cdiv(N, BLOCK_N)
    rows = (pid // blocks_n) * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = (pid % blocks_n) * BLOCK_N + tl.arange(0, BLOCK_N)
    mask = (rows[:, None] < M) & (cols[None, :] < N)
    r, c = rows[:, None].to(tl.int64), cols[None, :].to(tl.int64)
    a = tl.load(a_ptr + r * stride_am + c * stride_an, mask=mask)
    b = tl.load(b_ptr + r * stride_bm + c * stride_bn, mask=mask)
    if not FP64:
        a, b = a.to(tl.float32), b.to(tl.float32)
    e = tl.exp(-tl.abs(a))
    out = a * tl.where(a >= 0, 1.0, e) / (1 + e) * b
    tl.store(out_ptr + r * stride_om + c * stride_on, out.to(out_ptr.dtype.element_ty), mask=mask)


# --8<-- [start:model]
@triton_op("acceptance::silu_mul", mutates_args=())  # (1)!
def silu_mul(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    m, n = a.shape
    out = torch.empty((m, n), dtype=a.dtype, device=a.device)
    block_n = min(triton.next_power_of_2(n), 1024)
    block_m = min(4096 // block_n, triton.next_power_of_2(m))
    grid = (triton.cdiv(m, block_m) * triton.cdiv(n, block_n),)
    wrap_triton(silu_mul_kernel)[grid](
        a, b, out, m, n, *a.stride(), *b.stride(), *out.stride(),
        BLOCK_M=block_m, BLOCK_N=block_n, FP64=False, SALT=SALT[0],
    )  # fmt: skip
    return out


class Block(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.gate_up = torch.nn.Linear(DIM, 2 * HIDDEN, bias=False)
        self.down = torch.nn.Linear(HIDDEN, DIM, bias=False)


class Model(torch.nn.Module):
    def __init__(self, blocks: torch.nn.ModuleList, custom: bool):
        super().__init__()
        self.blocks, self.custom = blocks, custom  # (2)!

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for block in self.blocks:
            gate, up = block.gate_up(x).chunk(2, dim=-1)  # (3)!
            h = torch.ops.acceptance.silu_mul(gate, up) if self.custom else F.silu(gate) * up
            x = x + block.down(h)
        return x


# --8<-- [end:model]


def timed_s(fn) -> float:
    torch.cuda.synchronize()
    start = time.perf_counter()
    fn()
    torch.cuda.synchronize()
    return time.perf_counter() - start


def summary(values: list[float], digits: int = 3) -> dict:
    return {
        "value": round(statistics.median(values), digits),
        "statistic": "median",
        "spread": "min-max",
        "low": round(min(values), digits),
        "high": round(max(values), digits),
        "repeats": len(values),
        "shape": SHAPE,
        "dtype": "bfloat16",
    }


def build(custom: bool) -> tuple[torch.nn.Module, torch.Tensor]:
    torch.manual_seed(0)
    with torch.device("cuda"):
        blocks = torch.nn.ModuleList(Block() for _ in range(LAYERS)).to(torch.bfloat16)
        x = torch.randn(TOKENS, DIM, dtype=torch.bfloat16)
    return Model(blocks, custom), x


# --8<-- [start:fresh]
def first_steps_in_this_process(variant: str) -> dict:
    """Run in a fresh child process: CUDA starts and the model is built, then the clock starts."""
    model, x = build(custom=variant == "custom")
    with torch.no_grad():
        first = timed_s(lambda: model(x))  # (1)!
        second = timed_s(lambda: model(x))
    return {"first_ms": first * 1e3, "second_ms": second * 1e3}


def fresh_first_steps(variant: str, processes: int = 3) -> list[dict]:
    with tempfile.TemporaryDirectory() as root:
        children = [
            subprocess.Popen(
                [sys.executable, __file__, "--first-step", variant],
                env={**os.environ, "TRITON_CACHE_DIR": os.path.join(root, str(i))},  # (2)!
                stdout=subprocess.PIPE,
                text=True,
            )
            for i in range(processes)  # (3)!
        ]
        outputs = [child.communicate()[0] for child in children]
    assert all(child.returncode == 0 for child in children), "a child process failed"
    return [json.loads(out.strip().splitlines()[-1]) for out in outputs]


# --8<-- [end:fresh]


# --8<-- [start:measure]
def step_figures(name: str, step) -> dict:
    times = triton.testing.do_bench(step, warmup=25, rep=100, return_mode="all")  # (1)!
    q = statistics.quantiles(times, n=5)
    common = {"statistic": "median", "spread": "p20-p80", "repeats": len(times), "shape": SHAPE}
    common.update(dtype="bfloat16", compile="excluded", op=f"forward step, {name}")
    peaks = []
    for _ in range(3):
        torch.cuda.synchronize()
        torch.cuda.reset_peak_memory_stats()
        before = torch.cuda.memory_allocated()  # (2)!
        step()
        torch.cuda.synchronize()
        peaks.append((torch.cuda.max_memory_allocated() - before) / 2**20)
    median = statistics.median(times)
    return {
        f"latency_{name}_ms": {
            **common, "value": round(median, 3), "unit": "ms",
            "low": round(q[0], 3), "high": round(q[3], 3),
        },
        f"throughput_{name}": {
            **common, "value": round(TOKENS / median * 1e3), "unit": "tokens/s",
            "low": round(TOKENS / q[3] * 1e3), "high": round(TOKENS / q[0] * 1e3),
        },
        f"peak_{name}_mib": {
            **summary(peaks, 1), "unit": "MiB", "compile": "excluded",
            "op": f"peak memory of one step above what was allocated before it, {name}",
        },
    }  # fmt: skip


# --8<-- [end:measure]


if __name__ == "__main__":
    if not torch.cuda.is_available():
        raise SystemExit("This snippet needs a CUDA GPU: it measures a model step.")
    if "--first-step" in sys.argv:
        print(json.dumps(first_steps_in_this_process(sys.argv[-1])))
        sys.exit(0)
    fresh = {variant: fresh_first_steps(variant) for variant in ("torch", "custom")}
    model, x = build(custom=False)
    blocks = model.blocks
    eager = {"eager_torch": model, "eager_custom": Model(blocks, custom=True)}
    figures = {}
    with torch.no_grad():
        expected = eager["eager_torch"](x)
        atol = 0.02 * float(expected.abs().max())

        def check(y: torch.Tensor) -> None:
            torch.testing.assert_close(y, expected, rtol=0, atol=atol)

        # --8<-- [start:first-call]
        SALT[0] = -1
        check(eager["eager_custom"](x))  # (1)!
        torch.compile(lambda t: F.silu(t) * t)(x[:8])  # (2)!
        first_calls = []
        for salt in (1, 2, 3):
            SALT[0] = salt
            first_calls.append(timed_s(lambda: eager["eager_custom"](x)) * 1e3)  # (3)!
        # --8<-- [end:first-call]
        for name, model in eager.items():
            check(model(x))
            figures.update(step_figures(name, lambda model=model: model(x)))

        # --8<-- [start:compile]
        SALT[0] = 0
        firsts = {"torch": [], "custom": []}
        compiled = {}
        with tempfile.TemporaryDirectory() as root:
            for repeat in range(3):
                for variant in ("torch", "custom"):  # (1)!
                    torch._dynamo.reset()
                    os.environ["TRITON_CACHE_DIR"] = os.path.join(root, f"{variant}-{repeat}")
                    model = torch.compile(Model(blocks, variant == "custom"), fullgraph=True)
                    firsts[variant].append(timed_s(lambda model=model: model(x)))
                    check(model(x))
                    compiled[variant] = model
            for variant, model in compiled.items():
                figures.update(step_figures(f"compiled_{variant}", lambda model=model: model(x)))
                steady_s = figures[f"latency_compiled_{variant}_ms"]["value"] / 1e3
                compile_s = [first - steady_s for first in firsts[variant]]  # (2)!
                figures[f"compile_{variant}_s"] = {
                    **summary(compile_s), "unit": "s", "compile": "included",
                    "op": f"first call of torch.compile(model) minus a steady step, {variant}",
                }  # fmt: skip
        # --8<-- [end:compile]
    for variant, runs in fresh.items():
        assert all(r["first_ms"] > r["second_ms"] for r in runs), (variant, runs)
        steady_ms = figures[f"latency_eager_{variant}_ms"]["value"]
        figures[f"fresh_first_step_{variant}_ms"] = {
            **summary([r["first_ms"] for r in runs], 1), "unit": "ms", "compile": "included",
            "op": f"first eager step in a fresh process after CUDA start and model build, {variant}",
        }  # fmt: skip
        figures[f"fresh_first_step_extra_{variant}_ms"] = {
            **summary([r["first_ms"] - steady_ms for r in runs], 1), "unit": "ms",
            "compile": "included",
            "op": f"first eager step in a fresh process minus a steady step, {variant}",
        }  # fmt: skip
    steady_ms = figures["latency_eager_custom_ms"]["value"]
    figures["first_call_custom_ms"] = {
        **summary(first_calls, 2), "unit": "ms", "compile": "included",
        "op": "first eager step with a new variant of the Triton kernel (its compile included)",
    }  # fmt: skip
    figures["first_call_extra_ms"] = {
        **summary([t - steady_ms for t in first_calls], 2), "unit": "ms", "compile": "included",
        "op": "first eager step with a new kernel variant minus a steady step",
    }  # fmt: skip
    lat = {
        k.removeprefix("latency_").removesuffix("_ms"): v["value"]
        for k, v in figures.items()
        if k.startswith("latency_")
    }
    for name, base, other in (
        ("eager_speedup", "eager_torch", "eager_custom"),
        ("compiled_speedup", "compiled_torch", "compiled_custom"),
        ("eager_over_compiled_custom", "eager_custom", "compiled_custom"),
    ):
        figures[name] = {
            "value": round(lat[base] / lat[other], 3),
            "statistic": "ratio",
            "op": f"median step latency, {base} over {other}",
            "shape": SHAPE,
            "dtype": "bfloat16",
        }
    for name, value in lat.items():
        print(f"{name:16} {value:8.3f} ms per step")
    print("figures: " + json.dumps(figures))
    print("end_to_end: all checks passed")
