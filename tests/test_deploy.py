"""Publishing: mike puts the current lock's site on gh-pages as a version aliased `latest`."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import snippet_records as records
from conftest import copy_project


def git(cwd, *args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=cwd, check=True, capture_output=True, text=True
    ).stdout


def test_deploy_publishes_the_lock_as_a_mike_version(tmp_path):
    copy_project(tmp_path)
    git(tmp_path, "init", "-q", "-b", "main")
    git(tmp_path, "-c", "user.name=t", "-c", "user.email=t@t", "add", ".")
    git(tmp_path, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "docs")
    env_git = {
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@t",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@t",
    }
    proc = subprocess.run(
        [sys.executable, "scripts/deploy_docs.py"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, **env_git},
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr

    lock = records.load_lock(records.current_lock_id())
    versions = json.loads(git(tmp_path, "show", "gh-pages:versions.json"))
    assert versions == [{"version": lock.mike_version, "title": lock.title, "aliases": ["latest"]}]
    files = git(tmp_path, "ls-tree", "-r", "--name-only", "gh-pages").splitlines()
    for page in (
        "index.html",
        "zh/index.html",
        "block-programming/index.html",
        "zh/block-programming/index.html",
    ):
        assert f"{lock.mike_version}/{page}" in files
    assert "index.html" in files  # the redirect to the default version
