# /// script
# requires-python = ">=3.10"
# dependencies = ["torch", "triton", "numpy"]
#
# [tool.snippet]
# gpu = { min-cc = "8.0" }
# cpu = { interpreter = true }
# ///
"""A 2-D grid over a matrix: each program transposes BLOCK_M x BLOCK_N tiles, through strides.

On a CUDA GPU:  python transpose_2d.py
On a CPU:       TRITON_INTERPRET=1 python transpose_2d.py
Strides come from the tensors, so non-contiguous inputs need no copy. Offsets are 64-bit and grid
axis 1 is capped at its hardware limit, so any size works. Checks against x.t().
"""

import contextlib
import os

import torch
import triton
import triton.language as tl

INTERPRETED = os.environ.get("TRITON_INTERPRET") == "1"
DTYPES = (torch.float16, torch.float32, torch.float64, torch.int32)
GRID_AXIS_1_LIMIT = 65_535  # CUDA's limit for grid axes 1 and 2; axis 0 takes up to 2**31 - 1


# --8<-- [start:kernel]
@triton.jit
def transpose_kernel(
    x_ptr, out_ptr, M, N,
    stride_xm, stride_xn,  # (1)!
    stride_on, stride_om,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
):  # fmt: skip
    pid_m = tl.cast(tl.program_id(axis=0), tl.int64)  # (2)!
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    for pid_n in range(tl.program_id(axis=1), tl.cdiv(N, BLOCK_N), tl.num_programs(axis=1)):  # (3)!
        offs_n = tl.cast(pid_n, tl.int64) * BLOCK_N + tl.arange(0, BLOCK_N)
        mask = (offs_m[:, None] < M) & (offs_n[None, :] < N)  # (4)!
        x_ptrs = x_ptr + offs_m[:, None] * stride_xm + offs_n[None, :] * stride_xn
        out_ptrs = out_ptr + offs_n[None, :] * stride_on + offs_m[:, None] * stride_om
        tl.store(out_ptrs, tl.load(x_ptrs, mask=mask), mask=mask)


def transpose(
    x: torch.Tensor, out: torch.Tensor | None = None, block_m: int = 32, block_n: int = 32
) -> torch.Tensor:
    """x.t() as an (N, M) tensor, for a 2-D x of any size and strides; out may be any (N, M) view
    that does not overlap x. No autograd."""
    if x.dim() != 2:
        raise ValueError(f"expected a 2-D tensor, got {x.dim()}-D")
    if x.dtype not in DTYPES:
        raise TypeError(f"{x.dtype} is not supported; supported: {DTYPES}")
    if x.device.type != ("cpu" if INTERPRETED else "cuda"):
        raise ValueError(f"tensor is on {x.device}, not where this kernel runs")
    if torch.is_grad_enabled() and x.requires_grad:
        raise RuntimeError("transpose() has no autograd; use x.t() or torch.library.triton_op")
    for block in (block_m, block_n):
        if block <= 0 or block & (block - 1):
            raise ValueError(f"block sizes must be powers of 2, got {block}")
    M, N = x.shape
    if out is None:
        out = torch.empty((N, M), dtype=x.dtype, device=x.device)
    elif out.shape != (N, M) or out.dtype != x.dtype or out.device != x.device:
        raise ValueError(f"out must be an ({N}, {M}) {x.dtype} tensor on {x.device}")
    grid = (triton.cdiv(M, block_m), min(triton.cdiv(N, block_n), GRID_AXIS_1_LIMIT))  # (5)!
    if grid[0] > 2**31 - 1:
        raise ValueError(f"{M} rows need {grid[0]} programs on grid axis 0; raise block_m")
    with torch.cuda.device(x.device) if x.is_cuda else contextlib.nullcontext():
        transpose_kernel[grid](
            x, out, M, N, x.stride(0), x.stride(1), out.stride(0), out.stride(1),
            BLOCK_M=block_m, BLOCK_N=block_n,
        )  # fmt: skip
    return out


# --8<-- [end:kernel]


