"""Issues 11 and 50: every static explorer offers its current numbers as tables, in a toggle under the figure.

For every explorer of every chapter page: the toggle is closed at first, and holds the tables at the default setting
as built; opened, it shows exactly the tables ``toy.page.tables.figure_tables`` makes from the figure's data by the
plan the payload carries (the page script's port of it), and after a control change the tables follow the figure.
"""

from __future__ import annotations

import re

import pytest

from toy.page.explorer import TABLE_LABEL
from toy.page.tables import figure_tables

pytestmark = pytest.mark.slow

READ_JS = """id => {
    const root = document.getElementById(id), gd = window.toyExplorers[id].figure;
    const d = root.querySelector('details.toy-explorer-table');
    const keep = ['x', 'y', 'customdata', 'error_y', 'name', 'orientation', 'visible', 'xaxis', 'yaxis'];
    const plain = (v) => (v && v._inputArray ? Array.from(v._inputArray) : ArrayBuffer.isView(v) ? Array.from(v) : v);
    return {
        summary: d ? d.querySelector('summary').textContent : null,
        open: d ? d.open : null,
        tables: d ? [...d.querySelectorAll('table')].map(t => ({
            caption: t.caption ? t.caption.textContent : '',
            rows: [...t.querySelectorAll('tr')].map(r => [...r.children].map(c => c.textContent)),
            corner: t.querySelector('thead tr').children[0].textContent,
        })) : [],
        data: gd.data.map(t => Object.fromEntries(keep.filter(k => t[k] !== undefined)
            .map(k => [k, k === 'error_y' ? {array: plain(t[k].array)} : plain(t[k])]))),
        plan: window.toyExplorers[id].spec.tables,
        controls: window.toyExplorers[id].spec.controls.map(c => ({name: c.name, label: c.label, labels: c.labels})),
        state: Object.assign({}, window.toyExplorers[id].state),
        layout: Object.fromEntries(Object.keys(gd.layout).filter(k => /^[xy]axis\\d*$/.test(k))
            .map(k => [k, {title: gd.layout[k].title}])),
    };
}"""


def named(read, tab: dict) -> dict:
    """The table with its case named, as toy.page.explorer.Explorer.named_tables does (issue 50, I9): the caption
    ends with the setting shown, and a row name's {control} is that control's value."""
    labels = {c["name"]: c["labels"][read["state"][c["name"]]] for c in read["controls"]}
    parts = [re.sub(r":\s*$", "", c["label"]) + " = " + labels[c["name"]] for c in read["controls"]]
    shown = "Shown at: " + "; ".join(parts) + "." if parts else ""
    caption = tab["caption"].strip()
    if caption and shown and not caption.endswith("."):
        caption += "."
    rows = [[re.sub(r"\{(\w+)\}", lambda m: labels.get(m.group(1), m.group(0)), r[0]), *r[1:]] for r in tab["rows"]]
    return {**tab, "caption": " ".join(x for x in (caption, shown) if x), "rows": rows}


def expected(read) -> list[dict]:
    out = []
    for tab in figure_tables({"data": read["data"], "layout": read["layout"]}, read["plan"]):
        tab = named(read, tab)
        rows = [[tab["corner"]] + tab["header"]] + tab["rows"]
        out.append({"caption": tab["caption"], "rows": rows, "corner": tab["corner"]})
    return out


def test_every_explorer_offers_its_numbers(bt, browser, site_url, chapter_doc):
    page, _ = bt.open_book_page(browser, bt.page_url(site_url, chapter_doc))
    try:
        ids = bt.explorer_ids(page)
        if not ids:
            pytest.skip(f"{chapter_doc} has no explorer")
        for eid in ids:
            closed = page.evaluate(READ_JS, eid)
            assert closed["summary"] == TABLE_LABEL and closed["open"] is False, eid
            assert closed["tables"] == expected(closed), (eid, closed["tables"][:1])  # as built: the default setting
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
