"""Post-training recipes as data, and one picture of them (section 4.4).

Each recipe is a list of stages; each stage has a name, the kind of feedback it learns from, and the data it
learns from. Kinds: ``instructive`` (maximum likelihood on text someone wrote: pretraining, SFT), ``preference``
(pairs of responses, one preferred: a reward model or DPO), ``evaluative`` (RL on the model's own samples against a
reward), ``selection`` (sampling from the model and keeping the good samples as new data).
"""

from __future__ import annotations

from dataclasses import dataclass

import plotly.graph_objects as go

from .. import checks
from . import figures


@dataclass(frozen=True)
class Stage:
    """One stage of a recipe: its name, the kind of feedback it uses, and what it learns from, in a few words (drawn
    in full under the stage's box: the figure has nothing more to show on pointing)."""

    name: str
    kind: str
    data: str


KINDS = {
    "instructive": dict(label="maximum likelihood on given text", color="#1f77b4", symbol="square", dash="solid"),
    "preference": dict(label="preferences between responses", color="#9467bd", symbol="diamond", dash="dot"),
    "evaluative": dict(label="RL on the model's own samples", color="#d62728", symbol="circle", dash="dash"),
    "selection": dict(label="sample, filter, keep as data", color="#2ca02c", symbol="triangle-up", dash="dashdot"),
}
"""Kinds of feedback: how each is drawn (colour, marker symbol and border dash differ, so not only colour)."""

PRETRAIN = Stage("Pretraining", "instructive", "next tokens of a large text corpus")

RECIPES = {
    "InstructGPT": (
        "ouyang2022instructgpt",
        [PRETRAIN,
         Stage("SFT", "instructive", "responses written by people"),
         Stage("Reward model", "preference", "people's rankings of outputs"),
         Stage("RL (PPO)", "evaluative", "score of the reward model, KL to SFT")],
    ),
    "Tülu 3": (
        "lambert2024tulu3",
        [PRETRAIN,
         Stage("SFT", "instructive", "instructions with written responses"),
         Stage("DPO", "preference", "pairs of responses, one preferred"),
         Stage("RLVR", "evaluative", "answers a program can check")],
    ),
    "DeepSeek-R1-Zero": (
        "deepseek2025r1",
        [PRETRAIN,
         Stage("RL (GRPO)", "evaluative", "accuracy and format, by rule; no SFT")],
    ),
    "DeepSeek-R1": (
        "deepseek2025r1",
        [PRETRAIN,
         Stage("Cold-start SFT", "instructive", "a small set of reasoning examples"),
         Stage("Reasoning RL", "evaluative", "rewards by rule on reasoning"),
         Stage("Rejection sampling", "selection", "keeps the RL model's good samples"),
         Stage("SFT", "instructive", "800k samples; restarts at the base"),
         Stage("RL, all scenarios", "evaluative", "prompts of every kind, their rewards")],
    ),
}
"""Recipe name → (bibliography key, stages in order). Facts from the chapter's section 4.4 and its citations."""

COLUMNS = 3
"""Stages drawn side by side; a longer recipe continues on the next row (so the boxes fit a 320 px phone screen)."""
NAME_WIDTH, DATA_WIDTH = 11, 13
"""Characters per line of a stage's name (in its box) and of its data (under it): short enough for three boxes
side by side on a 320 px wide screen."""
DATA_LINES = 3
"""Lines a stage's data may take under its box."""


def _tint(hex_color: str, alpha: float = 0.15) -> str:
    r, g, b = (int(hex_color[i:i + 2], 16) for i in (1, 3, 5))
    return f"rgba({r},{g},{b},{alpha})"


def _check_recipes(recipes) -> dict:
    allowed = "a dict {name: (bibliography key, [Stage, ...])} with at least one stage per recipe"
    if not isinstance(recipes, dict) or not recipes:
        raise checks.fail("recipes", allowed, recipes)
    for name, entry in recipes.items():
        if (not isinstance(name, str) or not isinstance(entry, (tuple, list)) or len(entry) != 2
                or not isinstance(entry[1], (tuple, list)) or not entry[1]
                or not all(isinstance(s, Stage) for s in entry[1])):
            raise checks.fail("recipes", allowed, {name: entry})
        for stage in entry[1]:
            checks.choose("stage kind in recipes", stage.kind, KINDS)
    return recipes


