"""Run every snippet that the test suite forks (tests/conftest.py may_fork) both ways, on every
lock, and compare: a fresh process (`python path`, as run_counting_cpu runs it) and a child of a
fork server (scripts/fork_server.py). They must give the same exit status and the same printed
lines as a record keeps them (snippet_records.output_lines: figures and benchmark rows left out,
being measurements).

    .venv/bin/python scripts/compare_fork_runs.py [--only SUBSTRING] [--out build/fork-compare.json]

Where the lines differ, the file runs fresh once more: a line that differs between two fresh
runs as well (a time, an address) is the file's own noise, not the fork's; the report names it.
Exits 1 when any file differs in anything else.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parent / "tests")]
import conftest  # noqa: E402
import snippet_copies as copies  # noqa: E402
import snippet_records as records  # noqa: E402

NUMBER = re.compile(r"\d+(\.\d+)?(e[-+]?\d+)?")


def forked_files() -> list[str]:
    """The files whose plain CPU run the suite forks."""
    return [
        path
        for path in records.list_snippets()
        if records.read_snippet_needs(path).runs_on_cpu
        and not copies.has_archive(path)
        and conftest.exercise_batch(path) is None
        and conftest.may_fork(path)
    ]


def run_env(path: str) -> tuple[dict, float]:
    """The environment and timeout CpuRuns._run gives the file."""
    needs = records.read_snippet_needs(path)
    env = conftest.cpu_run_env()
    if needs.gpu_timing:
        env[records.REPEATS_ENV] = "1"
    if needs.cpu_interpreter:
        env["TRITON_INTERPRET"] = "1"
    return env, needs.timeout_s * conftest.CPU_RUN_TIMEOUT_FACTOR


def compare(fresh, forked, again) -> tuple[bool, str]:
    """Whether the forked run is the fresh one, and what differs."""
    if fresh.returncode != forked.returncode:
        return False, f"exit status {fresh.returncode} fresh, {forked.returncode} forked"
    a, b = records.output_lines(fresh.stdout), records.output_lines(forked.stdout)
    if a == b:
        return True, "same"
    if again is not None and records.output_lines(again.stdout) == b:
        return True, "same as a second fresh run"
    c = records.output_lines(again.stdout) if again is not None else None
    if c is None or len(a) != len(b) or len(c) != len(a):
        return False, f"{len(a)} lines fresh, {len(b)} forked"
    diff = [i for i in range(len(a)) if a[i] != b[i]]
    noisy = {i for i in range(len(a)) if a[i] != c[i]}
    if all(i in noisy and NUMBER.sub("#", a[i]) == NUMBER.sub("#", b[i]) for i in diff):
        return True, f"only numbers that differ between fresh runs too: lines {diff}"
    return False, "; ".join(f"line {i}: {a[i]!r} fresh, {b[i]!r} forked" for i in diff[:3])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--only", default="", help="files whose path contains this")
    parser.add_argument("--out", default="build/fork-compare.json")
    args = parser.parse_args(argv)
    servers: dict[tuple[int, str, bool], conftest.ForkServer] = {}
    lock_ = threading.Lock()

    def one(lock, path):
        env, timeout = run_env(path)
        interpreted = env.get("TRITON_INTERPRET") == "1"
        key = (threading.get_ident(), lock.id, interpreted)
        with lock_:
            server = servers.get(key)
        if server is None:
            server = conftest.ForkServer(
                conftest.lock_python(lock), conftest.fork_server_env(interpreted)
            )
            with lock_:
                servers[key] = server
        python = conftest.lock_python(lock)
        fresh = conftest.run_counting_cpu([python, path], conftest.REPO, env, timeout)
        forked = server.run(path, conftest.REPO, env, timeout)
        again = None
        if fresh.returncode == forked.returncode and records.output_lines(
            fresh.stdout
        ) != records.output_lines(forked.stdout):
            again = conftest.run_counting_cpu([python, path], conftest.REPO, env, timeout)
        same, why = compare(fresh, forked, again)
        row = {"lock": lock.id, "path": path, "same": same, "why": why,
               "returncode": fresh.returncode, "fresh_cpu_s": round(fresh.cpu_seconds, 2),
               "forked_cpu_s": round(forked.cpu_seconds, 2)}  # fmt: skip
        print(("same   " if same else "DIFFERS"), lock.id, path, why, flush=True)
        return row

    jobs = [(lock, p) for lock in conftest.LOCKS for p in forked_files() if args.only in p]
    jobs.sort(key=lambda j: records.read_snippet_needs(j[1]).cpu_interpreter)  # fewer servers
    with ThreadPoolExecutor(max_workers=2) as pool:
        rows = list(pool.map(lambda j: one(*j), jobs))
    for server in servers.values():
        server.close()
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(rows, indent=1) + "\n", encoding="utf-8")
    differ = [r for r in rows if not r["same"]]
    fresh = sum(r["fresh_cpu_s"] for r in rows)
    forked = sum(r["forked_cpu_s"] for r in rows)
    print(
        f"{len(rows)} runs ({len({r['path'] for r in rows})} files): {len(differ)} differ; "
        f"{fresh:.0f} CPU s fresh, {forked:.0f} CPU s forked "
        f"(+{sum(s.cpu_seconds for s in servers.values()):.0f} for {len(servers)} servers)"
    )
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
