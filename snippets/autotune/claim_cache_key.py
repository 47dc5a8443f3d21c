# /// script
# requires-python = ">=3.10"
# dependencies = ["torch", "triton", "numpy"]
#
# [tool.snippet]
# gpu = { min-cc = "8.0" }
# cpu = { interpreter = true }
# ///
"""Claim: what triton.autotune's cache keys on, and what re-tunes.

The key is the values of the arguments named in key= plus the dtype of every argument that has
one; a new key benchmarks every config again. Not in the key: other arguments, shapes, strides,
tensor contents. A tensor named in key= is keyed by identity. A name in key= that is no argument:
silently dropped on triton 3.6, a ValueError from triton 3.9 on.
Runs on any machine (natively on a GPU, else it turns the interpreter on itself) and counts
calls to a stand-in timer.
"""

import gc
import os
import weakref

import torch

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
if DEVICE == "cpu":  # no GPU: the interpreter, switched on before any kernel is decorated
    os.environ["TRITON_INTERPRET"] = "1"
import triton
import triton.language as tl

CONFIGS = [triton.Config({"BLOCK_SIZE": 128}), triton.Config({"BLOCK_SIZE": 256})]


def scale(x_ptr, out_ptr, n_elements, factor, BLOCK_SIZE: tl.constexpr):
    offsets = tl.program_id(axis=0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    tl.store(out_ptr + offsets, tl.load(x_ptr + offsets, mask=mask) * factor, mask=mask)


grid = lambda meta: (triton.cdiv(meta["n_elements"], meta["BLOCK_SIZE"]),)

# --8<-- [start:claim]
timed = []  # one entry per config benchmarked


def counting_bench(fn, quantiles):
    timed.append(fn)
    return [1.0, 1.0, 1.0]


kernel = triton.autotune(configs=CONFIGS, key=["n_elements"], do_bench=counting_bench)(
    triton.jit(scale)
)


def call(label, shape, dtype=torch.float32, factor=2.0):
    x = torch.rand(shape, device=DEVICE).to(dtype)
    out = torch.empty_like(x)
    before = len(timed)
    kernel[grid](x, out, x.numel(), factor)
    torch.testing.assert_close(out, x * factor)
    print(f"{label:<28} configs benchmarked: {len(timed) - before}")


call("n=1000 float32", 1000)  # (1)!
call("n=1000 float32, new data", 1000)
call("n=1000, factor=3.0", 1000, factor=3.0)  # (2)!
call("n=1000 as a 25x40 matrix", (25, 40))
call("n=2000", 2000)  # (3)!
call("n=1000 float16", 1000, dtype=torch.float16)  # (4)!
print(f"cache keys: {list(kernel.cache)}")
assert list(kernel.cache) == [
    (1000, "torch.float32", "torch.float32"),
    (2000, "torch.float32", "torch.float32"),
    (1000, "torch.float16", "torch.float16"),
]
assert len(timed) == 3 * len(CONFIGS)
# --8<-- [end:claim]

# --8<-- [start:tensor]
by_tensor = triton.autotune(configs=CONFIGS, key=["x_ptr"], do_bench=counting_bench)(
    triton.jit(scale)
)
timed.clear()
for _ in range(3):
    x = torch.rand(1000, device=DEVICE)
    by_tensor[grid](x, torch.empty_like(x), 1000, 2.0)  # (1)!
last = weakref.ref(x)
del x
gc.collect()
print(
    f"key=['x_ptr'], three new tensors of one shape: {len(timed)} configs benchmarked, "
    f"{len(by_tensor.cache)} cache entries, last tensor alive after del: {last() is not None}"
)
assert len(timed) == 3 * len(CONFIGS) and len(by_tensor.cache) == 3 and last() is not None  # (2)!
# --8<-- [end:tensor]

# --8<-- [start:typo]
version = tuple(int(part) for part in triton.__version__.split(".")[:2])
try:
    typo = triton.autotune(configs=CONFIGS, key=["n"], do_bench=counting_bench)(  # (1)!
        triton.jit(scale)
    )
except ValueError as exc:
    print(f"key=['n'], no argument n: ValueError: {str(exc).split('. ')[0]}")
    assert version >= (3, 9), "triton 3.6 accepted this key"
else:
    timed.clear()
    for n in (1000, 2000, 3000):
        x = torch.rand(n, device=DEVICE)
        typo[grid](x, torch.empty_like(x), n, 2.0)
    print(
        f"key=['n'], no argument n: accepted; n=1000, 2000, 3000 benchmarked {len(timed)} "
        f"configs, cache keys {list(typo.cache)}"
    )
    assert version < (3, 9) and len(timed) == len(CONFIGS)
# --8<-- [end:typo]
print("claim_cache_key: all checks passed")
