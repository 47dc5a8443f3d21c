"""Audit: is every lock still reviewed, and does every record still speak for its snippets?

    python scripts/audit_locks.py                    # today
    python scripts/audit_locks.py --today 2027-03-01 # as of another date

For each lock that is not retired, fails (exit 1) when its review date has passed, when a
snippet's state on one of its platforms blocks CI (changed since its run, failed, never run, no
record), or when a `[pending]` GPU run is past the day it was due, and says what to re-run.
CI runs it (tests/test_locks.py) and so does a monthly workflow (.github/workflows/audit.yml).
Standard library only.
"""

from __future__ import annotations

import argparse
import datetime as dt
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import snippet_records as records  # noqa: E402


def audit(today: dt.date, locks: list[records.Lock] | None = None) -> list[str]:
    """Every problem found in ``locks`` (default: every lock), each a sentence that says what
    to do."""
    problems = []
    for lock in records.all_locks() if locks is None else locks:
        if lock.status == "retired":
            continue
        for path, due in sorted(lock.pending_due.items()):
            if due < today:
                problems.append(
                    f"{lock.id}: the GPU run of {path} was due on {due} ([pending]): run "
                    f"`python scripts/verify_snippets.py --only {path}` on "
                    f"{list(lock.devices) or 'a GPU'}, commit the record and remove it from "
                    f"[pending] in locks/{lock.id}.toml (or give a new due date with the reason)."
                )
        if lock.next_review < today:
            problems.append(
                f"{lock.id}: review was due on {lock.next_review}. Check the newest torch and "
                f"triton releases, re-run the snippets (`make records-cpu`, and the GPU runner for "
                f"{list(lock.devices) or 'no GPU'}), then set reviewed and next-review in "
                f"locks/{lock.id}.toml."
            )
        for s in records.lock_states(lock).blocking():
            if s.platform == records.CPU:
                action = f"run `make records-cpu` and commit locks/{lock.id}.cpu.json"
            else:
                action = (
                    f"run `python scripts/verify_snippets.py --only {s.path}` on {s.platform} and "
                    f"commit locks/{lock.id}.{s.platform}.json, or list it under [pending]"
                )
            problems.append(f"{lock.id}: {s.path} is {s.state.name} on {s.platform}: {action}.")
    return problems


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--today", type=dt.date.fromisoformat, default=dt.date.today())
    args = parser.parse_args(argv)
    problems = audit(args.today)
    for problem in problems:
        print(problem)
    locks = [lock.id for lock in records.all_locks() if lock.status != "retired"]
    print(f"{len(problems)} problem(s) in {len(locks)} lock(s) as of {args.today}: {locks}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
