"""The built site: strict build, both languages in step on every page, every badge, figure,
printed output and ID card as the records say, and the freshness rules in builds."""

from __future__ import annotations

import datetime as dt
import html as html_module
import io
import json
import re
import shutil
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET
import zipfile
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import urljoin

import page_source
import pytest
import site_hooks
import snippet_copies as copies
import snippet_records as records
from conftest import (
    BACKGROUND_STARTS,
    CPU_RUNS,
    CURRENT,
    LANGUAGES,
    LOCKS,
    REPO,
    SITE_BUILD,
    WAITS_FOR_THE_POOL,
    build_site,
    built_page,
    copy_project,
    doc_pages,
    environ,
    markdown_pages,
    page_source_of,
    page_url,
    quiet_env,
    run_counting_cpu,
)

PAGES = markdown_pages("en")
STATES = records.lock_states(CURRENT)


class PageParser(HTMLParser):
    """Heading ids, badges (with each platform's state and text), figures, outputs and ID cards."""

    def __init__(self) -> None:
        super().__init__()
        self.heading_ids: list[str] = []
        self.badges: list[dict] = []
        self.quotes: list[dict] = []  # figures and outputs
        self.unmeasured: list[dict] = []  # figures that no record has yet
        self.cards: dict[str, str] = {}
        self.targets: list[dict] = []
        self.benchmarks: list[dict] = []  # each: attributes, the text of its cells, its card
        self.output_blocks: list[dict] = []  # each: attributes, the printed lines, its card
        self._awaiting_card: dict | None = None
        self._in_cell = False
        self.text: list[str] = []
        self._stack: list[tuple[str, dict]] = []  # open elements we collect text for

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        classes = (attrs.get("class") or "").split()
        if re.fullmatch(r"h[1-6]", tag) and attrs.get("id"):
            self.heading_ids.append(attrs["id"])
        if "snippet-status" in classes:
            self.badges.append({"snippet": attrs["data-snippet"], "states": []})
        if "snippet-status__state" in classes:
            item = {"platform": attrs["data-platform"], "state": attrs["data-state"], "text": ""}
            self.badges[-1]["states"].append(item)
            self._stack.append(("state", item))
        if "record-target" in classes:
            item = {**attrs, "text": ""}
            self.targets.append(item)
            self._stack.append(("target", item))
        if "record-benchmark" in classes:
            self.benchmarks.append({**attrs, "cells": [], "card": None})
            self._awaiting_card = self.benchmarks[-1]
        if "record-output-block" in classes:
            item = {**attrs, "text": "", "card": None}
            self.output_blocks.append(item)
            self._awaiting_card = item
        if tag == "code" and self.output_blocks and self._awaiting_card is self.output_blocks[-1]:
            self._stack.append(("block", self.output_blocks[-1]))
        if self.benchmarks and tag == "td" and not self.benchmarks[-1].get("done"):
            self.benchmarks[-1]["cells"].append("")
            self._in_cell = True
        if "record-unmeasured" in classes:
            self.unmeasured.append(attrs)
        if {"record-figure", "record-output"} & set(classes):
            item = {**attrs, "text": "", "card": None}
            self.quotes.append(item)
            self._stack.append(("quote", item))
        if tag == "a" and "record-card-link" in classes and self._stack:
            kind, item = self._stack[-1]
            if kind == "quote":
                item["card"] = attrs["href"].lstrip("#")
        if tag == "a" and "record-card-link" in classes and self._awaiting_card is not None:
            if not self._stack:  # the link after a table or a block of printed lines
                self._awaiting_card["card"] = attrs["href"].lstrip("#")
                self._awaiting_card["done"] = True
                self._awaiting_card = None
        if tag == "li" and (attrs.get("id") or "").startswith("id-card-"):
            item = {"id": attrs["id"], "text": ""}
            self._stack.append(("card", item))
        if self._stack and tag in ("span", "li", "code", "a", "sup"):
            self._stack[-1][1].setdefault("depth", 0)
            self._stack[-1][1]["depth"] += 1

    def handle_endtag(self, tag):
        if tag == "td":
            self._in_cell = False
        if self._stack and tag in ("span", "li", "code", "a", "sup"):
            kind, item = self._stack[-1]
            item["depth"] -= 1
            if item["depth"] == 0:
                self._stack.pop()
                if kind == "card":
                    self.cards[item["id"]] = item["text"].strip()

    def handle_data(self, data):
        self.text.append(data)
        if self._in_cell and self.benchmarks:
            self.benchmarks[-1]["cells"][-1] += data
        for _, item in self._stack:
            item["text"] += data


def parse(path: Path) -> PageParser:
    parser = PageParser()
    parser.feed(path.read_text(encoding="utf-8"))
    return parser


def built(site_dir, lang, page) -> PageParser:
    return parse(built_page(site_dir, lang, page))


# ----------------------------------------------------------------------------- sources


def test_languages_have_the_same_pages():
    assert doc_pages("en") == doc_pages("zh")
    assert "index.md" in doc_pages("en") and "glossary.md" in doc_pages("en")


@pytest.mark.parametrize("page", PAGES)
def test_languages_include_the_same_snippets_and_tokens(page):
    en, zh = page_source_of("en", page), page_source_of("zh", page)
    assert en.include_targets == zh.include_targets
    assert [t.text for t in en.tokens] == [t.text for t in zh.tokens]


@pytest.mark.parametrize("page", PAGES)
def test_languages_annotate_each_block_alike(page):
    """Same number of code annotations after each block (the markers are in the shared code)."""
    counts = []
    for lang in LANGUAGES:
        src = page_source_of(lang, page)
        counts.append(
            [len(page_source.annotation_items(src.lines, f)) for f in src.fences if f.snippet_files]
        )
    assert counts[0] == counts[1]


@pytest.mark.parametrize("page", PAGES)
def test_languages_link_to_the_same_places(page):
    links = [
        sorted(re.findall(r"\]\(([^)\s]+)\)", page_source_of(lang, page).text))
        for lang in LANGUAGES
    ]
    assert links[0] == links[1]


@pytest.mark.parametrize("notebook", [p for p in doc_pages("en") if p.endswith(".ipynb")])
def test_notebooks_link_to_the_same_places_in_both_languages(notebook):
    """The markdown cells of a notebook, as a page's prose (tests/test_links.py follows them)."""
    links = []
    for lang in LANGUAGES:
        cells = json.loads((REPO / "docs" / lang / notebook).read_text(encoding="utf-8"))["cells"]
        text = "".join("".join(c["source"]) for c in cells if c["cell_type"] == "markdown")
        links.append(sorted(re.findall(r"\]\(([^)\s]+)\)", text)))
    assert links[0] == links[1]


