# /// script
# requires-python = ">=3.10"
# dependencies = ["torch", "triton", "numpy"]
#
# [tool.snippet]
# gpu = { skip = "checks limits of the CPU interpreter; on a GPU, autotune_basics.py tunes with the GPU timer", skip-zh = "检查的是 CPU 解释器的限制；GPU 上由 autotune_basics.py 用 GPU 计时器调优" }
# cpu = { interpreter = true }
# ///
"""Claim: under TRITON_INTERPRET=1, autotuning needs a do_bench= timer and never caches on disk.

With several configs and no do_bench=, the first call fails looking for a GPU driver; with one
config it runs (nothing to time); cache_results=True is switched off and writes nothing.
Fails the day a release changes one of these, so the page that says so gets updated.
"""

import os
import tempfile

os.environ["TRITON_INTERPRET"] = "1"
os.environ["CUDA_VISIBLE_DEVICES"] = ""  # as on a machine without a GPU, even where there is one
CACHE_DIR = tempfile.mkdtemp(prefix="triton-cache-")
os.environ["TRITON_CACHE_DIR"] = CACHE_DIR

import torch
import triton
import triton.language as tl


def copy(x_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    offsets = tl.program_id(axis=0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    tl.store(out_ptr + offsets, tl.load(x_ptr + offsets, mask=mask), mask=mask)


TWO = [triton.Config({"BLOCK_SIZE": 128}), triton.Config({"BLOCK_SIZE": 256})]
x = torch.rand(1000)
grid = lambda meta: (triton.cdiv(meta["n_elements"], meta["BLOCK_SIZE"]),)

# --8<-- [start:claim]
several = triton.autotune(configs=TWO, key=["n_elements"])(triton.jit(copy))
try:
    several[grid](x, torch.empty_like(x), x.numel())
except RuntimeError as exc:
    print(f"two configs, no do_bench=: RuntimeError: {exc}")  # (1)!
    assert str(exc) == "0 active drivers ([]). There should only be one."
else:
    raise AssertionError("autotuning now times configs under the interpreter: update the page")

one = triton.autotune(configs=TWO[:1], key=["n_elements"])(triton.jit(copy))
out = torch.empty_like(x)
one[grid](x, out, x.numel())  # (2)!
assert torch.equal(out, x)
print(f"one config, no do_bench=: runs, best_config {one.best_config.kwargs}")

timed = triton.autotune(
    configs=TWO,
    key=["n_elements"],
    cache_results=True,
    do_bench=lambda fn, quantiles: [1.0, 1.0, 1.0],  # (3)!
)(triton.jit(copy))
timed[grid](x, out, x.numel())
files = [name for _, _, names in os.walk(CACHE_DIR) for name in names]
print(
    f"cache_results=True under the interpreter: cache_results={timed.cache_results}, {len(files)} files written"
)
assert timed.cache_results is False and files == []
# --8<-- [end:claim]
print("claim_interpreter_autotune: all checks passed")
