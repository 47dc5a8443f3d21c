# /// script
# requires-python = ">=3.10"
# dependencies = ["torch", "triton", "numpy", "liger-kernel"]
#
# [tool.snippet]
# gpu = { min-cc = "8.0", timing = true }
# cpu = { interpreter = true }
# timeout = 300
# ///
"""RMSNorm, fused: y = x / sqrt(mean(x**2) + eps) * weight, forward and backward.

On a CUDA GPU:  python rmsnorm.py
On a CPU:       TRITON_INTERPRET=1 python rmsnorm.py
One program per row for the forward, which also saves each row's scale (rstd, 4 bytes a row);
the backward reads it, walks a contiguous range of rows per program, and sums the weight's
gradient in two stages (a partial sum per program, then one sum). An operator (triton_op) with
a CPU kernel and autograd, checked on an input matrix; on a GPU, a benchmark against PyTorch
eager (F.rms_norm), torch.compile, Liger-Kernel and a device copy, in kernel time and in call
time, printed as rows.
"""

import functools
import math
import os
import statistics
import time

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
def rmsnorm_fwd_kernel(
    x_ptr, w_ptr, y_ptr, rstd_ptr, N, stride_x, stride_y, eps, BLOCK: tl.constexpr
):  # fmt: skip
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    mask = cols < N
    x = tl.load(x_ptr + row * stride_x + cols, mask=mask, other=0.0)
    w = tl.load(w_ptr + cols, mask=mask, other=0.0)
    if x.dtype != tl.float64:
        x, w = x.to(tl.float32), w.to(tl.float32)
    rstd = tl.rsqrt(tl.sum(x * x, axis=0) / N + eps).to(x.dtype)  # (1)!
    tl.store(rstd_ptr + row, rstd)  # (2)!
    tl.store(y_ptr + row * stride_y + cols, (x * rstd * w).to(y_ptr.dtype.element_ty), mask=mask)


@triton.jit
def rmsnorm_bwd_kernel(
    dy_ptr, x_ptr, w_ptr, rstd_ptr, dx_ptr, dw_partial_ptr, M, N,
    stride_dy, stride_x, stride_dx, ROWS_PER_PROGRAM, BLOCK: tl.constexpr,
    STAGES: tl.constexpr,
):  # fmt: skip
    pid = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < N
    w = tl.load(w_ptr + cols, mask=mask, other=0.0)
    acc_dtype = tl.float64 if w.dtype == tl.float64 else tl.float32
    w = w.to(acc_dtype)
    dw = tl.zeros((BLOCK,), acc_dtype)
    first = pid.to(tl.int64) * ROWS_PER_PROGRAM
    for row in tl.range(first, tl.minimum(first + ROWS_PER_PROGRAM, M), num_stages=STAGES):  # (3)!
        x = tl.load(x_ptr + row * stride_x + cols, mask=mask, other=0.0).to(acc_dtype)
        dy = tl.load(dy_ptr + row * stride_dy + cols, mask=mask, other=0.0).to(acc_dtype)
        rstd = tl.load(rstd_ptr + row)
        xhat, dxhat = x * rstd, dy * w
        dx = rstd * (dxhat - xhat * (tl.sum(dxhat * xhat, axis=0) / N))  # (4)!
        tl.store(dx_ptr + row * stride_dx + cols, dx.to(dx_ptr.dtype.element_ty), mask=mask)
        dw += dy * xhat
    tl.store(dw_partial_ptr + pid * N + cols, dw, mask=mask)  # (5)!


@triton.jit
def dw_sum_kernel(partial_ptr, dw_ptr, P, N, BLOCK_P: tl.constexpr, BLOCK_N: tl.constexpr):
    """The weight's gradient: the P partial rows summed, in their dtype, and cast once."""
    cols = tl.program_id(0) * BLOCK_N + tl.arange(0, BLOCK_N)
    acc = tl.zeros((BLOCK_N,), partial_ptr.dtype.element_ty)
    for start in range(0, P, BLOCK_P):  # (6)!
        rows = start + tl.arange(0, BLOCK_P)
        mask = (rows[:, None] < P) & (cols[None, :] < N)
        acc += tl.sum(
            tl.load(partial_ptr + rows[:, None] * N + cols[None, :], mask=mask, other=0.0), axis=0
        )
    tl.store(dw_ptr + cols, acc.to(dw_ptr.dtype.element_ty), mask=cols < N)


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


