"""The exercises: each starter fails untouched with its own message, in the reader's language,
never with a bare traceback; each worked solution passes (tests/test_snippets.py runs both on
every lock); the checker is one piece of code in every file; the block-programming solutions'
drawings on the pages are the ones their runs make; every exercise is on its chapter's page and
on the index, in both languages."""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

import pytest
import snippet_copies as copies
import snippet_records as records
from conftest import CURRENT, LANGUAGES, LOCKS, REPO, page_source_of

SNIPPETS = records.list_snippets()
STARTERS = [p for p in SNIPPETS if re.fullmatch(r"exercise_\w+(?<!_solution)\.py", Path(p).name)]
SOLUTIONS = [p for p in SNIPPETS if Path(p).name.endswith("_solution.py")]
CHAPTERS = ("block-programming", "autotune", "debugging", "pitfalls", "triton-op")
CJK = re.compile(r"[\u4e00-\u9fff]")


def solution_of(starter: str) -> str:
    return starter.removesuffix(".py") + "_solution.py"


def section(path: str, name: str) -> str | None:
    text = (REPO / path).read_text(encoding="utf-8")
    m = re.search(rf"# --8<-- \[start:{name}\]\n(.*?)# --8<-- \[end:{name}\]", text, re.S)
    return m.group(1) if m else None


def test_there_are_twelve_exercises_across_the_five_chapters():
    assert len(STARTERS) >= 12, STARTERS
    for chapter in CHAPTERS:
        n = sum(p.split("/")[1] == chapter for p in STARTERS)
        assert 2 <= n <= 4, f"{chapter}: {n} exercises"


@pytest.mark.parametrize("starter", STARTERS)
def test_a_starter_declares_its_failure_and_its_solution_does_not(starter):
    needs = records.read_snippet_needs(starter)
    assert needs.is_starter, f'{starter}: declare exercise = {{ expect = "fail", ... }}'
    assert solution_of(starter) in SOLUTIONS, f"{starter} has no {solution_of(starter)}"
    assert not records.read_snippet_needs(solution_of(starter)).is_starter
    assert (
        "TODO" in (REPO / starter).read_text()
        and "TODO" not in (REPO / solution_of(starter)).read_text()
    )
    assert all(solution[: -len("_solution.py")] + ".py" in STARTERS for solution in SOLUTIONS)


def test_the_checker_is_the_same_code_in_every_exercise_file():
    """Each file is copied alone, so each carries the checker; one text, not twelve."""
    files = STARTERS + SOLUTIONS
    checkers = {section(p, "checker") for p in files}
    assert None not in checkers and len(checkers) == 1, "the checker sections differ"
    drawn = [p for p in files if p.split("/")[1] == "block-programming"]
    drawings = {section(p, "drawing") for p in drawn}
    assert None not in drawings and len(drawings) == 1, "the drawing sections differ"
    assert all(section(p, "drawing") is None for p in files if p not in drawn)


