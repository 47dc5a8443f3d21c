# /// script
# requires-python = ">=3.10"
# dependencies = ["torch", "triton", "numpy"]
#
# [tool.snippet]
# gpu = { min-cc = "8.0" }
# cpu = { skip = "compiles Triton kernels with torch.compile, which needs a GPU", skip-zh = "用 torch.compile 编译 Triton 内核，这需要 GPU" }
# timeout = 300
# ///
"""How many times torch.compile compiles a function around a triton_op over a sweep of sizes:
by default, with dynamic=True, with torch._dynamo.mark_dynamic, and with dynamic=False.

On a CUDA GPU:  python dynamic_shapes.py
A backend that counts its calls, then hands the graph to Inductor, counts the compiles.
"""

import torch
import triton
import triton.language as tl
from torch._inductor.compile_fx import compile_fx
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


sigmoid_mul.register_fake(sigmoid_mul_fake)


def with_triton_op(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    return torch.relu(torch.ops.mylib.sigmoid_mul(x * 2.0 + 1.0, y)) * 3.0


# --8<-- [start:count]
class CountingInductor:
    """A torch.compile backend: count each graph it is given, then compile it with Inductor."""

    def __init__(self) -> None:
        self.compiles = 0

    def __call__(self, graph_module, example_inputs):
        self.compiles += 1  # (1)!
        return compile_fx(graph_module, example_inputs)


# --8<-- [end:count]


if __name__ == "__main__":
    if not torch.cuda.is_available():
        raise SystemExit("This snippet needs a CUDA GPU: torch.compile runs Triton kernels there.")
    torch.manual_seed(0)
    # --8<-- [start:sweep]
    SIZES = (1000, 4096, 5000)  # (1)!
    results = {}
    for mode in ("default", "dynamic=True", "mark_dynamic", "dynamic=False"):
        torch._dynamo.reset()  # (2)!
        backend = CountingInductor()
        dynamic = {"default": None, "dynamic=True": True, "dynamic=False": False}.get(mode)
        compiled = torch.compile(with_triton_op, backend=backend, dynamic=dynamic)
        for i, n in enumerate(SIZES):
            x, y = torch.randn(n).cuda(), torch.randn(n).cuda()
            if mode == "mark_dynamic" and i == 0:
                torch._dynamo.mark_dynamic(x, 0)  # (3)!
                torch._dynamo.mark_dynamic(y, 0)
            torch.testing.assert_close(compiled(x, y), with_triton_op(x, y))
        results[mode] = backend.compiles
        print(f"{mode}: graphs compiled for {len(SIZES)} sizes: {backend.compiles}")
    # --8<-- [end:sweep]
    assert results == {"default": 2, "dynamic=True": 1, "mark_dynamic": 1, "dynamic=False": 3}, (
        results
    )
    print("dynamic_shapes: all checks passed")
