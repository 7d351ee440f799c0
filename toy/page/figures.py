"""Figures: pure functions from plain arrays to plotly figures, and the renderer the book uses.

Colours follow the chapter: blue for the exact per-token credit, orange (hatched, so the two series differ by
more than colour) for the sequence-level credit that critic-free methods give every token.
"""

from __future__ import annotations

import base64
import hashlib
import html
import json
import os
import re

import numpy as np
import plotly.graph_objects as go
import plotly.io as pio
from plotly.subplots import make_subplots

from .. import checks
from .tables import figure_tables, plain_text, tables_html

EXACT = dict(color="#1f77b4")
SEQUENCE = dict(color="#d9620b", pattern=dict(shape="/", fgcolor="#7a3a00", solidity=0.3))
EXACT_COLOUR, SEQUENCE_COLOUR, GREY = EXACT["color"], SEQUENCE["color"], "#555555"
"""Line colours of the exact credit, the sequence-level credit and a reference line."""
PATTERNS = ("", "/", ".", "x", "\\", "+", "-", "|")
"""Bar fill patterns, so that series differ by more than colour."""
SIGNAL_LABEL = "signal E[A_t²] (Var r decided at t)"
NOISE_LABEL = "noise E[(r − V(x) − A_t)²]<br>= sum of E[A_s²] over s ≠ t"
"""Names of the two mean squares (reward²) that Figure 4.1's lower panel and 4.2's long-credit panel compare (4.2's
legend entries; in 4.1, the names its lower panel's bars go by in the numbers behind the figure): the part of Var r
that position t decides, and the noise r − V(x) adds at t."""
TICK_STANDOFF = 6  # px between an axis and its tick labels: those of two axes never meet at a corner
COLORWAY = ["#1f77b4", "#d9620b", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#c2469f", "#7f7f7f", "#8a8a00",
            "#138a9c"]
"""Series colours, each of middle lightness: at least 3:1 against the white page and the dark one (WCAG 1.4.11).
plotly's own orange (#ff7f0e, 2.5:1 on white) is darkened to #d9620b."""
FONT = dict(family="system-ui, -apple-system, Segoe UI, Roboto, sans-serif", size=13)
LINE_CHARS = 36
"""The longest line of a text drawn in a figure (subplot titles, axis titles, legend entries), in characters: at the
book's font sizes (13 px, 14 px for subplot titles) such a line fits a 400 px phone screen, so no text is measured
in the page. Titles are HTML above the plot (``lift_title``) and wrap by themselves."""


def base_layout(fig: go.Figure, title: str, height: int = 420) -> go.Figure:
    """The book's common look: a title, a legend under the plot, no fixed width (figures follow the page)."""
    if not isinstance(fig, go.Figure):
        raise checks.fail("fig", "a plotly Figure", fig)
    title = checks.text("title", title)
    height = checks.positive_int("height", height, low=100, high=10_000)
    fig.update_layout(
        title=dict(text=title, x=0.02, xanchor="left", font=dict(size=15)),
        height=height,
        autosize=True,
        font=FONT,
        template="plotly_white",
        colorway=COLORWAY,
        # the legend at the figure's foot: plotly makes the bottom margin hold it, however many rows it takes
        legend=dict(orientation="h", yref="container", yanchor="bottom", y=0, x=0, xanchor="left"),
        margin=dict(l=60, r=20, t=70, b=40),
    )
    # tick labels keep a few pixels from their axis, so those of two axes never meet at a corner
    fig.update_xaxes(ticklabelstandoff=TICK_STANDOFF)
    fig.update_yaxes(ticklabelstandoff=TICK_STANDOFF)
    return fit_texts(fig)


