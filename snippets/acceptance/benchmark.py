# /// script
# requires-python = ">=3.10"
# dependencies = ["torch", "triton", "numpy"]
#
# [tool.snippet]
# gpu = { min-cc = "8.0", timing = true }
# cpu = { skip = "measures GPU time; the interpreter says nothing about speed", skip-zh = "测的是 GPU 耗时；解释器的速度说明不了任何问题" }
# timeout = 300
# ///
"""silu_mul against PyTorch eager and torch.compile over a distribution of shapes, not one size.

On a CUDA GPU:  python benchmark.py
The inputs are the gate and up halves of an MLP's (tokens, 2 * 14336) bfloat16 projection, for
token counts from one (decoding) to 16384 (a long prefill). For each: GPU time with do_bench
(median and 20/80 % quantiles, compile excluded), checked results first; for one token, also
the wall-clock time per call, CPU launch overhead included. Then a weighted summary over an
assumed mix of calls.
"""

import contextlib
import json
import statistics
import time

import torch
import torch.nn.functional as F
import triton
import triton.language as tl

HIDDEN = 14336
TOKENS = (1, 16, 128, 1024, 4096, 16384)


@triton.jit
def silu_mul_kernel(
    a_ptr, b_ptr, out_ptr, M, N,
    stride_am, stride_an, stride_bm, stride_bn, stride_om, stride_on,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, FP64: tl.constexpr,
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


def silu_mul(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """The checked launch function of silu_mul.py, for CUDA tensors (checks kept: they are part
    of what a caller pays for)."""
    if a.dtype != b.dtype or a.dtype not in (torch.float16, torch.bfloat16, torch.float32):
        raise TypeError(f"unsupported dtypes {a.dtype}, {b.dtype}")
    if a.device != b.device or not a.is_cuda:
        raise ValueError("expected two CUDA tensors on one device")
    if torch.is_grad_enabled() and (a.requires_grad or b.requires_grad):
        raise RuntimeError("silu_mul() has no backward")
    shape = torch.broadcast_shapes(a.shape, b.shape)
    out = torch.empty(shape, dtype=a.dtype, device=a.device)
    if out.numel() == 0:
        return out
    n = shape[-1] if shape else 1
    a2, b2 = (t.expand(shape).reshape(-1, n) for t in (a, b))
    out2 = out.view(-1, n)
    m = out2.shape[0]
    block_n = min(triton.next_power_of_2(n), 1024)
    block_m = min(4096 // block_n, triton.next_power_of_2(m))
    grid = (triton.cdiv(m, block_m) * triton.cdiv(n, block_n),)
    with torch.cuda.device(a.device) if a.is_cuda else contextlib.nullcontext():
        silu_mul_kernel[grid](
            a2, b2, out2, m, n, *a2.stride(), *b2.stride(), *out2.stride(),
            BLOCK_M=block_m, BLOCK_N=block_n, FP64=False,
        )  # fmt: skip
    return out


def assert_matches(got: torch.Tensor, a: torch.Tensor, b: torch.Tensor) -> None:
    """The contract of silu_mul.py: float64 reference, 2 ulps for bfloat16."""
    ref = (F.silu(a.double()) * b.double()).to(a.dtype)
    info = torch.finfo(a.dtype)
    torch.testing.assert_close(got, ref, rtol=2 * info.eps, atol=info.tiny)


compiled = torch.compile(lambda gate, up: F.silu(gate) * up)


def implementations(gate: torch.Tensor, up: torch.Tensor) -> dict:
    return {
        "triton": lambda: silu_mul(gate, up),
        "eager": lambda: F.silu(gate) * up,
        "compile": lambda: compiled(gate, up),
    }


# --8<-- [start:measure]
def gpu_time_us(fn, op: str, tokens: int) -> dict:
    times = [t * 1e3 for t in triton.testing.do_bench(fn, warmup=25, rep=50, return_mode="all")]
    q = statistics.quantiles(times, n=5)  # (1)!
    return {
        "value": round(statistics.median(times), 2),
        "unit": "µs",
        "statistic": "median",
        "spread": "p20-p80",
        "low": round(q[0], 2),
        "high": round(q[3], 2),
        "repeats": len(times),
        "op": op,
        "reference": "F.silu(gate) * up",
        "shape": f"gate, up: ({tokens}, {HIDDEN}) halves of ({tokens}, {2 * HIDDEN})",
        "dtype": "bfloat16",
        "compile": "excluded",
    }


def wall_time_us(fn, op: str, calls: int = 200, repeats: int = 7) -> dict:
    per_call = []
    for _ in range(repeats):
        torch.cuda.synchronize()
        start = time.perf_counter()
        for _ in range(calls):
            fn()
        torch.cuda.synchronize()  # (2)!
        per_call.append((time.perf_counter() - start) / calls * 1e6)
    return {
        "value": round(statistics.median(per_call), 2),
        "unit": "µs",
        "statistic": "median",
        "spread": "min-max",
        "low": round(min(per_call), 2),
        "high": round(max(per_call), 2),
        "repeats": repeats,
        "op": f"{op}, wall clock per call over {calls} back-to-back calls (CPU launch included)",
        "reference": "F.silu(gate) * up",
        "shape": f"gate, up: (1, {HIDDEN}) halves of (1, {2 * HIDDEN})",
        "dtype": "bfloat16",
        "compile": "excluded",
    }


# --8<-- [end:measure]


if __name__ == "__main__":
    if not torch.cuda.is_available():
        raise SystemExit("This snippet needs a CUDA GPU: it measures GPU time.")
    figures, medians = {}, {}
    # --8<-- [start:run]
    for tokens in TOKENS:
        gate_up = torch.randn(tokens, 2 * HIDDEN, generator=torch.Generator().manual_seed(tokens))
        gate, up = gate_up.to("cuda", torch.bfloat16).chunk(2, dim=-1)  # (1)!
        for name, fn in implementations(gate, up).items():
            assert_matches(fn(), gate, up)  # (2)!
            fig = gpu_time_us(fn, f"silu(gate) * up ({name})", tokens)
            figures[f"{name}_t{tokens}_us"] = fig
            medians[name, tokens] = fig["value"]
        if tokens == 1:
            for name, fn in implementations(gate, up).items():
                figures[f"{name}_t1_wall_us"] = wall_time_us(fn, f"silu(gate) * up ({name})")
    # --8<-- [end:run]
    # --8<-- [start:mix]
    MIX = {1: 0.40, 16: 0.25, 128: 0.15, 1024: 0.10, 4096: 0.07, 16384: 0.03}  # (1)!
    mix = {
        n: sum(w * medians[n, t] for t, w in MIX.items()) for n in ("triton", "eager", "compile")
    }
    ratios = {t: medians["eager", t] / medians["triton", t] for t in TOKENS}
    best, worst = max(ratios, key=ratios.get), min(ratios, key=ratios.get)
    # --8<-- [end:mix]

    def ratio(value: float, op: str) -> dict:
        return {"value": round(value, 2), "statistic": "ratio", "op": op, "dtype": "bfloat16"}

    figures["mix_eager_over_triton"] = ratio(
        mix["eager"] / mix["triton"], f"eager over Triton, GPU time weighted by the mix {MIX}"
    )
    figures["mix_compile_over_triton"] = ratio(
        mix["compile"] / mix["triton"], f"torch.compile over Triton, weighted by the mix {MIX}"
    )
    figures["best_eager_over_triton"] = ratio(ratios[best], f"eager over Triton at {best} tokens")
    figures["worst_eager_over_triton"] = ratio(
        ratios[worst], f"eager over Triton at {worst} tokens"
    )
    figures["best_tokens"] = {"value": best, "statistic": "count", "op": "tokens of the best ratio"}
    figures["worst_tokens"] = {
        "value": worst,
        "statistic": "count",
        "op": "tokens of the worst ratio",
    }
    for t in TOKENS:
        print(f"tokens={t:6}: " + "  ".join(f"{n} {medians[n, t]:8.2f} us" for n in mix))
    print("figures: " + json.dumps(figures))
    print("acceptance benchmark: all checks passed")
