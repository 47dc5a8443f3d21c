# /// script
# requires-python = ">=3.10"
# dependencies = ["torch", "triton", "numpy"]
#
# [tool.snippet]
# gpu = { min-cc = "8.0" }
# cpu = { skip = "under TRITON_INTERPRET=1, torch.compile(fullgraph=True) stops with torch._dynamo.exc.Unsupported (claim_interpreter_compile.py checks it)", skip-zh = "在 TRITON_INTERPRET=1 下，torch.compile(fullgraph=True) 报 torch._dynamo.exc.Unsupported 而中止（由 claim_interpreter_compile.py 验证）" }
# ///
"""Launch a Triton kernel inside torch.compile(fullgraph=True): no graph break, same numbers.

On a CUDA GPU:  python vector_add_compile.py
"""

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


# --8<-- [start:compiled]
@torch.compile(fullgraph=True)  # (1)!
def scaled_add(x: torch.Tensor, y: torch.Tensor, scale: float) -> torch.Tensor:
    out = torch.empty_like(x)
    n = out.numel()
    grid = lambda meta: (triton.cdiv(n, meta["BLOCK_SIZE"]),)  # (2)!
    add_kernel[grid](x, y, out, n, BLOCK_SIZE=1024)
    return out * scale  # (3)!


# --8<-- [end:compiled]


if __name__ == "__main__":
    if not torch.cuda.is_available():
        raise SystemExit(
            "This snippet needs a CUDA GPU: torch.compile does not trace interpreted kernels."
        )
    torch.manual_seed(0)
    # --8<-- [start:run]
    for n in (1, 1000, 98_432):  # (1)!
        x = torch.randn(n, device="cuda")
        y = torch.randn(n, device="cuda")
        torch.testing.assert_close(scaled_add(x, y, 0.5), (x + y) * 0.5)
    print("torch.compile(fullgraph=True) ran the Triton kernel without a graph break")
    # --8<-- [end:run]
    print("vector_add_compile: all checks passed")