@pytest.mark.parametrize("path", records.list_snippets())
@pytest.mark.parametrize("lang", LANGUAGES)
def test_every_snippet_is_shown_in_every_language(path, lang):
    shown = {p for page in markdown_pages(lang) for p in page_source_of(lang, page).snippet_files}
    assert path in shown, f"{path} is on no {lang} page"


@pytest.mark.parametrize("page", PAGES)
def test_included_sections_exist_and_are_annotated_alike(page):
    """check_paths stops the build for a missing file; a missing section would show nothing."""
    src = page_source_of("en", page)
    for fence in src.fences:
        for target in fence.include_targets or []:
            path, section = page_source.split_target(target)
            text = (REPO / path).read_text(encoding="utf-8")
            if section:
                start, end = f"# --8<-- [start:{section}]", f"# --8<-- [end:{section}]"
                assert start in text and end in text, f"{page}: no section {target}"
                code = text.split(start, 1)[1].split(end, 1)[0]
                markers = re.findall(r"# \((\d+)\)!", code)
                items = page_source.annotation_items(src.lines, fence)
                assert len(markers) == len(items), (
                    f"{page}: {target} has {markers}, {len(items)} notes"
                )


@pytest.mark.parametrize("page", PAGES)
@pytest.mark.parametrize("lang", LANGUAGES)
def test_no_code_typed_into_a_page(page, lang):
    """Every fenced block is an include of snippets/; commands come from tokens (any language,
    so neither ```py3 nor ```bash can slip a hand-typed line in)."""
    typed = page_source_of(lang, page).hand_typed_fences()
    assert not typed, f"docs/{lang}/{page}: typed by hand: {[f.body[:2] for f in typed]}"


MEASUREMENT = re.compile(
    r"\d[\d.,]*\s?(?:ms|µs|us|ns|s|GB/s|TB/s|TFLOP/s|GiB|MiB|GB|MB)\b"
    r"|\d[\d.]*\s?(?:x|×)\s?(?:faster|slower)"
)


@pytest.mark.parametrize("page", PAGES)
@pytest.mark.parametrize("lang", LANGUAGES)
def test_no_measurement_typed_into_prose(page, lang):
    """A number with a unit of time, rate or size comes from a record ({{ figure(...) }})."""
    text = page_source.TOKEN.sub("", page_source_of(lang, page).text)
    assert not MEASUREMENT.findall(text), f"docs/{lang}/{page}: {MEASUREMENT.findall(text)}"


def printed_texts() -> set[str]:
    """Each printed line of every record, and what follows its label ("label: value" -> value)."""
    texts = set()
    for by in STATES.states.values():
        for s in by.values():
            for line in (s.entry or {}).get("stdout", []):
                texts.add(line.strip())
                if ": " in line:
                    texts.add(line.split(": ", 1)[1].strip())
    # a bare name (`triton`, `torch.compile`) is an API, not an output
    return {t for t in texts if len(t) >= 8 and not re.fullmatch(r"[\w.()]+", t)}


@pytest.mark.parametrize("page", PAGES)
@pytest.mark.parametrize("lang", LANGUAGES)
def test_no_printed_output_typed_into_prose(page, lang):
    """Inline code that is a line a snippet printed (or its value after a label) must be an
    {{ output(...) }} token instead, e.g. `[0, 0, 0, 0, 1, 1, 1, 1, 2, 2]`."""
    text = page_source.TOKEN.sub("", page_source_of(lang, page).text)
    spans = {s.strip() for s in re.findall(r"`([^`\n]+)`", text)}
    typed = sorted(spans & printed_texts())
    assert not typed, f"docs/{lang}/{page}: output typed by hand: {typed[:3]}"


# ----------------------------------------------------------------------------- built site


def test_build_time_budget(site_dir):
    """Both languages build in under 20 s of processor time (the session's own build, measured
    by conftest.build_site: CPU time, because snippets run on the other cores meanwhile)."""
    seconds = SITE_BUILD["cpu_seconds"]
    assert seconds < 20, f"building both languages took {seconds:.1f} s of CPU (budget: 20 s)"


@pytest.mark.parametrize("page", doc_pages("en"))
def test_languages_have_the_same_heading_anchors(site_dir, page):
    en = built(site_dir, "en", page).heading_ids
    zh = built(site_dir, "zh", page).heading_ids
    assert en == zh
    assert en, f"{page} has no heading ids"


@pytest.mark.parametrize("page", PAGES)
@pytest.mark.parametrize("lang", LANGUAGES)
def test_every_badge_shows_each_platforms_state_from_the_records(site_dir, page, lang):
    expected = [p for f in page_source_of(lang, page).fences for p in f.snippet_files]
    badges = built(site_dir, lang, page).badges
    assert [b["snippet"] for b in badges] == expected
    for badge in badges:
        states = STATES.of(badge["snippet"])
        needs = records.read_snippet_needs(badge["snippet"])
        assert [s["platform"] for s in badge["states"]] == list(states)
        for shown in badge["states"]:
            s = states[shown["platform"]]
            assert shown["state"] == s.state.name
            assert shown["text"].strip() == f"{s.state.icon} {records.state_text(s, lang, needs)}"
            if s.state.name == "not-here":  # the file's own reason, in the page's language only
                kind = "cpu" if shown["platform"] == records.CPU else "gpu"
                reasons = {"en": getattr(needs, f"{kind}_skip"), "zh": needs.skip_zh[kind]}
                assert reasons[lang] in shown["text"]
                assert reasons["zh" if lang == "en" else "en"] not in shown["text"]


def test_badge_words_say_where_the_code_was_verified(site_dir):
    """The sentences themselves, so a wrong template in STATES shows up here."""
    page = "block-programming/index.md"
    record = STATES.records[CURRENT.devices[0]]
    device, cc = record["device"]["name"], record["device"]["cc"]
    vector_add = STATES.of("snippets/block-programming/vector_add.py")
    date = vector_add[CURRENT.devices[0]].entry["date"]
    en = "".join(built(site_dir, "en", page).text)
    zh = "".join(built(site_dir, "zh", page).text)
    versions = f"torch {CURRENT.torch} · triton {CURRENT.triton} · {date}"
    assert f"✓ verified on {device} (CC {cc}) · {versions}" in en
    assert f"✓ 已在 {device} (CC {cc}) 上验证 · {versions}" in zh
    assert "◇ not run on NVIDIA H200 (CC 9.0): checks a limit of the CPU interpreter" in en
    assert "◇ 不在 NVIDIA H200 (CC 9.0) 上运行：检查的是 CPU 解释器的限制" in zh


