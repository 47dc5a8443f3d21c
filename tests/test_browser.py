"""The built site in a real browser: Debian's Chromium driven by Playwright (no browser download).

What is served is the gh-pages branch that `make publish`'s script deploys with mike (every
lock under its version folder, mike's versions.json), to catch absolute links. The language
switcher and the version selector land on the same page (driven on four pages; every page is
where they look for it, in each version's sitemap); on every page, axe-core finds no serious or
critical violation in the light or the dark scheme with every collapsed block open. A copied
complete file runs as is; each download of a file with the files beside it is the archive that
ran alone in an empty folder as its page says. Links and anchors of every page are
tests/test_links.py's. Screenshots go to build/screenshots/ for a person to look at.
"""

from __future__ import annotations

import functools
import hashlib
import http.server
import json
import os
import re
import subprocess
import sys
import threading
import urllib.request
import xml.etree.ElementTree as ET
from pathlib import Path
from urllib.parse import urljoin, urlparse

import pytest
import site_hooks
import snippet_copies as copies
import snippet_records as records
from conftest import CURRENT, LOCKS, REPO, doc_pages, lock_python, page_url

pytestmark = pytest.mark.browser

CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
AXE = REPO / "node_modules" / "axe-core" / "axe.min.js"
UV = REPO / ".venv-uv" / "bin" / "uv"
CHAPTER = "block-programming/"
SCREENSHOTS = REPO / "build" / "screenshots"


PAGES = [(lang, page) for lang in ("en", "zh") for page in doc_pages(lang)]


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


class QuietServer(http.server.ThreadingHTTPServer):
    def handle_error(self, request, client_address):
        """A page that navigates away drops its requests: not an error of the site's."""
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


@pytest.fixture(scope="module")
def server(gh_pages):
    """The gh-pages branch that `make publish`'s script wrote (every lock under its mike version
    folder, versions.json, the root 404 page), served from its root as GitHub Pages serves it;
    yields the root URL."""
    handler = functools.partial(QuietHandler, directory=str(gh_pages))
    httpd = QuietServer(("127.0.0.1", 0), handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}/"
    httpd.shutdown()


@pytest.fixture(scope="module")
def base_url(server):
    return server + CURRENT.mike_version + "/"


@pytest.fixture(scope="module")
def browser():
    if not Path(CHROMIUM).exists():
        pytest.fail(
            f"{CHROMIUM} not found: install Debian's chromium (apt-get install chromium "
            "fonts-noto-cjk), or set CHROMIUM to a Chromium binary"
        )
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=CHROMIUM,
            args=[
                "--no-sandbox",
                "--disable-gpu",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--no-first-run",
            ],
        )
        yield browser
        browser.close()


def watched_page(context):
    """A new page of ``context`` that keeps the hosts it requests and its JavaScript errors."""
    page = context.new_page()
    page.requested_hosts, page.errors = set(), []
    page.on("request", lambda request: page.requested_hosts.add(urlparse(request.url).hostname))
    page.on("pageerror", lambda error: page.errors.append(f"{page.url}: {error}"))
    return page


def check_watched(page) -> None:
    outside = page.requested_hosts - {"127.0.0.1", None}
    assert not outside, f"the site requested outside hosts: {sorted(outside)}"
    assert not page.errors, "JavaScript errors on the page:\n" + "\n".join(page.errors)


def without_search_documents(page, site_dir: Path) -> None:
    """Each page load gets the site's own search index config with no documents in it.
    Material's search worker builds its index from the whole file on every load (the largest
    thing a load parses), and what the tests but the search test check does not depend on it."""
    index = json.loads((site_dir / "search" / "search_index.json").read_text(encoding="utf-8"))
    empty = json.dumps({**index, "docs": []})
    page.route(
        "**/search/search_index.json",
        lambda route: route.fulfill(body=empty, content_type="application/json"),
    )


