# /// script
# requires-python = ">=3.10"
# dependencies = ["torch", "ninja"]
#
# [tool.snippet]
# gpu = { skip = "needs a second PyTorch release installed beside this one; the GPU machine has one", skip-zh = "需要在旁边另装一个 PyTorch 版本；GPU 机器上只有一个" }
# cpu = { interpreter = false }
# timeout = 300
# files = ["muladd_inline.py", "muladd_pkg/csrc/muladd.h", "muladd_pkg/csrc/muladd.cpp"]
# also-needs = "a C++ compiler, and a second Python environment with another torch release (2.10 or newer) named by OTHER_TORCH_PYTHON=/path/to/its/python; the file says so and stops without it"
# also-needs-zh = "C++ 编译器，以及另一个装有其他 torch 版本（2.10 或更新）的 Python 环境，用 OTHER_TORCH_PYTHON=/path/to/its/python 指定；缺了它，文件会说明原因并退出"
# ///
"""Build with this PyTorch, load with another release: the stable ABI against the ordinary one.

On a CPU, with a second environment that has another torch release (2.10 or newer):
    OTHER_TORCH_PYTHON=/path/to/other/venv/bin/python python stable_abi_across_releases.py
Inside this site's repository it also finds the lock environments (.venv, .venv-locks/*).
Without a second release it says so and exits with status 1 before building anything. It
checks the C++ compiler with muladd_inline.py's check_cxx, as the other files here do.
Builds the CPU kernel three ways, loads each library in the other release, runs the operator
there and compares it with a * b + c.
"""

import importlib.metadata
import os
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
CSRC = HERE / "muladd_pkg" / "csrc"
sys.path.insert(0, str(HERE))
from muladd_inline import check_cxx  # the compiler check of the quick start

ATEN_SOURCE = r"""
#include <ATen/core/Tensor.h>
#include <ATen/ops/empty.h>
#include <torch/library.h>

at::Tensor muladd_cpu(const at::Tensor& a, const at::Tensor& b, const at::Tensor& c) {
  TORCH_CHECK(a.sizes() == b.sizes() && a.sizes() == c.sizes(), "muladd: shapes differ");
  TORCH_CHECK(a.scalar_type() == at::kFloat, "muladd: float32 only");
  const at::Tensor ac = a.contiguous(), bc = b.contiguous(), cc = c.contiguous();
  at::Tensor out = at::empty(a.sizes(), a.options());
  const float *pa = ac.const_data_ptr<float>(), *pb = bc.const_data_ptr<float>();
  const float* pc = cc.const_data_ptr<float>();
  float* po = out.mutable_data_ptr<float>();
  const int64_t n = out.numel();
  for (int64_t i = 0; i < n; ++i) po[i] = pa[i] * pb[i] + pc[i];
  return out;
}

TORCH_LIBRARY(muladd_pkg, m) { m.def("muladd(Tensor a, Tensor b, Tensor c) -> Tensor"); }
TORCH_LIBRARY_IMPL(muladd_pkg, CPU, m) { m.impl("muladd", &muladd_cpu); }
"""

LOADER = """
import sys, torch
try:
    torch.ops.load_library(sys.argv[1])
except OSError as exc:
    import ctypes
    try:
        ctypes.CDLL(sys.argv[1])
    except OSError as why:
        exc = why
    print("fails to load, undefined symbol " + str(exc).rsplit(": ", 1)[-1])
    sys.exit(0)
a, b, c = (torch.randn(1000) for _ in range(3))
torch.testing.assert_close(torch.ops.muladd_pkg.muladd(a, b, c), a * b + c)
print("runs, equal to a * b + c")
"""


def torch_version(python: str) -> str:
    code = "import importlib.metadata as m; print(m.version('torch'))"
    proc = subprocess.run([python, "-c", code], capture_output=True, text=True)
    return proc.stdout.strip() if proc.returncode == 0 else ""


