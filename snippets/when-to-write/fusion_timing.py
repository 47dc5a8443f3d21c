# /// script
# requires-python = ">=3.10"
# dependencies = ["torch", "triton", "numpy"]
#
# [tool.snippet]
# gpu = { min-cc = "8.0", timing = true }
# cpu = { skip = "times GPU kernels; the interpreter says nothing about speed", skip-zh = "测的是 GPU 内核的耗时；解释器的速度说明不了任何问题" }
# ///
"""gelu(x) * y + z: eager PyTorch, torch.compile and a hand-written fused Triton kernel, timed.

On a CUDA GPU:  python fusion_timing.py
On 2**26 float32 elements, each is timed twice: kernel time, the GPU time of its kernels alone
(triton.testing.do_bench_cudagraph, CUDA-graph replay), and call time, host launch included
(triton.testing.do_bench, L2 cleared before each run). Compile time is excluded from both.
"""

import json
import statistics

import torch
import torch.nn.functional as F
import triton
import triton.language as tl


def chain(x: torch.Tensor, y: torch.Tensor, z: torch.Tensor) -> torch.Tensor:
    return F.gelu(x) * y + z


compiled_chain = torch.compile(chain)


# --8<-- [start:kernel]
@triton.jit
def gelu_mul_add_kernel(x_ptr, y_ptr, z_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    offsets = tl.program_id(axis=0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    z = tl.load(z_ptr + offsets, mask=mask)
    gelu = 0.5 * x * (1.0 + tl.math.erf(x * 0.7071067811865476))  # (1)!
    tl.store(out_ptr + offsets, gelu * y + z, mask=mask)


def gelu_mul_add(x: torch.Tensor, y: torch.Tensor, z: torch.Tensor) -> torch.Tensor:
    """F.gelu(x) * y + z for float32 CUDA tensors of one shape. No broadcasting, no autograd."""
    if not x.shape == y.shape == z.shape:
        raise ValueError(f"shapes differ: {x.shape}, {y.shape}, {z.shape} (no broadcasting)")
    if {x.dtype, y.dtype, z.dtype} != {torch.float32}:
        raise TypeError(f"takes float32 tensors, not {x.dtype}, {y.dtype}, {z.dtype}")
    if not x.is_cuda or not x.device == y.device == z.device:
        raise ValueError(
            f"takes tensors on one CUDA device, not {x.device}, {y.device}, {z.device}"
        )
    if torch.is_grad_enabled() and (x.requires_grad or y.requires_grad or z.requires_grad):
        raise RuntimeError("gelu_mul_add() has no autograd; use torch.library.triton_op for one")
    if x.numel() >= 2**31:
        raise ValueError(f"{x.numel()} elements overflow the kernel's int32 offsets")
    x, y, z = x.contiguous(), y.contiguous(), z.contiguous()  # (2)!
    out = torch.empty(x.shape, dtype=x.dtype, device=x.device)
    n = out.numel()
    with torch.cuda.device(x.device):
        gelu_mul_add_kernel[(triton.cdiv(n, 1024),)](x, y, z, out, n, BLOCK_SIZE=1024)
    return out


# --8<-- [end:kernel]


def timing(times_ms: list[float], op: str, clock: str) -> dict:
    times_ms = sorted(times_ms)
    q = statistics.quantiles(times_ms, n=5)
    return {
        "value": round(statistics.median(times_ms), 4),
        "unit": "ms",
        "statistic": "median",
        "spread": "p20-p80",
        "low": round(q[0], 4),
        "high": round(q[3], 4),
        "repeats": len(times_ms),
        "op": op,
        "reference": "eager F.gelu(x) * y + z",
        "shape": "n=2**26",
        "dtype": "float32",
        "compile": "excluded",
        "clock": clock,
    }


def check_launcher(x: torch.Tensor, y: torch.Tensor, z: torch.Tensor) -> None:
    for size in (0, 1, 1000, 1025):
        xs, ys, zs = x[:size], y[:size], z[:size]
        torch.testing.assert_close(gelu_mul_add(xs, ys, zs), chain(xs, ys, zs))
    special = torch.tensor([float("nan"), float("inf"), -float("inf"), 0.0], device="cuda")
    torch.testing.assert_close(
        gelu_mul_add(special, special, special), chain(special, special, special), equal_nan=True
    )
    square = x[: 64 * 64].view(64, 64)
    strided = x[: 64 * 128].view(64, 128)[:, ::2]
    for views in ((square, square.t(), square), (strided, square, square.t())):
        torch.testing.assert_close(gelu_mul_add(*views), chain(*views))
    for bad in ((x[:4], y[:5], z[:4]), (x[:4].double(), y[:4], z[:4]), (x[:4].cpu(), y[:4], z[:4])):
        try:
            gelu_mul_add(*bad)
        except (ValueError, TypeError):
            continue
        raise AssertionError("gelu_mul_add() accepted inputs it should refuse")
    print("gelu_mul_add: sizes 0, 1, 1000, 1025, NaN/Inf, transposed and strided inputs checked")


if __name__ == "__main__":
    if not torch.cuda.is_available():
        raise SystemExit("This snippet needs a CUDA GPU.")
    torch.manual_seed(0)
    n = 2**26
    x, y, z = (torch.randn(n).to("cuda") for _ in range(3))
    expected = chain(x, y, z)
    torch.testing.assert_close(compiled_chain(x, y, z), expected)  # compiles it
    torch.testing.assert_close(gelu_mul_add(x, y, z), expected)
    check_launcher(x, y, z)
    # --8<-- [start:run]
    runs = {
        "eager": (lambda: chain(x, y, z), "eager: three kernels"),
        "compile": (lambda: compiled_chain(x, y, z), "torch.compile: one kernel"),
        "triton": (lambda: gelu_mul_add(x, y, z), "hand-written Triton kernel"),
    }
    figures = {}
    for name, (fn, op) in runs.items():
        kernel = triton.testing.do_bench_cudagraph(fn, return_mode="all")  # (1)!
        call = triton.testing.do_bench(fn, rep=50, return_mode="all")  # (2)!
        figures[f"{name}_kernel_ms"] = timing(kernel, op, "kernel")
        figures[f"{name}_ms"] = timing(call, op, "call")
    # --8<-- [end:run]
    for name in ("compile", "triton"):
        for suffix, clock, tail in (
            ("_kernel_ms", "kernel time", "_kernel"),
            ("_ms", "call time", ""),
        ):
            eager, other = figures[f"eager{suffix}"]["value"], figures[f"{name}{suffix}"]["value"]
            figures[f"eager_over_{name}{tail}"] = {
                "value": round(eager / other, 2),
                "statistic": "ratio",
                "clock": "kernel" if tail else "call",
                "op": f"median {clock}, eager over {name}",
            }
    for suffix in ("_kernel_ms", "_ms"):
        assert figures[f"compile{suffix}"]["value"] < figures[f"eager{suffix}"]["value"], figures
    ratio = figures["compile_kernel_ms"]["value"] / figures["triton_kernel_ms"]["value"]
    assert 0.85 < ratio < 1.15, figures
    print("figures: " + json.dumps(figures))
    print("fusion_timing: all checks passed")