def add_curve(fig: go.Figure, x, name: str, hover: str | None = None, *, color: str, width: float | None = None,
              dash: str | None = None, symbol: str | None = None, size: float | None = None, y=None, **more) -> None:
    """Add a line to ``fig``: ``mode="lines"``, or ``"lines+markers"`` when a marker ``symbol`` is given.

    ``x`` holds the points; ``y`` defaults to ``x`` (a placeholder an explorer fills in). ``hover`` is the
    hovertemplate; ``more`` goes to ``fig.add_scatter`` as it is (``row``, ``col``, ``legendgroup``, ...). The line
    dict holds only the styles given, so the figure is the same as one declared with ``add_scatter`` by hand."""
    if not isinstance(fig, go.Figure):
        raise checks.fail("fig", "a plotly Figure", fig)
    checks.text("name", name)
    checks.text("color", color)
    for label, given in (("hover", hover), ("dash", dash), ("symbol", symbol)):
        if given is not None:
            checks.text(label, given)
    for label, given in (("width", width), ("size", size)):
        if given is not None:
            checks.positive_finite(label, given)  # checked, and kept as given: 3 stays 3 in the figure's JSON
    if size is not None and symbol is None:
        raise checks.fail("size", "a marker size only with a marker symbol", size)
    line = dict(color=color, **{k: v for k, v in (("dash", dash), ("width", width)) if v is not None})
    if symbol is not None:
        more["marker"] = dict(symbol=symbol, **({} if size is None else {"size": size}))
    if hover is not None:
        more["hovertemplate"] = hover
    fig.add_scatter(x=x, y=x if y is None else y, mode="lines" if symbol is None else "lines+markers", name=name,
                    line=line, **more)


def break_lines(text: str, width: int = LINE_CHARS) -> str:
    """``text`` with ``<br>`` between words so that no line is longer than ``width`` characters (markup such as
    ``<sub>`` not counted; a line break already there is kept; a word longer than ``width`` has a line of its own)."""
    text = checks.text("text", text)
    width = checks.positive_int("width", width, low=1, high=10_000)
    lines = []
    for given in text.split("<br>"):
        line = ""
        for word in given.split(" "):
            longer = f"{line} {word}" if line else word
            if line and len(re.sub(r"<[^>]*>", "", longer)) > width:
                lines.append(line)
                line = word
            else:
                line = longer
        lines.append(line)
    return "<br>".join(lines)


def fit_texts(fig: go.Figure) -> go.Figure:
    """Break the figure's subplot titles, axis titles and legend entries into lines of at most ``LINE_CHARS``
    characters, so that they fit a phone screen; a subplot title over a narrower panel gets that panel's share
    (a title centred at paper x has 2·min(x, 1 − x) of the width). Subplot titles are set in 14 px. Returns
    ``fig``, changed in place."""
    if not isinstance(fig, go.Figure):
        raise checks.fail("fig", "a plotly Figure", fig)
    for a in fig.layout.annotations:
        if a.text and a.xref == "paper" and not a.showarrow:  # subplot titles
            share = min(1.0, 2 * min(a.x, 1 - a.x)) if a.x is not None else 1.0
            a.update(text=break_lines(a.text, max(12, int(LINE_CHARS * share))), font_size=14)
    for axis in [*fig.select_xaxes(), *fig.select_yaxes()]:
        if axis.title.text:
            axis.title.text = break_lines(axis.title.text)
    for trace in fig.data:
        if trace.name:
            trace.name = break_lines(trace.name)
    return fig


TOKEN_VIEW_LABEL = "token view<br>upper: exact A_t = V(s_t+1) − V(s_t)<br>lower: signal E[A_t²]"
SEQUENCE_VIEW_LABEL = "sequence view (critic-free methods)<br>upper: r − V(x), on every token<br>lower: noise " \
    "E[(r − V(x) − A_t)²]"
"""Figure 4.1's two legend entries: one per view, each naming what its bars are in either panel."""


