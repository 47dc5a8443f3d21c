# /// script
# requires-python = ">=3.10"
# dependencies = ["torch", "triton", "numpy"]
#
# [tool.snippet]
# gpu = { min-cc = "8.0", timing = true }
# cpu = { interpreter = true }
# timeout = 300
# ///
"""RMSNorm, fused: y = x / sqrt(mean(x**2) + eps) * weight, forward and backward.

On a CUDA GPU:  python rmsnorm.py
On a CPU:       TRITON_INTERPRET=1 python rmsnorm.py
One program per row for the forward; the backward recomputes each row's scale instead of saving
it, and sums the weight's gradient in two stages (a partial sum per program, then one sum). An
operator (triton_op) with a CPU kernel and autograd, checked on an input matrix; on a GPU, a
benchmark against PyTorch eager (F.rms_norm), torch.compile and the HBM limit, printed as rows.
"""

import math
import os
import statistics

import torch
import torch.nn.functional as F
import triton
import triton.language as tl
from torch.library import triton_op, wrap_triton

INTERPRETED = os.environ.get("TRITON_INTERPRET") == "1"
DTYPES = (torch.float16, torch.bfloat16, torch.float32, torch.float64)
MAX_N = 16384  # the longest row one block holds; longer rows are refused


# --8<-- [start:kernels]
@triton.jit
def rmsnorm_fwd_kernel(x_ptr, w_ptr, y_ptr, N, stride_x, stride_y, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    mask = cols < N
    x = tl.load(x_ptr + row * stride_x + cols, mask=mask, other=0.0)
    w = tl.load(w_ptr + cols, mask=mask, other=0.0)
    if x.dtype != tl.float64:
        x, w = x.to(tl.float32), w.to(tl.float32)
    rstd = tl.rsqrt(tl.sum(x * x, axis=0) / N + eps)  # (1)!
    tl.store(y_ptr + row * stride_y + cols, (x * rstd * w).to(y_ptr.dtype.element_ty), mask=mask)


@triton.jit
def rmsnorm_bwd_kernel(
    dy_ptr, x_ptr, w_ptr, dx_ptr, dw_partial_ptr, M, N,
    stride_dy, stride_x, stride_dx, eps, ROWS_PER_PROGRAM, BLOCK: tl.constexpr,
):  # fmt: skip
    pid = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    mask = cols < N
    w = tl.load(w_ptr + cols, mask=mask, other=0.0)
    acc_dtype = tl.float64 if w.dtype == tl.float64 else tl.float32
    w = w.to(acc_dtype)
    dw = tl.zeros((BLOCK,), acc_dtype)
    for i in range(0, ROWS_PER_PROGRAM):  # (2)!
        row = pid + i * tl.num_programs(0)
        if row < M:
            x = tl.load(x_ptr + row * stride_x + cols, mask=mask, other=0.0).to(acc_dtype)
            dy = tl.load(dy_ptr + row * stride_dy + cols, mask=mask, other=0.0).to(acc_dtype)
            rstd = tl.rsqrt(tl.sum(x * x, axis=0) / N + eps)  # (3)!
            xhat, dxhat = x * rstd, dy * w
            dx = rstd * (dxhat - xhat * (tl.sum(dxhat * xhat, axis=0) / N))
            tl.store(dx_ptr + row * stride_dx + cols, dx.to(dx_ptr.dtype.element_ty), mask=mask)
            dw += dy * xhat
    tl.store(dw_partial_ptr + pid * N + cols, dw, mask=mask)  # (4)!


# --8<-- [end:kernels]


# --8<-- [start:launch]
def check_inputs(x: torch.Tensor, weight: torch.Tensor, *others: torch.Tensor) -> None:
    for t in (x, weight, *others):
        if not isinstance(t, torch.Tensor):
            raise TypeError(f"expected tensors, got {type(t).__name__}")
        if t.dtype != x.dtype or t.device != x.device:
            raise ValueError(f"all tensors must be {x.dtype} on {x.device}, got {t.dtype} on "
                             f"{t.device}")  # fmt: skip
    if x.dtype not in DTYPES:
        raise TypeError(f"{x.dtype} is not supported; supported: {DTYPES}")
    if x.dim() == 0 or weight.shape != x.shape[-1:]:
        raise ValueError(f"weight must have shape (N,) for x of shape (..., N): got "
                         f"{tuple(weight.shape)} for {tuple(x.shape)}")  # fmt: skip
    if x.shape[-1] > MAX_N:
        raise ValueError(f"rows of {x.shape[-1]} elements: this kernel holds at most {MAX_N}")
    if any(t.shape != x.shape for t in others):
        raise ValueError("the gradient must have the shape of x")


def rows(t: torch.Tensor) -> torch.Tensor:
    t2 = t.reshape(-1, t.shape[-1])
    return t2 if t2.stride(-1) == 1 else t2.contiguous()


def num_warps(block: int) -> int:
    return min(max(block // 256, 1), 16)


def rmsnorm_forward(x, weight, eps: float, out=None, raw: bool = False) -> torch.Tensor:
    check_inputs(x, weight)
    y = torch.empty(x.shape, dtype=x.dtype, device=x.device) if out is None else out
    if y.numel() == 0:
        return y
    x2, y2, w = rows(x), y.view(-1, x.shape[-1]), weight.contiguous()
    block = triton.next_power_of_2(x2.shape[1])
    (rmsnorm_fwd_kernel if raw else wrap_triton(rmsnorm_fwd_kernel))[(x2.shape[0],)](
        x2, w, y2, x2.shape[1], x2.stride(0), y2.stride(0), eps, BLOCK=block,
        num_warps=num_warps(block),
    )  # fmt: skip
    return y


def rmsnorm_backward_launch(dy, x, weight, eps: float, raw: bool = False):
    check_inputs(x, weight, dy)
    dx = torch.empty(x.shape, dtype=x.dtype, device=x.device)
    if x.numel() == 0:
        return dx, torch.zeros_like(weight)
    dy2, x2, dx2, w = rows(dy), rows(x), dx.view(-1, x.shape[-1]), weight.contiguous()
    m, n = x2.shape
    sms = torch.cuda.get_device_properties(x.device).multi_processor_count if x.is_cuda else 2
    programs = min(m, 4 * sms)  # (1)!
    acc = torch.float64 if x.dtype == torch.float64 else torch.float32
    partial = torch.empty((programs, n), dtype=acc, device=x.device)
    block = triton.next_power_of_2(n)
    (rmsnorm_bwd_kernel if raw else wrap_triton(rmsnorm_bwd_kernel))[(programs,)](
        dy2, x2, w, dx2, partial, m, n, dy2.stride(0), x2.stride(0), dx2.stride(0), eps,
        triton.cdiv(m, programs), BLOCK=block, num_warps=num_warps(block),
    )  # fmt: skip
    return dx, partial.sum(0).to(weight.dtype)  # (2)!


# --8<-- [end:launch]


# --8<-- [start:op]
@triton_op("cookbook::rms_norm", mutates_args=())
def rms_norm(x: torch.Tensor, weight: torch.Tensor, eps: float) -> torch.Tensor:
    check_inputs(x, weight)
    if x.device.type != "cuda":
        raise ValueError(f"the Triton kernels need CUDA tensors, got {x.device}")
    with torch.cuda.device(x.device):
        return rmsnorm_forward(x, weight, eps)


@triton_op("cookbook::rms_norm_backward", mutates_args=())
def rms_norm_backward(
    dy: torch.Tensor, x: torch.Tensor, weight: torch.Tensor, eps: float
) -> tuple[torch.Tensor, torch.Tensor]:
    check_inputs(x, weight, dy)
    with torch.cuda.device(x.device):
        return rmsnorm_backward_launch(dy, x, weight, eps)


def compute_dtype(dtype: torch.dtype) -> torch.dtype:
    return torch.float64 if dtype == torch.float64 else torch.float32


@rms_norm.register_kernel("cpu")
def rms_norm_cpu(x: torch.Tensor, weight: torch.Tensor, eps: float) -> torch.Tensor:
    check_inputs(x, weight)
    c = compute_dtype(x.dtype)
    return F.rms_norm(x.to(c), x.shape[-1:], weight.to(c), eps).to(x.dtype)


@rms_norm_backward.register_kernel("cpu")
def rms_norm_backward_cpu(dy, x, weight, eps):
    check_inputs(x, weight, dy)
    c = compute_dtype(x.dtype)
    xc, dyc, w = x.to(c), dy.to(c), weight.to(c)
    rstd = torch.rsqrt(xc.pow(2).mean(-1, keepdim=True) + eps)
    xhat, dxhat = xc * rstd, dyc * w
    dx = rstd * (dxhat - xhat * (dxhat * xhat).mean(-1, keepdim=True))
    dw = (dyc * xhat).reshape(-1, x.shape[-1]).sum(0)
    return dx.to(x.dtype), dw.to(weight.dtype)


@rms_norm.register_fake
def _(x, weight, eps):
    check_inputs(x, weight)
    return torch.empty(x.shape, dtype=x.dtype, device=x.device)


@rms_norm_backward.register_fake
def _(dy, x, weight, eps):
    check_inputs(x, weight, dy)
    return torch.empty_like(x), torch.empty_like(weight)


def setup_context(ctx, inputs, output) -> None:
    x, weight, eps = inputs
    ctx.save_for_backward(x, weight)  # (1)!
    ctx.eps = eps


def backward(ctx, dy):
    x, weight = ctx.saved_tensors
    dx, dw = torch.ops.cookbook.rms_norm_backward(dy, x, weight, ctx.eps)
    return dx, dw, None  # (2)!


rms_norm.register_autograd(backward, setup_context=setup_context)
# --8<-- [end:op]


# ----------------------------------------------------------------------------- checks
SENTINEL = 12345.0
EPS = 1e-6


def reference(x, weight, eps=EPS):
    return F.rms_norm(x.double(), x.shape[-1:], weight.double(), eps).to(x.dtype)


def reference_grads(dy, x, weight, eps=EPS):
    xd, wd = x.double().requires_grad_(), weight.double().requires_grad_()
    F.rms_norm(xd, x.shape[-1:], wd, eps).backward(dy.double())
    return xd.grad.to(x.dtype), wd.grad.to(weight.dtype)


def tolerance(dtype: torch.dtype, rows_summed: int = 1) -> dict:
    """Computed in float32 and rounded once; the weight's gradient sums over rows, so its error
    grows with their number (float32 sums in another order than the float64 reference)."""
    base = {
        torch.float16: dict(rtol=2e-3, atol=1e-4),
        torch.bfloat16: dict(rtol=1.6e-2, atol=1e-3),
        torch.float32: dict(rtol=1e-5, atol=1e-5),
        torch.float64: dict(rtol=1e-10, atol=1e-12),
    }[dtype]
    grow = max(1.0, math.sqrt(rows_summed))
    return {k: v * grow for k, v in base.items()}


def guarded(shape, dtype, device):
    n, pad = math.prod(shape), 1024
    buffer = torch.full((pad + n + pad,), SENTINEL, dtype=dtype, device=device)

    def untouched() -> None:
        if not bool((torch.cat([buffer[:pad], buffer[pad + n :]]) == SENTINEL).all()):
            raise AssertionError(f"the kernel wrote outside its output {tuple(shape)}")

    return buffer[pad : pad + n].view(shape), untouched


def check_kernels(device: str, raw: bool) -> None:
    torch.manual_seed(0)
    shapes = [(0, 8), (1, 1), (3, 7), (5, 1000), (40, 64), (2, 3, 513), (2, MAX_N)]
    dtypes = DTYPES if device == "cuda" else (torch.float16, torch.float32, torch.float64)
    for dtype in dtypes:
        for shape in shapes:
            x = (torch.randn(*shape[:-1], 2 * shape[-1]) * 3)[..., 1::2].to(dtype).to(device)
            w = (torch.rand(shape[-1]) + 0.5).to(dtype).to(device)
            y, untouched = guarded(x.shape, dtype, device)
            rmsnorm_forward(x, w, EPS, out=y, raw=raw)
            untouched()
            torch.testing.assert_close(y, reference(x, w), **tolerance(dtype))
            dy = torch.randn(x.shape).to(dtype).to(device)
            dx, dw = rmsnorm_backward_launch(dy, x, w, EPS, raw=raw)
            want_dx, want_dw = reference_grads(dy, x, w)
            torch.testing.assert_close(dx, want_dx, **tolerance(dtype))
            n_rows = math.prod(shape[:-1])
            torch.testing.assert_close(dw, want_dw, **tolerance(dtype, n_rows))
        print(f"  {device} {str(dtype):14} forward and backward match F.rms_norm on {shapes}")
    inf, nan = float("inf"), float("nan")
    x = torch.tensor([[1.0, nan, 2.0], [1.0, inf, 2.0], [0.0, 0.0, 0.0], [1e-30, -1e-30, 0.0]])
    want = reference(x, torch.ones(3))  # float64 on the CPU: 1/sqrt(inf) is 0
    x, w = x.to(device), torch.ones(3, device=device)
    got = rmsnorm_forward(x, w, EPS, raw=raw)
    torch.testing.assert_close(got.cpu(), want, equal_nan=True)
    print(f"  {device}: NaN, Inf, all-zero and tiny rows give what F.rms_norm gives on the CPU")
    print(f"rms_norm of [1, inf, 2] on {device}: ours {got[1].tolist()}, "
          f"F.rms_norm {reference(x, w)[1].tolist()}")  # fmt: skip


def expect_error(error: type[Exception], call) -> None:
    try:
        call()
    except error as exc:
        print(f"  rejected as expected: {type(exc).__name__}: {exc}")
    else:
        raise AssertionError(f"expected {error.__name__}, got a result")


def check_operator(device: str) -> None:
    torch.manual_seed(0)
    x = torch.randn(5, 9, dtype=torch.float64, device=device).requires_grad_()
    w = torch.rand(9, dtype=torch.float64, device=device).add(0.5).requires_grad_()
    ok = torch.autograd.gradcheck(lambda a, b: torch.ops.cookbook.rms_norm(a, b, EPS), (x, w))
    print(f"gradcheck float64 on {device}: {ok}")
    tests = ["test_schema", "test_autograd_registration", "test_faketensor"]
    if device == "cuda":
        tests.append("test_aot_dispatch_dynamic")
    a = torch.randn(4, 12, device=device).requires_grad_()
    b = torch.rand(12, device=device).requires_grad_()
    result = torch.library.opcheck(torch.ops.cookbook.rms_norm.default, (a, b, EPS),
                                   test_utils=tests)  # fmt: skip
    print(f"opcheck rms_norm on {device}: {result}")
    ok = torch.ones(2, 3, device=device)
    expect_error(
        ValueError, lambda: torch.ops.cookbook.rms_norm(ok, torch.ones(4, device=device), EPS)
    )
    expect_error(ValueError, lambda: torch.ops.cookbook.rms_norm(ok, ok[0].double(), EPS))
    wide = torch.ones(1, MAX_N + 1, device=device)
    expect_error(ValueError, lambda: torch.ops.cookbook.rms_norm(wide, wide[0], EPS))
    ints = torch.ones(2, 3, dtype=torch.int32, device=device)
    expect_error(TypeError, lambda: torch.ops.cookbook.rms_norm(ints, ints[0], EPS))


# ----------------------------------------------------------------------------- benchmark
HBM_TBPS = 4.8  # NVIDIA H200 datasheet
SHAPES = [(4096, 4096), (16384, 4096), (16384, 8192)]  # (tokens, hidden)


# --8<-- [start:bench]
def timed_row(fn, impl: str, pass_: str, shape, dtype, moved_bytes: int, bench) -> dict:
    times = bench(fn)
    p20, _, _, p80 = statistics.quantiles(times, n=5)
    median = statistics.median(times)
    return {
        "impl": impl, "pass": pass_, "shape": list(shape), "dtype": str(dtype).split(".")[-1],
        "ms_median": round(median, 5), "ms_p20": round(p20, 5), "ms_p80": round(p80, 5),
        "repeats": len(times), "bytes": moved_bytes, "gbps": round(moved_bytes / median / 1e6, 1),
    }  # fmt: skip


def benchmark(device: str, shapes, dtype, bench) -> list[dict]:
    eager = lambda x, w: F.rms_norm(x, x.shape[-1:], w, EPS)
    compiled = torch.compile(eager, dynamic=False)
    impls = {"triton": lambda x, w: torch.ops.cookbook.rms_norm(x, w, EPS), "eager": eager,
             "compile": compiled}  # fmt: skip
    out = []
    for tokens, hidden in shapes:
        gen = torch.Generator().manual_seed(tokens + hidden)
        x = torch.randn(tokens, hidden, generator=gen).to(device, dtype)
        w = (torch.rand(hidden, generator=gen) + 0.5).to(device, dtype)
        dy = torch.randn(tokens, hidden, generator=gen).to(device, dtype)
        size = x.element_size() * x.numel()
        for impl, fn in impls.items():
            xg, wg = x.detach().requires_grad_(), w.detach().requires_grad_()
            y = fn(xg, wg)
            if impl == "triton":  # the kernel under test; the others are PyTorch's own
                torch.testing.assert_close(y, reference(x, w), **tolerance(dtype))
            out.append(
                timed_row(
                    lambda: fn(x, w), impl, "forward", (tokens, hidden), dtype, 2 * size, bench
                )
            )  # (1)!
            backward = lambda: torch.autograd.grad(y, (xg, wg), dy, retain_graph=True)
            out.append(timed_row(backward, impl, "backward", (tokens, hidden), dtype,
                                 3 * size, bench))  # fmt: skip
        src = torch.empty(size, dtype=torch.uint8, device=device)
        dst = torch.empty_like(src)
        out.append(timed_row(lambda: dst.copy_(src), "copy", "forward", (tokens, hidden), dtype,
                             2 * size, bench))  # fmt: skip
    return out


# --8<-- [end:bench]


def do_bench_ms(fn) -> list[float]:
    return triton.testing.do_bench(fn, warmup=25, rep=100, return_mode="all")


def ratio_figures(rows: list[dict], dtype: str) -> dict:
    largest = max((r["shape"] for r in rows), key=math.prod)
    at = {(r["impl"], r["pass"]): r for r in rows if r["shape"] == largest}
    shape = f"x: ({largest[0]}, {largest[1]}), weight: ({largest[1]},)"
    figures = {}
    for pass_ in ("forward", "backward"):
        t = at["triton", pass_]
        for other in ("compile", "eager"):
            figures[f"{pass_}_{other}_over_triton"] = {
                "value": round(at[other, pass_]["ms_median"] / t["ms_median"], 2),
                "statistic": "ratio", "op": f"{other} {pass_} median time over Triton's",
                "shape": shape, "dtype": dtype,
            }  # fmt: skip
        figures[f"{pass_}_triton_of_hbm"] = {
            "value": round(t["gbps"] / (HBM_TBPS * 1e3), 3),
            "statistic": "ratio", "op": f"Triton {pass_} bytes/s over the 4.8 TB/s datasheet HBM",
            "shape": shape, "dtype": dtype,
        }  # fmt: skip
    figures["copy_of_hbm"] = {
        "value": round(at["copy", "forward"]["gbps"] / (HBM_TBPS * 1e3), 3),
        "statistic": "ratio", "op": "a device copy of the forward's bytes over 4.8 TB/s",
        "shape": shape, "dtype": dtype,
    }  # fmt: skip
    return figures


if __name__ == "__main__":
    import json

    devices = ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])
    # --8<-- [start:call]
    x, w = torch.tensor([[3.0, 4.0], [0.0, 0.0]]), torch.ones(2)
    print(f"rms_norm on CPU tensors: {torch.ops.cookbook.rms_norm(x, w, EPS).tolist()}")
    # --8<-- [end:call]
    if INTERPRETED:
        check_kernels("cpu", raw=True)
    for device in devices:
        check_operator(device)
    if torch.cuda.is_available():
        check_kernels("cuda", raw=False)
        rows_ = benchmark("cuda", SHAPES, torch.bfloat16, do_bench_ms)
        for r in rows_:
            print(f"benchmark: {json.dumps(r)}")
        print("figures: " + json.dumps(ratio_figures(rows_, "bfloat16")))
    print("rms_norm: all checks passed")