def other_release() -> tuple[str, str]:
    """A Python with another torch release: OTHER_TORCH_PYTHON, else this site's lock venvs."""
    mine = importlib.metadata.version("torch")
    candidates = [os.environ.get("OTHER_TORCH_PYTHON", "")]
    here = Path(__file__).resolve()
    repo = here.parents[2] if len(here.parents) > 2 else here.parent
    if (repo / "locks").is_dir():  # inside the site's repository
        candidates += [str(repo / ".venv" / "bin" / "python")]
        candidates += sorted(str(p) for p in repo.glob(".venv-locks/*/bin/python"))
    for python in filter(None, candidates):
        version = torch_version(python) if Path(python).is_file() else ""
        if version and version != mine and release(version) >= (2, 10):
            return python, version
    sys.exit(
        "stable_abi_across_releases.py needs a second Python environment with another torch "
        f"release, 2.10 or newer (this one has torch {mine}); none was found"
        + (f" at OTHER_TORCH_PYTHON={os.environ['OTHER_TORCH_PYTHON']}" if candidates[0] else "")
        + ". Make one, e.g. `python -m venv other && other/bin/pip install torch==<release>`, "
        "then run: OTHER_TORCH_PYTHON=other/bin/python python stable_abi_across_releases.py"
    )


def release(version: str) -> tuple[int, int]:
    major, minor = version.split("+")[0].split(".")[:2]
    return int(major), int(minor)


# --8<-- [start:builds]
VARIANTS = {  # name: (sources, extra compiler flags)
    "stable ABI, TORCH_TARGET_VERSION 2.10": (
        ["muladd.cpp"],
        ["-DTORCH_TARGET_VERSION=0x020a000000000000"],
    ),  # (1)!
    "stable ABI, no TORCH_TARGET_VERSION": (["muladd.cpp"], []),  # (2)!
    "ATen API": (["aten_muladd.cpp"], []),  # (3)!
}


def build(what: str, workdir: str) -> str:
    """Build one variant in a child process (each defines the same operator namespace)."""
    sources, flags = VARIANTS[what]
    build_dir = os.path.join(workdir, f"build{list(VARIANTS).index(what)}")
    os.makedirs(build_dir)
    code = (
        "import sys; from torch.utils.cpp_extension import load; "
        "print(load(name='muladd_variant', sources=sys.argv[1:-1], build_directory=sys.argv[-1],"
        f" extra_cflags={['-O2', *flags]!r}, is_python_module=False))"
    )
    paths = [str(CSRC / s) if s == "muladd.cpp" else os.path.join(workdir, s) for s in sources]
    proc = subprocess.run(
        [sys.executable, "-c", code, *paths, build_dir], capture_output=True, text=True, check=True
    )
    return proc.stdout.strip().splitlines()[-1]


def libtorch_cpp_symbols(library: str) -> list[str]:
    """Undefined C++ symbols of at::, c10:: and torch:: that the library needs from libtorch."""
    nm = subprocess.run(
        ["nm", "-D", "--undefined-only", library], capture_output=True, text=True, check=True
    )
    names = [line.split()[-1] for line in nm.stdout.splitlines()]
    prefixes = ("_ZN2at", "_ZNK2at", "_ZN3c10", "_ZNK3c10", "_ZN5torch", "_ZNK5torch")
    return [n for n in names if n.startswith(prefixes)]


def demangle(text: str) -> str:
    return subprocess.run(["c++filt"], input=text, capture_output=True, text=True).stdout.strip()


# --8<-- [end:builds]

if __name__ == "__main__":
    other, other_version = other_release()
    check_cxx()
    mine = importlib.metadata.version("torch")
    older = release(other_version) < release(mine)
    print(f"built with torch {mine}, loaded by torch {other_version}")
    results = {}
    with tempfile.TemporaryDirectory() as workdir:
        Path(workdir, "aten_muladd.cpp").write_text(ATEN_SOURCE)
        # --8<-- [start:run]
        for what in VARIANTS:
            library = build(what, workdir)
            symbols = libtorch_cpp_symbols(library)
            print(f"{what}: libtorch C++ symbols it needs: {len(symbols) or 'none'}")
            proc = subprocess.run(
                [other, "-c", LOADER, library], capture_output=True, text=True, check=True
            )
            results[what] = demangle(proc.stdout.strip().splitlines()[-1])
            where = "an older" if older else "a newer"
            print(f"{what}, loaded by {where} release: {results[what]}")  # (1)!
            # --8<-- [end:run]
            assert bool(symbols) == (what == "ATen API"), (what, symbols[:3])
    assert results["stable ABI, TORCH_TARGET_VERSION 2.10"].startswith("runs")
    if {release(mine), release(other_version)} == {(2, 11), (2, 15)}:  # this site's two locks
        no_target = results["stable ABI, no TORCH_TARGET_VERSION"]
        assert no_target.startswith("fails" if older else "runs"), no_target
        assert results["ATen API"].startswith("fails to load"), results["ATen API"]
    print("stable_abi_across_releases: all checks passed")
