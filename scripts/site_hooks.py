"""MkDocs hook: what the records say, put beside the code on every page, in both languages.

The rule it enforces: nothing on a page is typed by hand that a record or a lock can say.

* Before each fenced block that includes ``snippets/...``: a badge with the snippet's state on
  every platform of the lock being built (its GPU devices and the CPU), from the records.
* After the first such block of each file on a page (and after its code annotations): a collapsed
  "complete runnable file", clean of section markers and annotation markers, whose PEP 723 block
  carries the lock's Python range and pins, so a reader can copy it and run it as is; below it,
  what else the file needs (its declared ``also-needs``) and, for a file that reads files beside
  it, one download of them all, written beside the page, with the commands that run it
  (scripts/snippet_copies.py).
* Tokens in page text (see TOKENS): figures and printed outputs from records, each with an ID
  card listed at the end of the page; lock facts; the verification table; inline SVG.
* A snippet whose state blocks CI (changed, failed, not run...) is a build warning, so
  ``mkdocs build --strict`` fails; a lock past its review date gets a red banner on every page.

Build another lock's site with ``DOCS_LOCK=<lock id> mkdocs build``. ``DOCS_DRAFT=1`` previews a
page whose snippets have no records yet: a missing figure or output shows as a marked gap and
unverified snippets are not warnings (never set in CI: the tests build without it). The
workarounds for other packages live in scripts/upstream_fixes.py.
"""

from __future__ import annotations

import datetime as dt
import fnmatch
import html
import itertools
import logging
import math
import os
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

import jinja2
import jinja2.bccache
from mkdocs import plugins
from mkdocs.exceptions import PluginError

sys.path.insert(0, str(Path(__file__).resolve().parent))
import history_page  # noqa: E402
import history_records  # noqa: E402
import page_source  # noqa: E402
import snippet_copies as copies  # noqa: E402
import snippet_records as records  # noqa: E402
from snippet_copies import ANNOTATION_MARKER, SECTION_MARKER, runnable_file  # noqa: E402, F401

log = logging.getLogger("mkdocs.hooks.verification")

TEXT = {
    "en": {
        "complete": "Complete runnable file",
        "also_needs": "Also needs:",
        "download": (
            "{file} reads {others} when it runs: download {archive}, which holds {file} and what "
            "it reads, as they ran for this lock's records. Then, in the folder you saved it to:"
        ),
        "lock": "{title} — reviewed {reviewed}, next review {next_review}",
        "stale": (
            "This lock was due for review on {next_review}: its versions and records may be out "
            "of date."
        ),
        "table": ("Snippet", "CPU", "GPU"),
        "legend": ("State", "What the badge says", "CI fails"),
        "yes_no": ("yes", "no"),
        "cards": "ID cards of the figures on this page",
        "card": "ID card",
        "card_back": "back to the text",
        "printed": "printed by {file}",
        "changed_since": "the snippet changed since this run",
        "alone": "nothing else ran on the GPU meanwhile",
        "pending": "a GPU re-run is pending",
        "runs": "{n} runs",
        "other_runs": "earlier runs of this file: {values}",
        "earlier": "earlier runs of the same file (same sha256): {runs}",
        "list": ", ",
        "list_last": " and ",
        "spread": {"min-max": "range", "p20-p80": "20–80 % quantiles"},
        "statistic": {
            "median": "median",
            "mean": "mean",
            "min": "minimum",
            "count": "count",
            "ratio": "ratio",
            "spec": "datasheet value",
        },
        "compile": {"included": "compile time included", "excluded": "compile time excluded"},
        "clock": {  # records.FIGURE_CLOCKS
            "kernel": "kernel time",
            "call": "call time (host launch included)",
            "wall": "wall-clock time",
        },
        "reference": "against {reference}",
        "unmeasured": "not measured for this lock (no GPU run)",
        "unmeasured_span": "This comparison is not measured for this lock (no GPU run).",
        "unmeasured_span_pending": (
            "[This comparison is not measured yet: the file's GPU run is pending.]"
        ),
        "unmeasured_pending": "[not measured yet: the file's GPU run is pending]",
        "lock_column": "Lock",
        "printed_column": "What the claim printed",
        "bench_shape": "shape",
        "target_met": "target ≥ {threshold}: met",
        "target_missed": "target ≥ {threshold}: missed",
        "bench_card": (
            "{pass_}: GPU time per call, median and 20–80 % quantiles of {runs} runs each "
            "(triton.testing.do_bench, L2 cache cleared before each run), compile time "
            "excluded; {unit} = the bytes or FLOPs the row states over the median time"
        ),
        "bench_caption": (
            "Each cell: {unit}, then the median time per call and its 20–80 % quantiles."
        ),
        "bench_card_clocks": (
            "{pass_}: kernel time, the device time of the kernels and copies one call launched "
            "(torch.profiler, CUPTI), median and 20–80 % quantiles of {kernel_runs} calls, the L2 "
            "cache flushed before each; call time (host launch included), CUDA events around each "
            "call, each started on an idle GPU with the L2 cache flushed, median and 20–80 % "
            "quantiles of {call_runs} calls; compile time excluded; {unit} = the bytes or FLOPs "
            "the row states over the median kernel time"
        ),
        "bench_caption_clocks": (
            "Each cell: {unit} from the kernel time, the median kernel time and its 20–80 % "
            "quantiles, then the median call time (host launch included) and its quantiles."
        ),
        "bench_kernel": "kernel",
        "bench_call": "call",
    },
    "zh": {
        "complete": "完整可运行文件",
        "also_needs": "另外还需要：",
        "download": (
            "{file} 运行时要读取 {others}。请下载 {archive}：里面有 {file} 和它要读取的文件，"
            "与本锁定版本记录里运行的完全相同。然后在保存它的目录里执行："
        ),
        "lock": "{title}，审阅于 {reviewed}，下次审阅 {next_review}",
        "stale": "本锁定版本原定 {next_review} 重新审阅，现已过期：其中的版本和记录可能已经过时。",
        "table": ("代码片段", "CPU", "GPU"),
        "legend": ("状态", "徽章上的说法", "CI 是否失败"),
        "yes_no": ("是", "否"),
        "cards": "本页数字的身份证",
        "card": "身份证",
        "card_back": "回到正文",
        "printed": "{file} 的输出",
        "changed_since": "此后代码片段已修改",
        "alone": "运行期间这块 GPU 上没有跑别的任务",
        "pending": "等待 GPU 重新运行",
        "runs": "{n} 次运行",
        "other_runs": "这个文件此前的运行：{values}",
        "earlier": "同一文件（sha256 相同）更早的运行：{runs}",
        "list": "、",
        "list_last": " 和 ",
        "spread": {"min-max": "范围", "p20-p80": "20%–80% 分位数"},
        "statistic": {
            "median": "中位数",
            "mean": "平均值",
            "min": "最小值",
            "count": "计数",
            "ratio": "比值",
            "spec": "规格书数值",
        },
        "compile": {"included": "含编译时间", "excluded": "不含编译时间"},
        "clock": {
            "kernel": "内核时间",
            "call": "每次调用时间（含主机端启动）",
            "wall": "墙钟时间",
        },
        "reference": "对照 {reference}",
        "unmeasured": "本锁定版本未测（没有 GPU 运行）",
        "unmeasured_span": "这项比较本锁定版本未测（没有 GPU 运行）。",
        "unmeasured_span_pending": "[这项比较尚未测量：这个文件的 GPU 运行尚待进行。]",
        "unmeasured_pending": "[尚未测量：这个文件的 GPU 运行尚待进行]",
        "lock_column": "锁定版本",
        "printed_column": "论断文件的输出",
        "bench_shape": "形状",
        "target_met": "目标 ≥ {threshold}：达到",
        "target_missed": "目标 ≥ {threshold}：未达到",
        "bench_card": (
            "{pass_}：每次调用时间（含主机端启动），各取 {runs} 次运行的中位数和 20%–80% 分位数"
            "（triton.testing.do_bench，每次运行前清空 L2 缓存），不含编译时间；"
            "{unit} = 该行记录的字节数或 FLOP 数除以中位时间"
        ),
        "bench_caption": "每格：{unit}，其后是每次调用时间的中位数及其 20%–80% 分位数。",
        "bench_card_clocks": (
            "{pass_}：内核时间，即一次调用所启动的内核与拷贝在设备上的耗时（torch.profiler，CUPTI），"
            "取 {kernel_runs} 次调用的中位数和 20%–80% 分位数，每次调用前清空 L2 缓存；"
            "每次调用时间（含主机端启动），用 CUDA 事件包住每次调用，每次调用开始时 GPU 都处于空闲"
            "状态并已清空 L2 缓存，取 {call_runs} 次调用的中位数和 20%–80% 分位数；不含编译时间；"
            "{unit} = 该行记录的字节数或 FLOP 数除以内核时间的中位数"
        ),
        "bench_caption_clocks": (
            "每格：由内核时间算出的 {unit}，内核时间的中位数及其 20%–80% 分位数，"
            "然后是每次调用时间（含主机端启动）的中位数及其分位数。"
        ),
        "bench_kernel": "内核",
        "bench_call": "调用",
    },
}


