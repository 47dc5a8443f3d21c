# /// script
# requires-python = ">=3.10"
# dependencies = ["torch", "triton", "numpy"]
#
# [tool.snippet]
# gpu = { min-cc = "8.0", timing = true }
# cpu = { interpreter = true }
# timeout = 300
# ///
"""Row-wise softmax, fused and numerically stable, forward and backward.

On a CUDA GPU:  python softmax.py
On a CPU:       TRITON_INTERPRET=1 python softmax.py
A row that fits one block is read once and written once; a longer row is read twice by a looped
(online) kernel that keeps a running maximum and sum. Masked for any number of columns. An
operator (triton_op) with a CPU kernel and autograd, checked on an input matrix; on a GPU, a
benchmark against PyTorch eager, torch.compile and the HBM limit, printed as rows.
"""

import math
import os
import statistics

import torch
import triton
import triton.language as tl
from torch.library import triton_op, wrap_triton

INTERPRETED = os.environ.get("TRITON_INTERPRET") == "1"
DTYPES = (torch.float16, torch.bfloat16, torch.float32, torch.float64)
MAX_ONE_BLOCK = 16384  # the longest row read in one block; longer rows take the looped kernel
LOOP_BLOCK = 4096


# --8<-- [start:one-block]
@triton.jit
def softmax_kernel(x_ptr, y_ptr, N, stride_x, stride_y, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    mask = cols < N
    x = tl.load(x_ptr + row * stride_x + cols, mask=mask, other=-float("inf"))  # (1)!
    if x.dtype != tl.float64:
        x = x.to(tl.float32)
    e = tl.exp(x - tl.max(x, axis=0))  # (2)!
    y = e / tl.sum(e, axis=0)
    tl.store(y_ptr + row * stride_y + cols, y.to(y_ptr.dtype.element_ty), mask=mask)


# --8<-- [end:one-block]


# --8<-- [start:online]
@triton.jit
def softmax_online_kernel(x_ptr, y_ptr, N, stride_x, stride_y, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    x_row, y_row = x_ptr + row * stride_x, y_ptr + row * stride_y
    cols = tl.arange(0, BLOCK)
    acc_dtype = tl.float64 if x_ptr.dtype.element_ty == tl.float64 else tl.float32
    m = tl.full((BLOCK,), -float("inf"), acc_dtype)  # (1)!
    s = tl.zeros((BLOCK,), acc_dtype)
    for start in range(0, N, BLOCK):
        x = tl.load(x_row + start + cols, mask=start + cols < N, other=-float("inf"))
        x = x.to(acc_dtype)
        m_new = tl.maximum(m, x, propagate_nan=tl.PropagateNan.ALL)  # (4)!
        rescale = tl.where(m_new == -float("inf"), 0.0, tl.exp(m - m_new))  # (2)!
        s = s * rescale + tl.where(m_new == -float("inf"), 0.0, tl.exp(x - m_new))
        m = m_new
    row_max = tl.max(m, axis=0)
    row_sum = tl.sum(s * tl.exp(m - row_max), axis=0)  # (3)!
    for start in range(0, N, BLOCK):
        mask = start + cols < N
        x = tl.load(x_row + start + cols, mask=mask, other=-float("inf")).to(acc_dtype)
        y = tl.exp(x - row_max) / row_sum
        tl.store(y_row + start + cols, y.to(y_ptr.dtype.element_ty), mask=mask)


# --8<-- [end:online]


# --8<-- [start:backward]
@triton.jit
def softmax_bwd_kernel(
    dy_ptr, y_ptr, dx_ptr, N, stride_dy, stride_y, stride_dx, BLOCK: tl.constexpr,
    ONE_BLOCK: tl.constexpr,
):  # fmt: skip
    row = tl.program_id(0).to(tl.int64)
    dy_row, y_row = dy_ptr + row * stride_dy, y_ptr + row * stride_y
    cols = tl.arange(0, BLOCK)
    acc_dtype = tl.float64 if y_ptr.dtype.element_ty == tl.float64 else tl.float32
    if ONE_BLOCK:  # (1)!
        mask = cols < N
        dy = tl.load(dy_row + cols, mask=mask, other=0.0).to(acc_dtype)
        y = tl.load(y_row + cols, mask=mask, other=0.0).to(acc_dtype)
        dx = y * (dy - tl.sum(dy * y, axis=0))
        tl.store(dx_ptr + row * stride_dx + cols, dx.to(dx_ptr.dtype.element_ty), mask=mask)
    else:
        dot = tl.zeros((BLOCK,), acc_dtype)
        for start in range(0, N, BLOCK):
            mask = start + cols < N
            dy = tl.load(dy_row + start + cols, mask=mask, other=0.0).to(acc_dtype)
            dot += dy * tl.load(y_row + start + cols, mask=mask, other=0.0).to(acc_dtype)
        total = tl.sum(dot, axis=0)
        for start in range(0, N, BLOCK):
            mask = start + cols < N
            dy = tl.load(dy_row + start + cols, mask=mask, other=0.0).to(acc_dtype)
            y = tl.load(y_row + start + cols, mask=mask, other=0.0).to(acc_dtype)
            dx = y * (dy - total)
            tl.store(dx_ptr + row * stride_dx + start + cols, dx.to(dx_ptr.dtype.element_ty),
                     mask=mask)  # fmt: skip


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


def rows(t: torch.Tensor) -> torch.Tensor:
    t2 = t.reshape(-1, t.shape[-1])
    return t2 if t2.stride(-1) == 1 else t2.contiguous()


def launch_plan(n: int) -> tuple[int, int, bool]:
    """(BLOCK, num_warps, one block?) for rows of n elements."""
    if n <= MAX_ONE_BLOCK:
        block = triton.next_power_of_2(n)
        return block, min(max(block // 256, 1), 16), True  # (1)!
    return LOOP_BLOCK, 8, False


def softmax_forward(x: torch.Tensor, out=None, raw: bool = False) -> torch.Tensor:
    check_input(x)
    y = torch.empty(x.shape, dtype=x.dtype, device=x.device) if out is None else out
    if y.numel() == 0:
        return y
    x2, y2 = rows(x), y.view(-1, x.shape[-1])
    block, warps, one_block = launch_plan(x2.shape[1])
    kernel = softmax_kernel if one_block else softmax_online_kernel
    (kernel if raw else wrap_triton(kernel))[(x2.shape[0],)](
        x2, y2, x2.shape[1], x2.stride(0), y2.stride(0), BLOCK=block, num_warps=warps
    )
    return y


def softmax_backward_launch(dy: torch.Tensor, y: torch.Tensor, raw: bool = False):
    check_input(dy, y)
    dx = torch.empty(y.shape, dtype=y.dtype, device=y.device)
    if dx.numel() == 0:
        return dx
    dy2, y2, dx2 = rows(dy), rows(y), dx.view(-1, y.shape[-1])
    block, warps, one_block = launch_plan(y2.shape[1])
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
    n, pad = math.prod(shape), LOOP_BLOCK
    buffer = torch.full((pad + n + pad,), SENTINEL, dtype=dtype, device=device)

    def untouched() -> None:
        if not bool((torch.cat([buffer[:pad], buffer[pad + n :]]) == SENTINEL).all()):
            raise AssertionError(f"the kernel wrote outside its output {tuple(shape)}")

    return buffer[pad : pad + n].view(shape), untouched


def check_kernels(device: str, raw: bool) -> None:
    torch.manual_seed(0)
    shapes = [(0, 8), (4, 0), (1, 1), (3, 7), (5, 1000), (2, 4096), (2, 3, 513)]
    shapes.append((2, MAX_ONE_BLOCK + 3))
    dtypes = DTYPES if device == "cuda" else (torch.float16, torch.float32, torch.float64)
    for dtype in dtypes:
        for shape in shapes:
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
        print(f"  {device} {str(dtype):14} forward and backward match PyTorch on {shapes}")
    inf, nan = float("inf"), float("nan")
    special = torch.tensor([
        [0.0, 1000.0, -1000.0, 2.0], [-inf, 0.0, 1.0, 2.0], [-inf, -inf, -inf, -inf],
        [nan, 0.0, 1.0, 2.0], [inf, 0.0, 1.0, 2.0], [1e30, 1e30, -1e30, 0.0],
    ]).to(device)  # fmt: skip
    for n_cols in (4, MAX_ONE_BLOCK + 4):  # one block, and the looped kernel
        x = torch.cat([special, torch.full((6, n_cols - 4), -inf, device=device)], dim=1)
        torch.testing.assert_close(softmax_forward(x, raw=raw), reference(x), equal_nan=True)
    print(f"  {device}: large, -inf, NaN and +inf entries give what torch.softmax gives")


def expect_error(error: type[Exception], call) -> None:
    try:
        call()
    except error as exc:
        print(f"  rejected as expected: {type(exc).__name__}: {exc}")
    else:
        raise AssertionError(f"expected {error.__name__}, got a result")


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
    ints = torch.ones(3, dtype=torch.int64, device=device)
    expect_error(TypeError, lambda: torch.ops.cookbook.softmax(ints))


# ----------------------------------------------------------------------------- benchmark
HBM_TBPS = 4.8  # NVIDIA H200 datasheet
SHAPES = [(16384, 1024), (16384, 4096), (4096, 32768)]  # (rows, columns): attention rows, vocab


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
    eager = lambda x: torch.softmax(x, dim=-1)
    compiled = torch.compile(eager, dynamic=False)
    out = []
    for n_rows, n_cols in shapes:
        gen = torch.Generator().manual_seed(n_rows + n_cols)
        x = torch.randn(n_rows, n_cols, generator=gen).to(device, dtype)
        dy = torch.randn(n_rows, n_cols, generator=gen).to(device, dtype)
        size = x.element_size() * x.numel()
        impls = {"triton": torch.ops.cookbook.softmax, "eager": eager, "compile": compiled}
        for impl, fn in impls.items():
            xg = x.detach().requires_grad_()
            y = fn(xg)
            if impl == "triton":  # the kernel under test; the others are PyTorch's own
                torch.testing.assert_close(y, reference(x), **tolerance(dtype))
            out.append(
                timed_row(lambda: fn(x), impl, "forward", (n_rows, n_cols), dtype, 2 * size, bench)
            )  # (1)!
            backward = lambda: torch.autograd.grad(y, xg, dy, retain_graph=True)
            out.append(timed_row(backward, impl, "backward", (n_rows, n_cols), dtype,
                                 3 * size, bench))  # fmt: skip
        src = torch.empty(size, dtype=torch.uint8, device=device)
        dst = torch.empty_like(src)
        out.append(timed_row(lambda: dst.copy_(src), "copy", "forward", (n_rows, n_cols), dtype,
                             2 * size, bench))  # fmt: skip
    return out


# --8<-- [end:bench]


def do_bench_ms(fn) -> list[float]:
    return triton.testing.do_bench(fn, warmup=25, rep=100, return_mode="all")


def ratio_figures(rows: list[dict], dtype: str) -> dict:
    largest = max((r["shape"] for r in rows), key=math.prod)
    at = {(r["impl"], r["pass"]): r for r in rows if r["shape"] == largest}
    shape = f"x: ({largest[0]}, {largest[1]})"
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
    x = torch.tensor([[1.0, 2.0, 3.0], [1000.0, 1000.0, -1000.0]])
    print(f"softmax on CPU tensors: {torch.ops.cookbook.softmax(x).tolist()}")  # (1)!
    # --8<-- [end:call]
    if INTERPRETED:
        check_kernels("cpu", raw=True)
    for device in devices:
        check_operator(device)
    if torch.cuda.is_available():
        check_kernels("cuda", raw=False)
        rows_ = benchmark("cuda", SHAPES, torch.float32, do_bench_ms)
        for r in rows_:
            print(f"benchmark: {json.dumps(r)}")
        print("figures: " + json.dumps(ratio_figures(rows_, "float32")))
    print("softmax: all checks passed")
