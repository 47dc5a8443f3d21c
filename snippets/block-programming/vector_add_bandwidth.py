# /// script
# requires-python = ">=3.10"
# dependencies = ["torch", "triton", "numpy"]
#
# [tool.snippet]
# gpu = { min-cc = "8.0", timing = true }
# cpu = { skip = "measures GPU memory bandwidth; the interpreter says nothing about speed", skip-zh = "测的是 GPU 显存带宽；解释器的速度说明不了任何问题" }
# ///
"""How close does the vector add get to the memory's limit? Triton against torch.add and compile.

On a CUDA GPU:  python vector_add_bandwidth.py
Times each implementation with triton.testing.do_bench (L2 cleared before each run, compile
excluded), and reports the median and the 20 % / 80 % quantiles of effective bandwidth: bytes read
plus bytes written, over time.
"""

import json
import statistics

import torch
import triton
import triton.language as tl

HBM_TB_S = 4.8  # NVIDIA H200 datasheet: HBM3e bandwidth


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(axis=0)
    offsets = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    tl.store(out_ptr + offsets, x + y, mask=mask)


def triton_add(x: torch.Tensor, y: torch.Tensor, out: torch.Tensor) -> None:
    n = out.numel()
    add_kernel[(triton.cdiv(n, 1024),)](x, y, out, n, BLOCK_SIZE=1024)


compiled_add = torch.compile(lambda x, y: x + y)


def implementations(x: torch.Tensor, y: torch.Tensor, out: torch.Tensor) -> dict:
    return {
        "triton": lambda: triton_add(x, y, out),
        "eager": lambda: torch.add(x, y, out=out),
        "compile": lambda: compiled_add(x, y),
    }


# --8<-- [start:bench]
def bandwidth(fn, n: int, element_size: int) -> dict:
    """Effective GB/s of fn over do_bench's runs: median and 20/80 % quantiles."""
    times_ms = triton.testing.do_bench(fn, return_mode="all")  # (1)!
    gbps = sorted(3 * n * element_size / (t * 1e-3) / 1e9 for t in times_ms)  # (2)!
    q = statistics.quantiles(gbps, n=5)  # 20, 40, 60, 80 % cut points
    return {
        "value": round(statistics.median(gbps)),
        "unit": "GB/s",
        "statistic": "median",
        "spread": "p20-p80",
        "low": round(q[0]),
        "high": round(q[3]),
        "repeats": len(gbps),
        "shape": f"n={n}",
        "dtype": "float32",
        "compile": "excluded",
    }


# --8<-- [end:bench]


if __name__ == "__main__":
    if not torch.cuda.is_available():
        raise SystemExit("This snippet needs a CUDA GPU.")
    figures = {}
    # --8<-- [start:run]
    for n, tag in ((2**28, ""), (2**28 + 1, "_odd")):  # (1)!
        x, y = torch.rand(n, device="cuda"), torch.rand(n, device="cuda")
        out = torch.empty_like(x)
        triton_add(x, y, out)
        torch.testing.assert_close(out, x + y, rtol=0, atol=0)
        torch.testing.assert_close(compiled_add(x, y), x + y, rtol=0, atol=0)  # compiles it
        for impl, fn in implementations(x, y, out).items():
            figures[f"{impl}{tag}_gbps"] = {
                **bandwidth(fn, n, 4),
                "op": f"x + y ({impl})",
                "reference": "torch.add",
            }
            print(f"n={n} {impl:8}: {figures[f'{impl}{tag}_gbps']['value']} GB/s")
    # --8<-- [end:run]
    limit = HBM_TB_S * 1000
    figures["hbm_limit_gbps"] = {
        "value": limit,
        "unit": "GB/s",
        "statistic": "spec",
        "op": "NVIDIA H200 datasheet HBM3e bandwidth",
    }
    figures["triton_vs_eager"] = {
        "value": round(figures["triton_gbps"]["value"] / figures["eager_gbps"]["value"], 3),
        "statistic": "ratio",
        "op": "median GB/s, Triton over torch.add, n=2**28",
    }
    figures["triton_of_limit"] = {
        "value": round(figures["triton_gbps"]["value"] / limit, 3),
        "statistic": "ratio",
        "op": "median GB/s, Triton over the datasheet's 4.8 TB/s, n=2**28",
    }
    print("figures: " + json.dumps(figures))
    print("vector_add_bandwidth: all checks passed")
