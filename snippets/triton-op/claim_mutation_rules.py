# /// script
# requires-python = ">=3.10"
# dependencies = ["torch", "triton", "numpy"]
#
# [tool.snippet]
# gpu = { skip = "checks rules of torch.library that do not depend on the device; the CPU run of each lock covers them", skip-zh = "检查的是 torch.library 的规则，与设备无关；每个锁定版本的 CPU 运行已经覆盖" }
# cpu = { interpreter = false }
# ///
"""Claims: four rules of torch.library for operators that write their inputs or return them.

1. A kernel that returns one of its inputs is an error at the call (the aliasing check).
2. A kernel that writes an input not named in mutates_args passes a plain call, and opcheck's
   test_schema catches it.
3. register_autograd refuses an operator that writes its inputs.
4. With no autograd formula, such an operator takes inputs that require grad without a word.

On a CPU or a GPU:  python claim_mutation_rules.py   (CPU tensors; no Triton kernel runs)
Fails the day a release changes one of them.
"""

import torch
from torch.library import triton_op


def first_sentence(exc: Exception) -> str:
    return f"{type(exc).__name__}: " + str(exc).split(". ")[0].split(": ", 1)[-1]


# --8<-- [start:returns-input]
@triton_op("claimlib::passthrough", mutates_args=())
def passthrough(x: torch.Tensor) -> torch.Tensor:
    return x.clone()


@passthrough.register_kernel("cpu")
def passthrough_cpu(x: torch.Tensor) -> torch.Tensor:
    return x  # (1)!


try:
    torch.ops.claimlib.passthrough(torch.ones(3))
    aliasing = "no error"
except RuntimeError as exc:
    aliasing = first_sentence(exc)
print(f"a kernel that returns its input: {aliasing}")
# --8<-- [end:returns-input]


# --8<-- [start:undeclared]
@triton_op("claimlib::scale_into", mutates_args=())  # (1)!
def scale_into(x: torch.Tensor, out: torch.Tensor) -> None:
    raise NotImplementedError("CPU tensors only in this claim")


@scale_into.register_kernel("cpu")
def scale_into_cpu(x: torch.Tensor, out: torch.Tensor) -> None:
    out.copy_(2 * x)


x, out = torch.ones(3), torch.zeros(3)
torch.ops.claimlib.scale_into(x, out)  # (2)!
plain_call = f"no error, out written: {out.tolist()}"
try:
    args = (x, torch.zeros(3))  # (3)!
    torch.library.opcheck(torch.ops.claimlib.scale_into.default, args, test_utils="test_schema")
    caught = "passed"
except Exception as exc:  # opcheck raises OpCheckError
    caught = str(exc).split("failed with ")[-1].split(" (scroll")[0]
print(f"an undeclared write, plain call: {plain_call}")
print(f"an undeclared write, opcheck test_schema: {caught}")
# --8<-- [end:undeclared]


# --8<-- [start:no-autograd]
@triton_op("claimlib::scale_out", mutates_args={"out"})
def scale_out(x: torch.Tensor, out: torch.Tensor) -> None:
    raise NotImplementedError("CPU tensors only in this claim")


@scale_out.register_kernel("cpu")
def scale_out_cpu(x: torch.Tensor, out: torch.Tensor) -> None:
    out.copy_(2 * x)


try:
    scale_out.register_autograd(lambda ctx, grad: None, setup_context=lambda ctx, i, o: None)
    registered = "registered"
except RuntimeError as exc:
    registered = first_sentence(exc)
print(f"register_autograd on an operator that writes out: {registered}")

x, out = torch.ones(3, requires_grad=True), torch.zeros(3)
torch.ops.claimlib.scale_out(x, out)  # (1)!
print(f"x requires grad; after the call, out.requires_grad: {out.requires_grad}")
# --8<-- [end:no-autograd]

assert aliasing.startswith("RuntimeError: The output of this custom operator (1) must not also"), (
    aliasing
)
assert plain_call == "no error, out written: [2.0, 2.0, 2.0]", plain_call
assert caught == "Argument out is not defined as mutable but was mutated", caught
assert registered.startswith("RuntimeError: Cannot register autograd formula for non-functional"), (
    registered
)
assert out.requires_grad is False and out.tolist() == [2.0, 2.0, 2.0]
print("claim_mutation_rules: all checks passed")
