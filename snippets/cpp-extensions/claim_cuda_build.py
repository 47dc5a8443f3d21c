# /// script
# requires-python = ">=3.10"
# dependencies = ["torch"]
#
# [tool.snippet]
# gpu = { min-cc = "8.0" }
# cpu = { interpreter = false }
# files = ["muladd_pkg/setup.py.in"]
# ///
"""Claim: what torch.utils.cpp_extension does when it builds CUDA code, with this release.

On a CPU or a CUDA GPU (no compiler needed):  python claim_cuda_build.py
Prints and asserts the GPU code it compiles for when TORCH_CUDA_ARCH_LIST is unset (no GPU
visible: an IndexError; GPUs visible: theirs only) or set to muladd_pkg's list, what it does with
an nvcc of another CUDA version, and which libraries an extension links. Fails the day a release
changes one of them, so the page that says so gets updated.
"""

import logging
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import torch
from torch.utils import cpp_extension

SETUP = Path(__file__).resolve().parent / "muladd_pkg" / "setup.py.in"
PACKAGE_ARCHS = re.search(r'"TORCH_CUDA_ARCH_LIST", "([^"]+)"', SETUP.read_text())[1]
if torch.version.cuda is None:
    sys.exit("claim_cuda_build.py needs a CUDA build of torch (any machine; no GPU needed)")


# --8<-- [start:arch]
def arch_targets(arch_list: str | None) -> str:
    """The GPU code that builds get (sm_XY: machine code, compute_XY: PTX), or the error."""
    os.environ.pop("TORCH_CUDA_ARCH_LIST", None)
    if arch_list is not None:
        os.environ["TORCH_CUDA_ARCH_LIST"] = arch_list
    try:
        flags = cpp_extension._get_cuda_arch_flags()  # (1)!
    except Exception as exc:
        return f"{type(exc).__name__}: {exc}"
    finally:
        os.environ.pop("TORCH_CUDA_ARCH_LIST", None)
    codes = [re.search(r",code=(\w+)", flag)[1] for flag in flags]
    return " ".join(sorted(codes, key=lambda c: (c.startswith("compute"), int(c.split("_")[1]))))


def without_gpus() -> str:
    """arch_targets(None) in a child process that sees no GPU, as on a wheel-building machine."""
    code = (
        f"import runpy; print(runpy.run_path({__file__!r}, run_name='child')['arch_targets'](None))"
    )
    env = {**os.environ, "CUDA_VISIBLE_DEVICES": ""}  # (2)!
    env.pop("TORCH_CUDA_ARCH_LIST", None)
    proc = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    return proc.stdout.strip().splitlines()[-1]


# --8<-- [end:arch]


# --8<-- [start:nvcc]
def nvcc_verdict(release: str) -> str:
    """What the build says of an nvcc that reports `release` (a stand-in that prints it)."""
    warnings: list[str] = []
    handler = logging.Handler()
    handler.emit = lambda record: warnings.append(record.getMessage())
    saved = cpp_extension.CUDA_HOME
    with tempfile.TemporaryDirectory() as home:
        nvcc = Path(home, "bin", "nvcc")
        nvcc.parent.mkdir()
        nvcc.write_text(
            f"#!/bin/sh\necho 'Cuda compilation tools, release {release}, V{release}.1'\n"
        )
        nvcc.chmod(0o755)
        cpp_extension.CUDA_HOME = home
        os.environ["TORCH_DONT_CHECK_COMPILER_ABI"] = "1"  # the host compiler: another check
        cpp_extension.logger.addHandler(handler)
        try:
            cpp_extension._check_cuda_version("g++", cpp_extension.TorchVersion("13.0.0"))
        except RuntimeError as exc:
            return f"RuntimeError: {exc.args[0] % exc.args[1:]}"
        finally:
            cpp_extension.CUDA_HOME = saved
            os.environ.pop("TORCH_DONT_CHECK_COMPILER_ABI")
            cpp_extension.logger.removeHandler(handler)
    return "builds, warning: " + warnings[0] if warnings else "builds"


# --8<-- [end:nvcc]

if __name__ == "__main__":
    major, minor = (int(p) for p in torch.version.cuda.split(".")[:2])
    # --8<-- [start:claim]
    print(f"TORCH_CUDA_ARCH_LIST unset, no GPU visible: {without_gpus()}")
    if torch.cuda.is_available():
        names = sorted({torch.cuda.get_device_name(i) for i in range(torch.cuda.device_count())})
        print(f"TORCH_CUDA_ARCH_LIST unset, GPU visible ({', '.join(names)}): {arch_targets(None)}")
    print(f"TORCH_CUDA_ARCH_LIST={PACKAGE_ARCHS} (setup.py): {arch_targets(PACKAGE_ARCHS)}")
    own = torch._C._cuda_getArchFlags().split()  # (1)!
    print(f"machine code in torch's own CUDA kernels: {' '.join(own)}")
    print(f"nvcc of another CUDA major ({major - 1}.8): {nvcc_verdict(f'{major - 1}.8')}")
    print(f"nvcc of the same major ({major}.{minor + 1}): {nvcc_verdict(f'{major}.{minor + 1}')}")
    with tempfile.TemporaryDirectory() as home:
        cpp_extension.CUDA_HOME = home  # CUDAExtension only needs the path to exist
        for Extension in (cpp_extension.CppExtension, cpp_extension.CUDAExtension):
            ext = Extension("pkg._C", ["pkg.cpp"], py_limited_api=True)  # (2)!
            print(f"{Extension.__name__}(py_limited_api=True) links: {', '.join(ext.libraries)}")
    # --8<-- [end:claim]

    assert without_gpus().startswith("IndexError"), without_gpus()
    if torch.cuda.is_available():  # the visible GPUs' archs only, each with PTX on the newest
        caps = sorted(
            {torch.cuda.get_device_capability(i) for i in range(torch.cuda.device_count())}
        )
        want = [f"sm_{a}{b}" for a, b in caps] + [f"compute_{caps[-1][0]}{caps[-1][1]}"]
        assert arch_targets(None).split() == want, (arch_targets(None), want)
    package = arch_targets(PACKAGE_ARCHS).split()
    assert set(own) <= set(package), (own, package)  # the wheel covers torch's own GPUs
    assert nvcc_verdict(f"{major - 1}.8").startswith("RuntimeError"), "another major is refused"
    assert nvcc_verdict(f"{major}.{minor + 1}").startswith("builds, warning"), "a minor warns"
    with tempfile.TemporaryDirectory() as home:
        cpp_extension.CUDA_HOME = home
        libs = cpp_extension.CUDAExtension("pkg._C", ["pkg.cu"], py_limited_api=True).libraries
    assert {"cudart", "torch_cuda"} <= set(libs) and "torch_python" not in libs, libs
    print("claim_cuda_build: all checks passed")