def rstd_dtype(dtype: torch.dtype) -> torch.dtype:
    return torch.float64 if dtype == torch.float64 else torch.float32


def check_rstd(rstd: torch.Tensor, x: torch.Tensor) -> None:
    if rstd.shape != x.shape[:-1] or rstd.dtype != rstd_dtype(x.dtype) or rstd.device != x.device:
        raise ValueError(f"rstd must be {rstd_dtype(x.dtype)} of shape {tuple(x.shape[:-1])} on "
                         f"{x.device}, got {rstd.dtype} {tuple(rstd.shape)} on {rstd.device}")  # fmt: skip


def rows(t: torch.Tensor) -> torch.Tensor:
    """A (rows, N) view whose last dimension is contiguous; a copy only when it must be."""
    if t.is_contiguous():
        return t.view(-1, t.shape[-1])
    t2 = t.reshape(-1, t.shape[-1])
    return t2 if t2.stride(-1) == 1 else t2.contiguous()


@functools.cache
def sm_count(device: torch.device) -> int:
    """Streaming multiprocessors on a GPU; on the CPU (the interpreter), 2 programs."""
    if device.type != "cuda":
        return 2
    return torch.cuda.get_device_properties(device).multi_processor_count


@functools.cache  # (1)!
def fwd_plan(n: int) -> tuple[int, int]:
    """(BLOCK, num_warps) for the forward at rows of n columns."""
    block = triton.next_power_of_2(n)
    return block, 4 if block <= 4096 else 16  # (2)!