@pytest.mark.parametrize("page", PAGES)
@pytest.mark.parametrize("lang", LANGUAGES)
def test_each_shown_file_can_be_copied_whole_and_clean(site_dir, page, lang):
    """One complete file per snippet on the page: no section or annotation markers, the lock's
    pins in its PEP 723 block, and otherwise the file itself."""
    html = built_page(site_dir, lang, page).read_text(encoding="utf-8")
    title = site_hooks.TEXT[lang]["complete"]
    for path in page_source_of(lang, page).snippet_files:
        assert html.count(f"{title}: {Path(path).name}") == 1
        assert f'<span class="filename">{path}</span>' in html
    blocks = re.findall(
        r'<details class="example complete-file">.*?<span class="filename">(snippets/[^<]+)</span>'
        r".*?<code>(.*?)</code>",
        html,
        re.S,
    )
    assert sorted(p for p, _ in blocks) == sorted(page_source_of(lang, page).snippet_files)
    for path, code in blocks:
        text = html_module.unescape(re.sub(r"<[^>]+>", "", code))
        assert text == site_hooks.runnable_file(path, CURRENT, lang)  # an exercise: its language
        assert "# (1)!" not in text and "--8<--" not in text, path
        pins = ", ".join(
            f'"{p}"' for p in CURRENT.pins(records.read_snippet_needs(path).dependencies)
        )
        assert f"# dependencies = [{pins}]" in text, path
        assert f'# requires-python = "{CURRENT.python}"' in text, path
        source = (REPO / path).read_text(encoding="utf-8").splitlines()
        kept = [line for line in source if not site_hooks.SECTION_MARKER.match(line)]
        differs = [a for a, b in zip(kept, text.splitlines(), strict=True) if a != b]
        assert all(
            line.startswith("# requires-python")
            or line.startswith("# dependencies")
            or "# (" in line
            or (lang == "zh" and line.startswith('LANGUAGE = "en"'))  # an exercise's language
            for line in differs
        ), differs


def siblings_named(path: str) -> list[tuple[str, bool]]:
    """Each file or folder beside a snippet that its source names (as a string, or a module
    it imports), with whether the snippet declares it (a folder: a file inside it)."""
    file = REPO / path
    text = file.read_text(encoding="utf-8")
    declared = records.read_snippet_needs(path).files
    named = []
    for sibling in sorted(file.parent.iterdir()):
        rel = sibling.relative_to(REPO).as_posix()
        if rel == path or sibling.name == "__pycache__":
            continue
        imported = sibling.suffix == ".py" and re.search(
            rf"(?m)^\s*(?:from|import)\s+{re.escape(sibling.stem)}\b", text
        )
        if imported or re.search(rf"[\"']{re.escape(sibling.name)}[\"']", text):
            inside = (
                rel in declared
                if sibling.is_file()
                else any(d.startswith(rel + "/") for d in declared)
            )
            named.append((rel, inside))
    return named


@pytest.mark.parametrize("path", records.list_snippets())
def test_a_snippet_declares_the_files_beside_it_that_it_reads(path):
    """A file that reads a file beside it (pins.json, muladd_pkg/, a module it imports) declares
    it in `files`, so its record binds it and its page offers it in the download (issue 17: a
    copy that needed files beside it failed alone); tests/conftest.py runs each such snippet
    from its download, alone in an empty folder."""
    undeclared = [rel for rel, inside in siblings_named(path) if not inside]
    assert not undeclared, f"{path} reads {undeclared} but does not list them in `files`"


def test_the_also_needs_contract_takes_both_languages():
    head = (
        '# /// script\n# dependencies = ["torch"]\n# [tool.snippet]\n'
        '# gpu = { min-cc = "8.0" }\n# cpu = { interpreter = false }\n'
    )
    both = head + '# also-needs = "a C++ compiler"\n# also-needs-zh = "C++ 编译器"\n# ///\n'
    needs = records.parse_snippet_needs(both, "snippets/x/y.py")
    assert needs.also_needs == {"en": "a C++ compiler", "zh": "C++ 编译器"}
    assert records.parse_snippet_needs(head + "# ///\n", "snippets/x/y.py").also_needs == {}
    for one in ('# also-needs = "a C++ compiler"\n', '# also-needs-zh = "C++ 编译器"\n'):
        with pytest.raises(records.SnippetContractError, match="also-needs"):
            records.parse_snippet_needs(head + one + "# ///\n", "snippets/x/y.py")


def test_a_download_holds_exactly_the_files_its_record_binds():
    """The same bytes on every build; the snippet and each declared file at its place beside
    it; a declared file that is a snippet too, clean like its complete file."""
    archived = [p for p in records.list_snippets() if copies.has_archive(p)]
    assert "snippets/compatibility/pins_table.py" in archived
    for path in archived:
        data = copies.archive_bytes(path, CURRENT)
        assert data == copies.archive_bytes(path, CURRENT), path
        needs = records.read_snippet_needs(path)
        stem, base = Path(path).stem, path.rsplit("/", 1)[0] + "/"
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            names = archive.namelist()
            assert sorted(names) == sorted(
                f"{stem}/{rel.removeprefix(base)}" for rel in (path, *needs.files)
            )
            assert archive.read(f"{stem}/{Path(path).name}").decode() == site_hooks.runnable_file(
                path, CURRENT
            )


def test_a_download_says_when_its_run_passed():
    """The browser test runs each download alone and looks for "<stem>: all checks passed" (the
    one line a reader can check a run by): every CPU record of such a file printed it, so a file
    that ends without it fails here, before CI's browser run."""
    archived = [p for p in records.list_snippets() if copies.has_archive(p)]
    for lock in LOCKS:
        entries = {
            e["path"]: e for e in (records.load_record(lock.id, "cpu") or {}).get("snippets", [])
        }
        for path in archived:
            entry = entries.get(path)
            if entry is None or entry.get("status") != "passed":
                continue  # skipped on a CPU, or not run under this lock
            line = f"{Path(path).stem}: all checks passed"
            assert line in entry["stdout"], f"{path} ({lock.id}) never prints {line!r}"


