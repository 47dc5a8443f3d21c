"""Code on the site and the tools behind it stay ruff-clean and ruff-formatted."""

from __future__ import annotations

import subprocess
import sys

import pytest
from conftest import REPO

PATHS = ["scripts", "tests", "snippets"]


@pytest.mark.parametrize("command", [["check"], ["format", "--check"]], ids=["lint", "format"])
def test_ruff(command):
    proc = subprocess.run(
        [sys.executable, "-m", "ruff", *command, *PATHS], cwd=REPO, capture_output=True, text=True
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
