# /// script
# requires-python = ">=3.10"
# dependencies = ["torch", "triton", "numpy", "liger-kernel"]
#
# [tool.snippet]
# gpu = { min-cc = "8.0", timing = true }
# cpu = { interpreter = true }
# timeout = 300
# ///
"""Cross-entropy over a large vocabulary, fused: loss = logsumexp(x) - x[target], forward and
backward, without materializing a softmax.

On a CUDA GPU:  python cross_entropy.py
On a CPU:       TRITON_INTERPRET=1 python cross_entropy.py
One program per row walks the vocabulary in blocks with an online logsumexp and saves it (4
bytes a row); the backward reads the logits once more, recomputes softmax from the saved
logsumexp and writes the logits' gradient. ignore_index and label smoothing as in
F.cross_entropy. An operator (triton_op) with a CPU kernel and autograd, checked on an input
matrix; on a GPU, a benchmark against PyTorch eager (F.cross_entropy), torch.compile,
Liger-Kernel and a device copy, in kernel time and in call time, with peak memory, printed as
rows.
"""

import math
import os
import statistics
import time
import warnings

import torch
import torch.nn.functional as F
import triton
import triton.language as tl
from torch.library import triton_op, wrap_triton

INTERPRETED = os.environ.get("TRITON_INTERPRET") == "1"
if INTERPRETED:  # NumPy warns at log(0): a row of -inf, or an ignored row, has lse = -inf
    warnings.filterwarnings("ignore", "divide by zero encountered in log", RuntimeWarning)
DTYPES = (torch.float16, torch.bfloat16, torch.float32, torch.float64)
ONE_BLOCK_MAX = 32768  # the longest row the one-pass kernel holds in registers
REDUCTIONS = ("mean", "sum", "none")


# --8<-- [start:kernels]
@triton.jit
def ce_fwd_kernel(
    x_ptr, target_ptr, loss_ptr, lse_ptr, counts_ptr, V, stride_x, ignore_index, smoothing,
    BLOCK: tl.constexpr, SMOOTH: tl.constexpr,
):  # fmt: skip
    row = tl.program_id(0).to(tl.int64)
    x_row = x_ptr + row * stride_x  # (1)!
    target = tl.load(target_ptr + row)
    valid = target != ignore_index
    acc = tl.float64 if x_ptr.dtype.element_ty == tl.float64 else tl.float32
    m = tl.full((), float("-inf"), acc)  # running maximum
    s = tl.full((), 0.0, acc)  # running sum of exp(x - m)
    total = tl.full((), 0.0, acc)  # sum of x, for label smoothing
    n_read = tl.where(valid, V, 0)  # (2)!
    cols = tl.arange(0, BLOCK)
    for start in range(0, n_read, BLOCK):
        offs = start + cols
        x = tl.load(x_row + offs, mask=offs < V, other=float("-inf")).to(acc)
        m_new = tl.maximum(m, tl.max(x, axis=0))
        m_safe = tl.where(m_new == float("-inf"), 0.0, m_new)  # (3)!
        s = s * tl.exp(m - m_safe) + tl.sum(tl.exp(x - m_safe), axis=0)
        m = m_new
        if SMOOTH:
            total += tl.sum(tl.where(offs < V, x, 0.0), axis=0)
    lse = m + tl.log(s)
    in_range = (target >= 0) & (target < V)
    x_t = tl.load(x_row + target, mask=valid & in_range, other=0.0).to(acc)  # (4)!
    loss = lse - x_t
    if SMOOTH:
        loss = (1.0 - smoothing) * loss + smoothing * (lse - total / V)  # (5)!
    loss = tl.where(in_range, loss, float("nan"))
    tl.store(loss_ptr + row, tl.where(valid, loss, 0.0))
    tl.store(lse_ptr + row, lse)  # (6)!
    tl.atomic_add(counts_ptr, valid.to(tl.int32), sem="relaxed")  # (7)!
    tl.atomic_add(counts_ptr + 1, (valid & ~in_range).to(tl.int32), sem="relaxed")


@triton.jit
def ce_bwd_kernel(
    dloss_ptr, x_ptr, target_ptr, lse_ptr, dx_ptr, V, stride_dloss, stride_x, stride_dx,
    ignore_index, smoothing, BLOCK: tl.constexpr,
):  # fmt: skip
    row = tl.program_id(0).to(tl.int64)
    x_row, dx_row = x_ptr + row * stride_x, dx_ptr + row * stride_dx
    target = tl.load(target_ptr + row)
    valid = target != ignore_index
    acc = tl.float64 if x_ptr.dtype.element_ty == tl.float64 else tl.float32
    smoothing = tl.full((), 0.0, acc) + smoothing  # in float64 for float64 logits
    g = tl.load(dloss_ptr + row * stride_dloss).to(acc)  # (8)!
    g = tl.where((target >= 0) & (target < V), g, float("nan"))
    lse = tl.load(lse_ptr + row).to(acc)
    n_read = tl.where(valid, V, 0)
    cols = tl.arange(0, BLOCK)
    for start in range(0, V, BLOCK):
        offs = start + cols
        x = tl.load(x_row + offs, mask=offs < n_read, other=0.0).to(acc)
        p = tl.exp(x - lse)  # (9)!
        dx = p - smoothing / V - tl.where(offs == target, 1.0 - smoothing, 0.0)
        dx = tl.where(valid, g * dx, 0.0)  # (10)!
        tl.store(dx_row + offs, dx.to(dx_ptr.dtype.element_ty), mask=offs < V)