@pytest.mark.parametrize("page", PAGES)
@pytest.mark.parametrize("lang", LANGUAGES)
def test_complete_files_say_what_else_they_need_and_offer_their_download(site_dir, page, lang):
    """Below each complete file: its declared also-needs in the page's language, and for a file
    that reads files beside it, its download, written beside the page, with the commands that
    run it (the browser test downloads it and checks the run)."""
    html = built_page(site_dir, lang, page).read_text(encoding="utf-8")
    other = "zh" if lang == "en" else "en"
    for path in page_source_of(lang, page).snippet_files:
        needs = records.read_snippet_needs(path)
        start = f'<div class="complete-file-needs" data-snippet="{path}">'
        if not (needs.also_needs or copies.has_archive(path)):
            assert start not in html, path
            continue
        assert html.count(start) == 1, path
        block = re.split(r"</details>|<details", html.split(start, 1)[1], maxsplit=1)[0]
        also = site_hooks.TEXT[lang]["also_needs"]
        if needs.also_needs:
            assert f"{also}</strong> {html_module.escape(needs.also_needs[lang])}" in block
            assert html_module.escape(needs.also_needs[other]) not in block
        else:
            assert also not in block
        name = copies.archive_name(path)
        if not copies.has_archive(path):
            assert "download" not in block
            continue
        assert f'<a href="{name}" download>' in block, path
        served = built_page(site_dir, lang, page).parent / name
        assert served.read_bytes() == copies.archive_bytes(path, CURRENT), path
        commands = html_module.escape("\n".join(copies.run_commands(path)), quote=False)
        assert f"<code>{commands}</code>" in block, path


def format_check(rendered: str, value: float) -> None:
    """A rendered number is the record's value to three significant digits, never rounded away."""
    shown = float(rendered.replace(",", ""))
    assert shown != 0 or value == 0, f"{value} shown as {rendered}"
    assert abs(shown - value) <= 0.005 * abs(value) + 1e-12, f"{value} shown as {rendered}"


@pytest.mark.parametrize("page", PAGES)
@pytest.mark.parametrize("lang", LANGUAGES)
def test_figures_and_outputs_come_from_the_records_with_their_id_cards(site_dir, page, lang):
    parsed = built(site_dir, lang, page)
    tokens = [
        t for t in page_source_of(lang, page).tokens if t.name in ("figure", "output", "target")
    ]

    def not_run_yet(token) -> bool:  # a figure or printed line a pending GPU run will add
        key = "label" if token.name == "output" else "figure"
        return records.awaits_pending_run(CURRENT, STATES.of(token.args[0]), **{key: token.args[1]})

    pending = [t for t in tokens if not_run_yet(t)]
    # a measured span with a pending figure shows one mark for the whole span, naming its first
    # file, and none of its figures
    waiting_spans = {t.span for t in pending if t.span is not None}
    first_paths = {}
    for t in page_source_of(lang, page).tokens:
        if t.span in waiting_spans and t.args:
            first_paths.setdefault(t.span, t.args[0].split()[0])
    marks = [t.args[0] for t in pending if t.span is None] + list(first_paths.values())
    shown = [u["data-snippet"] for u in parsed.unmeasured]  # tables and blocks may add some
    assert all(shown.count(p) >= marks.count(p) for p in shown + marks)
    tokens = [t for t in tokens if t not in pending and t.span not in waiting_spans]
    quotes = [q for q in parsed.quotes]
    assert len(quotes) == len(tokens)
    text = site_hooks.TEXT[lang]
    targets = iter(parsed.targets)
    for token, quote in zip(tokens, quotes, strict=True):
        path = token.args[0]
        states = STATES.of(path)
        card = parsed.cards[quote["card"]]
        if token.name == "target":  # a figure, then whether it meets the threshold
            shown = next(targets)
            value = records.quote_source(states, figure=token.args[1]).entry["figures"][
                token.args[1]
            ]["value"]
            met = value >= float(token.args[2])
            words = text["target_met" if met else "target_missed"].format(threshold=token.args[2])
            assert shown["data-met"] == str(met).lower() and words in shown["text"], shown
        if token.name in ("figure", "target"):
            s = records.quote_source(states, figure=token.args[1])
            figure = s.entry["figures"][token.args[1]]
            value = re.match(r"[-\d.,]+", quote["text"]).group(0)
            format_check(value, figure["value"])
            assert text["statistic"][figure["statistic"]] in card
            if "spread" in figure:
                low, high = re.search(r"\(([-\d.,]+)–([-\d.,]+)\)", quote["text"]).groups()
                format_check(low, figure["low"])
                format_check(high, figure["high"])
                assert text["spread"][figure["spread"]] in card
                if "repeats" in figure:  # a ratio's spread: its quantiles' ratio, no count
                    assert text["runs"].format(n=figure["repeats"]) in card
            if "compile" in figure:
                assert text["compile"][figure["compile"]] in card
            others = records.other_runs(s.entry, token.args[1])
            shown_with_others = text["other_runs"].split("{")[0] in quote["text"]
            assert shown_with_others == records.moved_between_runs(figure, others), quote
            if shown_with_others:  # never alone: each earlier value beside this run's
                listed = quote["text"].split(text["other_runs"].split("{")[0])[1]
                for v in others:
                    assert site_hooks.format_number(v) in listed, (v, listed)
            for run in s.entry.get("earlier", []):
                if token.args[1] in run["figures"]:
                    assert run["date"] in card
            for key in ("op", "shape", "dtype"):
                assert str(figure.get(key, "")) in card
        else:
            s = records.quote_source(states, label=token.args[1])
            assert quote["text"].startswith(records.find_output(s.entry, token.args[1]))
        versions = s.record["versions"]
        for part in (versions["triton"], versions["torch"].split("+")[0], s.entry["date"]):
            assert part in card
        assert records.platform_label(s.platform, s.record).split(" (")[0] in card
        assert quote["data-state"] == s.state.name
        if not s.state.verified:
            assert text["changed_since"] in card
        assert (text["alone"] in card) == bool(s.entry.get("alone")), card  # GPU to itself


