# /// script
# requires-python = ">=3.10"
# dependencies = ["torch", "ninja"]
#
# [tool.snippet]
# gpu = { min-cc = "8.0" }
# cpu = { interpreter = false }
# timeout = 300
# files = ["muladd_inline.py", "muladd_pkg/pyproject.toml", "muladd_pkg/setup.py.in", "muladd_pkg/muladd_pkg/__init__.py.in", "muladd_pkg/csrc/muladd.h", "muladd_pkg/csrc/muladd.cpp", "muladd_pkg/csrc/muladd_cuda.cu"]
# also-needs = "a C++ compiler that links libstdc++ dynamically (the file checks it first and names the fix), and on a GPU machine nvcc of torch's CUDA major version"
# also-needs-zh = "一个以动态方式链接 libstdc++ 的 C++ 编译器（文件会先检查，不合格就说明怎么改），在 GPU 机器上还要与 torch 的 CUDA 主版本一致的 nvcc"
# ///
"""Builds the muladd_pkg package (stable ABI, one wheel for CPython 3.10+) and tests the wheel.

On a CPU or a CUDA GPU, beside muladd_inline.py and the muladd_pkg/ folder:
    python muladd_package.py
Needs a C++ compiler that links libstdc++ dynamically (checked first, with muladd_inline.py's
check_cxx) and ninja; with a GPU, nvcc of torch's CUDA major version. Builds a wheel the way
`pip install --no-build-isolation .` does (with a GPU: the CPU build and the CUDA build),
installs it into a temporary folder, and checks the operator against a * b + c, its errors and
torch.library.opcheck.
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

HERE = Path(__file__).resolve().parent
PROJECT = HERE / "muladd_pkg"
sys.path.insert(0, str(HERE))
from muladd_inline import check_cxx  # the compiler check of the quick start


# --8<-- [start:build]
def build_wheel(workdir: Path, with_cuda: bool) -> tuple[Path, str]:
    """What `pip wheel --no-build-isolation .` does: the PEP 517 hook, in a fresh process.
    Returns the wheel and the build's output (ninja prints each compiler command)."""
    source = workdir / ("cuda" if with_cuda else "cpu") / "muladd_pkg"
    shutil.copytree(PROJECT, source)
    for stored in source.rglob("*.py.in"):  # (1)!
        stored.rename(stored.with_suffix(""))
    dist = source.parent / "dist"
    env = {**os.environ, "MULADD_WITH_CUDA": "1" if with_cuda else "0"}  # (2)!
    proc = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys; from setuptools import build_meta; build_meta.build_wheel(sys.argv[1])",
            str(dist),
        ],
        cwd=source,
        env=env,
        capture_output=True,
        text=True,
    )
    if proc.returncode != 0:
        sys.exit(f"building the wheel failed:\n{proc.stdout[-4000:]}\n{proc.stderr[-4000:]}")
    (wheel,) = dist.glob("*.whl")
    return wheel, proc.stdout + proc.stderr


def install(wheel: Path, target: Path) -> Path:
    """A wheel is a zip file: unpacking it into a folder on sys.path installs it."""
    with zipfile.ZipFile(wheel) as archive:
        archive.extractall(target)
    (library,) = (target / "muladd_pkg").glob("_C*.so")
    return library


def needed(library: Path) -> list[str]:
    """The shared libraries the compiled library names in its ELF table (DT_NEEDED)."""
    dynamic = subprocess.run(["readelf", "-d", str(library)], capture_output=True, text=True)
    return re.findall(r"\(NEEDED\)\s+Shared library: \[(.+?)\]", dynamic.stdout)


def nvcc_targets(build_output: str) -> list[str]:
    """The GPU code nvcc was asked for: sm_XY (machine code) and compute_XY (PTX)."""
    found = re.findall(r"-gencode=arch=compute_\d+,code=((?:sm|compute)_\d+)", build_output)
    return sorted(set(found), key=lambda t: (t.startswith("compute"), int(t.split("_")[1])))


def python_needs(library: Path) -> list[str]:
    """Python libraries and CPython symbols the compiled library needs, from its ELF tables."""
    nm = subprocess.run(
        ["nm", "-D", "--undefined-only", str(library)], capture_output=True, text=True
    )
    symbols = [line.split()[-1] for line in nm.stdout.splitlines() if line.strip()]
    return [n for n in needed(library) if "python" in n] + [
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
        for shape in [(0,), (1,), (7,), (1025,), (33, 65), (70_001,)]:
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
    print("package values: float32 and float64, empty to 70001 elements, non-contiguous views")

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
    where = torch.cuda.get_device_name() if with_cuda else "CPU"
    print(f"muladd_package on {where}")
    with tempfile.TemporaryDirectory() as tmp:
        # --8<-- [start:run]
        cxx = check_cxx()  # (1)!
        for kind in ["CPU", "CUDA"] if with_cuda else ["CPU"]:  # (2)!
            wheel, output = build_wheel(Path(tmp), with_cuda=kind == "CUDA")
            print(f"wheel, {kind} build: {wheel.name}")  # (3)!
            library = install(wheel, Path(tmp) / f"site-{kind}")
            check_cxx(str(library))  # (4)!
            print(f"libraries it needs, {kind} build: {needed(library)}")  # (5)!
            if kind == "CUDA":
                print(f"GPU code in the CUDA build: {' '.join(nvcc_targets(output))}")  # (6)!
        with zipfile.ZipFile(wheel) as archive:
            print(f"in the wheel: {sorted(n for n in archive.namelist() if '.dist-info' not in n)}")
        print(f"Python the library needs: {python_needs(library) or 'none'}")  # (7)!
        sys.path.insert(0, str(library.parent.parent))
        check(device)
        # --8<-- [end:run]
    print(f"C++ compiler on {where}: {cxx}")
    print("muladd_package: all checks passed")
