"""Add a lock in one command: from the package index's metadata to CPU records and a claim diff.

    python scripts/add_lock.py --torch 2.16.0                 # the lock, its env, its CPU records
    python scripts/add_lock.py --torch 2.14.1 --out-dir /tmp/try-2.14.1   # a scratch folder
    python scripts/add_lock.py --torch 9.9.0 --find-links DIR --bare --no-install   # a local index

Steps, each printed as it goes:

1. Read the torch wheel's METADATA (CPython 3.11, Linux x86_64) from the index: its
   ``Requires-Python``, its ``Requires-Dist`` pin of triton and its CUDA build (the version of
   ``cuda-toolkit`` or ``nvidia-cuda-runtime-cu*`` it requires). From PyPI through the JSON Simple
   API and PEP 658 (scripts/torch_triton_pins.py), or from the wheels in a ``--find-links`` folder.
2. Write ``requirements/lock-<id>.in``: torch, the triton its wheel pins, and the other packages
   the snippets name at the newest lock's versions; compile it with ``uv pip compile`` (the same
   command as the other locks' headers) to ``.txt``; the exact triton comes from that resolution
   (``~=3.8.0`` becomes the newest 3.8.x), and the ``.in`` is rewritten with it.
3. Write ``locks/<id>.toml`` (status ``supported``, reviewed today, next review in three months,
   no GPU device yet, with the reason in both languages), with ``python`` the range torch's and
   triton's ``Requires-Python`` both allow. It is validated as every lock is (``parse_lock``).
4. Create ``.venv-locks/<id>/`` from the ``.txt`` with uv and run the CPU records in it
   (``scripts/verify_snippets.py --cpu --lock <id>``), as ``make records-cpu`` does.
5. Print every claim snippet (``snippets/*/claim_*.py``) whose status or printed lines differ from
   the current lock's CPU record: the claims to read, fix or extend before the lock is published.

``--out-dir DIR`` writes everything (locks/, requirements/, .venv-locks/) under DIR instead of the
checkout, with copies of the checkout's locks and records, so a lock can be tried without touching
the site. Exits 1 when a claim changed or a snippet failed, 2 when the index has no such release.
Standard library only (run it with any Python 3.11+); uv does the resolving and installing.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import re
import shutil
import subprocess
import sys
import zipfile
from email.parser import Parser
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import snippet_records as records  # noqa: E402
import torch_triton_pins as pins  # noqa: E402

REPO_ROOT = records.REPO_ROOT
COMPILE_PYTHON = "3.11"  # as the other locks' requirements headers
VENV_PYTHON = "3.11"
DEFAULT_INDEX = "https://pypi.org/simple"
GPU_REASON = (
    "the GPU machine this site is verified on has only torch 2.11.0 and triton 3.6.0, and cannot "
    "install other releases",
    "本站用来验证的 GPU 机器上只有 torch 2.11.0 和 triton 3.6.0，装不了别的版本",
)


def uv() -> str:
    local = REPO_ROOT / ".venv-uv" / "bin" / "uv"
    return str(local) if local.exists() else (shutil.which("uv") or "uv")


def parse_metadata(text: str) -> dict:
    message = Parser().parsestr(text, headersonly=True)
    return {
        "requires_dist": message.get_all("Requires-Dist") or [],
        "requires_python": message.get("Requires-Python"),
    }


def wheel_name(name: str) -> str:
    """A project's name as wheel file names spell it (liger-kernel -> liger_kernel)."""
    return re.sub(r"[-_.]+", "_", name)


def installs_here(filename: str) -> bool:
    """A wheel for Linux x86_64 or any platform."""
    return bool(re.search(r"-(any|\S*linux\S*_x86_64)\.whl$", filename))


def local_wheel_metadata(folder: Path, name: str, version: str) -> dict | None:
    """METADATA of ``name==version`` from a wheel in a --find-links folder."""
    for wheel in sorted(folder.glob(f"{wheel_name(name)}-{version}-*.whl")):
        tags = wheel.stem.split("-")[-3:]
        if not re.match(r"(cp311|py3)", tags[0]) or not installs_here(wheel.name):
            continue
        with zipfile.ZipFile(wheel) as whl:
            member = next(n for n in whl.namelist() if n.endswith(".dist-info/METADATA"))
            return {**parse_metadata(whl.read(member).decode("utf-8")), "wheel": wheel.name}
    return None


