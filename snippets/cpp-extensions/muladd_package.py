# /// script
# requires-python = ">=3.10"
# dependencies = ["torch", "ninja"]
#
# [tool.snippet]
# gpu = { min-cc = "8.0" }
# cpu = { interpreter = false }
# timeout = 300
# files = ["muladd_pkg/pyproject.toml", "muladd_pkg/setup.py.in", "muladd_pkg/muladd_pkg/__init__.py.in", "muladd_pkg/csrc/muladd.h", "muladd_pkg/csrc/muladd.cpp", "muladd_pkg/csrc/muladd_cuda.cu"]
# ///
"""Builds the muladd_pkg package (stable ABI, one wheel for CPython 3.10+) and tests the wheel.

On a CPU or a CUDA GPU, beside the muladd_pkg/ folder:  python muladd_package.py
Builds a wheel the way `pip install --no-build-isolation .` does, installs it into a temporary
folder, and checks the operator against a * b + c, its errors and torch.library.opcheck.
"""

import os
import re
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

import torch

PROJECT = Path(__file__).resolve().parent / "muladd_pkg"


# --8<-- [start:build]
def build_wheel(workdir: Path) -> Path:
    """What `pip wheel --no-build-isolation .` does: the PEP 517 hook, in a fresh process."""
    source = workdir / "muladd_pkg"
    shutil.copytree(PROJECT, source)
    for stored in source.rglob("*.py.in"):  # (1)!
        stored.rename(stored.with_suffix(""))
    dist = workdir / "dist"
    subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys; from setuptools import build_meta; build_meta.build_wheel(sys.argv[1])",
            str(dist),
        ],
        cwd=source,
        check=True,
        capture_output=True,
        text=True,
    )
    (wheel,) = dist.glob("*.whl")
    return wheel


def install(wheel: Path, target: Path) -> None:
    """A wheel is a zip file: unpacking it into a folder on sys.path installs it."""
    with zipfile.ZipFile(wheel) as archive:
        archive.extractall(target)
    sys.path.insert(0, str(target))


def python_needs(library: Path) -> list[str]:
    """Python libraries and CPython symbols the compiled library needs, from its ELF tables."""
    dynamic = subprocess.run(["readelf", "-d", str(library)], capture_output=True, text=True)
    needed = re.findall(r"\(NEEDED\)\s+Shared library: \[(.+?)\]", dynamic.stdout)
    nm = subprocess.run(
        ["nm", "-D", "--undefined-only", str(library)], capture_output=True, text=True
    )
    symbols = [line.split()[-1] for line in nm.stdout.splitlines() if line.strip()]
    return [n for n in needed if "python" in n] + [
        s for s in symbols if s.startswith(("Py", "_Py"))
    ]


# --8<-- [end:build]

SENTINEL = 12345.0


def first_line(exc: Exception) -> str:
    """The message, without the C++ function, file and line that STD_TORCH_CHECK adds."""
    line = str(exc).splitlines()[0]
    return line[line.index("muladd:") :] if "muladd:" in line else line


def expect_error(call) -> str:
    try:
        call()
    except RuntimeError as exc:
        return f"{type(exc).__name__}: {first_line(exc)}"
    raise AssertionError("expected an error, got a result")


# --8<-- [start:check]
def check(device: str) -> None:
    import muladd_pkg  # (1)!

    torch.manual_seed(0)
    for dtype in (torch.float32, torch.float64):
        for shape in [(0,), (1,), (7,), (1025,), (33, 65)]:
            a, b, c = (torch.randn(shape, dtype=dtype).to(device) for _ in range(3))
            n, pad = a.numel(), 64
            buffer = torch.full((pad + n + pad,), SENTINEL, dtype=dtype, device=device)
            out = buffer[pad : pad + n].view(shape)
            muladd_pkg.muladd_out(a, b, c, out)  # (2)!
            assert bool((buffer[:pad] == SENTINEL).all() and (buffer[pad + n :] == SENTINEL).all())
            torch.testing.assert_close(out, a * b + c)
            torch.testing.assert_close(muladd_pkg.muladd(a, b, c), a * b + c)
    base = torch.randn(64, 130, dtype=torch.float64).to(device)
    for view in (base[:, ::2], base.t(), base[8:16, 3:70]):
        torch.testing.assert_close(muladd_pkg.muladd(view, view, view), view * view + view)
    print("package values: float32 and float64, empty to 1025 elements, non-contiguous views")

    x = torch.ones(3, device=device)
    print("package dtype:", expect_error(lambda: muladd_pkg.muladd(x, x, x.double())))  # (3)!
    print("package shapes:", expect_error(lambda: muladd_pkg.muladd(x, x, x[:2])))
    print("package int64:", expect_error(lambda: muladd_pkg.muladd(*[x.long()] * 3)))
    buffer = torch.zeros(6, device=device)
    print(
        "package overlap:",
        expect_error(lambda: muladd_pkg.muladd_out(x, x, buffer[1:4], buffer[2:5])),
    )
    cpu, meta = torch.ones(3), torch.ones(3, device="meta")
    print("package devices:", expect_error(lambda: muladd_pkg.muladd(cpu, cpu, meta)))
    if device == "cuda":
        print("package CPU tensor to CUDA:", expect_error(lambda: muladd_pkg.muladd(x, x, cpu)))

    leaf = torch.randn(4, 5, dtype=torch.float64, device=device, requires_grad=True)
    for args in [(leaf, leaf.detach() * 2, leaf.detach().t().contiguous().t()), (x, x, x)]:
        result = torch.library.opcheck(torch.ops.muladd_pkg.muladd.default, args)
        assert all(v == "SUCCESS" for v in result.values()), result
    torch.autograd.gradcheck(muladd_pkg.muladd, (leaf, leaf.detach() * 2, leaf.detach() + 1))
    print(f"package opcheck: {sorted(result)} passed; gradcheck passed")


# --8<-- [end:check]

if __name__ == "__main__":
    with_cuda = torch.cuda.is_available()
    device = "cuda" if with_cuda else "cpu"
    print(f"muladd_package on {torch.cuda.get_device_name() if with_cuda else 'CPU'}")
    cxx = os.environ.get("CXX", "c++")  # what torch.utils.cpp_extension compiles with
    version = subprocess.run([cxx, "--version"], capture_output=True, text=True).stdout
    where = torch.cuda.get_device_name() if with_cuda else "CPU"
    print(f"C++ compiler on {where}: {cxx}, {version.splitlines()[0]}")
    with tempfile.TemporaryDirectory() as tmp:
        # --8<-- [start:run]
        wheel = build_wheel(Path(tmp))
        print(f"wheel: {wheel.name}")  # (1)!
        with zipfile.ZipFile(wheel) as archive:
            print(f"in the wheel: {sorted(n for n in archive.namelist() if '.dist-info' not in n)}")
        install(wheel, Path(tmp) / "site")
        (library,) = (Path(tmp) / "site" / "muladd_pkg").glob("_C*.so")
        print(f"Python the library needs: {python_needs(library) or 'none'}")  # (2)!
        check(device)
        # --8<-- [end:run]
    print("muladd_package: all checks passed")
