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
Times each with triton.testing.do_bench (L2 cleared before each run, compile excluded) on 2**26
float32 elements and reports the median and the 20 % / 80 % quantiles.
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
    out = torch.empty_like(x)
    n = out.numel()
    gelu_mul_add_kernel[(triton.cdiv(n, 1024),)](x, y, z, out, n, BLOCK_SIZE=1024)
    return out


# --8<-- [end:kernel]


def timing(fn, op: str) -> dict:
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
        "op": op,
        "reference": "eager F.gelu(x) * y + z",
        "shape": "n=2**26",
        "dtype": "float32",
        "compile": "excluded",
    }


if __name__ == "__main__":
    if not torch.cuda.is_available():
        raise SystemExit("This snippet needs a CUDA GPU.")
    torch.manual_seed(0)
    n = 2**26
    x, y, z = (torch.randn(n).to("cuda") for _ in range(3))
    expected = chain(x, y, z)
    torch.testing.assert_close(compiled_chain(x, y, z), expected)  # compiles it
    torch.testing.assert_close(gelu_mul_add(x, y, z), expected)
    for size in (0, 1, 1000, 1025):
        xs, ys, zs = x[:size], y[:size], z[:size]
        torch.testing.assert_close(gelu_mul_add(xs, ys, zs), chain(xs, ys, zs))
    special = torch.tensor([float("nan"), float("inf"), -float("inf"), 0.0], device="cuda")
    torch.testing.assert_close(
        gelu_mul_add(special, special, special), chain(special, special, special), equal_nan=True
    )
    # --8<-- [start:run]
    figures = {
        "eager_ms": timing(lambda: chain(x, y, z), "eager: three kernels"),
        "compile_ms": timing(lambda: compiled_chain(x, y, z), "torch.compile: one kernel"),
        "triton_ms": timing(lambda: gelu_mul_add(x, y, z), "hand-written Triton kernel"),
    }
    # --8<-- [end:run]
    for name in ("compile", "triton"):
        figures[f"eager_over_{name}"] = {
            "value": round(figures["eager_ms"]["value"] / figures[f"{name}_ms"]["value"], 2),
            "statistic": "ratio",
            "op": f"median time, eager over {name}",
        }
    assert figures["compile_ms"]["value"] < figures["eager_ms"]["value"], figures
    assert 0.85 < figures["compile_ms"]["value"] / figures["triton_ms"]["value"] < 1.15, figures
    print("figures: " + json.dumps(figures))
    print("fusion_timing: all checks passed")
