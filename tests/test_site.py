"""The built site: strict build, both languages in step, every snippet shown with its record."""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser
from pathlib import Path

import pytest
import snippet_records as records
from conftest import LANGUAGES, REPO, build_site, built_page, copy_project, doc_pages

INCLUDE = re.compile(r'^\s*-{1,}8<-{1,}\s+"(?P<target>[^"]+)"\s*$', re.M)
FENCE = re.compile(
    r"^(?P<indent>[ \t]*)(?P<fence>`{3,}|~{3,})(?P<info>[^\n]*)\n"
    r"(?P<body>.*?)^(?P=indent)(?P=fence)[ \t]*$",
    re.M | re.S,
)
PYTHON_INFO = re.compile(r"^\s*\{?\s*\.?(py|python|python3|pycon)\b")


def markdown_pages(lang: str) -> list[str]:
    return [p for p in doc_pages(lang) if p.endswith(".md")]


def includes(lang: str, page: str) -> list[str]:
    return INCLUDE.findall((REPO / "docs" / lang / page).read_text(encoding="utf-8"))


class PageParser(HTMLParser):
    """Collects heading ids, snippet badges and the code blocks of one built page."""

    def __init__(self) -> None:
        super().__init__()
        self.heading_ids: list[str] = []
        self.badges: list[dict] = []
        self.text: list[str] = []

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if re.fullmatch(r"h[1-6]", tag) and attrs.get("id"):
            self.heading_ids.append(attrs["id"])
        if tag == "div" and "snippet-status" in (attrs.get("class") or "").split():
            self.badges.append({"snippet": attrs["data-snippet"], "states": attrs["data-states"]})

    def handle_data(self, data):
        self.text.append(data)


def parse(path: Path) -> PageParser:
    parser = PageParser()
    parser.feed(path.read_text(encoding="utf-8"))
    return parser


# ----------------------------------------------------------------------------- sources


def test_languages_have_the_same_pages():
    assert doc_pages("en") == doc_pages("zh")
    assert "index.md" in doc_pages("en")


@pytest.mark.parametrize("page", markdown_pages("en"))
def test_languages_include_the_same_snippets(page):
    assert includes("en", page) == includes("zh", page)


@pytest.mark.parametrize("path", records.list_snippets())
@pytest.mark.parametrize("lang", LANGUAGES)
def test_every_snippet_is_shown_in_every_language(path, lang):
    shown = {t.split(":", 1)[0] for page in markdown_pages(lang) for t in includes(lang, page)}
    assert path in shown, f"{path} is on no {lang} page"


@pytest.mark.parametrize("lang", LANGUAGES)
def test_included_sections_exist(lang):
    """check_paths stops the build for a missing file; a missing section would show nothing."""
    for page in markdown_pages(lang):
        for target in includes(lang, page):
            path, _, section = target.partition(":")
            text = (REPO / path).read_text(encoding="utf-8")
            if section:
                assert f"# --8<-- [start:{section}]" in text, f"{page}: no section {target}"
                assert f"# --8<-- [end:{section}]" in text, f"{page}: unclosed {target}"


@pytest.mark.parametrize("lang", LANGUAGES)
def test_no_hand_typed_python_on_pages(lang):
    """Python on a page comes from snippets/ (notebooks are executed by test_notebooks.py)."""
    for page in markdown_pages(lang):
        for m in FENCE.finditer((REPO / "docs" / lang / page).read_text(encoding="utf-8")):
            if not PYTHON_INFO.match(m.group("info")):
                continue
            lines = [line for line in m.group("body").splitlines() if line.strip()]
            typed = [line for line in lines if not INCLUDE.match(line)]
            assert not typed, f"docs/{lang}/{page}: Python typed by hand: {typed[:3]}"
            assert all('"snippets/' in line for line in lines), f"docs/{lang}/{page}: {lines}"


# ----------------------------------------------------------------------------- built site


@pytest.mark.parametrize("page", doc_pages("en"))
def test_languages_have_the_same_heading_anchors(site_dir, page):
    en = parse(built_page(site_dir, "en", page)).heading_ids
    zh = parse(built_page(site_dir, "zh", page)).heading_ids
    assert en == zh
    assert en, f"{page} has no heading ids"


@pytest.mark.parametrize("page", markdown_pages("en"))
def test_every_included_block_has_its_badge_in_both_languages(site_dir, page):
    expected = [t.split(":", 1)[0] for t in includes("en", page)]
    badges = {lang: parse(built_page(site_dir, lang, page)).badges for lang in LANGUAGES}
    assert [b["snippet"] for b in badges["en"]] == expected
    assert badges["en"] == badges["zh"]