@pytest.fixture
def page_with_search(browser):
    """A fresh page that loads the site as a reader's browser does, search index included."""
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    context.grant_permissions(["clipboard-read", "clipboard-write"])
    page = watched_page(context)
    yield page
    context.close()
    check_watched(page)


@pytest.fixture
def page(page_with_search, site_dir):
    """The same, for every test but the search test, without the search documents."""
    without_search_documents(page_with_search, site_dir)
    return page_with_search


@pytest.fixture(scope="module")
def shared_page(browser, site_dir):
    """One page for the accessibility test, which loads every page of the site in turn: a new
    context for each cost a new renderer process, about a sixth of the test's processor time.
    Every load starts with empty storage, as in a new context (the palette choice lives there)."""
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    context.add_init_script("try { localStorage.clear(); } catch (e) {}")
    page = watched_page(context)
    without_search_documents(page, site_dir)
    yield page
    context.close()


@pytest.fixture
def reused_page(shared_page):
    """shared_page, checked as `page` is after each test: no outside host, no JavaScript error."""
    shared_page.requested_hosts.clear()
    shared_page.errors.clear()
    yield shared_page
    check_watched(shared_page)


def switch_language(page, lang: str) -> None:
    page.locator(".md-header__option .md-select").first.hover()
    with page.expect_navigation():
        page.locator(f'a.md-select__link[hreflang="{lang}"]').click()
    page.wait_for_load_state()


def switch_version(page, lock) -> None:
    selector = page.locator(".md-version__current")
    selector.focus()  # the list opens on focus as on hover
    with page.expect_navigation():
        page.locator(".md-version__link", has_text=lock.title).click()
    page.wait_for_load_state()


SOURCES = doc_pages("en")  # the same pages in both languages (tests/test_site.py)
# Driven in the browser: the home page, a chapter, a notebook and a page at the top level; that
# every other page is where they look for it is test_every_page_is_where_both_switchers_look_for_it.
SWITCHED = ["index.md", "block-programming/index.md", "notebooks/reading-a-gpu-record.ipynb",
            "glossary.md"]  # fmt: skip
SITEMAP = "{http://www.sitemaps.org/schemas/sitemap/0.9}"


def test_every_page_is_where_both_switchers_look_for_it(server):
    """The static half of the switcher test, on every page of each language in each version:
    its language links point at the same page in each language, and Material's version
    selector finds it in each version's sitemap.xml, where it looks (the page's path below the
    version folder, resolved against the sitemap's common prefix, must be listed; else the
    selector lands on that version's home page)."""
    assert set(SWITCHED) <= set(SOURCES)

    def read(url: str) -> str:
        with urllib.request.urlopen(url) as response:
            return response.read().decode("utf-8")

    for lock in LOCKS:
        root = server + lock.mike_version + "/"
        listed = {
            loc.text for loc in ET.fromstring(read(root + "sitemap.xml")).iter(SITEMAP + "loc")
        }
        prefix = os.path.commonprefix(sorted(listed))
        unlisted, astray = [], []
        for source in SOURCES:
            for lang in ("en", "zh"):
                if prefix + page_url(lang, source) not in listed:
                    unlisted.append(page_url(lang, source))
                url = root + page_url(lang, source)
                links = dict(
                    (hreflang, href)
                    for href, hreflang in re.findall(
                        r'<a href="([^"]*)" hreflang="([^"]+)"', read(url)
                    )
                )
                for other in ("en", "zh"):
                    if urljoin(url, links.get(other, "")) != root + page_url(other, source):
                        astray.append((page_url(lang, source), other, links.get(other)))
        assert not unlisted, f"{lock.id}: not where the version selector looks: {unlisted}"
        assert not astray, f"{lock.id}: language links to another page: {astray}"


