# /// script
# requires-python = ">=3.10"
# dependencies = ["torch", "triton", "numpy"]
#
# [tool.snippet]
# gpu = { min-cc = "8.0", timing = true }
# cpu = { skip = "measures kernel and call times on the GPU; the interpreter says nothing about speed", skip-zh = "测的是 GPU 上的内核时间和每次调用时间；解释器的速度说明不了任何问题" }
# timeout = 300
# ///
"""silu_mul against PyTorch eager and torch.compile over a distribution of shapes, not one size.

On a CUDA GPU:  python benchmark.py   (about 20 s)
The inputs are the gate and up halves of an MLP's (tokens, 2 * 14336) bfloat16 projection, for
token counts from one (decoding) to 16384 (a long prefill). For each, results checked first,
then two clocks, compile excluded: kernel time (triton.testing.do_bench_cudagraph: the calls
replayed from a CUDA graph, no host work in it) and call time (triton.testing.do_bench: CUDA
events around each call, the host's launch in it), each a median with its 20/80 % quantiles.
Then a summary over an assumed mix of calls, in kernel time.
"""

import contextlib
import json
import statistics

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
def summary(times_ms: list[float], op: str, tokens: int, clock: str) -> dict:
    times = [t * 1e3 for t in times_ms]
    q = statistics.quantiles(times, n=5)
    return {
        "value": round(statistics.median(times), 2),
        "unit": "µs",
        "statistic": "median",
        "spread": "p20-p80",
        "low": round(q[0], 2),
        "high": round(q[3], 2),
        "repeats": len(times),
        "clock": clock,
        "op": op,
        "reference": "F.silu(gate) * up",
        "shape": f"gate, up: ({tokens}, {HIDDEN}) halves of ({tokens}, {2 * HIDDEN})",
        "dtype": "bfloat16",
        "compile": "excluded",
    }


def kernel_time_us(fn, op: str, tokens: int) -> dict:
    times = triton.testing.do_bench_cudagraph(fn, rep=20, return_mode="all")  # (1)!
    return summary(times, f"{op}, kernel time (CUDA-graph replay)", tokens, "kernel")


def call_time_us(fn, op: str, tokens: int) -> dict:
    times = triton.testing.do_bench(fn, warmup=25, rep=50, return_mode="all")  # (2)!
    return summary(times, f"{op}, call time (do_bench, host launch included)", tokens, "call")


# --8<-- [end:measure]


if __name__ == "__main__":
    if not torch.cuda.is_available():
        raise SystemExit("This snippet needs a CUDA GPU: it measures kernel and call times.")
    figures, kernel, call = {}, {}, {}
    # --8<-- [start:run]
    for tokens in TOKENS:
        gate_up = torch.randn(tokens, 2 * HIDDEN, generator=torch.Generator().manual_seed(tokens))
        gate, up = gate_up.to("cuda", torch.bfloat16).chunk(2, dim=-1)  # (1)!
        for name, fn in implementations(gate, up).items():
            assert_matches(fn(), gate, up)  # (2)!
            op = f"silu(gate) * up ({name})"
            figures[f"{name}_t{tokens}_kernel_us"] = kernel_time_us(fn, op, tokens)
            figures[f"{name}_t{tokens}_call_us"] = call_time_us(fn, op, tokens)
            kernel[name, tokens] = figures[f"{name}_t{tokens}_kernel_us"]["value"]
            call[name, tokens] = figures[f"{name}_t{tokens}_call_us"]["value"]
    # --8<-- [end:run]
    # --8<-- [start:mix]
    MIX = {1: 0.40, 16: 0.25, 128: 0.15, 1024: 0.10, 4096: 0.07, 16384: 0.03}  # (1)!
    mix = {n: sum(w * kernel[n, t] for t, w in MIX.items()) for n in ("triton", "eager", "compile")}
    # --8<-- [end:mix]

    def ratio(value: float, op: str, clock: str) -> dict:
        return {
            "value": round(value, 2),
            "statistic": "ratio",
            "clock": clock,
            "op": op,
            "dtype": "bfloat16",
        }

    figures["mix_eager_over_triton"] = ratio(
        mix["eager"] / mix["triton"], f"eager over Triton, kernel time weighted by {MIX}", "kernel"
    )
    figures["mix_compile_over_triton"] = ratio(
        mix["compile"] / mix["triton"],
        f"torch.compile over Triton, kernel time weighted by {MIX}",
        "kernel",
    )
    for t in TOKENS:
        figures[f"eager_over_triton_t{t}_kernel"] = ratio(
            kernel["eager", t] / kernel["triton", t], f"eager over Triton at {t} tokens", "kernel"
        )
        figures[f"eager_over_triton_t{t}_call"] = ratio(
            call["eager", t] / call["triton", t], f"eager over Triton at {t} tokens", "call"
        )
        print(
            f"tokens={t:6}: kernel "
            + "  ".join(f"{n} {kernel[n, t]:8.2f}" for n in mix)
            + "  | call "
            + "  ".join(f"{n} {call[n, t]:8.2f}" for n in mix)
            + "  (us)"
        )
    # The conclusions the acceptance and id-card pages draw, each asserted:
    for t in (4096, 16384):  # the envelope: in eager code the Triton call beats PyTorch's
        assert call["triton", t] < call["eager", t], (t, call)
        assert kernel["triton", t] < kernel["eager", t], (t, kernel)
    assert figures["mix_eager_over_triton"]["value"] > 1.0, mix  # the mix, in kernel time
    for t in (1, 16, 128):  # small inputs: the host's launch decides the call time
        assert call["triton", t] > call["eager", t], (t, call)
    print("figures: " + json.dumps(figures))
    print("acceptance benchmark: all checks passed")
