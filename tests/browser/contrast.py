"""WCAG contrast of every control and figure text of the explorers in a page, measured in the browser.

``CONTRAST_JS(selector)`` returns, for every element matching ``selector`` (an explorer's box), one row per text it
shows: its controls' labels, options, readouts and buttons, its caption, and every SVG text of its plotly figures,
with the text colour, the colour behind it (the first opaque background up the tree, the figure's paper colour for
SVG text, the page's background last) and the contrast ratio between them.
"""

CONTRAST_JS = r"""selector => {
    const parse = c => { const m = /rgba?\(([\d.]+),\s*([\d.]+),\s*([\d.]+)(?:,\s*([\d.]+))?\)/.exec(c || '');
        return m ? [+m[1], +m[2], +m[3], m[4] === undefined ? 1 : +m[4]] : null; };
    const lum = ([r, g, b]) => [r, g, b].map(v => { v /= 255; return v <= 0.03928 ? v / 12.92
        : Math.pow((v + 0.055) / 1.055, 2.4); }).reduce((s, v, i) => s + v * [0.2126, 0.7152, 0.0722][i], 0);
    const ratio = (a, b) => { const [x, y] = [lum(a), lum(b)].sort((p, q) => q - p); return (x + 0.05) / (y + 0.05); };
    const pageBg = () => { for (const el of [document.body, document.documentElement]) {
        const c = parse(getComputedStyle(el).backgroundColor); if (c && c[3] > 0.5) return c; }
        return [255, 255, 255, 1]; };
    const behind = el => { for (let e = el; e && e.nodeType === 1; e = e.parentElement) {
        const c = parse(getComputedStyle(e).backgroundColor); if (c && c[3] > 0.5) return c; } return pageBg(); };
    const color = str => { const probe = document.createElement('span'); probe.style.color = str;
        document.body.appendChild(probe); const c = parse(getComputedStyle(probe).color); probe.remove(); return c; };
    const rows = [];
    document.querySelectorAll(selector).forEach((box, n) => {
        const html = box.querySelectorAll('label, select, option:checked, output, button, .toy-explorer-caption,'
            + ' .widget-label, .widget-readout, .widget-button, .widget-dropdown select, .widget-toggle-button,'
            + ' .toy-explorer-title, .toy-figure-title, summary,'
            + ' table.toy-explorer-numbers td, table.toy-explorer-numbers th');
        html.forEach(el => {
            if (!el.offsetParent && el.tagName !== 'OPTION') return;
            const text = (el.innerText || el.textContent || '').trim();
            if (!text) return;
            const fg = parse(getComputedStyle(el).color), bg = behind(el.tagName === 'OPTION' ? el.parentElement : el);
            rows.push({box: n, kind: el.tagName.toLowerCase(), text: text.slice(0, 40), ratio: ratio(fg, bg),
                       fg: getComputedStyle(el).color, bg: bg.join(',')});
        });
        box.querySelectorAll('.js-plotly-plot').forEach(gd => {
            // the figure's background as shown (a page's CSS may recolour plotly's paper colour), else plotly's
            let paper = parse(getComputedStyle(gd.querySelector('.main-svg')).backgroundColor);
            if (!paper || paper[3] < 0.5) paper = color(gd._fullLayout.paper_bgcolor);
            if (!paper || paper[3] < 0.5) paper = behind(gd);
            gd.querySelectorAll('svg text').forEach(t => {
                const text = t.textContent.trim();
                if (!text || t.closest('.hoverlayer, .modebar')) return;
                const fill = parse(getComputedStyle(t).fill);
                if (!fill || +getComputedStyle(t).opacity === 0) return;
                rows.push({box: n, kind: 'svg', text: text.slice(0, 40), ratio: ratio(fill, paper),
                           fg: getComputedStyle(t).fill, bg: paper.join(',')});
            });
        });
    });
    return rows;
}"""
