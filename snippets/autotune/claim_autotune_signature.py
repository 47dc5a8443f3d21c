# /// script
# requires-python = ">=3.10"
# dependencies = ["torch", "triton", "numpy"]
#
# [tool.snippet]
# gpu = { min-cc = "8.0" }
# cpu = { interpreter = false }
# ///
"""Claim: the parameters and defaults of triton.autotune and triton.Config on this lock.

Also: warmup=, rep= and use_cuda_graph= of triton.autotune are deprecated (a DeprecationWarning).
Fails the day a release changes a parameter or a default, so the page that lists them gets updated.
"""

import inspect
import warnings

import triton
import triton.language as tl


@triton.jit
def copy_kernel(x_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    offsets = tl.program_id(axis=0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    tl.store(out_ptr + offsets, tl.load(x_ptr + offsets, mask=mask), mask=mask)


# --8<-- [start:claim]
autotune_params = str(inspect.signature(triton.autotune))
config_params = str(inspect.signature(triton.Config))
print(f"triton.autotune{autotune_params}")
print(f"triton.Config{config_params}")
assert autotune_params == (
    "(configs, key, prune_configs_by=None, reset_to_zero=None, restore_value=None, "
    "pre_hook=None, post_hook=None, warmup=None, rep=None, use_cuda_graph=False, "
    "do_bench=None, cache_results=False)"
)
assert config_params == (
    "(kwargs, num_warps=4, num_stages=3, num_ctas=1, maxnreg=None, pre_hook=None, ir_override=None)"
)

with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    triton.autotune(configs=[triton.Config({"BLOCK_SIZE": 128})], key=[], rep=20)(copy_kernel)
message = str(caught[0].message).split(". ")[0]
print(f"triton.autotune(rep=20): {caught[0].category.__name__}: {message}")  # (1)!
assert caught[0].category is DeprecationWarning
assert message == "warmup, rep, and use_cuda_graph parameters are deprecated"
# --8<-- [end:claim]
print("claim_autotune_signature: all checks passed")
