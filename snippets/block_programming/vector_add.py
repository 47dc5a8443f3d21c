# /// script
# requires-python = ">=3.10"
#
# [tool.snippet]
# gpu = { min-cc = "8.0" }
# cpu = { interpreter = true }
# ///
"""Vector add in Triton: each program instance adds one block of BLOCK_SIZE elements.

On a CUDA GPU:  python vector_add.py
On a CPU:       TRITON_INTERPRET=1 python vector_add.py
Checks itself against torch (exact equality) and exits non-zero when wrong.
"""

import contextlib
import os

import torch
import triton
import triton.language as tl


# --8<-- [start:kernel]
@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):  # (1)!
    pid = tl.program_id(axis=0)  # (2)!
    block_start = pid * BLOCK_SIZE
    offsets = block_start + tl.arange(0, BLOCK_SIZE)  # (3)!
    mask = offsets < n_elements  # (4)!
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    tl.store(out_ptr + offsets, x + y, mask=mask)


# --8<-- [end:kernel]


# --8<-- [start:launch]
INTERPRETED = os.environ.get("TRITON_INTERPRET") == "1"
DTYPES = (torch.float16, torch.bfloat16, torch.float32, torch.float64)


def add(x: torch.Tensor, y: torch.Tensor, block_size: int = 1024) -> torch.Tensor:
    """x + y for two tensors of one shape, dtype and device. No broadcasting, no autograd."""
    if x.shape != y.shape:
        raise ValueError(f"shapes differ: {tuple(x.shape)} vs {tuple(y.shape)} (no broadcasting)")
    if x.dtype != y.dtype:
        raise TypeError(f"dtypes differ: {x.dtype} vs {y.dtype}; cast one first")
    if x.dtype not in DTYPES:
        raise TypeError(f"{x.dtype} is not supported; supported: {DTYPES}")
    if INTERPRETED and x.dtype == torch.bfloat16:  # (1)!
        raise TypeError("bfloat16 is not supported under TRITON_INTERPRET=1; run it on a GPU")
    if x.device != y.device:
        raise ValueError(f"tensors are on different devices: {x.device} and {y.device}")
    wanted = "cpu" if INTERPRETED else "cuda"
    if x.device.type != wanted:
        raise ValueError(
            f"tensors are on {x.device}, the kernel needs {wanted} tensors"
            + ("" if INTERPRETED else " (or set TRITON_INTERPRET=1 to run on CPU tensors)")
        )
    if torch.is_grad_enabled() and (x.requires_grad or y.requires_grad):
        raise RuntimeError("add() has no autograd; use torch.library.triton_op to add a backward")
    if x.numel() >= 2**31:  # (2)!
        raise ValueError(f"{x.numel()} elements overflow the kernel's int32 offsets")
    if block_size <= 0 or block_size & (block_size - 1):
        raise ValueError(f"block_size must be a power of 2, got {block_size}")

    x, y = x.contiguous(), y.contiguous()  # (3)!
    out = torch.empty_like(x)
    n = out.numel()
    grid = lambda meta: (triton.cdiv(n, meta["BLOCK_SIZE"]),)  # (4)!
    with torch.cuda.device(x.device) if x.is_cuda else contextlib.nullcontext():  # (5)!
        add_kernel[grid](x, y, out, n, BLOCK_SIZE=block_size)
    return out


# --8<-- [end:launch]


# --8<-- [start:check]
def expect_error(error: type[Exception], call) -> None:
    try:
        call()
    except error as exc:
        print(f"  rejected as expected: {type(exc).__name__}: {exc}")
    else:
        raise AssertionError(f"expected {error.__name__}, got a result")


def check() -> None:
    device = "cpu" if INTERPRETED else "cuda"
    torch.manual_seed(0)
    dtypes = [d for d in DTYPES if not (INTERPRETED and d == torch.bfloat16)]
    sizes = [0, 1, 7, 1000, 1024, 1025, 98_432]  # (1)!
    for dtype in dtypes:
        for n in sizes:
            x = torch.randn(n, device=device).to(dtype)
            y = torch.randn(n, device=device).to(dtype)
            torch.testing.assert_close(add(x, y), x + y, rtol=0, atol=0)  # (2)!
        print(f"  {str(dtype):15} sizes {sizes}: equal to x + y")

    special = torch.tensor([float("nan"), float("inf"), -float("inf"), 1.0], device=device)
    other = torch.tensor([1.0, float("inf"), float("inf"), -float("inf")], device=device)
    torch.testing.assert_close(add(special, other), special + other, rtol=0, atol=0, equal_nan=True)
    print("  NaN and Inf propagate like x + y")

    base = torch.randn(64, 130, device=device)
    strided, transposed = base[:, ::2], base.t()  # (3)!
    torch.testing.assert_close(add(strided, strided), strided + strided, rtol=0, atol=0)
    torch.testing.assert_close(add(transposed, base.t()), transposed + base.t(), rtol=0, atol=0)
    print("  non-contiguous inputs (slice, transpose) give the same values as x + y")

    elsewhere = torch.empty(4, device="meta" if INTERPRETED else "cpu")
    expect_error(ValueError, lambda: add(elsewhere, elsewhere))
    expect_error(
        ValueError, lambda: add(torch.ones(3, device=device), torch.ones(4, device=device))
    )
    expect_error(
        TypeError, lambda: add(torch.ones(3, device=device), torch.ones(3, device=device).half())
    )
    expect_error(
        TypeError,
        lambda: add(
            torch.ones(3, device=device, dtype=torch.int64),
            torch.ones(3, device=device, dtype=torch.int64),
        ),
    )
    leaf = torch.ones(3, device=device, requires_grad=True)
    expect_error(RuntimeError, lambda: add(leaf, leaf))


if __name__ == "__main__":
    if not INTERPRETED and not torch.cuda.is_available():
        raise SystemExit("No CUDA GPU here. On a CPU, run: TRITON_INTERPRET=1 python vector_add.py")
    print(
        f"vector_add on {'CPU (TRITON_INTERPRET=1)' if INTERPRETED else torch.cuda.get_device_name()}"
    )
    check()
    print("vector_add: all checks passed")
# --8<-- [end:check]
