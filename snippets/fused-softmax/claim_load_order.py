# /// script
# requires-python = ">=3.10"
# dependencies = ["torch", "triton", "numpy"]
#
# [tool.snippet]
# gpu = { skip = "it compiles for an H200 on any machine and times nothing: the CPU run is the claim", skip-zh = "它在任何机器上都为 H200 编译，不计时：CPU 上的运行就是这条论断" }
# cpu = { interpreter = false }
# files = ["softmax.py", "variants.py"]
# ///
"""Claim: in the code the compiler generates for sm_90a (an H100 or H200), no arithmetic of the
looped backward's first pass (softmax.py) waits on a load of the same pass of its loop, while the
same pass written as a plain loop (variants.py) issues some of its loads only after arithmetic
that waits on the others: two round trips to memory a pass instead of one.

Runs on any machine, beside softmax.py and variants.py:  python claim_load_order.py
Compiles both kernels for CUDA compute capability 9.0 without a GPU, with the plan softmax.py
takes for 65536-column rows and the specializations a launch on contiguous rows passes, and
reads the machine code (SASS) of the first pass's loop, in bfloat16 and float32.
"""

import os
import re
import tempfile

os.environ.pop("TRITON_INTERPRET", None)
os.environ["TRITON_CACHE_DIR"] = tempfile.mkdtemp()

import softmax  # softmax.py, beside this file
import torch
import triton
import variants  # variants.py, beside this file
from triton.backends.compiler import GPUTarget
from triton.tools.disasm import get_sass

H200 = GPUTarget("cuda", 90, 32)
TYPES = {torch.bfloat16: "bf16", torch.float32: "fp32"}


def compile_backward(kernel, dtype: torch.dtype) -> str:
    """The SASS of a looped backward kernel with softmax.py's plan for 65536 columns."""
    device = torch.device("cuda")  # the backward's plan reads nothing of the device
    block, warps, one_block, _ = softmax.launch_plan(65536, dtype.itemsize, "backward", device)
    assert not one_block
    signature = {"dy_ptr": f"*{TYPES[dtype]}", "y_ptr": f"*{TYPES[dtype]}",
                 "dx_ptr": f"*{TYPES[dtype]}", "N": "i32", "stride_dy": "i32", "stride_y": "i32",
                 "stride_dx": "i32", "BLOCK": "constexpr"}  # fmt: skip
    constexprs = {"BLOCK": block}
    if kernel is softmax.softmax_bwd_kernel:
        signature["ONE_BLOCK"], constexprs["ONE_BLOCK"] = "constexpr", False
    source = triton.compiler.ASTSource(
        fn=kernel, signature=signature, constexprs=constexprs,
        attrs={(i,): [["tt.divisibility", 16]] for i in range(7)},  # 16-byte aligned, as a launch
    )  # fmt: skip
    compiled = triton.compile(source, target=H200, options={"num_warps": warps})
    return get_sass(compiled.asm["cubin"])


# --8<-- [start:claim]
def first_loop(sass: str) -> list[str]:
    """The instructions of the kernel's first loop: from its label to the branch back to it."""
    lines = [line.split("\t")[-1].strip() for line in sass.splitlines()]
    for i, line in enumerate(lines):
        label = re.fullmatch(r"(\w+):", line)
        if label:
            for j in range(i + 1, len(lines)):
                if re.search(rf"\bBRA {label.group(1)};", lines[j]):
                    return lines[i + 1 : j]
    raise AssertionError("no loop in the SASS")


REGISTER = r"(?<![\w.])R\d+\b"  # R12, not UR12 or the .64 of R2.64
ARITHMETIC = ("FFMA", "FMUL", "FADD")  # float32 multiply-add, multiply, add


def loads_before_use(loop: list[str]) -> tuple[int, int]:
    """(128-bit global loads issued before the first float32 arithmetic that reads a value loaded
    in the same pass of the loop, directly or through the instructions between; all 128-bit
    global loads of the loop). With no such arithmetic, every load counts as issued before."""
    from_load, issued, before = set(), 0, None
    for line in loop:
        opcode, _, operands = re.sub(r"^@!?\w+\s+", "", line).rstrip(";").partition(" ")
        registers = re.findall(REGISTER, operands)
        if re.fullmatch(r"LDG\.\S*128", opcode):  # (1)!
            first = int(registers[0][1:])
            from_load |= {f"R{first + k}" for k in range(4)}
            issued += 1
            continue
        sources = set(registers[1:])
        if before is None and opcode.split(".")[0] in ARITHMETIC and sources & from_load:
            before = issued
        if registers and re.match(rf"{registers[0]}\b", operands):  # it writes this register
            if sources & from_load:
                from_load.add(registers[0])  # a value computed from a load (a bf16 widened)
            else:
                from_load.discard(registers[0])
    return (issued if before is None else before), issued  # (2)!


for dtype in TYPES:
    for name, kernel in (("softmax.py's backward", softmax.softmax_bwd_kernel),
                         ("plain loop", variants.softmax_bwd_plain_kernel)):  # fmt: skip
        before, total = loads_before_use(first_loop(compile_backward(kernel, dtype)))
        dtype_name = str(dtype).split(".")[-1]
        print(f"{name}, {dtype_name}: {before} of the loop's {total} 128-bit loads issued before "
              "the first arithmetic that uses what one of them loaded")  # fmt: skip
        if kernel is softmax.softmax_bwd_kernel:
            assert before == total, "an operation of the loop now waits on a load of the same pass"
        else:
            assert before < total, "the plain loop now issues all its loads first too"
# --8<-- [end:claim]
print("claim_load_order: all checks passed")
