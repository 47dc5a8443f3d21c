# /// script
# requires-python = ">=3.10"
# dependencies = ["torch", "triton", "numpy", "liger-kernel"]
#
# [tool.snippet]
# gpu = { min-cc = "8.0", timing = true }
# cpu = { interpreter = true }
# timeout = 300
# ///
"""Row-wise softmax, fused and numerically stable, forward and backward.

On a CUDA GPU:  python softmax.py
On a CPU:       TRITON_INTERPRET=1 python softmax.py
In the forward, a row that fits one block (32768 float32, float16 or bfloat16; 16384 float64) is
read once and written once; a longer row is read twice by a looped (online) kernel that keeps a
running maximum and sum. The backward holds a row in one block up to 32768 16-bit or 16384
float32 or float64 elements, and loops past that.
Masked for any number of columns. An operator (triton_op) with a CPU kernel and autograd,
checked on an input matrix; on a GPU, a benchmark against PyTorch eager, torch.compile,
Liger-Kernel and a device copy, in kernel time and in call time, printed as rows.
"""

import functools
import math
import os
import statistics
import time

import torch
import triton
import triton.language as tl
from torch.library import triton_op, wrap_triton

INTERPRETED = os.environ.get("TRITON_INTERPRET") == "1"
DTYPES = (torch.float16, torch.bfloat16, torch.float32, torch.float64)
# The longest row in one block, by pass and element size.
MAX_ONE_BLOCK = {
    "forward": {2: 32768, 4: 32768, 8: 16384},
    "backward": {2: 32768, 4: 16384, 8: 16384},
}
# The looped kernels' (BLOCK, num_warps) by pass and element size: the float64 backward's picked
# so that ptxas reports no spills, the others from one-off sweeps on an H200 (not recorded); any
# other pair takes LOOP_PLAN_DEFAULT.
LOOP_PLAN = {
    ("forward", 2): (16384, 16),
    ("backward", 2): (16384, 32),
    ("forward", 4): (32768, 32),
    ("backward", 4): (16384, 32),
    ("backward", 8): (4096, 16),
}
LOOP_PLAN_DEFAULT = (8192, 16)
MAX_COLUMNS = 2**31 - 2 * 32768  # longer rows would overflow the kernels' 32-bit column offsets


# --8<-- [start:one-block]
@triton.jit
def softmax_kernel(x_ptr, y_ptr, M, N, stride_x, stride_y, BLOCK: tl.constexpr,
                   STAGES: tl.constexpr):  # fmt: skip
    first = tl.program_id(0).to(tl.int64)
    if STAGES == 1:  # (1)!
        softmax_row(x_ptr, y_ptr, first, N, stride_x, stride_y, BLOCK)
    else:
        for row in tl.range(first, M, tl.num_programs(0), num_stages=STAGES):
            softmax_row(x_ptr, y_ptr, row, N, stride_x, stride_y, BLOCK)


@triton.jit
def softmax_row(x_ptr, y_ptr, row, N, stride_x, stride_y, BLOCK: tl.constexpr):
    cols = tl.arange(0, BLOCK)
    mask = cols < N
    x = tl.load(x_ptr + row * stride_x + cols, mask=mask, other=-float("inf"))  # (2)!
    if x.dtype != tl.float64:
        x = x.to(tl.float32)
    e = tl.exp(x - tl.max(x, axis=0))  # (3)!
    y = e * (1.0 / tl.sum(e, axis=0))
    tl.store(y_ptr + row * stride_y + cols, y.to(y_ptr.dtype.element_ty), mask=mask)


# --8<-- [end:one-block]