# --8<-- [start:check]
def guarded_transpose(x: torch.Tensor) -> torch.Tensor:
    """Transpose into the middle of a larger buffer; fail if anything around it changed."""
    M, N = x.shape
    buffer = torch.full((N + 2, M + 2), -7, dtype=x.dtype, device=x.device)
    out = transpose(x, out=buffer[1 : N + 1, 1 : M + 1])  # (3)!
    border = buffer.clone()
    border[1 : N + 1, 1 : M + 1] = -7
    assert bool((border == -7).all()), f"wrote outside the output for shape {(M, N)}"
    return out


def check_past_int32(device: str) -> None:
    """Rows 2**30 elements apart: offsets pass 2**31 although the view holds 120 elements."""
    if device == "cuda" and torch.cuda.mem_get_info()[0] < 5 * 2**30:
        print("offsets past 2**31: skipped, needs 5 GiB of free GPU memory")
        return
    base = torch.empty(2**31 + 2**20, dtype=torch.float16, device=device)  # (4)!
    x = base.as_strided((3, 40), (2**30, 1))
    out = base.as_strided((40, 3), (1, 2**30), storage_offset=64)
    base.as_strided((3, 128), (2**30, 1)).fill_(-7)
    values = torch.randn(3, 40, device=device).to(torch.float16)
    x.copy_(values)
    transpose(x, out=out)
    assert torch.equal(out, values.t()), "wrong values past 2**31"
    rows = base.as_strided((3, 128), (2**30, 1))
    assert bool((rows[:, 40:64] == -7).all() and (rows[:, 104:] == -7).all()), "wrote elsewhere"
    print("offsets past 2**31 (a (3, 40) view, rows 2**30 elements apart): equal to x.t()")


def check_grid_axis_1(device: str) -> None:
    """More column tiles than grid axis 1 holds: each program loops over several."""
    global GRID_AXIS_1_LIMIT
    saved = GRID_AXIS_1_LIMIT
    if INTERPRETED:  # (5)!
        GRID_AXIS_1_LIMIT = 3
        x = torch.randn(40, 300, device=device)
    else:
        x = torch.randn(2, GRID_AXIS_1_LIMIT * 32 + 5, device=device).to(torch.float16)
    tiles, programs = triton.cdiv(x.shape[1], 32), GRID_AXIS_1_LIMIT
    try:
        assert torch.equal(guarded_transpose(x), x.t())
    finally:
        GRID_AXIS_1_LIMIT = saved
    where = "under the interpreter" if INTERPRETED else "on the GPU"
    print(f"grid axis 1 {where}: {tiles} column tiles, {programs} programs: equal to x.t()")


def check() -> None:
    device = "cpu" if INTERPRETED else "cuda"
    torch.manual_seed(0)
    shapes = [(0, 5), (5, 0), (1, 1), (1, 33), (37, 130), (64, 64)]  # (1)!
    for dtype in DTYPES:
        for M, N in shapes:
            x = (torch.randn(M, N, device=device) * 100).to(dtype)
            assert torch.equal(guarded_transpose(x), x.t())
        wide = (torch.randn(48, 200, device=device) * 100).to(dtype)
        for view in (wide[:, ::3], wide.t(), wide[5:40, 7:150]):  # (2)!
            assert torch.equal(guarded_transpose(view), view.t())
    special = torch.tensor([[float("nan"), 1.0], [float("inf"), -float("inf")]], device=device)
    assert torch.equal(transpose(special).isnan(), special.t().isnan())
    print(f"shapes {shapes} and strided views: equal to x.t() for {[str(d) for d in DTYPES]}")
    check_past_int32(device)
    check_grid_axis_1(device)
    leaf = torch.ones(2, 3, device=device, requires_grad=True)
    try:
        transpose(leaf)
    except RuntimeError as exc:
        print(f"requires grad: rejected: {exc}")
    else:
        raise AssertionError("a tensor that requires grad was accepted")


if __name__ == "__main__":
    if not INTERPRETED and not torch.cuda.is_available():
        raise SystemExit(
            "No CUDA GPU here. On a CPU, run: TRITON_INTERPRET=1 python transpose_2d.py"
        )
    check()
    print("transpose_2d: all checks passed")
# --8<-- [end:check]
