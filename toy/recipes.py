"""Post-training recipes as data, and one picture of them (section 4.4).

Each recipe is a list of stages; each stage has a name, the kind of feedback it learns from, and the data it
learns from. Kinds: ``instructive`` (maximum likelihood on text someone wrote: pretraining, SFT), ``preference``
(pairs of responses, one preferred: a reward model or DPO), ``evaluative`` (RL on the model's own samples against a
reward), ``selection`` (sampling from the model and keeping the good samples as new data).
"""

from __future__ import annotations

from dataclasses import dataclass

import plotly.graph_objects as go

from . import figures


@dataclass(frozen=True)
class Stage:
    """One stage of a recipe: its name, the kind of feedback it uses, and the data it learns from."""

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

PRETRAIN = Stage("Pretraining", "instructive", "a large text corpus (next-token prediction)")

RECIPES = {
    "InstructGPT": (
        "ouyang2022instructgpt",
        [PRETRAIN,
         Stage("SFT", "instructive", "demonstrations written by people"),
         Stage("Reward model", "preference", "people's comparisons of model outputs"),
         Stage("RL (PPO)", "evaluative", "prompts; the reward model's score, KL to SFT")],
    ),
    "Tülu 3": (
        "lambert2024tulu3",
        [PRETRAIN,
         Stage("SFT", "instructive", "instruction–response demonstrations"),
         Stage("DPO", "preference", "pairs of responses, one preferred"),
         Stage("RLVR", "evaluative", "prompts with answers a program can verify")],
    ),
    "DeepSeek-R1-Zero": (
        "deepseek2025r1",
        [PRETRAIN,
         Stage("RL (GRPO)", "evaluative", "rule-based accuracy and format rewards; no SFT at all")],
    ),
    "DeepSeek-R1": (
        "deepseek2025r1",
        [PRETRAIN,
         Stage("Cold-start SFT", "instructive", "a small set of demonstrations"),
         Stage("Reasoning RL", "evaluative", "reasoning prompts, rule-based rewards"),
         Stage("Rejection sampling", "selection", "the RL model's own samples, filtered"),
         Stage("SFT", "instructive", "the new dataset built from those samples"),
         Stage("RL, all scenarios", "evaluative", "prompts of every kind and their rewards")],
    ),
}
"""Recipe name → (bibliography key, stages in order). Facts from the chapter's section 4.4 and its citations."""


def _wrap(text: str, width: int = 22) -> str:
    words, lines, line = text.split(), [], ""
    for w in words:
        if line and len(line) + 1 + len(w) > width:
            lines.append(line)
            line = w
        else:
            line = f"{line} {w}".strip()
    lines.append(line)
    return "<br>".join(lines)


def _tint(hex_color: str, alpha: float = 0.15) -> str:
    r, g, b = (int(hex_color[i:i + 2], 16) for i in (1, 3, 5))
    return f"rgba({r},{g},{b},{alpha})"


def pipeline_figure(recipes: dict | None = None) -> go.Figure:
    """One lane per recipe, one box per stage (left to right), each box labelled with its stage and, below it,
    the data it learns from. Box colour, border dash and a marker symbol give the kind of feedback."""
    recipes = RECIPES if recipes is None else recipes
    fig = go.Figure()
    names = list(recipes)
    width, gap = 1.0, 0.3
    lane_height = 1.5
    n_max = max(len(stages) for _, stages in recipes.values())
    for lane, name in enumerate(names):
        y = -lane * lane_height
        _, stages = recipes[name]
        for i, stage in enumerate(stages):
            kind = KINDS[stage.kind]
            x0 = i * (width + gap)
            fig.add_shape(type="rect", x0=x0, x1=x0 + width, y0=y - 0.25, y1=y + 0.25,
                          line=dict(color=kind["color"], width=2, dash=kind["dash"]),
                          fillcolor=_tint(kind["color"]), layer="below")
            fig.add_annotation(x=x0 + width / 2 + 0.05, y=y, text=f"<b>{_wrap(stage.name, 10)}</b>", showarrow=False,
                               font=dict(size=11))
            fig.add_annotation(x=x0 + width / 2, y=y - 0.32, text=_wrap(stage.data, 20), showarrow=False,
                               yanchor="top", font=dict(size=10, color="#444"))
            if i:
                fig.add_annotation(x=x0, y=y, ax=x0 - gap, ay=y, xref="x", yref="y", axref="x", ayref="y",
                                   text="", showarrow=True, arrowhead=2, arrowsize=1.2, arrowwidth=1.5,
                                   arrowcolor="#555")
        fig.add_annotation(x=-0.08, y=y, text=f"<b>{name}</b>", showarrow=False, xanchor="right",
                           font=dict(size=13))
    # Invisible markers carry the legend (shapes have none) and a hover text for every stage.
    for kind_name, kind in KINDS.items():
        xs, ys, texts = [], [], []
        for lane, name in enumerate(names):
            for i, stage in enumerate(recipes[name][1]):
                if stage.kind == kind_name:
                    xs.append(i * (width + gap) + 0.09)
                    ys.append(-lane * lane_height + 0.13)
                    texts.append(f"{name}: {stage.name}<br>learns from {stage.data}")
        fig.add_scatter(x=xs, y=ys, mode="markers", name=kind["label"], text=texts,
                        hovertemplate="%{text}<extra></extra>",
                        marker=dict(symbol=kind["symbol"], size=9, color=kind["color"]))
    fig.update_xaxes(visible=False, range=[-1.6, n_max * (width + gap) - gap + 0.05], title_text="stage, in order")
    fig.update_yaxes(visible=False, range=[-(len(names) - 1) * lane_height - 0.95, 0.45], title_text="recipe")
    figures.base_layout(fig, "Post-training recipes, stage by stage, with the data each stage learns from",
                        height=150 + 140 * len(names))
    fig.update_layout(legend=dict(y=-0.02), margin=dict(l=10, r=10, t=60, b=60), plot_bgcolor="white")
    return fig
