# /// script
# requires-python = ">=3.10"
# dependencies = ["torch", "triton", "numpy"]
#
# [tool.snippet]
# gpu = { min-cc = "8.0" }
# cpu = { interpreter = false }
# also-needs = "a C++ compiler, the one named by CXX or else g++: Inductor turns the routed CPU branch into C++"
# also-needs-zh = "一个 C++ 编译器，用 CXX 指定的那个，没有指定就用 g++：Inductor 把转给 CPU 的那条分支生成为 C++"
# ///
"""Claim: torch.compile on CPU tensors does not call a triton_op's registered CPU kernel. AOT
dispatch decomposes the operator into its Triton function, whatever the device; an operator that
should compile on CPU routes CPU tensors to PyTorch code inside that function.

On a CUDA GPU or a CPU:  python claim_compile_cpu_tensors.py   (it uses CPU tensors on both;
the routed version is compiled by Inductor into C++, so a C++ compiler is needed)
Fails the day a release changes it, so the page that says so gets updated.
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


# --8<-- [start:routed]
@triton_op("mylib::sigmoid_mul_routed", mutates_args=())
def sigmoid_mul_routed(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    if x.device.type == "cpu":
        return sigmoid_mul_cpu(x, y)  # (1)!
    check_inputs(x, y)
    check_cuda(x)
    out = torch.empty(x.shape, dtype=x.dtype, device=x.device)
    n = out.numel()
    with torch.cuda.device(x.device):
        wrap_triton(sigmoid_mul_kernel)[(triton.cdiv(n, 1024),)](
            x.contiguous(), y.contiguous(), out, n, BLOCK_SIZE=1024
        )
    return out


sigmoid_mul_routed.register_kernel("cpu")(sigmoid_mul_cpu)
sigmoid_mul_routed.register_fake(sigmoid_mul_fake)
# --8<-- [end:routed]


if __name__ == "__main__":
    torch.manual_seed(0)
    x, y = torch.randn(1000), torch.randn(1000)  # CPU tensors, on every machine
    expected = sigmoid_mul_cpu(x, y)
    # --8<-- [start:claim]
    eager = torch.ops.mylib.sigmoid_mul(x, y)  # (1)!
    print(f"eager, CPU tensors: the CPU kernel ran: {torch.equal(eager, expected)}")

    torch._dynamo.reset()
    try:
        torch.compile(torch.ops.mylib.sigmoid_mul, fullgraph=True)(x, y)  # (2)!
        result = "compiled and ran"
    except Exception as exc:
        raised_by_fn = "the Triton kernel needs CUDA tensors, got cpu" in str(exc)
        result = f"{type(exc).__name__}, raised by the Triton function: {raised_by_fn}"
    print(f"torch.compile, CPU tensors: {result}")

    torch._dynamo.reset()
    compiled = torch.compile(torch.ops.mylib.sigmoid_mul_routed, fullgraph=True)
    routed = compiled(x, y)  # (3)!
    same = torch.allclose(routed, expected, rtol=1.3e-6, atol=1e-5)  # Inductor's own C++ code
    print(f"torch.compile, CPU tensors, routed, same values as the CPU kernel: {same}")
    # --8<-- [end:claim]
    assert torch.equal(eager, expected)
    torch.testing.assert_close(routed, expected)
    assert result == "BackendCompilerFailed, raised by the Triton function: True", result