@dataclass
class BuildState:
    """Worked out once per build: the lock, its records and every snippet's state."""

    lock: records.Lock
    states: records.LockStates
    today: dt.date
    draft: bool = False
    other_locks: dict[str, records.LockStates] = field(default_factory=dict)


@dataclass
class PageCards:
    """The ID cards a page's tokens produced, listed at the end of the page."""

    lang: str
    cards: list[str] = field(default_factory=list)
    src_uri: str = ""  # the page's source, en/autotune/index.md (links the tokens write)

    def add(self, text: str) -> int:
        self.cards.append(text)
        return len(self.cards)


STATE: BuildState | None = None


def states_of_lock(lock: records.Lock) -> records.LockStates:
    """Every snippet's state under ``lock``, worked out once per build (the matrix and the
    lock_history tokens read other locks than the one being built)."""
    state = build_state()
    if lock.id not in state.other_locks:
        state.other_locks[lock.id] = (
            state.states if lock.id == state.lock.id else records.lock_states(lock)
        )
    return state.other_locks[lock.id]


def build_state() -> BuildState:
    if STATE is None:
        raise PluginError("site_hooks: on_config has not run")
    return STATE


class CompiledTemplates(jinja2.BytecodeCache):
    """Jinja's compiled templates kept in memory for the build (keyed by name and source)."""

    def __init__(self) -> None:
        self.code: dict[str, bytes] = {}

    def load_bytecode(self, bucket: jinja2.bccache.Bucket) -> None:
        if bucket.key in self.code:
            bucket.bytecode_from_string(self.code[bucket.key])

    def dump_bytecode(self, bucket: jinja2.bccache.Bucket) -> None:
        self.code[bucket.key] = bucket.bytecode_to_string()


COMPILED_TEMPLATES = CompiledTemplates()


def compile_notebook_templates_once() -> None:
    """mkdocs-jupyter makes two nbconvert exporters per notebook, and each compiled the same
    Jinja templates again (a fifth of the build's time): they share COMPILED_TEMPLATES."""
    from nbconvert.exporters.templateexporter import TemplateExporter

    create = TemplateExporter._create_environment
    if getattr(create, "shares_compiled_templates", False):
        return

    def create_environment(self):
        environment = create(self)
        environment.bytecode_cache = COMPILED_TEMPLATES
        return environment

    create_environment.shares_compiled_templates = True
    TemplateExporter._create_environment = create_environment


def on_env(env, config, files):
    """The theme's templates, compiled once for both languages' builds."""
    env.bytecode_cache = COMPILED_TEMPLATES
    return env


def on_config(config):
    global STATE
    compile_notebook_templates_once()
    lock_id = os.environ.get("DOCS_LOCK") or records.current_lock_id()
    try:
        lock = records.load_lock(lock_id)
        states = records.lock_states(lock)
    except (records.LockError, records.SnippetContractError, FileNotFoundError) as exc:
        raise PluginError(str(exc)) from exc
    today = dt.date.fromisoformat(os.environ.get("DOCS_TODAY") or dt.date.today().isoformat())
    draft = os.environ.get("DOCS_DRAFT") == "1"
    STATE = BuildState(lock, states, today, draft)
    blocking = [
        f"{s.path} is {s.state.name} on lock {lock.id} / {s.platform}. "
        + (
            "Run `make records-cpu` and commit the record."
            if s.platform == records.CPU
            else f"Run scripts/verify_snippets.py on that GPU and commit the record, or list "
            f"the snippet under [pending] in locks/{lock.id}.toml with a reason."
        )
        for s in states.blocking()
    ]
    if blocking and config.get("strict") and not draft:  # stop now, not after every page
        raise PluginError("\n".join(blocking))
    for message in blocking:
        (log.info if draft else log.warning)(message)
    stale = lock.next_review < today
    config.extra["lock_banner"] = (
        {lang: TEXT[lang]["stale"].format(next_review=lock.next_review) for lang in TEXT}
        if stale
        else None
    )
    config.extra["lock_id"] = lock.id
    return config


# ----------------------------------------------------------------------------- badges


def page_language(page) -> str:
    lang = page.file.src_uri.split("/", 1)[0]
    if lang not in TEXT:
        raise PluginError(f"{page.file.src_uri}: pages live under docs/en or docs/zh")
    return lang


def _states(path: str) -> dict[str, records.SnippetState]:
    try:
        return build_state().states.of(path)
    except KeyError as exc:
        raise PluginError(str(exc)) from exc


def badge_html(lang: str, path: str, page_url: str | None = None) -> str:
    """The line above an included block: the snippet's state on each platform of the lock;
    for a claim that runs on a CPU, on a page at ``page_url``, the releases it holds for, linked
    to its row on the "What changed when" page (history_page.since_html)."""
    needs = records.read_snippet_needs(path)
    parts = []
    for platform, s in _states(path).items():
        text = records.state_text(s, lang, needs)
        parts.append(
            f'<span class="snippet-status__state" data-platform="{platform}" '
            f'data-state="{s.state.name}"><span class="snippet-status__icon" aria-hidden="true">'
            f"{s.state.icon}</span> {html.escape(text)}</span>"
        )
    if page_url is not None and history_records.is_claim(path) and needs.runs_on_cpu:
        parts.append(history_page.since_html(lang, path, build_state().lock.torch, page_url))
    return (
        f'<div class="snippet-status" data-snippet="{html.escape(path)}">'
        + "".join(parts)
        + f'<code class="snippet-status__path">{html.escape(path)}</code></div>'
    )


COMPLETE_FILE_SLOT = re.compile(r'<div class="complete-file-slot" data-file="([^"]+)"></div>')


def complete_file_slot(path: str) -> str:
    """Where a complete file goes: Markdown and the search plugin see this empty element only;
    on_post_page puts the file in (parsing the highlighted file as raw HTML in Markdown and
    again for the search index cost over a third of the build's time)."""
    return f'<div class="complete-file-slot" data-file="{html.escape(path)}"></div>'


def complete_file_html(path: str, lang: str) -> str:
    """A collapsed block with the runnable file, as Material's code-block markup.

    Raw HTML rather than a fence inside an admonition: a fence gets a span on every line and
    on every token. The file is not highlighted: its lines are the highlighted sections shown
    above it, and highlighting every file again made these blocks half of a page's bytes and
    most of its DOM nodes (slow to build, to load and to check). Material still adds its copy
    button.
    """
    code = html.escape(runnable_file(path, build_state().lock, lang), quote=False)
    title = f"{TEXT[lang]['complete']}: {Path(path).name}"
    return (
        f'<details class="example complete-file"><summary>{html.escape(title)}</summary>'
        f'<div class="language-py highlight"><span class="filename">{html.escape(path)}</span>'
        f"<pre><span></span><code>{code}</code></pre></div></details>"
    ) + complete_file_needs_html(path, lang)


def spoken_list(lang: str, items: list[str]) -> str:
    """Items as a sentence lists them: "a, b and c" / "a、b 和 c"."""
    if len(items) == 1:
        return items[0]
    return TEXT[lang]["list"].join(items[:-1]) + TEXT[lang]["list_last"] + items[-1]


