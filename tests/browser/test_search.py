"""One search control on every page, wide or narrow, and it works from the keyboard (issue 31).

pydata-sphinx-theme 0.17 under sphinx-book-theme 1.3 puts a search field in a header bar above the page while the
sidebar holds the book's own, one right below the other. ``_config.yml`` turns the header's off
(``html_theme_options.navbar_persistent: []``): wide screens keep the sidebar's field, narrow ones the theme's
search button in the article header (the sidebar is then a drawer, closed).
"""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.slow

WIDTHS = (1280, 400)
DOC = "chapters/04-the-llm-as-a-policy/4.1-formal-mapping"

# every search control a reader sees: the theme's buttons (field-like or icon), any search form or input
VISIBLE_SEARCH_JS = """() => {
    const shown = (e) => {
        const r = e.getBoundingClientRect(), s = getComputedStyle(e);
        return r.width > 0 && r.height > 0 && s.visibility !== 'hidden' && s.display !== 'none'
            && r.bottom > 0 && r.right > 0 && r.left < innerWidth;
    };
    const controls = [...document.querySelectorAll(
        '.search-button__button, .search-button-field, form.bd-search, input[type=search], input[name=q]')]
        .filter((e) => !e.closest('dialog') && shown(e));
    // a form and the input inside it are one control
    return controls.filter((e) => !controls.some((o) => o !== e && o.contains(e)))
        .map((e) => ({cls: e.className, where: (e.closest('header, aside, nav, .bd-sidebar-primary, '
            + '.bd-header-article') || document.body).className}));
}"""


def test_every_page_shows_exactly_one_search_control_wide_and_narrow(bt, browser, site_url, book_doc):
    found = {}
    for width in WIDTHS:
        page, log = bt.open_loaded(browser, bt.page_url(site_url, book_doc), width, 900, wait_ms=300)
        try:
            found[width] = page.evaluate(VISIBLE_SEARCH_JS)
        finally:
            bt.close(page)
    assert {w: len(c) for w, c in found.items()} == {w: 1 for w in WIDTHS}, f"{book_doc}: {found}"


def test_the_search_control_opens_search_from_the_keyboard(bt, browser, site_url):
    """At both widths: Tab reaches the one search control, Enter opens the search box with the caret in it, and a
    query with Enter goes to the search page; Ctrl+K opens the box too."""
    for width in WIDTHS:
        page, log = bt.open_loaded(browser, bt.page_url(site_url, DOC), width, 900, wait_ms=300)
        try:
            page.keyboard.press("Control+k")
            page.wait_for_function("() => document.getElementById('pst-search-dialog').open")
            assert page.evaluate("() => document.activeElement.matches('#pst-search-dialog input[name=q]')"), width
            page.keyboard.press("Escape")
            page.wait_for_function("() => !document.getElementById('pst-search-dialog').open")
            page.evaluate("() => document.activeElement && document.activeElement.blur()")
            for _ in range(60):
                page.keyboard.press("Tab")
                if page.evaluate("() => document.activeElement.matches('.search-button__button')"):
                    break
            else:
                pytest.fail(f"at {width} px, Tab never reaches a search control")
            focused = page.evaluate("() => document.activeElement.getBoundingClientRect().width")
            assert focused > 0, f"at {width} px, Tab reached a hidden search control"
            page.keyboard.press("Enter")
            page.wait_for_function("() => document.getElementById('pst-search-dialog').open")
            page.keyboard.type("advantage")
            with page.expect_navigation():
                page.keyboard.press("Enter")
            assert page.url.split("/")[-1].startswith("search.html?q=advantage"), page.url
        finally:
            bt.close(page)
