# /// script
# requires-python = ">=3.10"
# dependencies = ["torch", "triton", "numpy"]
#
# [tool.snippet]
# gpu = { min-cc = "8.0" }
# cpu = { interpreter = true }
# ///
"""What a raw kernel launch does not give you: autograd, FLOP counting, a CPU path.

On a CUDA GPU:  python raw_kernel.py
On a CPU:       TRITON_INTERPRET=1 python raw_kernel.py
The same kernel as sigmoid_mul_op.py, launched directly from Python, without torch.library.
"""

import os

import torch
import triton
import triton.language as tl
from torch.utils.flop_counter import FlopCounterMode

INTERPRETED = os.environ.get("TRITON_INTERPRET") == "1"


@triton.jit
def sigmoid_mul_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    offsets = tl.program_id(axis=0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    tl.store(out_ptr + offsets, x * tl.sigmoid(y), mask=mask)


# --8<-- [start:raw]
def sigmoid_mul_raw(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    out = torch.empty_like(x)
    n = out.numel()
    sigmoid_mul_kernel[(triton.cdiv(n, 1024),)](x, y, out, n, BLOCK_SIZE=1024)  # (1)!
    return out


# --8<-- [end:raw]


if __name__ == "__main__":
    if not INTERPRETED and not torch.cuda.is_available():
        raise SystemExit("No CUDA GPU here. On a CPU, run: TRITON_INTERPRET=1 python raw_kernel.py")
    device = "cpu" if INTERPRETED else "cuda"
    torch.manual_seed(0)
    # --8<-- [start:losses]
    x = torch.randn(1000).to(device).requires_grad_()
    y = torch.randn(1000).to(device).requires_grad_()
    out = sigmoid_mul_raw(x, y)
    print(f"raw launch, out.requires_grad: {out.requires_grad}")  # (1)!

    (out + x).sum().backward()  # (2)!
    expected = 1 + torch.sigmoid(y.detach())
    print(f"x.grad of (raw(x, y) + x).sum() is all ones: {bool((x.grad == 1).all())}")
    print(f"x.grad equals 1 + sigmoid(y): {torch.allclose(x.grad, expected)}")

    with FlopCounterMode(display=False) as counter:
        sigmoid_mul_raw(x.detach(), y.detach())
    print(f"FlopCounterMode around the raw launch: {counter.get_total_flops()} FLOPs")  # (3)!
    # --8<-- [end:losses]
    assert not out.requires_grad and bool((x.grad == 1).all())
    assert not torch.allclose(x.grad, expected) and counter.get_total_flops() == 0
    torch.testing.assert_close(out.detach(), x.detach() * torch.sigmoid(y.detach()))
    if device == "cuda":
        # --8<-- [start:cpu-tensors]
        try:
            sigmoid_mul_raw(torch.ones(3), torch.ones(3))  # (1)!
        except ValueError as exc:
            print(f"raw launch on CPU tensors: {type(exc).__name__}: {exc}")
        else:
            raise AssertionError("the raw launch accepted CPU tensors")
        # --8<-- [end:cpu-tensors]
    print("raw_kernel: all checks passed")
