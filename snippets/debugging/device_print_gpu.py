# /// script
# requires-python = ">=3.10"
# dependencies = ["torch", "triton", "numpy"]
#
# [tool.snippet]
# gpu = { min-cc = "8.0" }
# cpu = { skip = "shows what tl.device_print prints on a GPU; print_block.py shows the interpreter", skip-zh = "展示的是 GPU 上 tl.device_print 的输出；解释器的输出见 print_block.py" }
# timeout = 300
# ///
"""What tl.device_print prints on a GPU: one line per element, written by the GPU when the kernel
has finished, in no set order.

The kernel prints in a child process; this file collects the child's output, sorts it and
shows it. On a CUDA GPU:  python device_print_gpu.py
"""

import subprocess
import sys

import torch
import triton
import triton.language as tl


@triton.jit
def scale_kernel(x_ptr, out_ptr, n_elements, scale, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(axis=0)
    offsets = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask, other=0.0)
    tl.device_print("x", x)
    tl.store(out_ptr + offsets, x * scale, mask=mask)


def child() -> None:
    x = torch.arange(10, dtype=torch.float32, device="cuda")
    out = torch.empty_like(x)
    scale_kernel[(triton.cdiv(10, 4),)](x, out, 10, 0.5, BLOCK_SIZE=4)
    torch.cuda.synchronize()  # the GPU's printf buffer is written out by now
    torch.testing.assert_close(out, x * 0.5, rtol=0, atol=0)


if __name__ == "__main__":
    if sys.argv[1:] == ["--child"]:
        child()
        sys.exit(0)
    if not torch.cuda.is_available():
        raise SystemExit("This snippet needs a CUDA GPU; print_block.py shows the interpreter.")
    # --8<-- [start:run]
    proc = subprocess.run(
        [sys.executable, __file__, "--child"], capture_output=True, text=True, timeout=240
    )
    assert proc.returncode == 0, proc.stderr
    lines = [line.strip() for line in proc.stdout.splitlines() if "x:" in line]  # (1)!
    distinct = sorted(set(lines))
    print(
        f"GPU device_print: {len(lines)} lines for 3 programs x 4 elements, {len(distinct)} distinct"
    )
    program_2 = [line for line in distinct if line.startswith("pid (2, 0, 0)")]  # (2)!
    for i, line in enumerate(program_2):
        print(f"program 2, line {i}: {line}")
    # --8<-- [end:run]
    assert len(distinct) >= 12 and len(program_2) == 4, proc.stdout