def pipeline_figure(recipes: dict | None = None) -> go.Figure:
    """The recipes one under another: each recipe's name above its row of stages (left to right, at most
    ``COLUMNS`` to a row), each box labelled with its stage and, under it, what the stage learns from. Box colour,
    border dash and a marker symbol on the box's corner give the kind of feedback (the legend). A static diagram:
    every label is drawn, and pointing at it shows nothing more.

    The y axis counts pixels (the figure's height is fixed), so the texts keep their places at every width; the
    x axis counts columns, so the boxes share whatever width the page gives them."""
    recipes = RECIPES if recipes is None else _check_recipes(recipes)
    fig = go.Figure()
    name_band, box_height, line = 22, 36, 14  # pixels
    row_height = name_band + box_height + 6 + DATA_LINES * line + 8
    pad = 0.06  # of a column, on either side of a box: the arrows run in the gap
    rows = 0
    corners = {kind: [] for kind in KINDS}  # kind -> the top-left corners of its boxes
    for name, (_, stages) in recipes.items():
        per_row = -(-len(stages) // -(-len(stages) // COLUMNS))  # rows as even as they can be
        for i, stage in enumerate(stages):
            row, col = rows + i // per_row, i % per_row
            top = -row * row_height - name_band
            y = top - box_height / 2
            x0, x1 = col + pad, col + 1 - pad
            kind = KINDS[stage.kind]
            fig.add_shape(type="rect", x0=x0, x1=x1, y0=top - box_height, y1=top,
                          line=dict(color=kind["color"], width=2, dash=kind["dash"]),
                          fillcolor=_tint(kind["color"]), layer="below")
            fig.add_annotation(x=(x0 + x1) / 2, y=y, text=f"<b>{figures.break_lines(stage.name, NAME_WIDTH)}</b>",
                               showarrow=False, font=dict(size=12))
            fig.add_annotation(x=(x0 + x1) / 2, y=top - box_height - 4, showarrow=False,
                               text=figures.break_lines(stage.data, DATA_WIDTH), yanchor="top",
                               font=dict(size=11, color="#444"))
            if col:
                fig.add_annotation(x=x0, y=y, ax=x0 - 2 * pad, ay=y, xref="x", yref="y", axref="x", ayref="y",
                                   text="", showarrow=True, arrowhead=2, arrowsize=1, arrowwidth=1.5,
                                   arrowcolor="#555")
            elif i:  # the recipe goes on in the next row: a line from the row above's last box into this one
                above, turn = y + row_height, top + name_band / 2
                side = per_row + 0.2 if per_row < COLUMNS else COLUMNS - pad / 2  # down a free column if any
                fig.add_shape(type="path", line=dict(color="#555", width=1.5),
                              path=f"M {per_row - pad},{above} L {side},{above} L {side},{turn} L 0.5,{turn}")
                fig.add_annotation(x=0.5, y=top, ax=0.5, ay=turn, xref="x", yref="y", axref="x", ayref="y",
                                   text="", showarrow=True, arrowhead=2, arrowsize=1, arrowwidth=1.5,
                                   arrowcolor="#555")
            corners[stage.kind].append((x0, top))
        fig.add_annotation(x=pad, y=-rows * row_height - name_band / 2 + 2, text=f"<b>{name}</b>",
                           showarrow=False, xanchor="left", font=dict(size=13))
        rows += -(-len(stages) // per_row)
    # A marker on each box's corner gives the kind of feedback by symbol and carries the legend (shapes have none).
    for kind_name, kind in KINDS.items():
        fig.add_scatter(x=[c[0] for c in corners[kind_name]], y=[c[1] for c in corners[kind_name]], mode="markers",
                        name=kind["label"], legendgroup=kind_name, hoverinfo="skip", meta={"table": {"skip": True}},
                        marker=dict(symbol=kind["symbol"], size=10, color=kind["color"],
                                    line=dict(color="white", width=1)))
    top_margin, bottom_margin = 60, 130  # room for the legend in four rows (a 320 px screen)
    fig.update_xaxes(visible=False, range=[0, COLUMNS], fixedrange=True, title_text="stage, in order")
    fig.update_yaxes(visible=False, range=[-rows * row_height, 0], fixedrange=True, title_text="recipe")
    figures.base_layout(fig, "Post-training recipes, stage by stage, with what each stage learns from",
                        height=top_margin + rows * row_height + bottom_margin)
    fig.update_layout(legend=dict(yref="paper", yanchor="top", y=-0.01), plot_bgcolor="white", hovermode=False,
                      margin=dict(l=4, r=4, t=top_margin, b=bottom_margin),
                      meta={"text_table": stages_table(recipes)})  # the page's table: the stages, not coordinates
    return fig


def stages_table(recipes: dict | None = None) -> dict:
    """The figure as a table a reader can use (in place of its boxes' coordinates): one row per recipe, its stages
    in order, each with the kind of feedback it learns from and its data."""
    recipes = RECIPES if recipes is None else _check_recipes(recipes)
    rows = [[name, " → ".join(f"{s.name} ({KINDS[s.kind]['label']}: {s.data})" for s in stages)]
            for name, (_, stages) in recipes.items()]
    return {"caption": "Recipe stages in order, with what each learns from (no numeric quantity).",
            "corner": "recipe", "header": ["stages, in order (kind of feedback: data)"], "rows": rows}
