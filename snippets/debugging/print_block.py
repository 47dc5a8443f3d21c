# /// script
# requires-python = ">=3.10"
# dependencies = ["torch", "triton", "numpy"]
#
# [tool.snippet]
# gpu = { skip = "shows what print and device_print show under the CPU interpreter; device_print_gpu.py shows the GPU", skip-zh = "展示的是 CPU 解释器下 print 和 device_print 的输出；GPU 上的输出见 device_print_gpu.py" }
# cpu = { interpreter = true }
# ///
"""print() and tl.device_print() inside a kernel run by the CPU interpreter.

Runs on any machine: it turns the interpreter on itself (TRITON_INTERPRET=1 python print_block.py
does the same). Prints the offsets, mask and loaded block of one program, and checks the kernel.
"""

import os

os.environ["TRITON_INTERPRET"] = "1"

import torch
import triton
import triton.language as tl


# --8<-- [start:kernel]
@triton.jit
def scale_kernel(x_ptr, out_ptr, n_elements, scale, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(axis=0)
    offsets = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask, other=0.0)
    if pid == 2:  # (1)!
        print("program 2, offsets:", offsets)  # (2)!
        print("program 2, mask:", mask)
        print("program 2, x:", x)
    tl.device_print("x", x)  # (3)!
    tl.store(out_ptr + offsets, x * scale, mask=mask)


# --8<-- [end:kernel]

# --8<-- [start:run]
x = torch.arange(10, dtype=torch.float32)
out = torch.empty_like(x)
scale_kernel[(triton.cdiv(10, 4),)](x, out, 10, 0.5, BLOCK_SIZE=4)  # (1)!
torch.testing.assert_close(out, x * 0.5, rtol=0, atol=0)
# --8<-- [end:run]
print("print_block: the kernel's result equals x * 0.5")
