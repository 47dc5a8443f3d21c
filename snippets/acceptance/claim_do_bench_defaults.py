# /// script
# requires-python = ">=3.10"
# dependencies = ["torch", "triton", "numpy"]
#
# [tool.snippet]
# gpu = { min-cc = "8.0" }
# cpu = { interpreter = false }
# ///
"""Claim: triton.testing.do_bench returns the mean by default; what its docstring says varies.

The signature is the truth; the first sentence of the docstring said "median" in Triton 3.6 and
says "mean" in 3.9. Fails when a release changes either, or on a version this claim has not
read yet.
"""

import inspect

import triton
import triton.testing

# --8<-- [start:claim]
signature = inspect.signature(triton.testing.do_bench)
defaults = {k: p.default for k, p in signature.parameters.items() if k != "fn"}
print(f"do_bench defaults: {defaults}")
assert defaults["return_mode"] == "mean" and (defaults["warmup"], defaults["rep"]) == (25, 100)

summary = " ".join(inspect.getdoc(triton.testing.do_bench).split("\n\n")[0].split())  # (1)!
first = summary.split("By default, ")[1].split(" of ")[0]
print(f"do_bench docstring, by default it returns: {first}")
said = {"3.6": "return the median runtime", "3.9": "returns the mean runtime (in milliseconds)"}
said |= {v: said["3.6"] for v in ("3.2", "3.3", "3.4", "3.5", "3.7")}  # (2)!
said["3.8"] = "returns the mean runtime"
version = ".".join(triton.__version__.split(".")[:2])
assert version in said, f"Triton {version}: read its do_bench docstring and extend this claim"
assert first == said[version], first
# --8<-- [end:claim]
print("claim_do_bench_defaults: all checks passed")