def credit_bars(length: int) -> go.Figure:
    """Figure 4.1's two panels, with empty bars for an explorer to fill.

    Row 1, for one response: trace 0 the exact advantage A(s_t, y_t) of each token, trace 1 the sequence-level
    advantage r − V(x). Row 2, over all responses y ~ π, both in reward² units: trace 2 E[A_t²] (the part of
    Var r that position t decides), trace 3 E[(r − V(x) − A_t)²] (the noise r − V(x) adds at t, which equals
    Σ_{s≠t} E[A_s²]).

    Blue (solid) is the token view and orange (hatched) the sequence view in both panels, so the legend has one
    entry per view, naming its bars in each panel: four entries, two pairs of identical swatches, would not say
    which is which. The lower panel's traces share their view's legend group and show no entry of their own; they
    keep their own names for the numbers behind the figure.
    """
    length = checks.positive_int("length", length, low=1, high=1000)
    positions = [f"token {t + 1}" for t in range(length)]
    fig = make_subplots(
        rows=2, cols=1, vertical_spacing=0.2,
        subplot_titles=("This response: credit for each token", "All responses: signal and noise"),
    )
    empty = [0.0] * length
    fig.add_bar(x=positions, y=empty, name=TOKEN_VIEW_LABEL, marker=EXACT,
                legendgroup="token", row=1, col=1, hovertemplate="%{x}: %{y:.4f}<extra>exact</extra>")
    fig.add_bar(x=positions, y=empty, name=SEQUENCE_VIEW_LABEL, marker=SEQUENCE,
                legendgroup="sequence", row=1, col=1, hovertemplate="%{x}: %{y:.4f}<extra>sequence-level</extra>")
    fig.add_bar(x=positions, y=empty, name=SIGNAL_LABEL, marker=EXACT,
                showlegend=False, legendgroup="token", row=2, col=1,
                hovertemplate="%{x}: %{y:.4f}<extra>E[A_t²]</extra>")
    fig.add_bar(x=positions, y=empty, name=NOISE_LABEL, marker=SEQUENCE,
                showlegend=False, legendgroup="sequence", row=2, col=1,
                hovertemplate="%{x}: %{y:.4f}<extra>noise</extra>")
    upper = {"caption": "This response: each token's advantage (reward units)", "corner": "position in the response"}
    fig.data[0].meta = {"table": {**upper, "name": "exact A_t = V(s_t+1) − V(s_t)"}}
    fig.data[1].meta = {"table": {**upper, "name": "sequence-level r − V(x), on every token"}}
    lower = {"caption": "All responses: signal and noise at each position, mean square (reward²)"}
    fig.data[2].meta, fig.data[3].meta = {"table": lower}, {"table": lower}
    fig.update_yaxes(title_text="advantage", zeroline=True, zerolinecolor="#444", row=1, col=1)
    fig.update_yaxes(title_text="mean square (reward²)", rangemode="tozero", row=2, col=1)
    fig.update_xaxes(title_text="position in the response", row=2, col=1)
    fig.update_layout(barmode="group", bargap=0.25)
    fig = base_layout(fig, "", height=640)
    return fig


def credit_by_prior(signal: dict, title: str) -> go.Figure:
    """E[A_t²] by position, one panel per reward (stacked), one bar series per prior.

    ``signal`` maps reward name → {prior name → array of shape (L,)} (``toy.explorers.credit.credit_by_prior``).
    """
    if not isinstance(signal, dict) or not signal:
        raise checks.fail("signal", "a non-empty dict {reward: {prior: E[A_t²] by position}}", signal)
    for reward, bars in signal.items():
        if not isinstance(bars, dict) or not bars:
            raise checks.fail(f"signal[{reward!r}]", "a non-empty dict {prior: E[A_t²] by position}", bars)
        for prior, y in bars.items():
            checks.array(f"signal[{reward!r}][{prior!r}]", y, ndim=1, allow_empty=False)
    checks.text("title", title)
    rewards = list(signal)
    fig = make_subplots(rows=len(rewards), cols=1, vertical_spacing=0.16, shared_xaxes=False,
                        subplot_titles=[f"reward: {r.replace('_', ' ')}" for r in rewards])
    for row, reward in enumerate(rewards, start=1):
        for k, (prior, y) in enumerate(signal[reward].items()):
            L = len(y)
            fig.add_bar(x=[f"token {t + 1}" for t in range(L)], y=list(map(float, y)), name=prior,
                        marker=dict(color=PRIOR_COLOURS[k % len(PRIOR_COLOURS)],
                                    pattern=dict(shape=PATTERNS[k % len(PATTERNS)])),
                        legendgroup=prior, showlegend=row == 1, row=row, col=1,
                        hovertemplate="%{x}: %{y:.4f}<extra>" + prior + "</extra>")
        fig.update_yaxes(title_text="E[A_t²] (reward²)", rangemode="tozero", row=row, col=1)
    fig.update_xaxes(title_text="position in the response", row=len(rewards), col=1)
    fig.update_layout(barmode="group")
    fig = base_layout(fig, title, height=300 * len(rewards) + 120)
    return fig


PRIOR_COLOURS = ("#1f77b4", "#2ca02c", "#d62728", "#9467bd", "#7f7f7f")
"""One colour per π_ref preset, in the order of ``toy.PRESETS``."""


