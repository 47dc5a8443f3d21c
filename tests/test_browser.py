"""The built site in a real browser: Debian's Chromium driven by Playwright (no browser download).

Served the way mike publishes it, under a version folder, to catch absolute links. Screenshots
of the chapter in both languages go to build/screenshots/ for a person to look at.
"""

from __future__ import annotations

import functools
import http.server
import json
import os
import shutil
import subprocess
import sys
import threading
from pathlib import Path
from urllib.parse import urlparse

import pytest
import snippet_records as records
from conftest import REPO

pytestmark = pytest.mark.browser

CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
CHAPTER = "block-programming/"
SCREENSHOTS = REPO / "build" / "screenshots"


@pytest.fixture(scope="module")
def base_url(site_dir, tmp_path_factory):
    """The site under /<mike version>/, with a mike-style versions.json beside it."""
    lock = records.load_lock(records.current_lock_id())
    root = tmp_path_factory.mktemp("served")
    shutil.copytree(site_dir, root / lock.mike_version)
    (root / "versions.json").write_text(
        json.dumps([{"version": lock.mike_version, "title": lock.title, "aliases": ["latest"]}])
    )
    handler = functools.partial(QuietHandler, directory=str(root))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}/{lock.mike_version}/"
    server.shutdown()


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


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


@pytest.fixture
def page(browser):
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    context.grant_permissions(["clipboard-read", "clipboard-write"])
    page = context.new_page()
    page.requested_hosts = set()
    page.on("request", lambda request: page.requested_hosts.add(urlparse(request.url).hostname))
    errors = []
    page.on("pageerror", lambda error: errors.append(f"{page.url}: {error}"))
    yield page
    outside = page.requested_hosts - {"127.0.0.1", None}
    context.close()
    assert not outside, f"the site requested outside hosts: {sorted(outside)}"
    assert not errors, "JavaScript errors on the page:\n" + "\n".join(errors)


def switch_language(page, lang: str) -> None:
    page.locator(".md-header__option .md-select").first.hover()
    page.locator(f'a.md-select__link[hreflang="{lang}"]').click()
    page.wait_for_load_state()


def test_switch_between_english_and_chinese(page, base_url):
    page.goto(base_url + CHAPTER)
    assert page.locator("h1").inner_text().startswith("The GPU parallel model")
    switch_language(page, "zh")
    assert page.url == base_url + "zh/" + CHAPTER
    assert page.locator("h1").inner_text().startswith("GPU 并行模型与分块编程")
    assert page.locator("html").get_attribute("lang") == "zh"
    switch_language(page, "en")
    assert page.url == base_url + CHAPTER
    assert page.locator("html").get_attribute("lang") == "en"


def test_home_page_switches_language_under_the_version_folder(page, base_url):
    page.goto(base_url)
    switch_language(page, "zh")
    assert page.url == base_url + "zh/"
    assert page.locator("h1").inner_text().startswith("Triton 算子")


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


def test_chinese_search_lands_on_the_chinese_page(page, base_url):
    page.goto(base_url + "zh/")
    search_for(page, "掩码")
    result = page.locator(".md-search-result__item a").first
    result.wait_for(timeout=15_000)
    assert "zh/block-programming/" in result.get_attribute("href")
    result.click()
    page.wait_for_load_state()
    assert page.url.startswith(base_url + "zh/" + CHAPTER)
    assert page.locator("h1").inner_text().startswith("GPU 并行模型与分块编程")


def test_copied_complete_file_runs_as_is(page, base_url, tmp_path):
    """Copy a whole file with the page's copy button, as a reader would, and run it."""
    page.goto(base_url + CHAPTER)
    copy = 'button.md-code__button[data-md-type="copy"]'  # Material 9.7's copy button
    page.locator(copy).first.wait_for(state="attached")
    code_blocks = page.locator("div.highlight")
    assert page.locator(f"div.highlight {copy}").count() == code_blocks.count() > 0
    details = page.locator("details.example", has_text="vector_add.py").first
    details.locator("summary").click()
    details.locator(copy).click()
    copied = page.evaluate("navigator.clipboard.readText()")
    original = (REPO / "snippets/block_programming/vector_add.py").read_text(encoding="utf-8")
    assert copied.strip() == "\n".join(
        line for line in original.strip().splitlines() if "# --8<-- [" not in line
    )
    script = tmp_path / "vector_add.py"
    script.write_text(copied, encoding="utf-8")
    env = {**os.environ, "TRITON_INTERPRET": "1", "CUDA_VISIBLE_DEVICES": ""}
    proc = subprocess.run(
        [sys.executable, str(script)], env=env, capture_output=True, text=True, timeout=300
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "all checks passed" in proc.stdout


def test_light_dark_toggle(page, base_url):
    page.goto(base_url + "zh/" + CHAPTER)
    scheme = lambda: page.locator("body").get_attribute("data-md-color-scheme")  # noqa: E731
    assert scheme() == "default"
    page.locator("form[data-md-component=palette] label:visible").first.click()
    assert scheme() == "slate"


def test_version_selector_lists_the_lock(page, base_url):
    page.goto(base_url + CHAPTER)
    lock = records.load_lock(records.current_lock_id())
    selector = page.locator(".md-version__current")
    selector.wait_for()
    assert selector.inner_text() == lock.title


def test_code_annotations_are_interactive(page, base_url):
    page.goto(base_url + CHAPTER)
    assert page.locator(".md-annotation").count() >= 10


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_screenshot_of_the_chapter(page, base_url, lang):
    page.goto(base_url + ("" if lang == "en" else "zh/") + CHAPTER)
    badges = page.locator(".snippet-status")
    assert badges.count() >= 8
    assert badges.first.is_visible()
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=SCREENSHOTS / f"{lang}-block-programming-top.png")
    page.locator("#constexpr").scroll_into_view_if_needed()
    page.screenshot(path=SCREENSHOTS / f"{lang}-block-programming-constexpr.png")
    page.screenshot(path=SCREENSHOTS / f"{lang}-block-programming-full.png", full_page=True)
