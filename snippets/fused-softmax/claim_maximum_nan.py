# /// script
# requires-python = ">=3.10"
# dependencies = ["torch", "triton", "numpy"]
#
# [tool.snippet]
# gpu = { min-cc = "8.0" }
# cpu = { interpreter = true }
# ///
"""Claim: what tl.maximum returns when one side is NaN, by default and with PropagateNan.ALL.

On a CUDA GPU:  python claim_maximum_nan.py
On a CPU:       TRITON_INTERPRET=1 python claim_maximum_nan.py
PropagateNan.ALL gives NaN wherever either side is NaN, everywhere. The default is what differs:
the file asserts the default this platform and Triton release are known to give, and fails on
any other, so that a release that changes it is noticed.
"""

import math
import os

import torch
import triton
import triton.language as tl

INTERPRETED = os.environ.get("TRITON_INTERPRET") == "1"


# --8<-- [start:claim]
@triton.jit
def maximum_kernel(a_ptr, b_ptr, default_ptr, all_ptr):
    i = tl.arange(0, 4)
    a, b = tl.load(a_ptr + i), tl.load(b_ptr + i)
    tl.store(default_ptr + i, tl.maximum(a, b))
    tl.store(all_ptr + i, tl.maximum(a, b, propagate_nan=tl.PropagateNan.ALL))


device = "cpu" if INTERPRETED else "cuda"
nan = float("nan")
a = torch.tensor([nan, 1.0, nan, 2.0], device=device)
b = torch.tensor([1.0, nan, nan, 3.0], device=device)
default, propagated = torch.empty_like(a), torch.empty_like(a)
maximum_kernel[(1,)](a, b, default, propagated)
where = "the interpreter" if INTERPRETED else torch.cuda.get_device_name()
print(f"tl.maximum(a, b) on {where}: {default.tolist()}")
print(f"tl.maximum(a, b, propagate_nan=ALL) on {where}: {propagated.tolist()}")
# --8<-- [end:claim]
assert [math.isnan(v) for v in propagated.tolist()] == [True, True, True, False]
PROPAGATES, RETURNS_OTHER = [None, None, None, 3.0], [1.0, 1.0, None, 3.0]
KNOWN = {  # (platform, Triton minor release) -> the default's result; NaN written as None
    # the interpreter: 3.6 and 3.9 as each lock ran them; the others as the history run
    # (locks/history/) measured them: the default stopped propagating NaN in 3.8
    **{("interpreter", v): PROPAGATES for v in ("3.2", "3.3", "3.4", "3.5", "3.6", "3.7")},
    **{("interpreter", v): RETURNS_OTHER for v in ("3.8", "3.9")},
    # expected from the GPU's max instruction, as tl.max in row_max.py records it; pending a run
    ("gpu", "3.6"): [1.0, 1.0, None, 3.0],
}
key = ("interpreter" if INTERPRETED else "gpu", ".".join(triton.__version__.split(".")[:2]))
got = [None if math.isnan(v) else v for v in default.tolist()]
assert key in KNOWN, f"no known default for {key}: got {got}; check it and add it to KNOWN"
assert got == KNOWN[key], f"{key}: the default changed to {got}"
print("claim_maximum_nan: holds")