def complete_file_needs_html(path: str, lang: str) -> str:
    """Below a complete file: what else it needs that no copy carries (its declared
    ``also-needs``), and for a file that reads files beside it, its download (written beside
    the page by on_post_page) with the commands that run it."""
    needs = records.read_snippet_needs(path)
    parts = []
    if needs.also_needs:
        parts.append(
            f'<p class="complete-file-also-needs"><strong>{TEXT[lang]["also_needs"]}</strong> '
            f"{html.escape(needs.also_needs[lang])}</p>"
        )
    if copies.has_archive(path):
        archive = copies.archive_name(path)
        link = f'<a href="{archive}" download><code>{archive}</code></a>'
        beside = [f"<code>{html.escape(os.path.relpath(f, Path(path).parent))}</code>"
                  for f in needs.files]  # fmt: skip
        words = html.escape(TEXT[lang]["download"]).format(
            file=f"<code>{html.escape(Path(path).name)}</code>", archive=link,
            others=spoken_list(lang, beside),
        )  # fmt: skip
        commands = html.escape("\n".join(copies.run_commands(path)), quote=False)
        parts.append(
            f'<div class="complete-file-download" data-archive="{archive}"><p>{words}</p>'
            f'<div class="language-bash highlight"><pre><span></span><code>{commands}</code>'
            "</pre></div></div>"
        )
    if not parts:
        return ""
    body = "".join(parts)
    return f'<div class="complete-file-needs" data-snippet="{html.escape(path)}">{body}</div>'


def write_archives(output: str, page, config) -> None:
    """Each download a page offers, written beside the page's HTML (both languages' builds)."""
    folder = Path(page.file.abs_dest_path).parent
    for m in COMPLETE_FILE_SLOT.finditer(output):
        path = html.unescape(m.group(1))
        if copies.has_archive(path):
            folder.mkdir(parents=True, exist_ok=True)
            data = copies.archive_bytes(path, build_state().lock)
            (folder / copies.archive_name(path)).write_bytes(data)


def _block_end(lines: list[str], start: int, indent: str) -> int:
    """First line at or after ``start`` outside the container indented by ``indent``."""
    if not indent:
        return start
    for i in range(start, len(lines)):
        if lines[i].strip() and len(lines[i]) - len(lines[i].lstrip()) < len(indent):
            return i
    return len(lines)


def add_snippet_blocks(markdown: str, lang: str, page_url: str | None = None) -> str:
    """Badges above include blocks; each file's complete copy after its first block.

    The complete file is raw HTML, which must start a line: after a block nested in an
    admonition it goes right after that admonition.
    """
    lines = markdown.split("\n")
    try:
        fences = list(page_source.iter_fences(lines))
    except page_source.PageSourceError as exc:
        raise PluginError(str(exc)) from exc
    before: dict[int, list[str]] = {}  # line index -> lines to insert before it
    shown_whole: set[str] = set()
    for fence in fences:
        files = fence.snippet_files
        if not files:
            continue
        for path in files:  # the history link goes on a file's first block of the page
            url = None if path in shown_whole else page_url
            before.setdefault(fence.start, []).extend(
                [fence.indent + badge_html(lang, path, url), ""]
            )
        after = page_source.annotation_list_end(lines, fence.end + 1, fence.indent)
        at = _block_end(lines, after, fence.indent)
        for path in files:
            if path not in shown_whole:
                shown_whole.add(path)
                before.setdefault(at, []).extend(["", complete_file_slot(path), ""])
    out: list[str] = []
    for i, line in enumerate(lines):
        out.extend(before.get(i, []))
        out.append(line)
    out.extend(before.get(len(lines), []))
    return "\n".join(out)


# ----------------------------------------------------------------------------- figures, outputs


def format_number(value: float) -> str:
    """Three significant digits, never rounded to zero, no exponent: 0.193, 61.2, 4371."""
    if isinstance(value, int) or float(value).is_integer() and abs(value) >= 100:
        return f"{int(value)}"
    if value == 0:
        return "0"
    if abs(value) >= 100:
        return f"{value:.0f}"
    digits = 2 - int(f"{abs(value):e}".split("e")[1])
    return f"{value:.{max(digits, 0)}f}"


def with_unit(value: float, unit: str | None) -> str:
    return f"{format_number(value)} {unit}" if unit else format_number(value)


class Unmeasured(Exception):
    """A figure or output that only a GPU run gives, on a lock that no GPU verifies (or that a
    pending GPU run of the file will give: ``pending`` is then true)."""

    def __init__(self, pending: bool = False):
        super().__init__()
        self.pending = pending
        self.path: str | None = None  # the file a measured span's mark names (expand_tokens)


def _source_entry(path: str, need_figure: str | None = None, label: str | None = None):
    """The record row a figure or an output comes from (records.quote_source)."""
    try:
        return records.quote_source(_states(path), figure=need_figure, label=label)
    except LookupError as exc:
        lock = build_state().lock
        if not lock.devices and records.read_snippet_needs(path).runs_on_gpu:
            raise Unmeasured() from exc
        if records.awaits_pending_run(lock, _states(path), figure=need_figure, label=label):
            raise Unmeasured(pending=True) from exc
        raise PluginError(f"lock {lock.id}: {exc}") from exc


def unmeasured_html(lang: str, path: str, pending: bool = False, span: bool = False) -> str:
    """The mark of a figure no record has; ``span``: the sentence that stands for a whole
    measured span (page_source.MEASURED_SPAN) whose words no record bears out."""
    key = "unmeasured" + ("_span" if span else "") + ("_pending" if pending else "")
    text = TEXT[lang][key]
    return (
        f'<span class="record-unmeasured" data-snippet="{html.escape(path)}">'
        f"{html.escape(text)}</span>"
    )


def _record_card(lang: str, s: records.SnippetState, what: list[str]) -> str:
    text = TEXT[lang]
    record, entry = s.record, s.entry
    versions = record["versions"]
    parts = [
        *what,
        records.platform_label(s.platform, record, records.read_snippet_needs(s.path)),
        f"torch {versions['torch'].split('+')[0]} · triton {versions['triton']}",
        f"Python {versions['python']}",
        entry["date"],
        f"{s.path} (sha256 {entry['sha256'][:12]})",
    ]
    if record["platform"] != records.CPU:
        parts.insert(len(what) + 1, f"driver {record['device']['driver']}, CUDA {versions['cuda']}")
        if entry.get("alone"):  # the runner gave this timing the GPU to itself
            parts.insert(len(what) + 2, text["alone"])
    if s.state.name == "pending":
        parts.append(text["pending"])
    if not s.state.verified:
        parts.append(text["changed_since"])
    return " · ".join(str(p) for p in parts)


def figure_card(lang: str, figure: dict, earlier: list[tuple[str, float]] = ()) -> list[str]:
    """The measured half of a figure's ID card: op, reference, shape, dtype, statistic, spread,
    and the values of the earlier runs its row keeps (date, value)."""
    text = TEXT[lang]
    parts = [figure[k] for k in ("op", "shape", "dtype") if figure.get(k)]
    if figure.get("reference"):
        parts.append(text["reference"].format(reference=figure["reference"]))
    statistic = text["statistic"][figure["statistic"]]
    if "repeats" in figure:
        statistic += f" ({text['runs'].format(n=figure['repeats'])})"
    parts.append(statistic)
    if "spread" in figure:
        low, high = (with_unit(figure[k], figure.get("unit")) for k in ("low", "high"))
        parts.append(f"{text['spread'][figure['spread']]} {low} – {high}")
    if figure.get("clock"):  # which clock a time, or a rate or ratio of times, was read from
        parts.append(text["clock"][figure["clock"]])
    if figure.get("compile"):
        parts.append(text["compile"][figure["compile"]])
    if earlier:
        runs = "; ".join(f"{date}: {with_unit(v, figure.get('unit'))}" for date, v in earlier)
        parts.append(text["earlier"].format(runs=runs))
    return parts


def _card_link(lang: str, number: int, tag: str) -> str:
    label = TEXT[lang]["card"]
    return (
        f'<a class="record-card-link" href="#id-card-{number}" id="id-card-ref-{number}">'
        f'<span class="visually-hidden">{label} </span>{html.escape(tag)}</a>'
    )


def _tag(s: records.SnippetState) -> str:
    if s.platform in (records.CPU, records.ANY_GPU):
        return s.platform.upper()
    return records.KNOWN_DEVICES.get(s.platform, s.platform).removeprefix("NVIDIA ")


def render_figure(lang: str, cards: PageCards, path: str, name: str) -> str:
    s = _source_entry(path, need_figure=name)
    figure = s.entry["figures"][name]
    earlier = [
        (run["date"], run["figures"][name])
        for run in s.entry.get("earlier", [])
        if name in run["figures"]
    ]
    number = cards.add(_record_card(lang, s, figure_card(lang, figure, earlier)))
    value = with_unit(figure["value"], figure.get("unit"))
    spread = ""
    if "spread" in figure:
        low, high = (format_number(figure[k]) for k in ("low", "high"))
        spread = f' <span class="record-figure__spread">({low}–{high})</span>'
    others = [v for _, v in earlier]
    if records.moved_between_runs(figure, others):  # one run alone would say too much
        values = TEXT[lang]["list"].join(format_number(v) for v in others)
        words = html.escape(TEXT[lang]["other_runs"].format(values=values))
        spread += f' <span class="record-figure__runs">({words})</span>'
    return (
        f'<span class="record-figure" data-snippet="{html.escape(path)}" '
        f'data-figure="{html.escape(name)}" data-state="{s.state.name}">'
        f'<span class="record-figure__value">{html.escape(value)}</span>{spread}'
        f"{_card_link(lang, number, _tag(s))}</span>"
    )