@pytest.mark.parametrize("source", SWITCHED)
def test_language_and_version_switchers_land_on_the_same_page(page, server, source):
    """Both switchers, both ways, in every version: English in the current version -> Chinese
    -> the next version -> English -> ... -> back to the current version. mike's version
    selector and the i18n language switcher must keep the page (mkdocs-static-i18n 265)."""

    def url(lock, lang: str) -> str:
        return server + lock.mike_version + "/" + page_url(lang, source)

    lang, lock = "en", CURRENT
    page.goto(url(lock, lang))
    for target in [*(other for other in LOCKS if other.id != CURRENT.id), CURRENT]:
        lang = "zh" if lang == "en" else "en"
        switch_language(page, lang)
        assert page.url == url(lock, lang)
        assert page.locator("html").get_attribute("lang") == lang
        assert page.locator(".md-version__current").inner_text() == lock.title
        switch_version(page, target)
        lock = target
        assert page.url == url(lock, lang)
        assert page.locator(".md-version__current").inner_text() == lock.title


def search_for(page, query: str) -> None:
    """Enter a query in Material's search box the way a Chinese input method does.

    Material reads the query on `keyup` (and once when its search worker is ready). An IME
    commits Chinese text as an input event followed by key events; Playwright's typing of CJK
    text sends only the input event, so finish with a key press, as the IME's commit does.
    """
    search = page.locator("input.md-search__input")
    search.click()
    search.fill(query)
    search.press("End")


def test_chinese_search_lands_on_the_chinese_page(page_with_search, base_url):
    page = page_with_search
    page.goto(base_url + "zh/")
    search_for(page, "掩码")
    results = page.locator(".md-search-result__item > a")
    results.first.wait_for(timeout=15_000)
    hrefs = [a.get_attribute("href") for a in results.all()]
    assert hrefs and "/zh/" in hrefs[0], hrefs  # a Chinese page first (the English glossary
    # lists the Chinese terms too, so it may be among the results)
    chapter = results.filter(has=page.locator("h1", has_text="GPU 并行模型与分块编程")).first
    assert "zh/block-programming/" in chapter.get_attribute("href"), hrefs
    chapter.click()
    page.wait_for_load_state()
    assert page.url.startswith(base_url + "zh/" + CHAPTER)
    assert page.locator("h1").inner_text().startswith("GPU 并行模型与分块编程")


def copy_complete_file(page, url: str, name: str) -> str:
    page.goto(url)
    copy = 'button.md-code__button[data-md-type="copy"]'  # Material 9's copy button
    page.locator(copy).first.wait_for(state="attached")
    details = page.locator("details.complete-file", has_text=name).first
    details.locator("summary").click()
    details.locator(copy).click()
    return page.evaluate("navigator.clipboard.readText()")


@pytest.mark.parametrize("lock", LOCKS, ids=lambda lock: lock.id)
def test_copied_complete_file_runs_as_is_in_its_locks_environment(page, server, lock, tmp_path):
    """Copy a whole file with the page's copy button, as a reader would: only its PEP 723 block
    differs from the recorded file (the lock's pins), and it runs on a CPU, both in the lock's
    environment and with `uv run`, which installs exactly those pins."""
    path = "snippets/block-programming/vector_add.py"
    copied = copy_complete_file(page, server + lock.mike_version + "/" + CHAPTER, "vector_add.py")
    assert copied.strip() == site_hooks.runnable_file(path, lock).strip()
    pins = ", ".join(f'"{p}"' for p in lock.pins(records.read_snippet_needs(path).dependencies))
    assert f"# dependencies = [{pins}]" in copied
    assert f'# requires-python = "{lock.python}"' in copied
    script = tmp_path / "vector_add.py"
    script.write_text(copied, encoding="utf-8")
    env = {**os.environ, "TRITON_INTERPRET": "1", "CUDA_VISIBLE_DEVICES": ""}
    for command in (
        [lock_python(lock), str(script)],
        [str(UV), "run", "--no-project", "--quiet", str(script)],
    ):
        proc = subprocess.run(command, env=env, capture_output=True, text=True, timeout=600)
        assert proc.returncode == 0, f"{command}:\n{proc.stdout}\n{proc.stderr}"
        assert "vector_add: all checks passed" in proc.stdout