def distribution_bars(distributions: dict, labels: list[str], title: str, xtitle: str = "next token (digit)",
                      ytitle: str = "probability") -> go.Figure:
    """Grouped bars, one series per entry of ``distributions`` (name → array of len(labels))."""
    if isinstance(labels, (str, bytes)) or not isinstance(labels, (list, tuple)) or not labels:
        raise checks.fail("labels", "a non-empty list of bar labels", labels)
    if not isinstance(distributions, dict):
        raise checks.fail("distributions", "a dict {name: values}", distributions)
    for name, p in distributions.items():
        checks.array(f"distributions[{name!r}]", p, shape=(len(labels),))
    for arg, value in (("title", title), ("xtitle", xtitle), ("ytitle", ytitle)):
        checks.text(arg, value)
    fig = go.Figure()
    for k, (name, p) in enumerate(distributions.items()):
        fig.add_bar(x=labels, y=list(p), name=str(name), marker=dict(pattern=dict(shape=PATTERNS[k % len(PATTERNS)])),
                    hovertemplate="%{x}: %{y:.3f}<extra>" + str(name) + "</extra>")
    fig.update_xaxes(title_text=xtitle)
    fig.update_yaxes(title_text=ytitle, rangemode="tozero")
    fig.update_layout(barmode="group")
    return base_layout(fig, title, height=400)


# -- rendering in the book -------------------------------------------------------------------------------------
PLOT_CONFIG = {"displaylogo": False, "displayModeBar": False, "responsive": True}
"""plotly.js's options for the book's figures: no mode bar (its buttons would sit in the tab order, and one of them
offers to upload the figure to Plotly's cloud); hover still shows the numbers, and "Numbers behind the figure"
lists them."""


def decade_ticks(layout: dict) -> dict:
    """``layout`` (a plotly layout as a dict) with every log axis labelled at whole decades only: plotly's labels
    for 2 and 5 between decades are drawn at three quarters of the font (under 11 px on a phone) and crowd."""
    if not isinstance(layout, dict):
        raise checks.fail("layout", "a plotly layout as a dict", layout)
    out = dict(layout)
    for key, axis in layout.items():
        if re.fullmatch(r"[xy]axis\d*", key) and isinstance(axis, dict) and axis.get("type") == "log" \
                and axis.get("dtick") in (None, "D1", "D2") and axis.get("tickvals") is None:
            out[key] = {**axis, "dtick": 1}
    return out


def book_figure_html(fig_dict: dict) -> str:
    """A figure as the book's page holds it: its title as HTML above the plot, then an empty box of the figure's
    height and the figure's data as JSON, which the page script (``toy-explorer.js``) draws with plotly.js when
    the box comes into view. No script runs before the page's text is shown, and nothing moves when it draws."""
    title, fig_dict = lift_title(fig_dict)
    layout = decade_ticks(dict(fig_dict.get("layout") or {}))
    template = layout.get("template")
    if isinstance(template, dict) and isinstance(template.get("data"), dict):  # defaults of traces it draws only
        used = {t.get("type", "scatter") for t in fig_dict.get("data") or []}
        layout["template"] = {**template, "data": {k: v for k, v in template["data"].items() if k in used}}
    fig_dict = {**fig_dict, "layout": layout}
    body = json.dumps(fig_dict, sort_keys=True, default=str)
    uid = "toy-figure-" + hashlib.sha1(body.encode()).hexdigest()[:12]
    spec = pio.to_json({"data": fig_dict.get("data") or [], "layout": layout, "config": PLOT_CONFIG},
                       validate=False).replace("</", "<\\/")
    height = int(layout.get("height") or 450)
    plot = (f'<div class="toy-plot" id="{uid}" style="height:{height}px"></div>'
            f'<script type="application/json" class="toy-plot-spec" data-for="{uid}">{spec}</script>'
            + _figure_numbers_html(fig_dict, html.unescape(title)))
    if not title:
        return f'<div class="toy-figure">{plot}</div>'
    return (f'<div class="toy-figure" role="figure" aria-labelledby="{uid}-title">'
            f'<div class="toy-figure-title" id="{uid}-title">{title}</div>{plot}</div>')


def _decoded(value):
    """A figure dict's typed array (plotly's ``{"dtype": "f8", "bdata": base64, "shape": "2, 3"}``) as a numpy array;
    any other value (an error_y dict's own typed arrays included) as it is, decoded one level down."""
    if isinstance(value, dict) and "bdata" in value and "dtype" in value:
        a = np.frombuffer(base64.b64decode(value["bdata"]), dtype=np.dtype(value["dtype"]))
        shape = value.get("shape")
        return a.reshape([int(s) for s in str(shape).split(",")]) if shape else a
    if isinstance(value, dict):
        return {k: _decoded(v) for k, v in value.items()}
    return value


