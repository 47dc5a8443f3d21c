# /// script
# requires-python = ">=3.10"
# dependencies = ["torch", "triton", "numpy"]
#
# [tool.snippet]
# gpu = { skip = "checks a limit of the CPU interpreter; on a GPU, compute-sanitizer finds out-of-bounds accesses", skip-zh = "检查的是 CPU 解释器的限制；GPU 上的越界访问用 compute-sanitizer 查" }
# cpu = { interpreter = true }
# ///
"""Claim: under TRITON_INTERPRET=1, an unmasked load past the end of a tensor raises nothing.

The kernel reads 8 elements from a tensor of 5, without a mask. The tensor is a view into a larger
buffer, so the 3 extra reads land on memory we own (filled with 7.0) instead of anything else.
Fails the day the interpreter starts checking bounds.
"""

# --8<-- [start:claim]
import os

os.environ["TRITON_INTERPRET"] = "1"

import torch
import triton
import triton.language as tl


@triton.jit
def unmasked_copy(x_ptr, out_ptr, BLOCK_SIZE: tl.constexpr):
    offsets = tl.arange(0, BLOCK_SIZE)
    tl.store(out_ptr + offsets, tl.load(x_ptr + offsets))  # no mask: a bug


buffer = torch.tensor([1.0, 2.0, 3.0, 4.0, 5.0, 7.0, 7.0, 7.0])
x = buffer[:5]  # the tensor the kernel is given: 5 elements
out = torch.empty(8)
unmasked_copy[(1,)](x, out, BLOCK_SIZE=8)  # (1)!
print(f"read 8 elements from a tensor of 5, no error: {out.tolist()}")
assert out[5:].tolist() == [7.0, 7.0, 7.0]
# --8<-- [end:claim]
