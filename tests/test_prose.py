"""What a page's own sentences say about the records beside them.

* A sentence that calls a figure "GPU time" or "kernel time" quotes a figure measured on the kernel
  clock (``"clock": "kernel"`` in its record): a do_bench median of a launch-bound call is call
  time, and a page that calls it GPU time draws conclusions the run does not support.
* The numbers typed into a page's English and Chinese prose are the same (code and tokens aside).
* Beside a ``target`` token, no sentence says by hand whether a target was met: the token works it
  out from the record at every build; a typed "met" or "missed" is right for one run only.
* A sentence that speaks of two runs ("in both runs", "the earlier run", 两次运行, 上一次运行)
  stands on a record that keeps an earlier run of every benchmarked file it draws on (its tokens'
  files, or the page's): a file changed since its last GPU run starts its history again, and such
  a sentence must then be rewritten, not left to read as if the re-run had been made.

Each check is a function over a page's text, run on every page and, in the last tests of this
file, on small planted texts that it must fail.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache

import page_source
import pytest
import snippet_records as records
from conftest import CURRENT, REPO, markdown_pages

PAGES = markdown_pages("en")

# ----------------------------------------------------------------------------- prose units


@dataclass(frozen=True)
class Unit:
    """A sentence (or, in a table, one cell read with its column's header and its row's first
    cell), in the section (heading number) it is in."""

    text: str
    section: int

    @property
    def tokens(self) -> list[page_source.Token]:
        """Its tokens; a sentence may open or close a measured span, not both: its markers
        are left out."""
        return list(page_source.iter_tokens(page_source.SPAN_MARKER.sub("", self.text)))

    @property
    def words(self) -> str:
        """The unit's own text: tokens and code spans left out."""
        return re.sub(r"`[^`]*`", " ", page_source.TOKEN.sub(" ", self.text))


LIST_ITEM = re.compile(r"^\s*(?:[-*+]|\d+\.)\s+")
SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=\S)|(?<=[。！？；])")


def prose_lines(text: str) -> list[str]:
    """The page's lines with every fenced block blanked (code is not prose)."""
    lines = text.split("\n")
    for fence in page_source.iter_fences(lines):
        for i in range(fence.start, fence.end + 1):
            lines[i] = ""
    return lines


def sentences(text: str) -> list[str]:
    """``text`` split after each sentence's end, tokens kept whole (their dots end nothing)."""
    tokens: list[str] = []

    def hide(m: re.Match) -> str:
        tokens.append(m.group(0))
        return f"\0{len(tokens) - 1}\0"

    hidden = page_source.TOKEN.sub(hide, text)
    parts = [p for p in SENTENCE_END.split(hidden) if p.strip()]
    return [re.sub(r"\0(\d+)\0", lambda m: tokens[int(m.group(1))], p).strip() for p in parts]


def table_cells(row: str) -> list[str]:
    return [c.strip() for c in row.strip().strip("|").split("|")]


def prose_units(text: str) -> list[Unit]:
    units: list[Unit] = []
    section = 0
    paragraph: list[str] = []

    def flush() -> None:
        if not paragraph:
            return
        if all(line.lstrip().startswith("|") for line in paragraph):  # a table
            rows = [table_cells(r) for r in paragraph if not re.fullmatch(r"[\s|:-]+", r)]
            header, body = rows[0], rows[1:]
            units.extend(Unit(" ".join(header), section) for _ in [0] if header)
            for row in body:
                for i, cell in enumerate(row):
                    head = header[i] if i < len(header) else ""
                    units.append(Unit(f"{head} | {row[0]} | {cell}", section))
        else:
            items: list[str] = []
            for line in paragraph:
                if LIST_ITEM.match(line) or not items:
                    items.append(LIST_ITEM.sub("", line))
                else:
                    items[-1] += " " + line.strip()
            for item in items:
                units.extend(Unit(s, section) for s in sentences(item.strip()))
        paragraph.clear()

    for line in prose_lines(text):
        if re.match(r"^#{1,6}\s", line):
            flush()
            section += 1
            units.append(Unit(line, section))
        elif not line.strip():
            flush()
        else:
            paragraph.append(line)
    flush()
    return units


def page_text(lang: str, page: str) -> str:
    return (REPO / "docs" / lang / page).read_text(encoding="utf-8")


# ----------------------------------------------------------------------------- clocks

# Words that name the GPU's own time of the kernels.
KERNEL_CLOCK_WORDS = re.compile(r"\bGPU[- ]time\b|\bkernel[- ]time\b|GPU\s*时间|内核时间", re.I)
# Words that name a figure's own clock, which a sentence may name beside "GPU time".
OWN_CLOCK_WORDS = {
    "call": re.compile(r"\bcall time\b|host launch included|含主机端启动", re.I),
    "wall": re.compile(r"\bwall[- ]clock\b|墙钟", re.I),
}


