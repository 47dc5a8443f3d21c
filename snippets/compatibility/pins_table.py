# /// script
# requires-python = ">=3.10"
# dependencies = ["torch", "triton", "numpy"]
#
# [tool.snippet]
# gpu = { skip = "reads a data file and the installed packages' metadata; nothing runs on a GPU", skip-zh = "读的是数据文件和已安装包的元数据，不在 GPU 上运行任何东西" }
# cpu = { interpreter = false }
# files = ["pins.json"]
# ///
"""Which triton each torch release pins, and whether the installed pair agrees.

Reads pins.json (written by scripts/torch_triton_pins.py from the wheels' METADATA on PyPI),
prints the table, then checks the installed torch against it: the Requires-Dist line for triton
in the installed torch's own metadata must be the one pins.json holds for that release, and the
installed triton must satisfy it. Exits non-zero when they disagree.

    python pins_table.py        # with pins.json in the same folder
"""

import json
import platform
import re
from importlib import metadata
from pathlib import Path

import torch
import triton

PINS = Path(__file__).with_name("pins.json")


# --8<-- [start:table]
def where(marker: str) -> str:
    """A wheel's environment marker in words: 'platform_system == "Linux"' -> 'Linux'."""
    words = {
        r'platform_system == "(\w+)"': r"\1",
        r'platform_machine == "(\w+)"': r"\1 only",
        r'python_version < "([\d.]+)"': r"Python < \1",
    }
    parts = marker.split(" and ")
    for pattern, replacement in words.items():
        parts = [re.sub(pattern, replacement, part) for part in parts]
    return ", ".join(parts)


def python_tags(tags: list[str]) -> str:
    """Wheel tags as interpreters: 'cp313-cp313t' -> 'cp313t', 'cp312-abi3' -> 'cp312+ (abi3)'."""
    return " ".join(
        f"{py}+ (abi3)" if abi == "abi3" else abi for py, abi in (t.split("-") for t in tags)
    )


pins = json.loads(PINS.read_text(encoding="utf-8"))
print(
    f"read from PyPI on {pins['read']}; newest there: torch {pins['newest']['torch']}, "
    f"triton {pins['newest']['triton']}"
)
for row in pins["torch"]:
    linux = row["x86_64"]["triton"]  # (1)!
    print(
        f"torch {row['version']:<7} requires {linux['requirement']:<14} on {where(linux['marker'])}"
    )
for row in pins["triton"]:
    machines = [m for m in ("x86_64", "aarch64") if any(p.endswith(m) for p in row["platforms"])]
    print(
        f"triton {row['version']:<6} Requires-Python {row['requires_python'] or '(none)':<13} "
        f"Linux {'+'.join(machines)}, wheels {python_tags(row['wheel_tags'])}"
    )
# --8<-- [end:table]


# --8<-- [start:facts]
def spans(versions: list[str]) -> str:
    """Runs of consecutive torch releases: '2.5.0 to 2.10.0', or one release alone."""
    order = [r["version"] for r in pins["torch"]]
    runs: list[list[str]] = []
    for v in versions:
        if runs and order.index(v) == order.index(runs[-1][-1]) + 1:
            runs[-1].append(v)
        else:
            runs.append([v])
    return ", ".join(run[0] if len(run) == 1 else f"{run[0]} to {run[-1]}" for run in runs)


def group_by(key) -> dict:
    groups: dict = {}
    for r in pins["torch"]:
        groups.setdefault(key(r), []).append(r["version"])
    return groups


linux = lambda r: r["x86_64"]["triton"]
machines = group_by(lambda r: 'platform_machine == "x86_64"' in linux(r)["marker"])
print(
    f"marker: x86_64 only for torch {spans(machines.get(True, []))}; "
    f"every Linux machine for torch {spans(machines.get(False, []))}"
)
caps = group_by(
    lambda r: (re.findall(r'python_version < "([\d.]+)"', linux(r)["marker"]) or [""])[0]
)
print(
    "Python cap: "
    + "; ".join(
        f"no triton from Python {cap} for torch {spans(v)}" for cap, v in caps.items() if cap
    )
    + f"; none for torch {spans(caps.get('', []))}"
)
kinds = group_by(lambda r: linux(r)["requirement"][len("triton") :][:2])
print("pin: " + "; ".join(f"{op} for torch {spans(v)}" for op, v in kinds.items()))
shared = group_by(lambda r: linux(r)["requirement"])
print(
    "one triton, several torch releases: "
    + "; ".join(f"{req} for torch {', '.join(v)}" for req, v in shared.items() if len(v) > 1)
)
# --8<-- [end:facts]


# --8<-- [start:check]
def satisfies(version: str, requirement: str) -> bool:
    """'3.6.0' against 'triton==3.6.0' or 'triton~=3.9.0' (3.9.x, x >= 0)."""
    op, wanted = re.fullmatch(r"triton(==|~=)([\d.]+)", requirement).groups()
    have = tuple(int(p) for p in version.split(".")[:3])
    want = tuple(int(p) for p in wanted.split("."))
    if op == "==":
        return have == want
    return have >= want and have[: len(want) - 1] == want[:-1]  # (1)!


torch_version = torch.__version__.split("+")[0]  # (2)!
row = next((r for r in pins["torch"] if r["version"] == torch_version), None)
assert row, f"torch {torch_version} is not in pins.json: run scripts/torch_triton_pins.py"
machine = platform.machine() if platform.machine() in ("x86_64", "aarch64") else "x86_64"
expected = row[machine]["triton"]
installed = [r for r in metadata.requires("torch") or [] if re.match(r"triton\b", r)]
assert installed == [expected["requires_dist"]], (installed, expected)  # (3)!
assert satisfies(triton.__version__, expected["requirement"]), (triton.__version__, expected)
print(
    f"this lock: torch {torch_version} pins {expected['requirement']}, as pins.json says; "
    f"triton {triton.__version__} satisfies it"
)
# --8<-- [end:check]

assert satisfies("3.9.4", "triton~=3.9.0") and not satisfies("3.10.0", "triton~=3.9.0")
assert satisfies("3.6.0", "triton==3.6.0") and not satisfies("3.6.1", "triton==3.6.0")
versions = [tuple(map(int, r["version"].split("."))) for r in pins["torch"]]
assert versions == sorted(versions) and versions[0] == (2, 5, 0), versions
assert all(r["x86_64"]["triton"] for r in pins["torch"]), "a torch release without a triton pin"
for r in pins["torch"]:  # the aarch64 wheel names the same requirement under the same marker
    arm, x86 = r["aarch64"]["triton"], r["x86_64"]["triton"]
    assert (arm["requirement"], arm["marker"]) == (x86["requirement"], x86["marker"]), r["version"]
for r in pins["triton"]:  # the Python classifiers name the same range as Requires-Python
    bounds = re.fullmatch(r">=3\.(\d+),<3\.(\d+)", r["requires_python"] or "")
    if bounds:
        low, high = int(bounds[1]), int(bounds[2])
        assert r["python_classifiers"] == [f"3.{m}" for m in range(low, high)], r
for r in pins["triton"]:  # every triton wheel on the index is a Linux wheel
    assert r["platforms"] and all(p.startswith("manylinux") for p in r["platforms"]), r
installed_triton = next((r for r in pins["triton"] if r["version"] == triton.__version__), None)
if installed_triton:
    installed_range = metadata.metadata("triton")["Requires-Python"]
    assert installed_range == installed_triton["requires_python"], installed_range
print("pins_table: all checks passed")
