# /// script
# requires-python = ">=3.10"
# dependencies = ["torch", "triton", "numpy"]
#
# [tool.snippet]
# gpu = { min-cc = "8.0", timing = true }
# cpu = { skip = "times attention on the GPU; the CPU runs other kernels", skip-zh = "测的是 GPU 上的注意力耗时；CPU 跑的是另一套内核" }
# ///
"""Attention written out by hand, in eager mode and under torch.compile, against
F.scaled_dot_product_attention (SDPA), which runs a fused attention kernel.

On a CUDA GPU:  python attention_sdpa.py
Times each with triton.testing.do_bench (compile excluded), checks each against float32 SDPA, and
reads Inductor's counter of attention patterns it replaced with SDPA.
"""

import json
import math
import statistics

import torch
import torch.nn.functional as F
import triton
from torch._dynamo.utils import counters


# --8<-- [start:naive]
def naive_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    scores = torch.matmul(q, k.transpose(-2, -1)).div(math.sqrt(q.shape[-1]))  # (1)!
    return scores.softmax(dim=-1).matmul(v)


compiled_naive = torch.compile(naive_attention)
# --8<-- [end:naive]


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
        "reference": "F.scaled_dot_product_attention",
        "shape": "batch 4, heads 16, sequence 2048, head dim 64",
        "dtype": "float16",
        "compile": "excluded",
        "clock": "call",
    }


if __name__ == "__main__":
    if not torch.cuda.is_available():
        raise SystemExit("This snippet needs a CUDA GPU.")
    torch.manual_seed(0)
    q, k, v = (torch.randn(4, 16, 2048, 64).to("cuda", torch.float16) for _ in range(3))
    # --8<-- [start:run]
    with torch.no_grad():
        reference = F.scaled_dot_product_attention(q.float(), k.float(), v.float())
        for fn in (naive_attention, compiled_naive, F.scaled_dot_product_attention):
            torch.testing.assert_close(fn(q, k, v).float(), reference, atol=2e-3, rtol=2e-2)
        replaced = counters["inductor"]["fuse_attention"]  # (1)!
        print(f"attention patterns Inductor replaced with SDPA: {replaced}")
        figures = {
            "naive_eager_ms": timing(lambda: naive_attention(q, k, v), "naive attention, eager"),
            "naive_compile_ms": timing(lambda: compiled_naive(q, k, v), "naive, torch.compile"),
            "sdpa_ms": timing(lambda: F.scaled_dot_product_attention(q, k, v), "SDPA, eager"),
        }
    # --8<-- [end:run]
    assert replaced >= 1, replaced
    for name in ("naive_eager", "naive_compile"):
        figures[f"{name}_over_sdpa"] = {
            "value": round(figures[f"{name}_ms"]["value"] / figures["sdpa_ms"]["value"], 2),
            "statistic": "ratio",
            "op": f"median time, {name.replace('_', ' ')} over SDPA",
        }
    assert figures["sdpa_ms"]["value"] < figures["naive_eager_ms"]["value"], figures
    print("figures: " + json.dumps(figures))
    print("attention_sdpa: all checks passed")