@triton.jit
def ce_fwd_grad_kernel(
    x_ptr, target_ptr, loss_ptr, dx_ptr, scale_ptr, bad_ptr, n_rows, V, stride_x, stride_dx,
    ignore_index, smoothing, BLOCK: tl.constexpr, SMOOTH: tl.constexpr, ONE_BLOCK: tl.constexpr,
):  # fmt: skip
    acc = tl.float64 if x_ptr.dtype.element_ty == tl.float64 else tl.float32
    smoothing = tl.full((), 0.0, acc) + smoothing
    scale = tl.load(scale_ptr).to(acc)  # (11)!
    cols = tl.arange(0, BLOCK)
    for row in range(tl.program_id(0).to(tl.int64), n_rows, tl.num_programs(0)):  # (12)!
        x_row, dx_row = x_ptr + row * stride_x, dx_ptr + row * stride_dx
        target = tl.load(target_ptr + row)
        valid = target != ignore_index
        in_range = (target >= 0) & (target < V)
        n_read = tl.where(valid, V, 0)
        total = tl.full((), 0.0, acc)
        if ONE_BLOCK:  # (13)!
            x = tl.load(x_row + cols, mask=cols < n_read, other=float("-inf")).to(acc)
            m = tl.max(x, axis=0)
            m_safe = tl.where(m == float("-inf"), 0.0, m)
            lse = m + tl.log(tl.sum(tl.exp(x - m_safe), axis=0))
            if SMOOTH:
                total = tl.sum(tl.where(cols < n_read, x, 0.0), axis=0)
        else:
            m = tl.full((), float("-inf"), acc)
            s = tl.full((), 0.0, acc)
            for start in range(0, n_read, BLOCK):
                offs = start + cols
                x = tl.load(
                    x_row + offs, mask=offs < V, other=float("-inf"), eviction_policy="evict_last"
                ).to(acc)  # (14)!
                m_new = tl.maximum(m, tl.max(x, axis=0))
                m_safe = tl.where(m_new == float("-inf"), 0.0, m_new)
                s = s * tl.exp(m - m_safe) + tl.sum(tl.exp(x - m_safe), axis=0)
                m = m_new
                if SMOOTH:
                    total += tl.sum(tl.where(offs < V, x, 0.0), axis=0)
            lse = m + tl.log(s)
        x_t = tl.load(x_row + target, mask=valid & in_range, other=0.0).to(acc)
        loss = lse - x_t
        if SMOOTH:
            loss = (1.0 - smoothing) * loss + smoothing * (lse - total / V)
        tl.store(loss_ptr + row, tl.where(valid, tl.where(in_range, loss, float("nan")), 0.0))
        tl.atomic_add(bad_ptr, 1, mask=valid & ~in_range, sem="relaxed")
        g = tl.where(in_range, scale, float("nan"))
        lse = tl.where(valid, lse, 0.0)  # an ignored row's is -inf: its zeros need no NaN
        for start in range(0, V, BLOCK):  # (15)!
            offs = start + cols
            if not ONE_BLOCK:
                x = tl.load(
                    x_row + offs, mask=offs < n_read, other=0.0, eviction_policy="evict_first"
                ).to(acc)
            dx = tl.exp(x - lse) - smoothing / V - tl.where(offs == target, 1.0 - smoothing, 0.0)
            dx = tl.where(valid, g * dx, 0.0)
            if ONE_BLOCK:
                tl.store(dx_row + offs, dx.to(dx_ptr.dtype.element_ty), mask=offs < V)
            else:
                tl.store(
                    dx_row + offs,
                    dx.to(dx_ptr.dtype.element_ty),
                    mask=offs < V,
                    eviction_policy="evict_first",
                )


@triton.jit
def scale_grad_kernel(dx_ptr, g_ptr, n, BLOCK: tl.constexpr):
    g = tl.load(g_ptr)
    if g != 1.0:  # (16)!
        step = tl.num_programs(0).to(tl.int64) * BLOCK
        for start in range(tl.program_id(0).to(tl.int64) * BLOCK, n, step):
            offs = start + tl.arange(0, BLOCK)
            dx = tl.load(dx_ptr + offs, mask=offs < n, other=0.0)
            tl.store(dx_ptr + offs, (dx * g).to(dx_ptr.dtype.element_ty), mask=offs < n)


# --8<-- [end:kernels]


# --8<-- [start:launch]
def check_inputs(logits: torch.Tensor, target: torch.Tensor) -> None:
    for t in (logits, target):
        if not isinstance(t, torch.Tensor):
            raise TypeError(f"expected tensors, got {type(t).__name__}")
    if logits.dtype not in DTYPES:
        raise TypeError(f"logits of {logits.dtype} are not supported; supported: {DTYPES}")
    if target.dtype != torch.int64:
        raise TypeError(f"target must be torch.int64 class indices, got {target.dtype}")
    if logits.dim() != 2 or target.shape != logits.shape[:1]:
        raise ValueError(f"logits must be (N, V) and target (N,): got {tuple(logits.shape)} "
                         f"and {tuple(target.shape)}; flatten (B, T, V) to (B*T, V) first")  # fmt: skip
    if logits.shape[1] == 0:
        raise ValueError("logits need at least one class")
    if target.device != logits.device:
        raise ValueError(f"target on {target.device}, logits on {logits.device}")


def check_lse(lse: torch.Tensor, logits: torch.Tensor) -> None:
    want = acc_dtype(logits.dtype)
    if lse.shape != logits.shape[:1] or lse.dtype != want or lse.device != logits.device:
        raise ValueError(f"lse must be {want} of shape {tuple(logits.shape[:1])} on "
                         f"{logits.device}, got {lse.dtype} {tuple(lse.shape)} on {lse.device}")  # fmt: skip


def acc_dtype(dtype: torch.dtype) -> torch.dtype:
    return torch.float64 if dtype == torch.float64 else torch.float32


def rows_of(x: torch.Tensor) -> torch.Tensor:
    return x if x.stride(1) == 1 else x.contiguous()  # (1)!


def fwd_plan(V: int, element_size: int) -> tuple[int, int]:
    """(block, warps) for the forward: 8192 logits a step, 4 warps for 2-byte dtypes."""
    return min(triton.next_power_of_2(V), 8192), 4 if element_size <= 2 else 8  # (2)!


def bwd_plan(V: int, element_size: int) -> tuple[int, int]:
    return (min(triton.next_power_of_2(V), 4096), 16) if element_size <= 2 else (
        min(triton.next_power_of_2(V), 8192), 32)  # fmt: skip


def ce_forward(logits, target, ignore_index: int, smoothing: float, raw=False, block=None):
    check_inputs(logits, target)
    n, V = logits.shape
    loss = torch.empty(n, dtype=acc_dtype(logits.dtype), device=logits.device)
    lse = torch.empty(n, dtype=acc_dtype(logits.dtype), device=logits.device)
    counts = torch.zeros(2, dtype=torch.int32, device=logits.device)  # rows counted, bad targets
    if n == 0:
        return loss, lse, counts
    x = rows_of(logits)
    plan_block, warps = fwd_plan(V, x.element_size())
    (ce_fwd_kernel if raw else wrap_triton(ce_fwd_kernel))[(n,)](
        x, target.contiguous(), loss, lse, counts, V, x.stride(0), ignore_index, smoothing,
        BLOCK=block or plan_block, SMOOTH=smoothing > 0, num_warps=warps,
    )  # fmt: skip
    return loss, lse, counts


def ce_backward(dloss, logits, target, lse, ignore_index: int, smoothing: float, out=None,
                raw=False, block=None):  # fmt: skip
    check_inputs(logits, target)
    check_lse(lse, logits)
    n, V = logits.shape
    dx = (
        torch.empty((n, V), dtype=logits.dtype, device=logits.device) if out is None else out
    )  # (3)!
    if n == 0:
        return dx
    x = rows_of(logits)
    plan_block, warps = bwd_plan(V, x.element_size())
    (ce_bwd_kernel if raw else wrap_triton(ce_bwd_kernel))[(n,)](
        dloss, x, target.contiguous(), lse, dx, V, dloss.stride(0), x.stride(0), dx.stride(0),
        ignore_index, smoothing, BLOCK=block or plan_block, num_warps=warps,
    )  # fmt: skip
    return dx


