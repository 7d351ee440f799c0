"""Every page of the built book in headless Chromium: offline, no errors, every figure and formula rendered,
light enough, and the ways to run it (notebook download, Binder and Colab) in place.

Classification of what counts as an error of the book's own (decided deliberately, see README): every page error
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
    assert report["mathErrors"] == 0, f"{book_doc}: MathJax reported {report['mathErrors']} TeX errors"


def test_the_book_has_explorers_and_math(bt, browser, site_url):
    """The generic checks above are not vacuous: Figure 4.1's explorer and the chapter's math are on the site."""
    page, log = bt.open_book_page(browser, bt.page_url(site_url, "chapters/04-the-llm-as-a-policy/4.1-formal-mapping"))
    try:
        titles = page.evaluate("() => Object.values(window.toyExplorers).map(a => a.spec.title)")
        formulas = page.evaluate("() => document.querySelectorAll('mjx-container').length")
    finally:
        bt.close(page)
    assert any(t.startswith("Figure 4.1") for t in titles), titles
    assert formulas >= 10


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
    assert links["liveButton"] == (1 if notebook.exists() else 0), "every notebook page has one Live code button"
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
