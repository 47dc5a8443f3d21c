# /// script
# requires-python = ">=3.10"
# dependencies = ["torch", "triton", "numpy"]
#
# [tool.snippet]
# gpu = { min-cc = "8.0" }
# cpu = { interpreter = true }
# ///
"""The operator under acceptance: silu(a) * b, the gate of a SwiGLU MLP, in one Triton kernel.

On a CUDA GPU:  python silu_mul.py
On a CPU:       TRITON_INTERPRET=1 python silu_mul.py
Freezes the contract first (reference, dtypes, tolerance per dtype, errors), then checks the
kernel against it, writing into guarded buffers, and exits non-zero when wrong.
"""

import contextlib
import os

import torch
import torch.nn.functional as F
import triton
import triton.language as tl

INTERPRETED = os.environ.get("TRITON_INTERPRET") == "1"

# --8<-- [start:reference]
DTYPES = (torch.float16, torch.bfloat16, torch.float32, torch.float64)
ULPS = {torch.float16: 2, torch.bfloat16: 2, torch.float32: 128, torch.float64: 32}  # (1)!


def tolerance(dtype: torch.dtype) -> dict:
    info = torch.finfo(dtype)
    return {"rtol": ULPS[dtype] * info.eps, "atol": info.tiny}  # (2)!


