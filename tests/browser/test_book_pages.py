"""Every page of the built book in headless Chromium: offline, no errors, every figure and formula rendered,
light enough, and the ways to run it (notebook download, Binder and Colab) in place.

Classification of what counts as an error of the book's own (decided deliberately; CONTRIBUTING.md): every page error
(uncaught exception), every console error, every failed or 4xx/5xx request, and every request to a host other than
127.0.0.1 fails the test; there is no allow-list. Console warnings are written to test-artifacts/ only.
"""

from __future__ import annotations

import json

import pytest
import toysite  # book/_ext: tests/conftest.py puts it on sys.path
import yaml

pytestmark = pytest.mark.slow

PAGE_BUDGET = 2_000_000  # bytes: the HTML and everything it loads, except the shared plotly.min.js
SHARED = ("/_static/plotly.min.js",)


def test_page_loads_offline_with_no_errors_and_renders(bt, visit, book_doc):
    log, report, _ = visit(book_doc)
    assert log.requests, "the page made no requests at all"
    assert log.problems() == [], f"{book_doc}: " + "\n".join(log.problems())
    assert report["title"].strip(), f"{book_doc} has no title"
    for k, fig in enumerate(report["figures"]):
        assert fig["traces"] >= 1 and fig["drawn"] >= fig["traces"], f"{book_doc}: figure {k} drew nothing: {fig}"
        if fig["barTraces"]:
            assert fig["bars"] > 0, f"{book_doc}: figure {k} has bar traces but no drawn bars"
    assert report["ready"] == report["explorers"], f"{book_doc}: explorers never became ready: {report}"
    assert report["brokenExplorers"] == 0
    assert report["typeset"] == report["math"], f"{book_doc}: {report['math'] - report['typeset']} formulas untypeset"
    assert report["mathErrors"] == 0, f"{book_doc}: {report['mathErrors']} formulas are TeX errors"


def test_the_book_has_explorers_and_math(bt, browser, site_url):
    """The generic checks above are not vacuous: Figure 4.1's explorer and the chapter's math are on the site."""
    page, log = bt.open_book_page(browser, bt.page_url(site_url, "chapters/04-the-llm-as-a-policy/4.1-formal-mapping"))
    try:
        titles = page.evaluate("() => Object.values(window.toyExplorers).map(a => a.spec.title)")
        formulas = page.evaluate("() => document.querySelectorAll('.katex').length")
        readable = page.evaluate("() => document.querySelectorAll('.katex math annotation').length")
    finally:
        bt.close(page)
    assert any(t.startswith("Figure 4.1") for t in titles), titles
    assert formulas >= 10, "the math is typeset at build time (KaTeX), with MathML for screen readers"
    assert readable == formulas


def test_plotly_loads_only_when_a_figure_comes_near(bt, browser, site_url, chapter_doc):
    """plotly.js (1.2 MB) is not part of a page's load: it is requested when a figure comes within a screen of the
    viewport (at once on a page whose first figure is that close to the top, never on a page without figures), once,
    and the figure the reader scrolled to is then drawn, from its data file."""
    page, log = bt.open_loaded(browser, bt.page_url(site_url, chapter_doc), 400, 800, wait_ms=1000)
    try:
        first = page.evaluate("""() => {
            const el = document.querySelector('.toy-plot, .toy-explorer');
            return el ? el.getBoundingClientRect().top / innerHeight : null;
        }""")
        early = [u for u in log.requests if "plotly.min.js" in u]
        if first is None:
            assert early == [], f"{chapter_doc} has no figure but loaded plotly.js"
            return
        if first > 2.2:  # the observer starts a figure one screen ahead of the viewport (and the screen's height)
            assert early == [], f"{chapter_doc}: plotly.js loaded although the first figure is {first:.1f} screens down"
        elif first < 1.8:
            assert len(early) == 1, f"{chapter_doc}: the first figure is {first:.1f} screens down, yet no plotly.js"
        page.evaluate("() => document.querySelector('.toy-plot, .toy-explorer').scrollIntoView()")
        page.wait_for_function("() => document.querySelector('.toy-plot, .toy-explorer').dataset.ready === 'true'")
        loaded = [u for u in log.requests if "plotly.min.js" in u]
        drawn = page.evaluate("() => document.querySelector('.toy-plot, .toy-explorer')"
                              ".querySelectorAll('.main-svg g.trace').length")
    finally:
        bt.close(page)
    assert len(loaded) == 1 and "?v=" in loaded[0], loaded
    assert drawn > 0
    assert any("/_static/toy-data/" in u for u in log.requests), "the figure's data comes from its own file"
    assert log.problems() == []


def _shows_code(bt, doc: str) -> bool:
    """Whether ``doc`` is a notebook with a code cell its page shows: the build gives Live code to those pages alone
    (book/_ext/toybook.py, _has_code_cells), and the review page shows none."""
    import json

    path = bt.ROOT / f"{doc}.ipynb"
    hidden = {"remove-cell", "remove-input"}
    return path.exists() and any(c["cell_type"] == "code" and not hidden & set(c.get("metadata", {}).get("tags", []))
                                 for c in json.loads(path.read_text(encoding="utf-8"))["cells"])


