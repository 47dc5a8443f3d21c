# /// script
# requires-python = ">=3.10"
# dependencies = ["torch", "triton"]
#
# [tool.snippet]
# gpu = { min-cc = "8.0" }
# cpu = { interpreter = false }
# ///
"""Claim: in eager mode, wrap_triton(kernel) outside a triton_op returns a wrapper that launches
through PyTorch's higher-order operator (about a millisecond of dispatch per call, says the
docstring of torch/_library/triton.py: set_wrap_triton_enabled); inside a triton_op's eager
call it returns the kernel itself.

On any machine:  python claim_wrap_triton_dispatch.py   (no GPU needed: nothing is launched)
"""

import torch
import triton
from torch.library import triton_op, wrap_triton


@triton.jit
def never_launched(x_ptr):
    pass


# --8<-- [start:claim]
outside = type(wrap_triton(never_launched)).__name__
print(f"wrap_triton outside an operator returns: {outside}")  # (1)!

seen = {}


@triton_op("claim::probe", mutates_args=())
def probe(x: torch.Tensor) -> torch.Tensor:
    seen["inside"] = type(wrap_triton(never_launched)).__name__  # (2)!
    return x.clone()


probe(torch.ones(2))  # eager, CPU tensors: the body runs, nothing is launched
print(f"wrap_triton inside a triton_op, in eager mode, returns: {seen['inside']}")
# --8<-- [end:claim]
assert outside == "TraceableTritonKernelWrapper", outside
assert seen["inside"] == type(never_launched).__name__ == "JITFunction", seen
print("claim_wrap_triton_dispatch: holds")
