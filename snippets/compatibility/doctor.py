# /// script
# requires-python = ">=3.10"
# dependencies = ["torch", "triton", "numpy"]
#
# [tool.snippet]
# gpu = { min-cc = "8.0" }
# cpu = { interpreter = false }
# ///
"""Doctor: is this environment inside what Triton supports, and which lock of this site is it?

    python doctor.py

Prints what this Python sees (OS, Python, torch and the triton it pins, triton, CUDA or ROCm, the
GPU, its compute capability, the driver and the newest CUDA it supports, and the GPUs nvidia-smi
lists), a verdict, and on a supported GPU runs one small Triton kernel. It works copied alone; inside the site's repository it also checks that its table of locks
is the one in locks/*.toml. It exits non-zero only when one of its own checks fails, not when the
verdict is bad news.
"""

import contextlib
import ctypes
import os
import platform
import re
import subprocess
from importlib import metadata
from pathlib import Path

import torch

try:
    import triton
    import triton.language as tl
except ImportError:  # a CPU-only torch build does not pull triton in
    triton = None

# --8<-- [start:envelope]
LOCKS = {  # (1)!
    "torch-2.11.0-triton-3.6.0": {
        "torch": "2.11.0",
        "triton": "3.6.0",
        "python": ">=3.10,<3.14",
        "cuda": "13.0",
    },
    "torch-2.15.0-triton-3.9.0": {
        "torch": "2.15.0",
        "triton": "3.9.0",
        "python": ">=3.11,<3.15",
        "cuda": "13.2",
    },
}
MIN_NVIDIA_CC = (8, 0)  # (2)!
MIN_ROCM = (6, 2)
# --8<-- [end:envelope]


def numbers(text: str) -> tuple[int, ...]:
    return tuple(int(p) for p in re.findall(r"\d+", text)[:3])


TRITON_NAMES = r"(?:pytorch-)?triton(?:-rocm|-xpu)?"  # PyPI's, and PyTorch's own index's


def satisfies(version: str, requirement: str) -> bool:
    """'3.6.0' against 'triton==3.6.0' or 'triton~=3.9.0' (any 3.9.x)."""
    op, wanted = re.fullmatch(TRITON_NAMES + r"(==|~=)([\d.]+)", requirement).groups()
    have, want = numbers(version), numbers(wanted)
    if op == "==":
        return have == want
    return have >= want and have[: len(want) - 1] == want[:-1]


def python_in(python: str, spec: str) -> bool:
    """'3.12.3' against '>=3.10,<3.14'."""
    low, high = re.fullmatch(r">=([\d.]+)(?:,<([\d.]+))?", spec).groups()
    have = numbers(python)[:2]
    return have >= numbers(low) and (high is None or have < numbers(high))


def matching_lock(env: dict) -> str | None:
    for lock_id, lock in LOCKS.items():
        same = env["torch"] == lock["torch"] and env["triton"] == lock["triton"]
        if same and python_in(env["python"], lock["python"]):
            return lock_id
    return None