MARKDOWN_INLINE = str.maketrans({c: f"&#{ord(c)};" for c in "_*`[]\\~=^|"})


def inline_code_html(text: str) -> str:
    """``<code>`` for a printed line inside Markdown text: raw inline HTML does not stop Markdown
    from reading ``__init__`` as bold, so its emphasis and link characters become entities."""
    return f"<code>{html.escape(text).translate(MARKDOWN_INLINE)}</code>"


def render_output(lang: str, cards: PageCards, path: str, label: str) -> str:
    s = _source_entry(path, label=label)
    line = records.find_output(s.entry, label)
    printed = TEXT[lang]["printed"].format(file=Path(path).name)
    number = cards.add(_record_card(lang, s, [printed]))
    return (
        f'<span class="record-output" data-snippet="{html.escape(path)}" '
        f'data-label="{html.escape(label)}" data-state="{s.state.name}">'
        f"{inline_code_html(line)}{_card_link(lang, number, _tag(s))}</span>"
    )


def render_output_block(lang: str, cards: PageCards, path: str, first: str, last: str) -> str:
    """Printed lines from the one starting ``first`` to the one starting ``last``, as a block."""
    s = _source_entry(path, label=first)
    lines = s.entry["stdout"]
    start = lines.index(records.find_output(s.entry, first))
    end = next((i for i in range(start, len(lines)) if lines[i].startswith(last)), None)
    if end is None:
        raise PluginError(f"{path}: no printed line starting {last!r} after {first!r}")
    printed = TEXT[lang]["printed"].format(file=Path(path).name)
    number = cards.add(_record_card(lang, s, [printed]))
    body = html.escape("\n".join(lines[start : end + 1]))
    return (
        f'<div class="record-output-block" data-snippet="{html.escape(path)}" '
        f'data-label="{html.escape(first)}" data-state="{s.state.name}">'
        f'<pre tabindex="0"><code>{body}</code></pre>'
        f"<p>{_card_link(lang, number, printed + ' · ' + _tag(s))}</p></div>"
    )


def id_cards_section(cards: PageCards) -> str:
    if not cards.cards:
        return ""
    text = TEXT[cards.lang]
    items = "".join(
        f'<li id="id-card-{i}">{html.escape(card)} '
        f'<a href="#id-card-ref-{i}" aria-label="{text["card_back"]}">↩</a></li>'
        for i, card in enumerate(cards.cards, 1)
    )
    return f'\n\n## {text["cards"]} {{ #id-cards }}\n\n<ol class="id-cards">{items}</ol>\n'


# ----------------------------------------------------------------------------- lock tokens


def lock_summary(lang: str) -> str:
    lock = build_state().lock
    return TEXT[lang]["lock"].format(
        title=lock.title, reviewed=lock.reviewed, next_review=lock.next_review
    )


def python_range(lang: str, spec: str) -> str:
    """'>=3.10,<3.14' -> '3.10 to 3.13' (zh: '3.10 到 3.13'); '>=3.11' -> '3.11 or newer'."""
    m = re.fullmatch(r">=3\.(\d+)(?:,<3\.(\d+))?", spec)
    if not m:
        raise PluginError(f"cannot read the Python range {spec!r}")
    low = f"3.{m.group(1)}"
    if m.group(2) is None:
        return f"{low} 或更新" if lang == "zh" else f"{low} or newer"
    high = f"3.{int(m.group(2)) - 1}"
    return f"{low} 到 {high}" if lang == "zh" else f"{low} to {high}"


def lock_value(lang: str, key: str) -> str:
    lock = build_state().lock
    values = {
        "title": lock.title,
        "torch": lock.torch,
        "triton": lock.triton,
        "cuda": lock.cuda,
        "python": python_range(lang, lock.python),
        "reviewed": str(lock.reviewed),
        "next-review": str(lock.next_review),
        "mike-version": lock.mike_version,
    }
    if key not in values:
        raise PluginError(f"lock(...) takes one of {sorted(values)}, not {key!r}")
    return values[key]


def install_commands(lang: str) -> str:
    """Setting up the lock's environment and running a file: with pip, or with uv, which reads
    the pins from the copied file's PEP 723 block (a generated block, not typed)."""
    lock = build_state().lock
    pins = " ".join(lock.pins(list(lock.packages)))
    comment = (
        "# 或者：用 uv 按文件头里的版本自动装好环境再运行"
        if lang == "zh"
        else "# or: uv sets up the versions pinned in the file's header, then runs it"
    )
    return "\n".join(
        [
            "``` bash",
            "python -m venv .venv && . .venv/bin/activate",
            f"pip install {pins}",
            "python vector_add.py                     # NVIDIA GPU, CC 8.0+",
            "TRITON_INTERPRET=1 python vector_add.py  # CPU, no GPU needed",
            comment,
            "TRITON_INTERPRET=1 uv run vector_add.py",
            "```",
        ]
    )


def run_summary(lang: str) -> str:
    """How many snippets run where, counted from their declared needs."""
    needs = [records.read_snippet_needs(p) for p in records.list_snippets()]
    interp = sum(n.runs_on_cpu and n.cpu_interpreter for n in needs)
    plain = sum(n.runs_on_cpu and not n.cpu_interpreter for n in needs)
    gpu = sum(n.runs_on_gpu for n in needs)
    total = len(needs)
    if lang == "zh":
        return (
            f"本站共有 {total} 个代码片段文件：{interp} 个在 CPU 上借助解释器运行，"
            f"{plain} 个在普通 CPU 上运行，{gpu} 个在 GPU 上原生运行；"
            "不在某处运行的文件都写明了理由。"
        )
    return (
        f"The site has {total} snippet files: {interp} run on a CPU through the interpreter, "
        f"{plain} on a plain CPU, and {gpu} natively on a GPU; each of the others states why it "
        "does not run somewhere."
    )


CLOCK_ORDER = ("kernel", "call", "wall", "?")


RERUN_WORDS = {  # per language: clock names, one clock's count, the separator between counts
    "en": ({"kernel": "kernel time", "call": "call time", "wall": "wall-clock time"},
           "{clock} {held} of {total} held ({share:.0%})", ", "),
    "zh": ({"kernel": "内核时间", "call": "每次调用时间", "wall": "墙钟时间"},
           "{clock} {total} 个中守住 {held} 个（{share:.0%}）", "，"),
}  # fmt: skip


def rerun_counts(lang: str, rerun: dict) -> str:
    """A run's rerun summary ({clock: {compared, held}}), clock by clock, in words."""
    names, item, sep = RERUN_WORDS[lang]
    return sep.join(
        item.format(clock=names.get(clock, clock), held=c["held"], total=c["compared"],
                    share=c["held"] / c["compared"])
        for clock, c in sorted(rerun.items(), key=lambda i: CLOCK_ORDER.index(i[0]))
    )  # fmt: skip


def gpu_part_runs(part: str):
    """(platform, the part's entry) of every GPU record of the lock being built."""
    lock = build_state().lock
    for platform in lock.record_platforms:
        if platform != records.CPU:
            record = records.load_record(lock.id, platform) or {}
            yield platform, record.get("parts", {}).get(part, {})


def no_rerun(lang: str, what: str, part: str) -> str:
    """A lock verified on the CPU only has nothing measured to compare; a GPU lock must."""
    lock = build_state().lock
    if not lock.devices:
        return html.escape({"en": f"no GPU run of {lock.title} to compare",
                            "zh": f"{lock.title} 没有 GPU 运行记录可比较"}[lang])  # fmt: skip
    raise LookupError(f"no GPU record of {lock.id} holds a {what} summary of part {part!r}")


RECIPE_NAMES = {  # a recipe file's stem as the pages name the recipe
    "en": {"geglu": "GeGLU", "rmsnorm": "RMSNorm", "cross_entropy": "cross-entropy"},
    "zh": {"geglu": "GeGLU", "rmsnorm": "RMSNorm", "cross_entropy": "交叉熵"},
}
PER_SHAPE = re.compile(r"_\d+x\d+(x\d+)?(_|$)")  # a figure of one shape, not the lowest of several


