# /// script
# requires-python = ">=3.10"
# dependencies = ["torch", "ninja"]
#
# [tool.snippet]
# gpu = { skip = "checks the C++ toolchain on the CPU; no GPU is involved", skip-zh = "检查的是 CPU 上的 C++ 工具链，与 GPU 无关" }
# cpu = { interpreter = false }
# timeout = 300
# files = ["muladd_inline.py"]
# also-needs = "g++ (or the compiler named by CXX) with the static libstdc++ (libstdc++.a) that Linux distributions ship with it"
# also-needs-zh = "g++（或 CXX 指定的编译器）及其静态 libstdc++（libstdc++.a），Linux 发行版随编译器一起提供"
# ///
"""Claim: check_cxx (muladd_inline.py) turns away a compiler that links its own static copy of
libstdc++ into what it builds, and what such an extension does inside this torch release.

On a CPU with g++:  python claim_static_libstdcxx.py
Makes a stand-in for a compiler that links libstdc++ statically (the compiler plus
-static-libstdc++), runs check_cxx with it, then builds a small operator with it anyway, in a
child process, and prints the shape error the operator raises. Fails the day either changes.
"""

import os
import subprocess
import sys
import tempfile
from importlib.metadata import version
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from muladd_inline import check_cxx

torch_version = version("torch")

SOURCE = r"""
#include <ATen/core/Tensor.h>
#include <torch/library.h>

at::Tensor same_shape(const at::Tensor& a, const at::Tensor& b) {
  TORCH_CHECK_VALUE(a.sizes() == b.sizes(), "shapes differ: ", a.sizes(), " and ", b.sizes());
  return a;
}

TORCH_LIBRARY(static_probe, m) { m.def("same_shape(Tensor a, Tensor b) -> Tensor", &same_shape); }
"""

CHILD = """
import sys, torch
from torch.utils.cpp_extension import load_inline
load_inline(name="static_probe", cpp_sources=[sys.argv[1]], build_directory=sys.argv[2],
            is_python_module=False, no_implicit_headers=True)
try:
    torch.ops.static_probe.same_shape(torch.ones(3), torch.ones(4))
except ValueError as exc:
    print("ValueError: " + str(exc).splitlines()[0])
"""

# --8<-- [start:claim]
with tempfile.TemporaryDirectory() as tmp:
    static = Path(tmp, "static-c++")  # (1)!
    static.write_text(f'#!/bin/sh\nexec {os.environ.get("CXX", "c++")} "$@" -static-libstdc++\n')
    static.chmod(0o755)
    check = subprocess.run(
        [sys.executable, "-c", "from muladd_inline import check_cxx; check_cxx()"],
        env={**os.environ, "CXX": str(static), "PYTHONPATH": str(HERE)},
        capture_output=True,
        text=True,
    )
    message = check.stderr.strip().splitlines()[-1].replace(str(static), "static-c++")
    print(f"check_cxx with that compiler: exit {check.returncode}, {message}")
    os.makedirs(Path(tmp, "build"))
    run = subprocess.run(  # (2)!
        [sys.executable, "-c", CHILD, SOURCE, str(Path(tmp, "build"))],
        env={**os.environ, "CXX": str(static)},
        capture_output=True,
        text=True,
    )
    if run.returncode < 0:
        shape_error = f"the process died with signal {-run.returncode}"
    elif run.returncode > 0:
        sys.exit(f"the static build did not run:\n{run.stderr[-3000:]}")
    else:
        shape_error = run.stdout.strip().splitlines()[-1]
    print(f"shape error, libstdc++ linked statically: {shape_error}")  # (3)!
# --8<-- [end:claim]

check_cxx()  # the compiler as it is links libstdc++ dynamically, or this exits
assert check.returncode == 1 and "links libstdc++ statically" in check.stderr, check.stderr
whole = "ValueError: shapes differ: [3] and [4]"  # what the same code raises built dynamically
release = tuple(int(p) for p in torch_version.split("+")[0].split(".")[:2])
if release < (2, 15):  # checked on 2.11: the message is cut where the sizes are printed
    assert shape_error != whole, f"torch {torch_version}: a static libstdc++ now prints it whole"
else:  # checked on 2.15: this message comes out whole (2.12-2.14 not checked)
    assert shape_error == whole, f"torch {torch_version}: {shape_error}"
print("claim_static_libstdcxx: all checks passed")
