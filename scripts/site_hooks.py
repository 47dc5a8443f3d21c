"""MkDocs hook: what the records say, put beside the code on every page, in both languages.

* Before each fenced block that includes ``snippets/...``: a badge from the current lock's GPU
  record (verified / changed since its GPU run / pending / runs on CPU only ...).
* After the first such block of each file on a page (and after its code annotations): a collapsed
  "complete runnable file" block, so a reader can copy the whole file from the page.
* Tokens in page text: ``{{ lock_summary }}``, ``{{ verification_table }}`` and
  ``{{ figure("snippets/x.py", "name") }}`` (a number from a record, with its ID card).
* A snippet that is not verified on the current lock and not listed as pending is a build
  warning, so ``mkdocs build --strict`` fails.

Build another lock's site with ``DOCS_LOCK=<lock id> mkdocs build``.
"""

from __future__ import annotations

import html
import json
import logging
import os
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

from mkdocs.exceptions import PluginError
from mkdocs.structure.files import File

sys.path.insert(0, str(Path(__file__).resolve().parent))
import snippet_records as records  # noqa: E402

log = logging.getLogger("mkdocs.hooks.verification")

TEXT = {
    "en": {
        "verified": "verified on {device} (CC {cc}) · torch {torch} · triton {triton} · {date}",
        "changed": "changed since its GPU run on {device} ({date}): not verified on this lock",
        "pending": "GPU run pending: {reason}",
        "failed": "failed on {device} ({date}): {reason}",
        "skipped": "skipped on {device}: {reason}",
        "not-run": "not yet run on {device}",
        "no-record": "no GPU record for this lock yet",
        "cpu-only": "runs on CPU only: {reason}",
        "cpu-ci": "CPU CI: TRITON_INTERPRET=1",
        "cpu-ci-plain": "CPU CI: plain CPU",
        "cpu-ci-skip": "not run in CPU CI: {reason}",
        "complete": "Complete runnable file",
        "lock": "{title} — reviewed {reviewed}, next review {next_review}",
        "table": ("Snippet", "GPU record", "CPU (CI)"),
        "figure_stale": "snippet changed since this run",
        "statistic": {
            "single": "one measurement",
            "median": "median",
            "mean": "mean",
            "min": "minimum",
            "count": "count",
        },
        "compile": {"included": "compile time included", "excluded": "compile time excluded"},
    },
    "zh": {
        "verified": "已在 {device}（CC {cc}）上验证 · torch {torch} · triton {triton} · {date}",
        "changed": "GPU 验证（{device}，{date}）之后已修改：在本锁定版本上未经验证",
        "pending": "等待 GPU 重新验证：{reason}",
        "failed": "在 {device} 上失败（{date}）：{reason}",
        "skipped": "在 {device} 上跳过：{reason}",
        "not-run": "尚未在 {device} 上运行",
        "no-record": "本锁定版本还没有 GPU 记录",
        "cpu-only": "只在 CPU 上运行：{reason}",
        "cpu-ci": "CPU CI：TRITON_INTERPRET=1",
        "cpu-ci-plain": "CPU CI：普通 CPU",
        "cpu-ci-skip": "CPU CI 不运行：{reason}",
        "complete": "完整可运行文件",
        "lock": "{title}，审阅于 {reviewed}，下次审阅 {next_review}",
        "table": ("代码片段", "GPU 记录", "CPU（CI）"),
        "figure_stale": "此后代码片段已修改",
        "statistic": {
            "single": "单次测量",
            "median": "中位数",
            "mean": "平均值",
            "min": "最小值",
            "count": "计数",
        },
        "compile": {"included": "含编译时间", "excluded": "不含编译时间"},
    },
}
ICONS = {
    "verified": "✓",
    "changed": "!",
    "pending": "…",
    "failed": "✗",
    "skipped": "–",
    "not-run": "?",
    "no-record": "?",
    "cpu-only": "◇",
}
UNVERIFIED = {"changed", "failed", "not-run", "no-record"}

INCLUDE_LINE = re.compile(r'^\s*-{1,}8<-{1,}\s+"(?P<target>[^"]+)"\s*$')
FENCE_OPEN = re.compile(r"^(?P<indent>[ \t]*)(?P<fence>`{3,}|~{3,})(?P<info>.*)$")
ANNOTATION_ITEM = re.compile(r"^(?P<indent>[ \t]*)\d+\.\s")
TOKEN = re.compile(r"\{\{\s*(?P<name>\w+)\s*(?:\((?P<args>[^)]*)\))?\s*\}\}")


