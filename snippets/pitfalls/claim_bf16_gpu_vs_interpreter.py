# /// script
# requires-python = ">=3.10"
# dependencies = ["torch", "triton", "numpy"]
#
# [tool.snippet]
# gpu = { min-cc = "8.0" }
# cpu = { skip = "compares the GPU with the interpreter; the interpreter half alone is claim_interpreter_bf16.py in block-programming", skip-zh = "比较的是 GPU 与解释器；只看解释器那一半，见 block-programming 的 claim_interpreter_bf16.py" }
# ///
"""Claim: one bfloat16 kernel, exact on the GPU, comes back wrong from the interpreter, silently.

On a CUDA GPU:  python claim_bf16_gpu_vs_interpreter.py
Runs the kernel natively on CUDA tensors, then the same file in a child process with
TRITON_INTERPRET=1 on CPU copies of the same inputs, and compares both with PyTorch.
"""

import os
import subprocess
import sys

# --8<-- [start:child]
CHILD = "--interpreted" in sys.argv
if CHILD:
    os.environ["TRITON_INTERPRET"] = "1"  # (1)!

import torch
import triton
import triton.language as tl


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    offsets = tl.program_id(axis=0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    tl.store(out_ptr + offsets, x + y, mask=mask)


def share_wrong(device: str) -> float:
    """Add two bfloat16 vectors with the kernel; the share of elements that differ from x + y."""
    torch.manual_seed(0)
    x = torch.randn(1000).bfloat16().to(device)  # (2)!
    y = torch.randn(1000).bfloat16().to(device)
    out = torch.empty_like(x)
    add_kernel[(triton.cdiv(1000, 128),)](x, y, out, 1000, BLOCK_SIZE=128)
    return (out != x + y).float().mean().item()


# --8<-- [end:child]

if __name__ == "__main__":
    if CHILD:
        print(share_wrong("cpu"))
        sys.exit(0)
    if not torch.cuda.is_available():
        raise SystemExit("This snippet needs a CUDA GPU: it compares the GPU with the interpreter.")
    # --8<-- [start:compare]
    on_gpu = share_wrong("cuda")
    env = {**os.environ, "CUDA_VISIBLE_DEVICES": ""}
    child = subprocess.run(
        [sys.executable, __file__, "--interpreted"], env=env, capture_output=True, text=True
    )
    assert child.returncode == 0, child.stderr  # (1)!
    interpreted = float(child.stdout.split()[-1])
    print(f"bfloat16 add on the GPU: {on_gpu:.0%} of the elements differ from x + y")
    print(f"same kernel under TRITON_INTERPRET=1: {interpreted:.0%} differ, no error")
    # --8<-- [end:compare]
    assert on_gpu == 0.0, on_gpu
    assert interpreted > 0.5, "bfloat16 now works under the interpreter: update the pages"
    print("claim_bf16_gpu_vs_interpreter: all checks passed")
