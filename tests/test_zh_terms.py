"""The Chinese edition uses one rendering per term: the renderings the glossary rejects appear in
no Chinese page, notebook or interface string.

The list is the table under "不再使用的译法 { #rejected }" in docs/zh/glossary.md (the English
glossary repeats it and must list the same words). In its first column, each code span is a
string to look for, where a run of digits stands for any number and a lone `X` for any value or
{{ token }}; the third column's code spans are longer forms that contain it and are fine
(笔记本电脑 holds 笔记本). What is checked:

* docs/zh/**/*.md, outside fenced code and code spans without Chinese (a {{ token }} counts as a
  value), leaving out the rejected table itself;
* the zh notebooks' markdown cells (the same way) and the text of their saved outputs;
* the strings the site shows in Chinese: every string literal with Chinese in scripts/*.py (the
  hook's TEXT["zh"], the state words, the Python range...), the lines with Chinese in mkdocs.yml
  (nav_translations), overrides/, the snippets' headers (skip-zh) and the locks (reason-zh).

"变体" for an experiment's setup and "程序" for a script depend on the sense; no test tells them
apart (the glossary says so under the table).
"""

from __future__ import annotations

import ast
import json
import re
from dataclasses import dataclass
from pathlib import Path

import page_source
import pytest

REPO = Path(__file__).resolve().parents[1]
GLOSSARY = {lang: REPO / "docs" / lang / "glossary.md" for lang in ("en", "zh")}
REJECTED_HEADING = re.compile(r"^##\s.*\{\s*#rejected\s*\}\s*$")
CJK = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")
CODE_SPAN = re.compile(r"(`+)(.+?)\1")
SPACE = "[ \u00a0\u2009\u202f]"


@dataclass(frozen=True)
class Rule:
    """One rejected string: the regex that finds it, and the forms that hold it harmlessly."""

    rejected: str
    pattern: re.Pattern
    allowed: tuple[str, ...]

    def finds(self, text: str) -> list[str]:
        """Each hit with a little of the text around it."""
        for form in self.allowed:
            text = text.replace(form, "\u3007")
        return [
            text[max(m.start() - 20, 0) : m.end() + 20].replace("\n", " ")
            for m in self.pattern.finditer(text)
        ]


def pattern_of(literal: str) -> re.Pattern:
    """`20 %` -> r'\\d+[ ]+%'; `相差 X 倍` -> 相差, any value or token, 倍; the rest literally."""
    pieces = re.findall(r"\d+|(?<!\w)X(?!\w)|\s+|.", literal)
    parts = []
    for i, piece in enumerate(pieces):
        if piece.isdigit():
            parts.append(r"\d+")
        elif piece == "X":
            parts.append(r"\s*(?:X|[−-]?\d[\d.,]*)\s*")
        elif piece.isspace():
            if "X" not in pieces[max(i - 1, 0) : i + 2]:  # next to X, the X takes the space
                parts.append(SPACE + "+")
        else:
            parts.append(re.escape(piece))
    return re.compile("".join(parts))


def rejected_table(path: Path) -> list[list[str]]:
    """The rows of the table under the #rejected heading, as lists of cells."""
    lines = path.read_text(encoding="utf-8").splitlines()
    start = next((i for i, line in enumerate(lines) if REJECTED_HEADING.match(line)), None)
    assert start is not None, f"{path}: no '## ... {{ #rejected }}' section"
    rows = []
    for line in lines[start + 1 :]:
        if line.startswith("#"):
            break
        if line.startswith("|") and not re.fullmatch(r"\|[\s|:-]+\|", line):
            rows.append([cell.strip() for cell in line.strip().strip("|").split("|")])
    return rows[1:]  # without the header row


def spans(cell: str) -> list[str]:
    return [m.group(2) for m in CODE_SPAN.finditer(cell)]


def rules_from(path: Path) -> list[Rule]:
    rules = []
    for row in rejected_table(path):
        assert len(row) == 4, f"{path}: a row of the rejected table needs 4 cells: {row}"
        allowed = tuple(spans(row[2]))
        for literal in spans(row[0]):
            rules.append(Rule(literal, pattern_of(literal), allowed))
    return rules


RULES = rules_from(GLOSSARY["zh"])


def prose_lines(markdown: str, skip_rejected_table: bool = False) -> list[tuple[int, str]]:
    """Numbered lines of prose: fenced code left out, a {{ token }} read as a value X, code
    spans without Chinese left out (API names, printed English)."""
    lines = markdown.splitlines()
    hidden = set()
    for fence in page_source.iter_fences(lines):
        hidden.update(range(fence.start, fence.end + 1))
    if skip_rejected_table:
        for i, line in enumerate(lines):
            if REJECTED_HEADING.match(line):
                end = next((j for j in range(i + 1, len(lines)) if lines[j].startswith("#")), None)
                hidden.update(range(i, end if end is not None else len(lines)))
    # one paragraph at a time (a sentence may run over a soft line break), named by its first line
    out: list[tuple[int, str]] = []
    start = None
    for i, line in enumerate([*lines, ""]):
        if i in hidden or not line.strip():
            if start is not None:
                text = page_source.TOKEN.sub(" X ", "\n".join(lines[start:i]))
                text = CODE_SPAN.sub(lambda m: m.group(2) if CJK.search(m.group(2)) else " ", text)
                out.append((start + 1, text))
                start = None
        elif start is None:
            start = i
    return out