# --8<-- [start:verdict]
def verdict(env: dict) -> str:
    """One line: OK, or what keeps this environment outside the supported envelope."""
    problems: list[tuple[str, str]] = []  # (kind, why)
    if env["system"] != "Linux":
        problems.append(
            ("NOT SUPPORTED", f"{env['system']}: Triton publishes wheels for Linux only")  # (1)!
        )
    if env["triton"] is None:
        problems.append(("NO TRITON", "triton is not installed"))
    elif env["torch_pins"] and not satisfies(env["triton"], env["torch_pins"]):
        problems.append(
            (
                "MISMATCH",  # (2)!
                f"torch {env['torch']} requires {env['torch_pins']}, "
                f"but triton {env['triton']} is installed (fix: pip install '{env['torch_pins']}')",
            )
        )
    smi_gpu, driver_cuda = env.get("smi_gpu"), env.get("driver_cuda")
    if env["gpu"] is None and smi_gpu and env["cuda"] is None and env["hip"] is None:
        problems.append(
            ("CPU-ONLY TORCH", f"nvidia-smi sees {smi_gpu}, torch {env['torch']} is a CPU build")
        )
    elif (
        env["gpu"] is None
        and smi_gpu
        and driver_cuda
        and env["cuda"]
        and (
            numbers(driver_cuda)[0] < numbers(env["cuda"])[0]  # (3)!
        )
    ):
        problems.append(
            (
                "DRIVER TOO OLD",
                f"nvidia-smi sees {smi_gpu}, but its driver {env['driver']} runs CUDA up to "
                f"{driver_cuda} and torch is a CUDA {env['cuda']} build: update the driver, or "
                f"install a torch built for CUDA {numbers(driver_cuda)[0]}.x",
            )
        )
    elif env["gpu"] is None:
        seen = f"nvidia-smi sees {smi_gpu} but torch does not; " if smi_gpu else ""
        problems.append(
            ("NO GPU", f"{seen}no GPU visible; kernels run here only under TRITON_INTERPRET=1")
        )
    elif env["hip"] is None and numbers(env["cc"]) < MIN_NVIDIA_CC:  # (4)!
        torch_too = "PyTorch's torch.compile still emits Triton kernels from 7.0"
        if numbers(env["cc"]) < (7, 0):
            torch_too = "PyTorch's torch.compile refuses it below 7.0"
        problems.append(
            (
                "NOT SUPPORTED",
                f"compute capability {env['cc']} is below 8.0, where Triton's stated support "
                f"starts ({env['gpu']}); {torch_too}",
            )
        )
    elif env["hip"] is not None and numbers(env["hip"])[:2] < MIN_ROCM:
        problems.append(("NOT SUPPORTED", f"ROCm {env['hip']} is older than 6.2"))
    lock = matching_lock(env)  # (5)!
    if lock:
        site = f"this site's lock {lock}"
    elif env["triton"] is None:
        site = "no lock of this site (no triton)"
    else:
        site = f"no lock of this site has torch {env['torch']} + triton {env['triton']}"
    if not problems:
        return f"OK: inside the supported envelope; {site}"
    kinds = list(dict.fromkeys(kind for kind, _ in problems))
    return f"{' + '.join(kinds)}: {'; '.join(why for _, why in problems)}; {site}"


# --8<-- [end:verdict]


def marker_holds(marker: str) -> bool:
    """The few terms torch wheels use in their triton marker (others count as true)."""
    for term in filter(None, (t.strip() for t in marker.split(" and "))):
        m = re.fullmatch(r'(platform_system|platform_machine) == "(\w+)"', term)
        if m:
            actual = platform.system() if m[1] == "platform_system" else platform.machine()
            if actual != m[2]:
                return False
        m = re.fullmatch(r'python_version < "([\d.]+)"', term)
        if m and numbers(platform.python_version())[:2] >= numbers(m[1]):
            return False
    return True


def torch_pins_triton() -> str | None:
    """The triton requirement in the installed torch's own metadata, where its marker holds."""
    for line in metadata.requires("torch") or []:
        spec, _, marker = line.partition(";")
        if re.match(TRITON_NAMES + r"\s*[(=~]", spec.strip()) and marker_holds(marker):
            return re.sub(r"[\s()]", "", spec)
    return None


def torch_cuda_runtime() -> str | None:
    """The CUDA runtime package the installed torch requires: PyPI's CUDA builds name one."""
    for line in metadata.requires("torch") or []:
        spec = line.partition(";")[0].strip()
        if re.match(r"(cuda-toolkit|nvidia-cuda-runtime)\b", spec):
            return re.sub(r"\[.*?\]|\s", "", spec)
    return None


