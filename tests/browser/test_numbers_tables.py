"""Issue 11: every static explorer offers its current numbers as a table, in a toggle under the figure.

For every explorer of every chapter page: the toggle is closed at first; opened, it shows exactly the numbers the
figure draws (grouped as ``toy.page.explorer.figure_tables`` groups them, values as Python's ``{:.4g}``), and after a
control change the table follows the figure.
"""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from toy.page.explorer import TABLE_LABEL, figure_tables

pytestmark = pytest.mark.slow

READ_JS = """id => {
    const root = document.getElementById(id), gd = window.toyExplorers[id].figure;
    const d = root.querySelector('details.toy-explorer-table');
    const keep = ['x', 'y', 'name', 'orientation', 'visible', 'xaxis', 'yaxis'];
    return {
        summary: d ? d.querySelector('summary').textContent : null,
        open: d ? d.open : null,
        tables: d ? [...d.querySelectorAll('table')].map(t => ({
            caption: t.caption ? t.caption.textContent : '',
            rows: [...t.querySelectorAll('tr')].map(r => [...r.children].map(c => c.textContent)),
        })) : [],
        data: gd.data.map(t => Object.fromEntries(keep.filter(k => t[k] !== undefined)
            .map(k => [k, t[k] && t[k]._inputArray ? Array.from(t[k]._inputArray)
                : ArrayBuffer.isView(t[k]) ? Array.from(t[k]) : t[k]]))),
        layout: Object.fromEntries(Object.keys(gd.layout).filter(k => /^[xy]axis\\d*$/.test(k))
            .map(k => [k, {title: gd.layout[k].title}])),
    };
}"""


def expected(read) -> list[dict]:
    fig = SimpleNamespace(data=read["data"], layout=read["layout"])
    out = []
    for tab in figure_tables(fig):
        rows = [[""] + tab["header"]] + [[r[0]] + [f"{v:.4g}" for v in r[1:]] for r in tab["rows"]]
        out.append({"caption": tab["title"], "rows": rows})
    return out


def test_every_explorer_offers_its_numbers(bt, browser, site_url, chapter_doc):
    page, _ = bt.open_book_page(browser, bt.page_url(site_url, chapter_doc))
    try:
        ids = bt.explorer_ids(page)
        if not ids:
            pytest.skip(f"{chapter_doc} has no explorer")
        for eid in ids:
            closed = page.evaluate(READ_JS, eid)
            assert closed["summary"] == TABLE_LABEL and closed["open"] is False and not closed["tables"], eid
            page.evaluate("id => { document.getElementById(id).querySelector('details.toy-explorer-table')"
                          ".open = true; }", eid)
            page.wait_for_function("id => document.getElementById(id).querySelector('details.toy-explorer-table"
                                   " table')", arg=eid)
            first = page.evaluate(READ_JS, eid)
            assert first["tables"] and first["tables"] == expected(first), (eid, first["tables"][:1])
            spec = bt.explorer_spec(page, eid)
            c = max(spec["controls"], key=lambda c: len(c["labels"]))  # move the control with most options
            before = page.evaluate("id => window.toyExplorers[id].redraws()", eid)
            page.evaluate("([id, name, i]) => window.toyExplorers[id].set({[name]: i})",
                          [eid, c["name"], (c["default"] + 1) % len(c["labels"])])
            bt.read_explorer(page, eid, before + 1)
            moved = page.evaluate(READ_JS, eid)
            want = expected(moved)
            diff = [(a, b) for ta, tb in zip(moved["tables"], want, strict=False)
                    for a, b in zip(ta["rows"], tb["rows"], strict=False) if a != b]
            assert moved["tables"] == want, (eid, c["name"], diff[:2], len(moved["tables"]), len(want))
    finally:
        bt.close(page)
