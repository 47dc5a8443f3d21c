# /// script
# requires-python = ">=3.10"
# dependencies = ["torch", "triton"]
#
# [tool.snippet]
# gpu = { skip = "checks TorchDynamo's rule for autotune arguments, which does not depend on the device; claim_compile_accepts.py checks this lock's whole list on the GPU too", skip-zh = "检查的是 TorchDynamo 对自动调优参数的规则，与设备无关；本锁定版本的完整列表由 claim_compile_accepts.py 在 GPU 上也检查" }
# cpu = { interpreter = false }
# ///
"""Claim: torch.compile accepts restore_value and reset_to_zero on an autotuned kernel since
PyTorch 2.6, and prune_configs_by since 2.7; it rejects pre_hook and post_hook since 2.6 (2.5
let them through without a word; 2.6's check cites pytorch/pytorch#139059).

The same check as claim_compile_accepts.py (TorchDynamo's TritonKernelVariable, which runs the
test of torch/_higher_order_ops/triton_kernel_wrap.py), written to run under every torch release
from 2.5 on, so that the history run can say since when each argument is accepted.
"""

import re
import warnings

import torch
import triton
import triton.language as tl
from torch._dynamo.variables.functions import TritonKernelVariable
from triton.runtime import driver

TORCH = tuple(int(p) for p in torch.__version__.split("+")[0].split(".")[:2])


class CPUTimer:
    """Triton 3.2 and 3.3 ask the GPU driver for the autotuner's timer when the autotuner is
    built; with no GPU, a stand-in answers (nothing here is timed)."""

    def get_benchmarker(self):
        return lambda fn, quantiles=None: [1.0, 1.0, 1.0]


try:
    driver.active.get_benchmarker()
except RuntimeError:  # "0 active drivers": no GPU here
    if hasattr(driver, "set_active"):
        driver.set_active(CPUTimer())


def double(x_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    offsets = tl.program_id(axis=0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    tl.store(out_ptr + offsets, tl.load(x_ptr + offsets, mask=mask) * 2, mask=mask)


TWO = [triton.Config({"BLOCK_SIZE": 128}), triton.Config({"BLOCK_SIZE": 256})]

# --8<-- [start:claim]
ARGUMENTS = {
    "reset_to_zero": {"reset_to_zero": ["out_ptr"]},
    "restore_value": {"restore_value": ["out_ptr"]},
    "prune_configs_by": {"prune_configs_by": {"early_config_prune": lambda c, args, **kw: c}},
    "pre_hook": {"pre_hook": lambda kwargs, reset_only=False: None},
    "post_hook": {"post_hook": lambda kwargs, exception: None},
}
SINCE = {"reset_to_zero": (2, 6), "restore_value": (2, 6), "prune_configs_by": (2, 7)}  # (1)!
REJECTED_SINCE = {"pre_hook": (2, 6), "post_hook": (2, 6)}  # (2)!

for name, options in ARGUMENTS.items():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        kernel = triton.autotune(configs=TWO, key=["n_elements"], **options)(triton.jit(double))
    try:
        TritonKernelVariable(kernel, None, None)  # (3)!
        verdict = "accepted"
    except torch._dynamo.exc.Unsupported as exc:
        found = re.search(r"(?:unsupported feature|Unsupported): (.*)", str(exc))
        verdict = f"rejected: {(found[1] if found else str(exc)).splitlines()[0]}"
    print(f"torch.compile, {name + ':':<18} {verdict}")
    if name in SINCE:
        accepted_here = TORCH >= SINCE[name]
    else:
        accepted_here = TORCH < REJECTED_SINCE[name]
    assert (verdict == "accepted") == accepted_here, (name, verdict)
# --8<-- [end:claim]
print("claim_compile_accepts_since: all checks passed")
