# /// script
# requires-python = ">=3.10"
# dependencies = ["torch", "triton", "numpy"]
#
# [tool.snippet]
# gpu = { min-cc = "8.0" }
# cpu = { interpreter = false }
# ///
"""Claim: for float32 inputs, tl.dot defaults to tf32 on NVIDIA GPUs; torch.matmul does not.

So a Triton float32 matmul checked against torch.matmul at float32 tolerances can fail while
both are correct for what they compute. Read from the installed code of this lock.
"""

import dataclasses
import os

import torch
from triton.backends.nvidia.compiler import CUDAOptions

# --8<-- [start:claim]
fields = {f.name: f.default for f in dataclasses.fields(CUDAOptions)}
precision = os.environ.get("TRITON_F32_DEFAULT") or fields["default_dot_input_precision"]  # (1)!
print(f"tl.dot on float32 inputs, NVIDIA, by default: input_precision={precision!r}")
print(f"input precisions tl.dot accepts: {fields['allowed_dot_input_precisions']}")
print(
    f"torch.matmul on float32, CUDA, by default: allow_tf32={torch.backends.cuda.matmul.allow_tf32}"
)
assert precision == "tf32" and "ieee" in fields["allowed_dot_input_precisions"]
assert torch.backends.cuda.matmul.allow_tf32 is False  # (2)!
assert torch.get_float32_matmul_precision() == "highest"
# --8<-- [end:claim]
print("claim_tf32_defaults: all checks passed")
