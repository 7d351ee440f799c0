"""Issue 31: a printed chapter page is the chapter. Each chapter page is printed by Chromium as it opens (no
scrolling first, so no figure has been drawn by coming near the screen), as a reader's Ctrl+P or a headless PDF
prints it, and what is printed is compared with what the screen shows:

- every figure drawn on screen is drawn in print: in the page laid out for paper (print media), every figure box
  holds its plotly drawing, no wider than its column; and the PDF holds each figure's texts (titles, legend);
- no code block, table or display equation is wider than its box on paper (code wraps);
- no screen-only control prints (the Live code bar, the launch and download buttons, "Figures on this page", the
  explorers' controls, copy and toggle buttons), and each explorer prints its setting as text in place of its
  controls, the setting on screen when it was printed;
- a closed solution stays closed on paper, an opened one prints open;
- after printing, every figure is as wide as its column on screen again;
- a page opened from the disk (file://) prints every figure too.

The page script inflates an explorer's data itself when printing (no asynchronous DecompressionStream then):
its inflate is checked against Python's zlib here too.
"""

from __future__ import annotations

import base64
import random
import re
import unicodedata
import zlib

import pytest

pytestmark = pytest.mark.slow

SCREEN_ONLY = {
    "the Live code bar": ".toy-live",
    "Figures on this page": ".toy-figure-list",
    "an explorer's controls": ".toy-explorer-controls",
    "the launch buttons": ".dropdown-launch-buttons",
    "the download buttons": ".dropdown-download-buttons",
    "the theme's header buttons": ".bd-header-article",
    "a copy button": "button.copybtn",
    "a toggle button": "button.toggle-button",
    "an answer box's button": ".toy-answer-button",
    "a form field": ".bd-article input, .bd-article select, .bd-article textarea",
}

# Every figure box and what it holds, in the page as it is laid out now.
FIGURES_JS = r"""() => {
    const article = document.querySelector('.bd-article').getBoundingClientRect();
    return [...document.querySelectorAll('.toy-plot, .toy-explorer-figure')].map((box) => {
        const svg = box.querySelector('.main-svg');
        const r = box.getBoundingClientRect();
        const texts = [...box.querySelectorAll('.xtitle, .ytitle, .legendtext, .annotation-text, .gtitle')]
            .map((t) => t.textContent.trim()).filter((t) => t.length >= 6);
        return {id: box.id || box.closest('.toy-explorer, .toy-figure').id, drawn: !!svg,
                svgWidth: svg ? svg.getBoundingClientRect().width : 0, boxWidth: r.width, height: r.height,
                articleWidth: article.width, texts: [...new Set(texts)]};
    });
}"""

WIDE_JS = r"""() => {
    const shown = (el) => { const r = el.getBoundingClientRect(); return r.width > 0 && r.height > 0
        && getComputedStyle(el).visibility !== 'hidden'; };
    const article = document.querySelector('.bd-article').getBoundingClientRect();
    const wide = [];
    document.querySelectorAll('.bd-article pre, .bd-article table, .bd-article div.math').forEach((el) => {
        if (!shown(el)) return;
        const r = el.getBoundingClientRect();
        if (el.scrollWidth > el.clientWidth + 1 || r.right > article.right + 1) {
            wide.push(`${el.tagName.toLowerCase()} ${el.scrollWidth}px in ${el.clientWidth}px: `
                      + el.textContent.trim().slice(0, 60));
        }
    });
    return wide;
}"""

SHOWN_JS = r"""(selector) => [...document.querySelectorAll(selector)].filter((el) => {
    const r = el.getBoundingClientRect();
    return r.width > 0 && r.height > 0 && getComputedStyle(el).visibility !== 'hidden';
}).length"""


def _open_as_it_opens(bt, browser, site_url, doc, width=1280):
    """The page, loaded and nothing more: no scrolling, no figure started by the test."""
    return bt.open_loaded(browser, bt.page_url(site_url, doc), width)


def _to_paper(page):
    """Print media, as printing sets it; the page's handler of that change runs at its next rendering update."""
    page.emulate_media(media="print")
    page.wait_for_function("() => !window.toyPrintNow || document.documentElement.classList.contains('toy-printing')")


def _to_screen(page):
    page.emulate_media(media="screen")
    page.wait_for_function("() => !document.documentElement.classList.contains('toy-printing')")


