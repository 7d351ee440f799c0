"""Readable by everyone: explorers and figures fit a 400 px wide phone screen (no figure text outside its figure
or over another), controls have labels, figures
have titles and axis titles, and series differ by more than colour. Checked on every chapter page, for every
explorer and every plotly figure, in headless Chromium."""

from __future__ import annotations

import time

import pytest

pytestmark = pytest.mark.slow

NARROW = 400
SMALLEST = 320  # the narrowest phone screens (WCAG 1.4.10's reflow width): issue 42

# Overflow of a 400 px page: the document, each explorer and its parts, and every text drawn in any figure.
OVERFLOW_JS = """() => {
    const W = window.innerWidth, problems = [];
    const out = (r, a = 0, b = W) => r.width > 0 && (r.left < a - 1 || r.right > b + 1);
    const name = el => el.tagName.toLowerCase() + (el.id ? '#' + el.id : '') + (el.className && el.className.baseVal
        === undefined ? '.' + String(el.className).split(' ')[0] : '');
    if (document.documentElement.scrollWidth > W) problems.push('page scrolls sideways: scrollWidth '
        + document.documentElement.scrollWidth + ' > ' + W);
    // Inside an explorer, a part in a closed fold is not on the screen, and a part of a box that scrolls sideways
    // (the numbers behind a figure, wider than a phone) is reached by scrolling that box: the box itself must fit.
    const scrolled = (el, root) => {
        for (let a = el.parentElement; a && a !== root; a = a.parentElement)
            if (['auto', 'scroll'].includes(getComputedStyle(a).overflowX)) return true;
        return false;
    };
    document.querySelectorAll('.toy-explorer').forEach(root => {
        root.querySelectorAll('*').forEach(el => {
            if (el.closest('svg') && el.tagName.toLowerCase() !== 'svg') return;
            if (!el.checkVisibility() || scrolled(el, root)) return;
            const r = el.getBoundingClientRect();
            if (out(r)) problems.push(root.id + ': ' + name(el) + ' spans ' + r.left + '..' + r.right);
        });
    });
    document.querySelectorAll('.js-plotly-plot').forEach((gd, k) => {
        const box = gd.getBoundingClientRect();
        if (out(box)) problems.push('figure ' + k + ' spans ' + box.left + '..' + box.right);
        gd.querySelectorAll('svg.main-svg').forEach(svg => {
            if (svg.getBoundingClientRect().width > box.width + 1) problems.push('figure ' + k + ' svg is wider');
        });
        // Every text inside the figure, and no two overlapping (tick labels of two axes meeting at a corner
        // aside: plotly places those): toy.figures breaks the figure's own texts to fit, the page measures nothing.
        const texts = [...gd.querySelectorAll('svg text')].filter(t => t.textContent.trim())
            .map(t => ({t: t.textContent.slice(0, 40), r: t.getBoundingClientRect(),
                        tick: !!t.closest('[class*="tick"]')}));  // xtick, y2tick, ...
        texts.forEach(({t, r}) => {
            if (out(r, box.left, box.right) || r.top < box.top - 1 || r.bottom > box.bottom + 1)
                problems.push('figure ' + k + ' text "' + t + '" spans x ' + Math.round(r.left - box.left) + '..'
                    + Math.round(r.right - box.left) + ', y ' + Math.round(r.top - box.top) + '..'
                    + Math.round(r.bottom - box.top) + ' of ' + Math.round(box.width) + ' x ' + Math.round(box.height));
        });
        texts.forEach((a, i) => texts.slice(i + 1).forEach(b => {
            const w = Math.min(a.r.right, b.r.right) - Math.max(a.r.left, b.r.left);
            const h = Math.min(a.r.bottom, b.r.bottom) - Math.max(a.r.top, b.r.top);
            if (!(a.tick && b.tick) && w > 1 && h > 1)
                problems.push('figure ' + k + ' texts "' + a.t + '" and "' + b.t + '" overlap');
        }));
    });
    return problems;
}"""


# Where each figure and its drawing are: after a resize the page lays out in steps (the sidebars come in, plotly
# redraws after each), and a check between two steps sees a drawing still sized for the previous one.
LAYOUT_JS = """() => [...document.querySelectorAll('.js-plotly-plot')].map(gd => [gd.getBoundingClientRect().width,
    ...[...gd.querySelectorAll('svg.main-svg')].map(s => Math.round(s.getBoundingClientRect().width))])"""


def overflow(page, settle_s: float = 0.5, timeout_s: float = 15) -> list[str]:
    """What overflows once the layout has settled: no overflow and the same layout ``settle_s`` apart (or what
    overflows after ``timeout_s``)."""
    deadline = time.monotonic() + timeout_s
    before = None
    while time.monotonic() < deadline:
        now = (page.evaluate(LAYOUT_JS), page.evaluate(OVERFLOW_JS))
        if now == before and not now[1]:
            return []
        before = now
        page.wait_for_timeout(settle_s * 1000)
    return page.evaluate(OVERFLOW_JS)


