"""``toy.page.figures.add_curve`` declares the same trace as ``add_scatter`` written out by hand (the explorers of 4.2,
4.3 and 4.4 declare their lines with it; their figures' JSON did not change a byte when they moved to it)."""

from __future__ import annotations

import itertools

import pytest
from plotly.subplots import make_subplots

from toy.page import figures

STYLES = [dict(zip(("dash", "width", "symbol", "size"), combo, strict=True))
          for combo in itertools.product((None, "dot"), (None, 2.5), (None, "square"), (None, 7))
          if combo[3] is None or combo[2] is not None]


def by_hand(fig, x, name, hover, color, dash, width, symbol, size, y=None, **more):
    line = {"color": color}
    if dash is not None:
        line["dash"] = dash
    if width is not None:
        line["width"] = width
    if symbol is not None:
        more["marker"] = {"symbol": symbol} if size is None else {"symbol": symbol, "size": size}
    if hover is not None:
        more["hovertemplate"] = hover
    fig.add_scatter(x=x, y=x if y is None else y, mode="lines+markers" if symbol else "lines", name=name,
                    line=line, **more)


@pytest.mark.parametrize("style", STYLES, ids=lambda s: ",".join(f"{k}={v}" for k, v in s.items()))
@pytest.mark.parametrize("hover", [None, "k = %{x}: %{y:.3g}<extra>a</extra>"])
def test_add_curve_is_the_hand_written_trace(style, hover):
    made, expected = (make_subplots(rows=2, cols=1) for _ in range(2))
    figures.add_curve(made, [1, 2, 3], "a line", hover, color="#222", **style, row=2, col=1, legendgroup="g")
    by_hand(expected, [1, 2, 3], "a line", hover, "#222", **style, row=2, col=1, legendgroup="g")
    figures.add_curve(made, [1, 2], "another", hover, color="#555", y=[0.0, 0.0], **style)
    by_hand(expected, [1, 2], "another", hover, "#555", **style, y=[0.0, 0.0])
    assert made.to_json() == expected.to_json()
    assert made.data[0].mode == ("lines+markers" if style["symbol"] else "lines")


def test_a_marker_size_needs_a_marker():
    with pytest.raises(ValueError, match="size"):
        figures.add_curve(make_subplots(), [1], "a", color="#222", size=3)
