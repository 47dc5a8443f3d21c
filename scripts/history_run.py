"""History run: every claim snippet that runs on a CPU, under each torch release from 2.5 on.

    python scripts/history_run.py                    # every release not yet recorded, resumable
    python scripts/history_run.py --release 2.6.0    # one release (repeatable)
    python scripts/history_run.py --list             # the releases and the triton each pins
    python scripts/history_run.py --force            # re-run releases already recorded

The releases are the newest patch of every torch minor from 2.5 to the newest on the index, with
the triton the Linux x86_64 wheel pins, as the compatibility page's pins table lists them
(``snippets/compatibility/pins.json``, read from PyPI by ``scripts/torch_triton_pins.py``). For
each, it makes a virtual environment with uv (torch, its triton, numpy and ninja, from PyPI),
runs every claim snippet whose ``[tool.snippet]`` table lets it run on a CPU, the way the CPU
runner does (``verify_snippets.run_snippet``: its own process, TRITON_INTERPRET where the file
says so), writes ``locks/history/torch-<version>.json`` and deletes the environment and its
download cache (each release is a few GB). An environment this checkout already has with exactly
that torch and triton (a lock's) is used instead of a new one.

Resumable: a release whose record already ran every current claim file (same sha256) is skipped;
one with claims edited or added since re-runs only those, keeping the other rows. A release
whose wheels cannot install here (no wheel for this Python) is recorded as ``not-installable``,
with uv's reason. Not part of CI (it downloads a dozen releases); CI checks the committed records
against the pages and the snippets' sha256 (``tests/test_history.py``). Standard library only;
the inner run (``--inner``) is this file run by the release's own Python.
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import platform
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import history_records as history  # noqa: E402
import snippet_records as records  # noqa: E402

REPO_ROOT = records.REPO_ROOT
WORK_DIR = Path(os.environ.get("HISTORY_WORK_DIR", "/tmp/history-venvs"))
PYTHON = "3.11"  # every release from torch 2.5 to 2.15 has CPython 3.11 wheels, and triton too
# besides torch and triton, what the claim snippets import (their PEP 723 dependencies)
# and setuptools, which triton up to 3.1 imports at start-up: a virtual environment made by
# Python 3.11's venv (what a reader's pip install lands in) has it, one made by uv does not
EXTRA_PINS = {"numpy": "2.2.6", "ninja": "1.13.2", "setuptools": "81.0.0"}


def uv() -> str:
    local = REPO_ROOT / ".venv-uv" / "bin" / "uv"
    return str(local) if local.exists() else (shutil.which("uv") or "uv")


def existing_python(torch: str, triton_requirement: str) -> Path | None:
    """A Python of this checkout (.venv, .venv-locks/*) with exactly this torch and triton."""
    for lock in records.all_locks():
        if lock.torch != torch or not triton_requirement.endswith(lock.triton):
            continue
        venv = (
            REPO_ROOT / ".venv" if lock.status == "current" else REPO_ROOT / ".venv-locks" / lock.id
        )
        if (venv / "bin" / "python").exists():
            return venv / "bin" / "python"
    return None


def install(release: dict, log) -> tuple[Path | None, str, str]:
    """(python, the install command, why it failed or "") for one release, in WORK_DIR."""
    venv = WORK_DIR / f"torch-{release['torch']}"
    cache = WORK_DIR / f"uv-cache-{release['torch']}"
    shutil.rmtree(venv, ignore_errors=True)
    env = {**os.environ, "UV_CACHE_DIR": str(cache)}
    subprocess.run([uv(), "venv", "--quiet", "--python", PYTHON, str(venv)], check=True, env=env)
    wanted = [f"torch=={release['torch']}", release["triton_requirement"]] + [
        f"{name}=={version}" for name, version in EXTRA_PINS.items()
    ]
    command = [uv(), "pip", "install", "--python", str(venv / "bin" / "python"), *wanted]
    shown = "uv pip install " + " ".join(wanted)
    log(f"  {shown}")
    proc = subprocess.run(command, capture_output=True, text=True, env=env)
    if proc.returncode != 0:
        why = " ".join((proc.stderr or proc.stdout).strip().splitlines()[-6:])
        return None, shown, why
    return venv / "bin" / "python", shown, ""


def clean(release: dict) -> None:
    for path in (WORK_DIR / f"torch-{release['torch']}", WORK_DIR / f"uv-cache-{release['torch']}"):
        shutil.rmtree(path, ignore_errors=True)


def run_release(release: dict, force: bool, log) -> str:
    """Run (or resume) one release; return what happened, in a few words."""
    out = history.record_path(release["torch"])
    claims = history.cpu_claims()
    old = history.load_history_record(out) if out.exists() else None
    todo = claims if force or old is None else history.claims_to_run(old, claims)
    if old is not None and old.get("status") == "not-installable" and not force:
        return "not installable (recorded)"
    if not todo:
        return "up to date"
    python = existing_python(release["torch"], release["triton_requirement"])
    install_command = "an environment of this checkout (a lock's)"
    made = python is None
    try:
        if made:
            python, install_command, why = install(release, log)
            if python is None:
                history.write_history_record(
                    out,
                    {
                        **history.record_head(release),
                        "status": "not-installable",
                        "reason": why,
                        "install": install_command,
                        "date": dt.datetime.now(dt.timezone.utc).date().isoformat(),
                        "versions": {"python": platform.python_version()},
                        "snippets": [],
                    },
                )
                return f"not installable: {why[:200]}"
        command = [str(python), str(Path(__file__).resolve()), "--inner", release["torch"]]
        command += ["--install", install_command]
        for path in todo:
            command += ["--claim", path]
        log(f"  running {len(todo)} claims with {python}")
        proc = subprocess.run(command, text=True, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        log("  " + "\n  ".join(proc.stdout.strip().splitlines()[-4:]))
        if proc.returncode != 0:
            return f"inner run failed (exit {proc.returncode})"
        return f"ran {len(todo)} claims"
    finally:
        if made:
            clean(release)


# ------------------------------------------------------------------- the inner run (its Python)


def inner(torch_version: str, claims: list[str], install_command: str, jobs: int) -> int:
    import verify_snippets as runner

    runner.use_bytecode_cache()
    import torch  # triton itself is not imported here: a claim that cannot import it says so

    versions = {
        "torch": torch.__version__,
        **{name: runner._version(name) for name in ("triton", "numpy", "setuptools")},
        "python": platform.python_version(),
    }
    device = {
        "name": "CPU",
        "machine": platform.machine(),
        "system": f"{platform.system()} {platform.release()}",
        "cores": os.cpu_count(),
    }
    if versions["torch"].split("+")[0] != torch_version:
        print(f"torch {versions['torch']} is not {torch_version}", file=sys.stderr)
        return 2
    compiler = runner.use_working_cxx()
    release = next(r for r in history.releases() if r["torch"] == torch_version)
    out = history.record_path(torch_version)
    old = history.load_history_record(out) if out.exists() else None
    kept = [r for r in (old or {}).get("snippets", []) if r["path"] not in claims]
    started = dt.datetime.now(dt.timezone.utc)
    rows: list[dict] = []
    queue = [records.read_snippet_needs(p) for p in claims]
    guard = threading.Lock()

    def write() -> None:
        current = set(history.cpu_claims())
        history.write_history_record(
            out,
            {
                **history.record_head(release),
                "status": "ran",
                "date": started.date().isoformat(),
                "started": started.isoformat(timespec="seconds"),
                "finished": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
                "install": install_command,
                "device": device,
                "versions": versions,
                "compiler": compiler,
                "environment": records.recorded_environment(os.environ),
                "snippets": sorted(
                    [r for r in kept if r["path"] in current] + rows, key=lambda r: r["path"]
                ),
            },
        )

    def work() -> None:
        while True:
            with guard:
                if not queue:
                    return
                needs = queue.pop(0)
            row = runner.run_snippet(needs, cpu=True, device_cc=None)
            row.pop("figures", None)
            with guard:
                rows.append(row)
                write()
                print(f"[{len(rows)}/{len(claims)}] {needs.path}: {row['status']}", flush=True)

    threads = [threading.Thread(target=work) for _ in range(jobs)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    write()
    failed = sum(r["status"] == "failed" for r in rows)
    print(f"torch {torch_version}: {len(rows)} claims, {failed} failed; wrote {out}")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--release", action="append", default=[], help="torch version(s) to run")
    parser.add_argument("--force", action="store_true", help="re-run recorded releases")
    parser.add_argument("--list", action="store_true", help="list the releases and stop")
    parser.add_argument("--jobs", type=int, default=2, help="claims run at once (default 2)")
    parser.add_argument("--inner", metavar="TORCH", help=argparse.SUPPRESS)
    parser.add_argument("--claim", action="append", default=[], help=argparse.SUPPRESS)
    parser.add_argument("--install", default="", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.inner:
        return inner(args.inner, args.claim, args.install, args.jobs)
    releases = history.releases()
    if args.list:
        for r in releases:
            print(f"torch {r['torch']}  {r['triton_requirement']}  python {r['requires_python']}")
        return 0
    if args.release:
        unknown = set(args.release) - {r["torch"] for r in releases}
        if unknown:
            print(f"not a history release: {sorted(unknown)}", file=sys.stderr)
            return 2
        releases = [r for r in releases if r["torch"] in args.release]
    WORK_DIR.mkdir(parents=True, exist_ok=True)
    clock = time.perf_counter()

    def log(text: str) -> None:
        print(f"[{time.perf_counter() - clock:6.0f} s] {text}", flush=True)

    for release in releases:
        log(f"torch {release['torch']} ({release['triton_requirement']})")
        log(f"torch {release['torch']}: {run_release(release, args.force, log)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