@pytest.mark.parametrize("page", PAGES)
@pytest.mark.parametrize("lang", LANGUAGES)
def test_printed_blocks_and_lock_histories_are_the_recorded_lines(site_dir, page, lang):
    """An output_block shows the record's lines from its first label to its last, with a card;
    a lock_history row shows each lock's own printed line."""
    parsed = built(site_dir, lang, page)
    src = page_source_of(lang, page)

    def not_run_yet(token) -> bool:  # a pending GPU run of the file will print it
        return records.awaits_pending_run(CURRENT, STATES.of(token.args[0]), label=token.args[1])

    blocks = [t for t in src.tokens if t.name == "output_block"]
    pending = [t for t in blocks if not_run_yet(t)]
    shown_pending = [u["data-snippet"] for u in parsed.unmeasured]
    assert all(t.args[0] in shown_pending for t in pending)
    blocks = [t for t in blocks if t not in pending]
    assert len(parsed.output_blocks) == len(blocks)
    for token, shown in zip(blocks, parsed.output_blocks, strict=True):
        path, first, last = token.args
        s = records.quote_source(STATES.of(path), label=first)
        lines = s.entry["stdout"]
        start = lines.index(records.find_output(s.entry, first))
        end = next(i for i in range(start, len(lines)) if lines[i].startswith(last))
        assert shown["text"] == "\n".join(lines[start : end + 1])
        assert shown["data-state"] == s.state.name and shown["card"] in parsed.cards
        assert s.entry["date"] in parsed.cards[shown["card"]]
    html = built_page(site_dir, lang, page).read_text(encoding="utf-8")
    rows: dict[str, list[str]] = {}  # lock title -> the text of every table row it heads
    for title, cell in re.findall(r"<tr>\s*<td>(.*?)</td>\s*<td>(.*?)</td>", html, re.S):
        text = html_module.unescape(re.sub(r"<[^>]+>", "", cell))
        rows.setdefault(html_module.unescape(title), []).append(text)
    for token in (t for t in src.tokens if t.name == "lock_history"):
        path, label = token.args
        for lock in LOCKS:
            if lock.status == "retired":
                continue
            s = records.quote_source(records.lock_states(lock).of(path), label=label)
            line = records.find_output(s.entry, label)
            shown = rows.get(lock.title, [])
            assert any(text.startswith(line) for text in shown), (lock.title, line, shown)


@pytest.mark.parametrize("page", PAGES)
@pytest.mark.parametrize("lang", LANGUAGES)
def test_benchmark_tables_show_the_recorded_rows(site_dir, page, lang):
    """Every cell of a benchmark table is its record row: rate, median and quantiles, to three
    significant digits; the table's ID card names the run."""
    parsed = built(site_dir, lang, page)
    tokens = [t for t in page_source_of(lang, page).tokens if t.name == "benchmark_table"]

    def not_run_yet(token) -> bool:  # a pass that a pending GPU run of the file will add
        return records.awaits_pending_run(CURRENT, STATES.of(token.args[0]), pass_=token.args[1])

    tokens = [t for t in tokens if not not_run_yet(t)]
    assert len(parsed.benchmarks) == len(tokens)
    for token, table in zip(tokens, parsed.benchmarks, strict=True):
        path, pass_ = token.args
        s = next(s for p, s in STATES.of(path).items() if p != records.CPU)
        assert table["data-pass"] == pass_ and table["data-state"] == s.state.name
        rows = [r for r in s.entry["benchmark"] if r["pass"] == pass_]
        impls = list(dict.fromkeys(r["impl"] for r in rows))
        keys = list(dict.fromkeys((r["dtype"], tuple(r["shape"])) for r in rows))
        width = 2 + len(impls)
        assert len(table["cells"]) == width * len(keys)
        at: dict[tuple, dict] = {}  # (dtype, shape, impl) -> {clock: row}; old rows: "call"
        for r in rows:
            at.setdefault((r["dtype"], tuple(r["shape"]), r["impl"]), {})[
                r.get("clock", "call")
            ] = r
        for k, (dtype, shape) in enumerate(keys):
            cells = table["cells"][k * width : (k + 1) * width]
            assert cells[:2] == [" × ".join(map(str, shape)), dtype]
            for impl, cell in zip(impls, cells[2:], strict=True):
                by_clock = at.get((dtype, shape, impl))
                if by_clock is None:
                    assert cell == "–"
                    continue
                # the rate from the kernel time where there is one, then each clock's times
                timed = [by_clock[c] for c in ("kernel", "call") if c in by_clock]
                first = timed[0]
                expected = [first.get("gbps", first.get("tflops"))]
                for r in timed:
                    expected += [r["ms_median"], r["ms_p20"], r["ms_p80"]]
                numbers = re.findall(r"[\d.]+", cell.replace(",", ""))
                for shown, value in zip(numbers, expected, strict=True):
                    format_check(shown, value)
        card = parsed.cards[table["card"]]
        versions = s.record["versions"]
        for part in (versions["triton"], versions["torch"].split("+")[0], s.entry["date"], pass_):
            assert part in card


def nav_pages() -> list[tuple[str | None, str]]:
    """mkdocs.yml's nav, flattened: (title, source page) for every page, sections left out."""
    from mkdocs.utils import yaml_load

    def walk(items) -> list[tuple[str | None, str]]:
        found = []
        for item in items:
            if isinstance(item, str):  # a page without a title of its own
                found.append((None, item))
                continue
            [(title, value)] = item.items()
            found += walk(value) if isinstance(value, list) else [(title, value)]
        return found

    with open(REPO / "mkdocs.yml", "rb") as f:
        return walk(yaml_load(f)["nav"])


def nav_translations(lang: str) -> dict[str, str]:
    from mkdocs.utils import yaml_load

    with open(REPO / "mkdocs.yml", "rb") as f:
        plugins = yaml_load(f)["plugins"]
    i18n = next(p["i18n"] for p in plugins if isinstance(p, dict) and "i18n" in p)
    language = next(x for x in i18n["languages"] if x["locale"] == lang)
    return language.get("nav_translations") or {}


class SideNavParser(HTMLParser):
    """The page links of Material's primary (side) navigation: (href, text), in order."""

    def __init__(self) -> None:
        super().__init__()
        self.links: list[tuple[str, str]] = []
        self._depth = 0  # <nav> elements open inside the primary navigation
        self._link: list[str] | None = None

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        classes = (attrs.get("class") or "").split()
        if tag == "nav" and (self._depth or "md-nav--primary" in classes):
            self._depth += 1
        elif tag == "a" and self._depth and "md-nav__link" in classes:
            self._link = [attrs.get("href") or "", ""]

    def handle_endtag(self, tag):
        if tag == "nav" and self._depth:
            self._depth -= 1
        elif tag == "a" and self._link is not None:
            href, text = self._link
            if not href.startswith("#"):  # the page's own table of contents
                self.links.append((href, " ".join(text.split())))
            self._link = None

    def handle_data(self, data):
        if self._link is not None:
            self._link[1] += data


