"""MkDocs hook: workarounds for other packages' bugs, each removable when upstream fixes it.

Nothing here is this project's own logic (that is scripts/site_hooks.py). Each fix names the
upstream issue and the version it was checked against; when a new release fixes one, delete the
fix and its test still tells whether the site is right.

- keep_notebooks_as_pages: ultrabug/mkdocs-static-i18n issue 198; checked against
  mkdocs-static-i18n 1.3.1.
- relative_language_links: ultrabug/mkdocs-static-i18n issue 265; checked against
  mkdocs-static-i18n 1.3.1.
- drop_outside_script_loaders: jupyter/nbconvert pull request 1957 (Mermaid loader from cdnjs);
  checked against nbconvert 7.17.2.
- one_404_per_language, alternates_on_404: the language built last overwrites /404.html
  (ultrabug/mkdocs-static-i18n issues 284 and 349); checked against mkdocs-static-i18n 1.3.1.
- sitemap_slash: under `mike deploy`, mike sets site_url to urljoin(site_url, version) without a
  trailing slash (jimporter/mike pull request 251, open), and the i18n sitemap writes
  site_url ~ url; checked against mike 2.2.0 and mkdocs-static-i18n 1.3.1.
- notebook_css_once: mkdocs-jupyter inlines ~600 KB of JupyterLab CSS into every notebook page
  (templates/mkdocs_html/notebook.html.j2) and no option in 0.26.3 turns it off; checked against
  mkdocs-jupyter 0.26.3. overrides/main.html links the file on notebook pages. Not reported
  upstream (danielfrg/mkdocs-jupyter's issues searched on 2026-12-01).
- mkdocs-jupyter's `ignore: ["*.md"]` in mkdocs.yml: 0.26.3 parses every Markdown page with
  jupytext to look for a notebook header before it checks `include` (plugin.py, should_include);
  checked against mkdocs-jupyter 0.26.3. Not reported upstream (searched on 2026-12-01).
- overrides/partials/javascripts/outdated.html: Material's outdated-banner script calls
  new URL(base_url) without a base; checked against mkdocs-material 9.8.2. Not reported upstream
  (squidfunk/mkdocs-material's issues searched on 2026-12-01; Material 9.x is in maintenance).
"""

from __future__ import annotations

import copy
import re
from pathlib import Path
from urllib.parse import urlsplit

from mkdocs.structure.files import File


class NotebookPage(File):
    """A .ipynb file that MkDocs treats as a page; mkdocs-jupyter renders it."""

    def is_documentation_page(self) -> bool:
        return True


def keep_notebooks_as_pages() -> None:
    """mkdocs-static-i18n issue 198: notebooks rendered as raw JSON.

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


def on_config(config):
    keep_notebooks_as_pages()
    return config


OUTSIDE_SCRIPT = re.compile(
    r"<script\b[^>]*>(?:(?!</script>).)*?https?://(?:(?!</script>).)*?</script>"
    r'|<script\b[^>]*\bsrc="https?://[^"]*"[^>]*>\s*</script>'
    r'|<script\b[^>]*\bsrc=""[^>]*>\s*</script>',
    re.DOTALL,
)


def drop_outside_script_loaders(html_content: str) -> str:
    """nbconvert's template adds a MathJax loader with an empty src and a Mermaid loader that
    imports from cdnjs.cloudflare.com; the site must make no request to an outside host."""
    return OUTSIDE_SCRIPT.sub("", html_content)


NOTEBOOK_CSS_FILES = (
    "index.css",
    "theme-light.css",
)  # in mkdocs_jupyter/templates/mkdocs_html/assets
NOTEBOOK_CSS_URL = "assets/notebook.css"
INLINE_NOTEBOOK_CSS = re.compile(
    r'<style type="text/css">\s*(?:@charset "UTF-8";)?\.jupyter-wrapper\{.*?</style>'
    r"|<style>\s*\['.*?'\]\s*</style>",  # nbconvert2.nb2html: the repr of a list, not CSS
    re.DOTALL,
)


def notebook_css_once(html_content: str) -> str:
    """Drop the JupyterLab CSS inlined into a notebook page; on_post_build writes it once."""
    return INLINE_NOTEBOOK_CSS.sub("", html_content)


def on_page_content(html_content: str, page, config, files) -> str:
    if not page.file.src_uri.endswith(".ipynb"):
        return html_content
    return notebook_css_once(drop_outside_script_loaders(html_content))


def on_post_build(config) -> None:
    import mkdocs_jupyter

    assets = Path(mkdocs_jupyter.__file__).parent / "templates/mkdocs_html/assets"
    css = "\n".join((assets / name).read_text(encoding="utf-8") for name in NOTEBOOK_CSS_FILES)
    dest = Path(config.site_dir, NOTEBOOK_CSS_URL)
    dest.parent.mkdir(parents=True, exist_ok=True)
    dest.write_text(css, encoding="utf-8")


def relative_language_links(config) -> None:
    """mkdocs-static-i18n links a language's home page as an absolute "<site path>/zh/"; under
    mike the site lives at "<site path>/<version>/zh/" (issue 265). Material passes a link
    relative to the docs root through the `url` filter, which makes it relative to the page."""
    root = urlsplit(config.site_url or "").path.rstrip("/") + "/"
    # mkdocs-static-i18n sets the attribute (which the template reads), not the dict item
    for alternate in getattr(config.extra, "alternate", None) or []:
        link = alternate.get("link", "")
        if link.startswith(root) and not link.startswith("//"):
            alternate["link"] = link[len(root) :] or "./"


def on_page_context(context, page, config, nav):
    relative_language_links(config)
    return context


def one_404_per_language(output: str, config) -> str:
    """mkdocs-static-i18n builds every language into one site_dir, and each build writes the
    theme's 404.html to site_dir/404.html, so the language built last (zh) won. Write a
    non-default language's 404 under its folder and give MkDocs an empty output, which it skips.
    """
    i18n = config.plugins["i18n"]
    lang = i18n.current_language
    if lang == i18n.default_language:
        return output
    dest = Path(config.site_dir, lang, "404.html")
    dest.parent.mkdir(parents=True, exist_ok=True)
    dest.write_text(output, encoding="utf-8")
    return ""


def sitemap_slash(output: str, site_url: str | None) -> str:
    """Put back the "/" between site_url and a page URL ("…/triton-3.6zh/" under mike)."""
    if not site_url or site_url.endswith("/"):
        return output
    return re.sub(
        r'(<loc>|href=")' + re.escape(site_url) + r"(?!/)", r"\g<1>" + site_url + "/", output
    )


def on_post_template(output: str, template_name: str, config) -> str:
    if template_name == "sitemap.xml":
        return sitemap_slash(output, config.site_url)
    if template_name == "404.html":
        return one_404_per_language(output, config)
    return output


def alternates_on_404(context, template_name: str, config):
    """A 404 page's language switcher points at each language's home page, not at the last page
    mkdocs-static-i18n rendered (static templates are rendered before the next language's pages).
    """
    if template_name == "404.html":
        i18n = config.plugins["i18n"]
        if i18n.extra_alternate:
            # absolute links here: a 404 page is served at whatever path was asked for
            config.extra.alternate = copy.deepcopy(i18n.extra_alternate)
    return context


def on_template_context(context, template_name: str, config):
    return alternates_on_404(context, template_name, config)