def test_page_offers_its_notebook_and_launch_buttons(bt, visit, book_doc):
    """Download the page's source (the .ipynb as stored: no outputs); Binder to the repository, Colab to the page's
    Colab edition; a Live code button on notebook pages, and nothing of Thebe loaded until it is pressed."""
    config = yaml.safe_load((bt.ROOT / "_config.yml").read_text())
    url = toysite.repository(bt.ROOT)[0]  # the repository the build points at, or None (then no launch buttons)
    repo = (url or "").removeprefix("https://github.com/")
    branch = config["repository"]["branch"]
    notebook = bt.ROOT / f"{book_doc}.ipynb"
    _, links, _ = visit(book_doc)
    assert len(links["download"]) == 1, links
    status, text = links["source"]
    assert status == 200, f"the download button's {links['download'][0]} answered {status}"
    assert links["thebe"] == 0, "nothing of Thebe may be loaded before the Live code button is pressed"
    assert links["liveButton"] == (1 if _shows_code(bt, book_doc) else 0), \
        "every notebook page that shows code has one Live code button"
    if notebook.exists():
        assert links["download"][0].endswith(f"{book_doc}.ipynb")
        downloaded = json.loads(text)
        assert downloaded == json.loads(notebook.read_text()), "the downloaded notebook differs from the repository's"
        assert all(not c.get("outputs") for c in downloaded["cells"] if c["cell_type"] == "code")
        assert url or links["launch"] == [], "no repository is set, so no launch buttons"
        assert not url or sorted(links["launch"]) == sorted([
            # Colab: the page's Colab edition, on the branch the built site is published to (tests/test_colab.py)
            f"https://colab.research.google.com/github/{repo}/blob/{config['sphinx']['config']['toy_colab_branch']}"
            f"/_colab/{book_doc}.ipynb",
            f"https://mybinder.org/v2/gh/{repo}/{branch}?urlpath=lab/tree/{book_doc}.ipynb",
        ]), links["launch"]
    else:
        assert links["launch"] == [], "launch buttons belong on notebook pages only"


def test_chapter_page_weight(bt, visit, chapter_doc):
    """The HTML and everything it loads (scrolled through, so late fonts count), except the shared plotly.min.js."""
    log, report, _ = visit(chapter_doc)
    assert log.problems() == []
    own = [(url, size) for url, size in report["loaded"] if not url.split("?")[0].endswith(SHARED)]
    total = sum(size for _, size in own)
    lines = [f"{size:>10,} {url}" for url, size in sorted(own, key=lambda x: -x[1])]
    bt.save_artifact(f"weight-{bt.slug(chapter_doc)}.txt", f"{total:,} bytes\n" + "\n".join(lines))
    assert any(url.endswith(f"{chapter_doc}.html") for url, _ in own)
    assert total <= PAGE_BUDGET, f"{chapter_doc} weighs {total:,} bytes (budget {PAGE_BUDGET:,}):\n" + "\n".join(
        lines[:12])


def test_search_works_offline(bt, browser, site_url):
    """The search page finds the chapter's words with the book's own index (the other pages leave the index out)."""
    page, log = bt.open_book_page(browser, f"{site_url}/search.html?q=advantage")
    try:
        page.wait_for_function("() => document.querySelectorAll('#search-results li').length > 0", timeout=20_000)
        hits = page.evaluate("() => [...document.querySelectorAll('#search-results li a')].map(a => a.href)")
    finally:
        bt.close(page)
    assert log.problems() == []
    assert any("chapters/04-the-llm-as-a-policy/" in h for h in hits), hits


def test_under_the_title_as_built_live_code_and_the_figure_list(bt, browser, site_url, built_site, chapter_doc):
    """Under the page's title, in the page as built (nothing inserted after the first paint moves the text): the
    Live code bar, whose words its script leaves as they were built, and the list of figures, visible at 400 px,
    whose first link brings the first figure to the screen."""
    built = (built_site / f"{chapter_doc}.html").read_text()
    page, log = bt.open_loaded(browser, bt.page_url(site_url, chapter_doc), 400, 800, wait_ms=500)
    try:
        state = page.evaluate("""() => {
            const h1 = document.querySelector('article.bd-article h1');
            const next = [];
            for (let el = h1.nextElementSibling; el && next.length < 2; el = el.nextElementSibling) {
                next.push(el.className);
            }
            const status = document.querySelector('.toy-live-status');
            const list = document.querySelector('.toy-figure-list');
            return {next, status: status && status.textContent, bars: document.querySelectorAll('.toy-live').length,
                    listShown: !!list && list.getBoundingClientRect().height > 0};
        }""")
        shown_status = state["status"]
        has_list = "toy-figure-list" in state["next"]
        if has_list:
            page.locator(".toy-figure-list summary").click()
            page.locator(".toy-figure-list a").first.click()
            page.wait_for_timeout(800)
            top = page.evaluate("() => document.getElementById('figure-1').getBoundingClientRect().top")
    finally:
        bt.close(page)
    notebook = _shows_code(bt, chapter_doc)
    assert state["bars"] == (1 if notebook else 0)
    if notebook:
        assert state["next"][0] == "toy-live", state
        assert f">{shown_status}</p>" in built.replace("&#x27;", "'"), "the script rewrote the bar's words"
    if has_list:
        assert state["listShown"]
        assert 0 <= top < 800, f"the first figure's link left it at {top:.0f} px"


