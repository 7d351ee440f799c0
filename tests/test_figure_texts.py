"""Texts that fit a phone with nothing measured in the page: titles lifted out of the plot as HTML, every text drawn
inside a figure broken into short lines when the figure is made (``toy.figures``). The browser check that nothing
leaves its figure or overlaps is ``tests/browser/test_readability.py``; these check the rules themselves."""

from __future__ import annotations

import json
import re

import numpy as np
import plotly.io as pio
import pytest

from toy.page import figures, recipes
from toy.page.explorers import ALL
from toy.page.explorers.easy_hard import FIGURES as STATIC


def visible(line: str) -> str:
    return re.sub(r"<[^>]*>", "", line)


# -- break_lines ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("seed", range(200))
def test_break_lines_is_greedy_and_keeps_every_word(seed):
    rng = np.random.default_rng(seed)
    words = ["".join(rng.choice(list("abcxyz²"), size=rng.integers(1, 14))) for _ in range(rng.integers(1, 20))]
    if rng.random() < 0.3:  # markup, which takes no room
        words[0] = f"<b>{words[0]}</b>"
    width = int(rng.integers(4, 40))
    lines = figures.break_lines(" ".join(words), width).split("<br>")
    assert " ".join(lines) == " ".join(words)  # the same words, in order, spaces turned into breaks only
    for k, line in enumerate(lines):
        assert len(visible(line)) <= width or " " not in line  # too long only as one word of its own
        if k + 1 < len(lines):  # greedy: the next line's first word would not have fitted
            assert len(visible(line)) + 1 + len(visible(lines[k + 1].split(" ")[0])) > width


def test_break_lines_keeps_given_breaks_and_short_texts():
    assert figures.break_lines("short") == "short"
    assert figures.break_lines("a b<br>c d", 3) == "a b<br>c d"
    assert figures.break_lines("aa bb cc", 5) == "aa bb<br>cc"
    assert figures.break_lines("", 5) == ""


# -- every figure of the book -----------------------------------------------------------------------------------
def book_figures():
    yield from ((name, factory().figure) for name, factory in sorted(ALL.items()))
    yield "pipeline_figure", recipes.pipeline_figure()
    yield from ((name, factory()) for name, factory in sorted(STATIC.items()))  # 4.2's static figures
    yield "distribution_bars", figures.distribution_bars({"τ = 1": [0.5, 0.5]}, ["0", "1"], "a title")
    yield "credit_by_prior", figures.credit_by_prior({"sum_to_target": {"pretrained": [0.1, 0.2]}}, "a title")


def drawn_texts(fig):
    """(kind, budget in characters, text) of every text drawn inside the figure that toy.figures breaks."""
    for a in fig.layout.annotations:
        if a.text and a.xref == "paper" and not a.showarrow:
            yield "subplot title", max(12, int(figures.LINE_CHARS * min(1.0, 2 * min(a.x, 1 - a.x)))), a.text
    for key in fig.layout:
        if re.fullmatch(r"[xy]axis\d*", key) and fig.layout[key].title.text:
            yield key + " title", figures.LINE_CHARS, fig.layout[key].title.text
    for trace in fig.data:
        if trace.name and trace.showlegend is not False:
            yield "legend entry", figures.LINE_CHARS, trace.name


@pytest.mark.parametrize("name,fig", list(book_figures()), ids=lambda x: x if isinstance(x, str) else "")
def test_every_text_drawn_in_a_book_figure_has_short_lines(name, fig):
    texts = list(drawn_texts(fig))
    assert texts, f"{name}: no texts found, so this test checks nothing"
    for kind, budget, text in texts:
        for line in text.split("<br>"):
            assert len(visible(line)) <= budget, f"{name}: {kind} line {line!r} is over {budget} characters"
    if name != "pipeline_figure":  # (its y axis counts pixels, so its legend keeps a fixed place)
        legend = fig.layout.legend
        assert (legend.yref, legend.y, legend.yanchor) == ("container", 0, "bottom"), name


