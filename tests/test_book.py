"""The built book: every page present, figures as HTML, static explorers in place, nothing from a CDN."""

import hashlib
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CDN = re.compile(r"(?:src|href)=[\"']https?://(?!github\.com|mybinder\.org|colab\.research\.google\.com)[^\"']+\.(?:js|css|woff2?)")

pytestmark = pytest.mark.slow


def chapter_pages(site):
    return sorted((site / "chapters").rglob("*.html"))


def test_every_notebook_has_a_page_and_a_downloadable_ipynb(built_site):
    for nb in (ROOT / "chapters").rglob("*.ipynb"):
        rel = nb.relative_to(ROOT)
        assert (built_site / rel.with_suffix(".html")).exists(), rel
        assert (built_site / "_sources" / rel).exists(), f"no downloadable notebook for {rel}"


def test_pages_load_nothing_from_a_cdn(built_site):
    for page in [built_site / "book" / "intro.html", *chapter_pages(built_site)]:
        html = page.read_text()
        found = CDN.findall(html)
        assert not found, f"{page.name} loads from outside the site: {found}"
        assert "cdn.jsdelivr.net" not in html and "cdnjs.cloudflare.com" not in html and "unpkg.com" not in html


def test_plotly_js_is_served_once_from_the_site(built_site):
    # the partial bundle npm has for the traces the book draws (scatter, bar), unless npm was missing at set-up
    plotly_js = (built_site / "_static" / "plotly.min.js").read_text()
    assert "plotly.js (basic - minified) v4.1.1" in plotly_js[:300] or "plotly.js v4.1.1" in plotly_js[:300]
    page = (built_site / "chapters" / "04-the-llm-as-a-policy" / "4.1-formal-mapping.html").read_text()
    # not a script of the page: the explorer script loads it when a figure comes near (tests/browser), by checksum
    assert not re.search(r'<script[^>]*src="[^"]*plotly', page)
    explorer_js = [tag for tag in re.findall(r"<script [^>]*>", page) if "toy/toy-explorer.js" in tag]
    named = [m for tag in explorer_js for m in re.findall(r'data-plotly="plotly\.min\.js\?v=([0-9a-f]{8})"', tag)]
    assert named == [hashlib.sha1((built_site / "_static" / "plotly.min.js").read_bytes()).hexdigest()[:8]], named
    assert "toy-plot-spec" in page and "Plotly.newPlot" not in page  # figures as data, drawn when seen
    assert len(page) < 2_000_000


def test_explorers_are_static_views_never_dead_widgets(built_site):
    for page in chapter_pages(built_site):
        html = page.read_text()
        assert "application/vnd.jupyter.widget-state+json" not in html, page.name
        assert "application/vnd.jupyter.widget-view+json" not in html, page.name
    page = (built_site / "chapters" / "04-the-llm-as-a-policy" / "4.1-formal-mapping.html").read_text()
    nb = (ROOT / "chapters" / "04-the-llm-as-a-policy" / "4.1-formal-mapping.ipynb").read_text()
    figure_only = {"credit.prior_comparison"}  # a static plotly figure (Figure 4.1's priors), not an explorer
    explorer_cells = len([name for name in re.findall(r"toy\.explorers\.([\w.]+)\(prompt=x\)", nb)
                          if name not in figure_only])
    assert explorer_cells >= 2  # Figure 4.1 and the prefix tree
    assert page.count('class="toy-explorer"') == explorer_cells
    assert "toy-explorer.js" in page