@cache
def lock_states() -> records.LockStates:
    return records.lock_states(CURRENT)


def recorded_figure(path: str, name: str) -> dict | None:
    """The figure a page shows (records.quote_source), or None when no record has it yet."""
    try:
        s = records.quote_source(lock_states().of(path), figure=name)
    except (LookupError, KeyError):
        return None
    return s.entry["figures"][name]


def benchmark_clocks(path: str, pass_: str) -> list[str | None]:
    for platform, s in lock_states().of(path).items():
        if platform != records.CPU and s.entry and s.entry.get("benchmark"):
            return [r.get("clock") for r in s.entry["benchmark"] if r["pass"] == pass_]
    return []


def clock_label_problems(text: str, figure=recorded_figure, rows=benchmark_clocks) -> list[str]:
    """Each figure that a sentence calls GPU or kernel time whose record says another clock, or
    none (``figure(path, name)`` and ``rows(path, pass)`` read the records)."""
    problems = []
    for unit in prose_units(text):
        if not KERNEL_CLOCK_WORDS.search(unit.words):
            continue
        for token in unit.tokens:
            if token.args and token.args[0] in CURRENT.pending:
                continue  # an earlier version's figure, marked so on the page; its re-run is due
            if token.name in ("figure", "target"):
                found = figure(*token.args[:2])
                clocks = [] if found is None else [found.get("clock")]
            elif token.name == "benchmark_table":
                clocks = rows(*token.args[:2])
            else:
                continue
            for clock in set(clocks):
                if clock == "kernel":
                    continue
                if clock in OWN_CLOCK_WORDS and OWN_CLOCK_WORDS[clock].search(unit.words):
                    continue  # the sentence names this figure's own clock too
                problems.append(
                    f"{token.text} is {clock or 'of no stated'} clock, and the sentence calls it "
                    f"GPU or kernel time: {unit.text[:160]!r}"
                )
    return problems


@pytest.mark.parametrize("page", PAGES)
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_figure_called_gpu_time_was_measured_on_the_kernel_clock(page, lang):
    problems = clock_label_problems(page_text(lang, page))
    assert not problems, (
        f"docs/{lang}/{page}: name each figure by its clock (kernel time, call time (host launch "
        'included), wall-clock time; the record\'s "clock"):\n' + "\n".join(problems)
    )


# ----------------------------------------------------------------------------- numbers

SUPERSCRIPTS = str.maketrans("⁰¹²³⁴⁵⁶⁷⁸⁹", "0123456789")
NUMBER = re.compile(r"(?<![A-Za-z_\d.])\d+(?:[.,]\d+)*(?:\^\d+)?")  # not int64's 64


def prose_numbers(text: str) -> set[str]:
    """The numbers typed into a page's prose: outside code, tokens, link targets, HTML tags and
    heading anchors; 2³¹ read as 2^31, 16,384 as 16384; single digits left out (either language
    may spell them: "one", "一维", "2-D"), and digits inside a name (int64, cp312, H200)."""
    t = "\n".join(prose_lines(text))
    t = page_source.TOKEN.sub(" ", t)
    t = re.sub(r"`[^`]+`", " ", t)  # inline code, also across a line break
    t = re.sub(r"(?m)^\[[^\]]+\]:\s*\S+.*$", " ", t)  # link definitions
    t = re.sub(r"\]\([^)]*\)|\]\[[^\]]*\]", "]", t)  # link targets
    t = re.sub(r"<[^>]+>", " ", t)
    t = re.sub(r"\{\s*[#.][^}]*\}", " ", t)  # { #anchor } and attribute lists
    t = re.sub(r"(?m)^\s*\d+\.\s", " ", t)  # the numbers of ordered lists
    t = re.sub(r"[⁰¹²³⁴⁵⁶⁷⁸⁹]+", lambda m: "^" + m.group(0).translate(SUPERSCRIPTS), t)
    found = {m.group(0).replace(",", "") for m in NUMBER.finditer(t)}
    return {n for n in found if not re.fullmatch(r"\d", n)}


@pytest.mark.parametrize("page", PAGES)
def test_english_and_chinese_prose_type_the_same_numbers(page):
    en, zh = (prose_numbers(page_text(lang, page)) for lang in ("en", "zh"))
    assert en == zh, (
        f"{page}: numbers only in the English prose: {sorted(en - zh)}; only in the Chinese: "
        f"{sorted(zh - en)}"
    )


# ----------------------------------------------------------------------------- targets

