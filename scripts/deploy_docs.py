"""Publish the site for one lock as a mike version (the gh-pages branch).

    python scripts/deploy_docs.py                     # current lock, commit to gh-pages locally
    python scripts/deploy_docs.py --lock <id> --push  # another lock, and push

The version is the lock's `mike-version`; the current lock also gets the alias `latest`, which
is the site's default. The build reads the lock's records (DOCS_LOCK), so every page of that
version shows that lock's badges and numbers.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import snippet_records as records  # noqa: E402


def mike(*args: str, env: dict[str, str]) -> None:
    command = [str(Path(sys.executable).parent / "mike"), *args]  # mike has no `python -m`
    print("+", " ".join(command), flush=True)
    subprocess.run(command, cwd=records.REPO_ROOT, env=env, check=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--lock", default=None, help="lock id (default: the current lock)")
    parser.add_argument("--push", action="store_true", help="push gh-pages after committing")
    args = parser.parse_args(argv)

    lock = records.load_lock(args.lock or records.current_lock_id())
    if lock.status == "retired":
        print(f"lock {lock.id} is retired: not publishing it", file=sys.stderr)
        return 2
    bin_dir = str(Path(sys.executable).parent)  # mike runs `mkdocs` from PATH: use this venv's
    env = {**os.environ, "DOCS_LOCK": lock.id, "PATH": bin_dir + os.pathsep + os.environ["PATH"]}
    push = ["--push"] if args.push else []
    aliases = ["latest"] if lock.status == "current" else []
    mike(
        "deploy",
        *push,
        "--update-aliases",
        "--title",
        lock.title,
        lock.mike_version,
        *aliases,
        env=env,
    )
    if lock.status == "current":
        mike("set-default", *push, "latest", env=env)
    return 0


if __name__ == "__main__":
    sys.exit(main())