def test_badges_say_where_the_code_was_verified(site_dir):
    page = "block-programming/index.md"
    en = built_page(site_dir, "en", page).read_text(encoding="utf-8")
    zh = built_page(site_dir, "zh", page).read_text(encoding="utf-8")
    lock = records.load_lock(records.current_lock_id())
    record = records.load_record(lock.id, lock.devices[0])
    device, cc = record["device"]["name"], record["device"]["cc"]
    versions = f"torch {lock.torch} · triton {lock.triton} · {record['date']}"
    assert f"verified on {device} (CC {cc}) · {versions}" in en
    assert f"已在 {device}（CC {cc}）上验证 · {versions}" in zh
    assert "runs on CPU only: checks a limit of the CPU interpreter" in en
    assert "只在 CPU 上运行：检查的是 CPU 解释器的限制" in zh


@pytest.mark.parametrize("lang", LANGUAGES)
def test_each_shown_file_can_be_copied_whole(site_dir, lang):
    """Each file shown in part also appears whole (collapsed), with its PEP 723 header."""
    page = built_page(site_dir, lang, "block-programming/index.md").read_text(encoding="utf-8")
    title = "Complete runnable file" if lang == "en" else "完整可运行文件"
    for path in {t.split(":", 1)[0] for t in includes(lang, "block-programming/index.md")}:
        assert f"{title}: {Path(path).name}" in page
        assert f'<span class="filename">{path}</span>' in page


def test_figures_come_from_the_record(site_dir):
    lock = records.load_lock(records.current_lock_id())
    record = records.load_record(lock.id, lock.devices[0])
    entry = next(
        e
        for e in record["snippets"]
        if e["path"] == "snippets/block_programming/constexpr_recompile.py"
    )
    variants = entry["figures"]["variants"]["value"]
    for lang in LANGUAGES:
        page = built_page(site_dir, lang, "block-programming/index.md").read_text(encoding="utf-8")
        m = re.search(r'data-figure="variants" title="(?P<card>[^"]+)">(?P<value>[^<]+)<', page)
        assert m, f"{lang}: no variants figure"
        assert m.group("value") == str(variants)
        assert record["device"]["name"] in m.group("card") and lock.triton in m.group("card")


@pytest.mark.parametrize("lang", LANGUAGES)
def test_notebook_pages_are_rendered_not_raw_json(site_dir, lang):
    """mkdocs-static-i18n issue 198: without the hook's fix this page is the notebook's JSON."""
    html = built_page(site_dir, lang, "notebooks/reading-a-gpu-record.ipynb").read_text("utf-8")
    assert '"cell_type"' not in html and '"nbformat"' not in html
    assert "jp-Cell" in html and "jp-OutputArea" in html
    assert "def sha256" in "".join(
        parse(built_page(site_dir, lang, "notebooks/reading-a-gpu-record.ipynb")).text
    )


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
    r"""|<link\b[^>]*\bhref=["']?(?:https?:)?//"""
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


# ----------------------------------------------------------------------------- freshness in builds


@pytest.fixture
def project_copy(tmp_path) -> Path:
    return copy_project(tmp_path / "project")


def test_build_fails_when_a_snippet_changed_since_its_gpu_run(project_copy, tmp_path):
    snippet = project_copy / "snippets/block_programming/vector_add.py"
    snippet.write_text(snippet.read_text() + "\n# an edit after the GPU run\n")
    proc = build_site(project_copy, tmp_path / "out")
    assert proc.returncode != 0
    assert "vector_add.py is not verified" in proc.stderr


def test_pending_snippet_builds_and_shows_its_reason(project_copy, tmp_path):
    snippet = project_copy / "snippets/block_programming/vector_add.py"
    snippet.write_text(snippet.read_text() + "\n# an edit after the GPU run\n")
    lock_file = project_copy / "locks" / f"{records.current_lock_id()}.toml"
    lock_file.write_text(
        lock_file.read_text().replace(
            "[pending]\n",
            '[pending]\n"snippets/block_programming/vector_add.py" = "H200 re-run booked"\n',
        )
    )
    proc = build_site(project_copy, tmp_path / "out")
    assert proc.returncode == 0, proc.stderr
    html = (tmp_path / "out/block-programming/index.html").read_text(encoding="utf-8")
    assert 'data-state="pending"' in html and "GPU run pending: H200 re-run booked" in html
    zh = (tmp_path / "out/zh/block-programming/index.html").read_text(encoding="utf-8")
    assert "等待 GPU 重新验证：H200 re-run booked" in zh