@dataclass
class BuildState:
    lock: records.Lock
    records: dict[str, dict | None]
    warned: set[tuple[str, str]] = field(default_factory=set)


STATE: BuildState | None = None


def on_config(config):
    global STATE
    lock_id = os.environ.get("DOCS_LOCK") or records.current_lock_id()
    lock = records.load_lock(lock_id)
    STATE = BuildState(lock, {slug: records.load_record(lock_id, slug) for slug in lock.devices})
    keep_notebooks_as_pages()
    return config


class NotebookPage(File):
    """A .ipynb file that MkDocs treats as a page; mkdocs-jupyter renders it."""

    def is_documentation_page(self) -> bool:
        return True


def keep_notebooks_as_pages() -> None:
    """Fix mkdocs-static-i18n issue 198: notebooks rendered as raw JSON.

    mkdocs-jupyter marks each .ipynb as a page by wrapping its File. mkdocs-static-i18n then
    rebuilds every file per language with a plain File (folder.create_i18n_file), which drops the
    mark: the notebook loses its language alternates and MkDocs renders its JSON as Markdown.
    Wrap that factory so a page stays a page; idempotent across `mkdocs serve` rebuilds.
    """
    from mkdocs_static_i18n import folder

    factory = getattr(folder.create_i18n_file, "__wrapped__", folder.create_i18n_file)

    def create_i18n_file(file, *args, **kwargs):
        i18n_file = factory(file, *args, **kwargs)
        if file.is_documentation_page() and not i18n_file.is_documentation_page():
            i18n_file.__class__ = NotebookPage
        return i18n_file

    create_i18n_file.__wrapped__ = factory
    folder.create_i18n_file = create_i18n_file


# ----------------------------------------------------------------------------- badges


def _language(page) -> str:
    lang = page.file.src_uri.split("/", 1)[0]
    if lang not in TEXT:
        raise PluginError(f"{page.file.src_uri}: pages live under docs/en or docs/zh")
    return lang


def _reason(lang: str, needs: records.SnippetNeeds, target: str, reason: str) -> str:
    """A skip reason in the page's language (snippets carry both)."""
    return needs.skip_zh.get(target, reason) if lang == "zh" else reason


def _status(path: str) -> list[tuple[str, records.Freshness]]:
    """(device slug, freshness) for each device of the lock."""
    assert STATE is not None
    try:
        needs = records.read_snippet_needs(path)
    except (records.SnippetContractError, FileNotFoundError) as exc:
        raise PluginError(str(exc)) from exc
    result = []
    for slug, record in STATE.records.items():
        fresh = records.snippet_freshness(needs, STATE.lock, record)
        result.append((slug, fresh))
        if fresh.state in UNVERIFIED and (path, slug) not in STATE.warned:
            STATE.warned.add((path, slug))
            log.warning(
                f"{path} is not verified on lock {STATE.lock.id} / {slug}: {fresh.state}. "
                "Run scripts/verify_snippets.py on that GPU and commit the record, or list the "
                f"snippet under [pending] in locks/{STATE.lock.id}.toml with a reason."
            )
    return result


def _badge_text(lang: str, slug: str, fresh: records.Freshness) -> str:
    assert STATE is not None
    record = fresh.record or {}
    reason = fresh.reason
    if fresh.state == "cpu-only":
        reason = _reason(lang, records.read_snippet_needs(fresh.path), "gpu", reason)
    device = record.get("device", {})
    versions = record.get("versions", {})
    return TEXT[lang][fresh.state].format(
        device=device.get("name", slug),
        cc=device.get("cc", "?"),
        torch=versions.get("torch", "?").split("+")[0],
        triton=versions.get("triton", "?"),
        date=(fresh.entry or {}).get("date") or record.get("date", "?"),
        reason=reason,
    )


def _cpu_text(lang: str, path: str) -> str:
    needs = records.read_snippet_needs(path)
    if needs.cpu_skip:
        return TEXT[lang]["cpu-ci-skip"].format(reason=_reason(lang, needs, "cpu", needs.cpu_skip))
    return TEXT[lang]["cpu-ci" if needs.cpu_interpreter else "cpu-ci-plain"]