def violations(numbered: list[tuple[int | str, str]]) -> list[str]:
    found = []
    for where, text in numbered:
        for rule in RULES:
            for hit in rule.finds(text):
                found.append(f"{where}: `{rule.rejected}` in ...{hit}...")
    return found


# ----------------------------------------------------------------------------- the list


def test_the_glossary_lists_the_rejected_renderings():
    assert len(RULES) >= 10, [r.rejected for r in RULES]
    # the words the Chinese review settled; each must be on the list
    settled = ("断言", "徽标", "合并访问", "受限于显存", "平铺", "笔记本", "运行器", "分位")
    for word in settled:
        assert word in {r.rejected for r in RULES}, word


def test_both_glossaries_list_the_same_rejected_renderings():
    en, zh = (
        [(spans(row[0]), spans(row[2])) for row in rejected_table(GLOSSARY[lang])]
        for lang in ("en", "zh")
    )
    assert en == zh, "docs/en/glossary.md and docs/zh/glossary.md list different renderings"


def test_each_rule_finds_its_rendering_and_spares_the_allowed_forms():
    """A test that cannot fail is a defect: each rule, given its own example, must fire."""
    for rule in RULES:
        example = f"前文{rule.rejected}后文"
        assert rule.finds(example), f"`{rule.rejected}` does not find itself"
        assert violations([("example", example)])
        for form in rule.allowed:
            assert not rule.finds(f"前文{form}后文"), f"`{form}` should be allowed"
    by_word = {r.rejected: r for r in RULES}
    assert by_word["20 %"].finds("20–80 % 分位数") and not by_word["20 %"].finds("20%–80%")
    assert by_word["相差 X 倍"].finds("两者相差 X 倍") and by_word["相差 X 倍"].finds("相差 3.5 倍")
    assert not violations(prose_lines("写法见 `20 %`，代码 `x % 16`。\n```\n徽标\n```"))


# ----------------------------------------------------------------------------- pages


def zh_pages() -> list[Path]:
    return sorted((REPO / "docs" / "zh").rglob("*.md"))


@pytest.mark.parametrize("path", zh_pages(), ids=lambda p: str(p.relative_to(REPO / "docs" / "zh")))
def test_chinese_pages_use_no_rejected_rendering(path):
    text = path.read_text(encoding="utf-8")
    found = violations(prose_lines(text, skip_rejected_table=path == GLOSSARY["zh"]))
    assert not found, f"docs/zh/{path.relative_to(REPO / 'docs' / 'zh')}:\n" + "\n".join(found)


def zh_notebooks() -> list[Path]:
    return sorted((REPO / "docs" / "zh").rglob("*.ipynb"))


def output_text(output: dict) -> str:
    parts = [output.get("text", "")]
    for kind, value in (output.get("data") or {}).items():
        if kind.startswith("text/"):
            parts.append(value)
    return "".join("".join(p) if isinstance(p, list) else p for p in parts)


@pytest.mark.parametrize(
    "path", zh_notebooks(), ids=lambda p: str(p.relative_to(REPO / "docs" / "zh"))
)
def test_chinese_notebooks_use_no_rejected_rendering(path):
    notebook = json.loads(path.read_text(encoding="utf-8"))
    numbered: list[tuple[int | str, str]] = []
    for index, cell in enumerate(notebook["cells"]):
        if cell["cell_type"] == "markdown":
            for line, text in prose_lines("".join(cell["source"])):
                numbered.append((f"cell {index} line {line}", text))
        for output in cell.get("outputs", []):
            for line, text in enumerate(output_text(output).splitlines(), 1):
                numbered.append((f"cell {index} output line {line}", text))
    found = violations(numbered)
    assert not found, f"{path.relative_to(REPO)}:\n" + "\n".join(found)


# ----------------------------------------------------------------------------- interface strings


def chinese_interface_strings() -> list[tuple[str, str]]:
    """(where, text) for every string the site shows in Chinese outside the pages."""
    found = []
    for path in sorted((REPO / "scripts").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                if CJK.search(node.value):
                    found.append((f"{path.relative_to(REPO)}:{node.lineno}", node.value))
    files = [REPO / "mkdocs.yml", *sorted((REPO / "overrides").rglob("*.html"))]
    files += sorted((REPO / "locks").glob("*.toml")) + sorted((REPO / "snippets").rglob("*.py"))
    for path in files:
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if CJK.search(line):
                found.append((f"{path.relative_to(REPO)}:{number}", line))
    return found


def test_there_are_chinese_interface_strings_to_check():
    where = {w.split(":")[0] for w, _ in chinese_interface_strings()}
    assert {"scripts/site_hooks.py", "scripts/snippet_records.py", "mkdocs.yml"} <= where


def test_chinese_interface_strings_use_no_rejected_rendering():
    found = violations(chinese_interface_strings())
    assert not found, "\n".join(found)
