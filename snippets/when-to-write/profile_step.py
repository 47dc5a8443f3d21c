# /// script
# requires-python = ">=3.10"
# dependencies = ["torch", "triton", "numpy"]
#
# [tool.snippet]
# gpu = { min-cc = "8.0", timing = true }
# cpu = { skip = "ranks operators by GPU time; a CPU run has no GPU time to rank", skip-zh = "按 GPU 时间给算子排序；CPU 上没有 GPU 时间可排" }
# ///
"""Where does a transformer block's forward step spend its GPU time? Ask torch.profiler.

On a CUDA GPU:  python profile_step.py
Profiles 10 steps of one bfloat16 transformer block, 5 times, and reports each operator's share of
the GPU time: the ranking of the operators, and the shares of matrix multiplications, attention
and everything else, as median and range over the 5 profiles.
"""

import json
import statistics

import torch
import torch.nn.functional as F
from torch import nn
from torch.profiler import ProfilerActivity, profile

REPEATS, STEPS = 5, 10


class Block(nn.Module):
    """Pre-norm transformer block: attention, then an MLP, each with a residual."""

    def __init__(self, dim: int = 1024, heads: int = 16) -> None:
        super().__init__()
        self.heads = heads
        self.norm1, self.norm2 = nn.LayerNorm(dim), nn.LayerNorm(dim)
        self.qkv, self.proj = nn.Linear(dim, 3 * dim), nn.Linear(dim, dim)
        self.up, self.down = nn.Linear(dim, 4 * dim), nn.Linear(4 * dim, dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, s, d = x.shape
        qkv = self.qkv(self.norm1(x)).view(b, s, 3, self.heads, d // self.heads)
        q, k, v = qkv.permute(2, 0, 3, 1, 4)
        attn = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.proj(attn.transpose(1, 2).reshape(b, s, d))
        return x + self.down(F.gelu(self.up(self.norm2(x))))


# --8<-- [start:profile]
MATMUL = {"aten::mm", "aten::addmm", "aten::bmm", "aten::baddbmm"}


def kind(op: str) -> str:
    if op in MATMUL:
        return "matmul"
    return "attention" if "attention" in op else "other"  # (1)!


def gpu_time_by_op(model: nn.Module, x: torch.Tensor) -> dict[str, float]:
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        for _ in range(STEPS):
            model(x)
        torch.cuda.synchronize()  # (2)!
    return {
        row.key: row.self_device_time_total  # (3)!
        for row in prof.key_averages()
        if row.key.startswith("aten::") and row.self_device_time_total > 0
    }


# --8<-- [end:profile]


def percent(values: list[float], op: str) -> dict:
    return {
        "value": round(statistics.median(values), 1),
        "unit": "%",
        "statistic": "median",
        "spread": "min-max",
        "low": round(min(values), 1),
        "high": round(max(values), 1),
        "repeats": len(values),
        "op": op,
        "shape": "batch 8, sequence 1024, width 1024, 16 heads",
        "dtype": "bfloat16",
        "compile": "excluded",
        "clock": "kernel",
    }


if __name__ == "__main__":
    if not torch.cuda.is_available():
        raise SystemExit("This snippet needs a CUDA GPU: it ranks operators by GPU time.")
    torch.manual_seed(0)
    model = Block().to("cuda", torch.bfloat16).eval()
    x = torch.randn(8, 1024, 1024).to("cuda", torch.bfloat16)
    # --8<-- [start:run]
    shares = {"matmul": [], "attention": [], "other": []}
    with torch.no_grad():
        reference = model.float()(x.float())  # (1)!
        model.to(torch.bfloat16)
        torch.testing.assert_close(model(x).float(), reference, atol=0.1, rtol=0.05)
        for _ in range(REPEATS):
            by_op = gpu_time_by_op(model, x)
            total = sum(by_op.values())
            for k in shares:
                part = sum(t for op, t in by_op.items() if kind(op) == k)
                shares[k].append(100 * part / total)
    ranking = sorted(by_op, key=by_op.get, reverse=True)  # (2)!
    print(f"ops by kernel time, largest first: {' > '.join(ranking[:5])}")
    # --8<-- [end:run]
    assert kind(ranking[0]) == "matmul", ranking
    assert statistics.median(shares["matmul"]) > 50, shares
    figures = {
        f"{k}_share": percent(v, f"share of kernel time in {k} ops, transformer block forward")
        for k, v in shares.items()
    }
    figures["speedup_bound"] = {
        "value": round(100 / (100 - figures["other_share"]["value"]), 2),
        "statistic": "ratio",
        "op": "kernel time of the step over the same if every 'other' op took none (Amdahl)",
        "clock": "kernel",
    }
    print("figures: " + json.dumps(figures))
    print("profile_step: all checks passed")
