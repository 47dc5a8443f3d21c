# /// script
# requires-python = ">=3.10"
# dependencies = ["torch", "triton", "numpy"]
#
# [tool.snippet]
# gpu = { min-cc = "8.0" }
# cpu = { skip = "reads the PTX the compiler generates; the interpreter compiles nothing", skip-zh = "读的是编译器生成的 PTX；解释器不做编译" }
# ///
"""num_warps sets how many threads run one program, so how many elements each thread handles.

On a CUDA GPU:  python num_warps.py
A BLOCK_SIZE of 1024 fp32 elements run by 4 warps (128 threads) is 8 elements per thread: two
128-bit loads per input; by 8 warps (256 threads), 4 elements per thread: one load per input.
"""

import re

import torch
import triton
import triton.language as tl


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(axis=0)
    offsets = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    tl.store(out_ptr + offsets, x + y, mask=mask)


if __name__ == "__main__":
    if not torch.cuda.is_available():
        raise SystemExit("This snippet needs a CUDA GPU: it reads the compiled PTX.")
    n, block = 2**20, 1024
    x, y = torch.rand(n, device="cuda"), torch.rand(n, device="cuda")
    # --8<-- [start:run]
    for num_warps in (4, 8):
        out = torch.empty_like(x)
        compiled = add_kernel[(triton.cdiv(n, block),)](
            x,
            y,
            out,
            n,
            BLOCK_SIZE=block,
            num_warps=num_warps,  # (1)!
        )
        ptx = compiled.asm["ptx"]
        threads = int(re.search(r"\.reqntid (\d+)", ptx).group(1))  # (2)!
        loads = len(re.findall(r"ld\.global(?:\.\w+)*\.v4\.b32", ptx))  # (3)!
        per_thread = block // threads
        print(
            f"num_warps={num_warps}: {threads} threads, {per_thread} elements per thread, "
            f"{loads} ld.global.v4 (128-bit) loads for x and y"
        )
        assert threads == 32 * num_warps
        assert loads == 2 * per_thread // 4  # two inputs, four fp32 per 128-bit load
        torch.testing.assert_close(out, x + y, rtol=0, atol=0)
    # --8<-- [end:run]
    compiled = add_kernel[(triton.cdiv(n, block),)](x, y, out, n, BLOCK_SIZE=block)
    print(f"num_warps when the launch does not say: {compiled.metadata.num_warps}")
    assert compiled.metadata.num_warps == 4
    print("num_warps: all checks passed")
