# /// script
# requires-python = ">=3.10"
# dependencies = ["torch", "triton", "numpy", "liger-kernel"]
#
# [tool.snippet]
# gpu = { min-cc = "8.0", timing = true }
# cpu = { interpreter = true }
# timeout = 300
# ///
"""GeGLU with the tanh GELU, fused: out = gelu_tanh(gate) * up, forward and backward.

On a CUDA GPU:  python geglu.py
On a CPU:       TRITON_INTERPRET=1 python geglu.py
An operator (torch.library.triton_op) with a CPU kernel, autograd, a fake implementation; its
kernels checked against PyTorch on an input matrix (dtypes, empty, one element, odd sizes,
strided views, NaN/Inf, a guard around the output). On a GPU, a benchmark over LLM-like shapes
against PyTorch eager, torch.compile, Liger-Kernel and a device copy, in kernel time and in call
time, printed as rows a test can recompute.
"""

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
BLOCK_N = 1024
MAX_GRID_Y = 65535  # grid axes 1 and 2 take at most 65535 programs


# --8<-- [start:kernels]
@triton.jit
def _sigmoid_2z(z):
    """sigmoid(2 z) and e / (1 + e)**2 without overflow: the exp of a non-positive number and
    one division."""
    e = tl.exp(-2.0 * tl.abs(z))
    r = 1.0 / (1.0 + e)
    return tl.where(z >= 0, r, e * r), e * r * r


@triton.jit
def geglu_fwd_kernel(
    gate_ptr, up_ptr, out_ptr, M, N, stride_g, stride_u, stride_o, BLOCK_N: tl.constexpr
):  # fmt: skip
    cols = tl.program_id(0) * BLOCK_N + tl.arange(0, BLOCK_N)  # (1)!
    mask = cols < N
    for row in range(tl.program_id(1).to(tl.int64), M, tl.num_programs(1)):
        g = tl.load(gate_ptr + row * stride_g + cols, mask=mask)
        u = tl.load(up_ptr + row * stride_u + cols, mask=mask)
        if g.dtype != tl.float64:  # (2)!
            g, u = g.to(tl.float32), u.to(tl.float32)
        z = 0.7978845608028654 * (g + 0.044715 * g * g * g)  # sqrt(2/pi) * (x + 0.044715 x^3)
        s, _ = _sigmoid_2z(z)
        out = g * s * u  # (3)!
        tl.store(out_ptr + row * stride_o + cols, out.to(out_ptr.dtype.element_ty), mask=mask)


@triton.jit
def geglu_bwd_kernel(
    grad_ptr, gate_ptr, up_ptr, dgate_ptr, dup_ptr, M, N,
    stride_d, stride_g, stride_u, stride_dg, stride_du, BLOCK_N: tl.constexpr,
):  # fmt: skip
    cols = tl.program_id(0) * BLOCK_N + tl.arange(0, BLOCK_N)
    mask = cols < N
    for row in range(tl.program_id(1).to(tl.int64), M, tl.num_programs(1)):
        d = tl.load(grad_ptr + row * stride_d + cols, mask=mask)
        g = tl.load(gate_ptr + row * stride_g + cols, mask=mask)
        u = tl.load(up_ptr + row * stride_u + cols, mask=mask)
        if g.dtype != tl.float64:
            d, g, u = d.to(tl.float32), g.to(tl.float32), u.to(tl.float32)
        z = 0.7978845608028654 * (g + 0.044715 * g * g * g)
        s, q = _sigmoid_2z(z)
        dz = 0.7978845608028654 * (1.0 + 3.0 * 0.044715 * g * g)
        dgelu = s + g * 2.0 * q * dz  # (4)!
        dgate = (d * u * dgelu).to(dgate_ptr.dtype.element_ty)
        tl.store(dgate_ptr + row * stride_dg + cols, dgate, mask=mask)
        tl.store(dup_ptr + row * stride_du + cols, (d * g * s).to(dup_ptr.dtype.element_ty),
                 mask=mask)  # fmt: skip


# --8<-- [end:kernels]


