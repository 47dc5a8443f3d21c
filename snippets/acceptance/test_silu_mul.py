# /// script
# requires-python = ">=3.10"
# dependencies = ["torch", "triton", "numpy", "pytest"]
#
# [tool.snippet]
# gpu = { min-cc = "8.0" }
# cpu = { interpreter = true }
# ///
"""An input matrix for an elementwise kernel, as pytest tests: copy it next to your own kernel.

On a CUDA GPU:  python test_silu_mul.py      (or: pytest test_silu_mul.py)
On a CPU:       TRITON_INTERPRET=1 python test_silu_mul.py
Every case writes into a guarded buffer and is compared with the float64 reference at the
dtype's tolerance; every invalid input must raise. Prints a one-line summary and exits non-zero
when a test fails.
"""

import collections
import contextlib
import os
import sys

import pytest
import torch
import torch.nn.functional as F
import triton
import triton.language as tl

INTERPRETED = os.environ.get("TRITON_INTERPRET") == "1"
DEVICE = "cpu" if INTERPRETED else "cuda"

# The contract and the kernel under test: the same as silu_mul.py. ---------------------------
DTYPES = (torch.float16, torch.bfloat16, torch.float32, torch.float64)
ULPS = {torch.float16: 2, torch.bfloat16: 2, torch.float32: 128, torch.float64: 32}


def tolerance(dtype: torch.dtype) -> dict:
    info = torch.finfo(dtype)
    return {"rtol": ULPS[dtype] * info.eps, "atol": info.tiny}


