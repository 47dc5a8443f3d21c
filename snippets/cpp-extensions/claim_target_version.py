# /// script
# requires-python = ">=3.10"
# dependencies = ["torch"]
#
# [tool.snippet]
# gpu = { skip = "checks what the C++ compiler accepts with the stable-ABI headers; no GPU is involved", skip-zh = "检查的是 C++ 编译器在稳定 ABI 头文件下接受什么；与 GPU 无关" }
# cpu = { interpreter = false }
# also-needs = "a C++ compiler (c++ on the PATH)"
# also-needs-zh = "C++ 编译器（PATH 上的 c++）"
# ///
"""Claim: what TORCH_TARGET_VERSION makes the compiler accept, with this release's headers.

On a CPU (with a C++ compiler):  python claim_target_version.py
Compiles three small sources for syntax only and prints the compiler's first error for each.
Fails the day a release changes what is printed, so the page that says so gets updated.
"""

import os
import re
import subprocess

import torch
from torch.utils.cpp_extension import include_paths

V2_10 = "0x020a000000000000"  # [major][minor][patch][ABI tag]: 2.10.0
V2_255 = "0x02ff000000000000"  # a release newer than any headers


# --8<-- [start:claim]
def first_error(source: str, target_version: str) -> str:
    """Compile `source` for syntax only; return its first error, or 'compiles'."""
    command = ["c++", "-std=c++17", "-fsyntax-only", "-x", "c++", "-"]
    command += [f"-I{path}" for path in include_paths()]
    command += [f"-DTORCH_TARGET_VERSION={target_version}"]
    env = {**os.environ, "LC_ALL": "C"}  # plain quotes in the messages
    proc = subprocess.run(command, input=source, capture_output=True, text=True, env=env)
    errors = re.findall(r"error: (.*)", proc.stderr)
    assert (proc.returncode == 0) == (not errors), proc.stderr[-2000:]
    return errors[0] if errors else "compiles"


UNSTABLE = "#include <torch/extension.h>\n"  # (1)!
STABLE = "#include <torch/csrc/stable/library.h>\n"
NEWER_API = """
#include <torch/csrc/stable/ops.h>
torch::stable::Tensor wrap(void* data, torch::stable::Device device) {
  return torch::stable::from_blob(data, {4}, {1}, device,
                                  torch::headeronly::ScalarType::Float, [](void*) {});
}
"""  # (2)!

print(f"ATen headers, target 2.10: {first_error(UNSTABLE, V2_10)}")
print(f"stable headers, target newer than the headers: {first_error(STABLE, V2_255)}")  # (3)!
print(f"an API added in 2.11, target 2.10: {first_error(NEWER_API, V2_10)}")
# --8<-- [end:claim]

assert "should not be included" in first_error(UNSTABLE, V2_10)
assert first_error(STABLE, V2_10) == "compiles"
release = tuple(int(p) for p in torch.__version__.split("+")[0].split(".")[:2])
if release >= (2, 15):  # the check in torch/csrc/stable/version.h, absent from 2.11
    assert "newer than the libtorch headers" in first_error(STABLE, V2_255)  # 2.12-2.14 unchecked
else:
    assert first_error(STABLE, V2_255) == "compiles"
assert first_error(NEWER_API, V2_10) != "compiles"
print("claim_target_version: all checks passed")
