/* WCAG fixes that need the rendered page (no outside requests; checked by the axe run in
 * tests/test_browser.py).
 * 1. Code-annotation markers: Material builds <a class="md-annotation__index"> holding only an
 *    empty span (the number is CSS content), so the link has no accessible name.
 * 2. Notebook code cells / outputs and (narrow screens) tables that scroll get tabindex="0",
 *    a role and a name, as Material does for its own code blocks, so a keyboard can scroll them.
 * 3. mike's version selector: Material labels the button "Select version" while it shows the
 *    version's title; a name that leaves out the visible text fails WCAG 2.5.3 (label in name).
 */
(function () {
  "use strict";
  var zh = (document.documentElement.lang || "").toLowerCase().indexOf("zh") === 0;
  var T = zh
    ? { annotation: "代码注释 ", cell: "代码单元（可滚动）", table: "表格（可横向滚动）" }
    : { annotation: "Code annotation ", cell: "Code cell (scrollable)", table: "Table (scrolls sideways)" };
  var SCROLLERS = [
    [".jupyter-wrapper .highlight-ipynb, .jupyter-wrapper pre", T.cell],
    [".md-typeset__scrollwrap", T.table]
  ];

  function labelAnnotations(root) {
    root.querySelectorAll(".md-annotation__index:not([aria-label])").forEach(function (a) {
      var id = a.querySelector("[data-md-annotation-id]");
      a.setAttribute("aria-label", T.annotation + (id ? id.getAttribute("data-md-annotation-id") : ""));
    });
  }

  function labelVersionSelector(root) {
    root.querySelectorAll(".md-version__current[aria-label]").forEach(function (button) {
      var label = button.getAttribute("aria-label");
      var text = button.textContent.trim();
      if (text && label.indexOf(text) < 0) button.setAttribute("aria-label", label + ": " + text);
    });
  }

  function scrollables() {
    SCROLLERS.forEach(function (kind) { document.querySelectorAll(kind[0]).forEach(function (el) {
      var style = getComputedStyle(el);
      var scrolls = /auto|scroll/.test(style.overflowX + style.overflowY) &&
        (el.scrollWidth > el.clientWidth + 1 || el.scrollHeight > el.clientHeight + 1);
      var inside = el.parentElement && el.parentElement.closest("[data-a11y-scroll]");
      if (scrolls && !inside) {
        el.setAttribute("tabindex", "0");
        el.setAttribute("role", "region");
        el.setAttribute("aria-label", kind[1]);
        el.setAttribute("data-a11y-scroll", "");
      } else if (!scrolls && el.hasAttribute("data-a11y-scroll")) {
        ["tabindex", "role", "aria-label", "data-a11y-scroll"].forEach(function (n) { el.removeAttribute(n); });
      }
    }); });
  }

  function init() {
    labelAnnotations(document);
    labelVersionSelector(document);
    scrollables();
  }

  // Material mounts annotations after load (and again on instant navigation): label them as added.
  new MutationObserver(function (records) {
    records.forEach(function (r) {
      r.addedNodes.forEach(function (n) {
        if (n.nodeType !== 1) return;
        labelAnnotations(n.parentNode || n);
        labelVersionSelector(n.parentNode || n);
      });
    });
  }).observe(document.documentElement, { childList: true, subtree: true });

  var timer;
  window.addEventListener("resize", function () { clearTimeout(timer); timer = setTimeout(scrollables, 150); });
  document.addEventListener("toggle", scrollables, true); // a <details> opened: cells inside it now have a size

  if (typeof document$ !== "undefined") document$.subscribe(init); // Material's page-load stream
  else if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", init);
  else init();
})();
