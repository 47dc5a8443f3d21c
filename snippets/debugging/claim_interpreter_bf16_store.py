# /// script
# requires-python = ">=3.10"
# dependencies = ["torch", "triton", "numpy"]
#
# [tool.snippet]
# gpu = { min-cc = "8.0" }
# cpu = { interpreter = true }
# ///
"""Claim: computing in float32 inside the kernel does not make the interpreter's bfloat16 results
match PyTorch: the interpreter truncates when it stores float32 into bfloat16, where the GPU (and
PyTorch) round to nearest even.

On a CUDA GPU:  python claim_interpreter_bf16_store.py
On a CPU:       TRITON_INTERPRET=1 python claim_interpreter_bf16_store.py
"""

import os

import torch
import triton
import triton.language as tl

INTERPRETED = os.environ.get("TRITON_INTERPRET") == "1"


# --8<-- [start:claim]
@triton.jit
def add_in_float32(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    offsets = tl.program_id(axis=0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask).to(tl.float32)  # (1)!
    y = tl.load(y_ptr + offsets, mask=mask).to(tl.float32)
    tl.store(out_ptr + offsets, x + y, mask=mask)  # (2)!


def truncated(exact: torch.Tensor) -> torch.Tensor:
    """float32 to bfloat16 by dropping the low 16 bits, no rounding."""
    return (exact.view(torch.int32) & -65536).view(torch.float32).to(torch.bfloat16)


device = "cpu" if INTERPRETED else "cuda"
torch.manual_seed(0)
x, y = (torch.randn(1000, device=device).bfloat16() for _ in range(2))
out = torch.empty_like(x)
add_in_float32[(triton.cdiv(1000, 256),)](x, y, out, 1000, BLOCK_SIZE=256)
exact = x.float() + y.float()
where = "under TRITON_INTERPRET=1" if INTERPRETED else "on the GPU"
differ = (out != x + y).float().mean().item()
print(f"float32 math, bfloat16 store, {where}: {differ:.0%} of the elements differ from x + y")
print(f"  equal to the float32 sum truncated to bfloat16: {torch.equal(out, truncated(exact))}")
torch.testing.assert_close(out, x + y, rtol=2**-7, atol=0)  # (3)!
print("  within one bfloat16 ulp of x + y: True")
# --8<-- [end:claim]
if INTERPRETED:
    assert differ > 0.1 and torch.equal(out, truncated(exact)), differ
else:
    assert differ == 0, differ
print("claim_interpreter_bf16_store: holds")
