"""Defect classes that a planted-defect run against the suite once missed (issue 17, item 6), each
checked here against the records:

* the verification matrix ({{ verification_matrix }}) shows each snippet's state on each
  platform of each lock, as the records say, with the date of the run it speaks for;
* a figure's unit agrees with its name, and a measured rate is the amount it moved (or computed)
  over the median time it printed beside it.

(The runner's handling of a crash is in tests/test_runner.py; numbers in en and zh prose, GPU-time
labels and typed target verdicts in tests/test_prose.py; a [pending] entry past its due date in
tests/test_locks.py; each snippet's own check proven able to fail in tests/test_mutations.py.)
"""

from __future__ import annotations

import datetime as dt
import re
from html.parser import HTMLParser

import pytest
import site_hooks
import snippet_records as records
from conftest import CURRENT, LANGUAGES, LOCKS

# ----------------------------------------------------------------------------- the matrix


class MatrixParser(HTMLParser):
    """The tables of a page: per table, its rows; per row, its cells; per cell, its text and
    the state spans (data-state, data-platform, their text) in it."""

    def __init__(self) -> None:
        super().__init__()
        self.tables: list[list[list[dict]]] = []
        self._cell: dict | None = None
        self._span: dict | None = None
        self._span_depth = 0

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "table":
            self.tables.append([])
        elif tag == "tr" and self.tables:
            self.tables[-1].append([])
        elif tag in ("td", "th") and self.tables:
            self._cell = {"text": "", "states": []}
            self.tables[-1][-1].append(self._cell)
        elif tag == "span" and self._cell is not None:
            if "data-state" in attrs and self._span is None:
                self._span = {"state": attrs["data-state"], "platform": attrs.get("data-platform")}
                self._span["text"] = ""
                self._cell["states"].append(self._span)
                self._span_depth = 0
            if self._span is not None:
                self._span_depth += 1
        elif tag == "br" and self._cell is not None:
            self._cell["text"] += " "

    def handle_endtag(self, tag):
        if tag in ("td", "th"):
            self._cell = None
        elif tag == "span" and self._span is not None:
            self._span_depth -= 1
            if self._span_depth == 0:
                self._span = None

    def handle_data(self, data):
        if self._cell is not None:
            self._cell["text"] += data
        if self._span is not None:
            self._span["text"] += data


def matrix_problems(page_html: str, lang: str) -> list[str]:
    """Every cell of the verification matrix that differs from the records: its states (one per
    platform, in the lock's order), platforms, words and dates; every snippet has a row."""
    parser = MatrixParser()
    parser.feed(page_html)
    first = site_hooks.TEXT[lang]["table"][0]
    tables = [t for t in parser.tables if t and t[0] and t[0][0]["text"].strip() == first]
    if len(tables) != 1:
        return [f"{len(tables)} verification matrices on the page, expected 1"]
    header, *rows = tables[0]
    locks = [lock for lock in LOCKS if lock.status != "retired"]
    expected_head = [f"{lock.title} {kind}" for lock in locks for kind in ("CPU", "GPU")]
    head = [" ".join(c["text"].split()) for c in header[1:]]
    if head != expected_head:
        return [f"columns {head}, expected {expected_head}"]
    problems = []
    shown = {}
    for row in rows:
        path = "snippets/" + row[0]["text"].strip()
        shown[path] = row[1:]
    missing = sorted(set(records.list_snippets()) - set(shown))
    extra = sorted(set(shown) - set(records.list_snippets()))
    if missing or extra:
        problems.append(f"rows missing: {missing}; rows for no snippet: {extra}")
    for lock in locks:
        states = records.lock_states(lock)
        for path, cells in shown.items():
            if path not in states.states:
                continue
            by = states.of(path)
            for kind, cell in zip(("CPU", "GPU"), cells[2 * locks.index(lock) :], strict=False):
                want = [s for p, s in by.items() if (p == records.CPU) == (kind == "CPU")]
                got = cell["states"]
                where = f"{path} · {lock.id} · {kind}"
                if [(g["state"], g["platform"]) for g in got] != [
                    (s.state.name, s.platform) for s in want
                ]:
                    problems.append(
                        f"{where}: shows {[(g['state'], g['platform']) for g in got]}, the "
                        f"records say {[(s.state.name, s.platform) for s in want]}"
                    )
                    continue
                for g, s in zip(got, want, strict=True):
                    date = (s.entry or {}).get("date")
                    dated = s.state.name not in ("not-here", "no-gpu") and date
                    if s.state.short(lang) not in g["text"]:
                        problems.append(f"{where}: {g['text']!r} lacks {s.state.short(lang)!r}")
                    if dated and date not in g["text"]:
                        problems.append(f"{where}: {g['text']!r} lacks the run's date {date}")
                    if not dated and re.search(r"\d{4}-\d\d-\d\d", g["text"]):
                        problems.append(f"{where}: {g['text']!r} gives a date for no run")
    return problems


@pytest.mark.parametrize("lang", LANGUAGES)
def test_the_verification_matrix_shows_each_records_state(site_dir, lang):
    from conftest import built_page

    page_html = built_page(site_dir, lang, "verification.md").read_text(encoding="utf-8")
    problems = matrix_problems(page_html, lang)
    assert not problems, f"{lang} verification matrix:\n" + "\n".join(problems[:20])


