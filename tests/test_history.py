"""The history of the claims: committed records against the pages and the claim files' sha256.

No runs here: `make history` (scripts/history_run.py) writes locks/history/, outside CI. These
checks read the records and render what the "What changed when" page and the badges show
(scripts/history_page.py), so CI fails when the page and the records disagree, and stays green
when a claim file merely changed since its history run (the page then says so).
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "scripts"))
import history_page  # noqa: E402
import history_records as history  # noqa: E402
import page_source  # noqa: E402
import snippet_records as records  # noqa: E402

REPO = records.REPO_ROOT
CURRENT_TORCH = records.load_lock(records.current_lock_id()).torch


def satisfies(version: str, requirement: str) -> bool:
    """triton==3.6.0 or triton~=3.8.0 (compatible release: same major.minor, patch at least)."""
    m = re.fullmatch(r"triton(==|~=)([\d.]+)", requirement)
    assert m, requirement
    if m[1] == "==":
        return version == m[2]
    want = history.version_tuple(m[2])
    have = history.version_tuple(version)
    return have[: len(want) - 1] == want[:-1] and have >= want


def test_every_release_of_the_pins_table_has_a_record() -> None:
    releases = history.releases()
    assert [r["torch"] for r in releases][0].startswith("2.5."), "the history starts at 2.5"
    minors = [history.minor(r["torch"]) for r in releases]
    assert len(minors) == len(set(minors)), "one release per minor, its newest patch"
    missing = [r["torch"] for r in releases if not history.record_path(r["torch"]).is_file()]
    assert not missing, f"no history record for torch {missing}: run `make history` and commit"
    known = {history.record_path(r["torch"]).name for r in releases}
    strays = [p.name for p in history.HISTORY_DIR.glob("*.json") if p.name not in known]
    assert not strays, f"records of releases the pins table does not list: {strays}"


@pytest.mark.parametrize("release", history.releases(), ids=lambda r: r["torch"])
def test_each_record_ran_the_release_it_names(release: dict) -> None:
    path = history.record_path(release["torch"])
    if not path.is_file():
        pytest.skip("no record (the test above fails for it)")
    record = history.load_history_record(path)  # validates
    assert record["triton_requirement"] == release["triton_requirement"]
    if record["status"] == "not-installable":
        assert record["reason"].strip()
        return
    versions = record["versions"]
    assert versions["torch"].split("+")[0] == release["torch"]
    assert satisfies(versions["triton"], release["triton_requirement"]), versions
    assert {"date", "python"} <= set(record) | set(versions)
    ran = {row["path"] for row in record["snippets"]}
    assert ran <= set(records.list_snippets()) | ran  # rows of since-deleted files are ignored
    for row in record["snippets"]:
        assert history.is_claim(row["path"]), row["path"]
        assert re.fullmatch(r"[0-9a-f]{64}", row["sha256"])


def test_the_current_lock_holds_every_claim_its_history_run_passed() -> None:
    """The history run of the current lock's torch agrees with the lock's own CPU record: a
    claim the lock record passes (same file) passed in the history too, with the same lines."""
    lock_record = records.load_record(records.current_lock_id(), records.CPU) or {}
    lock_rows = {r["path"]: r for r in lock_record.get("snippets", [])}
    path = history.record_path(CURRENT_TORCH)
    if not path.is_file():
        pytest.skip(f"torch {CURRENT_TORCH} is not a history release")
    disagree = []
    for row in history.load_history_record(path)["snippets"]:
        ours = lock_rows.get(row["path"])
        if ours and ours["sha256"] == row["sha256"] and ours["status"] == "passed":
            if row["status"] != "passed" or row["stdout"] != ours["stdout"]:
                disagree.append(row["path"])
    assert not disagree, f"history and lock record disagree on {disagree}"


def rendered_rows(lang: str) -> dict[str, str]:
    """The matrix as the page shows it: claim path -> its row."""
    rows = {}
    for line in history_page.matrix(lang, CURRENT_TORCH).splitlines()[2:]:
        m = re.match(r"\| \[`([^`]+)`\]", line)
        assert m, line
        rows[f"snippets/{m[1]}"] = line
    return rows


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_page_marks_exactly_the_claims_changed_since_their_history_run(lang: str) -> None:
    rows = rendered_rows(lang)
    assert set(rows) == set(history.cpu_claims()), "every CPU claim has its row"
    changed_words = history_page.TEXT[lang]["changed"].lstrip("；; ")
    for path, row in rows.items():
        h = history.claim_history(path)
        assert ('data-changed="true"' in row) == h.changed, path
        assert (changed_words in row) == h.changed, path
        for cell in h.cells:  # every recorded verdict is in the row, in release order
            if cell.outcome is not None:
                assert f'data-verdict="{cell.outcome.verdict}"' in row


def test_a_claim_edited_since_its_run_shows_changed_not_an_error(monkeypatch) -> None:
    path = "snippets/autotune/claim_hooks.py"
    real = records.snippet_sha256
    monkeypatch.setattr(
        records,
        "snippet_sha256",
        lambda needs: "0" * 64 if needs.path == path else real(needs),
    )
    words, state = history_page.since_phrase("en", path, CURRENT_TORCH)
    assert state == "changed" and "changed since its history run" in words
    assert 'data-changed="true"' in rendered_rows("en")[path]
    section = history_page.claim_section("zh", path, CURRENT_TORCH)
    assert "历史运行之后论断文件已修改" in section


def test_spans_and_phrases_follow_the_outcomes() -> None:
    release = [{"torch": v} for v in ("2.5.1", "2.6.0", "2.7.1", "2.8.0")]
    ok_a, ok_b = history.Outcome("passed", ("a",)), history.Outcome("passed", ("b",))
    bad = history.Outcome("failed", error="TypeError: x")
    cells = tuple(
        history.Cell(r, {}, {}, o, False)
        for r, o in zip(release, (bad, ok_a, ok_b, ok_b), strict=True)
    )
    h = history.ClaimHistory("snippets/x/claim_y.py", "0" * 64, cells)
    first, last = h.holds("2.8.0")
    assert (first.release["torch"], last.release["torch"]) == ("2.6.0", "2.8.0")
    assert [c.release["torch"] for c in h.line_changes(first, last)] == ["2.7.1"]
    assert [(a.release["torch"], b.release["torch"]) for a, b, _ in h.spans()] == [
        ("2.5.1", "2.5.1"),
        ("2.6.0", "2.6.0"),
        ("2.7.1", "2.8.0"),
    ]
    assert history.error_line("Traceback\n  File x\nAssertionError: extend") == (
        "AssertionError: extend"
    )


def docs_pages(lang: str) -> list[Path]:
    return sorted((REPO / "docs" / lang).rglob("*.md"))


def test_the_page_exists_in_both_languages_with_the_generated_matrix() -> None:
    nav = (REPO / "mkdocs.yml").read_text(encoding="utf-8")
    assert "What changed when: what-changed.md" in nav
    assert re.search(r"^\s+What changed when: \S", nav, re.M), "its Chinese title"
    for lang in ("en", "zh"):
        text = (REPO / "docs" / lang / history_page.PAGE).read_text(encoding="utf-8")
        assert [t.name for t in page_source.iter_tokens(text)] == ["history_matrix"]


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_since_tokens_name_claims_with_a_history(lang: str) -> None:
    claims = set(history.cpu_claims())
    for page in docs_pages(lang):
        for token in page_source.iter_tokens(page.read_text(encoding="utf-8")):
            if token.name == "since":
                assert token.args[0] in claims, f"{page}: {token.text}"


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_no_page_types_a_release_span_by_hand(lang: str) -> None:
    """ "holds from torch 2.6 to 2.15" comes from the since(...) token, never typed (the page
    that explains the phrase quotes it once, as an example)."""
    typed = re.compile(r"holds from torch \d|从 torch \d[\d.]* 到 [\d.]+ 都成立")
    for page in docs_pages(lang):
        if page.name == history_page.PAGE:
            continue
        text = page_source.TOKEN.sub("", page.read_text(encoding="utf-8"))
        assert not typed.search(text), f"{page}: a release span typed by hand"


def test_a_release_that_could_not_install_is_shown_with_its_reason(monkeypatch) -> None:
    release = history.releases()[0]
    record = {
        **history.record_head(release),
        "status": "not-installable",
        "reason": "No solution found: torch has no wheels with a matching Python ABI tag",
        "date": "2026-12-03",
        "versions": {"python": "3.14.0"},
        "snippets": [],
    }
    history.validate_history_record(record, "fake")
    with pytest.raises(ValueError, match="says why"):
        history.validate_history_record({**record, "reason": ""}, "fake")
    monkeypatch.setattr(history, "history_records", lambda: [(release, record)])
    table = history_page.releases_table("en")
    assert "could not install" in table and "matching Python ABI tag" in table
    assert "无法安装" in history_page.releases_table("zh")
    path = history.cpu_claims()[0]
    assert history_page.since_phrase("en", path, CURRENT_TORCH) == (
        "not in the history run yet",
        "not-run",
    )


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_each_chapter_links_the_row_of_each_claim_it_shows(site_dir, lang: str) -> None:
    """Above a claim's first block on a page, its badge says the span it holds for and links
    its row on the "What changed when" page; the row is there."""
    prefix = "" if lang == "en" else "zh/"
    rows = (site_dir / prefix / "what-changed" / "index.html").read_text(encoding="utf-8")
    claims = set(history.cpu_claims())
    for page in sorted((site_dir / prefix).glob("*/index.html")):
        html = page.read_text(encoding="utf-8")
        shown = set(re.findall(r'class="snippet-status" data-snippet="([^"]+)"', html)) & claims
        for path in shown:
            anchor = history_page.claim_anchor(path)
            link = re.search(
                rf'class="snippet-status__history" data-state="[^"]+" '
                rf'href="\.\./what-changed/#{anchor}">([^<]+)</a>',
                html,
            )
            assert link, f"{page}: no history link above {path}"
            assert link[1] == history_page.since_phrase(lang, path, CURRENT_TORCH)[0]
            assert f'id="{anchor}"' in rows