def side_nav_gaps(site: Path, lang: str) -> list[str]:
    """Each nav page that a built page's side navigation does not link with its own title
    (zh: its nav_translations title), as 'on <page>: <title> -> <page>'."""
    translations = nav_translations(lang) if lang != "en" else {}
    expected = [(translations.get(t, t) if t else None, p) for t, p in nav_pages()]
    gaps = [f"{page} has no title in mkdocs.yml's nav" for title, page in expected if not title]
    root = "http://site.test/"
    for shown in doc_pages(lang):
        here = root + page_url(lang, shown)
        parser = SideNavParser()
        html = built_page(site, lang, shown).read_text(encoding="utf-8")
        parser.feed(html.split('<div class="md-content"', 1)[0])  # the navigation comes first
        links = {(urljoin(here, href), text) for href, text in parser.links}
        for title, page in expected:
            if title and (root + page_url(lang, page), title) not in links:
                gaps.append(f"on {page_url(lang, shown) or lang}: {title!r} -> {page}")
    return gaps


@pytest.mark.parametrize("lang", LANGUAGES)
def test_side_navigation_links_every_page_with_its_own_title(site_dir, lang):
    """Every page of the nav is a link with its own title on every built page (issue 17: with
    `navigation.indexes`, the first chapter of each section was reachable only through the
    section's name, and "Autotuning" appeared nowhere in the navigation)."""
    assert {p for _, p in nav_pages()} == set(doc_pages(lang)), "a page is not in the nav"
    gaps = side_nav_gaps(site_dir, lang)
    assert not gaps, f"{len(gaps)} missing, e.g.:\n" + "\n".join(gaps[:12])


def test_every_state_has_its_colour_in_both_schemes():
    """A badge's colour comes from a rule for its state (records.STATES), light and dark."""
    css = (REPO / "docs/assets/verification.css").read_text(encoding="utf-8")
    for name in records.STATES:
        selector = f'.snippet-status__state[data-state="{name}"]'
        assert selector in css, f"no colour for the state {name!r}"
        if name not in ("not-here", "no-gpu"):  # muted: the theme's own light colour
            assert f'[data-md-color-scheme="slate"] {selector}' in css, name


@pytest.mark.parametrize("lang", LANGUAGES)
def test_id_cards_are_reachable_by_keyboard(site_dir, lang):
    html = built_page(site_dir, lang, "block-programming/index.md").read_text(encoding="utf-8")
    links = re.findall(r'<a class="record-card-link" href="#(id-card-\d+)"', html)
    assert links and all(f'<li id="{card}">' in html for card in links)
    assert 'title="' not in re.sub(
        r"<(?!span class=\"record)[^>]*>", "", html
    )  # no tooltip-only card


def test_language_switcher_links_are_relative(site_dir):
    """Absolute links such as /zh/ would break under a mike version prefix."""
    for lang in LANGUAGES:
        for page in doc_pages(lang):
            html = built_page(site_dir, lang, page).read_text(encoding="utf-8")
            links = re.findall(r'<a href="([^"]*)" hreflang="[^"]+"', html)
            assert len(links) == 2, (lang, page, links)
            assert not [link for link in links if link.startswith("/")], (lang, page, links)


OUTSIDE = re.compile(
    r"""<(?:script|img|iframe|source|video|audio)\b[^>]*\bsrc=["']?(?:https?:)?//"""
    r"""|<link\b(?![^>]*\brel="(?:canonical|alternate)")[^>]*\bhref=["']?(?:https?:)?//"""
    r"""|import\(\s*["'](?:https?:)?//"""
    r"""|url\(\s*["']?(?:https?:)?//"""
    r"""|@import\s+["'](?:https?:)?//""",
    re.I,
)


def test_site_loads_nothing_from_outside_hosts(site_dir):
    offenders = []
    for path in site_dir.rglob("*"):
        if path.suffix in (".html", ".css") and path.is_file():
            for m in OUTSIDE.finditer(path.read_text(encoding="utf-8", errors="replace")):
                offenders.append(f"{path.relative_to(site_dir)}: {m.group(0)}")
    assert not offenders, "\n".join(offenders[:20])


def test_chinese_search_index_is_segmented(site_dir):
    index = json.loads((site_dir / "search" / "search_index.json").read_text(encoding="utf-8"))
    assert "zh" in index["config"]["lang"]
    zh_docs = [d for d in index["docs"] if d["location"].startswith("zh/block-programming/")]
    assert zh_docs, "the Chinese chapter is not in the search index"
    text = " ".join(d["text"] for d in zh_docs)
    assert "\u200b掩码\u200b" in text, "jieba did not segment 掩码 as a word"


@pytest.mark.parametrize(
    "page", ["acceptance/index.md", "cpp-extensions/index.md", "matmul/benchmarks.ipynb"]
)
@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.filterwarnings("ignore:pkg_resources is deprecated:UserWarning")  # jieba's import
def test_search_reads_the_same_text_without_the_code_highlighting(site_dir, page, lang):
    """site_hooks gives the search plugin each page with Pygments' spans taken out of its code
    blocks (a third of the build's time went into walking them): Material's own parser must
    find the same sections, titles and text in both."""
    from material.plugins.search.plugin import Parser

    def sections(content: str) -> list[tuple]:
        parser = Parser()
        parser.feed(content)
        parser.close()
        return [(s.id, "".join(s.title), "".join(s.text)) for s in parser.data]

    content = built_page(site_dir, lang, page).read_text(encoding="utf-8")
    stripped = site_hooks.code_spans_removed(content)
    assert stripped.count("<span") < content.count("<span") / 2, "no highlighting taken out"
    found = sections(stripped)
    assert found == sections(content)
    assert any("<pre>" in text and "import " in text for _, _, text in found), "no code indexed"


@pytest.mark.parametrize("lang, path", [("en", "404.html"), ("zh", "zh/404.html")])
def test_each_language_has_its_own_404_page(site_dir, lang, path):
    """Title, heading, navigation and the links home are in the page's language."""
    html = (site_dir / path).read_text(encoding="utf-8")
    assert f'<html lang="{lang}"' in html
    title = "Triton Operators, Verified" if lang == "en" else "经过验证的 Triton 算子"
    assert title in html
    heading = "404 - Not found" if lang == "en" else "404 - 页面不存在"
    assert f"<h1>{heading}</h1>" in html
    home = "/." if lang == "en" else "/zh/"
    assert re.search(
        rf'<a href="{re.escape(home)}" title="{title}" class="md-header__button md-logo"', html
    )
    assert f'<a href="{home}">' in html  # the text's link home
    nav = "Foundations" if lang == "en" else "基础"
    assert nav in html and ("基础" if lang == "en" else "Foundations") not in html