def run_changes(paths: str, pattern: str, shapes: str) -> list[tuple[str, str, float, float]]:
    """(path, figure, earlier value, this value) of each figure of the GPU record, in the
    space-separated ``paths``, whose name matches ``pattern`` (fnmatch) and that the run before
    this one measured too (the row's first ``earlier`` run). ``shapes``: "one", the figures of
    one shape; "lowest", those over all shapes (no shape in the name); "any", both."""
    if not build_state().lock.devices:  # a lock verified on the CPU only: nothing measured
        raise Unmeasured()
    out = []
    for path in paths.split():
        entry = _source_entry(path).entry
        earlier = (entry.get("earlier") or [{}])[0].get("figures", {})
        for name, figure in entry["figures"].items():
            kind = "one" if PER_SHAPE.search(name) else "lowest"
            if fnmatch.fnmatchcase(name, pattern) and shapes in (kind, "any") and name in earlier:
                out.append((path, name, earlier[name], figure["value"]))
    if not out:
        raise LookupError(f"no figure {pattern!r} of {paths} has an earlier run to compare")
    return out


def percent(lang: str, value: float) -> str:
    sign = "+" if value > 0 else "−" if value < 0 else ""
    return f"{sign}{abs(value):.0%}".replace("%", " %" if lang == "en" else "%")


def percent_up(lang: str, value: float) -> str:
    """The size of a change, rounded up to a whole percent, without a sign ("9 %")."""
    return percent(lang, math.ceil(round(abs(value) * 100, 6)) / 100).lstrip("+")


def largest_change(lang: str, paths: str, pattern: str) -> str:
    """The largest change, either way, of the matching figures since the run before this one,
    rounded up to a whole percent ("9 %")."""
    changes = run_changes(paths, pattern, "any")
    largest = max(abs(new / old - 1) for _, _, old, new in changes)
    return percent_up(lang, largest)


def change_range(lang: str, paths: str, pattern: str) -> str:
    """The lowest and the highest change of the matching figures since the run before this
    one, each rounded to a whole percent: "−15 % to +84 %"."""
    changes = [new / old - 1 for _, _, old, new in run_changes(paths, pattern, "any")]
    word = {"en": " to ", "zh": " 到 "}[lang]
    return percent(lang, round(min(changes), 2)) + word + percent(lang, round(max(changes), 2))


def crossed_one(paths: str, pattern: str) -> str:
    """How many matching ratios lie on the other side of 1.0 than in the run before this one."""
    changes = run_changes(paths, pattern, "one")
    return str(sum((old >= 1.0) != (new >= 1.0) for _, _, old, new in changes))


PASS_WORDS = {
    "en": {"forward": "forward", "backward": "backward",
           "forward_backward": "forward and backward"},
    "zh": {"forward": "前向", "backward": "反向", "forward_backward": "前向加反向"},
}  # fmt: skip


def crossed_cells(lang: str, paths: str, pattern: str) -> str:
    """The matching ratios of one shape each that crossed 1.0 since the run before this one, by
    pass, dtype and shape ("bfloat16 backward at 1024 × 4096"), with their file where several
    are asked for; plain text, which the sentence that quotes it escapes."""
    changes = run_changes(paths, pattern, "one")
    several = len(paths.split()) > 1
    cells = []
    for path, name, old, new in changes:
        if (old >= 1.0) == (new >= 1.0):
            continue
        m = re.match(r"(forward_backward|forward|backward)_([a-z]+\d+)_(\d+(?:x\d+)+)_", name)
        if not m:
            raise LookupError(f"{name}: not a pass_dtype_shape figure")
        pass_, dtype, shape = m.group(1), m.group(2), m.group(3).replace("x", " × ")
        where = f"{RECIPE_NAMES[lang].get(Path(path).stem, Path(path).stem)} " if several else ""
        at = (" at " if lang == "en" else " ") + shape
        cells.append(f"{where}{dtype} {PASS_WORDS[lang][pass_]}{at}")
    return {"en": ", ", "zh": "、"}[lang].join(cells) or {"en": "none", "zh": "无"}[lang]


def _median_pairs(path: str, clock_pass: str, a: str, b: str):
    """((pass, dtype, shape), a's median, b's median) of every benchmark cell of ``path`` that
    times both implementations on the clock of ``clock_pass`` ("call"; "call:backward" for one
    pass, "call::float32" for one dtype, "call:backward:float32" for both), in the record's
    order."""
    clock, only, dtype = (clock_pass.split(":") + ["", ""])[:3]
    if clock not in records.FIGURE_CLOCKS:
        raise LookupError(f"{clock_pass!r}: the clock is one of {sorted(records.FIGURE_CLOCKS)}")
    at = {}
    for r in _benchmark_source(path).entry["benchmark"]:
        if r.get("clock") == clock and only in ("", r["pass"]) and dtype in ("", r["dtype"]):
            at[r["impl"], r["pass"], r["dtype"], tuple(r["shape"])] = r["ms_median"]
    peers = b.split()  # several: b's time is the shortest of theirs
    cells = [key[1:] for key in at if key[0] == a and all((p, *key[1:]) in at for p in peers)]
    if not cells:
        raise LookupError(f"{path}: no {clock_pass} cell times both {a!r} and {b!r}")
    return [(cell, at[(a, *cell)], min(at[(p, *cell)] for p in peers)) for cell in cells]


def _cell_words(lang: str, cell: tuple, clock_pass: str) -> str:
    """A cell as a page names it, leaving out the pass or the dtype that ``clock_pass`` fixes."""
    pass_, dtype, shape = cell
    _, one_pass, one_dtype = (clock_pass.split(":") + ["", ""])[:3]
    words = [] if one_dtype else [dtype]
    words += [] if one_pass else [PASS_WORDS[lang].get(pass_, pass_)]
    size = " × ".join(map(str, shape))
    if lang == "zh":
        return " ".join([*words, size])
    return " ".join(["the", *words, "at", size]) if words else size


def _not_shorter(pairs: list) -> list[tuple]:
    """The cells of _median_pairs where ``a``'s time is not the shorter (a tie included)."""
    return [cell for cell, ta, tb in pairs if not ta < tb]


def faster_at(lang: str, cards: PageCards, path: str, clock_pass: str, a: str, b: str) -> str:
    """Where ``a``'s median time on the clock is shorter than ``b``'s in the latest run: "at
    every shape", or "at every shape but" the cells where it is not. When it is not at half the
    cells or more, the sentence around the token says the wrong thing: the build stops."""
    pairs = _median_pairs(path, clock_pass, a, b)
    misses = _not_shorter(pairs)
    if 2 * len(misses) >= len(pairs):
        raise LookupError(
            f"{path}: {a} is shorter than {b} ({clock_pass}) at {len(pairs) - len(misses)} of "
            f"{len(pairs)} cells: turn the sentence around"
        )
    if not misses:
        return {"en": "at every shape", "zh": "在每个形状上"}[lang]
    words = [_cell_words(lang, cell, clock_pass) for cell in misses]
    if lang == "zh":
        return html.escape(f"除 {'、'.join(words)} 外，在每个形状上")
    return html.escape(f"at every shape but {spoken_list(lang, words)}")


def faster_everywhere(lang: str, cards: PageCards, path: str, clock_pass: str, a: str, b: str):
    """Nothing, where ``a``'s median time is shorter than ``b``'s at every cell (as faster_at's
    "at every shape"): for a sentence that says so of several files at once. Where it is not,
    the build stops."""
    pairs = _median_pairs(path, clock_pass, a, b)
    misses = _not_shorter(pairs)
    if misses:
        cells = ", ".join(_cell_words("en", cell, clock_pass) for cell in misses)
        raise LookupError(f"{path}: {a} is not shorter than {b} ({clock_pass}) at {cells}")
    return ""


def gap_within(lang: str, cards: PageCards, path: str, clock_pass: str, a: str, b: str) -> str:
    """The largest gap, either way, between ``a``'s and ``b``'s median times on the clock over
    the cells that time both, as ``a``'s over ``b``'s, rounded up to a whole percent ("4 %")."""
    largest = max(abs(ta / tb - 1) for _, ta, tb in _median_pairs(path, clock_pass, a, b))
    return percent_up(lang, largest)


