# /// script
# requires-python = ">=3.10"
# dependencies = ["torch", "triton", "numpy"]
#
# [tool.snippet]
# gpu = { skip = "it compiles for sm_90a on any machine and times nothing: the CPU run is the claim", skip-zh = "它在任何机器上都为 sm_90a 编译，不计时：CPU 上的运行就是这条论断" }
# cpu = { interpreter = false }
# files = ["softmax.py"]
# ///
"""Claim: what softmax.py's looped kernels need a thread, compiled for sm_90a (an H100 or H200)
with the plan softmax.py takes for 65536-column rows: registers, and stack, which holds the
registers the compiler spilled to local memory; for rows whose length is a multiple of 16 (the
loads then go 128 bits at a time) and for other lengths. The float64 backward's plan was picked
so that it spills nothing; the claim checks that, and prints the others for each lock's Triton.

Runs on any machine, beside softmax.py:  python claim_loop_spills.py
"""

import os
import re
import subprocess
import tempfile
from pathlib import Path

os.environ.pop("TRITON_INTERPRET", None)
os.environ["TRITON_CACHE_DIR"] = tempfile.mkdtemp()

import softmax  # softmax.py, beside this file
import torch
import triton
from triton.backends.compiler import GPUTarget

SM90 = GPUTarget("cuda", 90, 32)
TYPES = {torch.bfloat16: "bf16", torch.float16: "fp16", torch.float32: "fp32",
         torch.float64: "fp64"}  # fmt: skip
CUOBJDUMP = Path(triton.__file__).parent / "backends" / "nvidia" / "bin" / "cuobjdump"


def compile_looped(pass_: str, dtype: torch.dtype, aligned: bool):
    """The looped kernel of one pass, with softmax.py's plan for 65536-column rows and the
    specializations a launch on contiguous rows passes: 16-byte aligned pointers and, where the
    row length is a multiple of 16 (aligned), its length and strides too; (BLOCK, num_warps,
    the cubin)."""
    device = torch.device("cuda")  # a looped plan reads nothing of the device
    block, warps, one_block, _ = softmax.launch_plan(65536, dtype.itemsize, pass_, device)
    assert not one_block
    t = f"*{TYPES[dtype]}"
    if pass_ == "forward":
        kernel, pointers, constexprs = softmax.softmax_online_kernel, ["x_ptr", "y_ptr"], {}
        ints = ["N", "stride_x", "stride_y"]
    else:
        kernel, pointers, constexprs = softmax.softmax_bwd_kernel, ["dy_ptr", "y_ptr", "dx_ptr"], {
            "ONE_BLOCK": False}  # fmt: skip
        ints = ["N", "stride_dy", "stride_y", "stride_dx"]
    signature = {**dict.fromkeys(pointers, t), **dict.fromkeys(ints, "i32"), "BLOCK": "constexpr",
                 **dict.fromkeys(constexprs, "constexpr")}  # fmt: skip
    source = triton.compiler.ASTSource(
        fn=kernel, signature=signature, constexprs={"BLOCK": block, **constexprs},
        attrs={(i,): [["tt.divisibility", 16]]
               for i in range(len(pointers) + (len(ints) if aligned else 0))},
    )  # fmt: skip
    compiled = triton.compile(source, target=SM90, options={"num_warps": warps})
    return block, warps, compiled.asm["cubin"]


# --8<-- [start:claim]
def resources(cubin: bytes) -> tuple[int, int]:
    """(registers, bytes of stack) a thread, as cuobjdump reads them from the cubin."""
    with tempfile.NamedTemporaryFile(suffix=".cubin") as f:
        f.write(cubin)
        f.flush()
        usage = subprocess.run([CUOBJDUMP, "--dump-resource-usage", f.name],
                               capture_output=True, text=True, check=True).stdout  # fmt: skip
    registers, stack = re.search(r"REG:(\d+) STACK:(\d+)", usage).groups()  # (1)!
    return int(registers), int(stack)


ROWS = {True: "rows a multiple of 16", False: "other row lengths"}
for pass_ in ("forward", "backward"):
    for dtype in TYPES:
        for aligned, rows in ROWS.items():
            block, warps, cubin = compile_looped(pass_, dtype, aligned)
            registers, stack = resources(cubin)
            print(f"{pass_}, {str(dtype).split('.')[-1]}, {rows}: block {block}, {warps} warps: "
                  f"{registers} registers and {stack} bytes of stack a thread")  # fmt: skip
            if pass_ == "backward" and dtype == torch.float64:
                assert stack == 0, "the float64 backward's plan spills"  # (2)!
# --8<-- [end:claim]
print("claim_loop_spills: all checks passed")
