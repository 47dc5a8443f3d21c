# /// script
# requires-python = ">=3.10"
# dependencies = ["torch", "triton", "numpy"]
#
# [tool.snippet]
# gpu = { skip = "breakpoint() inside a kernel works under the CPU interpreter only", skip-zh = "内核里的 breakpoint() 只在 CPU 解释器下有效" }
# cpu = { interpreter = true }
# ///
"""breakpoint() inside a kernel run by the CPU interpreter opens the Python debugger.

To run unattended, this file replaces sys.breakpointhook with a pdb session that reads its
commands from a string instead of the keyboard, and prints what pdb answered. Delete the hook
to type the commands yourself. Runs on any machine: it turns the interpreter on itself.
"""

import os

os.environ["TRITON_INTERPRET"] = "1"

import io
import pdb
import sys

import torch
import triton
import triton.language as tl


# --8<-- [start:kernel]
@triton.jit
def double_kernel(x_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(axis=0)
    offsets = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask, other=0.0)
    if pid == 2:
        breakpoint()  # (1)!
    tl.store(out_ptr + offsets, x * 2, mask=mask)


# --8<-- [end:kernel]

# --8<-- [start:hook]
COMMANDS = ["p pid", "p offsets", "p mask", "p x", "c"]  # (1)!
transcript = io.StringIO()
stops = 0


def scripted_pdb(*args, **kwargs):
    global stops
    stops += 1
    debugger = pdb.Pdb(stdin=io.StringIO("\n".join(COMMANDS) + "\n"), stdout=transcript)
    debugger.use_rawinput = False
    debugger.set_trace(sys._getframe(1))  # (2)!


sys.breakpointhook = scripted_pdb  # (3)!
# --8<-- [end:hook]

# --8<-- [start:run]
x = torch.arange(10, dtype=torch.float32)
out = torch.empty_like(x)
double_kernel[(triton.cdiv(10, 4),)](x, out, 10, BLOCK_SIZE=4)
torch.testing.assert_close(out, x * 2, rtol=0, atol=0)
answers = transcript.getvalue().split("(Pdb) ")[1:]  # (1)!
print(f"breakpoint() stopped {stops} time(s), in program 2")
for command, answer in zip(COMMANDS, answers, strict=False):
    if command != "c":
        print(f"(Pdb) {command:10} -> {answer.strip()}")
# --8<-- [end:run]
assert stops == 1, stops
assert answers[0].strip() == "array([2], dtype=int32)", answers
assert answers[3].strip() == "array([8., 9., 0., 0.], dtype=float32)", answers