def _screen_figures(bt, browser, site_url, doc):
    page, log = bt.open_book_page(browser, bt.page_url(site_url, doc))
    try:
        figures = page.evaluate(FIGURES_JS)
    finally:
        bt.close(page)
    assert figures and all(f["drawn"] for f in figures), f"{doc}: a figure is not drawn on screen"
    return figures


def _printed_text(bt, page, log, pdf) -> str:
    """The open page printed to A4 as Chromium prints it (then closed), and the PDF's text, flattened."""
    import pypdf

    try:
        page.pdf(path=str(pdf), format="A4")
        assert not log.problems(), log.problems()
    finally:
        bt.close(page)
    return _flat("".join(p.extract_text() for p in pypdf.PdfReader(pdf).pages))


def _flat(text: str) -> str:
    """Text as compared between screen and PDF: compatibility forms (the PDF's ligatures), no whitespace."""
    return re.sub(r"\s+", "", unicodedata.normalize("NFKC", text))


def test_print_as_it_opens_draws_every_figure_whole_and_cuts_nothing(bt, browser, site_url, chapter_doc):
    screen = _screen_figures(bt, browser, site_url, chapter_doc) if _has_figures(bt, site_url, chapter_doc) else []
    page, log = _open_as_it_opens(bt, browser, site_url, chapter_doc)
    try:
        _to_paper(page)
        printed = page.evaluate(FIGURES_JS)
        assert len(printed) == len(screen)
        missing = [f["id"] for f in printed if not f["drawn"]]
        assert not missing, f"{chapter_doc}: figures drawn on screen but not in print: {missing}"
        for f in printed:
            assert f["svgWidth"] <= f["boxWidth"] + 1 and f["boxWidth"] <= f["articleWidth"] + 1, (
                f"{chapter_doc}: figure {f['id']} is {f['svgWidth']:.0f}px wide in a {f['boxWidth']:.0f}px column "
                f"on paper")
            assert f["height"] > 150, f"{chapter_doc}: figure {f['id']} is {f['height']:.0f}px tall on paper"
        assert [sorted(f["texts"]) for f in printed] == [sorted(f["texts"]) for f in screen], (
            f"{chapter_doc}: a figure prints other texts than the screen shows")
        wide = page.evaluate(WIDE_JS)
        assert not wide, f"{chapter_doc}: wider than its box on paper: {wide}"
        shown = {what: page.evaluate(SHOWN_JS, sel) for what, sel in SCREEN_ONLY.items()}
        assert not {k: n for k, n in shown.items() if n}, f"{chapter_doc}: screen-only controls print: {shown}"
        settings = page.evaluate("""() => [...document.querySelectorAll('.toy-explorer')].map((e) => {
            const s = e.querySelector('.toy-explorer-setting');
            const controls = JSON.parse(JSON.stringify(window.toyExplorers[e.id].spec.controls));
            return {text: s ? s.innerText : null, controls, state: {...window.toyExplorers[e.id].state}};
        })""")
        for s in settings:
            if not s["controls"]:
                continue
            assert s["text"], f"{chapter_doc}: an explorer prints no setting: {s}"
            for c in s["controls"]:
                assert f"{c['label']} = {c['labels'][s['state'][c['name']]]}" in s["text"], s
        assert not log.problems(), log.problems()
    finally:
        bt.close(page)


def test_no_code_runs_past_its_box_on_a_desktop_screen(bt, browser, site_url, chapter_doc):
    """On screen a code block scrolls sideways when it must, but at 1280 px none has to: the notebooks' lines fit
    the column (tests/test_code_width.py), and so do the outputs they print."""
    page, log = bt.open_book_page(browser, bt.page_url(site_url, chapter_doc))
    try:
        wide = page.evaluate(WIDE_JS.replace("pre, .bd-article table, .bd-article div.math", "pre"))
    finally:
        bt.close(page)
    assert not wide, f"{chapter_doc}: code wider than its box at 1280 px: {wide}"


def _has_figures(bt, site_url, doc):
    import urllib.request

    with urllib.request.urlopen(bt.page_url(site_url, doc)) as r:
        html = r.read().decode()
    return 'class="toy-plot"' in html or 'class="toy-explorer"' in html


def _print_from_the_command_line(bt, url: str, pdf) -> str:
    """``chromium --headless --print-to-pdf``: the page opened at its default window and printed once loaded."""
    import subprocess

    import pypdf

    proc = subprocess.run([bt.CHROMIUM, *bt.CHROMIUM_FLAGS, "--no-pdf-header-footer", f"--user-data-dir={pdf.parent}",
                           f"--print-to-pdf={pdf}", url], capture_output=True, text=True, timeout=120)
    assert pdf.is_file(), f"chromium --print-to-pdf made no PDF (exit {proc.returncode}): {proc.stderr[-2000:]}"
    return _flat("".join(p.extract_text() for p in pypdf.PdfReader(pdf).pages))