@functools.cache
def bwd_plan(n: int, element_size: int, device: torch.device) -> tuple[int, int, int, int]:
    """(BLOCK, programs at most, warps, stages) for the backward at rows of n columns."""
    block = triton.next_power_of_2(n)
    per_sm, warps = (2, 8) if block < 8192 and element_size <= 2 else (1, 16)  # (3)!
    row_bytes = 2 * block * element_size  # one row of x and one of dy in shared memory
    stages = min(3, 160 * 1024 // row_bytes)
    return block, per_sm * sm_count(device), warps, stages if stages >= 2 else 1


def rmsnorm_forward(x, weight, eps: float, out=None, raw: bool = False):
    check_inputs(x, weight)
    y = torch.empty_like(x, memory_format=torch.contiguous_format) if out is None else out
    rstd = x.new_empty(x.shape[:-1], dtype=rstd_dtype(x.dtype))
    if y.numel() == 0:
        return y, rstd.zero_()  # rows of no elements: no kernel writes their rstd
    x2, y2, w = rows(x), y.view(-1, x.shape[-1]), weight.contiguous()
    block, warps = fwd_plan(int(x2.shape[1]))  # an int even where sizes are traced symbolically
    (rmsnorm_fwd_kernel if raw else wrap_triton(rmsnorm_fwd_kernel))[(x2.shape[0],)](
        x2, w, y2, rstd, x2.shape[1], x2.stride(0), y2.stride(0), eps, BLOCK=block,
        num_warps=warps,
    )  # fmt: skip
    return y, rstd


def rmsnorm_backward_launch(dy, x, weight, rstd, raw: bool = False):
    check_inputs(x, weight, dy)
    check_rstd(rstd, x)
    dx = torch.empty_like(x, memory_format=torch.contiguous_format)
    if x.numel() == 0:
        return dx, torch.zeros_like(weight)
    dy2, x2, dx2, w = rows(dy), rows(x), dx.view(-1, x.shape[-1]), weight.contiguous()
    m, n = x2.shape
    block, most, warps, stages = bwd_plan(int(n), x.element_size(), x.device)
    rows_per_program = (m + most - 1) // most
    programs = (m + rows_per_program - 1) // rows_per_program  # (4)!
    partial = x.new_empty((programs, n), dtype=rstd.dtype)
    (rmsnorm_bwd_kernel if raw else wrap_triton(rmsnorm_bwd_kernel))[(programs,)](
        dy2, x2, w, rstd.reshape(-1).contiguous(), dx2, partial, m, n, dy2.stride(0),
        x2.stride(0), dx2.stride(0), rows_per_program, BLOCK=block, STAGES=stages, num_warps=warps,
    )  # fmt: skip
    dw = weight.new_empty(n)
    (dw_sum_kernel if raw else wrap_triton(dw_sum_kernel))[((n + 31) // 32,)](
        partial, dw, programs, n, BLOCK_P=64, BLOCK_N=32, num_warps=4
    )  # (5)!
    return dx, dw


# --8<-- [end:launch]


# --8<-- [start:op]
@triton_op("cookbook::rms_norm", mutates_args=())
def rms_norm_op(
    x: torch.Tensor, weight: torch.Tensor, eps: float
) -> tuple[torch.Tensor, torch.Tensor]:
    check_inputs(x, weight)
    if x.device.type != "cuda":
        raise ValueError(f"the Triton kernels need CUDA tensors, got {x.device}")
    with torch.cuda.device(x.device):
        return rmsnorm_forward(x, weight, eps)  # (1)!


@triton_op("cookbook::rms_norm_backward", mutates_args=())
def rms_norm_backward(
    dy: torch.Tensor, x: torch.Tensor, weight: torch.Tensor, rstd: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor]:
    check_inputs(x, weight, dy)
    check_rstd(rstd, x)
    with torch.cuda.device(x.device):
        return rmsnorm_backward_launch(dy, x, weight, rstd)


def rms_norm(x: torch.Tensor, weight: torch.Tensor, eps: float = 1e-6) -> torch.Tensor:
    """What a model calls: y only."""
    return torch.ops.cookbook.rms_norm(x, weight, eps)[0]


@rms_norm_op.register_kernel("cpu")
def rms_norm_cpu(x: torch.Tensor, weight: torch.Tensor, eps: float):
    check_inputs(x, weight)
    c = rstd_dtype(x.dtype)
    xc = x.to(c)
    rstd = torch.rsqrt(xc.pow(2).mean(-1) + eps)
    return (xc * rstd[..., None] * weight.to(c)).to(x.dtype), rstd


@rms_norm_backward.register_kernel("cpu")
def rms_norm_backward_cpu(dy, x, weight, rstd):
    check_inputs(x, weight, dy)
    check_rstd(rstd, x)
    c = rstd_dtype(x.dtype)
    xc, dyc, w = x.to(c), dy.to(c), weight.to(c)
    xhat, dxhat = xc * rstd[..., None], dyc * w
    dx = rstd[..., None] * (dxhat - xhat * (dxhat * xhat).mean(-1, keepdim=True))
    dw = (dyc * xhat).reshape(-1, x.shape[-1]).sum(0)
    return dx.to(x.dtype), dw.to(weight.dtype)


@rms_norm_op.register_fake
def _(x, weight, eps):
    check_inputs(x, weight)
    return torch.empty_like(x), x.new_empty(x.shape[:-1], dtype=rstd_dtype(x.dtype))


@rms_norm_backward.register_fake
def _(dy, x, weight, rstd):
    check_inputs(x, weight, dy)
    check_rstd(rstd, x)
    return torch.empty_like(x), torch.empty_like(weight)


def setup_context(ctx, inputs, output) -> None:
    x, weight, _ = inputs
    _, rstd = output
    ctx.mark_non_differentiable(rstd)
    ctx.save_for_backward(x, weight, rstd)  # (2)!


def backward(ctx, dy, _):
    x, weight, rstd = ctx.saved_tensors
    dx, dw = torch.ops.cookbook.rms_norm_backward(dy, x, weight, rstd)
    return dx, dw, None  # (3)!


rms_norm_op.register_autograd(backward, setup_context=setup_context)
# --8<-- [end:op]


class RMSNormFunction(torch.autograd.Function):
    """The same kernels without an operator: raw launches in an autograd.Function, the way
    Liger-Kernel ships its kernels: the route to take in eager code, timed beside the operator."""

    @staticmethod
    def forward(ctx, x, weight, eps):
        y, rstd = rmsnorm_forward(x, weight, eps, raw=True)
        ctx.save_for_backward(x, weight, rstd)
        return y

    @staticmethod
    def backward(ctx, dy):
        x, weight, rstd = ctx.saved_tensors
        dx, dw = rmsnorm_backward_launch(dy, x, weight, rstd, raw=True)
        return dx, dw, None


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
    shapes = [(0, 8), (1, 1), (3, 7), (5, 1000), (40, 64), (300, 1000), (2, 3, 513), (2, MAX_N)]
    dtypes = DTYPES if device == "cuda" else (torch.float16, torch.float32, torch.float64)
    for dtype in dtypes:
        for shape in shapes:
            x = (torch.randn(*shape[:-1], 2 * shape[-1]) * 3)[..., 1::2].to(dtype).to(device)
            w = (torch.rand(shape[-1]) + 0.5).to(dtype).to(device)
            y, untouched = guarded(x.shape, dtype, device)
            _, rstd = rmsnorm_forward(x, w, EPS, out=y, raw=raw)
            untouched()
            torch.testing.assert_close(y, reference(x, w), **tolerance(dtype))
            want_rstd = torch.rsqrt(x.double().pow(2).mean(-1) + EPS).to(rstd.dtype)
            torch.testing.assert_close(rstd, want_rstd, **tolerance(torch.float32))
            dy = torch.randn(x.shape).to(dtype).to(device)
            dx, dw = rmsnorm_backward_launch(dy, x, w, rstd, raw=raw)
            want_dx, want_dw = reference_grads(dy, x, w)
            torch.testing.assert_close(dx, want_dx, **tolerance(dtype))
            n_rows = math.prod(shape[:-1])
            torch.testing.assert_close(dw, want_dw, **tolerance(dtype, n_rows))
        print(f"  {device} {str(dtype):14} forward and backward match F.rms_norm on {shapes}")
    inf, nan = float("inf"), float("nan")
    x = torch.tensor([[1.0, nan, 2.0], [1.0, inf, 2.0], [0.0, 0.0, 0.0], [1e-30, -1e-30, 0.0]])
    want = reference(x, torch.ones(3))  # float64 on the CPU: 1/sqrt(inf) is 0
    x, w = x.to(device), torch.ones(3, device=device)
    got, _ = rmsnorm_forward(x, w, EPS, raw=raw)
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


def check_function(device: str) -> None:
    """The autograd.Function route (raw launches), forward and both gradients, against the
    float64 reference, on an odd shape."""
    x = torch.randn(3, 5, 37, device=device, requires_grad=True)
    w = (torch.rand(37, device=device) + 0.5).requires_grad_()
    dy = torch.randn(3, 5, 37, device=device)
    y = RMSNormFunction.apply(x, w, EPS)
    dx, dw = torch.autograd.grad(y, (x, w), dy)
    want_dx, want_dw = reference_grads(dy, x.detach(), w.detach())
    torch.testing.assert_close(y, reference(x.detach(), w.detach()), **tolerance(torch.float32))
    torch.testing.assert_close(dx, want_dx, **tolerance(torch.float32))
    torch.testing.assert_close(dw, want_dw, **tolerance(torch.float32, rows_summed=15))
    print(f"autograd.Function on {device}: forward and both gradients match the reference")


def check_operator(device: str) -> None:
    torch.manual_seed(0)
    x = torch.randn(5, 9, dtype=torch.float64, device=device).requires_grad_()
    w = torch.rand(9, dtype=torch.float64, device=device).add(0.5).requires_grad_()
    ok = torch.autograd.gradcheck(lambda a, b: rms_norm(a, b, EPS), (x, w))
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


# ----------------------------------------------------------------------------- timing
# --8<-- [start:harness]
FLUSH_BYTES = 256 * 2**20  # more than the H200's 60 MB of L2
KERNEL_REPEATS = 10
CALL_REPEATS = 100


@triton.jit
def flush_l2_kernel(buf_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    tl.store(buf_ptr + offs, 0, mask=offs < n)


def l2_flusher():
    buf = torch.empty(FLUSH_BYTES // 4, dtype=torch.int32, device="cuda")
    grid = (triton.cdiv(buf.numel(), 8192),)
    return lambda: flush_l2_kernel[grid](buf, buf.numel(), BLOCK=8192)


def kernel_times(fns: list, repeats: int = KERNEL_REPEATS) -> list[list[float]]:
    """Kernel time in ms, `repeats` calls of each fn: the device time of every kernel, copy and
    fill a call launched, read by the profiler (CUPTI), the L2 cache flushed before each call."""
    flush = l2_flusher()  # (1)!
    for fn in fns:  # a first call compiles what it has not yet (a compiled peer's new graph)
        fn()
    flush()
    torch.cuda.synchronize()
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
        for fn in fns:
            for _ in range(repeats):
                flush()
                fn()
        flush()
        torch.cuda.synchronize()
    device_events = [
        e for e in prof.profiler.kineto_results.events()
        if e.device_type() == torch.autograd.DeviceType.CUDA
    ]  # fmt: skip
    times, current = [], None
    for e in sorted(device_events, key=lambda e: e.start_ns()):
        if e.name() == "flush_l2_kernel":  # (2)!
            if current is not None:
                times.append(current / 1e6)
            current = 0
        elif current is not None:
            current += e.duration_ns()
    if len(times) != len(fns) * repeats:
        raise RuntimeError(f"the profiler saw {len(times)} calls, not {len(fns) * repeats}")
    return [times[i * repeats : (i + 1) * repeats] for i in range(len(fns))]


def call_times(fns: list, repeats: int = CALL_REPEATS) -> list[list[float]]:
    """Call time in ms, host launch included, `repeats` calls of each fn: CUDA events around
    each call, each started on an idle GPU with the L2 cache flushed, so that all the host work
    before the launch counts. The fns take turns, one call each per round: whatever drifts
    while they are timed (clocks, the host's load) moves them all alike."""
    flush, times = l2_flusher(), [[] for _ in fns]
    for fn in fns:
        for _ in range(3):
            fn()
    for _ in range(repeats):
        for fn, out in zip(fns, times, strict=True):
            flush()
            torch.cuda.synchronize()  # (3)!
            start = torch.cuda.Event(enable_timing=True)
            end = torch.cuda.Event(enable_timing=True)
            start.record()
            fn()
            end.record()
            end.synchronize()
            out.append(start.elapsed_time(end))
    return times


RATES = {"bytes": ("gbps", 1e6), "flops": ("tflops", 1e9)}  # amount / ms / scale


def timed_row(impl, pass_, shape, dtype, clock, times, amount_key, amount) -> dict:
    p20, _, _, p80 = statistics.quantiles(times, n=5)
    median = round(statistics.median(times), 5)
    rate, scale = RATES[amount_key]
    return {
        "impl": impl, "pass": pass_, "shape": list(shape), "dtype": str(dtype).split(".")[-1],
        "clock": clock, "ms_median": median, "ms_p20": round(p20, 5), "ms_p80": round(p80, 5),
        "repeats": len(times), amount_key: amount, rate: round(amount / median / scale, 1),
    }  # fmt: skip


def measure(calls: dict, shape, dtype) -> list[dict]:
    """calls: {(impl, pass): (fn, amount_key, amount)}. Kernel time in one profiler session,
    then call time, for each."""
    keys = list(calls)
    kernel = kernel_times([calls[k][0] for k in keys])
    call = call_times([calls[k][0] for k in keys])
    rows = []
    for (impl, pass_), k_times, c_times in zip(keys, kernel, call, strict=True):
        _, amount_key, amount = calls[impl, pass_]
        rows.append(timed_row(impl, pass_, shape, dtype, "kernel", k_times, amount_key, amount))
        rows.append(timed_row(impl, pass_, shape, dtype, "call", c_times, amount_key, amount))
    return rows


def host_us(routes: dict, calls: int = 200, repeats: int = 5) -> dict[str, list[float]]:
    """Per route, wall-clock µs per call over `calls` back-to-back calls on inputs small enough
    that the GPU waits for the host: what one call costs the CPU. The routes take turns, one
    batch of calls each per repeat, so that a host that slows down or speeds up mid-run moves
    them all alike."""
    for fn in routes.values():
        for _ in range(20):
            fn()
    torch.cuda.synchronize()
    out = {route: [] for route in routes}
    for _ in range(repeats):
        for route, fn in routes.items():  # (4)!
            start = time.perf_counter()
            for _ in range(calls):
                fn()
            torch.cuda.synchronize()
            out[route].append((time.perf_counter() - start) / calls * 1e6)
    return out


def captured(fn) -> torch.cuda.CUDAGraph:
    """fn captured in a CUDA graph, after warm-up calls on a side stream (PyTorch's recipe)."""
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        for _ in range(3):
            fn()
    torch.cuda.current_stream().wait_stream(stream)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        fn()
    return graph


# --8<-- [end:harness]
# ----------------------------------------------------------------------------- figures
PEERS = ("eager", "compile", "liger")
TARGET_BYTES = 32 * 2**20  # issue 18: every shape that moves at least 32 MiB is judged


def floor3(x: float) -> float:
    """Three decimals, rounded down: a ratio is never rounded up into a met target."""
    return math.floor(x * 1000) / 1000


def ratio_figure(num: dict, den: dict, op: str, shape: str, dtype: str, clock="kernel") -> dict:
    """num's time over den's, on one clock, with the spread its 20/80 % quantiles allow."""
    return {
        "value": floor3(num["ms_median"] / den["ms_median"]),
        "low": floor3(num["ms_p20"] / den["ms_p80"]), "high": floor3(num["ms_p80"] / den["ms_p20"]),
        "spread": "p20-p80", "statistic": "ratio", "clock": clock, "op": op, "shape": shape,
        "dtype": dtype,
    }  # fmt: skip


def memory_bound_figures(rows: list[dict], describe) -> dict:
    """Per pass, dtype and shape moving >= 32 MiB, from kernel times: the best peer's time over
    Triton's, the same-run copy's time over Triton's (Triton's share of the copy roof), and the
    best peer's time over the copy's (the ratio a kernel at the copy's speed would reach); then,
    per pass and dtype, the lowest of each over the shapes."""
    at = {(r["impl"], r["pass"], tuple(r["shape"]), r["dtype"]): r
          for r in rows if r["clock"] == "kernel"}  # fmt: skip
    figures, per_shape = {}, {}
    for (impl, pass_, shape, dtype), t in at.items():
        if impl != "triton" or t["bytes"] < TARGET_BYTES:
            continue
        peers = [at[p, pass_, shape, dtype] for p in PEERS if (p, pass_, shape, dtype) in at]
        best, copy = min(peers, key=lambda r: r["ms_median"]), at["copy", pass_, shape, dtype]
        tag, where = f"{pass_}_{dtype}_{'x'.join(map(str, shape))}", describe(shape)
        found = {
            "best_over_triton": ratio_figure(
                best, t, f"{pass_}: the best peer's ({best['impl']}) kernel time over Triton's",
                where, dtype),
            "triton_of_copy": ratio_figure(
                copy, t, f"{pass_}: a device copy of the same bytes, its kernel time over "
                "Triton's", where, dtype),
            "copy_over_best": ratio_figure(
                best, copy, f"{pass_}: the best peer's ({best['impl']}) kernel time over a device "
                "copy of the same bytes", where, dtype),
        }  # fmt: skip
        for kind, figure in found.items():
            figures[f"{tag}_{kind}"] = figure
            per_shape.setdefault((pass_, dtype, kind), []).append(figure)
    for (pass_, dtype, kind), found in per_shape.items():
        figure = min(found, key=lambda f: f["value"])
        figures[f"{pass_}_{dtype}_{kind}"] = {
            **figure,
            "op": f"{figure['op']}, the lowest of {len(found)} shapes",
        }
    return figures


def call_figures(rows: list[dict], describe) -> dict:
    """Per pass, dtype and shape, every benchmarked one, from call times (host launch included):
    Liger-Kernel's call time over the autograd.Function route's, the route the page recommends
    in eager code; then, per pass and dtype, the lowest over the shapes."""
    at = {(r["impl"], r["pass"], tuple(r["shape"]), r["dtype"]): r
          for r in rows if r["clock"] == "call"}  # fmt: skip
    figures, per_shape = {}, {}
    for (impl, pass_, shape, dtype), t in at.items():
        if impl != "triton_fn":
            continue
        figure = ratio_figure(
            at["liger", pass_, shape, dtype], t, f"{pass_}: Liger-Kernel's call time over the "
            "autograd.Function route's", describe(shape), dtype, clock="call")  # fmt: skip
        figures[f"{pass_}_{dtype}_{'x'.join(map(str, shape))}_liger_over_fn_call"] = figure
        per_shape.setdefault((pass_, dtype), []).append(figure)
    for (pass_, dtype), found in per_shape.items():
        figure = min(found, key=lambda f: f["value"])
        figures[f"{pass_}_{dtype}_liger_over_fn_call"] = {
            **figure,
            "op": f"{figure['op']}, the lowest of {len(found)} shapes",
        }
    return figures


def host_figures(host: dict, shape: str, dtype: str) -> dict:
    """route -> µs per call; each a median of repeats with its range."""
    return {
        f"host_us_{route}": {
            "value": round(statistics.median(us), 1),
            "unit": "us",
            "statistic": "median",
            "repeats": len(us),
            "low": round(min(us), 1),
            "high": round(max(us), 1),
            "spread": "min-max",
            "compile": "excluded",
            "clock": "wall",
            "op": f"host time of one forward call through {route}",
            "shape": shape,
            "dtype": dtype,
        }  # fmt: skip
        for route, us in host.items()
    }


# ----------------------------------------------------------------------------- benchmark
SHAPES = [(4096, 4096), (16384, 4096), (16384, 8192)]  # (tokens, hidden)
BENCH_DTYPES = (torch.bfloat16, torch.float32)
HOST_SHAPE = (64, 4096)  # a small RMSNorm: the GPU waits for the host


def load_liger():
    try:
        from liger_kernel.ops.rms_norm import LigerRMSNormFunction
    except ImportError as exc:
        raise SystemExit(f"the benchmark compares with Liger-Kernel: {exc}; "
                         "pip install liger-kernel==0.8.5") from exc  # fmt: skip
    # casting mode "gemma": everything in float32, as this file's kernels compute
    return lambda x, w: LigerRMSNormFunction.apply(x, w, EPS, 0.0, "gemma", True)


def agree(got: torch.Tensor, want: torch.Tensor, what: str) -> None:
    """A peer's result against the float64 reference: within a few units of the dtype's
    rounding, measured against the largest value (a gradient cancels near zero)."""
    eps = torch.finfo(got.dtype).eps
    err = (got.double() - want.double()).abs().max().item() / want.abs().max().item()
    if not err <= 8 * eps:
        raise AssertionError(f"{what}: error {err:.2e} of the largest value, more than 8 eps")


# --8<-- [start:bench]
def benchmark(shapes, dtypes) -> list[dict]:
    liger = load_liger()
    eager = lambda x, w: F.rms_norm(x, x.shape[-1:], w, EPS)
    out = []
    for dtype in dtypes:
        for tokens, hidden in shapes:
            torch._dynamo.reset()  # (1)!
            impls = {"triton": lambda x, w: rms_norm(x, w, EPS),
                     "triton_fn": lambda x, w: RMSNormFunction.apply(x, w, EPS),
                     "triton_compile": torch.compile(lambda x, w: rms_norm(x, w, EPS),
                                                     dynamic=False),
                     "eager": eager, "compile": torch.compile(eager, dynamic=False),
                     "liger": liger}  # fmt: skip
            gen = torch.Generator("cuda").manual_seed(tokens + hidden)
            x = torch.randn(tokens, hidden, generator=gen, device="cuda", dtype=dtype)
            w = torch.rand(hidden, generator=gen, device="cuda", dtype=dtype) + 0.5
            dy = torch.randn(tokens, hidden, generator=gen, device="cuda", dtype=dtype)
            want = reference(x, w).double()
            want_dx, want_dw = reference_grads(dy, x, w)
            size = x.numel() * x.element_size()
            calls = {}
            for impl, fn in impls.items():
                xg, wg = x.detach().requires_grad_(), w.detach().requires_grad_()
                y = fn(xg, wg)
                g = dy.clone()  # (2)!
                dx, dw = torch.autograd.grad(y, (xg, wg), g, retain_graph=True)
                agree(y, want, f"{impl} forward")
                agree(dx, want_dx, f"{impl} dx"), agree(dw, want_dw, f"{impl} dw")
                calls[impl, "forward"] = (lambda fn=fn: fn(x, w), "bytes", 2 * size)  # (3)!
                backward = lambda y=y, xg=xg, wg=wg, g=g: torch.autograd.grad(
                    y, (xg, wg), g, retain_graph=True
                )
                calls[impl, "backward"] = (backward, "bytes", 3 * size)
            src = torch.empty(3 * size // 2, dtype=torch.uint8, device="cuda")
            dst = torch.empty_like(src)
            calls["copy", "forward"] = (lambda: dst[:size].copy_(src[:size]), "bytes", 2 * size)
            calls["copy", "backward"] = (lambda: dst.copy_(src), "bytes", 3 * size)
            out += measure(calls, (tokens, hidden), dtype)
    return out


# --8<-- [end:bench]


def host_costs(dtype=torch.float32) -> dict:
    """µs of host time per forward call, by route, on a small input that requires grad."""
    torch._dynamo.reset()
    liger = load_liger()
    x = torch.randn(*HOST_SHAPE, device="cuda", dtype=dtype).requires_grad_()
    w = torch.ones(HOST_SHAPE[1], device="cuda", dtype=dtype).requires_grad_()
    op = lambda a, b: rms_norm(a, b, EPS)
    eager = lambda a, b: F.rms_norm(a, a.shape[-1:], b, EPS)
    compiled_op = torch.compile(op, dynamic=False)
    graphed_op = torch.compile(op, dynamic=False, mode="reduce-overhead")
    x_inference, w_inference = (
        x.detach(),
        w.detach(),
    )  # CUDA graphs replay a forward: inputs that do not require grad
    compiled_eager = torch.compile(eager, dynamic=False)
    routes = {
        "raw_launch": lambda: rmsnorm_forward(x, w, EPS, raw=True),
        "triton_op": lambda: rms_norm(x, w, EPS),
        "triton_op_in_compile": lambda: compiled_op(x, w),
        "triton_op_cuda_graph": lambda: graphed_op(x_inference, w_inference),
        "autograd_function": lambda: RMSNormFunction.apply(x, w, EPS),
        "autograd_function_cuda_graph": captured(
            lambda: RMSNormFunction.apply(x_inference, w_inference, EPS)
        ).replay,
        "liger": lambda: liger(x, w),
        "eager": lambda: eager(x, w),
        "compile": lambda: compiled_eager(x, w),
    }
    return host_us(routes)


if __name__ == "__main__":
    import json

    devices = ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])
    # --8<-- [start:call]
    x, w = torch.tensor([[3.0, 4.0], [0.0, 0.0]]), torch.ones(2)
    print(f"rms_norm on CPU tensors: {rms_norm(x, w, EPS).tolist()}")
    # --8<-- [end:call]
    if INTERPRETED:
        check_kernels("cpu", raw=True)
        check_function("cpu")
    for device in devices:
        check_operator(device)
    if torch.cuda.is_available():
        check_kernels("cuda", raw=False)
        check_function("cuda")
        rows_ = benchmark(SHAPES, BENCH_DTYPES)
        for r in rows_:
            print(f"benchmark: {json.dumps(r)}")
        describe = lambda s: f"x: ({s[0]}, {s[1]}), weight: ({s[1]},)"
        figures = memory_bound_figures(rows_, describe)
        figures.update(call_figures(rows_, describe))
        figures.update(host_figures(host_costs(), f"x: {HOST_SHAPE}, requires grad", "float32"))
        print("figures: " + json.dumps(figures))
    print("rms_norm: all checks passed")
