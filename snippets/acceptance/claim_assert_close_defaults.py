# /// script
# requires-python = ">=3.10"
# dependencies = ["torch", "triton", "numpy"]
#
# [tool.snippet]
# gpu = { min-cc = "8.0" }
# cpu = { interpreter = false }
# ///
"""Claim: the default tolerances of torch.testing.assert_close and triton.testing.assert_close.

They are API defaults, not acceptance standards. Read from the installed code (so the claim fails
the day a release changes them) and checked by behaviour.
"""

import inspect
import re

import torch
import triton.testing

# --8<-- [start:torch]
from torch.testing._comparison import _DTYPE_PRECISIONS  # (1)!

for dtype in (torch.float16, torch.bfloat16, torch.float32, torch.float64):
    rtol, atol = _DTYPE_PRECISIONS[dtype]
    print(f"torch.testing.assert_close default {str(dtype):14}: rtol={rtol:g} atol={atol:g}")
assert _DTYPE_PRECISIONS[torch.float16] == (1e-3, 1e-5)
assert _DTYPE_PRECISIONS[torch.bfloat16] == (1.6e-2, 1e-5)
assert _DTYPE_PRECISIONS[torch.float32] == (1.3e-6, 1e-5)
assert _DTYPE_PRECISIONS[torch.float64] == (1e-7, 1e-7)
# --8<-- [end:torch]

# --8<-- [start:triton]
source = inspect.getsource(triton.testing.assert_close)
defaults = re.findall(r"if (atol|rtol) is None:\s+\1 = ([\d.e-]+)", source)  # (1)!
print(f"triton.testing.assert_close defaults when None: {dict(defaults)}")
assert dict(defaults) == {"atol": "1e-2", "rtol": "0."}

x = torch.zeros(4)
triton.testing.assert_close(x, x + 0.009)  # (2)!
small = torch.full((4,), 1e-3)
triton.testing.assert_close(small, 2 * small)  # (3)!
print("triton.testing.assert_close accepts 0.009 for 0 and 0.002 for 0.001: True")
nan = torch.full((4,), float("nan"))
triton.testing.assert_close(nan, nan)  # (4)!
try:
    torch.testing.assert_close(nan, nan)
except AssertionError:
    print("NaN against NaN: triton.testing passes, torch.testing fails unless equal_nan=True")
else:
    raise AssertionError("torch.testing.assert_close now treats NaN as equal by default")
# --8<-- [end:triton]
print("claim_assert_close_defaults: all checks passed")
