"""One reading of a page's Markdown source, shared by the site hook and the tests.

The rule it serves: both see the same fenced blocks, the same include lines, the same
code-annotation lists and the same ``{{ token(...) }}`` calls, so a block the hook decorates is
the block the tests check. Standard library only.

* A fence opens with three or more backticks or tildes (after any indentation, e.g. inside an
  admonition) and closes with a line of the same character, at least as long, at the same
  indentation (up to three spaces more, as in CommonMark). A longer fence may hold shorter ones.
* An include line is ``--8<-- "path"`` or ``--8<-- "path:section"`` (pymdownx.snippets).
* A code-annotation list is the ordered list right after a fence (blank lines allowed between),
  at the fence's indentation; its items may continue on lines indented deeper.
* A token is ``{{ name }}`` or ``{{ name("json", "arguments") }}``; the arguments are a JSON list
  without its brackets.
* A measured span is the text from ``{{ measured }}`` to the next ``{{ end_measured }}``: words that
  hold only where a GPU run measured them (an order, a gap, a change since the run before). Spans
  do not nest; each token inside one knows its span's number.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

FENCE_OPEN = re.compile(r"^(?P<indent>[ \t]*)(?P<marker>`{3,}|~{3,})(?P<info>.*)$")
INCLUDE_LINE = re.compile(r'^\s*-{1,}8<-{1,}\s+"(?P<target>[^"]+)"\s*$')
ANNOTATION_ITEM = re.compile(r"^(?P<indent>[ \t]*)\d+\.\s")
TOKEN = re.compile(r"\{\{\s*(?P<name>[a-z_][a-z0-9_]*)\s*(?:\((?P<args>.*?)\))?\s*\}\}")
SPAN_MARKER = re.compile(r"\{\{\s*(?:end_)?measured\s*\}\}")
MEASURED_SPAN = re.compile(r"\{\{\s*measured\s*\}\}(?P<body>.*?)\{\{\s*end_measured\s*\}\}", re.S)
SNIPPETS_PREFIX = "snippets/"


class PageSourceError(ValueError):
    """A page's source cannot be read the way the site needs it."""


@dataclass(frozen=True)
class Fence:
    """A fenced code block: lines ``start`` (opening) to ``end`` (closing), both inclusive."""

    start: int
    end: int
    indent: str
    marker: str
    info: str
    body: tuple[str, ...]

    @property
    def language(self) -> str:
        """The language word of the info string: ``py`` for ``` py title="x" ``` or ``{.py}``."""
        m = re.match(r"\s*\{?\s*\.?(?P<lang>[^\s{}.]+)", self.info)
        return m.group("lang") if m else ""

    @property
    def include_targets(self) -> list[str] | None:
        """The include targets when every non-blank line is an include line, else None."""
        lines = [line for line in self.body if line.strip()]
        if not lines:
            return None
        targets = []
        for line in lines:
            m = INCLUDE_LINE.match(line)
            if not m:
                return None
            targets.append(m.group("target"))
        return targets

    @property
    def snippet_files(self) -> list[str]:
        """Runnable snippet files (.py) this block includes, each once, in order; empty when none.

        A block may also include a data file a snippet uses (a .cpp, a pyproject.toml): it is
        shown as it is, without a badge of its own; the snippet that uses it carries the badge.
        """
        files: list[str] = []
        for target in self.include_targets or []:
            path = split_target(target)[0]
            if is_snippet(path) and path not in files:
                files.append(path)
        return files


def is_snippet(path: str) -> bool:
    """snippets/<page>/<name>.py is a runnable snippet; anything else under snippets/ is data."""
    return bool(re.fullmatch(r"snippets/[^/]+/[^/]+\.py", path))


def split_target(target: str) -> tuple[str, str]:
    """``"snippets/x.py:section"`` -> ``("snippets/x.py", "section")``; no section -> ``""``."""
    path, _, section = target.partition(":")
    return path, section


def _closes(line: str, fence_indent: str, marker: str) -> bool:
    stripped = line.strip()
    if not stripped or set(stripped) != {marker[0]} or len(stripped) < len(marker):
        return False
    indent = len(line) - len(line.lstrip())
    return len(fence_indent) <= indent <= len(fence_indent) + 3


