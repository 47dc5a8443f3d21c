# /// script
# requires-python = ">=3.10"
# dependencies = ["torch", "triton", "numpy"]
#
# [tool.snippet]
# gpu = { min-cc = "8.0", timing = true }
# cpu = { interpreter = true }
# timeout = 300
# files = ["rmsnorm.py"]
# ///
"""Where the RMSNorm backward's time goes: its first kernel alone, and its second stage (the
weight's gradient, the partial rows summed) as rmsnorm.py's one kernel or as PyTorch's sum and
cast (two launches), timed in bfloat16 at the shapes rmsnorm.py benchmarks.

On a CUDA GPU, beside rmsnorm.py:  python backward_stages.py
On a CPU:  TRITON_INTERPRET=1 python backward_stages.py  (checks the stages; times nothing)
Every stage is launched exactly as rmsnorm.py's backward launches it, and the file checks that
its stages give rmsnorm.py's results bit for bit before it times them.
"""

import json

import rmsnorm  # rmsnorm.py, beside this file
import torch

DTYPE = torch.bfloat16


# --8<-- [start:stages]
def stages(dy, x, w, rstd):
    """The backward's two stages as separate calls, on buffers allocated once: the first kernel
    (dx, and a partial sum of the weight's gradient per program), then the second stage as
    rmsnorm.py's dw_sum_kernel or as PyTorch's sum over the partial rows and a cast."""
    m, n = x.shape
    block, most, warps, num_stages = rmsnorm.bwd_plan(n, x.element_size(), x.device)
    rows_per_program = (m + most - 1) // most
    programs = (m + rows_per_program - 1) // rows_per_program
    dx, dw = torch.empty_like(x), torch.empty_like(w)
    partial = x.new_empty((programs, n), dtype=rstd.dtype)

    def first():
        rmsnorm.rmsnorm_bwd_kernel[(programs,)](
            dy, x, w, rstd, dx, partial, m, n, dy.stride(0), x.stride(0), dx.stride(0),
            rows_per_program, BLOCK=block, STAGES=num_stages, num_warps=warps,
        )  # fmt: skip

    def second_kernel():
        rmsnorm.dw_sum_kernel[((n + 31) // 32,)](
            partial, dw, programs, n, BLOCK_P=64, BLOCK_N=32, num_warps=4
        )

    def second_torch():
        dw.copy_(partial.sum(0))  # a reduction, then a cast into dw: two launches

    return first, second_kernel, second_torch, dx, dw


# --8<-- [end:stages]


def check(device: str, shape) -> None:
    """The stages give rmsnorm.py's backward bit for bit (same kernels, same launches); PyTorch's
    second stage, the same sum up to its order of adding."""
    gen = torch.Generator(device).manual_seed(shape[0] + shape[1])
    x = torch.randn(*shape, generator=gen, device=device, dtype=DTYPE)
    w = torch.rand(shape[1], generator=gen, device=device, dtype=DTYPE) + 0.5
    dy = torch.randn(*shape, generator=gen, device=device, dtype=DTYPE)
    _, rstd = rmsnorm.rmsnorm_forward(x, w, rmsnorm.EPS, raw=True)
    want_dx, want_dw = rmsnorm.rmsnorm_backward_launch(dy, x, w, rstd, raw=True)
    first, second_kernel, second_torch, dx, dw = stages(dy, x, w, rstd)
    first()
    second_kernel()
    if not (torch.equal(dx, want_dx) and torch.equal(dw, want_dw)):
        raise AssertionError(f"{shape}: the stages differ from rmsnorm.py's backward")
    second_torch()
    torch.testing.assert_close(dw, want_dw, rtol=1.6e-2, atol=1e-2)


# --8<-- [start:timing]
def timed(shape) -> list[dict]:
    """Kernel time of the copy, the whole backward with each second stage and the first kernel
    alone, one after another in one profiler session (rmsnorm.kernel_times), as rows."""
    gen = torch.Generator("cuda").manual_seed(shape[0] + shape[1])
    x = torch.randn(*shape, generator=gen, device="cuda", dtype=DTYPE)
    w = torch.rand(shape[1], generator=gen, device="cuda", dtype=DTYPE) + 0.5
    dy = torch.randn(*shape, generator=gen, device="cuda", dtype=DTYPE)
    _, rstd = rmsnorm.rmsnorm_forward(x, w, rmsnorm.EPS, raw=True)
    first, second_kernel, second_torch, _, _ = stages(dy, x, w, rstd)
    size = x.numel() * x.element_size()
    src = torch.empty(3 * size // 2, dtype=torch.uint8, device="cuda")  # as rmsnorm.py's copy
    dst = torch.empty_like(src)
    fns = {
        "copy": lambda: dst.copy_(src),
        "triton": lambda: (first(), second_kernel()),  # the whole backward, as rmsnorm.py's
        "triton_first_kernel": first,
        "triton_torch_sum": lambda: (first(), second_torch()),
    }
    times = rmsnorm.kernel_times(list(fns.values()))
    rows = [
        rmsnorm.timed_row(name, "backward", shape, DTYPE, "kernel", t, "bytes", 3 * size)
        for name, t in zip(fns, times, strict=True)
    ]
    return rows


# --8<-- [end:timing]


def part_figures(rows: list[dict]) -> dict:
    """From the kernel-time rows, per shape: the first kernel's share of the copy; the whole
    backward's time with PyTorch's second stage over its time with rmsnorm.py's; the first
    kernel's time over the whole backward's, with each second stage."""
    at = {(r["impl"], tuple(r["shape"])): r for r in rows}
    figures = {}
    for (impl, shape), whole in at.items():
        if impl != "triton":  # the whole backward, as rmsnorm.py's
            continue
        where, tag = f"x: ({shape[0]}, {shape[1]})", f"backward_bfloat16_{shape[0]}x{shape[1]}"
        copy, first = at["copy", shape], at["triton_first_kernel", shape]
        whole_torch_sum = at["triton_torch_sum", shape]
        figures |= {
            f"{tag}_first_kernel_of_copy": rmsnorm.ratio_figure(
                copy, first, "backward: a device copy of the same bytes, its kernel time over "
                "the first kernel's alone", where, "bfloat16"),
            f"{tag}_torch_sum_over_kernel": rmsnorm.ratio_figure(
                whole_torch_sum, whole, "backward: kernel time with PyTorch's sum and cast as "
                "the second stage over the time with rmsnorm.py's one kernel", where, "bfloat16"),
            f"{tag}_first_kernel_of_whole": rmsnorm.ratio_figure(
                first, whole, "backward: the first kernel's kernel time alone over the whole "
                "backward's, with rmsnorm.py's second stage", where, "bfloat16"),
            f"{tag}_first_kernel_of_whole_torch_sum": rmsnorm.ratio_figure(
                first, whole_torch_sum, "backward: the first kernel's kernel time alone over "
                "the whole backward's, with PyTorch's sum and cast", where, "bfloat16"),
        }  # fmt: skip
    return figures


if __name__ == "__main__":
    devices = ["cpu"] if rmsnorm.INTERPRETED else []
    devices += ["cuda"] if torch.cuda.is_available() else []
    for device in devices:
        for shape in [(1, 1), (7, 100), (300, 257)]:
            check(device, shape)
        print(f"stages on {device}: the same as rmsnorm.py's backward")
    if torch.cuda.is_available():
        rows = []
        for shape in rmsnorm.SHAPES:
            check("cuda", shape)
            rows += timed(shape)
        for row in rows:
            print(f"benchmark: {json.dumps(row)}")
        print("figures: " + json.dumps(part_figures(rows)))
    print("backward_stages: all checks passed")