def _print_ways():
    """(page, printer, origin): every way on the pages with Figure 4.1 and with the most figures, and on every
    other chapter page the hardest way, Chromium's command line on the page opened from the disk (no waiting for
    the page, which cannot fetch at once). The build prints every page the remaining way (page.pdf, served), and
    tests/test_pdfs.py finds each figure in those PDFs."""
    from tests.browser.conftest import CHAPTER_PAGES

    every = [(printer, origin) for printer in ("page.pdf", "chromium --print-to-pdf")
             for origin in ("served", "from the disk")]
    whole = {d for d in CHAPTER_PAGES if d.rsplit("/", 1)[-1].startswith(("4.1", "4.5"))}
    return [(doc, *way) for doc in CHAPTER_PAGES
            for way in (every if doc in whole else [("chromium --print-to-pdf", "from the disk")])]


@pytest.mark.parametrize("doc, printer, origin", _print_ways(),
                         ids=[f"{d.rsplit('/', 1)[-1]}-{p.split()[0]}-{o.split()[-1]}" for d, p, o in _print_ways()])
def test_the_pdf_of_a_page_printed_as_it_opens_holds_every_figure(bt, browser, site_url, built_site, doc, printer,
                                                                  origin, tmp_path):
    """Printed by the page's browser as it opens (playwright's page.pdf) and by Chromium's command line, of the page
    served over HTTP and opened from the disk (file://, where the page cannot fetch at once when printed, so it
    loads what its figures need as it opens)."""
    chapter_doc = doc
    if not _has_figures(bt, site_url, chapter_doc):
        pytest.skip(f"{chapter_doc} has no figure")
    screen = _screen_figures(bt, browser, site_url, chapter_doc)
    base = site_url if origin == "served" else built_site.resolve().as_uri()
    if printer == "page.pdf":
        page, log = _open_as_it_opens(bt, browser, base, chapter_doc)
        text = _printed_text(bt, page, log, tmp_path / "page.pdf")
    else:
        text = _print_from_the_command_line(bt, bt.page_url(base, chapter_doc), tmp_path / "page.pdf")
    needed: dict[str, int] = {}
    for f in screen:
        # texts with sub- or superscripts or accents (π_ref, V̂) are extracted from a PDF in pieces: left out
        plain = [t for t in f["texts"] if not re.search("[\u200b\u0300-\u036f]", t)]
        assert plain, f"{chapter_doc}: figure {f['id']} shows no plain title or legend text to look for: {f}"
        for t in plain:
            needed[_flat(t)] = needed.get(_flat(t), 0) + 1
    short = {t: (text.count(t), n) for t, n in needed.items() if text.count(t) < n}
    where = f"{chapter_doc} ({printer}, {origin})"
    assert not short, f"{where}: figure texts missing from the PDF (found, needed): {short}"
    assert "couldnotbedrawn" not in text, f"{where}: a figure could not be drawn for printing"


def test_explorer_prints_the_setting_on_screen_and_figures_come_back_after(bt, browser, site_url):
    doc = next(d for d in bt.CHAPTER_PAGES if "4.1" in d)
    page, log = bt.open_book_page(browser, bt.page_url(site_url, doc))
    try:
        eid, control, index, label = page.evaluate("""() => {
            const many = (a) => a.spec.controls.some((c) => c.labels.length > 1);
            const api = Object.values(window.toyExplorers).find(many);
            const c = api.spec.controls.find((c) => c.labels.length > 1);
            const i = (api.state[c.name] + 1) % c.labels.length;
            return [api.figure.closest('.toy-explorer').id, c.name, i, c.label + ' = ' + c.labels[i]];
        }""")
        page.evaluate("([id, name, i]) => window.toyExplorers[id].set({[name]: i})", [eid, control, index])
        before = page.evaluate(FIGURES_JS)
        _to_paper(page)
        setting = page.evaluate("(id) => document.querySelector('#' + id + ' .toy-explorer-setting').innerText", eid)
        assert label in setting, (label, setting)
        _to_screen(page)
        page.wait_for_function("""(widths) => [...document.querySelectorAll('.toy-plot, .toy-explorer-figure')]
            .every((b, i) => { const s = b.querySelector('.main-svg');
                               return s && Math.abs(s.getBoundingClientRect().width - widths[i]) <= 1; })""",
                               arg=[f["svgWidth"] for f in before], timeout=10_000)
        assert page.evaluate(SHOWN_JS, ".toy-explorer-controls") > 0  # the controls are back on screen
        assert not log.problems(), log.problems()
    finally:
        bt.close(page)


