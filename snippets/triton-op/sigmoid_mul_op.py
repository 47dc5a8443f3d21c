# /// script
# requires-python = ">=3.10"
# dependencies = ["torch", "triton", "numpy"]
#
# [tool.snippet]
# gpu = { min-cc = "8.0" }
# cpu = { interpreter = false }
# ///
"""A complete custom operator, x * sigmoid(y), in one file: Triton kernels for CUDA tensors, a
PyTorch kernel for CPU tensors, autograd, a fake implementation for tracing, a FLOP formula.

On a CUDA GPU:  python sigmoid_mul_op.py
On a CPU:       python sigmoid_mul_op.py   (no TRITON_INTERPRET: CPU tensors use the CPU kernel)
Checks the operator against PyTorch, with gradcheck and opcheck, and exits non-zero when wrong.
"""

import inspect
import math

import torch
import triton
import triton.language as tl
from torch.library import triton_op, wrap_triton
from torch.utils.flop_counter import FlopCounterMode, register_flop_formula


# --8<-- [start:kernels]
@triton.jit
def sigmoid_mul_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(axis=0)
    offsets = pid.to(tl.int64) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)  # (1)!
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    if x.dtype != tl.float64:  # (2)!
        x = x.to(tl.float32)
        y = y.to(tl.float32)
    out = x * tl.sigmoid(y)
    tl.store(out_ptr + offsets, out.to(out_ptr.dtype.element_ty), mask=mask)


@triton.jit
def sigmoid_mul_backward_kernel(
    grad_ptr, x_ptr, y_ptr, dx_ptr, dy_ptr, n_elements, BLOCK_SIZE: tl.constexpr
):
    pid = tl.program_id(axis=0)
    offsets = pid.to(tl.int64) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    g = tl.load(grad_ptr + offsets, mask=mask)
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    if x.dtype != tl.float64:
        g = g.to(tl.float32)
        x = x.to(tl.float32)
        y = y.to(tl.float32)
    s = tl.sigmoid(y)
    dx = g * s  # (3)!
    dy = g * x * s * (1.0 - s)
    tl.store(dx_ptr + offsets, dx.to(dx_ptr.dtype.element_ty), mask=mask)
    tl.store(dy_ptr + offsets, dy.to(dy_ptr.dtype.element_ty), mask=mask)


# --8<-- [end:kernels]


# --8<-- [start:op]
DTYPES = (torch.float16, torch.bfloat16, torch.float32, torch.float64)
BLOCK_SIZE = 1024


def check_inputs(*tensors: torch.Tensor) -> None:
    """What every implementation accepts: one shape, one floating dtype, one device."""
    first = tensors[0]
    for t in tensors:
        if not isinstance(t, torch.Tensor):
            raise TypeError(f"expected tensors, got {type(t).__name__}")
        if t.shape != first.shape:
            raise ValueError(
                f"shapes differ: {tuple(first.shape)} vs {tuple(t.shape)} (no broadcasting)"
            )
        if t.dtype != first.dtype:
            raise TypeError(f"dtypes differ: {first.dtype} vs {t.dtype}; cast one first")
        if t.device != first.device:
            raise ValueError(f"tensors are on different devices: {first.device} and {t.device}")
    if first.dtype not in DTYPES:
        raise TypeError(f"{first.dtype} is not supported; supported: {DTYPES}")


def check_cuda(x: torch.Tensor) -> None:
    if x.device.type != "cuda":
        raise ValueError(f"the Triton kernel needs CUDA tensors, got {x.device}")


def launch_forward(x: torch.Tensor, y: torch.Tensor, out: torch.Tensor) -> None:
    n = out.numel()
    grid = (triton.cdiv(n, BLOCK_SIZE),)
    wrap_triton(sigmoid_mul_kernel)[grid](x, y, out, n, BLOCK_SIZE=BLOCK_SIZE)  # (1)!


