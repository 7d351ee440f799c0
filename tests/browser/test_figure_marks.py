"""Issue 21, what readers see of the figures on every chapter page, drawn in Chromium:

- **no light box in the dark page**: in dark mode, no element of the article (an output, a table, a check's
  result) paints a light background over an area larger than a line of text;
- **every mark at least 3:1** (WCAG 1.4.11) against its figure's background, in light and in dark mode: each
  line, marker and bar (by its fill or, where it has one, its outline), each legend swatch, each colour bar's
  outline;
- **tick labels never touch**, at 400 and 1280 px, within an axis or between two axes;
- **no figure text under 11 px** at 400 px.
"""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.slow

HELPERS = r"""
    const parse = c => { const m = /rgba?\(([\d.]+),\s*([\d.]+),\s*([\d.]+)(?:,\s*([\d.]+))?\)/.exec(c || '');
        return m ? [+m[1], +m[2], +m[3], m[4] === undefined ? 1 : +m[4]] : null; };
    const probe = str => { const s = document.createElement('span'); s.style.color = str; document.body.append(s);
        const c = parse(getComputedStyle(s).color); s.remove(); return c; };
    const lum = ([r, g, b]) => [r, g, b].map(v => { v /= 255; return v <= 0.03928 ? v / 12.92
        : Math.pow((v + 0.055) / 1.055, 2.4); }).reduce((s, v, i) => s + v * [0.2126, 0.7152, 0.0722][i], 0);
    const ratio = (a, b) => { const [x, y] = [lum(a), lum(b)].sort((p, q) => q - p); return (x + 0.05) / (y + 0.05); };
    const over = (c, bg) => c[3] >= 1 ? c : [0, 1, 2].map(i => c[i] * c[3] + bg[i] * (1 - c[3])).concat([1]);
"""

LIGHT_BOXES_JS = "() => {" + HELPERS + r"""
    const found = [];
    document.querySelectorAll('.bd-article *').forEach(el => {
        if (el.closest('.thebe-cell') || ['IMG', 'svg', 'CANVAS'].includes(el.tagName)) return;
        const c = parse(getComputedStyle(el).backgroundColor);
        if (!c || c[3] < 0.3) return;
        const r = el.getBoundingClientRect();
        if (r.width * r.height < 40 * 40 || lum(c) < 0.4) return;
        found.push({tag: el.tagName.toLowerCase(), cls: String(el.className).slice(0, 60), bg: c.join(','),
                    size: [Math.round(r.width), Math.round(r.height)]});
    });
    return found;
}"""

MARKS_JS = "() => {" + HELPERS + r"""
    const low = [];
    document.querySelectorAll('.js-plotly-plot').forEach((gd, f) => {
        const paper = parse(getComputedStyle(gd.querySelector('.main-svg')).backgroundColor) || [255, 255, 255, 1];
        const bg = paper[3] > 0.5 ? paper : parse(getComputedStyle(document.body).backgroundColor);
        const check = (el, what) => {
            const s = getComputedStyle(el);
            const pattern = /url\("?#([^")]+)"?\)/.exec(s.fill || '');  // a patterned bar: its pattern's ground
            const ground = pattern && document.getElementById(pattern[1]);
            const fill = pattern ? (ground && ground.querySelector('rect')
                                    ? probe(getComputedStyle(ground.querySelector('rect')).fill) : null)
                : s.fill && s.fill !== 'none' ? probe(s.fill) : null;
            const stroke = s.stroke && s.stroke !== 'none' && parseFloat(s.strokeWidth) > 0 ? probe(s.stroke) : null;
            const alpha = (c, o) => c && [c[0], c[1], c[2], c[3] * o];
            const shown = [alpha(fill, +s.fillOpacity * +s.opacity), alpha(stroke, +s.strokeOpacity * +s.opacity)]
                .filter(c => c && c[3] > 0).map(c => ratio(over(c, bg), bg));
            if (shown.length && Math.max(...shown) < 3) low.push({figure: f, what, best: Math.max(...shown).toFixed(2),
                fill: s.fill, stroke: s.stroke});
        };
        gd.querySelectorAll('.scatterlayer .trace path.js-line').forEach(el => check(el, 'line'));
        gd.querySelectorAll('.scatterlayer .trace .points path').forEach(el => check(el, 'marker'));
        gd.querySelectorAll('.barlayer .bars path').forEach(el => { if (el.getBBox().height > 0.5) check(el, 'bar'); });
        gd.querySelectorAll('.legend .traces .legendpoints path, .legend .traces .js-line')
            .forEach(el => check(el, 'legend swatch'));
        gd.querySelectorAll('.colorbar rect.cboutline').forEach(el => check(el, 'colour bar outline'));
    });
    return low;
}"""

TICKS_JS = r"""() => {
    const found = [], small = [];
    document.querySelectorAll('.js-plotly-plot').forEach((gd, f) => {
        const boxes = [...gd.querySelectorAll('.xtick text, .ytick text, .x2tick text, .y2tick text, ' +
            'g[class*="xtick"] text, g[class*="ytick"] text')].filter(t => t.textContent.trim())
            .map(t => ({text: t.textContent, r: t.getBoundingClientRect()}));
        for (let i = 0; i < boxes.length; i++) for (let j = i + 1; j < boxes.length; j++) {
            const [a, b] = [boxes[i].r, boxes[j].r];
            if (a.left < b.right + 1 && b.left < a.right + 1 && a.top < b.bottom + 1 && b.top < a.bottom + 1)
                found.push({figure: f, a: boxes[i].text, b: boxes[j].text});
        }
        gd.querySelectorAll('text').forEach(t => {
            const size = parseFloat(getComputedStyle(t).fontSize);
            if (t.textContent.trim() && size < 11) small.push({figure: f, text: t.textContent.slice(0, 30), size});
        });
    });
    return {touching: [...new Set(found.map(JSON.stringify))].map(JSON.parse), small};
}"""


def test_no_light_box_and_every_mark_reads_in_both_themes(bt, browser, site_url, chapter_doc):
    page, _ = bt.open_book_page(browser, bt.page_url(site_url, chapter_doc))
    try:
        light_marks = page.evaluate(MARKS_JS)
        bt.to_dark(page)
        boxes = page.evaluate(LIGHT_BOXES_JS)
        dark_marks = page.evaluate(MARKS_JS)
    finally:
        bt.close(page)
    assert not boxes, f"{chapter_doc}: light boxes in dark mode: {boxes[:8]}"
    assert not light_marks, f"{chapter_doc}, light mode: marks under 3:1: {light_marks[:8]}"
    assert not dark_marks, f"{chapter_doc}, dark mode: marks under 3:1: {dark_marks[:8]}"


@pytest.mark.parametrize("width", [400, 1280])
def test_tick_labels_never_touch_and_texts_are_large_enough(bt, browser, site_url, chapter_doc, width):
    page, _ = bt.open_book_page(browser, bt.page_url(site_url, chapter_doc), width=width, height=900)
    try:
        found = page.evaluate(TICKS_JS)
    finally:
        bt.close(page)
    assert not found["touching"], f"{chapter_doc} at {width} px: tick labels touch: {found['touching'][:8]}"
    if width == 400:
        assert not found["small"], f"{chapter_doc} at 400 px: figure text under 11 px: {found['small'][:8]}"