def iter_fences(lines: list[str]) -> Iterator[Fence]:
    """Every top-level fenced block in ``lines`` (fences inside a fence are its body)."""
    i = 0
    while i < len(lines):
        m = FENCE_OPEN.match(lines[i])
        if not m or (m.group("marker")[0] == "`" and "`" in m.group("info")):
            i += 1
            continue
        indent, marker = m.group("indent"), m.group("marker")
        end = next((j for j in range(i + 1, len(lines)) if _closes(lines[j], indent, marker)), None)
        if end is None:
            raise PageSourceError(f"line {i + 1}: fence {marker!r} is never closed")
        yield Fence(i, end, indent, marker, m.group("info").strip(), tuple(lines[i + 1 : end]))
        i = end + 1


def annotation_list_end(lines: list[str], after: int, indent: str) -> int:
    """Index just past the code-annotation list starting at or after ``after``.

    Returns ``after`` itself when no ordered list at ``indent`` follows the fence.
    """
    i = after
    while i < len(lines) and not lines[i].strip():
        i += 1
    m = ANNOTATION_ITEM.match(lines[i]) if i < len(lines) else None
    if not m or m.group("indent") != indent:
        return after
    end = i + 1
    for j in range(i + 1, len(lines)):
        line = lines[j]
        if not line.strip():
            continue
        item = ANNOTATION_ITEM.match(line)
        deeper = line.startswith(indent) and len(line) - len(line.lstrip()) > len(indent)
        if (item and item.group("indent") == indent) or deeper:
            end = j + 1
            continue
        break
    return end


def annotation_items(lines: list[str], fence: Fence) -> list[str]:
    """The text of each item of the annotation list after ``fence`` (continuations joined)."""
    stop = annotation_list_end(lines, fence.end + 1, fence.indent)
    items: list[str] = []
    for line in lines[fence.end + 1 : stop]:
        m = ANNOTATION_ITEM.match(line)
        if m and m.group("indent") == fence.indent:
            items.append(line[m.end() :].strip())
        elif line.strip() and items:
            items[-1] += " " + line.strip()
    return items


@dataclass(frozen=True)
class Token:
    name: str
    args: tuple
    line: int  # 0-based line of the token in the page source
    text: str
    span: int | None = None  # the measured span it stands in (0, 1, ...), if any


def parse_token_args(name: str, args: str | None) -> tuple:
    if not args:
        return ()
    try:
        value = json.loads(f"[{args}]")
    except json.JSONDecodeError as exc:
        raise PageSourceError(f"{{{{ {name}({args}) }}}}: arguments must be JSON values") from exc
    return tuple(value)


def iter_tokens(text: str) -> Iterator[Token]:
    """Every ``{{ token }}`` in ``text`` (also inside fences: a token is never code), each with
    the measured span it stands in; a span's own two tokens are yielded too, outside it."""
    spans, open_at = 0, None
    for m in TOKEN.finditer(text):
        name, line = m.group("name"), text.count("\n", 0, m.start())
        if name == "measured":
            if open_at is not None:
                raise PageSourceError(
                    f"line {line + 1}: {{{{ measured }}}} inside the span of line {open_at + 1}"
                )
            open_at = line
        elif name == "end_measured":
            if open_at is None:
                raise PageSourceError(
                    f"line {line + 1}: {{{{ end_measured }}}} without {{{{ measured }}}}"
                )
            open_at, spans = None, spans + 1
        yield Token(
            name,
            parse_token_args(name, m.group("args")),
            line,
            m.group(0),
            spans if open_at is not None and name != "measured" else None,
        )
    if open_at is not None:
        raise PageSourceError(f"line {open_at + 1}: {{{{ measured }}}} is never closed")


@dataclass(frozen=True)
class PageSource:
    """What the site and the tests need from one page's Markdown."""

    text: str

    @property
    def lines(self) -> list[str]:
        return self.text.split("\n")

    @property
    def fences(self) -> list[Fence]:
        return list(iter_fences(self.lines))

    @property
    def include_targets(self) -> list[str]:
        """Every include target, in page order (repeats kept)."""
        return [t for f in self.fences for t in f.include_targets or []]

    @property
    def snippet_files(self) -> list[str]:
        """Each snippet file the page includes, once, in page order."""
        files: list[str] = []
        for fence in self.fences:
            files += [p for p in fence.snippet_files if p not in files]
        return files

    @property
    def tokens(self) -> list[Token]:
        return list(iter_tokens(self.text))

    def hand_typed_fences(self) -> list[Fence]:
        """Fences that are not include-only blocks of snippet files: typed into the page."""
        return [
            f
            for f in self.fences
            if f.include_targets is None
            or not all(split_target(t)[0].startswith(SNIPPETS_PREFIX) for t in f.include_targets)
        ]


def read_page(path: Path | str) -> PageSource:
    return PageSource(Path(path).read_text(encoding="utf-8"))
