# /// script
# requires-python = ">=3.10"
# dependencies = ["torch", "triton", "numpy"]
#
# [tool.snippet]
# gpu = { min-cc = "8.0" }
# cpu = { interpreter = false }
# ///
"""Claim: a Triton kernel launched on CPU tensors, without TRITON_INTERPRET, raises an error, and
which error depends on the machine: with a CUDA GPU the launcher rejects the CPU pointer; without
one Triton finds no driver at all. A device check with a fallback avoids both.

On a CUDA GPU:  python claim_cpu_tensor_error.py
On a CPU:       python claim_cpu_tensor_error.py   (without TRITON_INTERPRET: that is the point)
"""

import os

import torch
import triton
import triton.language as tl

if os.environ.get("TRITON_INTERPRET") == "1":
    raise SystemExit("Run this file without TRITON_INTERPRET: it shows what happens without it.")


@triton.jit
def scale_kernel(x_ptr, out_ptr, n_elements, scale, BLOCK_SIZE: tl.constexpr):
    offsets = tl.program_id(axis=0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    tl.store(out_ptr + offsets, tl.load(x_ptr + offsets, mask=mask) * scale, mask=mask)


# --8<-- [start:bug]
def scale_unchecked(x: torch.Tensor, scale: float) -> torch.Tensor:
    out = torch.empty_like(x)
    n = x.numel()
    scale_kernel[(triton.cdiv(n, 1024),)](x, out, n, scale, BLOCK_SIZE=1024)  # (1)!
    return out


x = torch.arange(10.0)  # a CPU tensor
machine = "GPU machine" if torch.cuda.is_available() else "CPU-only machine"
try:
    scale_unchecked(x, 2.0)
except Exception as exc:  # (2)!
    error = exc
    print(f"{machine}, CPU tensor: {type(exc).__name__}: {exc}")
else:
    raise AssertionError("a CPU tensor went through the kernel: update the pages")
# --8<-- [end:bug]

if torch.cuda.is_available():
    assert isinstance(error, ValueError), error
    assert "cannot be accessed from Triton (cpu tensor?)" in str(error), error
else:
    assert isinstance(error, RuntimeError), error
    assert str(error) == "0 active drivers ([]). There should only be one.", error


# --8<-- [start:fix]
def scale(x: torch.Tensor, scale: float) -> torch.Tensor:
    """x * scale: the Triton kernel for CUDA tensors, PyTorch for CPU tensors."""
    if x.device.type == "cpu":
        return x * scale  # (1)!
    if x.device.type != "cuda":
        raise ValueError(f"scale() takes CPU or CUDA tensors, not {x.device}")
    if x.dtype not in (torch.float16, torch.bfloat16, torch.float32):
        raise TypeError(f"scale() takes float16, bfloat16 or float32, not {x.dtype}")
    x = x.contiguous()
    out = torch.empty_like(x)
    n = x.numel()
    with torch.cuda.device(x.device):  # (2)!
        scale_kernel[(triton.cdiv(n, 1024),)](x, out, n, scale, BLOCK_SIZE=1024)
    return out


# --8<-- [end:fix]


def expect_error(error: type[Exception], call) -> None:
    try:
        call()
    except error as exc:
        print(f"  rejected as expected: {type(exc).__name__}: {exc}")
    else:
        raise AssertionError(f"expected {error.__name__}, got a result")


torch.testing.assert_close(scale(x, 2.0), x * 2.0, rtol=0, atol=0)
print("with the device check: CPU tensors take the PyTorch path, equal to x * 2.0")
expect_error(ValueError, lambda: scale(torch.ones(3, device="meta"), 2.0))
if torch.cuda.is_available():
    torch.manual_seed(0)
    for n in (0, 1, 1000, 1024, 1025, 98_432):
        for dtype in (torch.float16, torch.bfloat16, torch.float32):
            xs = torch.randn(n).to(dtype).to("cuda")
            torch.testing.assert_close(scale(xs, 2.0), xs * 2.0, rtol=0, atol=0)
    strided = torch.randn(64, 130).cuda()[:, ::2]
    torch.testing.assert_close(scale(strided, 2.0), strided * 2.0, rtol=0, atol=0)
    expect_error(TypeError, lambda: scale(torch.ones(3, dtype=torch.int32, device="cuda"), 2.0))
    print("with the device check: CUDA tensors take the kernel, equal to x * 2.0")
print("claim_cpu_tensor_error: all checks passed")
