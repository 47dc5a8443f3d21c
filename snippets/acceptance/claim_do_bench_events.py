# /// script
# requires-python = ">=3.10"
# dependencies = ["torch", "triton", "numpy"]
#
# [tool.snippet]
# gpu = { min-cc = "8.0" }
# cpu = { interpreter = false }
# ///
"""Claim: do_bench's CUDA events bracket the call to fn, launch included, not the kernel alone.

In each timed run, triton.testing.do_bench queues the L2 flush, records the start event, calls
fn (which launches the kernel from the CPU), then records the end event, with no synchronization
in between. So the time it reports is a call time: it also holds any time the GPU waited for the
launch, and a launch that takes the CPU longer than the flush takes the GPU shows up in it. Read
from the source of the installed Triton; fails when a release changes that order.
"""

import ast
import inspect
import textwrap

import triton
import triton.testing

# --8<-- [start:claim]
tree = ast.parse(textwrap.dedent(inspect.getsource(triton.testing.do_bench)))
timed = next(  # (1)!
    node
    for node in ast.walk(tree)
    if isinstance(node, ast.For) and "n_repeat" in ast.unparse(node.iter)
)
steps = [ast.unparse(s.value) for s in timed.body if isinstance(s, ast.Expr)]
print("do_bench, each timed run: " + " -> ".join(steps))
order = [
    next(i for i, step in enumerate(steps) if step.startswith(what))
    for what in ("runtime.driver.active.clear_cache", "start_event", "fn()", "end_event")
]
assert order == sorted(order), steps
assert not any("synchronize" in step for step in steps), steps  # (2)!
# --8<-- [end:claim]
print("claim_do_bench_events: all checks passed")
