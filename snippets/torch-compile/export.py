# /// script
# requires-python = ">=3.10"
# dependencies = ["torch", "triton", "numpy"]
#
# [tool.snippet]
# gpu = { min-cc = "8.0" }
# cpu = { interpreter = false }
# ///
"""torch.export keeps a triton_op as one named operator in the exported graph.

On a CUDA GPU:  python export.py
On a CPU:       python export.py   (the exported program runs the operator's CPU kernel)
"""

import torch
import triton
import triton.language as tl
from torch.library import triton_op, wrap_triton

# The operator of the triton-op chapter, shortened: Triton kernel for CUDA tensors, a PyTorch
# kernel for CPU tensors, a fake for tracing. Full checks and autograd: ../triton-op/.
DTYPES = (torch.float16, torch.bfloat16, torch.float32)


@triton.jit
def sigmoid_mul_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    offsets = tl.program_id(axis=0).to(tl.int64) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask).to(tl.float32)
    y = tl.load(y_ptr + offsets, mask=mask).to(tl.float32)
    tl.store(out_ptr + offsets, (x * tl.sigmoid(y)).to(out_ptr.dtype.element_ty), mask=mask)


def check_inputs(x: torch.Tensor, y: torch.Tensor) -> None:
    if x.shape != y.shape or x.dtype != y.dtype or x.device != y.device:
        raise ValueError("x and y need one shape, one dtype and one device")
    if x.dtype not in DTYPES:
        raise TypeError(f"{x.dtype} is not supported; supported: {DTYPES}")


def check_cuda(x: torch.Tensor) -> None:
    if x.device.type != "cuda":
        raise ValueError(f"the Triton kernel needs CUDA tensors, got {x.device}")


def sigmoid_mul_cpu(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    check_inputs(x, y)
    return (x.float() * torch.sigmoid(y.float())).to(x.dtype).contiguous()


def sigmoid_mul_fake(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    check_inputs(x, y)
    return torch.empty(x.shape, dtype=x.dtype, device=x.device)


@triton_op("mylib::sigmoid_mul", mutates_args=())
def sigmoid_mul(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    check_inputs(x, y)
    check_cuda(x)
    out = torch.empty(x.shape, dtype=x.dtype, device=x.device)
    n = out.numel()
    with torch.cuda.device(x.device):
        wrap_triton(sigmoid_mul_kernel)[(triton.cdiv(n, 1024),)](
            x.contiguous(), y.contiguous(), out, n, BLOCK_SIZE=1024
        )
    return out


sigmoid_mul.register_kernel("cpu")(sigmoid_mul_cpu)
sigmoid_mul.register_fake(sigmoid_mul_fake)


# --8<-- [start:export]
class Gate(torch.nn.Module):
    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return torch.relu(torch.ops.mylib.sigmoid_mul(x * 2.0 + 1.0, y)) * 3.0


if __name__ == "__main__":
    device = "cuda" if torch.cuda.is_available() else "cpu"
    torch.manual_seed(0)
    x, y = torch.randn(4096).to(device), torch.randn(4096).to(device)
    exported = torch.export.export(Gate(), (x, y))  # (1)!
    targets = [str(node.target) for node in exported.graph.nodes if node.op == "call_function"]
    print(f"torch.export graph calls: {targets}")
    torch.testing.assert_close(exported.module()(x, y), Gate()(x, y))  # (2)!
    # --8<-- [end:export]
    assert targets == [
        "aten.mul.Tensor",
        "aten.add.Tensor",
        "mylib.sigmoid_mul.default",
        "aten.relu.default",
        "aten.mul.Tensor",
    ], targets
    reference = torch.relu((x * 2.0 + 1.0) * torch.sigmoid(y)) * 3.0  # PyTorch alone, no kernel
    torch.testing.assert_close(exported.module()(x, y), reference, rtol=1e-5, atol=1e-6)
    print("export: all checks passed")