def gap_cells(lang: str, cards: PageCards, path: str, clock_pass: str, a: str, b: str) -> str:
    """How far apart ``a``'s and ``b``'s median times on the clock lie, as a predicate: "within
    2 % of each other at every shape", or, where one or two cells stand out (a gap over 5 % and
    over twice the next one), "... at every shape but the bfloat16 forward at 16384 × 8192
    (27 %)", so that one outlier does not stand for every cell."""
    pairs = _median_pairs(path, clock_pass, a, b)
    gaps = sorted(((abs(ta / tb - 1), cell) for cell, ta, tb in pairs), reverse=True)
    out = []
    while len(out) < 2 and len(gaps) - len(out) > 2:
        gap, cell = gaps[len(out)]
        if gap > 0.05 and gap > 2 * gaps[len(out) + 1][0]:
            out.append((gap, cell))
        else:
            break

    within = percent_up(lang, gaps[len(out)][0])
    if not out:
        return {"en": f"within {within} of each other at every shape",
                "zh": f"在每个形状上相差不超过 {within}"}[lang]  # fmt: skip
    brackets = "（{}）" if lang == "zh" else " ({})"
    listed = [
        _cell_words(lang, cell, clock_pass) + brackets.format(percent_up(lang, gap))
        for gap, cell in out
    ]
    if lang == "zh":
        return html.escape(f"除 {'、'.join(listed)}外，在每个形状上相差不超过 {within}")
    return html.escape(f"within {within} of each other at every shape but {' and '.join(listed)}")


def ratio_range(lang: str, cards: PageCards, path: str, clock_pass: str, a: str, b: str) -> str:
    """How ``a``'s median times on the clock compare with ``b``'s over the cells, one-sided:
    "from 1 % shorter to 13 % longer than", "from 2 % to 13 % longer than", each end rounded
    up to a whole percent."""
    ratios = [ta / tb - 1 for _, ta, tb in _median_pairs(path, clock_pass, a, b)]

    low, high = min(ratios), max(ratios)
    if lang == "zh":
        if low >= 0:
            return f"长 {percent_up(lang, low)} 到 {percent_up(lang, high)}"
        if high <= 0:
            return f"短 {percent_up(lang, high)} 到 {percent_up(lang, low)}"
        return f"短 {percent_up(lang, low)} 到长 {percent_up(lang, high)}"
    if low >= 0:
        return f"from {percent_up(lang, low)} to {percent_up(lang, high)} longer than"
    if high <= 0:
        return f"from {percent_up(lang, high)} to {percent_up(lang, low)} shorter than"
    return f"from {percent_up(lang, low)} shorter to {percent_up(lang, high)} longer than"


def holds(lang: str, cards: PageCards, path: str, chain: str) -> str:
    """A typed order of figures, checked: ``chain`` is groups of figure names of ``path`` joined
    by "<", a group's names by "," ("host_us_eager < host_us_raw_launch, host_us_liger"; a number
    stands for itself: "0.9 < x_ratio, y_ratio < 1.1"); every value of a group lies below every
    value of the next in the latest run. It renders nothing; where the record does not bear
    the order out, the build stops, so that the sentence it stands beside cannot outlive the
    run it describes. It stands inside a measured span (SPAN_TOKENS), which a lock with no
    such run shows as a sentence that says so."""
    groups = [[name.strip() for name in group.split(",")] for group in chain.split("<")]
    if len(groups) < 2 or not all(all(group) for group in groups):
        raise LookupError(f"{chain!r}: two or more groups of figure names joined by '<'")

    def number(name: str) -> float | None:
        try:
            return float(name)
        except ValueError:
            return None

    value = {
        name: number(name)
        if number(name) is not None
        else _source_entry(path, need_figure=name).entry["figures"][name]["value"]
        for group in groups
        for name in group
    }
    for below, above in itertools.pairwise(groups):
        for a, b in itertools.product(below, above):
            if not value[a] < value[b]:
                raise LookupError(
                    f"{path}: {a} ({value[a]}) is not below {b} ({value[b]}): the sentence is wrong"
                )
    return ""


RUN_SUBJECTS = {  # what since_last_run and range_since_last_run speak of, by key, per language
    "per-call": ("the per-call cells", "每次调用表的各格"),
    "recipes-per-call": ("the four recipes' per-call cells", "四个配方每次调用表的各格"),
    "recipes-host": ("the four recipes' host-cost figures", "四个配方的主机端耗时"),
    "matmul-kernel": ("the matmul file's kernel-time ratios", "矩阵乘法文件按内核时间算的各个比值"),
    "matmul-cublas": (
        "the ratios of cuBLAS's time over a Triton kernel's",
        "cuBLAS 与两个 Triton 内核的耗时之比",
    ),
    "matmul-compiled": (
        "the compiled peers' ratios to the operator, shape by shape,",
        "两个编译版本与算子之比（逐个形状来看）",
    ),
}


def run_subject(lang: str, key: str) -> str:
    if key not in RUN_SUBJECTS:
        raise LookupError(f"{key!r}: not one of {sorted(RUN_SUBJECTS)} (RUN_SUBJECTS)")
    return RUN_SUBJECTS[key][0 if lang == "en" else 1]


def no_earlier_run(lang: str, paths: str, what: str) -> str:
    """That the record keeps no earlier run of the files (a changed file starts its history
    again), so ``what`` (in words) has nothing to compare yet."""
    several = len(paths.split()) > 1
    return html.escape(
        {
            "en": f"The record keeps no earlier run of {'these files' if several else 'this file'}"
            f" since {'they' if several else 'it'} last changed, so {what} have no earlier values "
            "to compare yet.",
            "zh": f"{'这些' if several else '这个'}文件自上次改动以来，记录里还没有更早的运行，"
            f"{what}还没有先前的值可比。",
        }[lang]
    )


def since_last_run(lang: str, cards: PageCards, paths: str, pattern: str, what: str) -> str:
    """A sentence on how the matching ratios, which ``what`` names (a key of RUN_SUBJECTS, so
    that both languages write the same token), moved since the run before this one: the
    largest change, and those that crossed 1.0; or, where the record keeps no earlier run of
    the files (a changed file starts its history again), that there is none yet to compare."""
    what = run_subject(lang, what)
    try:
        moved = largest_change(lang, paths, pattern)
    except LookupError:
        return no_earlier_run(lang, paths, what)
    crossed = crossed_one(paths, pattern)
    head = {
        "en": f"Since the run before this one, {what} moved by {moved} or less",
        "zh": f"与上一次运行相比，{what}的变动不超过 {moved}",
    }[lang]
    if crossed == "0":
        tail = {"en": ", and none crossed 1.0.", "zh": "，没有一个跨过 1.0。"}[lang]
        return html.escape(head + tail)
    try:
        cells = crossed_cells(lang, paths, pattern)
    except LookupError:  # figures not named by pass and dtype (matmul's): the count alone
        cells = ""
    tail = {
        "en": f", and {crossed} of them crossed 1.0" + (f" ({cells})" if cells else "") + ".",
        "zh": f"，其中 {crossed} 个跨过了 1.0" + (f"（{cells}）" if cells else "") + "。",
    }[lang]
    return html.escape(head + tail)


def range_since_last_run(lang: str, cards: PageCards, paths: str, pattern: str, what: str) -> str:
    """A sentence on how the matching figures, which ``what`` names (a key of RUN_SUBJECTS),
    moved since the run before this one, lowest and highest change (change_range),
    or, where the record keeps no earlier run of the files, that there is none yet to compare."""
    what = run_subject(lang, what)
    try:
        moved = change_range(lang, paths, pattern)
    except LookupError:
        return no_earlier_run(lang, paths, what)
    return html.escape(
        {
            "en": f"Since the run before this one, {what} moved by {moved}.",
            "zh": f"与上一次运行相比，{what}变动了 {moved}。",
        }[lang]
    )


