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


def check(device: str) -> None:
    """Each variant gives softmax.py's result bit for bit: the same arithmetic in the same order."""
    for dtype in (torch.bfloat16, torch.float32):
        x, dy = inputs((3, 40000), dtype, device)
        y = softmax.softmax_forward(x, raw=True)
        if not torch.equal(backward_plain(dy, y), softmax.softmax_backward_launch(dy, y, raw=True)):
            raise AssertionError(f"{dtype}: the plain loop differs from softmax.py's backward")
    x, _ = inputs((5, 20000), torch.bfloat16, device)
    if not torch.equal(forward_per_row(x), softmax.softmax_forward(x, raw=True)):
        raise AssertionError("one program a row differs from softmax.py's persistent forward")


# --8<-- [start:timing]
def timed() -> tuple[list[dict], dict]:
    """Kernel time (softmax.kernel_times: turns, one profiler session, the L2 flushed before
    each call) of each variant, softmax.py's kernel and a device copy of the same bytes."""
    rows, figures = [], {}
    for dtype in (torch.bfloat16, torch.float32):
        x, dy = inputs(BACKWARD_SHAPE, dtype, "cuda")
        y = softmax.softmax_forward(x, raw=True)
        size = 3 * y.numel() * y.element_size()
        src = torch.empty(size // 2, dtype=torch.uint8, device="cuda")
        dst = torch.empty_like(src)
        fns = {"triton": lambda: softmax.softmax_backward_launch(dy, y, raw=True),
               "plain_loop": lambda: backward_plain(dy, y), "copy": lambda: dst.copy_(src)}  # fmt: skip
        found = dict(zip(fns, softmax.kernel_times(list(fns.values())), strict=True))
        at = {k: softmax.timed_row(k, "backward", BACKWARD_SHAPE, dtype, "kernel", t, "bytes",
                                   size) for k, t in found.items()}  # fmt: skip
        rows += at.values()
        name = str(dtype).split(".")[-1]
        figures[f"backward_{name}_plain_over_triton"] = softmax.ratio_figure(
            at["plain_loop"], at["triton"], "backward: the plain loop's kernel time over "
            "softmax.py's", "x: (2048, 65536)", name)  # fmt: skip
    x, _ = inputs(FORWARD_SHAPE, torch.bfloat16, "cuda")
    size = 2 * x.numel() * x.element_size()
    src = torch.empty(size // 2, dtype=torch.uint8, device="cuda")
    dst = torch.empty_like(src)
    fns = {"triton": lambda: softmax.softmax_forward(x, raw=True),
           "per_row": lambda: forward_per_row(x), "copy": lambda: dst.copy_(src)}  # fmt: skip
    found = dict(zip(fns, softmax.kernel_times(list(fns.values())), strict=True))
    at = {k: softmax.timed_row(k, "forward", FORWARD_SHAPE, torch.bfloat16, "kernel", t, "bytes",
                               size) for k, t in found.items()}  # fmt: skip
    rows += at.values()
    for impl in ("triton", "per_row"):
        figures[f"forward_bfloat16_{impl}_of_copy"] = softmax.ratio_figure(
            at["copy"], at[impl], f"forward: a device copy of the same bytes, its kernel time over "
            f"{'the persistent plan' if impl == 'triton' else 'one program a row'}'s",
            "x: (4096, 32768)", "bfloat16")  # fmt: skip
    return rows, figures


# --8<-- [end:timing]


if __name__ == "__main__":
    devices = ["cpu"] if softmax.INTERPRETED else []
    devices += ["cuda"] if torch.cuda.is_available() else []
    for device in devices:
        check(device)
        print(f"variants on {device}: the same results as softmax.py's kernels")
    if torch.cuda.is_available():
        rows, figures = timed()
        for row in rows:
            print(f"benchmark: {json.dumps(row)}")
        print("figures: " + json.dumps(figures))
    print("variants: all checks passed")
