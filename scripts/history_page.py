"""The "What changed when" page and the since-phrases, rendered from the history records.

Nothing here is typed by hand: every cell, span and phrase comes from ``locks/history/*.json``
(scripts/history_records.py reads them). The site hook calls three functions:

* ``history_matrix(lang, anchor)``: the releases run, a matrix claim × release (each cell the
  claim's verdict and which of its outcomes it printed), then one section per claim, with a
  stable anchor (``claim_anchor``), its spans of releases and what it printed in each;
* ``since_phrase(lang, path, anchor)``: "holds from torch 2.6 to 2.15", for a chapter's prose and
  for the badge above a claim's code;
* both mark a claim file edited since its history run "changed since its history run", the way
  the badges mark a snippet edited since its lock record.

``anchor`` is the torch version of the lock the site is built for: where a claim passed on
several separate runs of releases, the phrase names the run that holds that version.
"""

from __future__ import annotations

import html
from pathlib import Path

import history_records as history
import snippet_records as records

PAGE = "what-changed.md"  # docs/<lang>/what-changed.md

TEXT = {
    "en": {
        "holds": "holds from torch {first} to {last}",
        "holds_one": "holds on torch {first} only",
        "never": "fails on every release run (torch {first} to {last})",
        "not_run": "not in the history run yet",
        "prints_change": "; what it prints changes in torch {releases}",
        "changed": "; changed since its history run",
        "and": " and ",
        "releases_head": ("torch", "triton", "Python", "numpy", "run on", "result"),
        "ran": "{n} claims run",
        "not_installable": "could not install: {reason}",
        "no_record": "not run yet",
        "matrix_head": ("Claim", "Holds"),
        "detail_head": ("Outcome", "torch", "Verdict", "What it printed"),
        "passed": "passes",
        "failed": "fails",
        "skipped": "skipped",
        "stated_in": "Stated in {link}.",
        "changed_row": "changed since its history run (sha256 {old} then, {new} now)",
        "legend": (
            "✓ the claim passed, ✗ it failed, – no run; the letter names what it printed "
            "(its lines are in the claim's section below, a line new since the previous passing "
            "release highlighted), so a letter that changes along a row is a release where the "
            "output changed; † the claim file changed since that run."
        ),
        "gpu_only": "Claim files that never run on a CPU, and so have no history here: {files}.",
        "summary": (
            "{claims} claim files that run on a CPU, under {releases} torch releases from {first} "
            "to {last}, each with the triton its wheel pins, on Python {python} ({dates})."
        ),
    },
    "zh": {
        "holds": "从 torch {first} 到 {last} 都成立",
        "holds_one": "只在 torch {first} 上成立",
        "never": "在跑过的每个版本上都不成立（torch {first} 到 {last}）",
        "not_run": "尚未进入历史运行",
        "prints_change": "；打印的内容在 torch {releases} 有变化",
        "changed": "；历史运行之后论断文件已修改",
        "and": "、",
        "releases_head": ("torch", "triton", "Python", "numpy", "运行日期", "结果"),
        "ran": "运行了 {n} 个论断",
        "not_installable": "无法安装：{reason}",
        "no_record": "尚未运行",
        "matrix_head": ("论断", "成立范围"),
        "detail_head": ("输出", "torch", "结论", "打印的内容"),
        "passed": "通过",
        "failed": "失败",
        "skipped": "跳过",
        "stated_in": "出处：{link}。",
        "changed_row": "历史运行之后论断文件已修改（当时 sha256 为 {old}，现在为 {new}）",
        "legend": (
            "✓ 论断通过，✗ 论断失败，– 没有运行；字母代表它打印的内容"
            "（具体各行见下面该论断的小节，比上一个通过的版本新出现的行以高亮标出），所以同一行里字母变了，"
            "就是输出在那个版本变了；† 表示那次运行之后论断文件改过。"
        ),
        "gpu_only": "从不在 CPU 上运行、因而这里没有历史的论断文件：{files}。",
        "summary": (
            "{claims} 个能在 CPU 上运行的论断文件，在从 {first} 到 {last} 的 {releases} 个 torch "
            "版本下各跑一遍，每个版本配上它的 wheel 所固定的 triton 版本，"
            "Python {python}（{dates}）。"
        ),
    },
}
ICONS = {"passed": "✓", "failed": "✗", "skipped": "–"}


def claim_anchor(path: str) -> str:
    """The row anchor of a claim on the page: snippets/autotune/claim_hooks.py ->
    history-autotune-claim_hooks."""
    page, name = Path(path).parent.name, Path(path).stem
    return f"history-{page}-{name}"


