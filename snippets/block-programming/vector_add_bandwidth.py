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
Times each implementation with triton.testing.do_bench (call time: host launch included, L2
cleared before each run, compile excluded), and reports effective bandwidth, bytes read plus bytes
written over the median time, with the 20 % / 80 % quantiles; a device copy in the same run is the
roof that memory reached.
"""

import json
import statistics

import torch
import triton
import triton.language as tl

HBM_TB_S = 4.8  # NVIDIA H200 datasheet: HBM3e bandwidth
FP32_TFLOPS = 67  # NVIDIA H200 datasheet: FP32, without tensor cores


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
    """Each implementation, with the arrays it moves: two read and one written, or one and one."""
    return {
        "triton": (lambda: triton_add(x, y, out), 3),
        "eager": (lambda: torch.add(x, y, out=out), 3),
        "compile": (lambda: compiled_add(x, y), 3),
        "copy": (lambda: out.copy_(x), 2),
    }


# --8<-- [start:bench]
def bandwidth(fn, n: int, arrays: int, element_size: int) -> dict:
    """Effective GB/s of fn: bytes moved over the median of do_bench's runs, 20/80 % quantiles."""
    times_ms = triton.testing.do_bench(fn, return_mode="all")  # (1)!
    moved = arrays * n * element_size  # (2)!
    median, q = statistics.median(times_ms), statistics.quantiles(times_ms, n=5)
    return {
        "value": round(moved / median / 1e6),
        "unit": "GB/s",
        "statistic": "median",
        "spread": "p20-p80",
        "low": round(moved / q[3] / 1e6),
        "high": round(moved / q[0] / 1e6),
        "repeats": len(times_ms),
        "shape": f"n={n}",
        "dtype": "float32",
        "compile": "excluded",
        "clock": "call",
        "bytes": moved,
        "ms_median": round(median, 5),
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
        for impl, (fn, arrays) in implementations(x, y, out).items():
            figures[f"{impl}{tag}_gbps"] = {
                **bandwidth(fn, n, arrays, 4),
                "op": f"x + y ({impl})" if arrays == 3 else "out.copy_(x), a device copy",
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
    figures["fp32_limit_tflops"] = {
        "value": FP32_TFLOPS,
        "unit": "TFLOP/s",
        "statistic": "spec",
        "op": "NVIDIA H200 datasheet FP32 arithmetic, without tensor cores",
    }
    figures["machine_flop_per_byte"] = {
        "value": round(FP32_TFLOPS / HBM_TB_S, 1),
        "statistic": "ratio",
        "op": "datasheet FP32 FLOP/s over datasheet HBM bytes/s",
    }
    figures["triton_vs_eager"] = {
        "value": round(figures["triton_gbps"]["value"] / figures["eager_gbps"]["value"], 3),
        "statistic": "ratio",
        "op": "GB/s from the median call time, Triton over torch.add, n=2**28",
    }
    figures["triton_of_copy"] = {
        "value": round(figures["triton_gbps"]["value"] / figures["copy_gbps"]["value"], 3),
        "statistic": "ratio",
        "op": "GB/s from the median call time, Triton over a device copy in the same run, n=2**28",
    }
    figures["triton_of_limit"] = {
        "value": round(figures["triton_gbps"]["value"] / limit, 3),
        "statistic": "ratio",
        "op": "GB/s from the median call time, Triton over the datasheet's 4.8 TB/s, n=2**28",
    }
    print("figures: " + json.dumps(figures))
    print("vector_add_bandwidth: all checks passed")
