"""Every legend says which series is which by itself (issue 31): no two entries it shows look the same (a bar's
colour and fill pattern; a line's colour, dash and width; a point's colour and symbol) under different names, and no
name is shown twice. Figure 4.1 once showed two identical blue swatches and two identical hatched orange ones, one
pair per panel. A figure whose panels show the same kinds of series gives each kind one entry (its other traces share
the entry's legend group and show none); else each series needs a swatch of its own."""

from __future__ import annotations

import re

import plotly.graph_objects as go
import pytest

from toy.page import figures, recipes
from toy.page.explorers import ALL
from toy.page.explorers.easy_hard import FIGURES as STATIC


def book_figures():
    yield from ((name, factory().figure) for name, factory in sorted(ALL.items()))
    yield "pipeline_figure", recipes.pipeline_figure()
    yield from ((name, factory()) for name, factory in sorted(STATIC.items()))  # 4.2's static figures
    yield "credit_by_prior", figures.credit_by_prior(
        {"sum_to_target": {"pretrained": [0.1, 0.2], "uniform": [0.0, 0.3]},
         "first_token": {"pretrained": [0.3, 0.0], "uniform": [0.2, 0.0]}}, "a title")


def _colour(value, default):
    if value is None:
        return default
    return value.lower() if isinstance(value, str) else "(one colour per point)"


def swatch(trace, index: int, colorway) -> tuple:
    """What the legend draws for ``trace`` (the ``index``-th of its figure), as plotly draws it: a bar's fill colour
    and pattern; a line's colour, dash and width and a point's colour and symbol, as the trace's mode shows them.
    A colour left unset is the colorway's for the trace's place in the figure, as plotly.js picks it."""
    default = colorway[index % len(colorway)].lower()
    if trace.type == "bar":
        marker = trace.marker
        return ("bar", _colour(marker.color, default), (marker.pattern.shape or "") if marker.pattern else "")
    if trace.type == "scatter":
        mode = trace.mode or "lines+markers"
        line_colour = _colour(trace.line.color, default)
        look = ["scatter", trace.fill or ""]
        if "lines" in mode:
            look += [line_colour, trace.line.dash or "solid", trace.line.width or 2]
        if "markers" in mode:
            look += [_colour(trace.marker.color, line_colour), trace.marker.symbol or "circle"]
        return tuple(look)
    return (trace.type, trace.name)


def visible(name: str) -> str:
    return " ".join(re.sub(r"<[^>]*>", " ", name.replace("<br>", " ")).split())


def legend_entries(fig: go.Figure) -> list[tuple[str, tuple]]:
    """(name as read, swatch) of each entry the figure's legend shows."""
    if fig.layout.showlegend is False:
        return []
    colorway = fig.layout.colorway or figures.COLORWAY
    return [(visible(t.name), swatch(t, i, colorway)) for i, t in enumerate(fig.data)
            if t.name and t.showlegend is not False and t.visible is not False]


def legend_problems(fig: go.Figure) -> list[str]:
    problems, seen_names, seen_swatches = [], set(), {}
    for name, look in legend_entries(fig):
        if name in seen_names:
            problems.append(f"{name!r} is shown twice")
        seen_names.add(name)
        if look in seen_swatches and seen_swatches[look] != name:
            problems.append(f"{seen_swatches[look]!r} and {name!r} have the same swatch {look}")
        seen_swatches.setdefault(look, name)
    return problems


@pytest.mark.parametrize("name,fig", list(book_figures()), ids=lambda x: x if isinstance(x, str) else "")
def test_no_two_legend_entries_look_alike_or_share_a_name(name, fig):
    assert legend_entries(fig), f"{name}: no legend entries, so this test checks nothing"
    assert legend_problems(fig) == [], name


def test_the_check_finds_the_legend_figure_4_1_had():
    """Figure 4.1 as it was: each panel's blue and hatched orange bars with entries of their own."""
    from plotly.subplots import make_subplots

    fig = make_subplots(rows=2, cols=1)
    for row, names in ((1, ("exact A_t", "r − V(x)")), (2, ("signal E[A_t²]", "noise"))):
        fig.add_bar(y=[1], name=names[0], marker=figures.EXACT, row=row, col=1)
        fig.add_bar(y=[1], name=names[1], marker=figures.SEQUENCE, row=row, col=1)
    assert len(legend_problems(fig)) == 2
    fig.update_traces(showlegend=False, row=2)
    assert legend_problems(fig) == []
    fig.add_scatter(y=[1], name="r − V(x)", mode="lines", line=dict(color="#222"))
    assert legend_problems(fig) == ["'r − V(x)' is shown twice"]
    # an unset colour is the colorway's for the trace's place: two unset bars differ, as they do on screen
    plain = go.Figure([go.Bar(y=[1], name="a"), go.Bar(y=[1], name="b")])
    assert legend_problems(plain) == []


def test_figure_4_1_has_one_legend_entry_per_view_and_the_lower_panel_follows_it():
    fig = ALL["credit_assignment"]().figure
    shown = [t for t in fig.data if t.showlegend is not False]
    assert [t.yaxis for t in shown] == ["y", "y"]
    assert [visible(t.name).split(" upper:")[0] for t in shown] == ["token view",
                                                                    "sequence view (critic-free methods)"]
    for entry in shown:
        lower = [t for t in fig.data if t.yaxis == "y2" and t.legendgroup == entry.legendgroup]
        assert len(lower) == 1 and lower[0].marker.to_plotly_json() == entry.marker.to_plotly_json()
        assert "lower:" in entry.name and lower[0].name.split()[0] in entry.name  # signal / noise
