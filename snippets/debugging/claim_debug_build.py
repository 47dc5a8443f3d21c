# /// script
# requires-python = ">=3.10"
# dependencies = ["torch", "triton", "numpy"]
#
# [tool.snippet]
# gpu = { min-cc = "8.0" }
# cpu = { interpreter = false }
# ///
"""Claim: tl.device_assert reaches the compiled code only in a debug build, and a debug build
also checks 32-bit integer arithmetic for overflow.

Compiles the kernel for an H200 (CUDA compute capability 9.0) on a machine without a GPU, with
and without debug=True, and reads the asserts in the Triton IR and the PTX.
Runs on any machine: python claim_debug_build.py
"""

import os
import re
import tempfile

os.environ.pop("TRITON_INTERPRET", None)
os.environ["TRITON_CACHE_DIR"] = tempfile.mkdtemp()

import triton
import triton.language as tl
from triton.backends.compiler import GPUTarget


@triton.jit
def checked_sqrt(x_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    offsets = tl.program_id(axis=0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask, other=0.0)
    tl.device_assert(x >= 0, "x must be >= 0")
    tl.store(out_ptr + offsets, tl.sqrt(x), mask=mask)


# --8<-- [start:claim]
source = triton.compiler.ASTSource(  # (1)!
    fn=checked_sqrt,
    signature={
        "x_ptr": "*fp32",
        "out_ptr": "*fp32",
        "n_elements": "i32",
        "BLOCK_SIZE": "constexpr",
    },
    constexprs={"BLOCK_SIZE": 1024},
)
h200 = GPUTarget("cuda", 90, 32)  # (2)!
found = {}
for debug in (False, True):
    compiled = triton.compile(source, target=h200, options={"debug": debug})  # (3)!
    asserts = re.findall(r'tt\.assert .*?"(.*?)"', compiled.asm["ttir"])  # (4)!
    calls = compiled.asm["ptx"].count("call.uni __assertfail")
    found[debug] = asserts, calls
    print(
        f"debug={debug}: asserts in the Triton IR: {asserts}; __assertfail calls in the PTX: {calls}"
    )
# --8<-- [end:claim]
assert found[False] == ([], 0), found
assert found[True][0] == [
    "int32 overflow detected for operation mul",
    "int32 overflow detected for operation add",
    "x must be >= 0",
], found
assert found[True][1] > 0, found
