# /// script
# requires-python = ">=3.10"
# dependencies = ["torch", "triton", "numpy"]
#
# [tool.snippet]
# gpu = { min-cc = "8.0" }
# cpu = { interpreter = false }
# ///
"""Claim: which triton.autotune arguments torch.compile accepts and which it rejects.

When TorchDynamo meets the launch of an autotuned kernel, it wraps the kernel in a
TritonKernelVariable, whose constructor runs the check (torch/_higher_order_ops/
triton_kernel_wrap.py). This file runs that check on each argument, on a CPU, for this lock.
Fails the day a release accepts or rejects another argument, so the page's table gets updated.
"""

import re
import warnings

import torch
import triton
import triton.language as tl
from torch._dynamo.variables.functions import TritonKernelVariable


def double(x_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    offsets = tl.program_id(axis=0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    tl.store(out_ptr + offsets, tl.load(x_ptr + offsets, mask=mask) * 2, mask=mask)


TWO = [triton.Config({"BLOCK_SIZE": 128}), triton.Config({"BLOCK_SIZE": 256})]

# --8<-- [start:claim]
ARGUMENTS = {
    "configs, key": {},
    "reset_to_zero": {"reset_to_zero": ["out_ptr"]},
    "restore_value": {"restore_value": ["out_ptr"]},
    "prune_configs_by": {"prune_configs_by": {"early_config_prune": lambda c, args, **kw: c}},
    "do_bench": {"do_bench": lambda fn, quantiles: [1.0, 1.0, 1.0]},
    "cache_results": {"cache_results": True},
    "warmup, rep": {"warmup": 10, "rep": 10},  # (1)!
    "use_cuda_graph": {"use_cuda_graph": True},
    "pre_hook": {"pre_hook": lambda kwargs, reset_only=False: None},
    "post_hook": {"post_hook": lambda kwargs, exception: None},
    "Config(pre_hook=...)": {"configs": [triton.Config({"BLOCK_SIZE": 128}, pre_hook=print)]},
}
verdicts = {}
for name, options in ARGUMENTS.items():
    options = dict(options)
    configs = options.pop("configs", TWO)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        kernel = triton.autotune(configs=configs, key=["n_elements"], **options)(triton.jit(double))
    try:
        TritonKernelVariable(kernel, None, None)  # (2)!
        verdicts[name] = "accepted"
    except torch._dynamo.exc.Unsupported as exc:
        reason = re.search(r"unsupported feature: (.*)", str(exc)).group(1)
        verdicts[name] = f"rejected: {reason}"
    print(f"torch.compile, {name + ':':<22} {verdicts[name]}")

accepted = [name for name, verdict in verdicts.items() if verdict == "accepted"]
assert accepted == list(ARGUMENTS)[:7], accepted
assert verdicts["use_cuda_graph"] == (
    "rejected: Only configs, keys, restore_value, and reset_to_zero are supported for "
    "triton.autotune"
)
for hook in ("pre_hook", "post_hook", "Config(pre_hook=...)"):
    assert verdicts[hook] == (
        "rejected: pre_hook and post_hook are not supported in triton.Autotune or triton.Config"
    )
# --8<-- [end:claim]
print("claim_compile_accepts: all checks passed")
