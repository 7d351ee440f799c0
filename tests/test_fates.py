"""toy.fates: the table's rows, shown whole and static (issue 39: its fate filter was decoration and went), each
fate coloured, and links that land on real anchors."""

import json
import re
from html.parser import HTMLParser
from pathlib import Path

import pytest

from toy.page.fates import FATES, ROWS, fate_table

CHAPTER = Path(__file__).resolve().parents[1] / "chapters" / "04-the-llm-as-a-policy"


def anchors(notebook: Path) -> set[str]:
    """Labels ``(name)=`` and heading slugs (as Sphinx makes them) of a notebook's markdown cells."""
    out = set()
    for cell in json.loads(notebook.read_text())["cells"]:
        if cell["cell_type"] != "markdown":
            continue
        text = "".join(cell["source"])
        out |= set(re.findall(r"^\(([\w-]+)\)=$", text, flags=re.M))
        for heading in re.findall(r"^#+ (.+)$", text, flags=re.M):
            out.add(re.sub(r"[^a-z0-9]+", "-", heading.lower()).strip("-"))
    return out


def test_every_row_has_a_known_fate_and_every_fate_is_used():
    assert len(ROWS) == 13
    assert all(r.fate in FATES for r in ROWS)
    assert {r.fate for r in ROWS} == set(FATES)


@pytest.mark.parametrize("row", ROWS, ids=[r.concept for r in ROWS])
def test_each_link_points_at_an_anchor_of_the_book(row):
    page, anchor = row.href.split("#")
    notebook = CHAPTER / page.replace(".html", ".ipynb")
    assert notebook.exists(), f"{row.concept}: no notebook {notebook.name}"
    assert anchor in anchors(notebook), f"{row.concept}: {notebook.name} has no anchor {anchor!r}"


class _Parser(HTMLParser):
    """Body rows (cells' text, links), any form inputs and labels, and the style of a FateTable's HTML."""

    def __init__(self):
        super().__init__()
        self.rows, self.inputs, self.labels, self.style, self._in, self._body = [], [], {}, "", None, False

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "tbody":
            self._body = True
        elif tag == "tr" and self._body:
            self.rows.append({"cells": [], "links": []})
        elif tag == "td" and self.rows:
            self.rows[-1]["cells"].append("")
        elif tag == "a" and self.rows:
            self.rows[-1]["links"].append(a["href"])
        elif tag == "input":
            self.inputs.append(a)
        elif tag in ("label", "style"):
            self._in = (tag, a.get("for"))

    def handle_endtag(self, tag):
        if tag in ("label", "style"):
            self._in = None

    def handle_data(self, data):
        if self._in and self._in[0] == "style":
            self.style += data
        elif self._in and self._in[0] == "label":
            self.labels[self._in[1]] = self.labels.get(self._in[1], "") + data
        elif self.rows and self.rows[-1]["cells"]:
            self.rows[-1]["cells"][-1] += data


def parse(table) -> _Parser:
    p = _Parser()
    p.feed(table.html())
    return p


def test_the_table_is_static_and_shows_every_row():
    """No filter (no form field, no 'Show fate' title, no rule that hides a row): all 13 rows are on the page, on
    screen and on paper alike."""
    p = parse(fate_table())
    text = fate_table().html()
    assert p.inputs == [] and p.labels == {}
    assert "Show fate" not in text and "display: none" not in p.style.replace("thead { display: none; }", "")
    assert [r["cells"][0] for r in p.rows] == [r.concept for r in ROWS]


def test_each_row_shows_its_five_columns_and_one_link():
    p = parse(fate_table(link_prefix="../"))
    assert len(p.rows) == len(ROWS)
    for parsed, row in zip(p.rows, ROWS, strict=True):
        assert parsed["cells"][:3] == [row.concept, row.classical, row.llm]
        assert parsed["cells"][3] == f"{row.fate}: {row.why}"
        assert parsed["cells"][4] == row.experiment
        assert parsed["links"] == ["../" + row.href]


def test_fate_colours_are_styled():
    p = parse(fate_table())
    for fate, colour in FATES.items():
        assert f"{fate.replace(' ', '-')} {{ background: {colour}; }}" in p.style
    assert "<script" not in fate_table().html()
