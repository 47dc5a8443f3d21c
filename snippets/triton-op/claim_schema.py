# /// script
# requires-python = ">=3.10"
# dependencies = ["torch", "triton", "numpy"]
#
# [tool.snippet]
# gpu = { skip = "checks what torch.library registers, which does not depend on the device; the CPU run of each lock covers it", skip-zh = "检查的是 torch.library 注册了什么，与设备无关；每个锁定版本的 CPU 运行已经覆盖" }
# cpu = { interpreter = false }
# ///
"""Claim: torch.library.triton_op(..., schema=...) ignores the schema on torch 2.11 and uses the
type hints instead; torch 2.15 registers the schema it is given.

Source: torch/_library/triton.py, `custom_op(..., schema=infer_schema(fn, ...))` in 2.11 and
`schema if schema is not None else infer_schema(...)` in 2.15. Fails when a release changes
either, or on a torch version this claim has not read yet.
"""

import torch
from torch.library import triton_op

TORCH = ".".join(torch.__version__.split("+")[0].split(".")[:2])


# --8<-- [start:claim]
@triton_op("claimlib::scale", mutates_args=(), schema="(Tensor x, int n) -> Tensor")  # (1)!
def scale(x: torch.Tensor, n: int) -> torch.Tensor:  # (2)!
    return x * n


registered = str(torch.ops.claimlib.scale.default._schema)
print(f"triton_op(schema='(Tensor x, int n) -> Tensor') registers: {registered}")
# --8<-- [end:claim]
torch.testing.assert_close(torch.ops.claimlib.scale(torch.ones(3), 2), torch.full((3,), 2.0))

GIVEN = "claimlib::scale(Tensor x, int n) -> Tensor"
INFERRED = "claimlib::scale(Tensor x, SymInt n) -> Tensor"  # from the type hint `n: int`
READ = {"2.11": INFERRED, "2.15": GIVEN}  # what torch/_library/triton.py does in each release read
# what the history run (locks/history/) measured in the releases between and before: the given
# schema is kept from torch 2.14 on
READ |= {v: INFERRED for v in ("2.6", "2.7", "2.8", "2.9", "2.10", "2.12", "2.13")}
READ["2.14"] = GIVEN
assert TORCH in READ, (
    f"torch {TORCH}: read torch/_library/triton.py (triton_op) and extend this claim"
)
assert registered == READ[TORCH], f"torch {TORCH} registered {registered}, expected {READ[TORCH]}"
print("claim_schema: all checks passed")