# A verdict on a target: "the target was missed", "both targets are met", "reached the bandwidth
# target", "没达标", "没有哪个内核达到带宽目标". Not: "the target can only be met by a tie" (how
# to read it), "a missed target", "没达标时怎么读" (when, if).
VERDICT_EN = re.compile(
    r"\btargets?\b[^.;:]{0,40}?\b(?:is|are|was|were)\s+(?:not\s+|never\s+|all\s+|both\s+)?"
    r"(?:met|missed|reached|out of reach)\b"
    r"|\b(?:met|meets|missed|misses|reached|reaches|achieved|achieves|hits?|falls? short of"
    r"|fell short of)\s+(?:\w+\s+){0,3}?targets?\b",
    re.I,
)
VERDICT_ZH = re.compile(
    r"(?:没有|没|未能|未|不)?达标"
    r"|(?:没有|没|未能|未|不)?达到[^。；，：]{0,10}目标"
    r"|目标[^。；，：]{0,10}?(?:没有|没|未能|未|不)?达到"
)
ZH_MODAL = r"如果|若|只能|才能|可能|可以|要"
ZH_NOT_A_VERDICT = re.compile(rf"(?:{ZH_MODAL})[^。；，：]{{0,6}}$")


def verdict(words: str) -> str | None:
    """The words of ``words`` that state whether a target was met, or None."""
    found = VERDICT_EN.search(TARGET_KIND.sub(" ", words))
    if found:
        return found.group(0)
    for m in VERDICT_ZH.finditer(words):
        if words[m.end() : m.end() + 1] in ("时", "的"):  # "没达标时", "没达标的格"
            continue
        if ZH_NOT_A_VERDICT.search(words[: m.start()]) or re.search(ZH_MODAL, m.group(0)):
            continue  # "如果没达标", "目标也可能没达到"
        return m.group(0)
    return None


# "a met target", "every missed target": how to read the tokens, not a verdict on one of them.
TARGET_KIND = re.compile(r"\b(?:a|an|each|every|any)\s+(?:met|missed)\s+targets?\b", re.I)


def target_verdict_problems(text: str) -> list[str]:
    """Sentences (not headings) in a section that shows ``target`` tokens which say by hand
    whether a target was met."""
    units = prose_units(text)
    sections = {u.section for u in units if any(t.name == "target" for t in u.tokens)}
    return [
        f"{found!r} in {u.text[:160]!r}"
        for u in units
        if u.section in sections and not u.text.startswith("#") and (found := verdict(u.words))
    ]


@pytest.mark.parametrize("page", PAGES)
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_no_sentence_types_a_verdict_beside_target_tokens(page, lang):
    problems = target_verdict_problems(page_text(lang, page))
    assert not problems, (
        f"docs/{lang}/{page}: the target tokens say met or missed from the record at each build; "
        "say what limits the kernel, not whether it met the target:\n" + "\n".join(problems)
    )


# ----------------------------------------------------------------------------- two runs

# Words that say a figure or an outcome was seen in two runs, or in a run before the latest.
TWO_RUNS = re.compile(
    r"\bboth runs\b|\beither run\b|\btwo runs\b|\bearlier run\b|\brun before\b"
    r"|\bbetween runs\b|\bone run to the next\b|\brun[- ]to[- ]run\b"
    r"|两次运行|上一次运行|前一次运行|不同次运行",
    re.I,
)


def token_paths(token: page_source.Token) -> list[str]:
    """The snippet files a token reads (its first argument: one path, or several)."""
    if token.args and isinstance(token.args[0], str) and token.args[0].endswith(".py"):
        return token.args[0].split()
    return []


def gpu_runs(path: str) -> int | None:
    """How many runs of ``path`` the current lock's GPU record keeps (the latest and its earlier
    ones, of the same file), or None where it keeps no benchmark of it."""
    for platform, s in lock_states().of(path).items():
        if platform == records.CPU or not s.entry:
            continue
        if any("clock" in f for f in s.entry.get("figures", {}).values()):
            return 1 + len(s.entry.get("earlier", []))
    return None


def two_run_problems(text: str, runs=gpu_runs) -> list[str]:
    """Sentences that speak of two runs where a benchmarked file they draw on (the sentence's
    tokens' files, else every file of the page's tokens) has one run on record."""
    units = prose_units(text)
    page_paths = {p for u in units for t in u.tokens for p in token_paths(t)}
    problems = []
    for unit in units:
        found = TWO_RUNS.search(unit.words)
        if not found:
            continue
        own = {p for t in unit.tokens for p in token_paths(t)}
        for path in sorted(own or page_paths):
            if path in CURRENT.pending:
                continue
            n = runs(path)
            if n is not None and n < 2:
                problems.append(f"{path} has one run on record: {found.group(0)!r} in "
                                f"{unit.text[:160]!r}")  # fmt: skip
    return problems


