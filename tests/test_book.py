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


def test_web_fonts_keep_every_glyph_the_pages_show_and_little_more(built_site):
    """The fonts were cut after the build (book/_ext/toyfonts.py): each served font still has, of the theme's or
    KaTeX's original, every glyph of an icon the site names and every character of the pages' text."""
    import sys

    from fontTools.ttLib import TTFont

    sys.path.insert(0, str(ROOT / "book" / "_ext"))
    import pydata_sphinx_theme
    import toybook
    import toyfonts

    def cmap(path):
        with TTFont(str(path)) as font:
            return set(font.getBestCmap() or ())  # a font cut to no glyph at all has no cmap

    static = built_site / "_static"
    pages = [p.read_text() for p in built_site.rglob("*.html") if "_sources" not in p.parts]
    by_class, always = toyfonts.icon_glyphs([p.read_text() for p in static.rglob("*.css")])
    named = toyfonts.icon_names(pages + [p.read_text(errors="replace") for p in static.rglob("*.js")])
    icons = set(always).union(*(by_class[n] for n in named if n in by_class))
    assert {0xF002, 0xF0C9, 0xF185, 0xF186} <= icons, "search, menu, sun, moon: the theme's own icons"
    theme = Path(pydata_sphinx_theme.__file__).parent
    served = sorted(p for p in static.rglob("fa-*") if p.suffix in (".woff2", ".ttf"))
    assert served, "no icon font in the site"
    for font in served:
        original = cmap(sorted(theme.rglob(font.name))[0])
        missing = (icons & original) - cmap(font)
        assert not missing, f"{font.name} lost icons a page shows: {sorted(map(hex, missing))}"
    solid = static / "vendor" / "fontawesome" / "webfonts" / "fa-solid-900.woff2"
    assert solid.stat().st_size < 10_000, f"the icon font a page loads is {solid.stat().st_size} bytes"

    text = {ord(c) for page in pages for c in toyfonts.page_text(page)}
    originals = toybook.KATEX_DIR / "dist" / "fonts"
    for font in sorted(static.rglob("KaTeX_*.woff2")):
        missing = (text & cmap(originals / font.name)) - cmap(font)
        assert not missing, f"{font.name} lost characters a page shows: {''.join(map(chr, sorted(missing)))}"


def test_no_script_file_holds_up_the_first_paint(built_site):
    """Every script file a page names is deferred (book/_ext/toybook.py) or written into the page
    (documentation_options.js, book/_ext/toyhtml.py): the first paint waits for stylesheets only."""
    for page in [built_site / "book" / "intro.html", *chapter_pages(built_site)]:
        head = page.read_text().split("</head>")[0]
        blocking = [tag for tag in re.findall(r"<script\b[^>]*\bsrc=[^>]*>", head)
                    if not re.search(r"\b(?:defer|async)\b", tag)]
        assert not blocking, f"{page.name}: {blocking}"
        assert "const DOCUMENTATION_OPTIONS" in head, page.name