def index_wheel_metadata(index_url: str, name: str, version: str) -> dict | None:
    """METADATA of ``name==version``'s CPython 3.11 Linux x86_64 wheel (or its pure-Python
    wheel) from a PEP 691 index."""
    pins.INDEX = index_url.rstrip("/") + "/{name}/"
    files = pins.project_files(name)["files"]
    wheel = pins.linux_wheel(files, wheel_name(name), version, "x86_64")
    if wheel is None:
        wheel = next(
            (
                f
                for f in files
                if f["filename"].startswith(f"{wheel_name(name)}-{version}-")
                and re.search(r"-(py3|cp311)-", f["filename"])
                and installs_here(f["filename"])
                and not f.get("yanked")
            ),
            None,
        )
    if wheel is None:
        return None
    return {**parse_metadata(pins.metadata_text(wheel)), "wheel": wheel["filename"]}


def wheel_files(args: argparse.Namespace, name: str, version: str) -> list[str]:
    """The file names of every wheel of ``name==version`` on the index (or in the folder)."""
    prefix = f"{wheel_name(name)}-{version}-"
    if args.find_links:
        return sorted(p.name for p in Path(args.find_links).glob(f"{prefix}*.whl"))
    pins.INDEX = args.index_url.rstrip("/") + "/{name}/"
    return [
        f["filename"]
        for f in pins.project_files(name)["files"]
        if f["filename"].startswith(prefix) and f["filename"].endswith(".whl")
        and not f.get("yanked")
    ]  # fmt: skip


def wheel_python_range(filenames: list[str]) -> tuple[int | None, int | None]:
    """(oldest, newest + 1) CPython 3 minor with a Linux x86_64 wheel, from the wheels' tags
    (cp311 -> 11; an abi3 wheel has no newest); (None, None) for a pure-Python package, whose
    Requires-Python alone says."""
    minors: set[int] = set()
    open_ended = False
    for filename in filenames:
        python, abi, _ = filename[:-4].split("-")[-3:]
        if not installs_here(filename):
            continue
        if python.startswith("py3"):
            return None, None
        for tag in python.split("."):
            if m := re.fullmatch(r"cp3(\d+)", tag):
                minors.add(int(m[1]))
                open_ended |= abi == "abi3"
    if not minors:
        return None, None
    return min(minors), None if open_ended else max(minors) + 1


def read_release(args: argparse.Namespace, name: str, version: str) -> dict | None:
    if args.find_links:
        return local_wheel_metadata(Path(args.find_links), name, version)
    return index_wheel_metadata(args.index_url, name, version)


def triton_pin(requires_dist: list[str]) -> str | None:
    """``triton==3.6.0`` or ``triton~=3.8.0``: the torch wheel's triton requirement for Linux
    x86_64 (older wheels write ``triton (==3.1.0)``)."""
    found = pins.triton_requirement(requires_dist)
    return found["requirement"] if found else None


def cuda_version(requires_dist: list[str]) -> str:
    """The CUDA major.minor a torch wheel was built for, from the CUDA runtime it requires."""
    for line in requires_dist:
        m = re.match(
            r"\s*(cuda-toolkit|nvidia-cuda-runtime(?:-cu\d+)?)\b[^;]*?==\s*(\d+)\.(\d+)", line
        )
        if m:
            return f"{m[2]}.{m[3]}"
    return "none"


def python_range(specs: list[str | None], wheels: list[tuple[int | None, int | None]]) -> str:
    """The tightest ``>=3.a,<3.b`` that every ``Requires-Python`` and every package's wheels
    allow (parse_lock's form)."""
    low, high = 10, None
    for spec in specs:
        for part in (spec or "").split(","):
            m = re.fullmatch(r"\s*(>=|<)\s*3\.(\d+)(?:\.\d+)*\s*", part)
            if not m:
                continue
            if m[1] == ">=":
                low = max(low, int(m[2]))
            else:
                high = int(m[2]) if high is None else min(high, int(m[2]))
    for oldest, newest in wheels:
        low = max(low, oldest or low)
        if newest is not None:
            high = newest if high is None else min(high, newest)
    return f">=3.{low}" + (f",<3.{high}" if high else "")


def index_options(args: argparse.Namespace) -> list[str]:
    if args.find_links:
        return ["--no-index", "--find-links", str(args.find_links)]
    return [] if args.index_url == DEFAULT_INDEX else ["--index-url", args.index_url]


def compile_requirements(args, root: Path, lock_id: str, lines: list[str], header: str) -> str:
    """Write requirements/lock-<id>.in and compile it to .txt; return the .txt's text."""
    folder = root / "requirements"
    folder.mkdir(parents=True, exist_ok=True)
    source, out = folder / f"lock-{lock_id}.in", folder / f"lock-{lock_id}.txt"
    source.write_text(header + "\n".join(lines) + "\n", encoding="utf-8")
    rel_in, rel_out = (p.relative_to(root).as_posix() for p in (source, out))
    command = [uv(), "pip", "compile", "--quiet", "--universal", "--python-version"]
    command += [COMPILE_PYTHON, rel_in, "-o", rel_out, *index_options(args)]
    subprocess.run(command, cwd=root, check=True)
    return out.read_text(encoding="utf-8")