@pytest.mark.parametrize("NARROW", [NARROW, SMALLEST], ids=["400px", "320px"])
def test_explorers_and_figures_fit_a_400px_screen(bt, browser, site_url, chapter_doc, NARROW):
    page, log = bt.open_book_page(browser, bt.page_url(site_url, chapter_doc), width=NARROW, height=900)
    try:
        assert page.evaluate("innerWidth") == NARROW
        problems = overflow(page)
        ids = bt.explorer_ids(page)
        bt.ARTIFACTS.mkdir(exist_ok=True)
        for eid in ids:  # the explorer as laid out in the page (a full-page capture, so no sticky header on it)
            box = page.evaluate("id => { const r = document.getElementById(id).getBoundingClientRect(); return"
                                " {x: r.left + scrollX, y: r.top + scrollY, width: r.width, height: r.height}; }", eid)
            page.screenshot(path=str(bt.ARTIFACTS / f"narrow-{bt.slug(chapter_doc)}-{eid}.png"), full_page=True,
                            clip=box)
        narrow_lines = page.evaluate(TITLE_LINES_JS)
        # A reader who turns the phone (or widens a window): wide, then narrow again, still fits, and titles
        # broken into lines for the narrow screen take fewer lines when there is room.
        page.set_viewport_size({"width": 1280, "height": 900})
        problems += [f"at 1280 px: {p}" for p in overflow(page)]
        try:
            page.wait_for_function(f"([n]) => ({TITLE_LINES_JS})().reduce((a, b) => a + b, 0) < n",
                                   arg=[sum(narrow_lines)], timeout=10_000)
        except Exception:  # noqa: BLE001 - reported below
            pass
        wide_lines = page.evaluate(TITLE_LINES_JS)
        page.set_viewport_size({"width": NARROW, "height": 900})
        problems += [f"back at {NARROW} px: {p}" for p in overflow(page)]
        # The numbers behind every figure, opened: each table scrolls inside the column, the page does not
        page.evaluate("document.querySelectorAll('details.toy-explorer-table').forEach(d => { d.open = true; })")
        problems += [f"numbers opened at {NARROW} px: {p}" for p in overflow(page)]
    finally:
        bt.close(page)
    assert log.problems() == []
    assert problems == [], f"{chapter_doc} at {NARROW} px:\n" + "\n".join(problems)
    assert all(w <= n for w, n in zip(wide_lines, narrow_lines, strict=True)), (wide_lines, narrow_lines)
    if sum(narrow_lines) > len(narrow_lines):
        assert sum(wide_lines) < sum(narrow_lines), f"titles stay broken at 1280 px: {wide_lines} lines"


# A figure's title (HTML above the plot, an explorer's or a plain figure's): lines, its height over its line height.
HTML_TITLE_JS = """gd => {
    const box = gd.closest('.toy-explorer, .toy-figure');
    return box && box.querySelector('.toy-explorer-title, .toy-figure-title');
}"""
TITLE_LINES_JS = f"""() => [...document.querySelectorAll('.js-plotly-plot')].map(gd => {{
    const html = ({HTML_TITLE_JS})(gd);
    return html ? Math.round(html.getBoundingClientRect().height / parseFloat(getComputedStyle(html).lineHeight)) : 0;
}})"""

