# /// script
# requires-python = ">=3.10"
# dependencies = ["torch", "triton", "numpy"]
#
# [tool.snippet]
# gpu = { min-cc = "8.0" }
# cpu = { interpreter = true }
# ///
"""Claim: tl.sigmoid is 1 / (1 + exp(-x)), so in float32 it is 0 below x = -88.72 (exp(-x)
overflows), and silu written as x * tl.sigmoid(x) is -0.0 there, although silu(x) is still a
normal float32 number down to about -91.8. The float64 reference of silu_mul.py catches it.

On a CUDA GPU:  python claim_sigmoid_underflow.py
On a CPU:       TRITON_INTERPRET=1 python claim_sigmoid_underflow.py
"""

import inspect
import os

import torch
import torch.nn.functional as F
import triton
import triton.language as tl

INTERPRETED = os.environ.get("TRITON_INTERPRET") == "1"


# --8<-- [start:claim]
@triton.jit
def silu_kernels(x_ptr, naive_ptr, stable_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n)
    tl.store(naive_ptr + offs, x * tl.sigmoid(x), mask=offs < n)  # (1)!
    e = tl.exp(-tl.abs(x))  # never overflows
    tl.store(stable_ptr + offs, x * tl.where(x >= 0, 1.0, e) / (1 + e), mask=offs < n)  # (2)!


assert "return 1 / (1 + math.exp(-x))" in inspect.getsource(tl.sigmoid.fn)
x = torch.tensor([-80.0, -89.0, -90.0], device="cpu" if INTERPRETED else "cuda")
naive, stable = torch.empty_like(x), torch.empty_like(x)
silu_kernels[(1,)](x, naive, stable, x.numel(), BLOCK=4)
exact = F.silu(x.double())
print(f"silu(x) in float64 for x = {x.tolist()}: {[f'{v:.3g}' for v in exact.tolist()]}")
print(f"x * tl.sigmoid(x), float32: {[f'{v:.3g}' for v in naive.tolist()]}")
assert naive[0] != 0 and naive[1] == 0 and naive[2] == 0  # (3)!
assert exact[1].abs() >= torch.finfo(torch.float32).tiny  # a normal float32 number
inf = float("inf")
print(
    f"times b = inf: {naive[1].item() * inf} from the obvious form, {exact[1].item() * inf} exact"
)
assert naive[1].item() * inf != naive[1].item() * inf and exact[1].item() * inf == -inf
torch.testing.assert_close(stable, exact.float(), rtol=128 * 2**-23, atol=2**-126)
print("exp(-|x|) / (1 + exp(-|x|)) for x < 0, float32: within 128 ulps of float64 silu")
# --8<-- [end:claim]
print("claim_sigmoid_underflow: all checks passed")