@pytest.mark.parametrize("page", PAGES)
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_sentence_about_two_runs_has_two_runs_on_record(page, lang):
    problems = two_run_problems(page_text(lang, page))
    assert not problems, (
        f"docs/{lang}/{page}: the record keeps one run of these files (changed since their last "
        "GPU run, or run once): say what the latest run shows, or re-run them first:\n"
        + "\n".join(problems)
    )


# ----------------------------------------------------------------------------- planted defects


def test_planted_gpu_time_labels_are_caught():
    figures = {
        ("a.py", "k"): {"clock": "kernel"},
        ("a.py", "c"): {"clock": "call"},
        ("a.py", "n"): {},
        ("a.py", "w"): {"clock": "wall"},
    }
    figure = lambda path, name: figures[path, name]  # noqa: E731
    rows = lambda path, pass_: ["kernel", "call"]  # noqa: E731
    fig = lambda name: f'{{{{ figure("a.py", "{name}") }}}}'  # noqa: E731
    good = (
        f"The kernel time is {fig('k')}. The call time (host launch included) is {fig('c')}.\n\n"
        f"其内核时间是 {fig('k')}。墙钟时间是 {fig('w')}。\n\n"
        f"Its GPU time, {fig('k')}, against the wall-clock time of a call, {fig('w')}.\n"
    )
    assert clock_label_problems(good, figure, rows) == []
    for planted in (
        f"The GPU time per call is {fig('c')} (e.g. for one token).",
        f"每次调用的 GPU 时间是 {fig('n')}。",
        f"Kernel time: {fig('w')}, a median of 100 runs.",
        "| size | GPU time |\n| --- | --- |\n| 2^24 | " + fig("c") + " |",
        'Forward, GPU time per call:\n{{ benchmark_table("a.py", "forward") }}',
    ):
        assert clock_label_problems(planted, figure, rows), planted


def test_planted_number_differences_are_caught():
    en = "Grid axis 1 takes at most 65,535 programs; offsets past 2^31 need int64 (0.95 of it)."
    zh = "网格第 1 维最多 65535 个程序；超过 2³¹ 的偏移要用 int64（它的 0.95）。"
    assert prose_numbers(en) == prose_numbers(zh) == {"65535", "2^31", "0.95"}
    assert prose_numbers(zh.replace("65535", "65536")) != prose_numbers(en)
    assert prose_numbers(zh.replace("0.95", "0.9")) != prose_numbers(en)
    code = 'See `x = 12345` and {{ figure("a.py", "b_12") }} in [§3](x.md#s-42) { #a-77 }.'
    assert prose_numbers(code) == set()


def test_planted_verdicts_beside_targets_are_caught():
    table = '| ratio | {{ target("a.py", "r", "0.95") }} |\n| --- | --- |\n'
    reading = (
        "A met target holds at every shape. The target can only be met by a tie; all of them "
        "meet the same roof. 某一格没达标时怎么读。目标也可能没达到。\n\n"
        "### How to read a missed target\n"
    )
    assert target_verdict_problems(f"## Results\n\n{table}\nThe copy moved 4 GB. {reading}") == []
    for planted in (
        "Both targets are met.",
        "The kernel misses the bandwidth target at 4096.",
        "It reached the target in one run.",
        "带宽目标没达到。",
        "两个目标都达标了。",
        "Why the bandwidth target was missed: the copy is the roof.",
        "No kernel in the table reached the bandwidth target.",
        "表中没有哪个内核达到带宽目标。",
    ):
        assert target_verdict_problems(f"## Results\n\n{table}\n{planted}\n"), planted
        # in another section, the same words are not beside a target
        assert target_verdict_problems(f"## Results\n\n{table}\n## Method\n\n{planted}\n") == []


def test_planted_two_run_sentences_are_caught():
    runs = {"a.py": 2, "b.py": 1, "c.py": None}.get
    fig = lambda path: f'{{{{ figure("{path}", "x") }}}}'  # noqa: E731
    good = (
        f"In both runs {fig('a.py')} held. The latest run of {fig('b.py')} is all there is.\n\n"
        f"两次运行里 {fig('a.py')} 都守住了。{fig('c.py')} 在上一次运行里没有计时。\n"
    )
    assert two_run_problems(good, runs) == []
    for planted in (
        f"In both runs {fig('b.py')} held.",
        f"{fig('a.py')} and {fig('b.py')}: the earlier run was slower.",
        f"上一次运行里 {fig('b.py')} 更快。",
        f"A table: {fig('b.py')}.\n\nEvery cell lay on the same side of 0.97 in both runs.",
        f"Made on {fig('a.py')} and {fig('b.py')}.\n\n这张表的每一格两次运行都落在同一侧。",
        f"The factor {fig('b.py')} moved between runs of the same file on this machine.",
        f"这个倍数 {fig('b.py')} 在同一个文件的不同次运行之间会变。",
    ):
        assert two_run_problems(planted, runs), planted
