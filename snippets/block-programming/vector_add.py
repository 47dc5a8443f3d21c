# /// script
# requires-python = ">=3.10"
# dependencies = ["torch", "triton", "numpy"]
#
# [tool.snippet]
# gpu = { min-cc = "8.0" }
# cpu = { interpreter = true }
# ///
"""Vector add in Triton: each program instance adds one block of BLOCK_SIZE elements.

On a CUDA GPU:  python vector_add.py
On a CPU:       TRITON_INTERPRET=1 python vector_add.py
Checks itself against torch (exact equality), checks that nothing is written past the end of the
output, and exits non-zero when wrong.
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


def add(
    x: torch.Tensor, y: torch.Tensor, out: torch.Tensor | None = None, block_size: int = 1024
) -> torch.Tensor:
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
    if torch.is_grad_enabled() and (x.requires_grad or y.requires_grad):  # (2)!
        raise RuntimeError("add() has no autograd; use torch.library.triton_op to add a backward")
    if x.numel() >= 2**31:  # (3)!
        raise ValueError(f"{x.numel()} elements overflow the kernel's int32 offsets")
    if block_size <= 0 or block_size & (block_size - 1):
        raise ValueError(f"block_size must be a power of 2, got {block_size}")
    if out is None:
        out = torch.empty(x.shape, dtype=x.dtype, device=x.device)
    elif out.shape != x.shape or out.dtype != x.dtype or not out.is_contiguous():
        raise ValueError("out must be a contiguous tensor of the inputs' shape and dtype")

    x, y = x.contiguous(), y.contiguous()  # (4)!
    n = out.numel()
    grid = lambda meta: (triton.cdiv(meta["n_elements"], meta["BLOCK_SIZE"]),)  # (5)!
    with torch.cuda.device(x.device) if x.is_cuda else contextlib.nullcontext():  # (6)!
        add_kernel[grid](x, y, out, n, BLOCK_SIZE=block_size)
    return out


# --8<-- [end:launch]


# --8<-- [start:check]
SENTINEL = 12345.0  # (1)!


def guarded_add(x: torch.Tensor, y: torch.Tensor, block_size: int) -> torch.Tensor:
    """add() into a view cut from a larger buffer; fail if anything outside the view changed."""
    n, pad = x.numel(), block_size
    buffer = torch.full((pad + n + pad,), SENTINEL, dtype=x.dtype, device=x.device)
    out = buffer[pad : pad + n].view(x.shape)
    add(x, y, out=out, block_size=block_size)
    outside = torch.cat([buffer[:pad], buffer[pad + n :]])
    if not bool((outside == SENTINEL).all()):
        raise AssertionError(f"add() wrote outside its output (n={n}, BLOCK_SIZE={block_size})")
    return out


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
    sizes = [0, 1, 7, 1000, 1024, 1025, 98_432]  # (2)!
    for dtype in dtypes:
        for n in sizes:
            for block_size in (128, 1024):
                x = torch.randn(n, device=device).to(dtype)
                y = torch.randn(n, device=device).to(dtype)
                got = guarded_add(x, y, block_size)
                torch.testing.assert_close(got, x + y, rtol=0, atol=0)  # (3)!
        print(f"  {str(dtype):15} sizes {sizes}: equal to x + y, nothing written past the end")

    special = torch.tensor([float("nan"), float("inf"), -float("inf"), 1.0], device=device)
    other = torch.tensor([1.0, float("inf"), float("inf"), -float("inf")], device=device)
    torch.testing.assert_close(add(special, other), special + other, rtol=0, atol=0, equal_nan=True)
    print("  NaN and Inf propagate like x + y")

    base = torch.randn(64, 130, device=device)
    strided, transposed, rows = base[:, ::2], base.t(), base[8:16]  # (4)!
    assert rows.is_contiguous() and rows.contiguous().data_ptr() == rows.data_ptr()
    assert not strided.is_contiguous() and strided.contiguous().data_ptr() != strided.data_ptr()
    for view in (strided, transposed, rows):
        torch.testing.assert_close(add(view, view), view + view, rtol=0, atol=0)
    print("  non-contiguous inputs (slice with a step, transpose) give the same values as x + y")

    elsewhere = torch.empty(4, device="meta" if INTERPRETED else "cpu")
    expect_error(ValueError, lambda: add(elsewhere, elsewhere))
    expect_error(
        ValueError, lambda: add(torch.ones(3, device=device), torch.ones(4, device=device))
    )
    expect_error(
        TypeError, lambda: add(torch.ones(3, device=device), torch.ones(3, device=device).half())
    )
    ints = torch.ones(3, device=device, dtype=torch.int64)
    expect_error(TypeError, lambda: add(ints, ints))
    expect_error(ValueError, lambda: add(base, base, block_size=1000))
    leaf = torch.ones(3, device=device, requires_grad=True)
    expect_error(RuntimeError, lambda: add(leaf, leaf))
    with torch.no_grad():  # (5)!
        torch.testing.assert_close(add(leaf, leaf), leaf.detach() * 2, rtol=0, atol=0)
    print("  under torch.no_grad() a tensor that requires grad is accepted (no graph is built)")


if __name__ == "__main__":
    if not INTERPRETED and not torch.cuda.is_available():
        raise SystemExit("No CUDA GPU here. On a CPU, run: TRITON_INTERPRET=1 python vector_add.py")
    print(
        f"vector_add on {'CPU (TRITON_INTERPRET=1)' if INTERPRETED else torch.cuda.get_device_name()}"
    )
    check()
    print("vector_add: all checks passed")
# --8<-- [end:check]