def rerun_held(lang: str, part: str) -> str:
    """What the latest GPU run of a named part held against the run before it, per clock, from
    the record (the runner's rerun_summary); a lock whose record has none says so."""
    intro, files_intro, sep = {
        "en": ("in the {platform} run of the {part} part on {date}, against the record's run "
               "before it, ", "in the {platform} run of the {part} part on {date}, against the "
               "record's run before it of the files unchanged since ({files}), ", ", "),
        "zh": ("{date} 在 {platform} 上运行 {part} 部分，与记录中的上一次运行相比，",
               "{date} 在 {platform} 上运行 {part} 部分，只看自上一次运行以来没有改动过的文件"
               "（{files}），与记录中它们的上一次运行相比，", "、"),
    }[lang]  # fmt: skip
    for platform, info in gpu_part_runs(part):
        if "rerun" in info:
            files = sep.join(Path(f).name for f in info.get("rerun_files", []))
            head = (files_intro if files else intro).format(
                platform=platform, part=part, date=info["started"][:10], files=files
            )
            return html.escape(head + rerun_counts(lang, info["rerun"]))
    for platform, info in gpu_part_runs(part):
        if "started" in info:  # the part ran, and none of its files had run before unchanged
            return html.escape(
                {
                    "en": f"in the {platform} run of the {part} part on {info['started'][:10]}, "
                    "no file had run before in the same version, so nothing was compared yet",
                    "zh": f"{info['started'][:10]} 在 {platform} 上运行 {part} 部分时，没有哪个"
                    "文件以同一版本运行过，所以还没有可比较的",
                }[lang]
            )
    return no_rerun(lang, "re-run", part)


def rerun_held_later(lang: str, part: str) -> str:
    """What the latest later run of a named part (a run of some of its files, `--only`) held
    against the record's previous run of the same files, per clock, naming the files."""
    intro, sep = {
        "en": ("in a later {platform} run of the {part} part on {date} ({files}), against the "
               "record's run before it of the same files, ", ", "),
        "zh": ("{date} 在 {platform} 上对 {part} 部分的后续运行（{files}），"
               "与记录中这些文件的上一次运行相比，", "、"),
    }[lang]  # fmt: skip
    for platform, info in gpu_part_runs(part):
        later = [run for run in info.get("later", []) if "rerun" in run]
        if later:
            run = later[-1]
            files = sep.join(Path(f).name for f in re.findall(r"--only (\S+)", run["runner"]))
            head = intro.format(platform=platform, part=part, date=run["started"][:10], files=files)
            return html.escape(head + rerun_counts(lang, run["rerun"]))
    return no_rerun(lang, "later re-run", part)


def state_legend(lang: str) -> str:
    """The state vocabulary (records.STATES) as a table: icon, words, and whether CI fails."""
    head = TEXT[lang]["legend"]
    yes, no = TEXT[lang]["yes_no"]
    rows = [f"| {head[0]} | {head[1]} | {head[2]} |", "| --- | --- | --- |"]
    for state in records.STATES.values():
        rows.append(
            f'| <span aria-hidden="true">{state.icon}</span> {state.short(lang)} '
            f"| {html.escape(getattr(state, lang).replace('{', '‹').replace('}', '›'))} "
            f"| {yes if state.blocks_ci else no} |"
        )
    return "\n".join(rows)


def verification_matrix(lang: str) -> str:
    """Every snippet × every lock × {CPU, GPU}: each cell a state and the date of its run."""
    locks = [lock for lock in records.all_locks() if lock.status != "retired"]
    all_states = {lock.id: states_of_lock(lock) for lock in locks}
    head = [TEXT[lang]["table"][0]]
    for lock in locks:
        head += [f"{lock.title}<br>CPU", f"{lock.title}<br>GPU"]
    rows = ["| " + " | ".join(head) + " |", "|" + " --- |" * len(head)]
    for path in records.list_snippets():
        cells = [f"`{path.removeprefix('snippets/')}`"]
        for lock in locks:
            by = all_states[lock.id].of(path)
            for kind in ("cpu", "gpu"):
                ss = [s for p, s in by.items() if (p == records.CPU) == (kind == "cpu")]
                cells.append("<br>".join(matrix_cell(lang, s) for s in ss))
        rows.append("| " + " | ".join(cells) + " |")
    return "\n".join(rows)


def matrix_cell(lang: str, s: records.SnippetState) -> str:
    date = (s.entry or {}).get("date", "") if s.state.name not in ("not-here", "no-gpu") else ""
    device = "" if s.platform in (records.CPU, records.ANY_GPU) else f"{_tag(s)}: "
    words = f"{device}{s.state.short(lang)}" + (f" · {date}" if date else "")
    return (
        f'<span data-state="{s.state.name}" data-platform="{s.platform}">'
        f'<span aria-hidden="true">{s.state.icon}</span> {html.escape(words)}</span>'
    )


def render_target(lang: str, cards: PageCards, path: str, name: str, threshold: str) -> str:
    """A recorded ratio against a target, ``value >= threshold``: the figure, then whether the
    target is met, worked out here so that the words follow the record."""
    figure_html = render_figure(lang, cards, path, name)
    s = _source_entry(path, need_figure=name)
    value = s.entry["figures"][name]["value"]
    met = value >= float(threshold)
    words = TEXT[lang]["target_met" if met else "target_missed"].format(threshold=threshold)
    return (
        f'{figure_html} <span class="record-target" data-met="{str(met).lower()}">'
        f'<span aria-hidden="true">{"✓" if met else "✗"}</span> {html.escape(words)}</span>'
    )


def _benchmark_source(path: str) -> records.SnippetState:
    """The passed GPU row of ``path`` that holds benchmark rows."""
    for platform, s in _states(path).items():
        if platform != records.CPU and s.entry and s.entry["status"] == "passed":
            if s.entry.get("benchmark"):
                return s
    if not build_state().lock.devices:
        raise Unmeasured()
    raise PluginError(f"{path}: no passed GPU record of this lock has benchmark rows")


def benchmark_table(lang: str, cards: PageCards, path: str, pass_: str) -> str:
    """The benchmark rows of one pass as a table: a row per (dtype, shape), a column per
    implementation. Where the rows carry clocks (records.FIGURE_CLOCKS), each cell is the rate
    from the kernel time, the median kernel time with its 20-80 % quantiles, then the median call
    time (host launch included) with its quantiles; older rows, one time per call. One ID card
    for the table (records.BENCHMARK_PREFIX says what a row holds)."""
    s = _benchmark_source(path)
    rows = [r for r in s.entry["benchmark"] if r["pass"] == pass_]
    if not rows:
        if records.awaits_pending_run(build_state().lock, _states(path), pass_=pass_):
            raise Unmeasured(pending=True)
        raise PluginError(f"{path}: no benchmark rows for the pass {pass_!r}")
    clocks = any("clock" in r for r in rows)
    impls = list(dict.fromkeys(r["impl"] for r in rows))
    keys = list(dict.fromkeys((r["dtype"], tuple(r["shape"])) for r in rows))
    at = {(r["dtype"], tuple(r["shape"]), r["impl"], r.get("clock", "call")): r for r in rows}
    rate, unit = ("gbps", "GB/s") if "gbps" in rows[0] else ("tflops", "TFLOP/s")
    text = TEXT[lang]

    def timing(r: dict) -> str:
        return (
            f"{format_number(r['ms_median'])} ms "
            f"({format_number(r['ms_p20'])}–{format_number(r['ms_p80'])})"
        )

    head = [text["bench_shape"], "dtype", *(f"`{impl}`" for impl in impls)]
    out = ["| " + " | ".join(head) + " |", "|" + " --- |" * len(head)]
    for dtype, shape in keys:
        cells = [" × ".join(map(str, shape)), dtype]
        for impl in impls:
            kernel, call = (at.get((dtype, shape, impl, c)) for c in ("kernel", "call"))
            first = kernel or call
            if first is None:
                cells.append("–")
                continue
            cell = f"**{format_number(first[rate])} {unit}**"
            if clocks:
                for word, r in ((text["bench_kernel"], kernel), (text["bench_call"], call)):
                    if r is not None:
                        cell += f"<br>{word} {timing(r)}"
            else:
                cell += f"<br>{timing(first)}"
            cells.append(cell)
        out.append("| " + " | ".join(cells) + " |")

    def runs(clock: str) -> str:
        found = sorted({r["repeats"] for r in rows if r.get("clock", "call") == clock})
        return f"{found[0]}–{found[-1]}" if len(found) > 1 else str(found[0]) if found else "0"

    if clocks:
        what = text["bench_card_clocks"].format(
            pass_=pass_, unit=unit, kernel_runs=runs("kernel"), call_runs=runs("call")
        )
        caption = text["bench_caption_clocks"].format(unit=unit)
    else:
        what = text["bench_card"].format(pass_=pass_, unit=unit, runs=runs("call"))
        caption = text["bench_caption"].format(unit=unit)
    number = cards.add(_record_card(lang, s, [what]))
    link = _card_link(lang, number, _tag(s))
    return (
        f'<div class="record-benchmark" data-snippet="{html.escape(path)}" '
        f'data-pass="{html.escape(pass_)}" data-state="{s.state.name}" markdown>\n\n'
        + "\n".join(out)
        + f"\n\n<p>{html.escape(caption)} {link}</p>\n\n</div>"
    )


