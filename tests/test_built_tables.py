"""Issue 50: every "Numbers behind the figure" table in the built pages reads, and holds its figure's numbers.

The built page holds each explorer's tables at the default setting (readable before, and without, any script). Every
table of every chapter page is parsed from ``_build/html`` and checked: rows named, a caption, a corner cell, at most
``MAX_COLUMNS`` columns, no markup as text, and the cells equal to the explorer's figure at that setting, each value
in its trace's hover format (``tests/test_explorer_tables.py``'s independent reading of the figure).
"""

from __future__ import annotations

import pytest
from bs4 import BeautifulSoup

from tests.test_explorer_tables import check_against_traces, check_readable
from toy.page.explorer import TABLE_LABEL
from toy.page.explorers import ALL

pytestmark = pytest.mark.slow


def page_tables(path) -> list[tuple[str, list[dict]]]:
    """(explorer title, its tables) for each explorer of a built page, as a reader's browser parses them."""
    soup = BeautifulSoup(path.read_text(), "html.parser")
    out = []
    for root in soup.select("div.toy-explorer"):
        details = root.select_one("details.toy-explorer-table")
        assert details is not None and details.summary.get_text() == TABLE_LABEL, root.get("data-title")
        tables = []
        for table in details.select("table"):
            rows = [[c.get_text() for c in tr.find_all(["th", "td"])] for tr in table.select("tr")]
            caption = table.caption.get_text() if table.caption else ""
            tables.append({"caption": caption, "corner": rows[0][0], "header": rows[0][1:], "rows": rows[1:]})
        out.append((root["data-title"], tables))
    return out


def test_every_built_table_reads_and_holds_its_figures_numbers(built_site):
    by_title = {}
    for factory in ALL.values():
        ex = factory()
        by_title[ex.title] = ex
    pages = sorted((built_site / "chapters").rglob("*.html"))
    seen = 0
    for page in pages:
        for title, tables in page_tables(page):
            ex = by_title.get(title)
            if ex is None:  # an explorer built with other arguments than its factory's defaults: same checks
                check_readable(title, tables)
                seen += len(tables)
                continue
            check_readable(title, tables)
            assert tables == ex.tables(), (page.name, title)
            check_against_traces(title, ex, ex.figure_for(), tables, ex.state())
            seen += len(tables)
    assert seen >= 40, seen  # every explorer's tables were found
