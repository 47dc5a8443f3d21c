# /// script
# requires-python = ">=3.10"
# dependencies = ["torch", "triton", "numpy"]
#
# [tool.snippet]
# gpu = { min-cc = "8.0", timing = true }
# cpu = { interpreter = true }
# timeout = 300
# files = ["softmax.py"]
# ///
"""Three of softmax.py's choices beside alternatives, timed: the looped backward's first pass
loading the next block before it multiplies this one, against a plain loop (same block, warps
and order); the persistent plan of the 16-bit forward at 32768 columns, against one program
instance a row (same block and warps) and against the looped kernel, which reads each row
twice, with each (BLOCK, num_warps) pair in PLANS; and the looped kernels' plans (LOOP_PLAN)
at 65536 columns, against the other pairs in PLANS.

On a CUDA GPU, beside softmax.py:  python variants.py
On a CPU:  TRITON_INTERPRET=1 python variants.py  (checks the variants; times nothing)
"""

import json
import math

import softmax  # softmax.py, beside this file
import torch
import triton
import triton.language as tl
from softmax import _load_block


# --8<-- [start:plain-loop]
@triton.jit
def softmax_bwd_plain_kernel(dy_ptr, y_ptr, dx_ptr, N, stride_dy, stride_y, stride_dx,
                             BLOCK: tl.constexpr):  # fmt: skip
    """softmax.py's looped backward, its first pass written as a plain loop: each block is
    loaded in the iteration that uses it."""
    row = tl.program_id(0).to(tl.int64)
    dy_row, y_row = dy_ptr + row * stride_dy, y_ptr + row * stride_y
    dx_row = dx_ptr + row * stride_dx
    cols = tl.arange(0, BLOCK)
    acc_dtype = tl.float64 if y_ptr.dtype.element_ty == tl.float64 else tl.float32
    dot = tl.zeros((BLOCK,), acc_dtype)
    for start in range(0, N, BLOCK):
        dy, y = _load_block(dy_row, y_row, start, cols, N)
        dot += dy.to(acc_dtype) * y.to(acc_dtype)
    total = tl.sum(dot, axis=0)
    n_blocks = tl.cdiv(N, BLOCK)
    for i in range(0, n_blocks):  # the second pass, as softmax.py's
        start = (n_blocks - 1 - i) * BLOCK
        mask = start + cols < N
        dy = tl.load(dy_row + start + cols, mask=mask, other=0.0, eviction_policy="evict_first")
        y = tl.load(y_row + start + cols, mask=mask, other=0.0, eviction_policy="evict_first")
        dx = y.to(acc_dtype) * (dy.to(acc_dtype) - total)
        tl.store(dx_row + start + cols, dx.to(dx_ptr.dtype.element_ty), mask=mask)


# --8<-- [end:plain-loop]