def test_sitemap_lists_real_pages_under_site_url(site_dir):
    tree = ET.parse(site_dir / "sitemap.xml")
    ns = {"s": "http://www.sitemaps.org/schemas/sitemap/0.9"}
    urls = [loc.text for loc in tree.getroot().iterfind("s:url/s:loc", ns)]
    assert urls and not [u for u in urls if "None" in u]
    site_url = "http://127.0.0.1:8000/"
    for url in urls:
        assert url.startswith(site_url), url
        assert (site_dir / url[len(site_url) :] / "index.html").is_file(), url


@pytest.mark.parametrize("lang", LANGUAGES)
def test_notebook_pages_are_rendered_not_raw_json_and_light(site_dir, lang):
    """mkdocs-static-i18n issue 198 (raw JSON); mkdocs-jupyter's inlined CSS (upstream_fixes)."""
    path = built_page(site_dir, lang, "notebooks/reading-a-gpu-record.ipynb")
    html = path.read_text("utf-8")
    assert '"cell_type"' not in html and '"nbformat"' not in html
    assert "jp-Cell" in html and "jp-OutputArea" in html
    assert "records.lock_states(lock)" in "".join(parse(path).text)
    assert path.stat().st_size < 150_000, f"{path.stat().st_size} bytes: CSS inlined again?"
    assert (
        "assets/notebook.css" in html
        and (site_dir / "assets/notebook.css").stat().st_size > 100_000
    )


def test_inline_svg_diagram_follows_the_page_colours(site_dir):
    for lang in LANGUAGES:
        html = built_page(site_dir, lang, "block-programming/index.md").read_text("utf-8")
        svg = re.search(r"<figure class=\"diagram\">\s*<svg.*?</svg>\s*<figcaption>", html, re.S)
        assert svg, f"{lang}: no inline diagram with a caption"
        assert "currentColor" in svg.group(0) and "#" not in re.sub(r"<!--.*?-->", "", svg.group(0))


# ----------------------------------------------------------------------------- builds of copies


@pytest.fixture
def project_copy(tmp_path) -> Path:
    return copy_project(tmp_path / "project")


@pytest.mark.slow
def test_build_fails_when_a_snippet_changed_since_its_run(project_copy, tmp_path):
    snippet = project_copy / "snippets/block-programming/vector_add.py"
    snippet.write_text(snippet.read_text() + "\n# an edit after the runs\n")
    proc = build_site(project_copy, tmp_path / "out")
    assert proc.returncode != 0
    assert "vector_add.py is changed on lock" in proc.stderr


# Three builds of the site run in the CPU runs' pool (BACKGROUND_STARTS), beside the browser
# tests, instead of on the main thread; each test waits for its build (WAITS_FOR_THE_POOL: it
# runs last) and removes its folder.
SITE_BUILD_TESTS = {
    "anchor": "test_build_fails_on_a_link_to_an_anchor_that_does_not_exist",
    "pending": "test_pending_snippet_builds_and_says_so_with_its_figures",
    "properdocs": "test_properdocs_builds_the_site_and_a_lock_past_its_review_date_shows_red",
}
LATE = CURRENT.next_review.replace(year=CURRENT.next_review.year + 1).isoformat()


def site_build(name: str) -> tuple[subprocess.CompletedProcess, Path]:
    """The build a test of SITE_BUILD_TESTS checks: the site after a review date with ProperDocs,
    or a copy of the project changed by missing_anchor or pending_snippet, built strictly into
    ``folder/out``; its result and the folder."""
    folder = Path(tempfile.mkdtemp(prefix=f"site-build-{name}-"))
    try:
        if name == "properdocs":
            env = quiet_env(DOCS_TODAY=LATE)
            return build_site(REPO, folder / "out", env=env, command=("properdocs",)), folder
        project = copy_project(folder / "project")
        {"anchor": missing_anchor, "pending": pending_snippet}[name](project)
        return build_site(project, folder / "out"), folder
    except BaseException:
        shutil.rmtree(folder, ignore_errors=True)
        raise


def start_site_builds(cpu_runs, items) -> None:
    selected = {getattr(item, "originalname", item.name) for item in items}
    for name, test in SITE_BUILD_TESTS.items():
        if test in selected:
            cpu_runs.submit(("site build", name), site_build, name)


BACKGROUND_STARTS.append(start_site_builds)
WAITS_FOR_THE_POOL.update(SITE_BUILD_TESTS.values())


def pooled_build(name: str) -> tuple[subprocess.CompletedProcess, Path]:
    return CPU_RUNS.submit(("site build", name), site_build, name).result()


def missing_anchor(project: Path) -> None:
    page = project / "docs/zh/block-programming/index.md"
    page.write_text(
        page.read_text(encoding="utf-8")
        + "\n\n[a](../autotune/index.md#no-such-anchor) [b](#nor-this-one)\n",
        encoding="utf-8",
    )


@pytest.mark.slow
def test_build_fails_on_a_link_to_an_anchor_that_does_not_exist():
    """MkDocs 1.6 logs a missing anchor at info level only; mkdocs.yml's `validation:` makes it
    a warning, so the strict build stops (issue 17)."""
    proc, folder = pooled_build("anchor")
    shutil.rmtree(folder)
    assert proc.returncode != 0
    assert "does not contain an anchor '#no-such-anchor'" in proc.stderr, proc.stderr[-3000:]
    assert "'#nor-this-one', but there is no such anchor on this page" in proc.stderr


def add_pending(project: Path, path: str) -> None:
    lock_file = project / "locks" / f"{CURRENT.id}.toml"
    lock_file.write_text(
        lock_file.read_text().replace(
            "[pending]\n",
            f'[pending]\n"{path}" = '
            '{ reason = "H200 re-run booked", reason-zh = "已预约 H200 重跑", '
            f"due = {dt.date.today() + dt.timedelta(days=30)} }}\n",
        )
    )


PENDING_PATH = "snippets/block-programming/constexpr_recompile.py"  # GPU only: no CPU record


