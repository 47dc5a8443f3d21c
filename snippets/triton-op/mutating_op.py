# /// script
# requires-python = ">=3.10"
# dependencies = ["torch", "triton", "numpy"]
#
# [tool.snippet]
# gpu = { min-cc = "8.0" }
# cpu = { interpreter = false }
# ///
"""An operator that writes into a tensor the caller passes: x * sigmoid(y) into `out`.

On a CUDA GPU:  python mutating_op.py
On a CPU:       python mutating_op.py   (no TRITON_INTERPRET: CPU tensors use the CPU kernel)
mutates_args names `out`, the operator returns nothing, refuses inputs that require grad, and
writes a non-contiguous `out` through a temporary. Checked against PyTorch, with opcheck, and on
the GPU under torch.compile; exits non-zero when wrong.
"""

import torch
import triton
import triton.language as tl
from torch.library import triton_op, wrap_triton

DTYPES = (torch.float16, torch.bfloat16, torch.float32, torch.float64)
BLOCK_SIZE = 1024


@triton.jit
def sigmoid_mul_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    offsets = tl.program_id(axis=0).to(tl.int64) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    if x.dtype != tl.float64:
        x = x.to(tl.float32)
        y = y.to(tl.float32)
    tl.store(out_ptr + offsets, (x * tl.sigmoid(y)).to(out_ptr.dtype.element_ty), mask=mask)


# --8<-- [start:checks]
def check_inputs(x: torch.Tensor, y: torch.Tensor, out: torch.Tensor) -> None:
    """One shape, one floating dtype, one device; and no input that requires grad."""
    for t in (y, out):
        if t.shape != x.shape:
            raise ValueError(f"shapes differ: {tuple(x.shape)} vs {tuple(t.shape)}")
        if t.dtype != x.dtype:
            raise TypeError(f"dtypes differ: {x.dtype} vs {t.dtype}")
        if t.device != x.device:
            raise ValueError(f"tensors are on different devices: {x.device} and {t.device}")
    if x.dtype not in DTYPES:
        raise TypeError(f"{x.dtype} is not supported; supported: {DTYPES}")
    if any(t.requires_grad for t in (x, y, out)):  # (1)!
        raise RuntimeError(
            "sigmoid_mul_out has no backward: pass tensors that do not require grad "
            "(x.detach()), or call mylib::sigmoid_mul, which has one"
        )


# --8<-- [end:checks]


# --8<-- [start:op]
@triton_op("mylib::sigmoid_mul_out", mutates_args={"out"})  # (1)!
def sigmoid_mul_out(x: torch.Tensor, y: torch.Tensor, out: torch.Tensor) -> None:  # (2)!
    check_inputs(x, y, out)
    if x.device.type != "cuda":
        raise ValueError(f"the Triton kernel needs CUDA tensors, got {x.device}")
    dst = out if out.is_contiguous() else torch.empty(x.shape, dtype=x.dtype, device=x.device)
    n = dst.numel()
    with torch.cuda.device(x.device):
        wrap_triton(sigmoid_mul_kernel)[(triton.cdiv(n, BLOCK_SIZE),)](
            x.contiguous(), y.contiguous(), dst, n, BLOCK_SIZE=BLOCK_SIZE
        )
    if dst is not out:
        out.copy_(dst)  # (3)!


@sigmoid_mul_out.register_kernel("cpu")
def sigmoid_mul_out_cpu(x: torch.Tensor, y: torch.Tensor, out: torch.Tensor) -> None:
    check_inputs(x, y, out)
    c = torch.float64 if x.dtype == torch.float64 else torch.float32
    out.copy_(x.to(c) * torch.sigmoid(y.to(c)))


@sigmoid_mul_out.register_fake
def sigmoid_mul_out_fake(x: torch.Tensor, y: torch.Tensor, out: torch.Tensor) -> None:
    check_inputs(x, y, out)  # (4)!


# --8<-- [end:op]


