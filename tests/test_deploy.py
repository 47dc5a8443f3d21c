"""Publishing: `make publish`'s script puts every lock on gh-pages as a mike version, in a
throwaway clone, with the alias `latest` on the newest GPU-verified lock."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from conftest import CURRENT, LOCKS, copy_project, quiet_env

pytestmark = pytest.mark.slow


def git(cwd, *args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=cwd, check=True, capture_output=True, text=True
    ).stdout


@pytest.fixture(scope="module")
def published(tmp_path_factory):
    """A clone of the project with every lock deployed to its local gh-pages branch."""
    clone = copy_project(tmp_path_factory.mktemp("clone"))
    ident = ["-c", "user.name=t", "-c", "user.email=t@t"]
    git(clone, "init", "-q", "-b", "main")
    git(clone, *ident, "add", ".")
    git(clone, *ident, "commit", "-q", "-m", "docs")
    env_git = {
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@t",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@t",
    }
    proc = subprocess.run(
        [sys.executable, "scripts/deploy_docs.py", "--all"],
        cwd=clone,
        capture_output=True,
        text=True,
        timeout=900,
        env=quiet_env(**env_git, PATH=os.environ["PATH"]),
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return clone


def test_every_lock_is_a_version_newest_first_with_latest_on_the_current_lock(published):
    versions = json.loads(git(published, "show", "gh-pages:versions.json"))
    assert [v["version"] for v in versions] == [lock.mike_version for lock in LOCKS]
    for v, lock in zip(versions, LOCKS, strict=True):
        assert v["title"] == lock.title
        assert v["aliases"] == (["latest"] if lock.id == CURRENT.id else [])
        assert v["properties"]["lock"] == lock.id
        assert v["properties"]["torch"] == lock.torch and v["properties"]["triton"] == lock.triton
        assert v["properties"]["gpu_verified"] == bool(lock.devices)
        assert v["properties"]["next_review"] == str(lock.next_review)


def test_each_version_holds_both_languages_built_for_its_lock(published):
    files = set(git(published, "ls-tree", "-r", "--name-only", "gh-pages").splitlines())
    assert "index.html" in files  # the redirect to the default version
    for lock in LOCKS:
        for page in ("index.html", "zh/index.html", "block-programming/index.html", "404.html"):
            assert f"{lock.mike_version}/{page}" in files
        page = git(published, "show", f"gh-pages:{lock.mike_version}/block-programming/index.html")
        assert f"torch=={lock.torch}" in page and f"triton=={lock.triton}" in page
        if not lock.devices:
            assert "not verified on a GPU for this lock" in page
            assert 'data-platform="nvidia-h200" data-state="verified"' not in page
    root_404 = git(published, "show", "gh-pages:404.html")
    assert '<html lang="en"' in root_404
    assert f'href="/{CURRENT.mike_version}/assets/' in root_404  # absolute, under the version
    redirect = git(published, "show", "gh-pages:index.html")
    assert f"{CURRENT.mike_version}" in redirect or "latest" in redirect