# --8<-- [start:launch]
def check_inputs(*tensors: torch.Tensor) -> None:
    """One shape, one floating dtype of DTYPES, one device; anything else is refused."""
    first = tensors[0]
    for t in tensors:
        if not isinstance(t, torch.Tensor):
            raise TypeError(f"expected tensors, got {type(t).__name__}")
        if t.shape != first.shape:
            raise ValueError(f"shapes differ: {tuple(first.shape)} vs {tuple(t.shape)}")
        if t.dtype != first.dtype:
            raise TypeError(f"dtypes differ: {first.dtype} vs {t.dtype}; cast one first")
        if t.device != first.device:
            raise ValueError(f"tensors are on different devices: {first.device}, {t.device}")
    if first.dtype not in DTYPES:
        raise TypeError(f"{first.dtype} is not supported; supported: {DTYPES}")
    if first.dim() and first.shape[-1] > 2**31 - BLOCK_N:  # column offsets are 32-bit
        raise ValueError(f"rows of {first.shape[-1]} elements: at most {2**31 - BLOCK_N}")


def rows(t: torch.Tensor) -> torch.Tensor:
    """A (rows, N) view whose last dimension is contiguous; a copy only when it must be."""
    if not t.dim():  # (1)!
        return t.reshape(1, 1)
    if t.is_contiguous():
        return t.view(-1, t.shape[-1])
    t2 = t.reshape(-1, t.shape[-1])
    return t2 if t2.stride(-1) == 1 else t2.contiguous()


def launch(kernel, grid, *args, raw: bool = False, **meta) -> None:
    """In an operator, kernels go through wrap_triton (traceable by torch.compile); `raw` calls
    them directly, as the interpreter needs on this lock."""
    (kernel if raw else wrap_triton(kernel))[grid](*args, **meta)


