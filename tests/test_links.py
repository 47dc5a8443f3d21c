"""Every internal link and anchor of the published site leads somewhere.

The crawl reads the gh-pages branch that `make publish`'s script deploys (every lock under its
mike version folder, both languages in each), so it sees what a reader's browser sees: each
href, src and redirect on every page and in the search index, resolved against the page's own
address in that layout, must name a file that exists, and its `#anchor` an id on that page.
`mkdocs build --strict` checks the Markdown pages' links itself (mkdocs.yml `validation:`); this
also covers what it does not read: the notebooks, the theme, the hooks' HTML, mike's folders.
"""

from __future__ import annotations

import json
import os
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit, urlunsplit

import pytest
from conftest import LOCKS

# Where the pages say they live (site_url, set by the deploy workflow): canonical links and the
# sitemap use it, so a link to it is a link into the site.
SITE_URL = os.environ.get("DOCS_SITE_URL") or "http://127.0.0.1:8000/"
URL_ATTRIBUTES = {
    "a": "href", "link": "href", "area": "href", "img": "src", "script": "src",
    "iframe": "src", "source": "src", "video": "src", "audio": "src", "embed": "src",
}  # fmt: skip


class LinkParser(HTMLParser):
    """The ids a page holds and every URL it asks a browser to follow or load."""

    def __init__(self) -> None:
        super().__init__()
        self.ids: set[str] = set()
        self.urls: list[str] = []

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if attrs.get("id"):
            self.ids.add(attrs["id"])
        if tag == "a" and attrs.get("name"):
            self.ids.add(attrs["name"])
        url = attrs.get(URL_ATTRIBUTES.get(tag, ""))
        if url is not None:
            self.urls.append(url)
        if tag == "meta" and (attrs.get("http-equiv") or "").lower() == "refresh":
            content = attrs.get("content") or ""
            if "url=" in content.lower():
                self.urls.append(content[content.lower().index("url=") + 4 :].strip())


def remove_dot_segments(path: str) -> str:
    """RFC 3986 section 5.2.4, as a browser applies it."""
    rest, out = path, []
    while rest:
        if rest.startswith("../"):
            rest = rest[3:]
        elif rest.startswith("./"):
            rest = rest[2:]
        elif rest.startswith("/./") or rest == "/.":
            rest = "/" + rest[3:]
        elif rest.startswith("/../") or rest == "/..":
            rest = "/" + rest[4:]
            out = out[:-1]
        elif rest in (".", ".."):
            rest = ""
        else:
            end = rest.find("/", 1 if rest.startswith("/") else 0)
            out.append(rest if end < 0 else rest[:end])
            rest = "" if end < 0 else rest[end:]
    return "".join(out)


def resolve(base: str, url: str) -> str:
    """``url`` resolved against the page address ``base`` as a browser does (RFC 3986 section
    5.2; urllib's urljoin differs: it drops empty segments, so '..//x' looked fine)."""
    b, r = urlsplit(base), urlsplit(url)
    if r.scheme:
        scheme, netloc, path, query = r.scheme, r.netloc, remove_dot_segments(r.path), r.query
    elif r.netloc:
        scheme, netloc, path, query = b.scheme, r.netloc, remove_dot_segments(r.path), r.query
    elif not r.path:
        scheme, netloc, path, query = b.scheme, b.netloc, b.path, r.query or b.query
    else:
        merged = r.path if r.path.startswith("/") else b.path.rsplit("/", 1)[0] + "/" + r.path
        scheme, netloc, path, query = b.scheme, b.netloc, remove_dot_segments(merged), r.query
    return urlunsplit((scheme, netloc, path, query, r.fragment))


def target_file(root: Path, path: str) -> Path | None:
    """The file a static host (GitHub Pages) serves for ``path``: a folder's index.html, also
    for a folder named without its slash (it redirects); None where it answers 404 (an empty
    segment, as in '/v1//x', included: pathlib would quietly drop it, a static host does not)."""
    if "//" in path:
        return None
    file = root / unquote(path).lstrip("/")
    if path.endswith("/") or file.is_dir():
        file = file / "index.html"
    return file if file.is_file() else None


class Crawl:
    """Pages parsed once each; ``broken`` lists every link that leads nowhere."""

    def __init__(self, root: Path, origin: str) -> None:
        self.root, self.origin = root, origin
        self._parsed: dict[Path, LinkParser] = {}
        self.broken: list[str] = []
        self.followed = 0

    def parsed(self, file: Path) -> LinkParser:
        if file not in self._parsed:
            parser = LinkParser()
            parser.feed(file.read_text(encoding="utf-8", errors="replace"))
            self._parsed[file] = parser
        return self._parsed[file]

    def address(self, file: Path) -> str:
        """The URL a browser shows for a built file: a folder's index.html as the folder."""
        rel = file.relative_to(self.root).as_posix()
        return self.origin + (rel.removesuffix("index.html") if rel.endswith("index.html") else rel)

    def follow(self, where: str, base: str, url: str) -> None:
        """Resolve ``url`` against ``base`` as a browser does; record it if it leads nowhere."""
        url = url.strip()
        if not url or url.startswith(("mailto:", "javascript:", "data:", "tel:")):
            return
        resolved = resolve(base, url)
        parts = urlsplit(resolved)
        if parts.scheme not in ("http", "https") or f"{parts.scheme}://{parts.netloc}/" != (
            self.origin
        ):
            return  # another host: not this site's to check
        self.followed += 1
        file = target_file(self.root, parts.path)
        if file is None:
            self.broken.append(f"{where}: {url} -> {parts.path} does not exist")
            return
        if parts.fragment and file.suffix == ".html":
            anchor = unquote(parts.fragment)
            if anchor not in self.parsed(file).ids:
                self.broken.append(f"{where}: {url} -> no id {anchor!r} on {parts.path}")

    def page(self, file: Path) -> None:
        where = file.relative_to(self.root).as_posix()
        base = self.address(file)
        for url in self.parsed(file).urls:
            self.follow(where, base, url)

    def search_index(self, file: Path) -> None:
        """Material's search results link each `location` below the site's root."""
        where = file.relative_to(self.root).as_posix()
        base = self.address(file.parent.parent)
        for doc in json.loads(file.read_text(encoding="utf-8"))["docs"]:
            self.follow(where, base + "/", doc["location"] or "./")