def reference(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    return (x.double() * torch.sigmoid(y.double())).to(x.dtype)


TOLERANCE = {
    torch.float16: dict(rtol=1e-3, atol=1e-5),
    torch.bfloat16: dict(rtol=8e-3, atol=1e-5),
    torch.float32: dict(rtol=1e-5, atol=1e-6),
    torch.float64: dict(rtol=1e-12, atol=1e-14),
}


def check_values(device: str) -> None:
    torch.manual_seed(0)
    for dtype in DTYPES:
        for n in (0, 1, 7, 1025, 98_432):
            x, y = torch.randn(n).to(dtype).to(device), (4 * torch.randn(n)).to(dtype).to(device)
            out = torch.full((n,), float("nan"), dtype=dtype, device=device)
            torch.ops.mylib.sigmoid_mul_out(x, y, out)
            torch.testing.assert_close(out, reference(x, y), **TOLERANCE[dtype])
    inf, nan = float("inf"), float("nan")
    x = torch.tensor([nan, 1.0, inf, -inf, 2.0, 0.0]).to(device)
    y = torch.tensor([0.0, nan, 1.0, inf, -inf, -100.0]).to(device)
    out = torch.empty_like(x)
    torch.ops.mylib.sigmoid_mul_out(x, y, out)
    torch.testing.assert_close(out, reference(x, y), equal_nan=True)
    print(f"  {device}: every dtype, sizes 0 to 98432, NaN and Inf match x * sigmoid(y)")


def check_call(device: str) -> None:
    # --8<-- [start:call]
    torch.manual_seed(0)
    x, y = torch.randn(64, 130).to(device), torch.randn(64, 130).to(device)
    out = torch.empty(64, 130, device=device)
    returned = torch.ops.mylib.sigmoid_mul_out(x, y, out)  # (1)!
    assert returned is None
    torch.testing.assert_close(out, reference(x, y))

    buffer = torch.full((64, 260), 7.0, device=device)
    view = buffer[:, ::2]  # (2)!
    torch.ops.mylib.sigmoid_mul_out(x.t().contiguous().t(), y, view)
    torch.testing.assert_close(view, reference(x, y))
    assert bool((buffer[:, 1::2] == 7.0).all()), "wrote outside the view"
    # --8<-- [end:call]
    print(f"  {device}: writes into out, also into a strided view of a larger buffer only")


def check_refusals(device: str) -> None:
    x, out = torch.randn(3, device=device), torch.empty(3, device=device)
    needs_grad = torch.randn(3, device=device, requires_grad=True)
    for args, error in (
        ((x, torch.randn(4, device=device), out), ValueError),
        ((x, x.double(), out), TypeError),
        ((needs_grad, x, out), RuntimeError),
    ):
        try:
            torch.ops.mylib.sigmoid_mul_out(*args)
        except error as exc:
            print(f"  rejected as expected: {type(exc).__name__}: {exc}")
        else:
            raise AssertionError(f"expected {error.__name__}, got a result")


def check_opcheck(device: str) -> None:
    # --8<-- [start:opcheck]
    torch.manual_seed(0)
    x, y = torch.randn(5, 7).to(device), torch.randn(5, 7).to(device)
    tests = ["test_schema", "test_autograd_registration", "test_faketensor"]
    if device == "cuda":
        tests.append("test_aot_dispatch_dynamic")
    for out in (torch.empty(5, 7, device=device), torch.empty(7, 5, device=device).t()):  # (1)!
        result = torch.library.opcheck(
            torch.ops.mylib.sigmoid_mul_out.default, (x, y, out), test_utils=tests
        )
    print(f"opcheck sigmoid_mul_out on {device}: {result}")
    # --8<-- [end:opcheck]


def check_compile() -> None:
    """Under torch.compile the mutation is functionalized; the result must not change."""

    # --8<-- [start:compile]
    def gate(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        out = torch.empty_like(x)
        torch.ops.mylib.sigmoid_mul_out(x * 2.0, y, out)
        return out + 1.0

    x, y = torch.randn(4096, device="cuda"), torch.randn(4096, device="cuda")
    compiled = torch.compile(gate, fullgraph=True)
    torch.testing.assert_close(compiled(x, y), gate(x, y))
    print("torch.compile(fullgraph=True) with sigmoid_mul_out: same values as eager")
    # --8<-- [end:compile]


if __name__ == "__main__":
    devices = ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])
    print(f"schema: {torch.ops.mylib.sigmoid_mul_out.default._schema}")
    schema = str(torch.ops.mylib.sigmoid_mul_out.default._schema)
    assert "Tensor(a2!) out" in schema and schema.endswith("-> ()"), schema
    for device in devices:
        check_values(device)
        check_call(device)
        check_refusals(device)
        check_opcheck(device)
    if "cuda" in devices:
        check_compile()
    else:
        print("  no CUDA GPU here: the Triton kernel was not run, only the CPU kernel")
    print("mutating_op: all checks passed")
