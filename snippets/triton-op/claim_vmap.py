# /// script
# requires-python = ">=3.10"
# dependencies = ["torch", "triton", "numpy"]
#
# [tool.snippet]
# gpu = { skip = "checks how torch.vmap batches an operator, which does not depend on the device; the CPU run of each lock covers it", skip-zh = "检查的是 torch.vmap 怎样对算子做批处理，与设备无关；每个锁定版本的 CPU 运行已经覆盖" }
# cpu = { interpreter = false }
# ///
"""Claim: torch.vmap over a custom operator with no batching rule runs its kernel once per batch
element; with register_vmap, once for the whole batch.

On a CPU or a GPU:  python claim_vmap.py   (CPU tensors; the profiler counts the CPU kernel's
aten::sigmoid calls, one per kernel run). Fails the day a release changes either count.
"""

import torch
from torch.library import triton_op


@triton_op("claimlib::sigmoid_mul", mutates_args=())
def sigmoid_mul(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    raise NotImplementedError("CPU tensors only in this claim; see sigmoid_mul_op.py")


@sigmoid_mul.register_kernel("cpu")
def sigmoid_mul_cpu(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    if x.shape != y.shape:
        raise ValueError(f"shapes differ: {tuple(x.shape)} vs {tuple(y.shape)}")
    return x * torch.sigmoid(y)


def kernel_runs(fn, *args) -> int:
    """How many times the CPU kernel ran: it calls aten::sigmoid once per run."""
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]) as prof:
        out = fn(*args)
    torch.testing.assert_close(out, args[0] * torch.sigmoid(args[1]))
    return sum(1 for event in prof.events() if event.name == "aten::sigmoid")


x, y = torch.randn(8, 1000), torch.randn(8, 1000)
without = kernel_runs(torch.vmap(torch.ops.claimlib.sigmoid_mul), x, y)
print(f"torch.vmap over 8 rows, no batching rule, kernel runs: {without}")


# --8<-- [start:rule]
def sigmoid_mul_vmap(info, in_dims, x, y):  # (1)!
    x_dim, y_dim = in_dims
    x = x.movedim(x_dim, 0) if x_dim is not None else x.expand(info.batch_size, *x.shape)
    y = y.movedim(y_dim, 0) if y_dim is not None else y.expand(info.batch_size, *y.shape)
    return torch.ops.claimlib.sigmoid_mul(x, y), 0  # (2)!


sigmoid_mul.register_vmap(sigmoid_mul_vmap)
# --8<-- [end:rule]
with_rule = kernel_runs(torch.vmap(torch.ops.claimlib.sigmoid_mul), x, y)
print(f"torch.vmap over 8 rows, with register_vmap, kernel runs: {with_rule}")
one_row = torch.randn(1000)  # not batched: in_dims None
assert kernel_runs(torch.vmap(torch.ops.claimlib.sigmoid_mul, in_dims=(0, None)), x, one_row) == 1

assert (without, with_rule) == (8, 1), (without, with_rule)
print("claim_vmap: all checks passed")
