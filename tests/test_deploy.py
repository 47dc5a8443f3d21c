"""Publishing: `make publish`'s script puts every lock on gh-pages as a mike version, in a
throwaway clone, with the alias `latest` on the newest GPU-verified lock."""

from __future__ import annotations

import json

import pytest
from conftest import CURRENT, LOCKS, git

pytestmark = pytest.mark.slow


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
