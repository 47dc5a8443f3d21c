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
"""Two of softmax.py's choices against what they replaced, timed: the looped backward's first
pass loading the next block before it multiplies this one, against a plain loop (same block,
warps and order); and the persistent plan of the 16-bit forward at 32768 columns, against one
program instance a row (same block and warps).

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


BACKWARD_SHAPE = (2048, 65536)  # softmax.py's longest rows: the backward loops in every dtype
FORWARD_SHAPE = (4096, 32768)  # the 16-bit forward's persistent plan


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


# --8<-- [start:timing]
def timed(pass_: str, shape, dtype, fns: dict) -> list[dict]:
    """Kernel-time rows of fns, taking turns in one profiler session (softmax.kernel_times, the
    L2 flushed before each call), each with a device copy of the bytes the pass moves."""
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
    for dtype in (torch.bfloat16, torch.float32):
        x, dy = inputs(BACKWARD_SHAPE, dtype, "cuda")
        y = softmax.softmax_forward(x, raw=True)
        rows += timed("backward", BACKWARD_SHAPE, dtype, {
            "triton": lambda: softmax.softmax_backward_launch(dy, y, raw=True),
            "triton_plain_loop": lambda: backward_plain(dy, y),
        })  # fmt: skip
    if persistent("cuda"):
        x, _ = inputs(FORWARD_SHAPE, torch.bfloat16, "cuda")
        rows += timed("forward", FORWARD_SHAPE, torch.bfloat16, {
            "triton": lambda: softmax.softmax_forward(x, raw=True),
            "triton_per_row": lambda: forward_per_row(x),
        })  # fmt: skip
    else:
        print("forward: no persistent plan on this GPU (too little shared memory): not timed")
    return rows


# --8<-- [end:timing]


def part_figures(rows: list[dict]) -> dict:
    """The plain loop's kernel time over softmax.py's backward's, per dtype; the persistent
    plan's and one program a row's share of the copy."""
    at = {(r["impl"], r["pass"], r["dtype"]): r for r in rows}
    figures = {}
    for (impl, pass_, dtype), row in at.items():
        where = f"x: ({row['shape'][0]}, {row['shape'][1]})"
        if impl == "triton_plain_loop":
            figures[f"backward_{dtype}_plain_over_triton"] = softmax.ratio_figure(
                row, at["triton", pass_, dtype], "backward: kernel time with the plain loop over "
                "softmax.py's", where, dtype)  # fmt: skip
        elif pass_ == "forward" and impl != "copy":
            what = "the persistent plan" if impl == "triton" else "one program instance a row"
            figures[f"forward_{dtype}_{impl.removeprefix('triton_')}_of_copy"] = (
                softmax.ratio_figure(at["copy", pass_, dtype], row, "forward: a device copy of "
                f"the same bytes, its kernel time over {what}'s", where, dtype)
            )  # fmt: skip
    return figures


if __name__ == "__main__":
    devices = ["cpu"] if softmax.INTERPRETED else []
    devices += ["cuda"] if torch.cuda.is_available() else []
    for device in devices:
        check(device, (3, 40000), (5, 20000))
        print(f"variants on {device}: the same results as softmax.py's kernels")
    if torch.cuda.is_available():
        check("cuda", BACKWARD_SHAPE, FORWARD_SHAPE)  # at the shapes it times, too
        rows = benchmark()
        for row in rows:
            print(f"benchmark: {json.dumps(row)}")
        print("figures: " + json.dumps(part_figures(rows)))
    print("variants: all checks passed")