def lock_history(lang: str, cards: PageCards, path: str, label: str) -> str:
    """What a claim printed under every lock, newest first: each version's truth side by side."""
    head = (TEXT[lang]["lock_column"], TEXT[lang]["printed_column"])
    rows = [f"| {head[0]} | {head[1]} |", "| --- | --- |"]
    for lock in records.all_locks():
        if lock.status == "retired":
            continue
        try:
            s = records.quote_source(states_of_lock(lock).of(path), label=label)
        except LookupError as exc:
            raise PluginError(f"lock_history: lock {lock.id}: {exc}") from exc
        line = records.find_output(s.entry, label)
        number = cards.add(
            _record_card(lang, s, [TEXT[lang]["printed"].format(file=Path(path).name)])
        )
        rows.append(
            f"| {html.escape(lock.title)} | {inline_code_html(line)}"
            f"{_card_link(lang, number, _tag(s))} |"
        )
    return "\n".join(rows)


def inline_svg(lang: str, path: str) -> str:
    """An SVG from docs/ inlined, so it follows the page's colours (light and dark)."""
    file = records.REPO_ROOT / "docs" / path
    if not file.is_file() or file.suffix != ".svg":
        raise PluginError(f"svg(...) takes an .svg file under docs/, not {path!r}")
    svg = file.read_text(encoding="utf-8")
    svg = re.sub(r"<\?xml[^>]*\?>|<!--.*?-->", "", svg, flags=re.S)
    # one line: Markdown must not put a <br> or <p> inside it (which ends SVG content in HTML)
    return re.sub(r">\s+<", "><", " ".join(svg.split()))


# ----------------------------------------------------------------------------- dispatch

TOKENS = {
    # name: (function(lang, cards, *args), number of arguments)
    "lock_summary": (lambda lang, cards: lock_summary(lang), 0),
    "lock": (lambda lang, cards, key: lock_value(lang, key), 1),
    "install_commands": (lambda lang, cards: install_commands(lang), 0),
    "run_summary": (lambda lang, cards: run_summary(lang), 0),
    "state_legend": (lambda lang, cards: state_legend(lang), 0),
    "rerun_held": (lambda lang, cards, part: rerun_held(lang, part), 1),
    "rerun_held_later": (lambda lang, cards, part: rerun_held_later(lang, part), 1),
    "faster_at": (faster_at, 4),
    "gap_within": (gap_within, 4),
    "faster_everywhere": (faster_everywhere, 4),
    "gap_cells": (gap_cells, 4),
    "ratio_range": (ratio_range, 4),
    "holds": (holds, 2),
    "since_last_run": (since_last_run, 3),
    "range_since_last_run": (range_since_last_run, 3),
    "verification_matrix": (lambda lang, cards: verification_matrix(lang), 0),
    "lock_history": (lock_history, 2),
    "benchmark_table": (benchmark_table, 2),
    "target": (render_target, 3),
    "figure": (render_figure, 2),
    "output": (render_output, 2),
    "output_block": (render_output_block, 3),
    "svg": (lambda lang, cards, path: inline_svg(lang, path), 1),
    # the history of the claims (scripts/history_page.py), for the lock's torch
    "history_matrix": (
        lambda lang, cards: history_page.history_matrix(lang, build_state().lock.torch),
        0,
    ),
    "since": (
        lambda lang, cards, path: history_page.since_link(
            lang, path, build_state().lock.torch, cards.src_uri
        ),
        1,
    ),
}


# tokens whose words hold only where a GPU run bears them out: an order, a gap, a range, a change
# since the run before. Each stands inside a measured span, which a lock with no such run shows as
# one sentence that says so (a phrase such as "at every shape" cannot be left out of its
# sentence, nor marked inside it; an order that ``holds`` checks cannot be checked).
SPAN_TOKENS = {
    *("faster_at", "faster_everywhere", "gap_within", "gap_cells", "ratio_range", "holds"),
    *("since_last_run", "range_since_last_run"),
}


def expand_tokens(markdown: str, lang: str, cards: PageCards) -> str:
    """Every token of a page rendered. A measured span is rendered whole, or, where a token in
    it has no record on this lock, replaced by one sentence that says it is not measured."""
    try:
        outside = [t for t in page_source.iter_tokens(markdown) if t.span is None]
    except page_source.PageSourceError as exc:
        raise PluginError(str(exc)) from exc
    for t in outside:
        if t.name in SPAN_TOKENS:
            raise PluginError(f"{t.text} (line {t.line + 1}): stands outside {{{{ measured }}}}")

    def replace(m: re.Match, in_span: bool) -> str:
        name = m.group("name")
        if name not in TOKENS:
            raise PluginError(f"unknown token {m.group(0)!r}; known: {sorted(TOKENS)}")
        function, arity = TOKENS[name]
        try:
            args = page_source.parse_token_args(name, m.group("args"))
        except page_source.PageSourceError as exc:
            raise PluginError(str(exc)) from exc
        if len(args) != arity or not all(isinstance(a, str) for a in args):
            raise PluginError(f"{m.group(0)}: takes {arity} string argument(s)")
        try:
            return function(lang, cards, *args)
        except Unmeasured as exc:  # a token of several files names the first
            if in_span:  # the span's mark stands for it
                exc.path = args[0].split()[0]
                raise
            return unmeasured_html(lang, args[0].split()[0], exc.pending)
        except (LookupError, records.LockError, PluginError) as exc:
            if build_state().draft:
                log.info(f"draft: {m.group(0)}: {exc}")
                return f'<mark class="record-draft">draft: {html.escape(m.group(0))}</mark>'
            raise PluginError(f"{m.group(0)}: {exc}") from exc

    def span(body: str) -> str:
        try:
            return page_source.TOKEN.sub(lambda m: replace(m, True), body)
        except Unmeasured as exc:
            return unmeasured_html(lang, exc.path, exc.pending, span=True)

    parts = page_source.MEASURED_SPAN.split(markdown)  # text, span body, text, ..., text
    return "".join(
        span(part) if i % 2 else page_source.TOKEN.sub(lambda m: replace(m, False), part)
        for i, part in enumerate(parts)
    )


def on_page_markdown(markdown: str, page, config, files) -> str:
    if page.file.src_uri.endswith(".ipynb"):
        return markdown
    lang = page_language(page)
    cards = PageCards(lang, src_uri=page.file.src_uri)
    markdown = add_snippet_blocks(expand_tokens(markdown, lang, cards), lang, page.url)
    return markdown + id_cards_section(cards)


# Material's search plugin reads every page with Python's HTMLParser; most of the tags it walks
# are Pygments' token spans inside code blocks, which it drops while keeping their text. It reads
# a copy with those spans taken out (the same text inside the same <pre> and <code>, so the same
# index: tests/test_site.py compares it), and the page keeps its highlighting.
PRE_BLOCK = re.compile(r"<pre\b.*?</pre>", re.S)
TAG_INSIDE_PRE = re.compile(r"<(?!/?(?:pre|code)\b)[^>]*>")
SEARCH_ATTRIBUTE = re.compile(r'\s?data-search-\w+="[^"]+"')  # what the search plugin removes


def code_spans_removed(content: str) -> str:
    return PRE_BLOCK.sub(lambda m: TAG_INSIDE_PRE.sub("", m.group(0)), content)


@plugins.event_priority(100)  # before the search plugin (0)
def _page_context_before_search(context, page, config, nav):
    page.highlighted_content = page.content
    page.content = code_spans_removed(page.content)
    return context


@plugins.event_priority(-100)  # after it, before the template renders the page
def _page_context_after_search(context, page, config, nav):
    highlighted = getattr(page, "highlighted_content", None)
    if highlighted is not None:
        page.content = SEARCH_ATTRIBUTE.sub("", highlighted)
        del page.highlighted_content
    return context


on_page_context = plugins.CombinedEvent(_page_context_before_search, _page_context_after_search)


def on_post_page(output: str, page, config) -> str:
    """The complete files go in last, after the search plugin has read the page (their lines
    are the sections shown above them: searching them twice only cost time)."""
    if page.file.src_uri.endswith(".ipynb"):
        return output
    lang = page_language(page)
    write_archives(output, page, config)
    return COMPLETE_FILE_SLOT.sub(
        lambda m: complete_file_html(html.unescape(m.group(1)), lang), output
    )