def test_a_planted_wrong_cell_in_the_matrix_is_caught(monkeypatch):
    """The matrix as the hook renders it passes; a cell whose state, platform or date is off,
    or a lock's columns swapped, fails (the hook's own functions, no build)."""
    state = site_hooks.BuildState(CURRENT, records.lock_states(CURRENT), dt.date.today())
    monkeypatch.setattr(site_hooks, "STATE", state)
    html = matrix_table("en")
    assert matrix_problems(html, "en") == []
    verified = 'data-state="verified" data-platform="cpu"'
    assert verified in html
    assert matrix_problems(
        html.replace(verified, 'data-state="changed" data-platform="cpu"', 1), "en"
    )
    date = re.search(r"verified · (\d{4}-\d\d-\d\d)", html).group(1)
    assert matrix_problems(html.replace(f"verified · {date}", "verified · 1999-01-01", 1), "en")
    cpu, gpu = (f"{LOCKS[0].title}<br>{k}" for k in ("CPU", "GPU"))
    swapped = html.replace(cpu, "\0").replace(gpu, cpu).replace("\0", gpu)
    assert matrix_problems(swapped, "en")


def matrix_table(lang: str) -> str:
    """The matrix's Markdown table rendered to HTML, as the build renders it."""
    import markdown

    return markdown.markdown(site_hooks.verification_matrix(lang), extensions=["tables"])


# ----------------------------------------------------------------------------- figures


def recorded_figures() -> list[tuple[str, str, str, dict]]:
    """(record, path, name, figure) of every figure of every passed row of every record."""
    found = []
    for lock in LOCKS:
        for platform in lock.record_platforms:
            record = records.load_record(lock.id, platform) or {"snippets": []}
            for entry in record["snippets"]:
                for name, figure in entry["figures"].items():
                    found.append((f"{lock.id}.{platform}", entry["path"], name, figure))
    return found


def test_every_figure_in_the_records_has_the_unit_its_name_says():
    """Also checked when a record is loaded (records.validate_figure): listed here by name."""
    problems = []
    for where, path, name, figure in recorded_figures():
        try:
            records.validate_figure(name, figure, min_repeats=1)
        except ValueError as exc:
            problems.append(f"{where}: {path}: {exc}")
    assert not problems, "\n".join(problems)


def test_every_measured_rate_in_the_records_is_its_amount_over_its_time():
    """A GB/s, TB/s or TFLOP/s figure says what it moved or computed and the median time it
    took (bytes or flops, and ms_median, printed with it), and its value is their quotient."""
    lacking = [
        f"{where}: {path}: {name} ({figure['unit']})"
        for where, path, name, figure in recorded_figures()
        if figure.get("unit") in records.FIGURE_RATES
        and figure["statistic"] != "spec"
        and "ms_median" not in figure
    ]
    assert not lacking, (
        "print each measured rate with its amount and time, e.g. "
        '{"value": 4372, "unit": "GB/s", "bytes": 3221225472, "ms_median": 0.7368, ...}:\n'
        + "\n".join(lacking)
    )


MEASURED = {
    "value": 1.5,
    "unit": "ms",
    "statistic": "median",
    "spread": "p20-p80",
    "low": 1.2,
    "high": 1.9,
    "repeats": 5,
    "op": "x + y",
    "compile": "excluded",
}


@pytest.mark.parametrize(
    "name, changes, message",
    [
        ("add_ms", {"unit": "µs"}, "its name says ms"),
        ("add_us", {}, "its name says µs"),
        ("add_gbps", {}, "its name says GB/s"),
        ("eager_over_triton", {}, "is a ratio"),
        ("t", {"clock": "gpu"}, "clock must be one of"),
        ("t_gbps", {"unit": "GB/s", "value": 4000, "bytes": 2**30, "ms_median": 0.5}, "is not"),
        ("t_gbps", {"unit": "GB/s", "value": 4000, "ms_median": 0.5}, "gives bytes and ms_median"),
        ("t_tflops", {"unit": "TFLOP/s", "value": 700, "bytes": 10, "ms_median": 0.5}, "flops"),
    ],
)
def test_a_planted_unit_or_rate_defect_is_refused(name, changes, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        records.validate_figure(name, {**MEASURED, **changes})


def test_a_rate_that_is_its_amount_over_its_time_is_accepted():
    bytes_ = 3 * 2**28 * 4  # x + y = out, float32, n = 2**28
    figure = {**MEASURED, "unit": "GB/s", "bytes": bytes_, "ms_median": 0.7368, "clock": "call"}
    records.validate_figure("triton_gbps", {**figure, "value": round(bytes_ / 0.7368 / 1e6)})
    for clock in records.FIGURE_CLOCKS:
        records.validate_figure("t_ms", {**MEASURED, "clock": clock})
    with pytest.raises(ValueError, match="clock"):
        records.validate_benchmark_row(
            {"impl": "triton", "pass": "forward", "shape": [4], "dtype": "float32",
             "ms_median": 0.1, "ms_p20": 0.1, "ms_p80": 0.1, "repeats": 3, "bytes": 10**6,
             "gbps": 10.0, "clock": "host"}
        )  # fmt: skip


def test_the_id_card_names_the_clock_in_both_languages():
    card = {lang: site_hooks.figure_card(lang, {**MEASURED, "clock": "call"}) for lang in LANGUAGES}
    assert "call time (host launch included)" in card["en"]
    assert "每次调用时间（含主机端启动）" in card["zh"]
    for lang in LANGUAGES:
        assert set(site_hooks.TEXT[lang]["clock"]) == set(records.FIGURE_CLOCKS)
    assert site_hooks.TEXT["zh"]["clock"]["kernel"] == "内核时间"
    assert site_hooks.TEXT["zh"]["clock"]["wall"] == "墙钟时间"