@triton_op("mylib::sigmoid_mul", mutates_args=())  # (2)!
def sigmoid_mul(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:  # (3)!
    check_inputs(x, y)
    check_cuda(x)
    out = torch.empty(x.shape, dtype=x.dtype, device=x.device)  # (4)!
    with torch.cuda.device(x.device):
        launch_forward(x.contiguous(), y.contiguous(), out)  # (5)!
    return out


@triton_op("mylib::sigmoid_mul_backward", mutates_args=())
def sigmoid_mul_backward(
    grad: torch.Tensor, x: torch.Tensor, y: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor]:
    check_inputs(grad, x, y)
    check_cuda(x)
    dx = torch.empty(x.shape, dtype=x.dtype, device=x.device)
    dy = torch.empty(x.shape, dtype=x.dtype, device=x.device)
    n = x.numel()
    with torch.cuda.device(x.device):
        wrap_triton(sigmoid_mul_backward_kernel)[(triton.cdiv(n, BLOCK_SIZE),)](
            grad.contiguous(), x.contiguous(), y.contiguous(), dx, dy, n, BLOCK_SIZE=BLOCK_SIZE
        )
    return dx, dy


# --8<-- [end:op]


# --8<-- [start:cpu]
def compute_dtype(dtype: torch.dtype) -> torch.dtype:
    return torch.float64 if dtype == torch.float64 else torch.float32


@sigmoid_mul.register_kernel("cpu")  # (1)!
def sigmoid_mul_cpu(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    check_inputs(x, y)
    c = compute_dtype(x.dtype)
    out = x.to(c) * torch.sigmoid(y.to(c))  # (2)!
    return out.to(x.dtype).contiguous()  # (3)!


@sigmoid_mul_backward.register_kernel("cpu")
def sigmoid_mul_backward_cpu(
    grad: torch.Tensor, x: torch.Tensor, y: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor]:
    check_inputs(grad, x, y)
    c = compute_dtype(x.dtype)
    g, xc, s = grad.to(c), x.to(c), torch.sigmoid(y.to(c))
    dx, dy = g * s, g * xc * s * (1 - s)
    return dx.to(x.dtype).contiguous(), dy.to(x.dtype).contiguous()


# --8<-- [end:cpu]


# --8<-- [start:fake]
@sigmoid_mul.register_fake  # (1)!
def sigmoid_mul_fake(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    check_inputs(x, y)  # (2)!
    return torch.empty(x.shape, dtype=x.dtype, device=x.device)  # (3)!


@sigmoid_mul_backward.register_fake
def sigmoid_mul_backward_fake(
    grad: torch.Tensor, x: torch.Tensor, y: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor]:
    check_inputs(grad, x, y)
    return (
        torch.empty(x.shape, dtype=x.dtype, device=x.device),
        torch.empty(x.shape, dtype=x.dtype, device=x.device),
    )


# --8<-- [end:fake]


# --8<-- [start:autograd]
def setup_context(ctx, inputs, output) -> None:  # (1)!
    x, y = inputs
    ctx.save_for_backward(x, y)


def backward(ctx, grad: torch.Tensor):
    x, y = ctx.saved_tensors
    dx, dy = torch.ops.mylib.sigmoid_mul_backward(grad, x, y)  # (2)!
    return dx, dy  # (3)!


sigmoid_mul.register_autograd(backward, setup_context=setup_context)
# --8<-- [end:autograd]


# --8<-- [start:flops]
@register_flop_formula(torch.ops.mylib.sigmoid_mul)  # (1)!
def sigmoid_mul_flops(x_shape, y_shape, *args, out_shape=None, **kwargs) -> int:
    return 4 * math.prod(x_shape)  # (2)!


@register_flop_formula(torch.ops.mylib.sigmoid_mul_backward)
def sigmoid_mul_backward_flops(grad_shape, x_shape, y_shape, *args, **kwargs) -> int:
    return 8 * math.prod(x_shape)


# --8<-- [end:flops]


# ----------------------------------------------------------------------------- checks
SENTINEL = 12345.0


def reference(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """x * sigmoid(y) with PyTorch's own operators, computed in float64."""
    return (x.double() * torch.sigmoid(y.double())).to(x.dtype)


def tolerance(dtype: torch.dtype) -> dict:
    # float32: tl.sigmoid uses the GPU's approximate exp2 (a few ulp)
    return {
        torch.float16: dict(rtol=1e-3, atol=1e-5),
        torch.bfloat16: dict(rtol=8e-3, atol=1e-5),
        torch.float32: dict(rtol=1e-5, atol=1e-6),
        torch.float64: dict(rtol=1e-12, atol=1e-14),
    }[dtype]


def expect_error(error: type[Exception], call) -> None:
    try:
        call()
    except error as exc:
        print(f"  rejected as expected: {type(exc).__name__}: {exc}")
    else:
        raise AssertionError(f"expected {error.__name__}, got a result")


def guarded_forward(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """The CUDA launch into a view cut from a larger buffer; fail if anything outside changed."""
    n, pad = x.numel(), BLOCK_SIZE
    buffer = torch.full((pad + n + pad,), SENTINEL, dtype=x.dtype, device=x.device)
    out = buffer[pad : pad + n].view(x.shape)
    # the launch the operator makes in eager mode, where triton_op turns wrap_triton off
    sigmoid_mul_kernel[(triton.cdiv(n, BLOCK_SIZE),)](
        x.contiguous(), y.contiguous(), out, n, BLOCK_SIZE=BLOCK_SIZE
    )
    outside = torch.cat([buffer[:pad], buffer[pad + n :]])
    if not bool((outside == SENTINEL).all()):
        raise AssertionError(f"the kernel wrote outside its output (n={n})")
    return out


def check_forward(device: str) -> None:
    torch.manual_seed(0)
    sizes = [0, 1, 7, 1000, 1024, 1025, 98_432]
    for dtype in DTYPES:
        for n in sizes:
            x = torch.randn(n).to(dtype).to(device)
            y = (4 * torch.randn(n)).to(dtype).to(device)
            torch.testing.assert_close(
                torch.ops.mylib.sigmoid_mul(x, y), reference(x, y), **tolerance(dtype)
            )
            if device == "cuda":
                torch.testing.assert_close(
                    guarded_forward(x, y), reference(x, y), **tolerance(dtype)
                )
        print(f"  {device} {str(dtype):14} sizes {sizes}: match x * sigmoid(y)")
    inf, nan = float("inf"), float("nan")
    x = torch.tensor([nan, 1.0, inf, inf, -inf, 2.0, 0.0, 3.0]).to(device)
    y = torch.tensor([0.0, nan, 1.0, -inf, inf, inf, -inf, -100.0]).to(device)
    torch.testing.assert_close(
        torch.ops.mylib.sigmoid_mul(x, y), reference(x, y), equal_nan=True, **tolerance(x.dtype)
    )
    print(f"  {device}: NaN and Inf give what x * sigmoid(y) gives")


def check_layouts(device: str) -> None:
    # --8<-- [start:layouts]
    torch.manual_seed(0)
    base = torch.randn(64, 130).to(device)
    views = {
        "slice with a step": base[:, ::2],
        "transpose": base.t(),
        "expanded row (stride 0)": base[0].expand(64, 130),  # (1)!
    }
    for name, view in views.items():
        y = torch.randn(view.shape).to(device)
        out = torch.ops.mylib.sigmoid_mul(view, y)
        assert out.is_contiguous(), name  # (2)!
        torch.testing.assert_close(out, reference(view, y), **tolerance(torch.float32))
    # --8<-- [end:layouts]
    print(f"  {device}: non-contiguous inputs give the same values, in a contiguous output")


def check_bad_input(device: str) -> None:
    # --8<-- [start:bad-input]
    ok = torch.ones(3, device=device)
    expect_error(ValueError, lambda: torch.ops.mylib.sigmoid_mul(ok, torch.ones(4, device=device)))
    expect_error(TypeError, lambda: torch.ops.mylib.sigmoid_mul(ok, ok.double()))
    ints = torch.ones(3, dtype=torch.int32, device=device)
    expect_error(TypeError, lambda: torch.ops.mylib.sigmoid_mul(ints, ints))
    other = "meta" if device == "cpu" else "cpu"  # (1)!
    expect_error(ValueError, lambda: torch.ops.mylib.sigmoid_mul(ok, ok.to(other)))
    # --8<-- [end:bad-input]


def check_autograd(device: str) -> None:
    # --8<-- [start:gradcheck]
    torch.manual_seed(0)
    x = torch.randn(37, dtype=torch.float64).to(device).requires_grad_()
    y = torch.randn(37, dtype=torch.float64).to(device).requires_grad_()
    ok = torch.autograd.gradcheck(torch.ops.mylib.sigmoid_mul, (x, y))  # (1)!
    print(f"gradcheck float64 on {device}: {ok}")
    # --8<-- [end:gradcheck]
    for dtype in (torch.float32, torch.float16):
        x = torch.randn(1000).to(dtype).to(device).requires_grad_()
        y = torch.randn(1000).to(dtype).to(device).requires_grad_()
        torch.ops.mylib.sigmoid_mul(x, y).sum().backward()  # grad is an expanded tensor
        xr, yr = x.detach().double().requires_grad_(), y.detach().double().requires_grad_()
        (xr * torch.sigmoid(yr)).sum().backward()
        torch.testing.assert_close(x.grad, xr.grad.to(dtype), **tolerance(dtype))
        torch.testing.assert_close(y.grad, yr.grad.to(dtype), **tolerance(dtype))
    print(f"  {device}: gradients of .sum() in float32 and float16 match PyTorch's autograd")
    # --8<-- [start:double-backward]
    x = torch.randn(5, dtype=torch.float64).to(device).requires_grad_()
    y = torch.randn(5, dtype=torch.float64).to(device).requires_grad_()
    try:
        torch.autograd.gradgradcheck(torch.ops.mylib.sigmoid_mul, (x, y))  # (1)!
    except RuntimeError as exc:
        print(f"double backward on {device}: {type(exc).__name__}: {exc}")
    else:
        raise AssertionError("double backward ran, but no backward of the backward is registered")
    # --8<-- [end:double-backward]


def check_opcheck(device: str) -> None:
    # --8<-- [start:opcheck]
    torch.manual_seed(0)
    x = torch.randn(5, 7).to(device).requires_grad_()
    y = torch.randn(5, 7).to(device).requires_grad_()
    tests = ["test_schema", "test_autograd_registration", "test_faketensor"]
    if device == "cuda":
        tests.append("test_aot_dispatch_dynamic")  # (1)!
    for args in ((x, y), (x.t(), y.t())):  # (2)!
        result = torch.library.opcheck(torch.ops.mylib.sigmoid_mul.default, args, test_utils=tests)
    print(f"opcheck sigmoid_mul on {device}: {result}")
    g = torch.randn(5, 7).to(device)
    result = torch.library.opcheck(
        torch.ops.mylib.sigmoid_mul_backward.default, (g, x.detach(), y.detach()), test_utils=tests
    )
    print(f"opcheck sigmoid_mul_backward on {device}: {result}")
    # --8<-- [end:opcheck]


def check_flops(device: str) -> None:
    # --8<-- [start:count]
    x = torch.randn(1000, 1000).to(device).requires_grad_()
    y = torch.randn(1000, 1000).to(device).requires_grad_()
    with FlopCounterMode(display=False) as counter:  # (1)!
        torch.ops.mylib.sigmoid_mul(x, y).sum().backward()
    counts = {str(op): n for op, n in counter.get_flop_counts()["Global"].items()}
    print(f"FlopCounterMode on {device}, forward and backward of 1000 x 1000 elements: {counts}")
    # --8<-- [end:count]
    assert counter.get_total_flops() == 12 * 10**6, counter.get_total_flops()


def check_flop_api() -> None:
    # --8<-- [start:flop-api]
    in_library = hasattr(torch.library, "register_flop_formula")
    print(f"torch.library.register_flop_formula exists: {in_library}")  # (1)!
    display = inspect.signature(FlopCounterMode).parameters["display"].default
    print(f"FlopCounterMode(display=...) defaults to: {display}")  # (2)!
    # --8<-- [end:flop-api]
    assert in_library is False and display is True


def check_large() -> None:
    """Past 2**31 elements: the kernels' int64 offsets reach the end (GPU, about 13 GB)."""
    n = 2**31 + 5
    x = torch.ones(n, dtype=torch.float16, device="cuda")
    y = torch.zeros(n, dtype=torch.float16, device="cuda")
    y[-3:] = 100.0
    out = torch.ops.mylib.sigmoid_mul(x, y)
    assert bool((out[:8] == 0.5).all()) and bool((out[-8:-3] == 0.5).all())
    assert bool((out[-3:] == 1.0).all()), out[-3:]
    print("  cuda: 2**31 + 5 float16 elements, the last ones written correctly")


if __name__ == "__main__":
    devices = ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])
    # --8<-- [start:call]
    x, y = torch.tensor([1.0, -2.0, 3.0]), torch.tensor([0.0, 0.0, 100.0])
    print(f"torch.ops.mylib.sigmoid_mul on CPU tensors: {torch.ops.mylib.sigmoid_mul(x, y)}")
    assert torch.equal(sigmoid_mul(x, y), torch.ops.mylib.sigmoid_mul(x, y))  # (1)!
    # --8<-- [end:call]
    check_flop_api()
    for device in devices:
        check_forward(device)
        check_layouts(device)
        check_bad_input(device)
        check_autograd(device)
        check_opcheck(device)
        check_flops(device)
    if "cuda" in devices:
        check_large()
    else:
        print("  no CUDA GPU here: the Triton kernels were not run, only the CPU kernels")
    print("sigmoid_mul_op: all checks passed")
