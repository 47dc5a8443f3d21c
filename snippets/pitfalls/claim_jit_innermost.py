# /// script
# requires-python = ">=3.10"
# dependencies = ["torch", "triton", "numpy"]
#
# [tool.snippet]
# gpu = { min-cc = "8.0" }
# cpu = { interpreter = true }
# ///
"""Claim: @triton.jit must be the innermost decorator. With @triton.jit above @triton.heuristics
or @triton.autotune, the file fails where the kernel is defined, with an AttributeError that does
not mention the order.

On a CUDA GPU:  python claim_jit_innermost.py
On a CPU:       TRITON_INTERPRET=1 python claim_jit_innermost.py
"""

import os

import torch
import triton
import triton.language as tl

INTERPRETED = os.environ.get("TRITON_INTERPRET") == "1"
EXPECTED = "'function' object has no attribute 'arg_names'"

# --8<-- [start:wrong]
try:

    @triton.jit  # (1)!
    @triton.heuristics(values={"EVEN": lambda args: args["n_elements"] % args["BLOCK_SIZE"] == 0})
    def add_one_jit_outermost(x_ptr, n_elements, BLOCK_SIZE: tl.constexpr, EVEN: tl.constexpr):
        offsets = tl.arange(0, BLOCK_SIZE)
        tl.store(x_ptr + offsets, tl.load(x_ptr + offsets) + 1)

except AttributeError as exc:  # (2)!
    heuristics_error = exc
    print(f"@triton.jit above @triton.heuristics: {type(exc).__name__}: {exc}")
# --8<-- [end:wrong]
else:
    raise AssertionError("@triton.jit above @triton.heuristics now works: update the pages")
assert str(heuristics_error) == EXPECTED, heuristics_error

try:

    @triton.jit
    @triton.autotune(configs=[triton.Config({"BLOCK_SIZE": 128})], key=["n_elements"])
    def add_one_jit_above_autotune(x_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
        offsets = tl.arange(0, BLOCK_SIZE)
        tl.store(x_ptr + offsets, tl.load(x_ptr + offsets) + 1)

except AttributeError as exc:
    print(f"@triton.jit above @triton.autotune: {type(exc).__name__}: {exc}")
    assert str(exc) == EXPECTED, exc
else:
    raise AssertionError("@triton.jit above @triton.autotune now works: update the pages")


# --8<-- [start:right]
@triton.heuristics(values={"EVEN": lambda args: args["n_elements"] % args["BLOCK_SIZE"] == 0})
@triton.jit  # (1)!
def add_one(x_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr, EVEN: tl.constexpr):
    offsets = tl.program_id(axis=0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    if EVEN:  # (2)!
        tl.store(out_ptr + offsets, tl.load(x_ptr + offsets) + 1)
    else:
        mask = offsets < n_elements
        tl.store(out_ptr + offsets, tl.load(x_ptr + offsets, mask=mask) + 1, mask=mask)


# --8<-- [end:right]

SENTINEL = -7.0
device = "cpu" if INTERPRETED else "cuda"
for n in (0, 1, 100, 128, 256, 1000):
    x = torch.arange(float(n), device=device)
    buffer = torch.full((128 + n + 128,), SENTINEL, device=device)
    out = buffer[128 : 128 + n]
    add_one[(triton.cdiv(n, 128),)](x, out, n, BLOCK_SIZE=128)
    torch.testing.assert_close(out, x + 1, rtol=0, atol=0)
    assert bool((buffer[:128] == SENTINEL).all() and (buffer[128 + n :] == SENTINEL).all())
print("@triton.heuristics above @triton.jit: runs, equal to x + 1 for even and uneven sizes")
print("claim_jit_innermost: all checks passed")