def letters(outcomes: list[history.Outcome]) -> dict[history.Outcome, str]:
    return {o: chr(ord("A") + i) for i, o in enumerate(outcomes)}


def since_phrase(lang: str, path: str, anchor: str | None) -> tuple[str, str]:
    """(the phrase, its state: holds / never / not-run / changed) for one claim."""
    text = TEXT[lang]
    h = history.claim_history(path)
    ran = [c for c in h.cells if c.outcome is not None]
    if not ran:
        return text["not_run"], "not-run"
    span = h.holds(anchor)
    if span is None:
        words = text["never"].format(
            first=history.short_torch(ran[0].release["torch"]),
            last=history.short_torch(ran[-1].release["torch"]),
        )
        state = "never"
    else:
        first, last = (history.short_torch(c.release["torch"]) for c in span)
        words = (
            text["holds_one"].format(first=first)
            if span[0] is span[1]
            else text["holds"].format(first=first, last=last)
        )
        changes = h.line_changes(*span)
        if changes:
            words += text["prints_change"].format(
                releases=text["and"].join(history.short_torch(c.release["torch"]) for c in changes)
            )
        state = "holds"
    if h.changed:
        words += text["changed"]
        state = "changed"
    return words, state


def since_link(lang: str, path: str, anchor: str | None, page_src_uri: str) -> str:
    """The phrase as a Markdown link to the claim's row, relative to the page it is on
    (``page_src_uri``: en/autotune/index.md), so the build checks the anchor."""
    if path not in history.cpu_claims():
        raise LookupError(
            f"{path} is not a claim snippet that runs on a CPU (snippets/*/claim_*.py)"
        )
    words, state = since_phrase(lang, path, anchor)
    target = f"{lang}/{PAGE}"
    here = page_src_uri.rsplit("/", 1)[0] if "/" in page_src_uri else ""
    href = _relative(target, here)
    return (
        f"[{html.escape(words)}]({href}#{claim_anchor(path)})"
        f'{{ .history-since data-state="{state}" }}'
    )


def since_html(lang: str, path: str, anchor: str | None, page_url: str) -> str:
    """The phrase as an HTML link (for the badge, which is raw HTML), relative to the built
    page's URL (``autotune/``, ``zh/autotune/``)."""
    words, state = since_phrase(lang, path, anchor)
    root = "zh/" if page_url.startswith("zh/") else ""
    target = f"{root}{PAGE.removesuffix('.md')}/"
    here = page_url.rstrip("/") if page_url.endswith("/") else page_url.rsplit("/", 1)[0]
    href = _relative(target, here) + f"#{claim_anchor(path)}"
    return (
        f'<a class="snippet-status__history" data-state="{state}" href="{html.escape(href)}">'
        f"{html.escape(words)}</a>"
    )


def _relative(target: str, here: str) -> str:
    import posixpath

    rel = posixpath.relpath(target, here or ".")
    return rel + ("/" if target.endswith("/") and not rel.endswith("/") else "")


def _code(line: str) -> str:
    return f"<code>{html.escape(line).replace('|', '&#124;')}</code>"


def releases_table(lang: str) -> str:
    text = TEXT[lang]
    rows = ["| " + " | ".join(text["releases_head"]) + " |", "|" + " --- |" * 6]
    for release, record in history.history_records():
        if record is None:
            cells = [release["torch"], release["triton_requirement"], "", "", "", text["no_record"]]
        elif record["status"] == "not-installable":
            reason = _code(record["reason"][:300])
            cells = [
                release["torch"],
                release["triton_requirement"],
                record["versions"].get("python", ""),
                "",
                record["date"],
                text["not_installable"].format(reason=reason),
            ]
        else:
            v = record["versions"]
            cells = [
                v["torch"],
                v["triton"],
                v["python"],
                v.get("numpy", ""),
                record["date"],
                text["ran"].format(n=len(record["snippets"])),
            ]
        rows.append("| " + " | ".join(cells) + " |")
    return "\n".join(rows)