def edit_after_the_gpu_run(project: Path) -> None:
    """The README's pending path, its first steps: edit a GPU snippet, list it under [pending]."""
    snippet = project / PENDING_PATH
    snippet.write_text(snippet.read_text() + "\n# an edit after the GPU run\n")
    add_pending(project, PENDING_PATH)


def pending_snippet(project: Path) -> None:
    edit_after_the_gpu_run(project)
    new_figure = f'{{{{ figure("{PENDING_PATH}", "added_since_the_run") }}}}'  # the edit added it
    # and an order of it, which only the run can check: its whole span waits for the run
    new_order = f'{{{{ holds("{PENDING_PATH}", "1 < added_since_the_run") }}}}'
    for lang in ("en", "zh"):
        source = project / "docs" / lang / "block-programming/index.md"
        source.write_text(
            source.read_text() + f"\n\nA new figure: {new_figure}.\n\n"
            f"{{{{ measured }}}}It is above one{new_order}.{{{{ end_measured }}}}\n"
        )


@pytest.mark.slow
def test_pending_snippet_builds_and_says_so_with_its_figures():
    path = PENDING_PATH
    proc, folder = pooled_build("pending")
    try:
        assert proc.returncode == 0, proc.stderr
        page = "block-programming/index.html"
        for lang, words, span in (
            ("", "[not measured yet: the file&#x27;s GPU run is pending]",
             "[This comparison is not measured yet: the file&#x27;s GPU run is pending.]"),
            ("zh", "[尚未测量：这个文件的 GPU 运行尚待进行]",
             "[这项比较尚未测量：这个文件的 GPU 运行尚待进行。]"),
        ):  # fmt: skip
            text = (folder / "out" / lang / page).read_text()
            assert words in text and span in text, lang
            assert "It is above one" not in text
        en = parse(folder / "out" / page)
        zh = parse(folder / "out/zh" / page)
    finally:
        shutil.rmtree(folder)
    for parsed, reason, stale in (
        (en, "H200 re-run booked", "the snippet changed since this run"),
        (zh, "已预约 H200 重跑", "此后代码片段已修改"),
    ):
        badge = next(b for b in parsed.badges if b["snippet"] == path)
        gpu = next(s for s in badge["states"] if s["platform"] != records.CPU)
        assert gpu["state"] == "pending" and reason in gpu["text"]
        figure = next(q for q in parsed.quotes if q.get("data-snippet") == path)
        assert figure["data-state"] == "pending"
        assert stale in parsed.cards[figure["card"]]


def pending_path_run() -> subprocess.CompletedProcess:
    """README: edit a GPU snippet, list it under [pending], re-execute the notebooks: CI passes.
    In a copy of the project (a git clone, as CI has): the copy's own tests of the locks, of the
    notebooks the re-execution changed (the others are byte for byte the ones this session's
    tests/test_notebooks.py checks) and of the badges, as a process; its result."""
    with tempfile.TemporaryDirectory(prefix="pending-path-") as folder:
        project = copy_project(Path(folder) / "project")
        edit_after_the_gpu_run(project)
        subprocess.run(["git", "init", "-q"], cwd=project, check=True, env=environ())
        subprocess.run(["git", "add", "-A"], cwd=project, check=True, env=environ())
        executed = run_counting_cpu(
            [sys.executable, "scripts/execute_notebooks.py"], project, quiet_env(), 600
        )
        assert executed.returncode == 0, executed.stdout[-2000:] + executed.stderr[-2000:]
        changed = subprocess.run(
            ["git", "diff", "--name-only", "--", "docs"],
            cwd=project, capture_output=True, text=True, check=True, env=environ(),
        ).stdout.split()  # fmt: skip
        assert changed and all(p.endswith(".ipynb") for p in changed), changed
        notebooks = [
            "tests/test_notebooks.py::test_notebook_runs_and_its_saved_outputs_are_current["
            + str(Path(p).relative_to("docs"))
            + "]"
            for p in changed
        ]
        proc = run_counting_cpu(
            [sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider",
             "tests/test_locks.py", *notebooks,
             "tests/test_notebooks.py::test_languages_share_the_notebook_code",
             "tests/test_site.py::test_every_badge_shows_each_platforms_state_from_the_records"],
            project, quiet_env(), 900,
        )  # fmt: skip
    proc.cpu_seconds += executed.cpu_seconds
    proc.wall_seconds += executed.wall_seconds
    return proc


def start_pending_path(cpu_runs, items) -> None:
    """Queue the pending path in the CPU runs' pool (conftest.BACKGROUND_STARTS): it runs there
    once the snippet runs are done, beside the browser tests, rather than after them."""
    if any(item.name == "test_pending_path_passes_ci_as_the_readme_says" for item in items):
        cpu_runs.submit(("pending path", "README.md"), pending_path_run)


BACKGROUND_STARTS.append(start_pending_path)
WAITS_FOR_THE_POOL.add("test_pending_path_passes_ci_as_the_readme_says")


@pytest.mark.slow
def test_pending_path_passes_ci_as_the_readme_says():
    proc = CPU_RUNS.submit(("pending path", "README.md"), pending_path_run).result()
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]


@pytest.mark.slow
def test_properdocs_builds_the_site_and_a_lock_past_its_review_date_shows_red():
    """The maintained MkDocs 1.x fork builds the same site strictly: the fallback is proven.
    The same build runs on a day after the lock's review date: the audit fails CI
    (tests/test_locks.py), and the site itself says so too, on every page in each language."""
    proc, folder = pooled_build("properdocs")
    site = folder / "out"
    try:
        assert proc.returncode == 0, proc.stdout + proc.stderr
        html = (site / "block-programming/index.html").read_text("utf-8")
        assert "ProperDocs" in html and 'class="snippet-status"' in html
        assert (site / "zh/block-programming/index.html").is_file()
        for lang in LANGUAGES:
            words = site_hooks.TEXT[lang]["stale"].split("{")[0].strip()  # the banner's own words
            for page in doc_pages(lang):
                html = built_page(site, lang, page).read_text(encoding="utf-8")
                banner = re.search(
                    r'<div class="lock-stale" role="alert">\s*(.*?)\s*</div>', html, re.S
                )
                assert (
                    banner
                    and words in banner.group(1)
                    and str(CURRENT.next_review) in banner.group(1)
                )
    finally:
        shutil.rmtree(folder)


def test_a_lock_within_its_review_date_shows_no_banner(site_dir):
    for lang in LANGUAGES:
        html = built_page(site_dir, lang, "index.md").read_text(encoding="utf-8")
        assert 'class="lock-stale"' not in html