A11Y_JS = r"""() => {
    const problems = [];
    const placeholder = s => !s || /^Click to enter/.test(s);
    const labelOf = el => {
        if (el.getAttribute('aria-label')) return el.getAttribute('aria-label');
        if (el.getAttribute('aria-labelledby'))
            return el.getAttribute('aria-labelledby').split(' ').map(id => document.getElementById(id))
                .filter(Boolean).map(e => e.textContent).join(' ');
        const viaFor = el.id && document.querySelector('label[for="' + CSS.escape(el.id) + '"]');
        if (viaFor) return viaFor.textContent;
        if (el.closest('label')) return el.closest('label').textContent;
        return el.tagName === 'BUTTON' ? el.textContent : '';
    };
    const controls = document.querySelectorAll(
        '.toy-explorer select, .toy-explorer input, .toy-explorer button, '
        + '.cell_output select, .cell_output input, .cell_output button');
    controls.forEach(el => {
        if (!labelOf(el).trim()) problems.push('control without a label: ' + el.outerHTML.slice(0, 80));
    });
    const figures = [...document.querySelectorAll('.js-plotly-plot')];
    figures.forEach((gd, k) => {
        const fl = gd._fullLayout;
        const html = (HTML_TITLE_JS)(gd);
        const title = html ? html.textContent : fl.title.text;  // a title is HTML above its plot
        const id = 'figure ' + k + ' (' + (title || 'untitled') + ')';
        if (placeholder(title)) problems.push(id + ' has no title');
        // Axis titles: every group of visible axes that share a domain (panels stacked on one x axis, or side by
        // side on one y axis) names its quantity at least once.
        ['x', 'y'].forEach(letter => {
            const groups = {};
            (fl._subplots[letter + 'axis'] || []).forEach(axId => {
                const ax = fl[letter + 'axis' + axId.slice(1)];
                if (!ax || ax.visible === false) return;
                const key = ax.domain.map(v => v.toFixed(3)).join('-');
                groups[key] = groups[key] || [];
                groups[key].push(placeholder(ax.title && ax.title.text) ? '' : ax.title.text);
            });
            Object.entries(groups).forEach(([key, titles]) => {
                if (!titles.some(Boolean)) problems.push(id + ': ' + letter + ' axes at ' + key + ' have no title');
            });
        });
        // Series in one panel differ by more than colour: pattern (bars), dash, width or marker symbol (lines,
        // points), fill. A series is a legend group (or the traces sharing a name): a band drawn with its line
        // is told apart by the line.
        const panels = {};
        gd._fullData.filter(t => t.visible === true).forEach(t => {
            const panel = (t.xaxis || '') + (t.yaxis || '') + (t.subplot || '')
                + (t.domain ? JSON.stringify(t.domain) : '');
            const m = t.marker || {}, line = t.line || {}, mode = t.mode || '';
            let look;
            if (t.type === 'bar' || t.type === 'histogram') look = 'bar:' + ((m.pattern && m.pattern.shape) || 'solid');
            else if (t.type === 'scatter' || t.type === 'scattergl')
                look = t.type + ':' + mode + ':' + (mode.includes('lines') ? line.dash + '/' + line.width : '') + ':'
                    + (mode.includes('markers') ? m.symbol : '') + ':' + (t.fill || '');
            else look = t.type;
            const series = (panels[panel] = panels[panel] || {});
            const key = t.legendgroup || t.name || ('trace ' + t.index);
            (series[key] = series[key] || new Set()).add(look);
        });
        Object.values(panels).forEach(series => {
            const seen = {};
            Object.entries(series).forEach(([name, looks]) => {
                const look = [...looks].sort().join(' + ');
                if (seen[look] !== undefined)
                    problems.push(id + ': "' + seen[look] + '" and "' + name + '" differ only by colour ('
                        + look + ')');
                else seen[look] = name;
            });
        });
    });
    return {problems, controls: controls.length, figures: figures.length};
}""".replace("(HTML_TITLE_JS)", f"({HTML_TITLE_JS})")


def test_controls_labelled_figures_titled_series_distinguishable(bt, visit, chapter_doc):
    log, page_report, (report,) = visit(chapter_doc, A11Y_JS)
    assert log.problems() == []
    assert report["problems"] == [], f"{chapter_doc}:\n" + "\n".join(report["problems"])
    if page_report["explorers"]:
        assert report["controls"] >= page_report["explorers"] and report["figures"] >= page_report["explorers"]


def test_figure_4_1_series_differ_by_pattern(bt, browser, site_url):
    """The rule above really applies to Figure 4.1: exact bars solid, sequence-level bars hatched, in both panels."""
    page, log = bt.open_book_page(browser, bt.page_url(site_url, "chapters/04-the-llm-as-a-policy/4.1-formal-mapping"))
    try:
        looks = page.evaluate("""() => Object.values(window.toyExplorers)
            .filter(a => a.spec.title.startsWith('Figure 4.1'))
            .map(a => a.figure._fullData.map(t => [t.yaxis, (t.marker.pattern && t.marker.pattern.shape) || '']))""")
    finally:
        bt.close(page)
    assert looks == [[["y", ""], ["y", "/"], ["y2", ""], ["y2", "/"]]]


class _Resizing:
    """A page in the middle of a resize, as Chromium showed it: the figure's box first wide (no sidebars yet),
    plotly redraws to it, the box narrows as the sidebars come in (the drawing now wider than its box), and plotly
    redraws again."""

    def __init__(self):
        self.steps = [([[977, 273]], []), ([[676, 686]], ["figure 0 svg is wider"]), ([[676, 676]], [])]
        self.calls = 0

    def evaluate(self, js):
        layout, problems = self.steps[min(self.calls // 2, len(self.steps) - 1)]
        self.calls += 1
        return layout if js == LAYOUT_JS else problems

    def wait_for_timeout(self, ms):
        pass


def test_overflow_waits_for_the_layout_to_settle_and_still_reports_what_stays():
    page = _Resizing()
    assert overflow(page, settle_s=0) == []
    assert page.calls // 2 >= 4  # past the first step (no overflow yet, but not settled) to the settled one, twice

    class Stays(_Resizing):
        def __init__(self):
            super().__init__()
            self.steps = [([[300, 320]], ["figure 0 svg is wider"])]
    assert overflow(Stays(), settle_s=0, timeout_s=0.05) == ["figure 0 svg is wider"]
