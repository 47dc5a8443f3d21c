# /// script
# requires-python = ">=3.10"
# dependencies = ["torch", "triton", "numpy"]
#
# [tool.snippet]
# gpu = { min-cc = "8.0" }
# cpu = { interpreter = true }
# ///
"""A 2-D grid over a matrix: each program transposes one BLOCK_M x BLOCK_N tile, through strides.

On a CUDA GPU:  python transpose_2d.py
On a CPU:       TRITON_INTERPRET=1 python transpose_2d.py
Strides come from the tensors, so non-contiguous inputs need no copy. Checks against x.t().
"""

import os

import torch
import triton
import triton.language as tl

INTERPRETED = os.environ.get("TRITON_INTERPRET") == "1"
DTYPES = (torch.float16, torch.float32, torch.float64, torch.int32)


# --8<-- [start:kernel]
@triton.jit
def transpose_kernel(
    x_ptr, out_ptr, M, N,
    stride_xm, stride_xn,  # (1)!
    stride_on, stride_om,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
):  # fmt: skip
    pid_m = tl.program_id(axis=0)  # (2)!
    pid_n = tl.program_id(axis=1)
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    mask = (offs_m[:, None] < M) & (offs_n[None, :] < N)  # (3)!
    tile = tl.load(x_ptr + offs_m[:, None] * stride_xm + offs_n[None, :] * stride_xn, mask=mask)
    tl.store(out_ptr + offs_n[None, :] * stride_on + offs_m[:, None] * stride_om, tile, mask=mask)


def transpose(
    x: torch.Tensor, out: torch.Tensor | None = None, block_m: int = 32, block_n: int = 32
) -> torch.Tensor:
    """x.t() as an (N, M) tensor, for any 2-D x (any strides); out may be any (N, M) view."""
    if x.dim() != 2:
        raise ValueError(f"expected a 2-D tensor, got {x.dim()}-D")
    if x.dtype not in DTYPES:
        raise TypeError(f"{x.dtype} is not supported; supported: {DTYPES}")
    if x.device.type != ("cpu" if INTERPRETED else "cuda"):
        raise ValueError(f"tensor is on {x.device}, not where this kernel runs")
    M, N = x.shape
    if out is None:
        out = torch.empty((N, M), dtype=x.dtype, device=x.device)
    elif out.shape != (N, M) or out.dtype != x.dtype:
        raise ValueError(f"out must be ({N}, {M}) {x.dtype}")
    grid = (triton.cdiv(M, block_m), triton.cdiv(N, block_n))  # (4)!
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


if __name__ == "__main__":
    if not INTERPRETED and not torch.cuda.is_available():
        raise SystemExit(
            "No CUDA GPU here. On a CPU, run: TRITON_INTERPRET=1 python transpose_2d.py"
        )
    check()
    print("transpose_2d: all checks passed")
# --8<-- [end:check]