def test_fit_texts_breaks_subplot_titles_by_their_panels_share():
    from plotly.subplots import make_subplots

    fig = make_subplots(rows=1, cols=2, subplot_titles=("a long title over the narrow left panel here", "b"))
    fig.add_scatter(x=[0], y=[0], name="a series whose name is far longer than a phone has room for", row=1, col=1)
    fig.update_xaxes(title_text="an axis title that runs on and on past the width", row=1, col=1)
    figures.fit_texts(fig)
    left = fig.layout.annotations[0]
    share = 2 * min(left.x, 1 - left.x)
    assert share < 0.5 and left.font.size == 14
    assert max(len(line) for line in left.text.split("<br>")) <= int(figures.LINE_CHARS * share)
    assert fig.data[0].name.count("<br>") == 1 and fig.layout.xaxis.title.text.count("<br>") == 1


# -- titles as HTML above the plot ------------------------------------------------------------------------------
def test_lift_title_moves_the_title_out_and_gives_back_its_room():
    fig = {"data": [], "layout": {"title": {"text": "a < b<br>and <b>c</b>", "x": 0.02}, "margin": {"t": 70}}}
    title, lifted = figures.lift_title(fig)
    assert title == "a &lt; b\nand c"
    assert lifted["layout"]["title"] == {"text": "", "x": 0.02} and lifted["layout"]["margin"]["t"] == 30
    assert fig["layout"]["title"]["text"] == "a < b<br>and <b>c</b>"  # the given figure is left as it was
    untitled = {"data": [], "layout": {}}
    assert figures.lift_title(untitled) == ("", untitled)


def test_top_margin_holds_the_subplot_titles_on_the_top_edge():
    assert figures.top_without_title({}) == 30
    assert figures.top_without_title({"margin": {"t": 100}}) == 60
    two_lines = {"annotations": [{"text": "a<br>b", "x": 0.5, "y": 1.0, "xref": "paper", "yref": "paper",
                                  "showarrow": False, "font": {"size": 14}}]}
    assert figures.top_without_title(two_lines) == pytest.approx(8 + 1.3 * 14 * 2)
    inner = {"annotations": [{**two_lines["annotations"][0], "y": 0.4}]}  # a lower panel's: in the gap, not on top
    assert figures.top_without_title(inner) == 30


def test_the_book_renderer_puts_the_title_above_the_plot():
    fig = figures.distribution_bars({"τ = 1": [0.25, 0.75]}, ["0", "1"], "Two tokens <br>at τ = 1")
    html = pio.renderers["toy_book"].to_mimebundle(fig.to_dict())["text/html"]
    assert html == pio.renderers["toy_book"].to_mimebundle(fig.to_dict())["text/html"]  # the same on every build
    uid = re.search(r'<div class="toy-figure-title" id="([\w-]+)-title">Two tokens \nat τ = 1</div>', html).group(1)
    assert f'role="figure" aria-labelledby="{uid}-title"' in html and f'id="{uid}"' in html
    spec = json.loads(re.search(r'<script type="application/json" class="toy-plot-spec" data-for="([\w-]+)">(.*?)'
                                r"</script>", html, re.S).group(2))
    layout = spec["layout"]
    assert layout["title"]["text"] == "" and layout["margin"]["t"] == 30
    # drawn by the page when it comes into view, in a box of the figure's height (nothing moves when it draws);
    # the template keeps the defaults of the trace types drawn only; no mode bar
    assert f'<div class="toy-plot" id="{uid}" style="height:{layout["height"]}px"></div>' in html
    assert set(layout["template"]["data"]) == {"bar"} and spec["config"]["displayModeBar"] is False


def test_static_explorers_carry_their_title_apart_from_the_figure():
    for name, factory in sorted(ALL.items()):
        ex = factory()
        payload = ex.static_payload()
        layout = payload["figure"]["layout"]
        assert layout["title"]["text"] == "", name
        assert payload["figure_title"] == json.loads(pio.to_json(ex.figure_for()))["layout"]["title"]["text"], name
        assert layout["margin"]["t"] == figures.top_without_title(ex.figure.layout.to_plotly_json()), name