def badge_html(lang: str, path: str) -> str:
    status = _status(path)
    parts = [
        f'<span class="snippet-status__gpu" data-state="{fresh.state}" data-device="{slug}">'
        f"{ICONS[fresh.state]} {html.escape(_badge_text(lang, slug, fresh))}</span>"
        for slug, fresh in status
    ]
    states = " ".join(sorted({fresh.state for _, fresh in status}))
    cpu = html.escape(_cpu_text(lang, path))
    return (
        f'<div class="snippet-status" data-snippet="{html.escape(path)}" data-states="{states}">'
        + "".join(parts)
        + f'<span class="snippet-status__cpu">{cpu}</span>'
        + f'<code class="snippet-status__path">{html.escape(path)}</code></div>'
    )


def _include_targets(lines: list[str]) -> list[str] | None:
    """Snippet files a fenced block includes, or None when it is not an include-only block."""
    targets = []
    for line in lines:
        if not line.strip():
            continue
        m = INCLUDE_LINE.match(line)
        if not m:
            return None
        targets.append(m.group("target"))
    files = []
    for target in targets:
        path = target.split(":", 1)[0]
        if path.startswith("snippets/") and path not in files:
            files.append(path)
    return files or None


def _end_of_annotations(lines: list[str], start: int, indent: str) -> int:
    """Index after the code-annotation list that follows a fence ending at ``start - 1``."""
    i = start
    while i < len(lines) and not lines[i].strip():
        i += 1
    m = ANNOTATION_ITEM.match(lines[i]) if i < len(lines) else None
    if not m or m.group("indent") != indent:
        return start
    end = i + 1
    j = i + 1
    while j < len(lines):
        line = lines[j]
        item = ANNOTATION_ITEM.match(line)
        if not line.strip():
            j += 1
            continue
        if (item and item.group("indent") == indent) or (
            line.startswith(indent) and len(line) - len(line.lstrip()) > len(indent)
        ):
            end = j + 1
            j += 1
            continue
        break
    return end


def add_snippet_blocks(markdown: str, lang: str) -> str:
    lines = markdown.split("\n")
    out: list[str] = []
    shown_whole: set[str] = set()
    i = 0
    while i < len(lines):
        m = FENCE_OPEN.match(lines[i])
        if not m:
            out.append(lines[i])
            i += 1
            continue
        indent, fence = m.group("indent"), m.group("fence")
        close = next(
            (
                j
                for j in range(i + 1, len(lines))
                if lines[j].strip().startswith(fence)
                and set(lines[j].strip()) == {fence[0]}
                and len(lines[j].strip()) >= len(fence)
            ),
            None,
        )
        if close is None:
            out.extend(lines[i:])
            break
        block = lines[i : close + 1]
        files = _include_targets(lines[i + 1 : close])
        if not files:
            out.extend(block)
            i = close + 1
            continue
        for path in files:
            out.extend([indent + badge_html(lang, path), ""])
        after = _end_of_annotations(lines, close + 1, indent)
        out.extend(block)
        out.extend(lines[close + 1 : after])
        for path in files:
            if path in shown_whole:
                continue
            shown_whole.add(path)
            title = f"{TEXT[lang]['complete']}: {Path(path).name}"
            out.extend(
                [
                    "",
                    f'{indent}??? example "{title}"',
                    "",
                    f'{indent}    ``` py title="{path}" linenums="1"',
                    f'{indent}    --8<-- "{path}"',
                    f"{indent}    ```",
                    "",
                ]
            )
        i = after
    return "\n".join(out)


# ----------------------------------------------------------------------------- tokens


def _lock_summary(lang: str) -> str:
    assert STATE is not None
    lock = STATE.lock
    return TEXT[lang]["lock"].format(
        title=lock.title, reviewed=lock.reviewed, next_review=lock.next_review
    )


def _verification_table(lang: str) -> str:
    head = TEXT[lang]["table"]
    rows = [f"| {head[0]} | {head[1]} | {head[2]} |", "| --- | --- | --- |"]
    for path in records.list_snippets():
        gpu = "<br>".join(
            f"{ICONS[fresh.state]} {html.escape(_badge_text(lang, slug, fresh))}"
            for slug, fresh in _status(path)
        )
        rows.append(f"| `{path}` | {gpu} | {html.escape(_cpu_text(lang, path))} |")
    return "\n".join(rows)