SCROLLABLE_BLOCKS = "pre, .nboutput > .output_area, .cell_output > .output, .jp-RenderedHTMLCommon, " \
                    ".pst-scrollable-table-container"  # the theme's list (toyhtml.theme_tab_stops keeps it)


def test_far_sections_wait_and_every_block_that_scrolls_is_a_tab_stop(bt, browser, site_url):
    """4.5 on a phone. Sections far below the screen are not laid out when the page has loaded (toy.css,
    ``.toy-lazy``). The theme's tab stops, set as each block is laid out (``toyhtml.theme_tab_stops``), are right:
    a block in a section the browser skips is a tab stop unless it was measured not to scroll, so Tab never skips
    one that scrolls; once the reader has scrolled to it, a block is a tab stop if and only if it scrolls."""
    page, _ = bt.open_book_page(browser, bt.page_url(site_url, "chapters/04-the-llm-as-a-policy/4.5-connections"),
                                width=400, height=800, every_section=False)
    try:
        at_load = page.evaluate("""selector => {
            const shown = [...document.querySelectorAll(selector)].filter(e => e.checkVisibility());
            const skipped = shown.filter(e => !e.checkVisibility({contentVisibilityAuto: true}));
            const stops = skipped.map(e => e.tabIndex);  // read before the measuring below lays the blocks out
            const missed = skipped.filter((e, k) => stops[k] !== 0
                && (e.scrollWidth > e.clientWidth || e.scrollHeight > e.clientHeight))
                .map(e => e.outerHTML.slice(0, 80));
            const sections = [...document.querySelectorAll('.toy-lazy')].filter(s => s.checkVisibility());
            const laidOut = s => s.firstElementChild.checkVisibility({contentVisibilityAuto: true});
            return {blocks: shown.length, skipped: skipped.length, missed, sections: sections.length,
                    sectionsSkipped: sections.filter(s => !laidOut(s)).length};
        }""", SCROLLABLE_BLOCKS)
        seen = page.evaluate("""async selector => {
            const frame = () => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)));
            const out = [];
            for (const e of [...document.querySelectorAll(selector)].filter(e => e.checkVisibility())) {
                e.scrollIntoView({block: 'center'});
                await frame(); await frame();
                const scrolls = e.scrollWidth > e.clientWidth || e.scrollHeight > e.clientHeight;
                out.push({scrolls, tabIndex: e.tabIndex, what: e.className + ' ' + e.tagName});
            }
            return out;
        }""", SCROLLABLE_BLOCKS)
    finally:
        bt.close(page)
    assert at_load["sections"] >= 5 and at_load["sectionsSkipped"] >= at_load["sections"] // 2, at_load
    assert at_load["skipped"] > 0 and not at_load["missed"], f"blocks that scroll but Tab skips: {at_load}"
    wrong = [b for b in seen if b["tabIndex"] != (0 if b["scrolls"] else -1)]
    assert not wrong, f"{len(wrong)} of {len(seen)} blocks have the wrong tab stop: {wrong[:5]}"
    assert any(b["scrolls"] for b in seen) and not all(b["scrolls"] for b in seen), "both kinds are checked"


def test_a_link_to_a_section_far_down_keeps_its_place_while_the_page_settles(bt, browser, site_url):
    """A reader who follows a link to a section of 4.5 on a phone sees that section at the top of the screen, and
    still sees it once the figures near it are drawn and the sections above it are laid out (both change the height
    of what is above it; without toy-explorer.js's hold the browser let this one slide 757 px down)."""
    target = "training-every-method-on-the-toy"
    page, log = bt.open_loaded(browser, bt.page_url(site_url, "chapters/04-the-llm-as-a-policy/4.5-connections")
                               + f"#{target}", 400, 850)
    try:
        tops = []
        for _ in range(8):
            tops.append(page.evaluate(f"() => Math.round(document.getElementById('{target}').getBoundingClientRect()"
                                      ".top)"))
            page.wait_for_timeout(400)
        drawn = page.evaluate("() => document.querySelectorAll('.js-plotly-plot').length")
    finally:
        bt.close(page)
    assert drawn >= 1, "no figure was drawn near the section: the check proves nothing"
    assert all(0 <= top <= 140 for top in tops), f"the section's top over 3 s, in px from the window's top: {tops}"
