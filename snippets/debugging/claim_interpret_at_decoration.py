# /// script
# requires-python = ">=3.10"
# dependencies = ["torch", "triton", "numpy"]
#
# [tool.snippet]
# gpu = { min-cc = "8.0" }
# cpu = { interpreter = false }
# ///
"""Claim: TRITON_INTERPRET is read when @triton.jit decorates a function, not when it launches.

A function decorated before the variable is set stays a compiled (GPU) kernel; one decorated
after it is interpreted on the CPU. Runs on any machine: python claim_interpret_at_decoration.py
Fails the day a Triton release reads the variable at launch instead.
"""

import os

os.environ.pop("TRITON_INTERPRET", None)  # start from a process without it

import torch
import triton
import triton.language as tl


def double(x_ptr, out_ptr, BLOCK_SIZE: tl.constexpr):
    offsets = tl.arange(0, BLOCK_SIZE)
    tl.store(out_ptr + offsets, tl.load(x_ptr + offsets) * 2)


# --8<-- [start:claim]
compiled = triton.jit(double)  # (1)!
os.environ["TRITON_INTERPRET"] = "1"
interpreted = triton.jit(double)  # (2)!
print(f"decorated before TRITON_INTERPRET=1 was set: {type(compiled).__name__}")
print(f"decorated after: {type(interpreted).__name__}")

x, out = torch.arange(8.0), torch.empty(8)
interpreted[(1,)](x, out, BLOCK_SIZE=8)
assert torch.equal(out, x * 2)
on_gpu = torch.cuda.is_available()
expected = ValueError if on_gpu else RuntimeError  # CPU pointers refused; or no driver at all
try:
    compiled[(1,)](x, out, BLOCK_SIZE=8)  # (3)!
except expected as exc:
    where = "a GPU machine" if on_gpu else "no GPU"
    print(
        f"the kernel decorated before, launched on CPU tensors ({where}): "
        f"{type(exc).__name__}: {exc}"
    )
else:
    raise AssertionError("the kernel decorated before the variable ran: update the page")
# --8<-- [end:claim]
assert type(compiled).__name__ == "JITFunction", type(compiled)
assert type(interpreted).__name__ == "InterpretedFunction", type(interpreted)