def id_card(lang: str, figure: dict, record: dict, entry_date: str) -> str:
    """The figure's ID card: what was measured, how, where and with which versions."""
    text = TEXT[lang]
    parts = [figure[k] for k in ("op", "shape", "dtype") if figure.get(k)]
    parts.append(text["statistic"][figure["statistic"]])
    if figure.get("compile"):
        parts.append(text["compile"][figure["compile"]])
    device, versions = record["device"], record["versions"]
    parts += [
        f"{device['name']} (CC {device['cc']})",
        f"torch {versions['torch'].split('+')[0]}",
        f"triton {versions['triton']}",
        entry_date,
    ]
    return " · ".join(str(p) for p in parts)


def _figure(lang: str, args: str) -> str:
    assert STATE is not None
    try:
        path, name = json.loads(f"[{args}]")
    except (json.JSONDecodeError, ValueError) as exc:
        raise PluginError(f'figure takes ("snippets/x.py", "name"), got ({args})') from exc
    for slug, fresh in _status(path):
        entry = fresh.entry
        if entry is None or name not in entry["figures"]:
            continue
        figure = entry["figures"][name]
        card = id_card(lang, figure, fresh.record, entry.get("date") or fresh.record["date"])
        if fresh.state != "verified":
            card += " · " + TEXT[lang]["figure_stale"]
        unit = figure.get("unit")
        value = f"{figure['value']} {unit}" if unit else f"{figure['value']}"
        return (
            f'<span class="record-figure" data-snippet="{html.escape(path)}" '
            f'data-figure="{html.escape(name)}" title="{html.escape(card)}">{html.escape(value)}'
            f'<sup class="record-figure__card">{html.escape(slug)}</sup></span>'
        )
    raise PluginError(f"no figure {name!r} for {path} in any GPU record of lock {STATE.lock.id}")


def expand_tokens(markdown: str, lang: str) -> str:
    def replace(m: re.Match) -> str:
        name, args = m.group("name"), m.group("args")
        if name == "lock_summary":
            return _lock_summary(lang)
        if name == "verification_table":
            return _verification_table(lang)
        if name == "figure":
            return _figure(lang, args or "")
        raise PluginError(f"unknown token {m.group(0)!r}")

    return TOKEN.sub(replace, markdown)


def on_page_markdown(markdown: str, page, config, files) -> str:
    if page.file.src_uri.endswith(".ipynb"):
        return markdown
    lang = _language(page)
    return add_snippet_blocks(expand_tokens(markdown, lang), lang)


# ----------------------------------------------------------------------------- no outside hosts

OUTSIDE_SCRIPT = re.compile(
    r"<script\b[^>]*>(?:(?!</script>).)*?https?://(?:(?!</script>).)*?</script>"
    r'|<script\b[^>]*\bsrc="https?://[^"]*"[^>]*>\s*</script>'
    r'|<script\b[^>]*\bsrc=""[^>]*>\s*</script>',
    re.DOTALL,
)


def on_page_content(html_content: str, page, config, files) -> str:
    """Drop the script loaders nbconvert puts into notebook pages.

    nbconvert's template adds a MathJax loader with an empty src and a Mermaid loader that imports
    from cdnjs.cloudflare.com; the site must make no request to an outside host.
    """
    if not page.file.src_uri.endswith(".ipynb"):
        return html_content
    return OUTSIDE_SCRIPT.sub("", html_content)


def on_page_context(context, page, config, nav):
    """Make the language switcher's links relative, so they work under a mike version prefix.

    mkdocs-static-i18n links a language's home page as an absolute "/zh/"; under mike the site
    lives at "/<version>/zh/". Material passes a root-relative link through the `url` filter,
    which makes it relative to the page.
    """
    # mkdocs-static-i18n sets the attribute (which the template reads), not the dict item
    for alternate in getattr(config.extra, "alternate", None) or []:
        link = alternate.get("link", "")
        if link.startswith("/") and not link.startswith("//"):
            alternate["link"] = link.lstrip("/") or "./"
    return context
