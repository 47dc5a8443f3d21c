# /// script
# requires-python = ">=3.10"
# dependencies = ["torch", "triton", "numpy"]
#
# [tool.snippet]
# gpu = { min-cc = "8.0" }
# cpu = { interpreter = true }
# ///
"""Row-wise maximum: one program per row, a masked load whose masked-off elements must not win.

On a CUDA GPU:  python row_max.py
On a CPU:       TRITON_INTERPRET=1 python row_max.py
Shows why `other=` matters on a masked load, and checks against torch.amax(x, dim=1).
"""

import os

import torch
import triton
import triton.language as tl

INTERPRETED = os.environ.get("TRITON_INTERPRET") == "1"
DTYPES = (torch.float16, torch.float32, torch.float64)


# --8<-- [start:kernel]
@triton.jit
def row_max_kernel(
    x_ptr, out_ptr, N, stride_row, stride_col, BLOCK_N: tl.constexpr, OTHER: tl.constexpr
):
    row = tl.program_id(axis=0)
    cols = tl.arange(0, BLOCK_N)
    mask = cols < N
    x = tl.load(x_ptr + row * stride_row + cols * stride_col, mask=mask, other=OTHER)  # (1)!
    has_nan = tl.max((x != x).to(tl.int32), axis=0) > 0  # (2)!
    tl.store(out_ptr + row, tl.where(has_nan, float("nan"), tl.max(x, axis=0)))


def row_max(x: torch.Tensor, other: float = float("-inf")) -> torch.Tensor:
    """torch.amax(x, dim=1) for a 2-D float tensor with 1 to 65536 columns."""
    if x.dim() != 2 or x.dtype not in DTYPES:
        raise TypeError(f"expected a 2-D tensor of {DTYPES}, got {x.dim()}-D {x.dtype}")
    if x.device.type != ("cpu" if INTERPRETED else "cuda"):
        raise ValueError(f"tensor is on {x.device}, not where this kernel runs")
    M, N = x.shape
    if not 1 <= N <= 65536:
        raise ValueError(
            f"rows must have 1 to 65536 columns, got {N} (a max of nothing is undefined)"
        )
    if (M - 1) * x.stride(0) + (N - 1) * x.stride(1) >= 2**31:
        raise ValueError("offsets past 2**31 would overflow the kernel's int32 arithmetic")
    out = torch.empty(M, dtype=x.dtype, device=x.device)
    block_n = triton.next_power_of_2(N)  # (3)!
    row_max_kernel[(M,)](x, out, N, x.stride(0), x.stride(1), BLOCK_N=block_n, OTHER=other)
    return out


# --8<-- [end:kernel]


@triton.jit
def plain_max_kernel(x_ptr, out_ptr, N, BLOCK_N: tl.constexpr):
    cols = tl.arange(0, BLOCK_N)
    tl.store(out_ptr, tl.max(tl.load(x_ptr + cols, mask=cols < N, other=-float("inf")), axis=0))


if __name__ == "__main__":
    if not INTERPRETED and not torch.cuda.is_available():
        raise SystemExit("No CUDA GPU here. On a CPU, run: TRITON_INTERPRET=1 python row_max.py")
    device = "cpu" if INTERPRETED else "cuda"
    torch.manual_seed(0)
    # --8<-- [start:other]
    negative = (-torch.rand(4, 100) - 1.0).to(device)  # every element in [-2, -1)
    print(f"other=0.0:  {row_max(negative, other=0.0).tolist()}")  # (1)!
    print(f"other=-inf: {[round(v, 4) for v in row_max(negative).tolist()]}")
    assert (row_max(negative, other=0.0) == 0).all()  # wrong: 0.0 is not in the rows
    assert torch.equal(row_max(negative), torch.amax(negative, dim=1))
    # --8<-- [end:other]
    for dtype in DTYPES:
        for M, N in [(0, 3), (1, 1), (3, 7), (64, 1000), (5, 65536)]:
            x = torch.randn(M, N, device=device).to(dtype)
            assert torch.equal(row_max(x), torch.amax(x, dim=1)), (dtype, M, N)
        wide = torch.randn(96, 300, device=device).to(dtype)
        for view in (wide[:, ::3], wide.t(), wide[10:20, 5:290]):
            assert torch.equal(row_max(view), torch.amax(view, dim=1))
    special = torch.tensor(
        [[1.0, float("nan"), 3.0], [float("inf"), 1.0, 2.0], [-float("inf")] * 3], device=device
    )
    got = row_max(special)  # NaN propagates like torch.amax; inf and -inf are ordinary values
    torch.testing.assert_close(got, torch.amax(special, dim=1), rtol=0, atol=0, equal_nan=True)
    plain = torch.empty(1, device=device)  # tl.max alone, without the has_nan line
    plain_max_kernel[(1,)](special, plain, 3, BLOCK_N=4)
    where = "the interpreter" if INTERPRETED else torch.cuda.get_device_name()
    print(f"tl.max alone over [1.0, nan, 3.0] on {where}: {plain.item()}")
    assert plain.item() == 3.0  # NaN skipped, on the GPU and in the interpreter alike
    far = torch.empty(2**31 + 2**20, dtype=torch.float16, device=device)  # never filled
    for bad in (
        torch.empty(3, 0, device=device),
        torch.ones(3, device=device),
        far.as_strided((3, 8), (2**30, 1)),  # rows 2**30 elements apart
    ):
        try:
            row_max(bad)
        except (ValueError, TypeError) as exc:
            print(f"  rejected as expected: {type(exc).__name__}: {exc}")
        else:
            raise AssertionError("expected an error")
    print("row_max: all checks passed")