def geglu_forward(gate, up, out=None, raw: bool = False) -> torch.Tensor:
    check_inputs(gate, up)
    out = torch.empty_like(gate, memory_format=torch.contiguous_format) if out is None else out
    if out.numel() == 0:  # (2)!
        return out
    g, u, o = rows(gate), rows(up), out.view(-1, out.shape[-1]) if out.dim() else out.view(1, 1)
    grid = ((g.shape[1] + BLOCK_N - 1) // BLOCK_N, min(g.shape[0], MAX_GRID_Y))
    launch(geglu_fwd_kernel, grid, g, u, o, g.shape[0], g.shape[1], g.stride(0), u.stride(0),
           o.stride(0), BLOCK_N=BLOCK_N, raw=raw)  # fmt: skip
    return out


def geglu_backward_launch(grad, gate, up, raw: bool = False):
    check_inputs(grad, gate, up)
    dgate = torch.empty_like(gate, memory_format=torch.contiguous_format)
    dup = torch.empty_like(gate, memory_format=torch.contiguous_format)
    if dgate.numel() == 0:
        return dgate, dup
    d, g, u = rows(grad), rows(gate), rows(up)
    dg, du = dgate.view(d.shape), dup.view(d.shape)
    grid = ((g.shape[1] + BLOCK_N - 1) // BLOCK_N, min(g.shape[0], MAX_GRID_Y))
    launch(geglu_bwd_kernel, grid, d, g, u, dg, du, g.shape[0], g.shape[1], d.stride(0), g.stride(0),
           u.stride(0), dg.stride(0), du.stride(0), BLOCK_N=BLOCK_N, raw=raw)  # fmt: skip
    return dgate, dup


# --8<-- [end:launch]


# --8<-- [start:op]
def check_cuda(t: torch.Tensor) -> None:
    if t.device.type != "cuda":
        raise ValueError(f"the Triton kernels need CUDA tensors, got {t.device}")


@triton_op("cookbook::geglu", mutates_args=())
def geglu(gate: torch.Tensor, up: torch.Tensor) -> torch.Tensor:
    check_inputs(gate, up)
    check_cuda(gate)
    with torch.cuda.device(gate.device):
        return geglu_forward(gate, up)


@triton_op("cookbook::geglu_backward", mutates_args=())
def geglu_backward(
    grad: torch.Tensor, gate: torch.Tensor, up: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor]:
    check_inputs(grad, gate, up)
    check_cuda(gate)
    with torch.cuda.device(gate.device):
        return geglu_backward_launch(grad, gate, up)


def compute_dtype(dtype: torch.dtype) -> torch.dtype:
    return torch.float64 if dtype == torch.float64 else torch.float32


@geglu.register_kernel("cpu")  # (1)!
def geglu_cpu(gate: torch.Tensor, up: torch.Tensor) -> torch.Tensor:
    check_inputs(gate, up)
    c = compute_dtype(gate.dtype)
    return (F.gelu(gate.to(c), approximate="tanh") * up.to(c)).to(gate.dtype).contiguous()


@geglu_backward.register_kernel("cpu")
def geglu_backward_cpu(grad, gate, up):
    check_inputs(grad, gate, up)
    c = compute_dtype(gate.dtype)
    d, g, u = grad.to(c), gate.to(c), up.to(c)
    z = 0.7978845608028654 * (g + 0.044715 * g**3)
    e = torch.exp(-2.0 * z.abs())
    s = torch.where(z >= 0, 1.0 / (1.0 + e), e / (1.0 + e))  # (2)!
    dgelu = s + g * (2.0 * e / (1.0 + e) ** 2) * 0.7978845608028654 * (1.0 + 0.134145 * g**2)
    return (d * u * dgelu).to(gate.dtype), (d * g * s).to(gate.dtype)


@geglu.register_fake
def _(gate, up):
    check_inputs(gate, up)
    return torch.empty(gate.shape, dtype=gate.dtype, device=gate.device)


@geglu_backward.register_fake
def _(grad, gate, up):
    check_inputs(grad, gate, up)
    return tuple(torch.empty(gate.shape, dtype=gate.dtype, device=gate.device) for _ in "du")


def setup_context(ctx, inputs, output) -> None:
    ctx.save_for_backward(*inputs)  # (3)!


def backward(ctx, grad):
    gate, up = ctx.saved_tensors
    return torch.ops.cookbook.geglu_backward(grad, gate, up)


geglu.register_autograd(backward, setup_context=setup_context)
# --8<-- [end:op]


class GegluFunction(torch.autograd.Function):
    """The same kernels without an operator: raw launches in an autograd.Function, the way
    Liger-Kernel ships its kernels: the route to take in eager code, timed beside the operator."""

    @staticmethod
    def forward(ctx, gate, up):
        ctx.save_for_backward(gate, up)
        return geglu_forward(gate, up, raw=True)

    @staticmethod
    def backward(ctx, grad):
        gate, up = ctx.saved_tensors
        return geglu_backward_launch(grad, gate, up, raw=True)


# ----------------------------------------------------------------------------- checks
SENTINEL = 12345.0


def reference(gate: torch.Tensor, up: torch.Tensor) -> torch.Tensor:
    return (F.gelu(gate.double(), approximate="tanh") * up.double()).to(gate.dtype)


def reference_grads(grad, gate, up):
    g, u = gate.double().requires_grad_(), up.double().requires_grad_()
    (F.gelu(g, approximate="tanh") * u).backward(grad.double())
    return g.grad.to(gate.dtype), u.grad.to(gate.dtype)


def tolerance(dtype: torch.dtype) -> dict:
    """fp16/bf16: computed in float32, rounded once (one ulp from the float64 reference, at
    most); float32: the GPU's approximate exp and division, a few ulp; float64: PyTorch's
    gelu derivative is another formula, and both cancel near its zero at gate = -0.75."""
    return {
        torch.float16: dict(rtol=1e-3, atol=1e-5),
        torch.bfloat16: dict(rtol=8e-3, atol=1e-5),
        torch.float32: dict(rtol=1e-5, atol=1e-6),
        torch.float64: dict(rtol=1e-10, atol=1e-12),
    }[dtype]


def guarded(shape, dtype, device) -> tuple[torch.Tensor, callable]:
    """An output view cut from a larger sentinel-filled buffer, and its check."""
    n = math.prod(shape)
    buffer = torch.full((BLOCK_N + n + BLOCK_N,), SENTINEL, dtype=dtype, device=device)
    out = buffer[BLOCK_N : BLOCK_N + n].view(shape)

    def untouched() -> None:
        outside = torch.cat([buffer[:BLOCK_N], buffer[BLOCK_N + n :]])
        if not bool((outside == SENTINEL).all()):
            raise AssertionError(f"the kernel wrote outside its output {tuple(shape)}")

    return out, untouched


def check_kernels(device: str, raw: bool) -> None:
    """The Triton kernels themselves, on the input matrix (raw launches in the interpreter)."""
    torch.manual_seed(0)
    shapes = [(0, 8), (3, 0), (1, 1), (7, 13), (4, 1024), (5, 1025), (2, 3, 2500)]
    dtypes = DTYPES if device == "cuda" else (torch.float16, torch.float32, torch.float64)
    for dtype in dtypes:
        for shape in shapes:
            both = (torch.randn(*shape[:-1], 2 * shape[-1]) * 3).to(dtype).to(device)
            gate, up = both.chunk(2, dim=-1)
            out, untouched = guarded(gate.shape, dtype, device)
            geglu_forward(gate, up, out=out, raw=raw)
            untouched()
            torch.testing.assert_close(out, reference(gate, up), **tolerance(dtype))
            grad = torch.randn(gate.shape).to(dtype).to(device)
            dgate, dup = geglu_backward_launch(grad, gate, up, raw=raw)
            for got, want in zip((dgate, dup), reference_grads(grad, gate, up), strict=True):
                torch.testing.assert_close(got, want, **tolerance(dtype))
        print(f"  {device} {str(dtype):14} forward and backward match PyTorch on {shapes}")
    global MAX_GRID_Y  # more rows than grid axis 1 has programs: each program loops over rows
    cases = [(4, torch.randn(11, 5).to(device))]  # the loop on a small input: 4 programs
    if device == "cuda":  # and at the real limit: 65542 rows on 65535 programs
        cases.append((MAX_GRID_Y, torch.randn(MAX_GRID_Y + 7, 3, device=device)))
    for limit, x in cases:
        saved, MAX_GRID_Y = MAX_GRID_Y, limit
        try:
            out = geglu_forward(x, x.flip(0), raw=raw)
            dgate, dup = geglu_backward_launch(x.cos(), x, x.flip(0), raw=raw)
        finally:
            MAX_GRID_Y = saved
        torch.testing.assert_close(out, reference(x, x.flip(0)), **tolerance(x.dtype))
        wants = reference_grads(x.cos(), x, x.flip(0))
        for got, want in zip((dgate, dup), wants, strict=True):
            torch.testing.assert_close(got, want, **tolerance(x.dtype))
        print(f"  {device}: {x.shape[0]} rows on {limit} programs of grid axis 1 match PyTorch")
    transposed = torch.randn(64, 96).to(device).t()  # a column stride != 1: copied first
    out = geglu_forward(transposed, transposed, raw=raw)
    torch.testing.assert_close(out, reference(transposed, transposed), **tolerance(torch.float32))
    inf, nan = float("inf"), float("nan")
    gate = torch.tensor([[nan, 1.0, inf, -inf, 0.0, 30.0, -30.0, 2.0]]).to(device)
    up = torch.tensor([[1.0, nan, 1.0, 1.0, inf, 1.0, 1.0, -inf]]).to(device)
    want = reference(gate, up)
    torch.testing.assert_close(geglu_forward(gate, up, raw=raw), want, equal_nan=True)
    print(f"  {device}: NaN, Inf and saturated gates give what PyTorch gives: {want.tolist()}")


def expect_error(error: type[Exception], call) -> None:
    try:
        call()
    except error as exc:
        print(f"  rejected as expected: {type(exc).__name__}: {exc}")
    else:
        raise AssertionError(f"expected {error.__name__}, got a result")


def check_function(device: str) -> None:
    """The autograd.Function route (raw launches), forward and both gradients, against the
    float64 reference, on strided halves of one tensor of an odd width."""
    gate, up = torch.randn(3, 5, 2 * 37, device=device).chunk(2, dim=-1)
    gate, up = gate.requires_grad_(), up.requires_grad_()
    grad = torch.randn(3, 5, 37, device=device)
    out = GegluFunction.apply(gate, up)
    got = torch.autograd.grad(out, (gate, up), grad)
    torch.testing.assert_close(
        out, reference(gate.detach(), up.detach()), **tolerance(torch.float32)
    )
    for a, b in zip(got, reference_grads(grad, gate.detach(), up.detach()), strict=True):
        torch.testing.assert_close(a, b, **tolerance(torch.float32))
    print(f"autograd.Function on {device}: forward and both gradients match the reference")


def check_operator(device: str) -> None:
    """The operator: its CPU kernel or its CUDA kernels, autograd, opcheck, bad input."""
    torch.manual_seed(0)
    x = torch.randn(6, 10, dtype=torch.float64, device=device).requires_grad_()
    y = torch.randn(6, 10, dtype=torch.float64, device=device).requires_grad_()
    ok = torch.autograd.gradcheck(torch.ops.cookbook.geglu, (x, y))
    print(f"gradcheck float64 on {device}: {ok}")
    tests = ["test_schema", "test_autograd_registration", "test_faketensor"]
    if device == "cuda":
        tests.append("test_aot_dispatch_dynamic")
    a, b = torch.randn(2, 5, 6, device=device).chunk(2, dim=-1)
    result = torch.library.opcheck(torch.ops.cookbook.geglu.default, (a, b), test_utils=tests)
    print(f"opcheck geglu on {device}: {result}")
    ok = torch.ones(3, device=device)
    expect_error(ValueError, lambda: torch.ops.cookbook.geglu(ok, torch.ones(4, device=device)))
    expect_error(TypeError, lambda: torch.ops.cookbook.geglu(ok, ok.double()))
    ints = torch.ones(3, dtype=torch.int32, device=device)
    expect_error(TypeError, lambda: torch.ops.cookbook.geglu(ints, ints))
    wide = torch.empty(1, 2**31 - BLOCK_N + 1, device="meta")  # no memory: the check comes first
    expect_error(ValueError, lambda: torch.ops.cookbook.geglu(wide, wide))
    other = "meta" if device == "cpu" else "cpu"
    expect_error(ValueError, lambda: torch.ops.cookbook.geglu(ok, ok.to(other)))


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
SHAPES = [(1024, 4096), (4096, 14336), (16384, 14336)]  # (tokens, hidden): LLM MLP widths
BENCH_DTYPES = (torch.bfloat16, torch.float32)
HOST_SHAPE = (16, 4096)  # a small GeGLU: the GPU waits for the host


def load_liger():
    try:
        from liger_kernel.ops.geglu import LigerGELUMulFunction
    except ImportError as exc:
        raise SystemExit(f"the benchmark compares with Liger-Kernel: {exc}; "
                         "pip install liger-kernel==0.8.5") from exc  # fmt: skip
    return LigerGELUMulFunction.apply


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
    eager = lambda g, u: F.gelu(g, approximate="tanh") * u
    out = []
    for dtype in dtypes:
        for tokens, hidden in shapes:
            torch._dynamo.reset()  # (1)!
            impls = {"triton": torch.ops.cookbook.geglu, "triton_fn": GegluFunction.apply,
                     "triton_compile": torch.compile(lambda g, u: torch.ops.cookbook.geglu(g, u),
                                                     dynamic=False),
                     "eager": eager, "compile": torch.compile(eager, dynamic=False),
                     "liger": liger}  # fmt: skip
            gen = torch.Generator("cuda").manual_seed(tokens + hidden)
            projected = torch.randn(tokens, 2 * hidden, generator=gen, device="cuda", dtype=dtype)
            gate, up = projected.chunk(2, dim=-1)  # (2)!
            grad = torch.randn(tokens, hidden, generator=gen, device="cuda", dtype=dtype)
            want = reference(gate, up).double()
            want_grads = reference_grads(grad, gate, up)
            size = grad.numel() * grad.element_size()
            calls = {}
            for impl, fn in impls.items():
                g, u = gate.detach(), up.detach()
                if impl == "liger":  # (3)!
                    g, u = g.contiguous(), u.contiguous()
                g, u = g.requires_grad_(), u.requires_grad_()
                result = fn(g, u)
                got = torch.autograd.grad(result, (g, u), grad, retain_graph=True)
                agree(result, want, f"{impl} forward")
                for name, a, b in zip("gu", got, want_grads, strict=True):
                    agree(a, b, f"{impl} d{name}")
                calls[impl, "forward"] = (lambda fn=fn, g=g, u=u: fn(g.detach(), u.detach()),
                                          "bytes", 3 * size)  # fmt: skip
                backward = lambda r=result, g=g, u=u: torch.autograd.grad(
                    r, (g, u), grad, retain_graph=True
                )
                calls[impl, "backward"] = (backward, "bytes", 5 * size)
            src = torch.empty(5 * size // 2, dtype=torch.uint8, device="cuda")
            dst = torch.empty_like(src)
            fwd = 3 * size // 2
            calls["copy", "forward"] = (lambda: dst[:fwd].copy_(src[:fwd]), "bytes", 3 * size)
            calls["copy", "backward"] = (lambda: dst.copy_(src), "bytes", 5 * size)  # (4)!
            out += measure(calls, (tokens, hidden), dtype)
    return out


# --8<-- [end:bench]


def host_costs(dtype=torch.float32) -> dict:
    """µs of host time per forward call, by route, on a small input that requires grad."""
    torch._dynamo.reset()
    liger = load_liger()
    gate, up = (torch.randn(*HOST_SHAPE, device="cuda", dtype=dtype).requires_grad_()
                for _ in "gu")  # fmt: skip
    op = lambda g, u: torch.ops.cookbook.geglu(g, u)
    eager = lambda g, u: F.gelu(g, approximate="tanh") * u
    compiled_op = torch.compile(op, dynamic=False)
    graphed_op = torch.compile(op, dynamic=False, mode="reduce-overhead")
    gate_inference, up_inference = (
        gate.detach(),
        up.detach(),
    )  # CUDA graphs replay a forward: inputs that do not require grad
    compiled_eager = torch.compile(eager, dynamic=False)
    routes = {
        "raw_launch": lambda: geglu_forward(gate, up, raw=True),
        "triton_op": lambda: torch.ops.cookbook.geglu(gate, up),
        "triton_op_in_compile": lambda: compiled_op(gate, up),
        "triton_op_cuda_graph": lambda: graphed_op(gate_inference, up_inference),
        "autograd_function": lambda: GegluFunction.apply(gate, up),
        "autograd_function_cuda_graph": captured(
            lambda: GegluFunction.apply(gate_inference, up_inference)
        ).replay,
        "liger": lambda: liger(gate, up),
        "eager": lambda: eager(gate, up),
        "compile": lambda: compiled_eager(gate, up),
    }
    return host_us(routes)


if __name__ == "__main__":
    import json

    devices = ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])
    # --8<-- [start:call]
    gate_up = torch.randn(4, 2 * 6)  # a fused gate/up projection's output
    gate, up = gate_up.chunk(2, dim=-1)
    out = torch.ops.cookbook.geglu(gate, up)  # (1)!
    print(
        f"geglu on CPU tensors, {tuple(out.shape)}: max error {(out - reference(gate, up)).abs().max():.1e}"
    )
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
        describe = lambda s: f"gate, up: ({s[0]}, {s[1]})"
        figures = memory_bound_figures(rows_, describe)
        figures.update(call_figures(rows_, describe))
        figures.update(host_figures(host_costs(), f"gate, up: {HOST_SHAPE}, requires grad",
                                    "float32"))  # fmt: skip
        print("figures: " + json.dumps(figures))
    print("geglu: all checks passed")
