"""Publish the site: one mike version per lock, on the gh-pages branch.

    python scripts/deploy_docs.py                   # the current lock, committed to gh-pages here
    python scripts/deploy_docs.py --all             # every lock that is not retired
    python scripts/deploy_docs.py --all --serve     # ... then serve gh-pages on 127.0.0.1:8000
    python scripts/deploy_docs.py --lock <id> --push

The rule for versions (README "Locks and versions"):
* a lock's version id is its `mike-version`, "triton-<major>.<minor>", which mike sorts newest
  first;
  its title is the lock's title, naming both releases;
* the alias `latest`, which is also the default version, goes to the current lock: the newest
  lock that a GPU verifies (tests/test_locks.py checks that the current lock is that one);
* each version carries the lock in mike's properties: lock id, torch, triton, review dates, and
  whether a GPU verifies it.
The build reads the lock's records (DOCS_LOCK), so every page of a version shows that lock's
badges, numbers and pins.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import snippet_records as records  # noqa: E402


def mike(*args: str, env: dict[str, str]) -> None:
    command = [str(Path(sys.executable).parent / "mike"), *args]  # mike has no `python -m`
    print("+", " ".join(command), flush=True)
    subprocess.run(command, cwd=records.REPO_ROOT, env=env, check=True)


def properties(lock: records.Lock) -> list[str]:
    props = {
        "lock": lock.id,
        "torch": lock.torch,
        "triton": lock.triton,
        "reviewed": str(lock.reviewed),
        "next_review": str(lock.next_review),
        "gpu_verified": bool(lock.devices),
        "gpu_devices": list(lock.devices),
    }
    return [
        arg for key, value in props.items() for arg in ("--prop-set", f"{key}={json.dumps(value)}")
    ]


def deploy(lock: records.Lock, push: bool) -> None:
    bin_dir = str(Path(sys.executable).parent)  # mike runs `mkdocs` from PATH: use this venv's
    env = {
        **os.environ,
        "DOCS_LOCK": lock.id,
        "PATH": bin_dir + os.pathsep + os.environ["PATH"],
        "NO_MKDOCS_2_WARNING": "1",
    }
    aliases = ["latest"] if lock.status == "current" else []
    flags = ["--push"] if push else []
    mike(
        "deploy",
        *flags,
        "--update-aliases",
        "--title",
        lock.title,
        *properties(lock),
        lock.mike_version,
        *aliases,
        env=env,
    )
    if lock.status == "current":
        mike("set-default", *flags, "latest", env=env)


def git(*args: str, env: dict[str, str] | None = None, stdin: bytes | None = None) -> str:
    return (
        subprocess.run(
            ["git", *args],
            cwd=records.REPO_ROOT,
            env=env,
            input=stdin,
            capture_output=True,
            check=True,
        )
        .stdout.decode()
        .strip()
    )


def root_404(lock: records.Lock, push: bool) -> None:
    """Copy the default version's 404 page to the root of gh-pages, where GitHub Pages looks for
    it (mike writes one per version only). Its links are absolute, under the version's folder."""
    page = subprocess.run(
        ["git", "show", f"gh-pages:{lock.mike_version}/404.html"],
        cwd=records.REPO_ROOT, capture_output=True, check=True,
    ).stdout  # fmt: skip
    with tempfile.TemporaryDirectory() as tmp:
        env = {**os.environ, "GIT_INDEX_FILE": str(Path(tmp) / "index")}
        git("read-tree", "gh-pages", env=env)
        blob = git("hash-object", "-w", "--stdin", stdin=page)
        git("update-index", "--add", "--cacheinfo", f"100644,{blob},404.html", env=env)
        tree = git("write-tree", env=env)
        message = f"404.html at the root: {lock.mike_version}'s"
        commit = git("commit-tree", tree, "-p", "gh-pages", "-m", message, env=env)
    git("update-ref", "refs/heads/gh-pages", commit)
    print(f"+ {message}", flush=True)
    if push:
        git("push", "origin", "gh-pages")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--lock", default=None, help="lock id (default: the current lock)")
    parser.add_argument("--all", action="store_true", help="every lock that is not retired")
    parser.add_argument("--push", action="store_true", help="push gh-pages after committing")
    parser.add_argument("--serve", action="store_true", help="then serve gh-pages (mike serve)")
    args = parser.parse_args(argv)

    if args.all:
        locks = [lock for lock in records.all_locks() if lock.status != "retired"]
        locks.sort(key=lambda lock: lock.status == "current")  # current last: it sets the default
    else:
        locks = [records.load_lock(args.lock or records.current_lock_id())]
    for lock in locks:
        if lock.status == "retired":
            print(f"lock {lock.id} is retired: not publishing it", file=sys.stderr)
            return 2
        deploy(lock, args.push)
        if lock.status == "current":
            root_404(lock, args.push)
    if args.serve:
        mike("serve", "--dev-addr", "127.0.0.1:8000", env=dict(os.environ))
    return 0


if __name__ == "__main__":
    sys.exit(main())
