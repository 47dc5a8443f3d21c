# /// script
# requires-python = ">=3.10"
# dependencies = ["torch", "triton", "numpy"]
#
# [tool.snippet]
# gpu = { min-cc = "8.0", timing = true }
# cpu = { skip = "measures time on the GPU, with torch.compile around Triton kernels", skip-zh = "测的是 GPU 上的耗时，要在 torch.compile 中编译 Triton 内核" }
# ///
"""Time the same function on the GPU: eager and compiled, with the kernel behind a triton_op,
behind a custom_op, and written in PyTorch; on small tensors also compiled with CUDA graphs.

On a CUDA GPU:  python compile_timing.py   (about 30 s)
Large tensors: kernel time per call, triton.testing.do_bench_cudagraph (CUDA-graph replay of
many calls; median and 20/80 % quantiles of 10 replays).
Small tensors: wall-clock time per call over many back-to-back calls, host launch included
(median and range of 7 batches), with mode="reduce-overhead" (CUDA graphs) beside the default.
"""

import json
import statistics
import time

import torch
import triton
import triton.language as tl
from torch._dynamo.utils import counters
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


# Separate functions for the CUDA-graph versions, so that each compiled version has a code object
# (and a compile cache entry) of its own.
def with_triton_op_graphed(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    return with_triton_op(x, y)


def with_custom_op_graphed(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    return with_custom_op(x, y)


def in_pytorch_graphed(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    return in_pytorch(x, y)


def kernel_alone(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    return torch.ops.mylib.sigmoid_mul(x, y)


def kernel_alone_static(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    return torch.ops.mylib.sigmoid_mul(x, y)


# --8<-- [start:variants]
VARIANTS = {
    "eager_pytorch": in_pytorch,
    "eager_triton_op": with_triton_op,
    "compiled_triton_op": torch.compile(with_triton_op, fullgraph=True, dynamic=True),  # (1)!
    "compiled_custom_op": torch.compile(with_custom_op, fullgraph=True, dynamic=True),
    "compiled_pytorch": torch.compile(in_pytorch, fullgraph=True, dynamic=True),
}
GRAPHED = {  # (2)!
    "graphs_triton_op": torch.compile(
        with_triton_op_graphed, mode="reduce-overhead", fullgraph=True
    ),
    "graphs_custom_op": torch.compile(
        with_custom_op_graphed, mode="reduce-overhead", fullgraph=True
    ),
    "graphs_pytorch": torch.compile(in_pytorch_graphed, mode="reduce-overhead", fullgraph=True),
}
# --8<-- [end:variants]
# --8<-- [start:alone]
ALONE = {  # the triton_op alone, compiled with a symbolic size and with the exact size
    "alone_dynamic": torch.compile(kernel_alone, fullgraph=True, dynamic=True),
    "alone_static": torch.compile(kernel_alone_static, fullgraph=True, dynamic=False),
}


def n_divisible_by_16(source: str) -> bool:
    """Whether Inductor's launch of sigmoid_mul_kernel tells Triton that n_elements (argument 3)
    is a multiple of 16: the 'configs' entry of the kernel's triton_meta in the generated code."""
    (meta,) = [
        line for line in source.splitlines() if "'n_elements'" in line and "triton_meta" in line
    ]
    return "(3,): [['tt.divisibility', 16]]" in meta  # (1)!


# --8<-- [end:alone]

# Bytes each version moves per element, float32: what the kernel times are compared with.
BYTES_PER_ELEMENT = {
    "eager_pytorch": 52,  # x*2, +1, sigmoid(y), *, relu, *3: six kernels
    "eager_triton_op": 44,  # x*2, +1, the kernel, relu, *3: five kernels
    "compiled_triton_op": 28,  # (x*2+1), the kernel, relu(.)*3: three kernels
    "compiled_custom_op": 28,  # the same three kernels
    "compiled_pytorch": 12,  # one fused kernel: read x and y, write the result
}


# --8<-- [start:measure]
def kernel_times_ms(fn) -> list[float]:
    """Kernel time per call: many calls captured in one CUDA graph and replayed 10 times."""
    return triton.testing.do_bench_cudagraph(fn, rep=50, return_mode="all")  # (1)!


def kernel_figure(times_ms: list[float], n: int) -> dict:
    q = statistics.quantiles(times_ms, n=5)
    return {
        "value": round(statistics.median(times_ms), 4),
        "unit": "ms",
        "statistic": "median",
        "spread": "p20-p80",
        "low": round(q[0], 4),
        "high": round(q[3], 4),
        "repeats": len(times_ms),
        "clock": "kernel",
        "shape": f"n={n}, 3 interleaved rounds",
    }


def wall_time_per_call(fn, n: int, calls: int = 200, batches: int = 7) -> dict:
    """Wall-clock time per call over back-to-back calls: the host's launch work is in it."""
    for _ in range(3):
        fn()  # (2)!
    per_call_us = []
    for _ in range(batches):
        torch.cuda.synchronize()
        start = time.perf_counter()
        for _ in range(calls):
            fn()
        torch.cuda.synchronize()  # (3)!
        per_call_us.append((time.perf_counter() - start) / calls * 1e6)
    return {
        "value": round(statistics.median(per_call_us), 2),
        "unit": "µs",
        "statistic": "median",
        "spread": "min-max",
        "low": round(min(per_call_us), 2),
        "high": round(max(per_call_us), 2),
        "repeats": batches,
        "clock": "wall",
        "shape": f"n={n}, {calls} calls per batch",
    }


# --8<-- [end:measure]


def ratio(figures: dict, num: str, den: str, what: str) -> dict:
    clock = figures[den]["clock"]
    assert figures[num]["clock"] == clock, (num, den)
    return {
        "value": round(figures[num]["value"] / figures[den]["value"], 3),
        "statistic": "ratio",
        "clock": clock,
        "op": f"median {what}, {num} over {den}",
    }


if __name__ == "__main__":
    if not torch.cuda.is_available():
        raise SystemExit("This snippet needs a CUDA GPU: it measures kernel and call times.")
    torch.manual_seed(0)
    figures = {}
    # --8<-- [start:run]
    n = 2**24  # large tensors: kernel time
    x, y = torch.randn(n).cuda(), torch.randn(n).cuda()
    large, divisible = {**VARIANTS, **ALONE}, {}
    for name, fn in large.items():
        want = in_pytorch(x, y) if name in VARIANTS else x * torch.sigmoid(y)
        got, sources = run_and_get_code(fn, x, y)  # (1)!
        torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-6)
        if name in ALONE:
            divisible[name] = n_divisible_by_16("\n".join(sources))
    times = {name: [] for name in large}
    for _ in range(3):  # (2)!
        for name, fn in large.items():
            times[name] += kernel_times_ms(lambda fn=fn: fn(x, y))
    for name, t in times.items():
        what = "relu(sigmoid_mul(2x + 1, y)) * 3" if name in VARIANTS else "sigmoid_mul(x, y)"
        figures[f"{name}_large"] = {**kernel_figure(t, n), "op": f"{what}, {name}"}
    n = 2**12  # small tensors: wall-clock time per call
    x, y = torch.randn(n).cuda(), torch.randn(n).cuda()
    for name, fn in {**VARIANTS, **GRAPHED}.items():
        counters["inductor"]["cudagraph_skips"] = 0
        torch.testing.assert_close(fn(x, y), in_pytorch(x, y), rtol=1e-5, atol=1e-6)
        figure = wall_time_per_call(lambda fn=fn: fn(x, y), n)
        skips = counters["inductor"]["cudagraph_skips"]
        assert skips == 0 or name not in GRAPHED, f"{name}: CUDA graphs skipped"  # (3)!
        figures[f"{name}_small"] = {**figure, "op": f"relu(sigmoid_mul(2x + 1, y)) * 3, {name}"}
    # --8<-- [end:run]
    for figure in figures.values():
        figure.update(compile="excluded", dtype="float32")
    base = "compiled_triton_op_large"
    for other in ("compiled_custom_op", "compiled_pytorch", "eager_triton_op"):
        figures[f"{other}_vs_triton_op_large"] = ratio(
            figures, f"{other}_large", base, "kernel time, 2**24 elements"
        )
    figures["alone_dynamic_vs_static_large"] = ratio(
        figures, "alone_dynamic_large", "alone_static_large", "kernel time, 2**24 elements"
    )
    for num, den in (
        ("compiled_custom_op", "compiled_triton_op"),
        ("compiled_pytorch", "compiled_triton_op"),
        ("graphs_custom_op", "graphs_triton_op"),
        ("graphs_triton_op", "compiled_triton_op"),
        ("graphs_custom_op", "compiled_custom_op"),
        ("graphs_pytorch", "compiled_pytorch"),
    ):
        figures[f"{num}_vs_{den}_small"] = ratio(
            figures, f"{num}_small", f"{den}_small", "wall-clock time per call, 2**12 elements"
        )
    for name, per_element in BYTES_PER_ELEMENT.items():
        ms = figures[f"{name}_large"]["value"]
        print(
            f"{name:20} {per_element:3} bytes/element: {per_element * 2**24 / ms / 1e6:7.0f} GB/s"
        )
    for name, known in divisible.items():
        print(f"{name}: Inductor's launch says n_elements is a multiple of 16: {known}")
    # What the page concludes, each asserted. Kernel time:
    assert figures["compiled_pytorch_vs_triton_op_large"]["value"] < 0.8, figures  # 12 vs 28 B
    assert figures["eager_triton_op_vs_triton_op_large"]["value"] > 1.2, figures  # 44 vs 28 B
    assert 0.8 < figures["compiled_custom_op_vs_triton_op_large"]["value"] < 1.25, figures
    assert divisible == {"alone_dynamic": False, "alone_static": True}, divisible
    assert figures["alone_dynamic_vs_static_large"]["value"] > 1.04, figures
    # Wall-clock time per call, where the host's work shows:
    assert figures["compiled_custom_op_vs_compiled_triton_op_small"]["value"] > 1.2, figures
    assert figures["graphs_custom_op_vs_compiled_custom_op_small"]["value"] < 0.8, figures
    print("figures: " + json.dumps(figures))
    print("compile_timing: all checks passed")
