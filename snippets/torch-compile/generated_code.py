# /// script
# requires-python = ">=3.10"
# dependencies = ["torch", "triton", "numpy"]
#
# [tool.snippet]
# gpu = { min-cc = "8.0" }
# cpu = { skip = "compiles Triton kernels with torch.compile, which needs a GPU", skip-zh = "用 torch.compile 编译 Triton 内核，这需要 GPU" }
# ///
"""What Inductor generates around a triton_op, around a custom_op, and for plain PyTorch.

On a CUDA GPU:  python generated_code.py
The same kernel, with the same neighbours, behind torch.library.triton_op (traced) and
torch.library.custom_op (opaque); torch._inductor.utils.run_and_get_code returns the code.
"""

import re

import torch
import triton
import triton.language as tl
from torch._inductor.utils import run_and_get_code
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


# --8<-- [start:ops]
@triton_op("mylib::sigmoid_mul", mutates_args=())  # (1)!
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


@torch.library.custom_op("mylib::sigmoid_mul_opaque", mutates_args=())  # (2)!
def sigmoid_mul_opaque(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    check_inputs(x, y)
    check_cuda(x)
    out = torch.empty(x.shape, dtype=x.dtype, device=x.device)
    n = out.numel()
    with torch.cuda.device(x.device):
        sigmoid_mul_kernel[(triton.cdiv(n, 1024),)](  # (3)!
            x.contiguous(), y.contiguous(), out, n, BLOCK_SIZE=1024
        )
    return out


sigmoid_mul.register_fake(sigmoid_mul_fake)
sigmoid_mul_opaque.register_fake(sigmoid_mul_fake)  # (4)!
# --8<-- [end:ops]


# --8<-- [start:models]
def with_triton_op(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    return torch.relu(torch.ops.mylib.sigmoid_mul(x * 2.0 + 1.0, y)) * 3.0  # (1)!


def with_custom_op(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    return torch.relu(torch.ops.mylib.sigmoid_mul_opaque(x * 2.0 + 1.0, y)) * 3.0


def in_pytorch(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    return torch.relu((x * 2.0 + 1.0) * torch.sigmoid(y)) * 3.0  # (2)!


# --8<-- [end:models]


if __name__ == "__main__":
    if not torch.cuda.is_available():
        raise SystemExit("This snippet needs a CUDA GPU: torch.compile runs Triton kernels there.")
    torch.manual_seed(0)
    x, y = torch.randn(4096).cuda(), torch.randn(4096).cuda()
    expected = in_pytorch(x, y)
    codes = {}
    # --8<-- [start:code]
    for name, fn in (
        ("triton_op", with_triton_op),
        ("custom_op", with_custom_op),
        ("pytorch", in_pytorch),
    ):
        out, sources = run_and_get_code(torch.compile(fn, fullgraph=True), x, y)  # (1)!
        torch.testing.assert_close(out, expected, rtol=1e-5, atol=1e-6)
        code = "\n".join(sources)
        kernels = re.findall(r"async_compile\.triton\(\s*['\"](\w+)['\"]", code)  # (2)!
        calls = sorted(set(re.findall(r"torch\.ops\.mylib\.\w+", code)))  # (3)!
        print(f"{name}: kernels defined in the generated code: {kernels}")
        print(f"{name}: calls through torch.ops: {calls}")
        codes[name] = (kernels, calls)
    # --8<-- [end:code]
    own = lambda kernels: [k for k in kernels if k.startswith("triton_")]
    kernels, calls = codes["triton_op"]
    assert "sigmoid_mul_kernel" in kernels and calls == [], codes["triton_op"]
    assert len(own(kernels)) >= 2, kernels  # the neighbours stay outside the user kernel
    kernels, calls = codes["custom_op"]
    assert "sigmoid_mul_kernel" not in kernels and len(own(kernels)) >= 2, kernels
    assert calls == ["torch.ops.mylib.sigmoid_mul_opaque"], calls
    kernels, calls = codes["pytorch"]
    assert len(kernels) == 1 and calls == [], codes["pytorch"]
    print("generated_code: all checks passed")