# --8<-- [start:online]
@triton.jit
def softmax_online_kernel(x_ptr, y_ptr, N, stride_x, stride_y, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    x_row, y_row = x_ptr + row * stride_x, y_ptr + row * stride_y
    cols = tl.arange(0, BLOCK)
    acc_dtype = tl.float64 if x_ptr.dtype.element_ty == tl.float64 else tl.float32
    m = tl.full([], -float("inf"), acc_dtype)  # (1)!
    s = tl.zeros([], acc_dtype)
    for start in range(0, N, BLOCK):
        x = tl.load(
            x_row + start + cols,
            mask=start + cols < N,
            other=-float("inf"),
            eviction_policy="evict_last",
        ).to(acc_dtype)  # (2)!
        m_new = tl.maximum(m, tl.max(x, axis=0), propagate_nan=tl.PropagateNan.ALL)  # (3)!
        rescaled = s * tl.exp(m - m_new) + tl.sum(tl.exp(x - m_new), axis=0)
        s = tl.where(m_new > -float("inf"), rescaled, 0.0)  # (4)!
        m = m_new
    inv_sum = 1.0 / s
    for start in range(0, N, BLOCK):
        mask = start + cols < N
        x = tl.load(
            x_row + start + cols, mask=mask, other=-float("inf"), eviction_policy="evict_first"
        ).to(acc_dtype)
        tl.store(y_row + start + cols, (tl.exp(x - m) * inv_sum).to(y_ptr.dtype.element_ty),
                 mask=mask)  # fmt: skip


# --8<-- [end:online]


# --8<-- [start:backward]
@triton.jit
def softmax_bwd_kernel(
    dy_ptr, y_ptr, dx_ptr, N, stride_dy, stride_y, stride_dx, BLOCK: tl.constexpr,
    ONE_BLOCK: tl.constexpr,
):  # fmt: skip
    row = tl.program_id(0).to(tl.int64)
    dy_row, y_row = dy_ptr + row * stride_dy, y_ptr + row * stride_y
    dx_row = dx_ptr + row * stride_dx
    cols = tl.arange(0, BLOCK)
    acc_dtype = tl.float64 if y_ptr.dtype.element_ty == tl.float64 else tl.float32
    if ONE_BLOCK:  # (1)!
        mask = cols < N
        dy = tl.load(dy_row + cols, mask=mask, other=0.0).to(acc_dtype)
        y = tl.load(y_row + cols, mask=mask, other=0.0).to(acc_dtype)
        dx = y * (dy - tl.sum(dy * y, axis=0))
        tl.store(dx_row + cols, dx.to(dx_ptr.dtype.element_ty), mask=mask)
    else:
        dot = tl.zeros((BLOCK,), acc_dtype)
        dy_next, y_next = _load_block(dy_row, y_row, 0, cols, N)
        for start in range(0, N, BLOCK):
            dy, y = dy_next, y_next
            dy_next, y_next = _load_block(dy_row, y_row, start + BLOCK, cols, N)  # (2)!
            dot += dy.to(acc_dtype) * y.to(acc_dtype)
        total = tl.sum(dot, axis=0)
        n_blocks = tl.cdiv(N, BLOCK)
        for i in range(0, n_blocks):  # (3)!
            start = (n_blocks - 1 - i) * BLOCK
            mask = start + cols < N
            dy = tl.load(dy_row + start + cols, mask=mask, other=0.0, eviction_policy="evict_first")
            y = tl.load(y_row + start + cols, mask=mask, other=0.0, eviction_policy="evict_first")
            dx = y.to(acc_dtype) * (dy.to(acc_dtype) - total)
            tl.store(dx_row + start + cols, dx.to(dx_ptr.dtype.element_ty), mask=mask)


@triton.jit
def _load_block(dy_row, y_row, start, cols, N):
    """One block of dy and y, asking L2 to keep them for the second pass; past the row's end,
    fully masked: no load."""
    mask = start + cols < N
    dy = tl.load(dy_row + start + cols, mask=mask, other=0.0, eviction_policy="evict_last")
    y = tl.load(y_row + start + cols, mask=mask, other=0.0, eviction_policy="evict_last")
    return dy, y


# --8<-- [end:backward]


# --8<-- [start:launch]
def check_input(x: torch.Tensor, *others: torch.Tensor) -> None:
    for t in (x, *others):
        if not isinstance(t, torch.Tensor):
            raise TypeError(f"expected tensors, got {type(t).__name__}")
        if t.dim() == 0:
            raise ValueError("softmax over the last dimension needs at least one dimension")
        if t.shape != x.shape or t.dtype != x.dtype or t.device != x.device:
            raise ValueError(f"tensors differ: {tuple(x.shape)} {x.dtype} {x.device} vs "
                             f"{tuple(t.shape)} {t.dtype} {t.device}")  # fmt: skip
    if x.dtype not in DTYPES:
        raise TypeError(f"{x.dtype} is not supported; supported: {DTYPES}")
    if x.shape[-1] > MAX_COLUMNS:
        raise ValueError(
            f"rows of {x.shape[-1]} elements: these kernels take at most {MAX_COLUMNS}"
        )


def rows(t: torch.Tensor) -> torch.Tensor:
    """A (rows, N) view whose last dimension is contiguous; a copy only when it must be."""
    if t.is_contiguous():
        return t.view(-1, t.shape[-1])
    t2 = t.reshape(-1, t.shape[-1])
    return t2 if t2.stride(-1) == 1 else t2.contiguous()


@functools.cache  # (1)!
def launch_plan(n: int, element_size: int, pass_: str, device: torch.device):
    """(BLOCK, num_warps, one block?, stages) for rows of n elements in the "forward" or
    "backward"; stages > 1: one program per SM, its next rows loaded while it works on this one."""
    block = triton.next_power_of_2(n)
    if block <= MAX_ONE_BLOCK[pass_][element_size]:  # (2)!
        if pass_ == "forward" and block <= 1024:
            return block, 2, True, 1
        if pass_ == "forward" and element_size == 2 and block == 32768 and n % 16 == 0:  # (3)!
            if shared_memory(device) >= 2 * block * element_size + 1024:
                return block, 16, True, 3
        return block, min(max(block // 1024, 4), 16), True, 1
    return (*LOOP_PLAN.get((pass_, element_size), LOOP_PLAN_DEFAULT), False, 1)


@functools.cache
def sm_count(device: torch.device) -> int:
    """Streaming multiprocessors on a GPU; on the CPU (the interpreter), 2 programs."""
    if device.type != "cuda":
        return 2
    return torch.cuda.get_device_properties(device).multi_processor_count


@functools.cache
def shared_memory(device: torch.device) -> int:
    """Bytes of shared memory one program may use on this GPU (opt-in); no limit on the CPU."""
    if device.type != "cuda":
        return 2**31
    return torch.cuda.get_device_properties(device).shared_memory_per_block_optin


def softmax_forward(x: torch.Tensor, out=None, raw: bool = False) -> torch.Tensor:
    check_input(x)
    y = torch.empty_like(x, memory_format=torch.contiguous_format) if out is None else out
    if y.numel() == 0:
        return y
    x2, y2 = rows(x), y.view(-1, x.shape[-1])
    (m, n), strides = x2.shape, (x2.stride(0), y2.stride(0))
    block, warps, one_block, stages = launch_plan(int(n), x.element_size(), "forward", x.device)
    if one_block:
        programs = m if stages == 1 else min(m, sm_count(x.device))
        (softmax_kernel if raw else wrap_triton(softmax_kernel))[(programs,)](
            x2, y2, m, n, *strides, BLOCK=block, STAGES=stages, num_warps=warps
        )
    else:
        (softmax_online_kernel if raw else wrap_triton(softmax_online_kernel))[(m,)](
            x2, y2, n, *strides, BLOCK=block, num_warps=warps
        )
    return y


def softmax_backward_launch(dy: torch.Tensor, y: torch.Tensor, raw: bool = False):
    check_input(dy, y)
    dx = torch.empty_like(y, memory_format=torch.contiguous_format)
    if dx.numel() == 0:
        return dx
    dy2, y2, dx2 = rows(dy), rows(y), dx.view(-1, y.shape[-1])
    n = int(y2.shape[1])  # a plain int even where torch.compile traces sizes symbolically
    block, warps, one_block, _ = launch_plan(n, y.element_size(), "backward", y.device)
    (softmax_bwd_kernel if raw else wrap_triton(softmax_bwd_kernel))[(y2.shape[0],)](
        dy2, y2, dx2, y2.shape[1], dy2.stride(0), y2.stride(0), dx2.stride(0),
        BLOCK=block, ONE_BLOCK=one_block, num_warps=warps,
    )  # fmt: skip
    return dx


# --8<-- [end:launch]


# --8<-- [start:op]
@triton_op("cookbook::softmax", mutates_args=())
def softmax(x: torch.Tensor) -> torch.Tensor:
    check_input(x)
    if x.device.type != "cuda":
        raise ValueError(f"the Triton kernels need CUDA tensors, got {x.device}")
    with torch.cuda.device(x.device):
        return softmax_forward(x)


@triton_op("cookbook::softmax_backward", mutates_args=())
def softmax_backward(dy: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    check_input(dy, y)
    with torch.cuda.device(y.device):
        return softmax_backward_launch(dy, y)


def compute_dtype(dtype: torch.dtype) -> torch.dtype:
    return torch.float64 if dtype == torch.float64 else torch.float32


@softmax.register_kernel("cpu")
def softmax_cpu(x: torch.Tensor) -> torch.Tensor:
    check_input(x)
    return torch.softmax(x.to(compute_dtype(x.dtype)), dim=-1).to(x.dtype)


@softmax_backward.register_kernel("cpu")
def softmax_backward_cpu(dy: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    check_input(dy, y)
    c = compute_dtype(y.dtype)
    dyc, yc = dy.to(c), y.to(c)
    return (yc * (dyc - (dyc * yc).sum(-1, keepdim=True))).to(y.dtype)


@softmax.register_fake
def _(x):
    check_input(x)
    return torch.empty(x.shape, dtype=x.dtype, device=x.device)


@softmax_backward.register_fake
def _(dy, y):
    check_input(dy, y)
    return torch.empty(y.shape, dtype=y.dtype, device=y.device)


def setup_context(ctx, inputs, output) -> None:
    ctx.save_for_backward(output)  # (1)!


def backward(ctx, dy):
    (y,) = ctx.saved_tensors
    return torch.ops.cookbook.softmax_backward(dy, y)


softmax.register_autograd(backward, setup_context=setup_context)
# --8<-- [end:op]


class SoftmaxFunction(torch.autograd.Function):
    """The same kernels without an operator: raw launches in an autograd.Function, the way
    Liger-Kernel ships its kernels: the route to take in eager code, timed beside the operator."""

    @staticmethod
    def forward(ctx, x):
        y = softmax_forward(x, raw=True)
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, dy):
        (y,) = ctx.saved_tensors
        return softmax_backward_launch(dy, y, raw=True)


# ----------------------------------------------------------------------------- checks
SENTINEL = 12345.0


def reference(x: torch.Tensor) -> torch.Tensor:
    return torch.softmax(x.double(), dim=-1).to(x.dtype)


def tolerance(dtype: torch.dtype) -> dict:
    """Computed in float32 and rounded once; float32 itself: the GPU's approximate exp."""
    return {
        torch.float16: dict(rtol=1e-3, atol=1e-5),
        torch.bfloat16: dict(rtol=8e-3, atol=1e-5),
        torch.float32: dict(rtol=1e-5, atol=1e-7),
        torch.float64: dict(rtol=1e-12, atol=1e-15),
    }[dtype]


def guarded(shape, dtype, device):
    n, pad = math.prod(shape), max(block for block, _ in LOOP_PLAN.values())
    buffer = torch.full((pad + n + pad,), SENTINEL, dtype=dtype, device=device)

    def untouched() -> None:
        if not bool((torch.cat([buffer[:pad], buffer[pad + n :]]) == SENTINEL).all()):
            raise AssertionError(f"the kernel wrote outside its output {tuple(shape)}")

    return buffer[pad : pad + n].view(shape), untouched


def check_kernels(device: str, raw: bool) -> None:
    torch.manual_seed(0)
    shapes = [(0, 8), (4, 0), (1, 1), (3, 7), (5, 1000), (2, 4096), (2, 3, 513)]
    dtypes = DTYPES if device == "cuda" else (torch.float16, torch.float32, torch.float64)
    for dtype in dtypes:
        size = torch.finfo(dtype).bits // 8
        longest = sorted({MAX_ONE_BLOCK[p][size] for p in MAX_ONE_BLOCK})
        extra = [(2, n + k) for n in longest for k in (0, 3)]  # one block, then the loop
        if launch_plan(longest[-1], size, "forward", torch.device(device))[3] > 1:
            rows_ = 2 * sm_count(torch.device(device)) + 1  # programs that take several rows
            extra += [(rows_, longest[-1]), (rows_, longest[-1] - 16)]  # full, then masked
        for shape in [*shapes, *extra]:
            x = (torch.randn(*shape[:-1], 2 * shape[-1]) * 5)[..., ::2].to(dtype).to(device)
            y, untouched = guarded(x.shape, dtype, device)
            softmax_forward(x, out=y, raw=raw)
            untouched()
            torch.testing.assert_close(y, reference(x), **tolerance(dtype))
            dy = torch.randn(x.shape).to(dtype).to(device)
            yr = reference(x)
            dx = softmax_backward_launch(dy, yr, raw=raw)
            want = torch.ops.cookbook.softmax_backward(dy.cpu().double(), yr.cpu().double())
            torch.testing.assert_close(dx, want.to(dtype).to(device), **tolerance(dtype))
        print(f"  {device} {str(dtype):14} forward and backward match PyTorch on {shapes + extra}")
    inf, nan = float("inf"), float("nan")
    special = torch.tensor([
        [0.0, 1000.0, -1000.0, 2.0], [-inf, 0.0, 1.0, 2.0], [-inf, -inf, -inf, -inf],
        [nan, 0.0, 1.0, 2.0], [inf, 0.0, 1.0, 2.0], [1e30, 1e30, -1e30, 0.0],
    ]).to(device)  # fmt: skip
    for n_cols in (4, MAX_ONE_BLOCK["forward"][4] + 4):  # one block, then the looped kernel
        x = torch.cat([special, torch.full((6, n_cols - 4), -inf, device=device)], dim=1)
        late = torch.full((1, n_cols), -inf, device=device)
        late[0, -3:] = torch.tensor([1.0, 2.0, 3.0])  # finite in the last block only
        x = torch.cat([x, late])
        torch.testing.assert_close(softmax_forward(x, raw=raw), reference(x), equal_nan=True)
    print(f"  {device}: large, -inf, NaN and +inf entries give what torch.softmax gives")


def expect_error(error: type[Exception], call) -> None:
    try:
        call()
    except error as exc:
        print(f"  rejected as expected: {type(exc).__name__}: {exc}")
    else:
        raise AssertionError(f"expected {error.__name__}, got a result")


def check_function(device: str) -> None:
    """The autograd.Function route (raw launches), forward and backward, against the float64
    reference, on an odd shape."""
    x = torch.randn(3, 5, 37, device=device, requires_grad=True)
    dy = torch.randn(3, 5, 37, device=device)
    y = SoftmaxFunction.apply(x)
    (dx,) = torch.autograd.grad(y, x, dy)
    want = torch.softmax(x.detach().double(), dim=-1)
    want_dx = want * (dy.double() - (dy.double() * want).sum(-1, keepdim=True))
    torch.testing.assert_close(y, want.float(), **tolerance(torch.float32))
    torch.testing.assert_close(dx, want_dx.float(), rtol=1e-5, atol=1e-6)
    print(f"autograd.Function on {device}: forward and backward match the reference")


def check_operator(device: str) -> None:
    torch.manual_seed(0)
    x = torch.randn(4, 9, dtype=torch.float64, device=device).requires_grad_()
    print(
        f"gradcheck float64 on {device}: {torch.autograd.gradcheck(torch.ops.cookbook.softmax, (x,))}"
    )
    tests = ["test_schema", "test_autograd_registration", "test_faketensor"]
    if device == "cuda":
        tests.append("test_aot_dispatch_dynamic")
    a = torch.randn(3, 10, device=device)[:, ::2]
    result = torch.library.opcheck(torch.ops.cookbook.softmax.default, (a,), test_utils=tests)
    print(f"opcheck softmax on {device}: {result}")
    expect_error(ValueError, lambda: torch.ops.cookbook.softmax(torch.tensor(1.0, device=device)))
    too_long = torch.zeros(1, 1, device=device).expand(1, MAX_COLUMNS + 1)  # no memory behind it
    expect_error(ValueError, lambda: torch.ops.cookbook.softmax(too_long))
    ints = torch.ones(3, dtype=torch.int64, device=device)
    expect_error(TypeError, lambda: torch.ops.cookbook.softmax(ints))
    if device == "cuda":  # the operator inside torch.compile, on rows the persistent plan takes
        x = torch.randn(2 * sm_count(torch.device(device)) + 1, 32768, device=device)
        x = x.to(torch.bfloat16)
        got = torch.compile(torch.ops.cookbook.softmax, dynamic=False)(x)
        torch.testing.assert_close(got, reference(x), **tolerance(x.dtype))
        print(f"  cuda: torch.compile of the operator matches PyTorch on {tuple(x.shape)} bfloat16")


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
SHAPES = [(16384, 1024), (16384, 4096), (4096, 32768), (2048, 65536)]  # (rows, columns)
BENCH_DTYPES = (torch.bfloat16, torch.float32)
HOST_SHAPE = (64, 1024)  # a small softmax: the GPU waits for the host


def load_liger():
    try:
        from liger_kernel.ops.softmax import LigerSoftmaxFunction
    except ImportError as exc:
        raise SystemExit(f"the benchmark compares with Liger-Kernel: {exc}; "
                         "pip install liger-kernel==0.8.5") from exc  # fmt: skip
    return LigerSoftmaxFunction.apply


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
    eager = lambda x: torch.softmax(x, dim=-1)
    out = []
    for dtype in dtypes:
        for n_rows, n_cols in shapes:
            torch._dynamo.reset()  # (1)!
            impls = {"triton": torch.ops.cookbook.softmax, "triton_fn": SoftmaxFunction.apply,
                     "triton_compile": torch.compile(lambda x: torch.ops.cookbook.softmax(x),
                                                     dynamic=False),
                     "eager": eager, "compile": torch.compile(eager, dynamic=False),
                     "liger": liger}  # fmt: skip
            gen = torch.Generator("cuda").manual_seed(n_rows + n_cols)
            x = torch.randn(n_rows, n_cols, generator=gen, device="cuda", dtype=dtype)
            dy = torch.randn(n_rows, n_cols, generator=gen, device="cuda", dtype=dtype)
            want = torch.softmax(x.double(), dim=-1)
            want_dx = want * (dy.double() - (dy.double() * want).sum(-1, keepdim=True))
            size = x.numel() * x.element_size()
            calls = {}
            for impl, fn in impls.items():
                xg = x.detach().requires_grad_()
                y = fn(xg)
                (dx,) = torch.autograd.grad(y, xg, dy, retain_graph=True)
                agree(y, want, f"{impl} forward"), agree(dx, want_dx, f"{impl} backward")  # (2)!
                calls[impl, "forward"] = (lambda fn=fn: fn(x), "bytes", 2 * size)
                backward = lambda y=y, xg=xg: torch.autograd.grad(y, xg, dy, retain_graph=True)
                calls[impl, "backward"] = (backward, "bytes", 3 * size)  # (3)!
            src = torch.empty(3 * size // 2, dtype=torch.uint8, device="cuda")
            dst = torch.empty_like(src)
            calls["copy", "forward"] = (lambda: dst[:size].copy_(src[:size]), "bytes", 2 * size)
            calls["copy", "backward"] = (lambda: dst.copy_(src), "bytes", 3 * size)  # (4)!
            out += measure(calls, (n_rows, n_cols), dtype)
    return out


# --8<-- [end:bench]


def host_costs(dtype=torch.float32) -> dict:
    """µs of host time per forward call, by route, on a small input that requires grad."""
    torch._dynamo.reset()
    liger = load_liger()
    x = torch.randn(*HOST_SHAPE, device="cuda", dtype=dtype).requires_grad_()
    op = lambda t: torch.ops.cookbook.softmax(t)
    eager = lambda t: torch.softmax(t, dim=-1)
    compiled_op = torch.compile(op, dynamic=False)
    graphed_op = torch.compile(op, dynamic=False, mode="reduce-overhead")
    x_inference = x.detach()  # CUDA graphs replay a forward: inputs that do not require grad
    compiled_eager = torch.compile(eager, dynamic=False)
    # --8<-- [start:routes]
    routes = {
        "raw_launch": lambda: softmax_forward(x, raw=True),  # (1)!
        "triton_op": lambda: torch.ops.cookbook.softmax(x),  # (2)!
        "triton_op_in_compile": lambda: compiled_op(x),  # (3)!
        "triton_op_cuda_graph": lambda: graphed_op(x_inference),  # (4)!
        "autograd_function": lambda: SoftmaxFunction.apply(x),  # (5)!
        "autograd_function_cuda_graph": captured(
            lambda: SoftmaxFunction.apply(x_inference)
        ).replay,  # (6)!
        "liger": lambda: liger(x),
        "eager": lambda: eager(x),
        "compile": lambda: compiled_eager(x),
    }
    # --8<-- [end:routes]
    return host_us(routes)


if __name__ == "__main__":
    import json

    devices = ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])
    # --8<-- [start:call]
    x = torch.tensor([[1.0, 2.0, 3.0], [1000.0, 1000.0, -1000.0]])
    print(f"softmax on CPU tensors: {torch.ops.cookbook.softmax(x).tolist()}")  # (1)!
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
        describe = lambda s: f"x: ({s[0]}, {s[1]})"
        figures = memory_bound_figures(rows_, describe)
        figures.update(call_figures(rows_, describe))
        figures.update(host_figures(host_costs(), f"x: {HOST_SHAPE}, requires grad", "float32"))
        print("figures: " + json.dumps(figures))
    print("softmax: all checks passed")
