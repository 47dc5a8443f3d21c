# /// script
# requires-python = ">=3.10"
# dependencies = ["torch", "ninja"]
#
# [tool.snippet]
# gpu = { min-cc = "8.0", timing = true }
# cpu = { interpreter = false }
# timeout = 300
# files = ["muladd_inline.py", "muladd_pkg/csrc/muladd.h", "muladd_pkg/csrc/muladd.cpp", "muladd_pkg/csrc/muladd_cuda.cu"]
# also-needs = "a C++ compiler that links libstdc++ dynamically (the file checks it first and names the fix), and on a GPU machine nvcc of torch's CUDA major version"
# also-needs-zh = "一个以动态方式链接 libstdc++ 的 C++ 编译器（文件会先检查，不合格就说明怎么改），在 GPU 机器上还要与 torch 的 CUDA 主版本一致的 nvcc"
# ///
"""How long a cold build takes, for the load_inline quick start and for the stable-ABI sources.

On a CPU or a CUDA GPU, beside muladd_inline.py and muladd_pkg/:  python build_time.py
Needs what muladd_inline.py needs, and checks the C++ compiler with its check_cxx first.
Builds each three times into fresh build directories, each in a fresh process, and times the
build call alone (Python start-up and `import torch` excluded). On a CPU: C++ only, one build
after another, and how many lines the compiler reads for each source, and for the quick start
with load_inline's implicit torch/extension.h. With a GPU: C++ and CUDA, the three builds of
each at once (the GPU machine has 16 cores).
"""

import importlib.util
import json
import os
import statistics
import subprocess
import sys
import sysconfig
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
CSRC = HERE / "muladd_pkg" / "csrc"
# Three by default. The site's test suite sets SNIPPET_REPEATS=1: it runs files side by side,
# where no time means anything, and keeps none; the records are made with the default.
REPEATS = int(os.environ.get("SNIPPET_REPEATS", "3"))
STABLE_FLAGS = ["-O2", "-DTORCH_TARGET_VERSION=0x020a000000000000"]


def load_module(name: str, path: Path):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# --8<-- [start:child]
def build_once(variant: str, build_dir: str) -> float:
    """Seconds that one cold build takes, in this (fresh) process."""
    import torch  # noqa: F401  (imported before the clock starts)
    from torch.utils.cpp_extension import load, load_inline

    inline = load_module("muladd_inline", HERE / "muladd_inline.py")  # the sources as shown
    with_cuda = variant.endswith("cuda")
    start = time.perf_counter()
    if variant.startswith("inline"):
        load_inline(
            name="cppext_muladd",
            cpp_sources=[inline.CPP_SOURCE],
            cuda_sources=[inline.CUDA_SOURCE] if with_cuda else None,
            build_directory=build_dir,
            is_python_module=False,
            extra_cflags=["-O2"],
            extra_cuda_cflags=["-O2"],
            no_implicit_headers=True,
        )  # (1)!
    else:
        load(
            name="muladd_pkg_stable",
            sources=[str(CSRC / "muladd.cpp")] + ([str(CSRC / "muladd_cuda.cu")] * with_cuda),
            build_directory=build_dir,
            is_python_module=False,
            extra_cflags=STABLE_FLAGS,
            extra_cuda_cflags=[*STABLE_FLAGS, "-DUSE_CUDA"],
        )  # (2)!
    return time.perf_counter() - start


# --8<-- [end:child]


def figure(seconds: list[float], op: str) -> dict:
    return {
        "value": round(statistics.median(seconds), 1),
        "unit": "s",
        "statistic": "median",
        "spread": "min-max",
        "low": round(min(seconds), 1),
        "high": round(max(seconds), 1),
        "repeats": len(seconds),
        "op": op,
        "compile": "included",
        "clock": "wall",
    }


