"""Issue 11, dark mode in the built book: every explorer's controls and figure texts read in light mode, and after
the reader switches the page to dark mode with the theme's own button (while the page is open), at a contrast of
at least 4.5:1 (WCAG AA); the figures really follow (their background turns dark, by toy's figure theme CSS, with no
redraw) and keep toy's numbers."""

from __future__ import annotations

import pytest

from .contrast import CONTRAST_JS

pytestmark = pytest.mark.slow

MIN_CONTRAST = 4.5


PAPERS_JS = """() => [...document.querySelectorAll('.js-plotly-plot')].map(gd => {
    // each figure's background as shown (its first SVG layer), and how many layers above it have a background of
    // their own, which would hide the traces drawn below
    const [first, ...over] = [...gd.querySelectorAll('.main-svg')].map(s => getComputedStyle(s).backgroundColor);
    return {first, covering: over.filter(c => c !== 'rgba(0, 0, 0, 0)' && c !== 'transparent').length};
})"""


def _low(rows):
    return [r for r in rows if r["ratio"] < MIN_CONTRAST]


def test_explorers_read_in_light_and_dark_mode(bt, browser, site_url, chapter_doc):
    page, log = bt.open_book_page(browser, bt.page_url(site_url, chapter_doc))
    try:
        ids = bt.explorer_ids(page)
        if not ids and not page.evaluate("() => document.querySelectorAll('.js-plotly-plot').length"):
            pytest.skip(f"{chapter_doc} has no figure")
        light = page.evaluate(CONTRAST_JS, ".toy-explorer, .cell_output")
        before = {eid: bt.read_explorer(page, eid, 1) for eid in ids}
        assert page.evaluate("() => document.documentElement.dataset.theme") == "light"
        for _ in range(3):  # the theme's own switch, which cycles light -> auto -> dark
            if page.evaluate("() => document.documentElement.dataset.theme") == "dark":
                break
            page.locator(".theme-switch-button").first.click()
            page.wait_for_timeout(100)
        assert page.evaluate("() => document.documentElement.dataset.theme") == "dark"
        page.wait_for_function(f"() => ({PAPERS_JS})().every(p => p.first !== 'rgb(255, 255, 255)')")
        page.wait_for_timeout(300)
        dark = page.evaluate(CONTRAST_JS, ".toy-explorer, .cell_output")
        papers = page.evaluate(PAPERS_JS)
        after = {eid: bt.read_explorer(page, eid, before[eid]["redraws"]) for eid in ids}
        page.screenshot(path=str(bt.ARTIFACTS / f"dark-{bt.slug(chapter_doc)}.png"), full_page=False)
    finally:
        bt.close(page)

    assert light and dark and len([r for r in dark if r["kind"] == "svg"]) > 0
    assert not _low(light), f"{chapter_doc}, light mode: {_low(light)[:10]}"
    assert not _low(dark), f"{chapter_doc}, dark mode: {_low(dark)[:10]}"
    assert papers and all(p["first"] != "rgb(255, 255, 255)" and p["covering"] == 0 for p in papers), papers
    for eid in ids:  # the same numbers, only the colours changed (by CSS: no redraw)
        assert after[eid]["traces"] == before[eid]["traces"] and after[eid]["state"] == before[eid]["state"], eid