# The parameters are named lock and path so that tests/conftest.py queues exactly these runs.
@pytest.mark.parametrize("lock", LOCKS, ids=lambda lock: lock.id)
@pytest.mark.parametrize("path", SOLUTIONS)
def test_a_solution_gets_every_case_right(path, lock, cpu_runs):
    proc = cpu_runs.run(lock, path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert re.search(r"^exercise \w+: all \d+ cases right$", proc.stdout, re.M), proc.stdout
    assert "WRONG" not in proc.stdout


@pytest.mark.parametrize("lock", [CURRENT], ids=lambda lock: lock.id)
@pytest.mark.parametrize("path", STARTERS)
def test_a_starter_copied_from_the_chinese_page_fails_in_chinese(path, lock, cpu_runs):
    """The zh page's copy (its LANGUAGE line says "zh") prints its cases, hints and verdict in
    Chinese, fails with its Chinese message and no traceback."""
    needs = records.read_snippet_needs(path)
    proc = cpu_runs.run_localized(lock, path, "zh")
    wrong = records.exercise_outcome(needs, proc.returncode, proc.stdout, proc.stderr, "zh")
    assert wrong is None, f"{wrong}\n{proc.stdout}\n{proc.stderr}"
    wrong_lines = [line for line in proc.stdout.splitlines() if line.startswith("  错误")]
    hints = [line for line in proc.stdout.splitlines() if line.strip().startswith("提示：")]
    assert wrong_lines and len(hints) == len(wrong_lines), proc.stdout
    assert all(CJK.search(line) for line in hints), hints
    assert "WRONG" not in proc.stdout and "hint:" not in proc.stdout


def test_the_chinese_copy_changes_only_the_language_line():
    for path in STARTERS + SOLUTIONS:
        en = copies.runnable_file(path, CURRENT, "en")
        zh = copies.runnable_file(path, CURRENT, "zh")
        changed = [(a, b) for a, b in zip(en.splitlines(), zh.splitlines(), strict=True) if a != b]
        assert changed == [(a, a.replace('"en"', '"zh"', 1)) for a, _ in changed]
        assert len(changed) == 1 and changed[0][0].startswith('LANGUAGE = "en"'), path
    vector_add = "snippets/block-programming/vector_add.py"
    assert copies.runnable_file(vector_add, CURRENT, "zh") == copies.runnable_file(
        vector_add, CURRENT
    )


@pytest.mark.parametrize("lock", LOCKS, ids=lambda lock: lock.id)
@pytest.mark.parametrize("path", [p for p in SOLUTIONS if p.split("/")[1] == "block-programming"])
def test_the_drawing_on_the_page_is_the_one_the_solution_makes(path, lock, cpu_runs):
    """The SVG the page shows is byte for byte what the solution's interpreted run draws, on
    every lock (regenerate: EXERCISE_DRAWING_DIR=docs/assets/exercises TRITON_INTERPRET=1
    python <solution>)."""
    svg = REPO / "docs/assets/exercises" / (Path(path).stem + ".svg")
    drawn = re.search(r"^drawing sha256: ([0-9a-f]{64})$", cpu_runs.run(lock, path).stdout, re.M)
    assert drawn, f"{path} drew nothing"
    assert hashlib.sha256(svg.read_bytes()).hexdigest() == drawn.group(1), (
        f"{svg.relative_to(REPO)} is not what {path} draws on {lock.id}: regenerate it"
    )
    for lang in LANGUAGES:
        page = f"docs/{lang}/block-programming/index.md"
        text = (REPO / page).read_text(encoding="utf-8")
        assert f'{{{{ svg("assets/exercises/{svg.name}") }}}}' in text, f"{page} does not show it"


@pytest.mark.parametrize("lang", LANGUAGES)
def test_every_exercise_is_on_its_chapter_and_on_the_index(lang):
    index = (REPO / "docs" / lang / "exercises/index.md").read_text(encoding="utf-8")
    for starter in STARTERS:
        chapter = starter.split("/")[1]
        shown = page_source_of(lang, f"{chapter}/index.md").snippet_files
        assert starter in shown and solution_of(starter) in shown, (
            f"{starter}: docs/{lang}/{chapter}"
        )
        assert f"{Path(starter).name}" in index, f"docs/{lang}/exercises/index.md lacks {starter}"
        assert f"../{chapter}/index.md#" in index


def test_the_exercise_outcome_rule():
    needs = records.read_snippet_needs(STARTERS[0])
    message = needs.exercise_message["en"]
    ok = f"  WRONG  x: y\nexercise x: 1 of 1 cases wrong, {message}\n"
    assert records.exercise_outcome(needs, 1, ok, "") is None
    assert "passed untouched" in records.exercise_outcome(needs, 0, "all right", "")
    crash = "Traceback (most recent call last):\n  ...\nValueError: x"
    assert "traceback" in records.exercise_outcome(needs, 1, ok, crash)
    assert "without printing" in records.exercise_outcome(needs, 1, "something else", "")
    assert "crashed" in records.exercise_outcome(needs, -11, ok, "")


def test_the_runner_fails_a_starter_that_passes_untouched(tmp_path):
    """A starter whose TODO is already done (here: its solution's text under its metadata)
    is a failed row, as is a crash; a starter that fails with its message is a passed one."""
    import verify_snippets

    starter = "snippets/debugging/exercise_find_int32_overflow.py"
    needs = records.read_snippet_needs(starter)
    text = (REPO / starter).read_text(encoding="utf-8")
    solved = text.replace(
        "flat = rows * stride_row + cols", "flat = rows.to(tl.int64) * stride_row + cols"
    )
    assert solved != text
    copy = tmp_path / "exercise_solved.py"
    copy.write_text(solved, encoding="utf-8")
    moved = records.SnippetNeeds(**{**needs.__dict__, "path": str(copy)})
    row = verify_snippets.run_snippet(moved, cpu=True, device_cc=None)
    assert row["status"] == "failed" and "passed untouched" in row["reason"], row