def test_closed_solutions_stay_closed_on_paper_and_an_opened_one_prints(bt, browser, site_url, tmp_path):
    doc = next(d for d in bt.CHAPTER_PAGES if "4.1" in d)
    page, log = _open_as_it_opens(bt, browser, site_url, doc)
    try:
        page.wait_for_function("() => document.querySelectorAll('.admonition.solution button.toggle-button').length")
        # the solutions written out (not "the code in the next cell"), each with a sentence of its own
        texts = page.evaluate("""() => [...document.querySelectorAll('.admonition.solution')].map((s) =>
            [...s.querySelectorAll('.admonition-title ~ *')].map((e) => e.textContent).join(' ').trim())""")
        words = [t for t in texts if len(t) > 120]
        assert len(words) >= 2, texts
        opened = page.locator(".admonition.solution").nth(texts.index(words[0]))
        # the reader's click, dispatched to the button rather than at a point on the screen: figures drawing above
        # it as it scrolls into view can move it between playwright's aim and its click (seen once in CI)
        opened.locator("button.toggle-button").dispatch_event("click")
        page.wait_for_function("(s) => !s.classList.contains('toggle-hidden')", arg=opened.element_handle())
    except BaseException:
        bt.close(page)
        raise
    text = _printed_text(bt, page, log, tmp_path / "page.pdf")
    # each solution's longest run of plain words (its math is extracted from a PDF differently)
    phrase = [_flat(max(re.findall(r"(?:[A-Za-z]{2,}[,.]? ){4,}", t + " "), key=len)) for t in words]
    assert all(len(p) > 20 for p in phrase), phrase
    assert phrase[0] in text, "the solution the reader opened is missing from the PDF"
    for p in phrase[1:]:
        assert p not in text, "a closed solution printed open"


def test_a_page_in_dark_mode_prints_dark_text_on_white(bt, browser, site_url):
    doc = next(d for d in bt.CHAPTER_PAGES if "4.1" in d)
    page, log = bt.open_book_page(browser, bt.page_url(site_url, doc))
    try:
        bt.to_dark(page)
        colours = """() => [getComputedStyle(document.querySelector('.bd-article p')).color,
            getComputedStyle(document.querySelector('.js-plotly-plot .xtick text')).fill]"""
        light_text = page.evaluate(colours)
        _to_paper(page)
        printed = page.evaluate(colours)
        _to_screen(page)
        assert page.evaluate("() => document.documentElement.dataset.theme") == "dark"  # back as the reader left it
    finally:
        bt.close(page)

    def grey(colour):
        return sum(map(int, re.findall(r"\d+", colour)[:3])) / 3

    assert all(grey(c) > 150 for c in light_text), light_text  # the test saw dark mode
    assert all(grey(c) < 110 for c in printed), f"dark mode's light text on paper: {printed}"


@pytest.mark.parametrize("level", [0, 1, 6, 9])
def test_page_inflate_matches_zlib(bt, browser, site_url, level):
    rng = random.Random(level)
    payloads = [b"", b"a", bytes(rng.randrange(256) for _ in range(5000)), b"toy " * 3000,
                bytes(rng.choice(b"0123") for _ in range(70000)),
                b"".join(rng.choice([b"x" * 300, b"ab", bytes(range(256))]) for _ in range(400))]
    doc = next(d for d in bt.CHAPTER_PAGES if "4.1" in d)
    page, log = _open_as_it_opens(bt, browser, site_url, doc)
    try:
        for data in payloads:
            packed = base64.b64encode(zlib.compress(data, level)).decode()
            got = page.evaluate("""(b64) => { const bin = atob(b64); const bytes = new Uint8Array(bin.length);
                for (let i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
                let s = ''; window.toyInflate(bytes).forEach((b) => { s += String.fromCharCode(b); });
                return btoa(s); }""", packed)
            assert base64.b64decode(got) == data, f"inflate differs at level {level} for {len(data)} bytes"
        bad = page.evaluate("() => { try { window.toyInflate(new Uint8Array([1, 2, 3])); return null; }"
                            " catch (e) { return e.message; } }")
        assert bad == "not zlib data"
    finally:
        bt.close(page)
