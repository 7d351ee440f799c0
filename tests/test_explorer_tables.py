"""Issue 11: every explorer's live view offers the figure's current numbers as a table, under a toggle."""

import re

import numpy as np
import pytest

from toy.page.explorer import TABLE_LABEL, figure_tables, tables_html
from toy.page.explorers import ALL


def cells(html: str) -> list[list[str]]:
    return [re.findall(r"<t[hd][^>]*>([^<]*)</t[hd]>", row) for row in re.findall(r"<tr>(.*?)</tr>", html)]


@pytest.mark.parametrize("name", sorted(ALL))
def test_live_view_table_follows_the_figure(name):
    view = ALL[name]().live()
    assert view.table_toggle.description == TABLE_LABEL and view.table_toggle.value is False
    assert view.table.layout.display == "none" and view.table.value == ""
    view.table_toggle.value = True
    assert view.table.layout.display == "block"
    tables = figure_tables(view.figure)
    assert tables and view.table.value == tables_html(tables)
    # every number the figure draws is in the table, to 4 significant digits
    rows = sorted(tuple(f"{v:.4g}" for v in r[1:]) for t in tables for r in t["rows"])
    drawn = sorted(tuple(f"{v:.4g}" for v in np.asarray(t.x if t.orientation == "h" else t.y, dtype=float))
                   for t in view.figure.data if t.visible is not False and (t.y is not None or t.x is not None))
    assert rows == drawn
    c = max(view.explorer.controls, key=lambda c: len(c.values))
    view.set(**{c.name: c.values[(c.default + 1) % len(c.values)]})
    assert view.table.value == tables_html(figure_tables(view.figure))
    view.table_toggle.value = False
    assert view.table.layout.display == "none"


def test_tables_group_series_by_panel_and_format_like_python():
    import plotly.graph_objects as go
    from plotly.subplots import make_subplots

    fig = make_subplots(rows=2, cols=1)
    fig.add_bar(x=["a", "b"], y=[0.123456, -2e-7], name="first", row=1, col=1)
    fig.add_bar(x=["a", "b"], y=[1, 2], name="second <b>", row=1, col=1)
    fig.add_bar(x=["a", "b"], y=[3, 4], row=2, col=1)
    fig.update_yaxes(title_text="value<br>(nats)", row=1, col=1)
    tables = figure_tables(go.Figure(fig))
    assert [t["title"] for t in tables] == ["value (nats)", ""]
    assert [r[0] for r in tables[0]["rows"]] == ["first", "second <b>"] and tables[1]["rows"][0][0] == "series 3"
    html = tables_html(tables)
    assert cells(html)[:2] == [["", "a", "b"], ["first", "0.1235", "-2e-07"]] and "second &lt;b&gt;" in html