def resolved_version(txt: str, name: str) -> str:
    m = re.search(rf"^{re.escape(name)}==([^\s;]+)", txt, re.M)
    if not m:
        raise SystemExit(f"uv pip compile did not resolve {name}")
    return m[1]


def _tags(oldest: int, newest: int | None) -> str:
    return f"cp3{oldest}" + (f"-cp3{newest - 1}" if newest else "+")


def lock_toml(lock_id: str, meta: dict, packages: dict[str, str], today: dt.date) -> str:
    torch, triton = packages["torch"], packages["triton"]
    major_minor = ".".join(triton.split(".")[:2])
    lines = [
        "# One locked torch + triton combination (validated by scripts/snippet_records.py: "
        "parse_lock).",
        f"# Written by scripts/add_lock.py from the index's metadata (read {today}): torch {torch} "
        f"requires {meta['triton_pin']}.",
        f'id = "{lock_id}"',
        f'title = "PyTorch {torch} · Triton {triton}"',
        "# supported: built, tested on the CPU in CI and published; not `latest` until a GPU "
        "verifies it.",
        'status = "supported"',
        f"reviewed = {today.isoformat()}",
        f"next-review = {(today + dt.timedelta(days=91)).isoformat()}",
        f'mike-version = "triton-{major_minor}"',
        "# Python versions with wheels for every pin below (Requires-Python; CPython tags of",
        f"# the Linux x86_64 wheels): {meta['why_python']}.",
        f'python = "{meta["python"]}"',
        f'cuda = "{meta["cuda"]}"',
        "",
        "[packages]",
        *(f'{name} = "{version}"' for name, version in packages.items()),
        "",
        "[gpu]",
        "devices = []",
        f'reason = "{GPU_REASON[0]}"',
        f'reason-zh = "{GPU_REASON[1]}"',
        "",
        "[pending]",
        "",
    ]
    return "\n".join(lines)


