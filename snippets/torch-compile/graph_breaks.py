# /// script
# requires-python = ">=3.10"
# dependencies = ["torch", "triton", "numpy"]
#
# [tool.snippet]
# gpu = { min-cc = "8.0" }
# cpu = { interpreter = false }
# ///
"""Graph breaks around a user kernel: a raw launch (GPU only), a triton_op, a custom_op, and a
custom_op with no fake implementation, counted with torch._dynamo.explain.

On a CUDA GPU:  python graph_breaks.py
On a CPU:       python graph_breaks.py   (the raw launch is left out: it needs a GPU)
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


def launch_raw(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    check_inputs(x, y)
    check_cuda(x)
    out = torch.empty(x.shape, dtype=x.dtype, device=x.device)
    n = out.numel()
    sigmoid_mul_kernel[(triton.cdiv(n, 1024),)](
        x.contiguous(), y.contiguous(), out, n, BLOCK_SIZE=1024
    )
    return out


@torch.library.custom_op("mylib::sigmoid_mul_opaque", mutates_args=())
def sigmoid_mul_opaque(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    with torch.cuda.device(x.device):
        return launch_raw(x, y)


sigmoid_mul_opaque.register_kernel("cpu")(sigmoid_mul_cpu)
sigmoid_mul_opaque.register_fake(sigmoid_mul_fake)


# --8<-- [start:no-fake]
@torch.library.custom_op("mylib::sigmoid_mul_no_fake", mutates_args=())
def sigmoid_mul_no_fake(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    with torch.cuda.device(x.device):
        return launch_raw(x, y)


sigmoid_mul_no_fake.register_kernel("cpu")(sigmoid_mul_cpu)  # (1)!
# --8<-- [end:no-fake]


# --8<-- [start:explain]
def model(op):
    return lambda x, y: torch.relu(op(x * 2.0 + 1.0, y)) * 3.0


def count_graphs(name: str, op, x: torch.Tensor, y: torch.Tensor) -> str:
    try:
        explanation = torch._dynamo.explain(model(op))(x, y)  # (1)!
    except Exception as exc:  # (2)!
        said = "no fake impl registered" in str(exc)
        result = f"{type(exc).__name__}, because no fake implementation: {said}"
    else:
        result = f"graphs {explanation.graph_count}, graph breaks {explanation.graph_break_count}"
    print(f"{name}: {result}")
    return result


# --8<-- [end:explain]


if __name__ == "__main__":
    device = "cuda" if torch.cuda.is_available() else "cpu"
    torch.manual_seed(0)
    x, y = torch.randn(4096).to(device), torch.randn(4096).to(device)
    # --8<-- [start:run]
    results = {}
    if device == "cuda":
        results["raw launch"] = count_graphs("raw launch", launch_raw, x, y)  # (1)!
    results["triton_op"] = count_graphs("triton_op", torch.ops.mylib.sigmoid_mul, x, y)
    results["custom_op"] = count_graphs("custom_op", torch.ops.mylib.sigmoid_mul_opaque, x, y)
    results["no fake"] = count_graphs(
        "custom_op without register_fake", torch.ops.mylib.sigmoid_mul_no_fake, x, y
    )
    # --8<-- [end:run]
    one_graph = "graphs 1, graph breaks 0"
    assert all(results[k] == one_graph for k in results if k != "no fake"), results
    assert results["no fake"] == "TorchRuntimeError, because no fake implementation: True"
    expected = model(lambda a, b: a * torch.sigmoid(b))(x.cpu(), y.cpu())  # PyTorch alone
    for op in (torch.ops.mylib.sigmoid_mul, torch.ops.mylib.sigmoid_mul_opaque):
        torch.testing.assert_close(model(op)(x, y).cpu(), expected, rtol=1e-5, atol=1e-6)
    print("graph_breaks: all checks passed")