def _figure_numbers_html(fig_dict: dict, title: str = "") -> str:
    """A plain figure's "Numbers behind the figure", as an explorer has them (``toy.page.tables``): its tables at
    the one setting it shows, each caption (the quantity, its unit) followed by the figure's title, which names the
    case ("π_τ(· | x = 2, prefix 1 2) at three temperatures"). "" when the figure has no table a reader could use
    (a trace without a name). A diagram, whose traces the tables skip, may give its content as one table of text
    instead (``layout.meta["text_table"]``: caption, corner, header, rows), under "The figure as a table"."""
    data = [{k: _decoded(v) for k, v in t.items()} for t in fig_dict.get("data") or []]
    tables = figure_tables({"data": data, "layout": fig_dict.get("layout") or {}})
    meta = (fig_dict.get("layout") or {}).get("meta")
    text = meta.get("text_table") if isinstance(meta, dict) else None
    if not tables and isinstance(text, dict):  # a diagram: its content as text (4.4's recipes, stage by stage)
        return ('<details class="toy-explorer-table toy-figure-table"><summary>The figure as a table</summary>'
                f'<div class="toy-explorer-tables toy-text-table">{tables_html([text])}</div></details>')
    if not tables or any(not r[0].strip() for t in tables for r in t["rows"]):
        return ""
    lines = [x for x in (plain_text(line) for line in title.split("\n")) if x]  # the title's lines, as sentences
    case = " ".join(line if line[-1] in ".:;!?" else line + "." for line in lines)
    for t in tables:
        caption = t["caption"].strip()
        caption = caption[:1].upper() + caption[1:]
        t["caption"] = " ".join(x for x in (caption + ("." if caption and not caption.endswith(".") else ""),
                                            case) if x)
    return ('<details class="toy-explorer-table toy-figure-table"><summary>Numbers behind the figure</summary>'
            f'<div class="toy-explorer-tables">{tables_html(tables)}</div></details>')


class _BookRenderer(pio.base_renderers.MimetypeRenderer):
    """A plotly renderer that emits text/html without plotly.js (``book_figure_html``): the book loads plotly.js
    once per page, and draws each figure as it comes into view."""

    def to_mimebundle(self, fig_dict):
        return {"text/html": book_figure_html(fig_dict)}


def top_without_title(layout: dict) -> float:
    """The top margin (px) of a figure (its layout as a dict) whose title is HTML above the plot: 40 px less than
    its own (plotly's default 70 when unset), and room for the subplot titles on the top edge, line by line."""
    if not isinstance(layout, dict):
        raise checks.fail("layout", "a plotly layout as a dict", layout)
    top = (layout.get("margin") or {}).get("t")
    need = 30.0
    for a in layout.get("annotations") or []:
        if a.get("yref") == "paper" and a.get("y", 0) >= 0.99 and not a.get("showarrow", True) and a.get("text"):
            size = (a.get("font") or {}).get("size") or 14
            need = max(need, 8 + 1.3 * size * (a["text"].count("<br>") + 1))
    return max((70 if top is None else top) - 40, need)


def lift_title(fig_dict: dict) -> tuple[str, dict]:
    """The figure's title as HTML (escaped; plotly's ``<br>`` as a new line, its ``<b>``, ``<sub>``... dropped)
    and the figure (a plotly figure dict) without it, its top margin smaller (``top_without_title``): the book shows
    the title above the plot, where it wraps at any width."""
    if not isinstance(fig_dict, dict):
        raise checks.fail("fig_dict", "a plotly figure as a dict", fig_dict)
    layout = dict(fig_dict.get("layout") or {})
    title = layout.get("title") or {}
    text = title.get("text") or "" if isinstance(title, dict) else str(title)
    if not text:
        return "", fig_dict
    margin = dict(layout.get("margin") or {})
    margin["t"] = top_without_title(layout)
    layout.update(title={**(title if isinstance(title, dict) else {}), "text": ""}, margin=margin)
    shown = html.escape(re.sub(r"</?(?:b|i|em|sub|sup|span|a)\b[^>]*>", "", text.replace("<br>", "\n")))
    return shown, {**fig_dict, "layout": layout}


pio.renderers["toy_book"] = _BookRenderer()
if os.environ.get("TOY_EXPLORER_VIEW") in ("static", "page", "text"):
    pio.renderers.default = "toy_book"