def claims_changed(old: dict | None, new: dict) -> list[tuple[str, list[str]]]:
    """Each claim snippet whose status or printed lines differ between two CPU records, with the
    lines of a diff (``- old``, ``+ new``); a claim new to the lock counts as changed."""
    before = {r["path"]: r for r in (old or {}).get("snippets", [])}
    changed = []
    for row in new["snippets"]:
        if not Path(row["path"]).name.startswith("claim_"):
            continue
        was = before.get(row["path"])
        if was is None:
            changed.append((row["path"], [f"+ {row['status']} (not in the current lock's record)"]))
            continue
        if was["status"] == row["status"] and was["stdout"] == row["stdout"]:
            continue
        diff = []
        if was["status"] != row["status"]:
            diff.append(f"- {was['status']}: {(was.get('reason') or '').strip()[-200:]}")
            diff.append(f"+ {row['status']}: {(row.get('reason') or '').strip()[-200:]}")
        old_lines, new_lines = was["stdout"], row["stdout"]
        diff += [f"- {line}" for line in old_lines if line not in new_lines]
        diff += [f"+ {line}" for line in new_lines if line not in old_lines]
        changed.append((row["path"], diff))
    return changed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--torch", required=True, help="the torch release, e.g. 2.16.0")
    parser.add_argument("--index-url", default=DEFAULT_INDEX, help="a PEP 691 index")
    parser.add_argument("--find-links", type=Path, help="a folder of wheels instead of an index")
    parser.add_argument("--out-dir", type=Path, help="write under this folder, not the checkout")
    parser.add_argument("--bare", action="store_true", help="lock torch and triton only")
    parser.add_argument("--no-install", action="store_true", help="stop after writing the lock")
    parser.add_argument("--only", action="append", default=[], help="runner --only (repeatable)")
    parser.add_argument("--today", type=dt.date.fromisoformat, default=dt.date.today())
    args = parser.parse_args(argv)

    root = (args.out_dir or REPO_ROOT).resolve()
    locks_dir = root / "locks"
    if args.out_dir:  # a scratch folder: the checkout's locks and records beside the new one
        locks_dir.mkdir(parents=True, exist_ok=True)
        for path in records.LOCKS_DIR.glob("*.*"):
            if path.suffix in (".toml", ".json"):
                shutil.copy2(path, locks_dir / path.name)
    current = records.load_lock(records.current_lock_id())
    newest = records.all_locks()[0]

    print(f"1. torch {args.torch}: reading its wheel's metadata from "
          f"{args.find_links or args.index_url}")  # fmt: skip
    torch_meta = read_release(args, "torch", args.torch)
    if torch_meta is None:
        print(f"no CPython 3.11 Linux x86_64 wheel of torch {args.torch} there", file=sys.stderr)
        return 2
    pin = triton_pin(torch_meta["requires_dist"])
    if pin is None:
        print(f"torch {args.torch} ({torch_meta['wheel']}) requires no triton: a CPU-only build",
              file=sys.stderr)  # fmt: skip
        return 2
    cuda = cuda_version(torch_meta["requires_dist"])
    print(f"   {torch_meta['wheel']}: Requires-Python {torch_meta['requires_python']}, {pin}, "
          f"CUDA {cuda}")  # fmt: skip

    others = {
        name: version
        for name, version in newest.packages.items()
        if name not in ("torch", "triton") and not args.bare
    }
    wanted = [f"torch=={args.torch}", pin, *(f"{n}=={v}" for n, v in others.items())]
    header = (
        f"# The environment CI runs snippets in for a lock of torch {args.torch} "
        "(its [packages]);\n"
        f"# written by scripts/add_lock.py, the other packages at lock {newest.id}'s versions.\n"
    )
    provisional = f"torch-{args.torch}-triton-new"
    print(f"2. resolving {' '.join(wanted)} with uv pip compile")
    txt = compile_requirements(args, root, provisional, wanted, header)
    triton = resolved_version(txt, "triton")
    lock_id = f"torch-{args.torch}-triton-{triton}"
    for suffix in (".in", ".txt"):
        (root / "requirements" / f"lock-{provisional}{suffix}").unlink()
    wanted[1] = f"triton=={triton}"
    txt = compile_requirements(args, root, lock_id, wanted, header)
    print(f"   wrote requirements/lock-{lock_id}.in and .txt (triton {triton})")

    packages = {"torch": args.torch, "triton": triton, **others}
    requires = {"torch": torch_meta["requires_python"]}
    wheels = {}
    for name, version in packages.items():  # every pin's Requires-Python and wheel tags
        if name != "torch":
            requires[name] = (read_release(args, name, version) or {}).get("requires_python")
        wheels[name] = wheel_python_range(wheel_files(args, name, version))
    meta = {
        "triton_pin": pin,
        "python": python_range(list(requires.values()), list(wheels.values())),
        "why_python": ", ".join(
            f"{name} {packages[name]} {requires[name] or ''}".rstrip()
            + (f" (wheels {_tags(*wheels[name])})" if wheels[name][0] else "")
            for name in packages
        ),
        "cuda": cuda,
    }
    text = lock_toml(lock_id, meta, packages, args.today)
    records.parse_lock(records.tomllib.loads(text), f"{lock_id}.toml")  # fail before writing
    (locks_dir / f"{lock_id}.toml").write_text(text, encoding="utf-8")
    print(f"3. wrote locks/{lock_id}.toml: python {meta['python']}, CUDA {cuda}")
    if args.no_install:
        print("   stopping before the install (--no-install)")
        return 0

    venv = root / ".venv-locks" / lock_id
    print(f"4. installing {venv} from the .txt and running the CPU records")
    env = {**os.environ, "SNIPPET_LOCKS_DIR": str(locks_dir)}
    if not (venv / "bin" / "python").exists():
        subprocess.run([uv(), "venv", "--quiet", "--python", VENV_PYTHON, str(venv)], check=True)
    sync = [uv(), "pip", "sync", "--quiet", "--compile-bytecode"]
    sync += ["--python", str(venv / "bin" / "python"), *index_options(args)]
    subprocess.run([*sync, str(root / "requirements" / f"lock-{lock_id}.txt")], check=True)
    runner = [str(venv / "bin" / "python"), str(REPO_ROOT / "scripts" / "verify_snippets.py")]
    runner += ["--cpu", "--lock", lock_id, "--out-dir", str(locks_dir)]
    runner += [f"--only={o}" for o in args.only]
    ran = subprocess.run(runner, env=env)

    new = json.loads((locks_dir / f"{lock_id}.cpu.json").read_text(encoding="utf-8"))
    old = records.load_record(current.id, records.CPU)
    changed = claims_changed(old, new)
    print(f"\n5. claims whose output changed against the current lock {current.id} "
          f"({len(changed)}):")  # fmt: skip
    for path, diff in changed:
        print(f"   {path}")
        for line in diff:
            print(f"      {line[:220]}")
    if not changed:
        print("   none")
    return 1 if changed or ran.returncode != 0 else 0


if __name__ == "__main__":
    sys.exit(main())