def reference(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    return (F.silu(a.double()) * b.double()).to(a.dtype)


@triton.jit
def silu_mul_kernel(
    a_ptr, b_ptr, out_ptr, M, N,
    stride_am, stride_an, stride_bm, stride_bn, stride_om, stride_on,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, FP64: tl.constexpr,
):  # fmt: skip
    pid = tl.program_id(axis=0)
    blocks_n = tl.cdiv(N, BLOCK_N)
    rows = (pid // blocks_n) * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = (pid % blocks_n) * BLOCK_N + tl.arange(0, BLOCK_N)
    mask = (rows[:, None] < M) & (cols[None, :] < N)
    r, c = rows[:, None].to(tl.int64), cols[None, :].to(tl.int64)
    a = tl.load(a_ptr + r * stride_am + c * stride_an, mask=mask)
    b = tl.load(b_ptr + r * stride_bm + c * stride_bn, mask=mask)
    if not FP64:
        a, b = a.to(tl.float32), b.to(tl.float32)
    e = tl.exp(-tl.abs(a))
    out = a * tl.where(a >= 0, 1.0, e) / (1 + e) * b
    tl.store(out_ptr + r * stride_om + c * stride_on, out.to(out_ptr.dtype.element_ty), mask=mask)


def silu_mul(a: torch.Tensor, b: torch.Tensor, out: torch.Tensor | None = None) -> torch.Tensor:
    if a.dtype != b.dtype:
        raise TypeError(f"dtypes differ: {a.dtype} vs {b.dtype}")
    if a.dtype not in DTYPES:
        raise TypeError(f"{a.dtype} is not supported; supported: {DTYPES}")
    if INTERPRETED and a.dtype == torch.bfloat16:
        raise TypeError("bfloat16 is not supported under TRITON_INTERPRET=1; run it on a GPU")
    if a.device != b.device:
        raise ValueError(f"tensors are on different devices: {a.device} and {b.device}")
    if a.device.type != ("cpu" if INTERPRETED else "cuda"):
        raise ValueError(f"tensors are on {a.device}, not where this kernel runs")
    if torch.is_grad_enabled() and (a.requires_grad or b.requires_grad):
        raise RuntimeError("silu_mul() has no backward")
    try:
        shape = torch.broadcast_shapes(a.shape, b.shape)
    except RuntimeError as exc:
        raise ValueError(f"shapes {tuple(a.shape)} and {tuple(b.shape)} do not broadcast") from exc
    if out is None:
        out = torch.empty(shape, dtype=a.dtype, device=a.device)
    elif out.shape != shape or out.dtype != a.dtype or out.device != a.device:
        raise ValueError(f"out must be a {a.dtype} tensor of shape {tuple(shape)} on {a.device}")
    elif any(s == 0 and n > 1 for s, n in zip(out.stride(), out.shape, strict=True)):
        raise ValueError("out is a broadcast view: several elements would share one address")
    if out.numel() == 0:
        return out
    n = shape[-1] if shape else 1
    a2, b2 = (t.expand(shape).reshape(-1, n) for t in (a, b))
    try:
        out2 = out.view(-1, n)
    except RuntimeError as exc:
        raise ValueError("out's leading dimensions cannot be merged without a copy") from exc
    m = out2.shape[0]
    block_n = min(triton.next_power_of_2(n), 1024)
    block_m = min(4096 // block_n, triton.next_power_of_2(m))
    grid = (triton.cdiv(m, block_m) * triton.cdiv(n, block_n),)
    with torch.cuda.device(a.device) if a.is_cuda else contextlib.nullcontext():
        silu_mul_kernel[grid](
            a2, b2, out2, m, n, *a2.stride(), *b2.stride(), *out2.stride(),
            BLOCK_M=block_m, BLOCK_N=block_n, FP64=a.dtype == torch.float64,
        )  # fmt: skip
    return out


# The input matrix. ----------------------------------------------------------------------------
# --8<-- [start:cases]
GENERATOR = torch.Generator().manual_seed(0)


def randn(*shape: int, dtype: torch.dtype, scale: float = 1.0) -> torch.Tensor:
    values = torch.randn(shape, generator=GENERATOR) * scale  # (1)!
    return values.to(dtype).to(DEVICE)


def special(dtype: torch.dtype) -> tuple[torch.Tensor, torch.Tensor]:
    big = torch.finfo(dtype).max
    values = [float("nan"), float("inf"), -float("inf"), big, -big, 0.0, -0.0, 30.0, -89.0]
    a = torch.tensor(values).to(dtype)
    grid_a, grid_b = torch.meshgrid(a, a, indexing="ij")  # (2)!
    return grid_a.to(DEVICE), grid_b.to(DEVICE)


CASES = {  # name: dtype -> (a, b)
    "one element": lambda d: (randn(1, dtype=d), randn(1, dtype=d)),
    "0-d tensors": lambda d: (randn(dtype=d), randn(dtype=d)),
    "no rows": lambda d: (randn(0, 7, dtype=d), randn(0, 7, dtype=d)),
    "no columns": lambda d: (randn(5, 0, dtype=d), randn(5, 0, dtype=d)),
    "non-power-of-2": lambda d: (randn(37, 1000, dtype=d), randn(37, 1000, dtype=d)),
    "one past a block": lambda d: (randn(3, 1025, dtype=d), randn(3, 1025, dtype=d)),
    "one column": lambda d: (randn(1025, 1, dtype=d), randn(1025, 1, dtype=d)),
    "3-d": lambda d: (randn(2, 3, 257, dtype=d), randn(2, 3, 257, dtype=d)),
    "broadcast a row": lambda d: (randn(37, 1000, dtype=d), randn(1000, dtype=d)),  # (3)!
    "broadcast a column": lambda d: (randn(37, 1, dtype=d), randn(37, 1000, dtype=d)),
    "broadcast both": lambda d: (randn(37, 1, dtype=d), randn(1, 1000, dtype=d)),
    "negative values": lambda d: (
        randn(64, 300, dtype=d, scale=-20).abs().neg(),
        randn(64, 300, dtype=d),
    ),
    "NaN, Inf, extremes": special,
    "transposed": lambda d: (randn(300, 64, dtype=d).t(), randn(300, 64, dtype=d).t()),
    "sliced with a step": lambda d: (
        randn(64, 600, dtype=d)[:, ::2],
        randn(64, 900, dtype=d)[:, ::3],
    ),
    "gate and up halves": lambda d: randn(64, 600, dtype=d).chunk(2, dim=-1),  # (4)!
    "largest: 8192 x 14336": lambda d: (
        torch.randn(8192, 14336, device=DEVICE).to(d),
        torch.randn(8192, 14336, device=DEVICE).to(d),
    ),
}
ONLY_ON_GPU = pytest.mark.skipif(
    INTERPRETED, reason="too slow or unsupported under the interpreter"
)
DTYPE_PARAMS = [pytest.param(d, marks=ONLY_ON_GPU) if d == torch.bfloat16 else d for d in DTYPES]
CASE_PARAMS = [pytest.param(c, marks=ONLY_ON_GPU) if c.startswith("largest") else c for c in CASES]
# --8<-- [end:cases]


# --8<-- [start:tests]
SENTINEL = 12345.0


def guarded_out(shape: torch.Size, dtype: torch.dtype):
    """A 2-D output is a window of a larger matrix (non-contiguous); others sit inside a
    1-D buffer. Everything around the output holds SENTINEL and must still hold it."""
    pad = 64
    if len(shape) == 2:
        buffer = torch.full((shape[0] + 2 * pad, shape[1] + 2 * pad), SENTINEL, dtype=dtype)
        outside = torch.ones(buffer.shape, dtype=torch.bool)
        outside[pad : pad + shape[0], pad : pad + shape[1]] = False
        buffer, outside = buffer.to(DEVICE), outside.to(DEVICE)
        return buffer[pad : pad + shape[0], pad : pad + shape[1]], buffer, outside
    n = shape.numel()
    buffer = torch.full((n + 2 * pad,), SENTINEL, dtype=dtype, device=DEVICE)
    outside = torch.ones(buffer.shape, dtype=torch.bool, device=DEVICE)
    outside[pad : pad + n] = False
    return buffer[pad : pad + n].view(shape), buffer, outside


@pytest.mark.parametrize("dtype", DTYPE_PARAMS, ids=str)
@pytest.mark.parametrize("case", CASE_PARAMS)
def test_matches_reference(case: str, dtype: torch.dtype):
    a, b = CASES[case](dtype)
    out, buffer, outside = guarded_out(torch.broadcast_shapes(a.shape, b.shape), dtype)
    silu_mul(a, b, out=out)
    assert (buffer[outside] == SENTINEL).all(), "wrote outside its output"  # (1)!
    torch.testing.assert_close(out, reference(a, b), equal_nan=True, **tolerance(dtype))


def x(*shape: int, **kwargs) -> torch.Tensor:
    return torch.ones(shape, device=DEVICE, **kwargs)


REJECTED = {  # name: (error, call)
    "integer inputs": (TypeError, lambda: silu_mul(x(3).long(), x(3).long())),
    "mixed dtypes": (TypeError, lambda: silu_mul(x(3), x(3).double())),
    "shapes that do not broadcast": (ValueError, lambda: silu_mul(x(3, 4), x(3))),
    "out of the wrong shape": (ValueError, lambda: silu_mul(x(3), x(3), out=x(4))),
    "out of the wrong dtype": (ValueError, lambda: silu_mul(x(3), x(3), out=x(3).double())),
    "out that is a broadcast view": (ValueError, lambda: silu_mul(x(3), x(3), out=x(1).expand(3))),
    "inputs on another device": (ValueError, lambda: silu_mul(x(3).to("meta"), x(3).to("meta"))),
    "inputs that require grad": (RuntimeError, lambda: silu_mul(x(3, requires_grad=True), x(3))),
}


@pytest.mark.parametrize("name", REJECTED)
def test_rejects(name: str):
    error, call = REJECTED[name]
    with pytest.raises(error):  # (2)!
        call()


# --8<-- [end:tests]


# --8<-- [start:main]
class Tally:
    """A pytest plugin that counts outcomes, for a summary line without timings."""

    def __init__(self):
        self.counts = collections.Counter()

    def pytest_runtest_logreport(self, report):
        if report.failed or report.skipped or report.when == "call":
            self.counts[report.outcome] += 1


if __name__ == "__main__":
    if not INTERPRETED and not torch.cuda.is_available():
        raise SystemExit("No CUDA GPU here. On a CPU: TRITON_INTERPRET=1 python test_silu_mul.py")
    tally = Tally()
    args = [__file__, "-q", "-p", "no:cacheprovider", "-c", os.devnull]  # (1)!
    code = pytest.main(args, plugins=[tally])
    c = tally.counts
    where = "under the interpreter" if INTERPRETED else "on the GPU"
    print(
        f"input matrix {where}: {c['passed']} passed, {c['skipped']} skipped, {c['failed']} failed"
    )
    sys.exit(code)
# --8<-- [end:main]