# --8<-- [start:lines]
def preprocessed_lines(source: str, flags: list[str]) -> int:
    """How many lines the compiler reads for `source` once every #include is expanded."""
    from torch.utils.cpp_extension import include_paths

    all_h = Path(include_paths()[1]) / "torch" / "all.h"
    standard = "c++20" if "C++20 or later" in all_h.read_text() else "c++17"  # as this release
    cxx = os.environ.get("CXX", "c++")
    command = [cxx, f"-std={standard}", "-E", "-P", "-x", "c++", "-", *flags]
    command += [f"-I{path}" for path in include_paths()]
    command += [f"-I{sysconfig.get_paths()['include']}", f"-I{CSRC}"]  # Python.h, muladd.h
    out = subprocess.run(command, input=source, capture_output=True, text=True, check=True)
    return len(out.stdout.splitlines())


def header_lines() -> dict[str, int]:
    inline = load_module("muladd_inline", HERE / "muladd_inline.py")
    return {
        "inline": preprocessed_lines(inline.CPP_SOURCE, []),
        "extension_h": preprocessed_lines(
            "#include <torch/extension.h>\n" + inline.CPP_SOURCE, []
        ),  # (1)!
        "stable": preprocessed_lines((CSRC / "muladd.cpp").read_text(), STABLE_FLAGS),
    }


# --8<-- [end:lines]


# --8<-- [start:parent]
def cold_builds(variant: str, at_once: bool) -> list[float]:
    """REPEATS cold builds, each in a fresh process and a fresh build directory."""
    with tempfile.TemporaryDirectory() as root:
        command = [sys.executable, __file__, "--child", variant]
        dirs = [os.path.join(root, f"build{i}") for i in range(REPEATS)]
        for d in dirs:
            os.makedirs(d)
        if at_once:  # (1)!
            procs = [subprocess.Popen([*command, d], stdout=subprocess.PIPE) for d in dirs]
            outputs = [p.communicate()[0] for p in procs]
            assert all(p.returncode == 0 for p in procs), variant
        else:
            outputs = [
                subprocess.run([*command, d], stdout=subprocess.PIPE, check=True).stdout
                for d in dirs
            ]
    return [json.loads(out.decode().strip().splitlines()[-1]) for out in outputs]


# --8<-- [end:parent]

if __name__ == "__main__":
    if "--child" in sys.argv:
        variant, build_dir = sys.argv[-2:]
        print(json.dumps(build_once(variant, build_dir)))
        sys.exit(0)
    import torch

    load_module("muladd_inline", HERE / "muladd_inline.py").check_cxx()  # exits if it would crash
    with_cuda = torch.cuda.is_available()
    kind = "cuda" if with_cuda else "cpu"
    what = "C++ and CUDA, three builds at once" if with_cuda else "C++ only, one after another"
    print(f"build_time on {torch.cuda.get_device_name() if with_cuda else 'CPU'}: {what}")
    # --8<-- [start:run]
    inline = cold_builds(f"inline_{kind}", at_once=with_cuda)
    stable = cold_builds(f"stable_{kind}", at_once=with_cuda)
    # --8<-- [end:run]
    runs = {"load_inline": inline, "stable ABI": stable}
    for name, seconds in runs.items():
        print(f"{name}: " + ", ".join(f"{s:.1f} s" for s in seconds))
    if not with_cuda:  # two cores, one build at a time: the ordering is stable there
        assert statistics.median(stable) < statistics.median(inline), runs
    sources = "C++ and CUDA sources" if with_cuda else "C++ source"
    figures = {
        f"inline_{kind}_build_s": figure(
            inline, f"cold build of muladd_inline.py's {sources} as shown (no_implicit_headers)"
        ),
        f"stable_{kind}_build_s": figure(
            stable, f"cold build of muladd_pkg's stable-ABI {sources} with load"
        ),
    }
    if not with_cuda:
        counts = header_lines()
        assert counts["stable"] < counts["inline"] < counts["extension_h"], counts
        for name, (count, what) in {
            "inline": (counts["inline"], "muladd_inline.py's C++ source as shown"),
            "extension_h": (counts["extension_h"], "the same with torch/extension.h first"),
            "stable": (counts["stable"], "muladd_pkg's csrc/muladd.cpp (stable ABI)"),
        }.items():
            figures[f"{name}_lines"] = {
                "value": count,
                "unit": "lines",
                "statistic": "count",
                "op": f"lines the compiler reads after the preprocessor: {what}",
            }
    print("figures: " + json.dumps(figures))
    print("build_time: all checks passed")
