"""GPU runner: run every snippet natively on this machine's GPU and write the lock's record.

    python scripts/verify_snippets.py                  # all snippets, current lock
    python scripts/verify_snippets.py --only vector    # re-run some, keep the rest of the record
    python scripts/verify_snippets.py --out-dir DIR    # write the record elsewhere (e.g. $OUT)

Each snippet runs in its own process with an empty Triton cache (so compile times are real),
without TRITON_INTERPRET. Shows progress, ends with a table, and writes
locks/<lock>.<device>.json. Exits 1 when a snippet failed, 2 when the machine does not match the
lock. Needs only the standard library, torch and triton.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import snippet_records as records  # noqa: E402


def describe_machine() -> tuple[dict, dict]:
    """(device, versions) of this machine, as the record stores them."""
    import torch
    import triton

    if not torch.cuda.is_available():
        raise SystemExit(
            "No CUDA GPU visible: the GPU runner needs one (CPU runs are `make test`)."
        )
    props = torch.cuda.get_device_properties(0)
    try:
        driver = subprocess.run(
            ["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader", "-i", "0"],
            capture_output=True,
            text=True,
            check=True,
            timeout=30,
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        driver = "unknown"
    device = {
        "name": torch.cuda.get_device_name(0),
        "cc": f"{props.major}.{props.minor}",
        "driver": driver,
        "memory_gib": round(props.total_memory / 2**30, 1),
        "multiprocessors": props.multi_processor_count,
    }
    versions = {
        "torch": torch.__version__,
        "triton": triton.__version__,
        "cuda": torch.version.cuda or "none",
        "python": platform.python_version(),
    }
    return device, versions


def check_versions(lock: records.Lock, versions: dict) -> list[str]:
    problems = []
    if versions["torch"].split("+")[0] != lock.torch:
        problems.append(f"torch {versions['torch']} is not the lock's {lock.torch}")
    if versions["triton"] != lock.triton:
        problems.append(f"triton {versions['triton']} is not the lock's {lock.triton}")
    if versions["cuda"] != lock.cuda:
        problems.append(f"CUDA {versions['cuda']} is not the lock's {lock.cuda}")
    return problems


def tail(text: str, lines: int = 15) -> str:
    return "\n".join(text.strip().splitlines()[-lines:])


def run_snippet(needs: records.SnippetNeeds, device_cc: str) -> dict:
    """Run one snippet natively; return its record row."""
    row = {
        "path": needs.path,
        "sha256": records.file_sha256(needs.path),
        "date": dt.datetime.now(dt.timezone.utc).date().isoformat(),
        "figures": {},
    }
    if needs.gpu_skip:
        return {**row, "status": "skipped", "seconds": 0.0, "reason": needs.gpu_skip}
    if tuple(map(int, device_cc.split("."))) < tuple(map(int, needs.gpu_min_cc.split("."))):
        reason = f"needs compute capability {needs.gpu_min_cc}, device has {device_cc}"
        return {**row, "status": "skipped", "seconds": 0.0, "reason": reason}

    cache_dir = tempfile.mkdtemp(prefix="triton-cache-")
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    env.update(TRITON_CACHE_DIR=cache_dir, PYTHONUNBUFFERED="1")
    start = time.perf_counter()
    try:
        proc = subprocess.run(
            [sys.executable, needs.path],
            cwd=records.REPO_ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=needs.timeout_s,
        )
        output, returncode = proc.stdout + proc.stderr, proc.returncode
    except subprocess.TimeoutExpired as exc:
        output = (
            (exc.stdout or b"").decode() if isinstance(exc.stdout, bytes) else (exc.stdout or "")
        )
        returncode = None
    finally:
        shutil.rmtree(cache_dir, ignore_errors=True)
    row["seconds"] = round(time.perf_counter() - start, 2)
    row["output_tail"] = tail(output)
    if returncode is None:
        return {**row, "status": "failed", "reason": f"timed out after {needs.timeout_s} s"}
    if returncode != 0:
        return {**row, "status": "failed", "reason": f"exit code {returncode}: {tail(output, 3)}"}
    try:
        row["figures"] = records.parse_figures(output)
    except ValueError as exc:
        return {**row, "status": "failed", "reason": f"bad figures line: {exc}"}
    return {**row, "status": "passed"}


def print_table(rows: list[dict]) -> None:
    width = max(len(r["path"]) for r in rows)
    print(f"\n{'snippet':<{width}}  {'status':<8} {'seconds':>8}  figures / reason")
    print(f"{'-' * width}  {'-' * 8} {'-' * 8}  {'-' * 40}")
    for r in rows:
        detail = r.get("reason") or ", ".join(
            f"{k}={v['value']}{v.get('unit', '')}" for k, v in r["figures"].items()
        )
        detail = detail.replace("\n", " ")
        print(f"{r['path']:<{width}}  {r['status']:<8} {r['seconds']:>8.2f}  {detail[:100]}")
    counts = {s: sum(r["status"] == s for r in rows) for s in records.STATUSES}
    print("\n" + ", ".join(f"{n} {s}" for s, n in counts.items()))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--lock", default=None, help="lock id (default: the current lock)")
    parser.add_argument(
        "--only",
        action="append",
        default=[],
        help="run only snippets whose path contains this text; repeatable",
    )
    parser.add_argument(
        "--out-dir",
        type=Path,
        default=records.LOCKS_DIR,
        help="where to write <lock>.<device>.json (default: locks/)",
    )
    args = parser.parse_args(argv)

    lock = records.load_lock(args.lock or records.current_lock_id())
    device, versions = describe_machine()
    slug = records.device_slug(device["name"])
    problems = check_versions(lock, versions)
    print(f"lock {lock.id}: {lock.title}")
    print(
        f"device {device['name']} (CC {device['cc']}, driver {device['driver']}) -> record {slug}"
    )
    print(f"versions {versions}")
    if problems:
        print("This machine does not match the lock:\n  " + "\n  ".join(problems), file=sys.stderr)
        return 2

    paths = [p for p in records.list_snippets() if not args.only or any(o in p for o in args.only)]
    if not paths:
        print(f"no snippet matches {args.only}", file=sys.stderr)
        return 2
    all_needs = [records.read_snippet_needs(p) for p in paths]  # fail early on a bad contract
    rows = []
    started = dt.datetime.now(dt.timezone.utc)
    for i, needs in enumerate(all_needs, 1):
        print(f"[{i}/{len(all_needs)}] {needs.path} ...", flush=True)
        row = run_snippet(needs, device["cc"])
        rows.append(row)
        print(
            f"[{i}/{len(all_needs)}] {needs.path}: {row['status']} ({row['seconds']:.1f} s)"
            + (f" - {row['reason']}" if row.get("reason") else ""),
            flush=True,
        )
    print_table(rows)

    previous = records.load_record(lock.id, slug) if args.only else None
    if previous:
        kept = [
            e
            for e in previous["snippets"]
            if e["path"] not in {r["path"] for r in rows} and e["path"] in records.list_snippets()
        ]
        rows = sorted(kept + rows, key=lambda r: r["path"])
    record = {
        "schema": records.RECORD_SCHEMA,
        "lock": lock.id,
        "date": started.date().isoformat(),
        "started": started.isoformat(timespec="seconds"),
        "finished": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
        "device": device,
        "versions": versions,
        "runner": "scripts/verify_snippets.py"
        + (f" --only {' --only '.join(args.only)}" if args.only else ""),
        "snippets": rows,
    }
    records.validate_record(record)
    args.out_dir.mkdir(parents=True, exist_ok=True)
    out = args.out_dir / records.record_path(lock.id, slug).name
    out.write_text(json.dumps(record, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"\nwrote {out}")
    return 1 if any(r["status"] == "failed" for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