ARCHIVED = [path for path in records.list_snippets() if copies.has_archive(path)]


@pytest.mark.parametrize("lock", LOCKS, ids=lambda lock: lock.id)
@pytest.mark.parametrize("path", ARCHIVED)
def test_a_download_runs_alone_in_an_empty_folder_as_its_page_says(
    page, server, lock, path, cpu_runs, tmp_path
):
    """A file that reads files beside it (issue 17: four copies failed alone): its page offers
    one download beside the complete file, with the commands that run it (the Chinese page under
    the current lock, the English one under the others; tests/test_site.py checks both pages of
    the current lock's build). The archive the browser downloads is the one the suite's CPU run
    of this file under this lock unpacked alone in an empty folder and ran with those commands
    (conftest.copy_run: one run per file and lock, as build_time.py's builds alone cost more
    than the rest of this test); unpacked as the page says, it holds exactly the files the
    record binds."""
    source = path.split("/")[1] + "/index.md"  # the page its folder is named after
    name, stem = copies.archive_name(path), Path(path).stem
    lang = "zh" if lock.id == CURRENT.id else "en"
    page.goto(server + lock.mike_version + "/" + page_url(lang, source))
    block = page.locator(f'.complete-file-needs[data-snippet="{path}"] .complete-file-download')
    with page.expect_download() as info:
        block.locator("a[download]").click()
    assert info.value.suggested_filename == name
    info.value.save_as(tmp_path / name)
    data = (tmp_path / name).read_bytes()
    assert data == copies.archive_bytes(path, lock)
    commands = block.locator("pre code").inner_text().strip().splitlines()
    assert commands == copies.run_commands(path), commands

    folder = tmp_path / "empty"
    folder.mkdir()
    (folder / name).write_bytes(data)
    env = {
        **os.environ,
        "PATH": str(Path(lock_python(lock)).parent) + os.pathsep + os.environ["PATH"],
    }
    subprocess.run(["bash", "-ec", commands[0]], cwd=folder, env=env, check=True)
    unpacked = sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file())
    needs = records.read_snippet_needs(path)
    base = path.rsplit("/", 1)[0] + "/"
    bound = [f"{stem}/{rel.removeprefix(base)}" for rel in (path, *needs.files)]
    assert unpacked == sorted([name, *bound])
    snippets = set(records.list_snippets())
    for rel, inside in zip((path, *needs.files), bound, strict=True):
        expected = (
            site_hooks.runnable_file(rel, lock).encode() if rel in snippets
            else (REPO / rel).read_bytes()
        )  # fmt: skip
        assert (folder / inside).read_bytes() == expected, inside

    if needs.cpu_skip:
        pytest.skip(f"the download is checked; it does not run on a CPU: {needs.cpu_skip}")
    run = cpu_runs.run(lock, path)
    assert run.archive_sha256 == hashlib.sha256(data).hexdigest()
    assert run.commands == commands
    assert run.returncode == 0, f"{path} from {name}:\n{run.stdout[-3000:]}\n{run.stderr[-3000:]}"
    assert f"{stem}: all checks passed" in run.stdout


def test_light_dark_toggle(page, base_url):
    page.goto(base_url + "zh/" + CHAPTER)
    scheme = lambda: page.locator("body").get_attribute("data-md-color-scheme")  # noqa: E731
    assert scheme() == "default"
    page.locator("form[data-md-component=palette] label:visible").first.click()
    assert scheme() == "slate"


def test_code_annotations_are_interactive_and_named(page, base_url):
    page.goto(base_url + CHAPTER)
    markers = page.locator(".md-annotation__index")
    assert markers.count() >= 10
    assert markers.first.get_attribute("aria-label") == "Code annotation 1"