def one_pass_wins(V: int, element_size: int) -> bool:
    """Where the gradient-in-forward kernel beat the two passes: 4-byte logits whose row fits
    one block, read once and held in registers; 2-byte logits of up to as many classes, whose
    row is read twice, with eviction hints that ask L2 to keep it for the second read."""
    return element_size in (2, 4) and V <= ONE_BLOCK_MAX  # (4)!


def fwd_grad_plan(V: int, element_size: int) -> tuple[int, int, int]:
    """(block, warps, programs per SM; None: one a row) for the forward that also writes the
    gradient."""
    if V <= ONE_BLOCK_MAX and element_size >= 4:  # the whole row in registers: read once
        block = triton.next_power_of_2(V)
        warps = min(32, max(4, block // 1024))
        return block, warps, 64 // warps
    if V <= ONE_BLOCK_MAX:  # (5)!
        return min(8192, triton.next_power_of_2(V)), 8, None
    return 16384, 32, None


def ce_forward_grad(logits, target, ignore_index: int, smoothing: float, reduction: str,
                    out=None, raw=False, plan=None, programs=None):  # fmt: skip
    """The loss reduced by `reduction` ("mean" or "sum") and its gradient for an upstream
    gradient of 1, in one pass over the logits. `programs` overrides the plan's grid (checks)."""
    check_inputs(logits, target)
    n, V = logits.shape
    c = acc_dtype(logits.dtype)
    rows_loss = torch.empty(n, dtype=c, device=logits.device)
    dx = torch.empty((n, V), dtype=logits.dtype, device=logits.device) if out is None else out
    bad = torch.zeros(1, dtype=torch.int32, device=logits.device)
    count = (target != ignore_index).sum()
    scale = count.to(c).reciprocal() if reduction == "mean" else torch.ones((), dtype=c,
                                                                            device=logits.device)  # fmt: skip
    if n:
        x = rows_of(logits)
        block, warps, per_sm = plan or fwd_grad_plan(V, x.element_size())
        sms = torch.cuda.get_device_properties(x.device).multi_processor_count if x.is_cuda else 2
        if programs is None:
            programs = n if per_sm is None else min(n, sms * per_sm)
        (ce_fwd_grad_kernel if raw else wrap_triton(ce_fwd_grad_kernel))[(programs,)](
            x, target.contiguous(), rows_loss, dx, scale, bad, n, V, x.stride(0), dx.stride(0),
            ignore_index, smoothing, BLOCK=block, SMOOTH=smoothing > 0, ONE_BLOCK=block >= V,
            num_warps=warps,
        )  # fmt: skip
    loss = rows_loss.sum() * scale
    return loss, dx, torch.cat([count.to(torch.int32).reshape(1), bad])


def scale_grad(dx: torch.Tensor, g: torch.Tensor, raw=False) -> None:
    """dx *= g in place, g a 0-d tensor on dx's device; nothing is read or written if g is 1."""
    if not dx.is_contiguous() or g.dim() != 0 or g.device != dx.device:
        raise ValueError("scale_grad needs a contiguous dx and a 0-d g on its device")
    if dx.numel() == 0:
        return
    block = 4096
    sms = torch.cuda.get_device_properties(dx.device).multi_processor_count if dx.is_cuda else 2
    programs = min(triton.cdiv(dx.numel(), block), 4 * sms)
    (scale_grad_kernel if raw else wrap_triton(scale_grad_kernel))[(programs,)](
        dx, g, dx.numel(), BLOCK=block, num_warps=8
    )


# --8<-- [end:launch]


# --8<-- [start:op]
@triton_op("cookbook::cross_entropy_rows", mutates_args=())
def ce_rows(
    logits: torch.Tensor, target: torch.Tensor, ignore_index: int, smoothing: float
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    check_inputs(logits, target)
    if logits.device.type != "cuda":
        raise ValueError(f"the Triton kernels need CUDA tensors, got {logits.device}")
    with torch.cuda.device(logits.device):
        return ce_forward(logits, target, ignore_index, smoothing)  # (1)!


@triton_op("cookbook::cross_entropy_rows_backward", mutates_args=())
def ce_rows_backward(
    dloss: torch.Tensor, logits: torch.Tensor, target: torch.Tensor, lse: torch.Tensor,
    ignore_index: int, smoothing: float,
) -> torch.Tensor:  # fmt: skip
    check_inputs(logits, target)
    check_lse(lse, logits)
    with torch.cuda.device(logits.device):
        return ce_backward(dloss, logits, target, lse, ignore_index, smoothing)


@ce_rows.register_kernel("cpu")
def ce_rows_cpu(logits, target, ignore_index: int, smoothing: float):
    check_inputs(logits, target)
    x, V = logits.to(acc_dtype(logits.dtype)), logits.shape[1]
    valid, in_range = target != ignore_index, (target >= 0) & (target < V)
    lse = torch.logsumexp(x, dim=1)
    x_t = x.gather(1, torch.where(valid & in_range, target, 0)[:, None])[:, 0]
    loss = lse - x_t
    if smoothing > 0:
        loss = (1.0 - smoothing) * loss + smoothing * (lse - x.sum(1) / V)
    loss = torch.where(in_range, loss, float("nan"))
    counts = torch.stack([valid.sum(), (valid & ~in_range).sum()]).to(torch.int32)
    return torch.where(valid, loss, 0.0), torch.where(valid, lse, float("-inf")), counts


@ce_rows_backward.register_kernel("cpu")
def ce_rows_backward_cpu(dloss, logits, target, lse, ignore_index: int, smoothing: float):
    check_inputs(logits, target)
    check_lse(lse, logits)
    x, V = logits.to(lse.dtype), logits.shape[1]
    valid, in_range = target != ignore_index, (target >= 0) & (target < V)
    hot = torch.zeros_like(x).scatter_(1, torch.where(in_range, target, 0)[:, None], 1.0)
    dx = torch.exp(x - lse[:, None]) - smoothing / V - (1.0 - smoothing) * hot
    g = torch.where(in_range, dloss.to(x.dtype), float("nan"))
    return torch.where(valid[:, None], g[:, None] * dx, 0.0).to(logits.dtype)


@ce_rows.register_fake
def _(logits, target, ignore_index, smoothing):
    check_inputs(logits, target)
    n, c = logits.shape[0], acc_dtype(logits.dtype)
    return (
        logits.new_empty(n, dtype=c),
        logits.new_empty(n, dtype=c),
        logits.new_empty(2, dtype=torch.int32),
    )


@ce_rows_backward.register_fake
def _(dloss, logits, target, lse, ignore_index, smoothing):
    check_inputs(logits, target)
    check_lse(lse, logits)
    return torch.empty_like(logits, memory_format=torch.contiguous_format)


def setup_context(ctx, inputs, output) -> None:
    logits, target, ctx.ignore_index, ctx.smoothing = inputs
    _, lse, counts = output
    ctx.mark_non_differentiable(lse, counts)
    ctx.save_for_backward(logits, target, lse)  # (2)!


def backward(ctx, dloss, _, __):
    logits, target, lse = ctx.saved_tensors
    dx = torch.ops.cookbook.cross_entropy_rows_backward(
        dloss, logits, target, lse, ctx.ignore_index, ctx.smoothing
    )
    return dx, None, None, None


ce_rows.register_autograd(backward, setup_context=setup_context)


@triton_op("cookbook::cross_entropy_and_grad", mutates_args=())
def ce_and_grad(
    logits: torch.Tensor, target: torch.Tensor, ignore_index: int, smoothing: float, reduction: str
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    check_inputs(logits, target)
    if logits.device.type != "cuda":
        raise ValueError(f"the Triton kernels need CUDA tensors, got {logits.device}")
    with torch.cuda.device(logits.device):
        return ce_forward_grad(logits, target, ignore_index, smoothing, reduction)


@triton_op("cookbook::scale_grad_", mutates_args=("dx",))
def scale_grad_op(dx: torch.Tensor, g: torch.Tensor) -> None:
    with torch.cuda.device(dx.device):
        scale_grad(dx, g)


@ce_and_grad.register_kernel("cpu")
def ce_and_grad_cpu(logits, target, ignore_index: int, smoothing: float, reduction: str):
    rows_loss, lse, counts = ce_rows_cpu(logits, target, ignore_index, smoothing)
    c = rows_loss.dtype
    scale = counts[0].to(c).reciprocal() if reduction == "mean" else torch.ones((), dtype=c)
    dx = ce_rows_backward_cpu(scale.expand(logits.shape[0]), logits, target, lse, ignore_index,
                              smoothing)  # fmt: skip
    return rows_loss.sum() * scale, dx.contiguous(), counts


@scale_grad_op.register_kernel("cpu")
def scale_grad_cpu(dx, g):
    if bool(g != 1):
        dx.copy_(dx.to(g.dtype) * g)


@ce_and_grad.register_fake
def _(logits, target, ignore_index, smoothing, reduction):
    check_inputs(logits, target)
    return (
        logits.new_empty((), dtype=acc_dtype(logits.dtype)),
        torch.empty_like(logits, memory_format=torch.contiguous_format),
        logits.new_empty(2, dtype=torch.int32),
    )


@scale_grad_op.register_fake
def _(dx, g):
    return None


def setup_context_grad(ctx, inputs, output) -> None:
    _, dx, counts = output
    ctx.mark_non_differentiable(dx, counts)
    ctx.set_materialize_grads(False)  # (3)!
    ctx.save_for_backward(dx)


def backward_grad(ctx, dloss, _, __):
    if torch.is_grad_enabled():  # create_graph=True: this gradient has no graph of its own
        raise RuntimeError("no double backward through the gradient the forward wrote; "
                           "pass grad_in_forward=False")  # fmt: skip
    (dx,) = ctx.saved_tensors
    torch.ops.cookbook.scale_grad_(dx, dloss)  # (4)!
    return dx, None, None, None, None


ce_and_grad.register_autograd(backward_grad, setup_context=setup_context_grad)


def check_counts(counts: torch.Tensor, check_targets: bool, V: int, ignore_index: int) -> None:
    if check_targets and not torch.compiler.is_compiling():  # (5)!
        bad = int(counts[1])
        if bad:
            raise IndexError(f"{bad} target(s) out of bounds for {V} classes "
                             f"(and not ignore_index {ignore_index})")  # fmt: skip


def cross_entropy(
    logits: torch.Tensor, target: torch.Tensor, ignore_index: int = -100,
    label_smoothing: float = 0.0, reduction: str = "mean", check_targets: bool = True,
    grad_in_forward: bool = False,
) -> torch.Tensor:  # fmt: skip
    """What a model calls: F.cross_entropy's result for (N, V) logits and (N,) class indices."""
    check_inputs(logits, target)
    if reduction not in REDUCTIONS:
        raise ValueError(f"reduction must be one of {REDUCTIONS}, got {reduction!r}")
    if not 0.0 <= label_smoothing <= 1.0:
        raise ValueError(f"label_smoothing must be in [0, 1], got {label_smoothing}")
    fused = grad_in_forward and reduction != "none" and logits.requires_grad  # (6)!
    fused = fused and one_pass_wins(logits.shape[1], logits.element_size())
    if fused and torch.is_grad_enabled() and not torch.compiler.is_compiling():
        loss, _, counts = torch.ops.cookbook.cross_entropy_and_grad(
            logits, target, ignore_index, label_smoothing, reduction
        )
        check_counts(counts, check_targets, logits.shape[1], ignore_index)
        return loss.to(logits.dtype)
    loss, _, counts = torch.ops.cookbook.cross_entropy_rows(
        logits, target, ignore_index, label_smoothing
    )
    check_counts(counts, check_targets, logits.shape[1], ignore_index)
    if reduction == "sum":
        loss = loss.sum()
    elif reduction == "mean":
        loss = loss.sum() / counts[0]  # (7)!
    return loss.to(logits.dtype)


# --8<-- [end:op]


class CrossEntropyFunction(torch.autograd.Function):
    """The same kernels without an operator: raw launches in an autograd.Function, the way
    Liger-Kernel ships its kernels, with the mean over the rows not ignored. It never waits for
    the GPU: a target out of range makes the loss NaN (the kernels write NaN for its row)
    instead of raising."""

    @staticmethod
    def forward(ctx, logits, target, ignore_index, smoothing):
        loss, lse, counts = ce_forward(logits, target, ignore_index, smoothing, raw=True)
        ctx.save_for_backward(logits, target, lse, counts)
        ctx.ignore_index, ctx.smoothing = ignore_index, smoothing
        return (loss.sum() / counts[0]).to(logits.dtype)

    @staticmethod
    def backward(ctx, dloss):
        logits, target, lse, counts = ctx.saved_tensors
        per_row = (dloss.to(lse.dtype) / counts[0]).expand(logits.shape[0])  # stride 0
        dx = ce_backward(per_row, logits, target, lse, ctx.ignore_index, ctx.smoothing, raw=True)
        return dx, None, None, None


# ----------------------------------------------------------------------------- checks
SENTINEL = 12345.0
IGNORE = -100


def reference(logits, target, reduction="mean", ignore_index=IGNORE, smoothing=0.0, dloss=None):
    """F.cross_entropy in float64 on the CPU, and the gradient of its result (weighted by
    dloss, else of its sum)."""
    x = logits.detach().cpu().double().requires_grad_()
    out = F.cross_entropy(x, target.cpu(), ignore_index=ignore_index, reduction=reduction,
                          label_smoothing=smoothing)  # fmt: skip
    if x.shape[0]:
        out.backward(dloss.cpu().double() if dloss is not None else torch.ones_like(out))
    grad = x.grad if x.grad is not None else torch.zeros_like(x)
    return out.detach(), grad


def tolerance(dtype: torch.dtype, smoothing: float = 0.0) -> dict:
    """Computed in float32 (float64 for float64) and rounded once to the logits' dtype. A loss is
    about log(V), a difference of two terms of that size: float32's error there is about
    |lse| * 2**-23 per term, hence the absolute 2e-5. A Python float reaches a Triton kernel as
    float32: a smoothing such as 0.1 is rounded by up to 3e-8 of itself."""
    if dtype == torch.float64 and smoothing != float(torch.tensor(smoothing).float()):
        return dict(rtol=1e-7, atol=1e-9)
    return {
        torch.float16: dict(rtol=2e-3, atol=2e-5),
        torch.bfloat16: dict(rtol=1.6e-2, atol=2e-5),
        torch.float32: dict(rtol=2e-5, atol=2e-5),
        torch.float64: dict(rtol=1e-10, atol=1e-12),
    }[dtype]


def grad_close(got: torch.Tensor, want: torch.Tensor, what: str, smoothing: float = 0.0) -> None:
    """A gradient element is p - [j == target] scaled: compared with the same relative tolerance
    as the loss, and an absolute one of a few units of rounding at the largest element."""
    tol = tolerance(got.dtype, smoothing)
    scale = want.abs().max().item() if want.numel() else 0.0
    atol = max(tol["atol"], 4 * torch.finfo(got.dtype).eps * scale)
    torch.testing.assert_close(got.cpu().double(), want.double(), rtol=tol["rtol"], atol=atol,
                               equal_nan=True, msg=lambda m: f"{what}: {m}")  # fmt: skip


def guarded(shape, dtype, device):
    n, pad = math.prod(shape), 1024
    buffer = torch.full((pad + n + pad,), SENTINEL, dtype=dtype, device=device)

    def untouched() -> None:
        if not bool((torch.cat([buffer[:pad], buffer[pad + n :]]) == SENTINEL).all()):
            raise AssertionError(f"the kernel wrote outside its output {tuple(shape)}")

    return buffer[pad : pad + n].view(shape), untouched


def make_case(n, V, dtype, device, ignore_every=0, neg_inf=False, strided=False, seed=0):
    gen = torch.Generator().manual_seed(seed + n * 7 + V)
    x = torch.randn(n, 2 * V if strided else V, generator=gen) * 3
    x = x[:, ::2] if strided else x  # a view with column stride 2
    target = torch.randint(0, V, (n,), generator=gen)
    if ignore_every:
        target[::ignore_every] = IGNORE
    if neg_inf and n:
        x[:, : V // 2] = float("-inf")  # the first half of each row masked out
        target = torch.where(target == IGNORE, target, V // 2 + target % (V - V // 2))
    return x.to(dtype).to(device), target.to(device)


def grad_plans(V: int, device: str) -> list:
    """The one-pass kernel's plans to check: the launch's own on a GPU, then one block for a row
    of up to 1024 classes and blocks of 256 for a longer one, these on 2 programs, so that each
    program takes several rows."""
    plans = [None] if device == "cuda" else []
    return plans + [(256, 4, 1) if V > 1024 else (triton.next_power_of_2(V), 4, 1)]


def check_scale_grad(device: str, raw: bool) -> None:
    """The backward's scaling, on more elements than one step of its programs covers."""
    sms = torch.cuda.get_device_properties(device).multi_processor_count if device == "cuda" else 2
    dx = torch.randn(2 * 4 * sms * 4096 + 5, generator=torch.Generator().manual_seed(1)).to(device)
    want = dx * 0.375
    for g in (1.0, 0.375):
        scale_grad(dx, torch.tensor(g, device=device), raw=raw)
    torch.testing.assert_close(dx, want, rtol=0, atol=0)
    print(f"scale_grad on {device}: {dx.numel()} elements times 1, then times 0.375, exact")


def check_kernels(device: str, raw: bool) -> None:
    """The kernels (raw launches on the CPU through the interpreter) against F.cross_entropy
    in float64, each output in a guarded buffer."""
    shapes = [(0, 8), (1, 1), (3, 7), (5, 1000), (33, 513), (4, 3000)]
    dtypes = DTYPES if device == "cuda" else (torch.float16, torch.float32, torch.float64)
    block = None if device == "cuda" else 256  # several blocks a row under the interpreter
    for dtype in dtypes:
        for n, V in shapes:
            for ignore_every, neg_inf, strided, smoothing in [
                (0, False, False, 0.0), (3, False, True, 0.0), (2, True, False, 0.1),
                (0, False, False, 0.25),
            ]:  # fmt: skip
                if neg_inf and V < 2:
                    continue
                x, t = make_case(n, V, dtype, device, ignore_every, neg_inf, strided)
                loss, lse, counts = ce_forward(x, t, IGNORE, smoothing, raw=raw, block=block)
                want_counts = [int((t != IGNORE).sum()), 0]
                if counts.tolist() != want_counts:
                    raise AssertionError(f"{counts.tolist()} rows counted, not {want_counts}")
                dloss = torch.rand(n, dtype=lse.dtype, device=device) + 0.5
                want, want_grad = reference(x, t, "none", IGNORE, smoothing, dloss)
                what = f"{device} {dtype} {n}x{V} ignore={ignore_every} -inf={neg_inf}"
                torch.testing.assert_close(loss.cpu().double(), want, **tolerance(dtype, smoothing),
                                           equal_nan=True, msg=lambda m: f"{what}: {m}")  # fmt: skip
                dx, untouched = guarded((n, V), dtype, device)
                ce_backward(dloss, x, t, lse, IGNORE, smoothing, out=dx, raw=raw, block=block)
                untouched()
                grad_close(dx, want_grad, what + " dlogits", smoothing)
                reduction = "mean" if ignore_every else "sum"
                want, want_grad = reference(x, t, reduction, IGNORE, smoothing)
                for plan in grad_plans(V, device):
                    dx, untouched = guarded((n, V), dtype, device)
                    loss, _, counts = ce_forward_grad(x, t, IGNORE, smoothing, reduction, out=dx,
                                                      raw=raw, plan=plan,
                                                      programs=None if plan is None else 2)  # fmt: skip
                    untouched()
                    how = f"{what} {reduction} in one pass, plan {plan}"
                    torch.testing.assert_close(loss.cpu().double(), want, **tolerance(dtype, smoothing),
                                               equal_nan=True, msg=lambda m: f"{how}: {m}")  # fmt: skip
                    grad_close(dx, want_grad, how + " dlogits", smoothing)
                    if counts.tolist() != want_counts:
                        raise AssertionError(f"{how}: {counts.tolist()}, not {want_counts}")
        print(
            f"  {device} {dtype}: {len(shapes)} shapes x 4 cases, loss and dlogits match, "
            "in two passes and in one"
        )


def check_special(device: str) -> None:
    """-inf logits (a masked-out class), a row of -inf, an all-ignored batch, an empty batch."""
    inf = float("inf")
    x = torch.tensor([[0.0, -inf, 1.0], [-inf, 2.0, 3.0], [-inf, -inf, -inf]], device=device)
    for t, smoothing in (([0, 2, 1], 0.0), ([0, 0, 1], 0.0), ([0, 2, 1], 0.1)):
        t = torch.tensor(t, device=device)
        got = cross_entropy(x, t, label_smoothing=smoothing, reduction="none")
        want = F.cross_entropy(x.cpu(), t.cpu(), label_smoothing=smoothing, reduction="none")
        torch.testing.assert_close(got.cpu(), want, equal_nan=True)
        print(f"-inf logits, targets {t.tolist()}, smoothing {smoothing} on {device}: ours "
              f"{got.tolist()}, F.cross_entropy {want.tolist()}")  # fmt: skip
    xg = x[:2].clone().requires_grad_()
    cross_entropy(xg, torch.tensor([0, 2], device=device), label_smoothing=0.1).backward()
    want = x[:2].cpu().clone().requires_grad_()
    F.cross_entropy(want, torch.tensor([0, 2]), label_smoothing=0.1).backward()
    torch.testing.assert_close(xg.grad.cpu(), want.grad)
    unchecked = cross_entropy(x[:2], torch.tensor([0, 7], device=device), reduction="none",
                              check_targets=False)  # fmt: skip
    if not (unchecked[0].isfinite() and unchecked[1].isnan()):
        raise AssertionError(f"an unchecked target out of range gave {unchecked.tolist()}")
    print(f"target 7 of 3 classes with check_targets=False on {device}: {unchecked.tolist()}")
    empty, none = torch.empty(0, 5, device=device), torch.empty(0, dtype=torch.long, device=device)
    ignored = torch.full((3,), IGNORE, device=device)
    got = [cross_entropy(empty, none).item(), cross_entropy(empty, none, reduction="sum").item(),
           cross_entropy(x, ignored).item()]  # fmt: skip
    want = [F.cross_entropy(empty.cpu(), none.cpu()).item(),
            F.cross_entropy(empty.cpu(), none.cpu(), reduction="sum").item(),
            F.cross_entropy(x.cpu(), ignored.cpu()).item()]  # fmt: skip
    torch.testing.assert_close(torch.tensor(got), torch.tensor(want), equal_nan=True)
    print(f"empty mean, empty sum, all ignored on {device}: ours {got}, F.cross_entropy {want}")


def check_reductions(device: str) -> None:
    dtypes = (torch.bfloat16, torch.float16, torch.float32) if device == "cuda" else (
        torch.float32,)  # fmt: skip
    for dtype in dtypes:
        for reduction in REDUCTIONS:
            for smoothing, one_pass in ((0.0, False), (0.1, False), (0.0, True), (0.1, True)):
                x, t = make_case(37, 1001, dtype, device, ignore_every=4)
                xg = x.clone().requires_grad_()
                got = cross_entropy(xg, t, label_smoothing=smoothing, reduction=reduction,
                                    grad_in_forward=one_pass)  # fmt: skip
                got.sum().backward()
                want, want_grad = reference(x, t, reduction, IGNORE, smoothing)
                if got.dtype != dtype or got.shape != want.shape:
                    raise AssertionError(f"{reduction}: {got.dtype} {got.shape}")
                torch.testing.assert_close(got.cpu().double(), want, **tolerance(dtype))
                grad_close(xg.grad, want_grad, f"{reduction} {dtype} smoothing {smoothing}")
    print(
        f"reductions mean, sum, none with and without label smoothing, grad_in_forward False "
        f"and True, on {device}: "
        f"{[str(d).split('.')[-1] for d in dtypes]} match F.cross_entropy"
    )


def check_wide(device: str) -> None:
    """Rows x V past 2**31 elements: the row offset needs 64 bits."""
    n, V = 8400, 256000  # 2.15e9 elements, 4.3 GB in bfloat16
    x = torch.empty(n, V, dtype=torch.bfloat16, device=device).normal_(0, 2)
    t = torch.randint(0, V, (n,), device=device)
    loss = cross_entropy(x, t, reduction="none")
    last = slice(n - 4, n)  # rows whose offsets are past 2**31
    want, _ = reference(x[last], t[last], "none")
    torch.testing.assert_close(loss[last].cpu().double(), want, **tolerance(torch.bfloat16))
    print(f"{n} x {V} bfloat16 ({n * V / 2**31:.2f} x 2**31 elements) on {device}: last rows match")


def expect_error(error: type[Exception], call) -> None:
    try:
        call()
    except error as exc:
        print(f"  rejected as expected: {type(exc).__name__}: {exc}")
    else:
        raise AssertionError(f"expected {error.__name__}, got a result")


def check_function(device: str) -> None:
    """The autograd.Function route (raw launches): F.cross_entropy's mean and its gradient with
    ignored rows, and a NaN loss, not an error, for a target out of range."""
    x = torch.randn(7, 37, device=device, requires_grad=True)
    t = torch.tensor([0, 36, IGNORE, 5, IGNORE, 17, 2], device=device)
    loss = CrossEntropyFunction.apply(x, t, IGNORE, 0.0)
    (grad,) = torch.autograd.grad(loss * 3.0, x)
    want, want_grad = reference(x, t, dloss=torch.tensor(3.0))
    torch.testing.assert_close(loss.cpu().double(), want, **tolerance(torch.float32))
    torch.testing.assert_close(grad.cpu().double(), want_grad, **tolerance(torch.float32))
    bad = CrossEntropyFunction.apply(x.detach(), torch.full_like(t, 37), IGNORE, 0.0)
    if not bad.isnan():
        raise AssertionError(f"a target out of range gave the loss {bad.item()}, not NaN")
    print(f"autograd.Function on {device}: mean and gradient match the reference; "
          "a target out of range gives NaN")  # fmt: skip


def check_operator(device: str) -> None:
    torch.manual_seed(0)
    x = torch.randn(5, 9, dtype=torch.float64, device=device).requires_grad_()
    t = torch.tensor([1, IGNORE, 8, 0, 3], device=device)
    for reduction, smoothing in (("mean", 0.0), ("none", 0.2)):
        ok = torch.autograd.gradcheck(  # gradcheck runs the backward more than once
            lambda a: cross_entropy(a, t, label_smoothing=smoothing, reduction=reduction,
                                    grad_in_forward=False), (x,)
        )  # fmt: skip
        print(f"gradcheck float64 on {device}, reduction {reduction}, smoothing {smoothing}, "
              f"two passes: {ok}")  # fmt: skip
    x32 = x.detach().float().requires_grad_()  # float32: the gradient written by the forward
    loss = cross_entropy(x32, t, label_smoothing=0.1, grad_in_forward=True)
    (grad,) = torch.autograd.grad(loss * 3.0, x32, retain_graph=True)
    want = torch.autograd.grad(3.0 * F.cross_entropy(x32, t, label_smoothing=0.1), x32)[0]
    torch.testing.assert_close(grad, want)
    print(f"one pass, float32 on {device}: the gradient of 3 * loss matches F.cross_entropy's; "
          "a second backward through the same graph:")  # fmt: skip
    expect_error(RuntimeError, lambda: torch.autograd.grad(loss, x32))
    loss = cross_entropy(x32, t, label_smoothing=0.1, grad_in_forward=True)
    expect_error(RuntimeError, lambda: torch.autograd.grad(loss, x32, create_graph=True))
    tests = ["test_schema", "test_autograd_registration", "test_faketensor"]
    if device == "cuda":
        tests.append("test_aot_dispatch_dynamic")
    a = torch.randn(4, 12, device=device).requires_grad_()
    b = torch.tensor([0, IGNORE, 11, 5], device=device)
    for op, args in (("cross_entropy_rows", (a, b, IGNORE, 0.1)),
                     ("cross_entropy_and_grad", (a, b, IGNORE, 0.1, "mean")),
                     ("scale_grad_", (a.detach().clone(), torch.tensor(0.5, device=device)))):  # fmt: skip
        result = torch.library.opcheck(getattr(torch.ops.cookbook, op).default, args,
                                       test_utils=tests)  # fmt: skip
        print(f"opcheck {op} on {device}: {result}")
    ok = torch.randn(2, 3, device=device)
    expect_error(IndexError, lambda: cross_entropy(ok, torch.tensor([0, 3], device=device)))
    expect_error(IndexError, lambda: cross_entropy(ok, torch.tensor([-1, 0], device=device)))
    expect_error(TypeError, lambda: cross_entropy(ok, torch.tensor([0, 1], dtype=torch.int32,
                                                                   device=device)))  # fmt: skip
    expect_error(ValueError, lambda: cross_entropy(ok[None], torch.zeros(1, 2, dtype=torch.long,
                                                                         device=device)))  # fmt: skip
    expect_error(ValueError, lambda: cross_entropy(ok, torch.tensor([0, 1], device=device),
                                                   reduction="batchmean"))  # fmt: skip
    expect_error(TypeError, lambda: cross_entropy(ok.int(), torch.tensor([0, 1], device=device)))


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


def one_pass_figures(rows: list[dict]) -> dict:
    """Where the operator takes the one-pass kernel: its forward and backward against a copy of
    the bytes it moves itself (the logits read once, the gradient written once), timed as twice
    the forward's copy, which reads and writes half the logits' bytes."""
    at = {(r["impl"], r["pass"], tuple(r["shape"]), r["dtype"]): r
          for r in rows if r["clock"] == "kernel"}  # fmt: skip
    figures = {}
    for (impl, pass_, shape, dtype), t in at.items():
        size = torch.tensor([], dtype=getattr(torch, dtype)).element_size()
        if (impl, pass_) != ("triton", "forward_backward") or not one_pass_wins(shape[1], size):
            continue
        if fwd_grad_plan(shape[1], size)[0] < shape[1]:  # rows of several blocks: read twice
            continue
        copy = at["copy", "forward", shape, dtype]
        twice = {k: 2 * copy[k] for k in ("ms_median", "ms_p20", "ms_p80")}
        figures[f"forward_backward_{dtype}_{'x'.join(map(str, shape))}_one_pass_of_copy"] = (
            ratio_figure(twice, t, "forward and backward in one pass: twice the kernel time of the "
                         "forward's copy (a copy of the bytes the one pass moves) over Triton's",
                         f"logits: ({shape[0]}, {shape[1]}), target: ({shape[0]},)", dtype)
        )  # fmt: skip
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
SHAPES = [  # (tokens, vocabulary, dtype)
    (8192, 32000, torch.bfloat16), (8192, 128256, torch.bfloat16),
    (4096, 256000, torch.bfloat16), (8192, 32000, torch.float32),
]  # fmt: skip
HOST_SHAPE = (64, 32000)  # a small batch: the GPU waits for the host
PASSES = ("forward", "forward_backward")


def load_liger():
    try:
        from liger_kernel.ops.cross_entropy import LigerCrossEntropyFunction
    except ImportError as exc:
        raise SystemExit(f"the benchmark compares with Liger-Kernel: {exc}; "
                         "pip install liger-kernel==0.8.5") from exc  # fmt: skip
    # weight None, ignore_index, lse_square_scale 0, label_smoothing 0, reduction "mean"
    return lambda x, t: LigerCrossEntropyFunction.apply(x, t, None, IGNORE, 0.0, 0.0, "mean")[0]


def agree(got: torch.Tensor, want: torch.Tensor, what: str) -> None:
    """A peer's result against the float64 reference: within a few units of the dtype's
    rounding, measured against the largest value (a gradient is mostly tiny elements)."""
    eps = torch.finfo(got.dtype).eps
    err = (got.double() - want.double()).abs().max().item() / want.abs().max().item()
    if not err <= 8 * eps:
        raise AssertionError(f"{what}: error {err:.2e} of the largest value, more than 8 eps")


def reference_cuda(x, t):
    """The mean loss and its gradient in float64 on the GPU (large shapes)."""
    xd = x.double().requires_grad_()
    loss = F.cross_entropy(xd, t)
    (grad,) = torch.autograd.grad(loss, xd)
    return loss.detach(), grad


def peak_mib(fn) -> float:
    """MiB allocated at the peak of one call, above what was allocated before it (the inputs
    and everything else alive); what the call returns is held until the peak is read."""
    torch.cuda.synchronize()
    torch.cuda.reset_peak_memory_stats()
    before = torch.cuda.memory_allocated()
    out = fn()
    torch.cuda.synchronize()
    peak = torch.cuda.max_memory_allocated() - before
    del out
    return round(peak / 2**20, 1)


# --8<-- [start:bench]
def benchmark(shapes) -> tuple[list[dict], list[str]]:
    liger = load_liger()
    eager = lambda x, t: F.cross_entropy(x, t)
    one_pass = lambda x, t: cross_entropy(x, t, grad_in_forward=True)  # (1)!
    function = lambda x, t: CrossEntropyFunction.apply(x, t, IGNORE, 0.0)
    out, memory = [], []
    for tokens, vocab, dtype in shapes:
        torch._dynamo.reset()  # (2)!
        impls = {"triton": one_pass, "triton_fn": function,
                 "triton_compile": torch.compile(lambda x, t: cross_entropy(x, t), dynamic=False),
                 "eager": eager, "compile": torch.compile(eager, dynamic=False),
                 "liger": liger}  # fmt: skip
        gen = torch.Generator("cuda").manual_seed(tokens + vocab)
        x = torch.randn(tokens, vocab, generator=gen, device="cuda", dtype=dtype) * 2
        t = torch.randint(0, vocab, (tokens,), generator=gen, device="cuda")
        want, want_grad = reference_cuda(x, t)
        size = x.numel() * x.element_size()
        calls, peaks = {}, {}
        for impl, fn in impls.items():
            mine = x.clone() if impl == "liger" else x  # (3)!
            xg = mine.detach().requires_grad_()
            agree(fn(mine, t), want, f"{impl} forward")
            (grad,) = torch.autograd.grad(fn(xg, t), xg)
            agree(grad, want_grad, f"{impl} dlogits")
            del grad
            forward = lambda fn=fn, mine=mine: fn(mine, t)
            train = lambda fn=fn, xg=xg: torch.autograd.grad(fn(xg, t), xg)
            calls[impl, "forward"] = (forward, "bytes", size)  # (4)!
            calls[impl, "forward_backward"] = (train, "bytes", 3 * size)
            peaks[impl] = (peak_mib(forward), peak_mib(train))  # (5)!
        if one_pass_wins(vocab, x.element_size()):  # (6)!
            xg = x.detach().requires_grad_()
            two_pass = lambda xg=xg: torch.autograd.grad(
                cross_entropy(xg, t, grad_in_forward=False), xg
            )
            agree(two_pass()[0], want_grad, "triton_two_pass dlogits")
            calls["triton_two_pass", "forward_backward"] = (two_pass, "bytes", 3 * size)
        elif x.element_size() == 2:  # (7)!
            kernel = lambda: ce_forward_grad(x, t, IGNORE, 0.0, "mean", raw=True)[1]
            agree(kernel(), want_grad, "triton_one_pass dlogits")
            calls["triton_one_pass", "forward_backward"] = (kernel, "bytes", 3 * size)
        src = torch.empty(3 * size // 2, dtype=torch.uint8, device="cuda")
        dst = torch.empty_like(src)
        calls["copy", "forward"] = (lambda: dst[: size // 2].copy_(src[: size // 2]), "bytes",
                                    size)  # fmt: skip
        calls["copy", "forward_backward"] = (lambda: dst.copy_(src), "bytes", 3 * size)
        out += measure(calls, (tokens, vocab), dtype)
        name = str(dtype).split(".")[-1]
        for i, pass_ in enumerate(PASSES):
            cells = ", ".join(f"{impl} {p[i]}" for impl, p in peaks.items())
            memory.append(f"peak MiB above the inputs, {pass_}, {tokens} x {vocab} {name} "
                          f"(logits {size / 2**20:.0f} MiB): {cells}")  # fmt: skip
        if one_pass_wins(vocab, x.element_size()):  # (8)!
            halved = [lambda: torch.autograd.grad(one_pass(xg, t) * 0.5, xg),
                      lambda: torch.autograd.grad(
                          cross_entropy(xg, t, grad_in_forward=False) * 0.5, xg)]  # fmt: skip
            one, two = (statistics.median(ts) for ts in kernel_times(halved))
            memory.append(f"an incoming gradient of 0.5, forward and backward, {tokens} x {vocab} "
                          f"{name}, kernel ms (median of {KERNEL_REPEATS}): one pass {one:.3f}, "
                          f"two passes {two:.3f}")  # fmt: skip

    return out, memory


# --8<-- [end:bench]


def host_costs(dtype=torch.bfloat16) -> dict:
    """µs of host time per forward call, by route, on a small input that requires grad."""
    torch._dynamo.reset()
    liger = load_liger()
    x = torch.randn(*HOST_SHAPE, device="cuda", dtype=dtype).requires_grad_()
    t = torch.randint(0, HOST_SHAPE[1], (HOST_SHAPE[0],), device="cuda")
    op = lambda a, b: cross_entropy(a, b)
    eager = lambda a, b: F.cross_entropy(a, b)
    compiled_op = torch.compile(op, dynamic=False)
    graphed_op = torch.compile(op, dynamic=False, mode="reduce-overhead")
    x_inference = x.detach()  # CUDA graphs replay a forward: inputs that do not require grad
    compiled_eager = torch.compile(eager, dynamic=False)
    liger_x = x.detach().clone().requires_grad_()  # Liger writes its gradient into its logits
    routes = {
        "raw_launch": lambda: ce_forward(x, t, IGNORE, 0.0, raw=True),
        "triton_op": lambda: cross_entropy(x, t),
        "triton_op_unchecked": lambda: cross_entropy(x, t, check_targets=False),
        "triton_op_in_compile": lambda: compiled_op(x, t),
        "triton_op_cuda_graph": lambda: graphed_op(x_inference, t),
        "autograd_function": lambda: CrossEntropyFunction.apply(x, t, IGNORE, 0.0),
        "autograd_function_cuda_graph": captured(
            lambda: CrossEntropyFunction.apply(x_inference, t, IGNORE, 0.0)
        ).replay,
        "liger": lambda: liger(liger_x, t),
        "eager": lambda: eager(x, t),
        "compile": lambda: compiled_eager(x, t),
    }
    return host_us(routes)


if __name__ == "__main__":
    import json

    devices = ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])
    # --8<-- [start:call]
    x = torch.tensor([[2.0, 0.0, -1.0], [0.0, 0.0, float("-inf")]])
    t = torch.tensor([0, 2])
    print(f"cross_entropy on CPU tensors, per row: {cross_entropy(x, t, reduction='none')}")
    # --8<-- [end:call]
    if INTERPRETED:
        check_kernels("cpu", raw=True)
        check_function("cpu")
        check_scale_grad("cpu", raw=True)
    for device in devices:
        check_special(device)
        check_reductions(device)
        check_operator(device)
    if torch.cuda.is_available():
        check_kernels("cuda", raw=False)
        check_function("cuda")
        check_scale_grad("cuda", raw=False)
        check_wide("cuda")
        rows_, memory_ = benchmark(SHAPES)
        for r in rows_:
            print(f"benchmark: {json.dumps(r)}")
        for line in memory_:
            print(line)
        describe = lambda s: f"logits: ({s[0]}, {s[1]}), target: ({s[0]},)"
        figures = memory_bound_figures(rows_, describe)
        figures.update(one_pass_figures(rows_))
        figures.update(call_figures(rows_, describe))
        figures.update(host_figures(host_costs(), f"logits: {HOST_SHAPE}, requires grad",
                                    "bfloat16"))  # fmt: skip
        print("figures: " + json.dumps(figures))
    print("cross_entropy: all checks passed")