def nvidia_smi() -> tuple[str | None, str | None]:
    """The GPUs nvidia-smi lists and the driver version, whatever torch sees; None without it."""
    try:
        out = subprocess.run(
            ["nvidia-smi", "--query-gpu=name,driver_version", "--format=csv,noheader"],
            capture_output=True,
            text=True,
            timeout=30,
            check=True,
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return None, None
    rows = [[part.strip() for part in line.split(",")] for line in out.splitlines() if line]
    if not rows:
        return None, None
    return ", ".join(sorted({row[0] for row in rows})), rows[0][-1]


def driver_cuda_version() -> str | None:
    """The newest CUDA version the NVIDIA driver runs (cuDriverGetVersion, no GPU context)."""
    try:
        libcuda = ctypes.CDLL("libcuda.so.1")
    except OSError:
        return None
    version = ctypes.c_int()
    if libcuda.cuDriverGetVersion(ctypes.byref(version)) != 0:
        return None
    return f"{version.value // 1000}.{version.value % 1000 // 10}"


def environment() -> dict:
    """What this Python sees, in the shape verdict() takes."""
    env = {
        "system": platform.system(),
        "machine": platform.machine(),
        "python": platform.python_version(),
        "torch": torch.__version__.split("+")[0],
        "torch_build": torch.__version__,
        "torch_pins": torch_pins_triton(),
        "triton": triton.__version__ if triton else None,
        "cuda": torch.version.cuda,
        "hip": torch.version.hip,
        "gpu": None,
        "cc": None,
    }
    env["smi_gpu"], env["driver"] = nvidia_smi()
    env["driver_cuda"] = driver_cuda_version()
    if torch.cuda.is_available():
        props = torch.cuda.get_device_properties(0)
        env["gpu"] = props.name
        if env["hip"] is None:
            env["cc"] = f"{props.major}.{props.minor}"
        else:
            env["cc"] = getattr(props, "gcnArchName", "unknown")
    return env


def describe(env: dict) -> str:
    backend = (
        f"CUDA {env['cuda']}"
        if env["cuda"]
        else f"ROCm/HIP {env['hip']}"
        if env["hip"]
        else "CPU-only build"
    )
    gpu = (
        f"{env['gpu']} (compute capability {env['cc']}, driver {env['driver'] or 'unknown'})"
        if env["gpu"] and env["hip"] is None
        else f"{env['gpu']} ({env['cc']})"
        if env["gpu"]
        else "no GPU"
    )
    return (
        f"{env['system']} {env['machine']}, Python {env['python']}, torch {env['torch_build']} "
        f"({backend}), triton {env['triton'] or 'not installed'}, {gpu}"
    )


# --8<-- [start:fakes]
SUPPORTED = {  # (1)!
    "system": "Linux",
    "machine": "x86_64",
    "python": "3.12.3",
    "torch": "2.11.0",
    "torch_pins": "triton==3.6.0",
    "triton": "3.6.0",
    "cuda": "13.0",
    "hip": None,
    "gpu": "NVIDIA A100",
    "cc": "8.0",
    "smi_gpu": "NVIDIA A100",
    "driver": "580.65.06",
    "driver_cuda": "13.0",
}
FAKES = {
    "supported": (SUPPORTED, "OK"),
    "no GPU": ({**SUPPORTED, "gpu": None, "cc": None, "smi_gpu": None}, "NO GPU"),
    "driver too old": (  # (2)!
        {**SUPPORTED, "gpu": None, "cc": None, "driver": "550.54.15", "driver_cuda": "12.4"},
        "DRIVER TOO OLD",
    ),
    "CPU-only torch": (
        {**SUPPORTED, "gpu": None, "cc": None, "cuda": None, "torch_pins": None, "triton": None},
        "NO TRITON + CPU-ONLY TORCH",
    ),
    "CC 7.5": ({**SUPPORTED, "gpu": "NVIDIA T4", "cc": "7.5"}, "NOT SUPPORTED"),
    "pip install triton": ({**SUPPORTED, "triton": "3.9.0"}, "MISMATCH"),  # (3)!
    "ROCm 6.1": (
        {
            **SUPPORTED,
            "cuda": None,
            "hip": "6.1.40091",
            "gpu": "AMD Instinct MI210",
            "cc": "gfx90a",
        },
        "NOT SUPPORTED",
    ),
    "ROCm torch, its own triton": (  # (4)!
        {
            **SUPPORTED,
            "torch": "2.9.1",
            "torch_pins": "pytorch-triton-rocm==3.5.1",
            "triton": "3.5.1",
            "cuda": None,
            "hip": "6.4.43482",
            "gpu": "AMD Instinct MI300X",
            "cc": "gfx942",
        },
        "OK",
    ),
    "Windows": (
        {**SUPPORTED, "system": "Windows", "machine": "AMD64", "torch_pins": None, "triton": None},
        "NOT SUPPORTED + NO TRITON",
    ),
}
for name, (env, kind) in FAKES.items():
    line = verdict(env)
    print(f"fake {name}: {line}")
    assert line.startswith(f"{kind}: "), (name, line)  # (5)!
# --8<-- [end:fakes]

assert "this site's lock torch-2.11.0-triton-3.6.0" in verdict(SUPPORTED)
assert "no lock of this site" in verdict({**SUPPORTED, "torch": "2.12.1", "triton": "3.7.1"})
assert "no lock of this site" in verdict({**SUPPORTED, "python": "3.14.0"})  # outside its range
assert satisfies("3.9.2", "triton~=3.9.0") and not satisfies("3.10.0", "triton~=3.9.0")
assert satisfies("3.5.1", "pytorch-triton-rocm==3.5.1") and not satisfies("3.6.0", "triton==3.5.1")
assert "CUDA up to 12.4" in verdict(FAKES["driver too old"][0])
assert "nvidia-smi sees" in verdict({**SUPPORTED, "gpu": None, "cc": None})  # hidden from torch


def check_embedded_locks() -> str:
    """Inside the site's repository, LOCKS must be what locks/*.toml say."""
    here = Path(__file__).resolve()
    root = here.parents[2] if len(here.parents) > 2 else here.parent
    if not (root / "locks").is_dir() or not (root / "snippets" / "compatibility").is_dir():
        return "embedded locks: not compared (no locks/ folder: this file was copied alone)"
    try:
        import tomllib
    except ModuleNotFoundError:
        return "embedded locks: not compared (this Python has no tomllib)"
    found = {}
    for path in sorted((root / "locks").glob("*.toml")):
        data = tomllib.loads(path.read_text(encoding="utf-8"))
        found[data["id"]] = {
            "torch": data["packages"]["torch"],
            "triton": data["packages"]["triton"],
            "python": data["python"],
            "cuda": data["cuda"],
        }
    assert found == LOCKS, f"LOCKS in this file differ from locks/*.toml; update it to {found}"
    return f"embedded locks: the same as locks/*.toml ({len(found)} locks)"


def smoke_test(device: str) -> None:
    """One small kernel, checked exactly, written into a guarded buffer."""

    @triton.jit
    def add_one(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
        offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        mask = offsets < n
        tl.store(out_ptr + offsets, tl.load(x_ptr + offsets, mask=mask) + 1, mask=mask)

    n, pad = 1000, 256
    x = torch.arange(n, dtype=torch.float32).to(device)
    buffer = torch.full((pad + n + pad,), -7.0, device=device)
    out = buffer[pad : pad + n]
    with torch.cuda.device(x.device) if x.is_cuda else contextlib.nullcontext():
        add_one[(triton.cdiv(n, 256),)](x, out, n, BLOCK=256)
    assert torch.equal(out, x + 1), "the kernel gave wrong results"
    assert bool((buffer[:pad] == -7).all() and (buffer[pad + n :] == -7).all()), "stray write"


# --8<-- [start:machine]
env = environment()
for key in ("system", "python", "torch_build", "torch_pins", "triton", "cuda", "hip", "gpu", "cc"):
    print(f"  {key + ':':<13}{env[key]}")
for key in ("smi_gpu", "driver", "driver_cuda"):  # what the NVIDIA driver says, apart from torch
    print(f"  {key + ':':<13}{env[key]}")
build = f"CUDA {env['cuda']}, runtime {torch_cuda_runtime()}" if env["cuda"] else "no CUDA"
print(f"torch's CUDA build: {build}")  # (1)!
where = "GPU" if env["gpu"] else "no GPU"
print(f"this machine ({where}): {describe(env)}")  # (2)!
result = verdict(env)
print(f"verdict ({where}): {result}")
if env["gpu"] and result.startswith("OK"):
    smoke_test("cuda")
    print("smoke test (GPU): one Triton kernel compiled, ran and gave exact results")
elif triton and os.environ.get("TRITON_INTERPRET") == "1":
    smoke_test("cpu")  # (3)!
    print("smoke test (interpreter): one Triton kernel ran on the CPU and gave exact results")
else:
    print("smoke test: skipped (no supported GPU; TRITON_INTERPRET=1 runs it on the CPU)")
print(check_embedded_locks())
# --8<-- [end:machine]
print("doctor: all checks passed")