def matrix(lang: str, anchor: str | None) -> str:
    text = TEXT[lang]
    pairs = history.history_records()
    head = [text["matrix_head"][0]]
    for release, record in pairs:
        triton = (record or {}).get("versions", {}).get("triton") or release["triton_requirement"]
        head.append(f"{history.short_torch(release['torch'])}<br><small>{triton}</small>")
    head.append(text["matrix_head"][1])
    rows = ["| " + " | ".join(head) + " |", "|" + " --- |" * len(head)]
    for path in history.cpu_claims():
        h = history.claim_history(path)
        names = letters(h.outcomes)
        cells = [f"[`{path.removeprefix('snippets/')}`](#{claim_anchor(path)})"]
        for cell in h.cells:
            if cell.outcome is None:
                cells.append('<span data-verdict="none">–</span>')
                continue
            mark = "†" if cell.changed else ""
            cells.append(
                f'<span data-verdict="{cell.outcome.verdict}" data-changed='
                f'"{str(cell.changed).lower()}">{ICONS[cell.outcome.verdict]} '
                f"{names[cell.outcome]}{mark}</span>"
            )
        words, state = since_phrase(lang, path, anchor)
        cells.append(f'<span data-state="{state}">{html.escape(words)}</span>')
        rows.append("| " + " | ".join(cells) + " |")
    return "\n".join(rows)


def claim_section(lang: str, path: str, anchor: str | None) -> str:
    text = TEXT[lang]
    h = history.claim_history(path)
    names = letters(h.outcomes)
    words, state = since_phrase(lang, path, anchor)
    page = Path(path).parent.name
    link = f"[{chapter_title(lang, page)}]({page}/index.md)"
    out = [
        f"### `{path.removeprefix('snippets/')}` {{ #{claim_anchor(path)} }}",
        "",
        f'<strong class="history-since" data-state="{state}">{html.escape(words)}</strong>. '
        + text["stated_in"].format(link=link),
        "",
    ]
    head = text["detail_head"]
    out += [f"| {' | '.join(head)} |", "| --- | --- | --- | --- |"]
    previous: tuple[str, ...] = ()
    for first, last, outcome in h.spans():
        span = history.short_torch(first.release["torch"])
        if last is not first:
            span += f" – {history.short_torch(last.release['torch'])}"
        verdict = text[outcome.verdict]
        if outcome.verdict == "passed":  # a line new since the previous passing run: marked
            printed = "<br>".join(
                f"<mark>{_code(line)}</mark>" if previous and line not in previous else _code(line)
                for line in outcome.lines
            )
            previous = outcome.lines
        else:  # what it printed before it failed, then the error
            printed = "<br>".join(
                [_code(line) for line in outcome.lines]
                + [f"<strong>{_code(outcome.error)}</strong>"]
            )
        changed = [
            c
            for c in h.cells
            if c.changed
            and c.outcome == outcome
            and history.version_tuple(first.release["torch"])
            <= history.version_tuple(c.release["torch"])
            <= history.version_tuple(last.release["torch"])
        ]
        if changed:
            printed += (
                "<br><em>"
                + html.escape(
                    text["changed_row"].format(old=changed[0].row["sha256"][:12], new=h.sha256[:12])
                )
                + "</em>"
            )
        out.append(
            f"| {names[outcome]} | {span} | {ICONS[outcome.verdict]} {verdict} | {printed} |"
        )
    return "\n".join(out)


def chapter_title(lang: str, page: str) -> str:
    """The title of docs/<lang>/<page>/index.md (its first heading, without its anchor)."""
    source = records.REPO_ROOT / "docs" / lang / page / "index.md"
    for line in source.read_text(encoding="utf-8").splitlines():
        if line.startswith("# "):
            return line[2:].split("{")[0].strip()
    return page


def history_matrix(lang: str, anchor: str | None) -> str:
    """The whole generated part of the page."""
    text = TEXT[lang]
    ran = [r for _, r in history.history_records() if r and r["status"] == "ran"]
    rel = history.releases()
    dates = sorted({r["date"] for r in ran})
    summary = text["summary"].format(
        claims=len(history.cpu_claims()),
        releases=len(rel),
        first=rel[0]["torch"],
        last=rel[-1]["torch"],
        python=", ".join(sorted({r["versions"]["python"] for r in ran})) or "–",
        dates=" – ".join(dict.fromkeys([dates[0], dates[-1]])) if dates else "–",
    )
    gpu_only = text["gpu_only"].format(
        files=("、" if lang == "zh" else ", ").join(
            f"`{p.removeprefix('snippets/')}`" for p in gpu_only_claims()
        )
    )
    parts = [summary, "", releases_table(lang), "", text["legend"], ""]
    parts += ['<div class="history-matrix" markdown>', "", matrix(lang, anchor), "", "</div>", ""]
    parts += [gpu_only, ""]
    for path in history.cpu_claims():
        parts += [claim_section(lang, path, anchor), ""]
    return "\n".join(parts)


def gpu_only_claims() -> list[str]:
    """Claim files that never run on a CPU: no history run (listed on the page)."""
    return [
        p
        for p in records.list_snippets()
        if history.is_claim(p) and not records.read_snippet_needs(p).runs_on_cpu
    ]
