"""Notebooks on the site run, and the outputs they show are what they print today."""

from __future__ import annotations

import nbformat
import pytest
from execute_notebooks import execute, notebooks

NOTEBOOKS = notebooks()


def stream_text(notebook) -> list[str]:
    return [
        "".join(output.get("text", "") for output in cell.get("outputs", []))
        for cell in notebook.cells
        if cell.cell_type == "code"
    ]


def test_there_are_notebooks_in_both_languages():
    langs = {p.relative_to(p.parents[2]).parts[0] for p in NOTEBOOKS}
    assert langs == {"en", "zh"}, NOTEBOOKS


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: str(p.relative_to(p.parents[2])))
def test_notebook_runs_and_its_saved_outputs_are_current(path):
    saved = nbformat.read(path, as_version=4)
    fresh = execute(path)
    assert stream_text(fresh) == stream_text(saved), (
        f"{path.name}: saved outputs differ from a fresh run; "
        "run `.venv/bin/python scripts/execute_notebooks.py` and commit the notebooks"
    )


@pytest.mark.parametrize(
    "path", [p for p in NOTEBOOKS if p.parts[-3] == "en"], ids=lambda p: p.name
)
def test_languages_share_the_notebook_code(path):
    """Prose is translated; the code cells are the same in both languages."""
    other = path.parents[2] / "zh" / path.relative_to(path.parents[1])
    code = [
        [c.source for c in nbformat.read(p, as_version=4).cells if c.cell_type == "code"]
        for p in (path, other)
    ]
    assert code[0] == code[1]