def reference(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """The contract. Inputs: two tensors of one dtype in DTYPES, on one device, whose shapes
    broadcast. Output: silu(a) * b, computed in float64 and rounded once to that dtype (so
    silu(-inf) is NaN, as in float64). Anything else is an error, raised before any work."""
    return (F.silu(a.double()) * b.double()).to(a.dtype)  # (3)!


def assert_matches(got: torch.Tensor, a: torch.Tensor, b: torch.Tensor) -> None:
    torch.testing.assert_close(got, reference(a, b), equal_nan=True, **tolerance(a.dtype))  # (4)!


# --8<-- [end:reference]


# --8<-- [start:kernel]
@triton.jit
def silu_mul_kernel(
    a_ptr, b_ptr, out_ptr, M, N,
    stride_am, stride_an, stride_bm, stride_bn, stride_om, stride_on,  # (1)!
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, FP64: tl.constexpr,
):  # fmt: skip
    pid = tl.program_id(axis=0)
    blocks_n = tl.cdiv(N, BLOCK_N)
    rows = (pid // blocks_n) * BLOCK_M + tl.arange(0, BLOCK_M)  # (2)!
    cols = (pid % blocks_n) * BLOCK_N + tl.arange(0, BLOCK_N)
    mask = (rows[:, None] < M) & (cols[None, :] < N)
    r, c = rows[:, None].to(tl.int64), cols[None, :].to(tl.int64)  # (3)!
    a = tl.load(a_ptr + r * stride_am + c * stride_an, mask=mask)
    b = tl.load(b_ptr + r * stride_bm + c * stride_bn, mask=mask)
    if not FP64:
        a, b = a.to(tl.float32), b.to(tl.float32)  # (4)!
    e = tl.exp(-tl.abs(a))  # (5)!
    out = a * tl.where(a >= 0, 1.0, e) / (1 + e) * b
    tl.store(out_ptr + r * stride_om + c * stride_on, out.to(out_ptr.dtype.element_ty), mask=mask)


# --8<-- [end:kernel]


# --8<-- [start:launch]
def silu_mul(a: torch.Tensor, b: torch.Tensor, out: torch.Tensor | None = None) -> torch.Tensor:
    """silu(a) * b with PyTorch's broadcasting, for inputs of any strides. No autograd."""
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
        raise RuntimeError("silu_mul() has no backward; see gradients.py")
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
        return out  # (1)!
    n = shape[-1] if shape else 1
    a2, b2 = (t.expand(shape).reshape(-1, n) for t in (a, b))  # (2)!
    try:
        out2 = out.view(-1, n)
    except RuntimeError as exc:
        raise ValueError("out's leading dimensions cannot be merged without a copy") from exc
    m = out2.shape[0]
    block_n = min(triton.next_power_of_2(n), 1024)
    block_m = min(4096 // block_n, triton.next_power_of_2(m))  # (3)!
    grid = (triton.cdiv(m, block_m) * triton.cdiv(n, block_n),)
    with torch.cuda.device(a.device) if a.is_cuda else contextlib.nullcontext():
        silu_mul_kernel[grid](
            a2, b2, out2, m, n, *a2.stride(), *b2.stride(), *out2.stride(),
            BLOCK_M=block_m, BLOCK_N=block_n, FP64=a.dtype == torch.float64,
        )  # fmt: skip
    return out


# --8<-- [end:launch]

SENTINEL = 12345.0


def guarded(shape: torch.Size, dtype: torch.dtype, device: str):
    """An output view in the middle of a sentinel-filled buffer, and a check of the rest."""
    n, pad = shape.numel(), 1024
    buffer = torch.full((pad + n + pad,), SENTINEL, dtype=dtype, device=device)
    out = buffer[pad : pad + n].view(shape)
    return out, lambda: bool(
        (buffer[:pad] == SENTINEL).all() and (buffer[pad + n :] == SENTINEL).all()
    )


def expect_error(error: type[Exception], call) -> None:
    try:
        call()
    except error as exc:
        print(f"  rejected as expected: {type(exc).__name__}: {exc}")
    else:
        raise AssertionError(f"expected {error.__name__}, got a result")


if __name__ == "__main__":
    if not INTERPRETED and not torch.cuda.is_available():
        raise SystemExit("No CUDA GPU here. On a CPU, run: TRITON_INTERPRET=1 python silu_mul.py")
    device = "cpu" if INTERPRETED else "cuda"
    for dtype in DTYPES:
        t = tolerance(dtype)
        print(f"tolerance {str(dtype):14}: rtol={t['rtol']:.3g} atol={t['atol']:.3g}")
    torch.manual_seed(0)
    for dtype in [d for d in DTYPES if not (INTERPRETED and d == torch.bfloat16)]:
        for a_shape, b_shape in [((0, 3), (0, 3)), ((1,), (1,)), ((37, 1000), (37, 1000)),
                                 ((37, 1000), (1000,)), ((37, 1), (1, 1000)), ((2, 3, 257), (257,))]:  # fmt: skip
            a = torch.randn(a_shape).to(dtype).to(device)
            b = torch.randn(b_shape).to(dtype).to(device)
            out, untouched = guarded(torch.broadcast_shapes(a.shape, b.shape), dtype, device)
            silu_mul(a, b, out=out)
            assert untouched(), f"wrote outside its output: {dtype} {a_shape} {b_shape}"
            assert_matches(out, a, b)
        base = torch.randn(64, 600).to(dtype).to(device)
        gate, up = base.chunk(2, dim=-1)  # two non-contiguous views, as in an MLP
        assert_matches(silu_mul(gate, up), gate, up)
        assert_matches(silu_mul(base.t(), base.t()), base.t(), base.t())
        print(f"  {str(dtype):14} matches the reference, nothing written outside the output")
    inf, nan = float("inf"), float("nan")
    a = torch.tensor([-inf, inf, nan, -100.0, 0.0, 1.0], device=device)
    b = torch.tensor([1.0, 0.0, 1.0, 1.0, inf, -inf], device=device)
    assert_matches(silu_mul(a, b), a, b)
    print(f"special values: silu_mul({a.tolist()}, {b.tolist()}) = {silu_mul(a, b).tolist()}")
    naive = F.silu(torch.tensor([-89.0], device=device)).item()
    exact = F.silu(torch.tensor(-89.0, dtype=torch.float64)).item()
    where = "the CPU" if device == "cpu" else "the GPU"
    print(f"F.silu(-89.0) in float32 on {where}: {naive}; in float64: {exact:.4g}")
    x = torch.ones(3, device=device)
    expect_error(TypeError, lambda: silu_mul(x.long(), x.long()))
    expect_error(TypeError, lambda: silu_mul(x, x.double()))
    expect_error(ValueError, lambda: silu_mul(torch.ones(3, 4, device=device), x))
    expect_error(ValueError, lambda: silu_mul(x, x, out=torch.empty(4, device=device)))
    expect_error(ValueError, lambda: silu_mul(x, x, out=torch.empty(1, device=device).expand(3)))
    elsewhere = torch.ones(3, device="meta")
    expect_error(ValueError, lambda: silu_mul(elsewhere, elsewhere))
    leaf = torch.ones(3, device=device, requires_grad=True)
    expect_error(RuntimeError, lambda: silu_mul(leaf, leaf))
    print("silu_mul: all checks passed")