def test_id_card_link_reaches_the_card_by_keyboard(page, base_url):
    page.goto(base_url + CHAPTER)
    link = page.locator("a.record-card-link").first
    link.focus()
    page.keyboard.press("Enter")
    card = page.url.split("#", 1)[1]
    assert re.fullmatch(r"id-card-\d+", card)
    assert page.locator(f"#{card}").is_visible()


# ----------------------------------------------------------------------------- accessibility


WCAG_TAGS = {"type": "tag", "values": ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]}
# What a colour scheme can change: the rules of WCAG 2.1 A/AA that read colours.
COLOUR_RULES = {"type": "rule", "values": ["color-contrast", "link-in-text-block"]}


def axe_violations(page, run_only: dict = WCAG_TAGS) -> list[dict]:
    """axe-core on the page as it is now, every <details> open."""
    page.evaluate("() => document.querySelectorAll('details').forEach(d => { d.open = true; })")
    page.wait_for_timeout(150)  # Material's observers settle
    if not page.evaluate("() => typeof axe !== 'undefined'"):
        page.add_script_tag(path=str(AXE))
    result = page.evaluate(
        "async (runOnly) => await axe.run(document, {runOnly, resultTypes: ['violations']})",
        run_only,
    )
    return [
        {
            "id": v["id"],
            "impact": v["impact"],
            "help": v["help"],
            "nodes": [
                (" ".join(map(str, n["target"])), n["failureSummary"]) for n in v["nodes"][:5]
            ],
        }
        for v in result["violations"]
    ]


@pytest.mark.parametrize("lang, source", [*PAGES, ("en", "404.html"), ("zh", "404.html")])
def test_no_serious_accessibility_violation(reused_page, base_url, lang, source):
    """Every WCAG 2.1 A/AA rule in the light scheme as loaded (empty storage, light preferred);
    then dark through the palette toggle, as a reader switches it, where the rules that read
    colours run again (the scheme changes colours, not structure): one load, both schemes."""
    if not AXE.exists():
        pytest.fail(f"{AXE} is missing: run `npm ci` (make test does)")
    if source == "404.html" and lang == "en":  # the root's, as GitHub Pages serves it
        url = base_url.rsplit("/", 2)[0] + "/" + source
    elif source == "404.html":  # the Chinese one: the version folder's zh/404.html
        url = base_url + "zh/" + source
    else:
        url = base_url + page_url(lang, source)
    page = reused_page
    page.emulate_media(color_scheme="light")
    page.goto(url)
    page.wait_for_load_state("networkidle")
    found = {}
    for scheme in ("default", "slate"):
        if scheme == "slate":
            page.locator("form[data-md-component=palette] label:visible").first.click()
        assert page.locator("body").get_attribute("data-md-color-scheme") == scheme
        rules = WCAG_TAGS if scheme == "default" else COLOUR_RULES
        found[scheme] = [
            v for v in axe_violations(page, rules) if v["impact"] in ("serious", "critical")
        ]
    assert not any(found.values()), json.dumps(found, indent=1, ensure_ascii=False)


# ----------------------------------------------------------------------------- screenshots


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_screenshot_of_the_chapter(page, base_url, lang):
    page.goto(base_url + ("" if lang == "en" else "zh/") + CHAPTER)
    badges = page.locator(".snippet-status")
    assert badges.count() >= 8
    assert badges.first.is_visible()
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=SCREENSHOTS / f"{lang}-block-programming-top.png")
    for anchor in ("parallel-model", "grid-limits", "bandwidth"):
        page.locator(f"#{anchor}").scroll_into_view_if_needed()
        page.screenshot(path=SCREENSHOTS / f"{lang}-block-programming-{anchor}.png")
    page.emulate_media(color_scheme="dark")
    page.evaluate("() => localStorage.clear()")
    page.reload()
    page.locator("#parallel-model").scroll_into_view_if_needed()
    page.screenshot(path=SCREENSHOTS / f"{lang}-block-programming-diagram-dark.png")
