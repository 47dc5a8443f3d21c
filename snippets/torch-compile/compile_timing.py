# /// script
# requires-python = ">=3.10"
# dependencies = ["torch", "triton", "numpy"]
#
# [tool.snippet]
# gpu = { min-cc = "8.0", timing = true }
# cpu = { skip = "measures time on the GPU, with torch.compile around Triton kernels", skip-zh = "测的是 GPU 上的耗时，要在 torch.compile 中编译 Triton 内核" }
# ///
"""Time the same function five ways on the GPU: eager and compiled, with the kernel behind a
triton_op, behind a custom_op, and written in PyTorch.

On a CUDA GPU:  python compile_timing.py
Large tensors: GPU time per call with triton.testing.do_bench (median, 20/80 % quantiles).
Small tensors: wall-clock time per call over many back-to-back calls (median of 7 batches).
"""

import json
import statistics
import time

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


@torch.library.custom_op("mylib::sigmoid_mul_opaque", mutates_args=())
def sigmoid_mul_opaque(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    check_inputs(x, y)
    check_cuda(x)
    out = torch.empty(x.shape, dtype=x.dtype, device=x.device)
    n = out.numel()
    with torch.cuda.device(x.device):
        sigmoid_mul_kernel[(triton.cdiv(n, 1024),)](
            x.contiguous(), y.contiguous(), out, n, BLOCK_SIZE=1024
        )
    return out


sigmoid_mul.register_fake(sigmoid_mul_fake)
sigmoid_mul_opaque.register_fake(sigmoid_mul_fake)


def with_triton_op(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    return torch.relu(torch.ops.mylib.sigmoid_mul(x * 2.0 + 1.0, y)) * 3.0


def with_custom_op(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    return torch.relu(torch.ops.mylib.sigmoid_mul_opaque(x * 2.0 + 1.0, y)) * 3.0


def in_pytorch(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    return torch.relu((x * 2.0 + 1.0) * torch.sigmoid(y)) * 3.0


# --8<-- [start:variants]
VARIANTS = {
    "eager_pytorch": in_pytorch,
    "eager_triton_op": with_triton_op,
    "compiled_triton_op": torch.compile(with_triton_op, fullgraph=True, dynamic=True),  # (1)!
    "compiled_custom_op": torch.compile(with_custom_op, fullgraph=True, dynamic=True),
    "compiled_pytorch": torch.compile(in_pytorch, fullgraph=True, dynamic=True),
}
# --8<-- [end:variants]


# --8<-- [start:measure]
def gpu_time(fn, n: int) -> dict:
    """GPU time per call on large tensors: do_bench, L2 cleared before each run."""
    times_ms = sorted(triton.testing.do_bench(fn, rep=50, return_mode="all"))
    q = statistics.quantiles(times_ms, n=5)
    return {
        "value": round(statistics.median(times_ms), 4),
        "unit": "ms",
        "statistic": "median",
        "spread": "p20-p80",
        "low": round(q[0], 4),
        "high": round(q[3], 4),
        "repeats": len(times_ms),
        "shape": f"n={n}",
    }


def time_per_call(fn, n: int, calls: int = 200, batches: int = 7) -> dict:
    """Wall-clock time per call on small tensors, back to back: what the CPU side costs."""
    per_call_us = []
    for _ in range(batches):
        torch.cuda.synchronize()
        start = time.perf_counter()
        for _ in range(calls):
            fn()
        torch.cuda.synchronize()  # (1)!
        per_call_us.append((time.perf_counter() - start) / calls * 1e6)
    return {
        "value": round(statistics.median(per_call_us), 2),
        "unit": "µs",
        "statistic": "median",
        "spread": "min-max",
        "low": round(min(per_call_us), 2),
        "high": round(max(per_call_us), 2),
        "repeats": batches,
        "shape": f"n={n}, {calls} calls per batch",
    }


# --8<-- [end:measure]


if __name__ == "__main__":
    if not torch.cuda.is_available():
        raise SystemExit("This snippet needs a CUDA GPU: it measures GPU time.")
    torch.manual_seed(0)
    figures = {}
    # --8<-- [start:run]
    for size_name, n, measure in (("large", 2**24, gpu_time), ("small", 2**12, time_per_call)):
        x, y = torch.randn(n).cuda(), torch.randn(n).cuda()
        expected = in_pytorch(x, y)
        for name, fn in VARIANTS.items():
            torch.testing.assert_close(fn(x, y), expected, rtol=1e-5, atol=1e-6)  # (1)!
            figure = measure(lambda fn=fn, x=x, y=y: fn(x, y), n)
            figures[f"{name}_{size_name}"] = {
                **figure,
                "op": f"relu(sigmoid_mul(2x + 1, y)) * 3, {name}",
                "dtype": "float32",
                "compile": "excluded",
            }
    # --8<-- [end:run]
    for size_name in ("large", "small"):
        base = figures[f"compiled_triton_op_{size_name}"]["value"]
        for other in ("compiled_custom_op", "compiled_pytorch", "eager_triton_op"):
            figures[f"{other}_vs_triton_op_{size_name}"] = {
                "value": round(figures[f"{other}_{size_name}"]["value"] / base, 3),
                "statistic": "ratio",
                "op": f"median, {other} over compiled_triton_op, {size_name} tensors",
            }
    # one fused kernel moves 12 bytes per element, the three kernels around a user kernel 28
    assert figures["compiled_pytorch_vs_triton_op_large"]["value"] < 0.8, figures
    print("figures: " + json.dumps(figures))
    print("compile_timing: all checks passed")
