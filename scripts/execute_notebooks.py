"""Execute the site's notebooks in place, so the outputs the pages show are real.

    python scripts/execute_notebooks.py           # re-run every docs/**/*.ipynb, save outputs
    python scripts/execute_notebooks.py --check   # run them, save nothing; exit 1 on an error

Each notebook runs with its own folder as the working directory (as Jupyter would), in the
current Python environment. mkdocs-jupyter renders the saved outputs; it does not execute. The
saved notebook keeps no trace of the machine that ran it (no Python version, no timings): what it
shows about versions and devices it prints from the records.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import nbformat
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError

REPO_ROOT = Path(__file__).resolve().parent.parent


def notebooks() -> list[Path]:
    return sorted((REPO_ROOT / "docs").rglob("*.ipynb"))


def execute(path: Path, timeout_s: int = 600) -> nbformat.NotebookNode:
    """Run every cell of ``path``; raise CellExecutionError on the first failing cell."""
    notebook = nbformat.read(path, as_version=4)
    client = NotebookClient(
        notebook,
        kernel_name="python3",
        timeout=timeout_s,
        record_timing=False,
        resources={"metadata": {"path": str(path.parent)}},
    )
    client.execute()
    notebook.metadata["language_info"] = {"name": "python"}
    return notebook


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--check", action="store_true", help="run without saving")
    args = parser.parse_args(argv)
    failed = 0
    for path in notebooks():
        rel = path.relative_to(REPO_ROOT)
        try:
            notebook = execute(path)
        except CellExecutionError as exc:
            failed += 1
            print(f"FAILED {rel}\n{exc}", file=sys.stderr)
            continue
        if not args.check:
            nbformat.validator.normalize(notebook)
            nbformat.write(notebook, path)
        print(f"ok {rel}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