def backward_plain(dy: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """The plain loop with softmax.py's plan for these rows (which must loop)."""
    block, warps, one_block, _ = softmax.launch_plan(y.shape[1], y.element_size(), "backward",
                                                     y.device)  # fmt: skip
    if one_block:
        raise ValueError(f"rows of {y.shape[1]} columns take one block: nothing loops")
    dx = torch.empty_like(y)
    softmax_bwd_plain_kernel[(y.shape[0],)](
        dy, y, dx, y.shape[1], dy.stride(0), y.stride(0), dx.stride(0), BLOCK=block,
        num_warps=warps,
    )  # fmt: skip
    return dx


def forward_per_row(x: torch.Tensor) -> torch.Tensor:
    """softmax.py's one-block forward with its block and warps, but one program instance a row
    instead of the persistent plan (which this shape must take)."""
    block, warps, one_block, stages = softmax.launch_plan(x.shape[1], x.element_size(),
                                                          "forward", x.device)  # fmt: skip
    if not (one_block and stages > 1):
        raise ValueError(f"rows of {x.shape[1]} columns do not take the persistent plan")
    y = torch.empty_like(x)
    softmax.softmax_kernel[(x.shape[0],)](
        x, y, x.shape[0], x.shape[1], x.stride(0), y.stride(0), BLOCK=block, STAGES=1,
        num_warps=warps,
    )  # fmt: skip
    return y


CUDA = torch.device("cuda")  # the plans of a GPU with an H100's or H200's shared memory
BACKWARD_SHAPE = (2048, 65536)  # softmax.py's longest rows: the backward loops in every dtype
FORWARD_SHAPE = (4096, 32768)  # the 16-bit forward's persistent plan
# The looped kernels' (BLOCK, num_warps) pairs timed at BACKWARD_SHAPE, where both passes loop
# in every dtype (softmax.py's own plans there are among them), and, in the bfloat16 forward,
# at FORWARD_SHAPE beside the persistent plan.
PLANS = ((4096, 8), (8192, 16), (8192, 32), (16384, 16), (16384, 32), (32768, 32))


def looped(pass_: str, plan, a: torch.Tensor, y: torch.Tensor | None = None) -> torch.Tensor:
    """softmax.py's looped kernel of one pass with the plan (BLOCK, num_warps): the forward of
    a, or the backward of dy = a and y."""
    block, warps = plan
    out = torch.empty_like(a)
    if pass_ == "forward":
        softmax.softmax_online_kernel[(a.shape[0],)](
            a, out, a.shape[1], a.stride(0), out.stride(0), BLOCK=block, num_warps=warps
        )
    else:
        softmax.softmax_bwd_kernel[(a.shape[0],)](
            a, y, out, a.shape[1], a.stride(0), y.stride(0), out.stride(0), BLOCK=block,
            ONE_BLOCK=False, num_warps=warps,
        )  # fmt: skip
    return out


def plan_name(plan) -> str:
    return f"triton_loop_{plan[0]}x{plan[1]}"


def plans(pass_: str, *args) -> dict:
    """The looped kernel of one pass with each plan in PLANS, by row name."""
    return {plan_name(p): lambda p=p: looped(pass_, p, *args) for p in PLANS}


def inputs(shape, dtype, device):
    gen = torch.Generator(device).manual_seed(shape[0] + shape[1])
    x = torch.randn(*shape, generator=gen, device=device, dtype=dtype)
    dy = torch.randn(*shape, generator=gen, device=device, dtype=dtype)
    return x, dy


def persistent(device: str) -> bool:
    """Whether softmax.py's 16-bit forward takes the persistent plan at FORWARD_SHAPE here (it
    needs two rows' worth of shared memory: an H100 or H200 has it, a GPU of CC 8.6 or 8.9 not)."""
    plan = softmax.launch_plan(FORWARD_SHAPE[1], 2, "forward", torch.device(device))
    return plan[2] and plan[3] > 1


def check(device: str, backward_shape, forward_shape) -> None:
    """Each variant gives softmax.py's result bit for bit: the same arithmetic in the same order."""
    for dtype in (torch.bfloat16, torch.float32):
        x, dy = inputs(backward_shape, dtype, device)
        y = softmax.softmax_forward(x, raw=True)
        if not torch.equal(backward_plain(dy, y), softmax.softmax_backward_launch(dy, y, raw=True)):
            raise AssertionError(f"{dtype}: the plain loop differs from softmax.py's backward")
    if persistent(device):
        x, _ = inputs(forward_shape, torch.bfloat16, device)
        if not torch.equal(forward_per_row(x), softmax.softmax_forward(x, raw=True)):
            raise AssertionError("one program a row differs from softmax.py's persistent forward")


# Another plan sums a row in another order: its result may differ from softmax.py's by the
# rounding of that order (float32) and one more rounding to bfloat16.
PLAN_TOLERANCE = {torch.bfloat16: dict(rtol=1.6e-2, atol=1e-9),
                  torch.float32: dict(rtol=1e-5, atol=1e-12)}  # fmt: skip


def check_plans(device: str, shape, dtypes=(torch.bfloat16, torch.float32),
                passes=("forward", "backward")) -> None:  # fmt: skip
    """Every plan gives softmax.py's result to PLAN_TOLERANCE; where softmax.py loops over
    these rows, its plan is one of PLANS and gives its result bit for bit."""
    for dtype in dtypes:
        x, dy = inputs(shape, dtype, device)
        y = softmax.softmax_forward(x, raw=True)
        want = {"forward": y, "backward": softmax.softmax_backward_launch(dy, y, raw=True)}
        args = {"forward": (x,), "backward": (dy, y)}
        for pass_ in passes:
            block, warps, one_block, _ = softmax.launch_plan(
                shape[1], dtype.itemsize, pass_, torch.device(device)
            )
            if not one_block and (block, warps) not in PLANS:
                raise AssertionError(f"{pass_}, {dtype}: softmax.py's plan is not one timed here")
            for plan in PLANS:
                exact = not one_block and plan == (block, warps)
                torch.testing.assert_close(
                    looped(pass_, plan, *args[pass_]), want[pass_],
                    **(dict(rtol=0, atol=0) if exact else PLAN_TOLERANCE[dtype]),
                    msg=lambda m: f"{pass_}, {dtype}, plan {plan}: {m}",
                )  # fmt: skip


# --8<-- [start:timing]
def timed(pass_: str, shape, dtype, fns: dict) -> list[dict]:
    """Kernel-time rows of fns, one after another in one profiler session (softmax.kernel_times,
    the L2 flushed before each call), and of a device copy of the bytes the pass moves."""
    size = (3 if pass_ == "backward" else 2) * math.prod(shape) * dtype.itemsize
    src = torch.empty(size // 2, dtype=torch.uint8, device="cuda")
    dst = torch.empty_like(src)
    fns = {**fns, "copy": lambda: dst.copy_(src)}
    times = softmax.kernel_times(list(fns.values()))
    return [
        softmax.timed_row(impl, pass_, shape, dtype, "kernel", t, "bytes", size)
        for impl, t in zip(fns, times, strict=True)
    ]


def benchmark() -> list[dict]:
    rows = []
    for dtype in (torch.bfloat16, torch.float32):  # at 65536 columns both passes loop
        x, dy = inputs(BACKWARD_SHAPE, dtype, "cuda")
        y = softmax.softmax_forward(x, raw=True)
        rows += timed("forward", BACKWARD_SHAPE, dtype, plans("forward", x))
        rows += timed("backward", BACKWARD_SHAPE, dtype, {
            "triton": lambda: softmax.softmax_backward_launch(dy, y, raw=True),
            "triton_plain_loop": lambda: backward_plain(dy, y),
            **plans("backward", dy, y),
        })  # fmt: skip
    if persistent("cuda"):
        x, _ = inputs(FORWARD_SHAPE, torch.bfloat16, "cuda")
        rows += timed("forward", FORWARD_SHAPE, torch.bfloat16, {
            "triton": lambda: softmax.softmax_forward(x, raw=True),
            "triton_per_row": lambda: forward_per_row(x),
            **plans("forward", x),
        })  # fmt: skip
    else:
        print("forward: no persistent plan on this GPU (too little shared memory): not timed")
    return rows


# --8<-- [end:timing]


def part_figures(rows: list[dict]) -> dict:
    """The plain loop's kernel time over softmax.py's backward's, per dtype; the persistent
    plan's and one program a row's share of the copy; per pass and dtype, the fastest looped
    plan's kernel time over softmax.py's plan's (1 where softmax.py's is the fastest) and the
    fastest plan's share of the copy; at FORWARD_SHAPE, the fastest looped plan's kernel time
    over the persistent plan's, and its share of the copy."""
    at = {(r["impl"], r["pass"], r["dtype"], tuple(r["shape"])): r for r in rows}
    figures = {}
    for (impl, pass_, dtype, shape), row in at.items():
        where = f"x: ({shape[0]}, {shape[1]})"
        if impl == plan_name(PLANS[0]):  # the looped plans of this pass, dtype and shape
            one_block = shape == FORWARD_SHAPE  # against softmax.py's persistent plan there,
            size = getattr(torch, dtype).itemsize  # else against its own looped plan
            plan = "triton" if one_block else plan_name(
                softmax.launch_plan(shape[1], size, pass_, CUDA)[:2])  # fmt: skip
            ours = at[plan, pass_, dtype, shape]
            fastest = min((at[plan_name(p), pass_, dtype, shape] for p in PLANS),
                          key=lambda r: (r["ms_median"], r is not ours))  # a tie: ours  # fmt: skip
            loop = fastest["impl"].removeprefix("triton_loop_")
            tag = f"{pass_}_{dtype}_{shape[1]}_fastest_loop" if one_block else (
                f"{pass_}_{dtype}_fastest_plan")  # fmt: skip
            figures[f"{tag}_over_{'triton' if one_block else 'plan'}"] = softmax.ratio_figure(
                fastest, ours, f"{pass_}: kernel time of the fastest of the looped plans timed "
                f"({loop}) over softmax.py's{' persistent plan' if one_block else ' plan'}", where,
                dtype)  # fmt: skip
            figures[f"{tag}_of_copy"] = softmax.ratio_figure(
                at["copy", pass_, dtype, shape], fastest, f"{pass_}: a device copy of the same "
                f"bytes, its kernel time over the fastest looped plan's ({loop})", where,
                dtype)  # fmt: skip
        elif impl == "triton_plain_loop":
            figures[f"backward_{dtype}_plain_over_triton"] = softmax.ratio_figure(
                row, at["triton", pass_, dtype, shape], "backward: kernel time with the plain "
                "loop over softmax.py's", where, dtype)  # fmt: skip
        elif pass_ == "forward" and impl in ("triton", "triton_per_row"):
            what = "the persistent plan" if impl == "triton" else "one program instance a row"
            figures[f"forward_{dtype}_{impl.removeprefix('triton_')}_of_copy"] = (
                softmax.ratio_figure(at["copy", pass_, dtype, shape], row, "forward: a device "
                f"copy of the same bytes, its kernel time over {what}'s", where, dtype)
            )  # fmt: skip
    return figures


if __name__ == "__main__":
    devices = ["cpu"] if softmax.INTERPRETED else []
    devices += ["cuda"] if torch.cuda.is_available() else []
    for device in devices:
        check(device, (3, 40000), (5, 20000))
        check_plans(device, (3, 40000))
        check_plans(device, (5, 20000), (torch.bfloat16,), ("forward",))
        print(f"variants on {device}: the same results as softmax.py's kernels")
    if torch.cuda.is_available():
        check("cuda", BACKWARD_SHAPE, FORWARD_SHAPE)  # at the shapes it times, too
        check_plans("cuda", BACKWARD_SHAPE)
        check_plans("cuda", FORWARD_SHAPE, (torch.bfloat16,), ("forward",))
        rows = benchmark()
        for row in rows:
            print(f"benchmark: {json.dumps(row)}")
        print("figures: " + json.dumps(part_figures(rows)))
    print("variants: all checks passed")