def broken_links(root: Path, folders: list[str], origin: str = SITE_URL) -> tuple[list[str], int]:
    """Crawl every HTML page and search index under each of ``folders`` of the published tree
    at ``root`` (and the pages at the root itself): the links that lead nowhere, and how many
    links were followed."""
    crawl = Crawl(root, origin)
    files = [f for f in root.glob("*.html")]
    for folder in folders:
        files += sorted((root / folder).rglob("*.html"))
        files += sorted((root / folder).rglob("search/search_index.json"))
    for file in files:
        if file.suffix == ".json":
            crawl.search_index(file)
        else:
            crawl.page(file)
    return crawl.broken, crawl.followed


# ----------------------------------------------------------------------------- the crawler


def write(root: Path, rel: str, body: str) -> None:
    file = root / rel
    file.parent.mkdir(parents=True, exist_ok=True)
    file.write_text(f"<!doctype html><html><body>{body}</body></html>", encoding="utf-8")


def test_the_crawl_finds_a_planted_broken_link_and_anchor(tmp_path):
    """The crawler itself, on a small published tree: a notebook page's `index.md` link (issue
    17's eight broken links), a missing page, a missing anchor, a missing asset; and none of the
    links that work, however they are written."""
    write(tmp_path, "index.html", '<meta http-equiv="refresh" content="0; url=v1/">')
    write(tmp_path, "404.html", '<a href="/v1/">home</a><script src="/v1/assets/app.js"></script>')
    (tmp_path / "v1/assets").mkdir(parents=True)
    (tmp_path / "v1/assets/app.js").write_text("")
    write(
        tmp_path,
        "v1/index.html",
        '<h2 id="top">x</h2><a href="#top">ok</a> <a href="recipe/">ok</a>'
        '<a href="recipe">ok, redirected</a> <a href="recipe/#usage">ok</a>'
        '<a href="zh/">ok</a> <a href="https://example.org/x">outside</a>'
        '<a href="http://127.0.0.1:8000/v1/recipe/">canonical</a>'
        '<a href="#nowhere">planted anchor</a> <img src="assets/logo.svg">'
        '<a href="..//v1/recipe/">an empty segment</a>',
    )
    write(tmp_path, "v1/zh/index.html", '<a href="../recipe/#usage">ok</a><a href="../">ok</a>')
    write(tmp_path, "v1/recipe/index.html", '<a id="usage"></a><a href="benchmarks/">ok</a>')
    write(tmp_path, "v1/recipe/benchmarks/index.html", '<a href="index.md">the recipe</a>')
    (tmp_path / "v1/search").mkdir()
    (tmp_path / "v1/search/search_index.json").write_text(
        json.dumps({"docs": [{"location": "recipe/#usage"}, {"location": "recipe/#gone"}]})
    )
    broken, followed = broken_links(tmp_path, ["v1"], "http://127.0.0.1:8000/")
    assert sorted(broken) == sorted(
        [
            "v1/index.html: #nowhere -> no id 'nowhere' on /v1/",
            "v1/index.html: assets/logo.svg -> /v1/assets/logo.svg does not exist",
            "v1/index.html: ..//v1/recipe/ -> //v1/recipe/ does not exist",
            "v1/recipe/benchmarks/index.html: index.md -> /v1/recipe/benchmarks/index.md "
            "does not exist",
            "v1/search/search_index.json: recipe/#gone -> no id 'gone' on /v1/recipe/",
        ]
    ), broken
    assert followed == 18


# ----------------------------------------------------------------------------- the site


@pytest.mark.slow
def test_every_internal_link_and_anchor_of_every_version_leads_somewhere(gh_pages):
    """Both languages of every lock's version, as published: pages, notebooks, 404 pages,
    search results, the root's redirect."""
    folders = [lock.mike_version for lock in LOCKS]
    for folder in folders:
        assert (gh_pages / folder / "zh" / "index.html").is_file(), folder
    broken, followed = broken_links(gh_pages, folders)
    assert followed > 1000, f"only {followed} links followed: is the crawl reading the pages?"
    assert not broken, f"{len(broken)} links lead nowhere:\n" + "\n".join(broken[:40])
