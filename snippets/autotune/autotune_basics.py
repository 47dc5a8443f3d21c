# /// script
# requires-python = ">=3.10"
# dependencies = ["torch", "triton", "numpy"]
#
# [tool.snippet]
# gpu = { min-cc = "8.0", timing = true }
# cpu = { interpreter = true }
# ///
"""An autotuned vector add: Triton times each config on the first call and keeps the fastest.

On a CUDA GPU:  python autotune_basics.py
On a CPU:       TRITON_INTERPRET=1 python autotune_basics.py
Checks itself against torch (exact equality), checks that nothing is written past the end of the
output, and exits non-zero when wrong.
"""

import os
import time

import torch
import triton
import triton.language as tl

INTERPRETED = os.environ.get("TRITON_INTERPRET") == "1"


# --8<-- [start:timer]
def cpu_do_bench(fn, quantiles):
    """Stand-in for the GPU timer under TRITON_INTERPRET=1: run fn three times."""
    times_ms = []
    for _ in range(3):
        start = time.perf_counter()
        fn()
        times_ms.append((time.perf_counter() - start) * 1e3)
    times_ms.sort()
    return [times_ms[round(q * (len(times_ms) - 1))] for q in quantiles]  # (1)!


# --8<-- [end:timer]


# --8<-- [start:kernel]
@triton.autotune(
    configs=[
        triton.Config({"BLOCK_SIZE": 256}, num_warps=2),  # (1)!
        triton.Config({"BLOCK_SIZE": 1024}, num_warps=4),
        triton.Config({"BLOCK_SIZE": 4096}, num_warps=8),
    ],
    key=["n_elements"],  # (2)!
    do_bench=cpu_do_bench if INTERPRETED else None,  # (3)!
)
@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    offsets = tl.program_id(axis=0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    tl.store(out_ptr + offsets, x + y, mask=mask)


def add(x: torch.Tensor, y: torch.Tensor, out: torch.Tensor | None = None) -> torch.Tensor:
    if x.shape != y.shape or x.dtype != y.dtype or x.device != y.device:
        raise ValueError("x and y need one shape, dtype and device (no broadcasting)")
    if x.dtype not in (torch.float16, torch.bfloat16, torch.float32):
        raise TypeError(f"{x.dtype} is not supported")
    if INTERPRETED and x.dtype == torch.bfloat16:
        raise TypeError("bfloat16 is silently wrong under TRITON_INTERPRET=1; run it on a GPU")
    if x.device.type != ("cpu" if INTERPRETED else "cuda"):
        raise ValueError(f"tensors are on {x.device}, the kernel needs another device")
    if x.numel() >= 2**31:
        raise ValueError("the kernel's offsets are 32-bit")
    if out is None:
        out = torch.empty_like(x, memory_format=torch.contiguous_format)
    elif out.shape != x.shape or out.dtype != x.dtype or not out.is_contiguous():
        raise ValueError("out must be a contiguous tensor of the inputs' shape and dtype")
    n = out.numel()
    if n == 0:
        return out  # (4)!
    grid = lambda meta: (triton.cdiv(meta["n_elements"], meta["BLOCK_SIZE"]),)  # (5)!
    add_kernel[grid](x.contiguous(), y.contiguous(), out, n)
    return out


# --8<-- [end:kernel]

SENTINEL = 12345.0


def guarded_add(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """add() into a view cut from a larger buffer; fail if anything outside the view changed."""
    n, pad = x.numel(), 4096
    buffer = torch.full((pad + n + pad,), SENTINEL, dtype=x.dtype, device=x.device)
    out = buffer[pad : pad + n].view(x.shape)
    add(x, y, out=out)
    outside = torch.cat([buffer[:pad], buffer[pad + n :]])
    if not bool((outside == SENTINEL).all()):
        raise AssertionError(f"add() wrote outside its output (n={n})")
    return out


def expect_error(error: type[Exception], call) -> None:
    try:
        call()
    except error as exc:
        print(f"  rejected as expected: {type(exc).__name__}: {exc}")
    else:
        raise AssertionError(f"expected {error.__name__}, got a result")


def check(device: str) -> None:
    dtypes = [torch.float16, torch.float32] + ([] if INTERPRETED else [torch.bfloat16])
    for dtype in dtypes:
        for n in (0, 1, 1000, 98_432):
            x = torch.randn(n).to(dtype).to(device)
            y = torch.randn(n).to(dtype).to(device)
            torch.testing.assert_close(guarded_add(x, y), x + y, rtol=0, atol=0)
    special = torch.tensor([float("nan"), float("inf"), -float("inf"), 1.0], device=device)
    other = torch.tensor([1.0, float("inf"), float("inf"), -float("inf")], device=device)
    torch.testing.assert_close(add(special, other), special + other, rtol=0, atol=0, equal_nan=True)
    base = torch.randn(64, 130).to(device)
    for view in (base[:, ::2], base.t()):
        torch.testing.assert_close(add(view, view), view + view, rtol=0, atol=0)
    ints = torch.ones(3, dtype=torch.int32, device=device)
    expect_error(TypeError, lambda: add(ints, ints))
    expect_error(ValueError, lambda: add(base, base[:, :2]))
    print("checks: equal to x + y for 0, 1, 1000 and 98432 elements, NaN/Inf, strided views")


if __name__ == "__main__":
    if not INTERPRETED and not torch.cuda.is_available():
        raise SystemExit(
            "No CUDA GPU here. On a CPU, run: TRITON_INTERPRET=1 python autotune_basics.py"
        )
    device = "cpu" if INTERPRETED else "cuda"
    torch.manual_seed(0)
    # --8<-- [start:run]
    n = 100_000
    x, y = torch.rand(n).to(device), torch.rand(n).to(device)
    out = add(x, y)  # (1)!
    torch.testing.assert_close(out, x + y, rtol=0, atol=0)
    best = add_kernel.best_config  # (2)!
    print(f"chosen: BLOCK_SIZE={best.kwargs['BLOCK_SIZE']}, num_warps={best.num_warps}")
    for config, (median, p20, p80) in add_kernel.configs_timings.items():  # (3)!
        print(
            f"  {config.kwargs} num_warps={config.num_warps}: {median:.4f} ms ({p20:.4f}-{p80:.4f})"
        )
    print(f"tuned keys: {list(add_kernel.cache)}")  # (4)!
    # --8<-- [end:run]
    assert list(add_kernel.cache) == [(n, "torch.float32", "torch.float32", "torch.float32")]
    check(device)
    print("autotune_basics: all checks passed")
