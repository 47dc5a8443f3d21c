# /// script
# requires-python = ">=3.10"
# dependencies = ["torch", "triton", "numpy"]
#
# [tool.snippet]
# gpu = { min-cc = "8.0" }
# cpu = { interpreter = true }
# ///
"""Gradients of silu_mul: a backward kernel, checked against the reference and by gradcheck.

On a CUDA GPU:  python gradients.py
On a CPU:       TRITON_INTERPRET=1 python gradients.py
Forward and backward are compared with autograd through the float64 reference;
torch.autograd.gradcheck compares the backward with finite differences in float64.
"""

import contextlib
import os

import torch
import torch.nn.functional as F
import triton
import triton.language as tl

INTERPRETED = os.environ.get("TRITON_INTERPRET") == "1"
DTYPES = (torch.float16, torch.bfloat16, torch.float32, torch.float64)
ULPS = {torch.float16: 2, torch.bfloat16: 2, torch.float32: 128, torch.float64: 32}


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


# --8<-- [start:backward]
@triton.jit
def silu_mul_backward_kernel(
    g_ptr, a_ptr, b_ptr, ga_ptr, gb_ptr, M, N,
    stride_gm, stride_gn, stride_am, stride_an, stride_bm, stride_bn, stride_om, stride_on,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, FP64: tl.constexpr,
):  # fmt: skip
    pid = tl.program_id(axis=0)
    blocks_n = tl.cdiv(N, BLOCK_N)
    rows = (pid // blocks_n) * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = (pid % blocks_n) * BLOCK_N + tl.arange(0, BLOCK_N)
    mask = (rows[:, None] < M) & (cols[None, :] < N)
    r, c = rows[:, None].to(tl.int64), cols[None, :].to(tl.int64)
    g = tl.load(g_ptr + r * stride_gm + c * stride_gn, mask=mask)
    a = tl.load(a_ptr + r * stride_am + c * stride_an, mask=mask)
    b = tl.load(b_ptr + r * stride_bm + c * stride_bn, mask=mask)
    if not FP64:
        g, a, b = g.to(tl.float32), a.to(tl.float32), b.to(tl.float32)
    e = tl.exp(-tl.abs(a))
    s = tl.where(a >= 0, 1.0, e) / (1 + e)  # sigmoid(a)
    o = r * stride_om + c * stride_on
    tl.store(ga_ptr + o, g * b * s * (1 + a * (1 - s)), mask=mask)  # (1)!
    tl.store(gb_ptr + o, g * a * s, mask=mask)


def launch(kernel, inputs: list[torch.Tensor], outputs: list[torch.Tensor]) -> None:
    """Run an elementwise kernel: inputs read through their broadcast strides, outputs
    contiguous, of the broadcast shape."""
    shape = outputs[0].shape
    n = shape[-1] if len(shape) else 1
    flat = [t.expand(shape).reshape(-1, n) for t in inputs] + [t.view(-1, n) for t in outputs]
    m = flat[0].shape[0]
    block_n = min(triton.next_power_of_2(n), 1024)
    block_m = min(4096 // block_n, triton.next_power_of_2(m))
    grid = (triton.cdiv(m, block_m) * triton.cdiv(n, block_n),)
    strides = [s for t in flat[: len(inputs) + 1] for s in t.stride()]
    with torch.cuda.device(flat[0].device) if flat[0].is_cuda else contextlib.nullcontext():
        kernel[grid](
            *flat, m, n, *strides,
            BLOCK_M=block_m, BLOCK_N=block_n, FP64=inputs[0].dtype == torch.float64,
        )  # fmt: skip


class SiluMul(torch.autograd.Function):
    @staticmethod
    def forward(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        out = torch.empty(torch.broadcast_shapes(a.shape, b.shape), dtype=a.dtype, device=a.device)
        if out.numel():
            launch(silu_mul_kernel, [a, b], [out])
        return out

    @staticmethod
    def setup_context(ctx, inputs, output) -> None:  # (2)!
        ctx.save_for_backward(*inputs)

    @staticmethod
    @torch.autograd.function.once_differentiable  # (3)!
    def backward(ctx, grad_out: torch.Tensor):
        a, b = ctx.saved_tensors
        wide = torch.float64 if a.dtype == torch.float64 else torch.float32  # (4)!
        ga = torch.empty(grad_out.shape, dtype=wide, device=a.device)
        gb = torch.empty_like(ga)
        if ga.numel():
            launch(silu_mul_backward_kernel, [grad_out, a, b], [ga, gb])
        return ga.sum_to_size(a.shape).to(a.dtype), gb.sum_to_size(b.shape).to(b.dtype)  # (5)!


# --8<-- [end:backward]


def silu_mul(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """silu(a) * b with broadcasting and autograd; inputs of one dtype in DTYPES, one device."""
    if a.dtype != b.dtype or a.dtype not in DTYPES:
        raise TypeError(f"expected two tensors of one dtype in {DTYPES}, got {a.dtype}, {b.dtype}")
    if INTERPRETED and a.dtype == torch.bfloat16:
        raise TypeError("bfloat16 is not supported under TRITON_INTERPRET=1; run it on a GPU")
    if a.device != b.device or a.device.type != ("cpu" if INTERPRETED else "cuda"):
        raise ValueError(f"tensors are on {a.device} and {b.device}, not where the kernel runs")
    try:
        torch.broadcast_shapes(a.shape, b.shape)
    except RuntimeError as exc:
        raise ValueError(f"shapes {tuple(a.shape)} and {tuple(b.shape)} do not broadcast") from exc
    return SiluMul.apply(a, b)


# --8<-- [start:check]
def reference_grads(a, b, g):
    """Autograd through the float64 reference: outputs and gradients, rounded once."""
    a64, b64 = a.detach().double().requires_grad_(), b.detach().double().requires_grad_()
    out = F.silu(a64) * b64
    out.backward(g.double())
    return [t.to(a.dtype) for t in (out.detach(), a64.grad, b64.grad)]


def check_against_reference(dtype: torch.dtype, a_shape, b_shape, device: str) -> None:
    torch.manual_seed(0)
    a = torch.randn(a_shape).to(dtype).to(device).requires_grad_()
    b = torch.randn(b_shape).to(dtype).to(device).requires_grad_()
    out = silu_mul(a, b)
    g = torch.randn(out.shape).to(dtype).to(device)
    out.backward(g)
    rtol = ULPS[dtype] * torch.finfo(dtype).eps
    for name, got, ref in zip(
        ("out", "grad a", "grad b"), (out, a.grad, b.grad), reference_grads(a, b, g), strict=True
    ):
        atol = rtol * float(ref.abs().max())  # (1)!
        torch.testing.assert_close(
            got, ref, rtol=rtol, atol=atol, msg=lambda m, name=name: f"{dtype} {name}: {m}"
        )


if __name__ == "__main__":
    if not INTERPRETED and not torch.cuda.is_available():
        raise SystemExit("No CUDA GPU here. On a CPU, run: TRITON_INTERPRET=1 python gradients.py")
    device = "cpu" if INTERPRETED else "cuda"
    for dtype in [d for d in DTYPES if not (INTERPRETED and d == torch.bfloat16)]:
        for a_shape, b_shape in [
            ((37, 1000), (37, 1000)),
            ((37, 1000), (1000,)),
            ((4, 1), (3, 1, 5)),
        ]:
            check_against_reference(dtype, a_shape, b_shape, device)
        print(f"  {str(dtype):14}: forward and both gradients within tolerance of the reference")

    for a_shape, b_shape in [((3, 5), (3, 5)), ((3, 5), (5,))]:
        a = torch.randn(a_shape, dtype=torch.float64).to(device).requires_grad_()
        b = torch.randn(b_shape, dtype=torch.float64).to(device).requires_grad_()
        ok = torch.autograd.gradcheck(silu_mul, (a, b))  # (2)!
        print(f"gradcheck float64, a {a_shape} and b {b_shape}: {ok}")

    out = silu_mul(a, b)
    (grad_a,) = torch.autograd.grad((out**2).sum(), a, create_graph=True)
    try:
        grad_a.sum().backward()  # (3)!
    except RuntimeError as exc:
        assert "once_differentiable" in str(exc), exc
        print("second derivative: refused, the backward is marked once_differentiable")
    else:
        raise AssertionError("a second derivative went through a backward that has none")
    # --8<-- [end:check]
    try:  # setup_context is what torch.func transforms require, not all they need
        torch.func.grad(lambda a: silu_mul(a, b).sum())(a.detach())
        func_grad, raised = "runs", "nothing"
    except Exception as exc:  # the backward hands wrapped tensors to a raw launch
        func_grad, raised = "fails", type(exc).__name__  # the class differs by device
    print(f"torch.func.grad through the Function: {func_grad}")
    print(f"  it raised: {raised}")
    assert func_grad == "fails", func_grad
    print("gradients: all checks passed")
