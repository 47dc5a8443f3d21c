"""Shared fixtures: the built site (one strict build per test session) and its pages."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import snippet_records as records

REPO = records.REPO_ROOT
LANGUAGES = ("en", "zh")


SITE_SOURCES = ("mkdocs.yml", "docs", "snippets", "scripts", "locks", "overrides", "search")


def copy_project(dest: Path) -> Path:
    """Copy what building and publishing the site reads, to change it without touching the repo."""
    dest.mkdir(parents=True, exist_ok=True)
    for name in SITE_SOURCES:
        src = REPO / name
        (shutil.copytree if src.is_dir() else shutil.copy2)(src, dest / name)
    return dest


def build_site(source: Path, dest: Path, env: dict | None = None) -> subprocess.CompletedProcess:
    """`mkdocs build --strict` of the project at ``source`` into ``dest``."""
    return subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(dest)],
        cwd=source,
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
    )


@pytest.fixture(scope="session")
def site_dir(tmp_path_factory) -> Path:
    dest = tmp_path_factory.mktemp("site")
    proc = build_site(REPO, dest)
    assert proc.returncode == 0, f"mkdocs build --strict failed:\n{proc.stdout}\n{proc.stderr}"
    return dest


def doc_pages(lang: str) -> list[str]:
    """Source pages of one language, relative to docs/<lang>."""
    root = REPO / "docs" / lang
    return sorted(
        p.relative_to(root).as_posix() for p in root.rglob("*") if p.suffix in (".md", ".ipynb")
    )


def built_page(site: Path, lang: str, page: str) -> Path:
    """Built HTML of a source page (directory URLs; English at the root, Chinese under zh/)."""
    stem = page.rsplit(".", 1)[0]
    rel = "" if stem == "index" else (stem[: -len("/index")] if stem.endswith("/index") else stem)
    base = site if lang == "en" else site / lang
    return base / rel / "index.html"
