"""The post-training recipes picture: every stage drawn, labelled with its data, citations in the bibliography."""

import re
from pathlib import Path

from toy.page import recipes

BIB = (Path(__file__).resolve().parents[1] / "book" / "references.bib").read_text()


def test_recipes_hold_the_chapter_stages():
    names = {name: [s.name for s in stages] for name, (_, stages) in recipes.RECIPES.items()}
    assert names["InstructGPT"] == ["Pretraining", "SFT", "Reward model", "RL (PPO)"]
    assert names["Tülu 3"][1:] == ["SFT", "DPO", "RLVR"]
    assert "SFT" not in " ".join(names["DeepSeek-R1-Zero"])
    assert [s.kind for s in recipes.RECIPES["DeepSeek-R1"][1]] == [
        "instructive", "instructive", "evaluative", "selection", "instructive", "evaluative"]
    for key, stages in recipes.RECIPES.values():
        assert re.search(r"@\w+\{" + re.escape(key) + ",", BIB), key
        assert all(s.kind in recipes.KINDS and s.data for s in stages)


def test_figure_draws_every_stage_with_its_data():
    fig = recipes.pipeline_figure()
    n_stages = sum(len(stages) for _, stages in recipes.RECIPES.values())
    boxes = [s for s in fig.layout.shapes if s.type == "rect"]
    assert len(boxes) == n_stages
    texts = " ".join(a.text for a in fig.layout.annotations)
    for name, (_, stages) in recipes.RECIPES.items():
        assert f"<b>{name}</b>" in texts
        for s in stages:
            assert s.data.split()[0] in texts
    # A static diagram (issue 39): what pointing at a box used to show is drawn, every stage's data in full, and
    # pointing shows nothing.
    drawn = {a.text.replace("<br>", " ") for a in fig.layout.annotations}
    assert all(s.data in drawn for _, stages in recipes.RECIPES.values() for s in stages)
    assert fig.layout.hovermode is False and all(t.hoverinfo == "skip" for t in fig.data)
    assert fig.layout.title.text
    assert {t.name for t in fig.data} == {k["label"] for k in recipes.KINDS.values()}
    assert len({t.marker.symbol for t in fig.data}) == len(recipes.KINDS)


def test_figure_fits_a_narrow_screen():
    """Labels are short lines inside their column, boxes stay inside the plot and never overlap, and each recipe
    reads left to right, row after row: what keeps every text readable at 320 px wide (issue 42)."""
    fig = recipes.pipeline_figure()
    boxes = [s for s in fig.layout.shapes if s.type == "rect"]
    for a in fig.layout.annotations:
        if a.showarrow is False and a.xanchor != "left":  # a stage's name or its data, centred on its box
            width = recipes.NAME_WIDTH if a.text.startswith("<b>") else recipes.DATA_WIDTH
            lines = a.text.removeprefix("<b>").removesuffix("</b>").split("<br>")
            assert all(len(line) <= width for line in lines) and len(lines) <= recipes.DATA_LINES, a.text
    x_range, y_range = fig.layout.xaxis.range, fig.layout.yaxis.range
    for b in boxes:
        assert x_range[0] <= b.x0 < b.x1 <= x_range[1] and y_range[0] <= b.y0 < b.y1 <= y_range[1]
        assert b.x1 - b.x0 >= 0.8  # of a column: the widest stage name fits it at 320 px
    assert recipes.COLUMNS <= 3  # (four columns do not fit 320 px)
    # At 320 px the legend takes a row per kind (about 30 px each): the bottom margin holds them all, or plotly moves
    # the legend up over the last row's labels, and leaves it there when the screen widens.
    assert fig.layout.margin.b >= 30 * len(recipes.KINDS) + 8
    for i, b in enumerate(boxes):
        for c in boxes[i + 1:]:
            assert b.x1 <= c.x0 or c.x1 <= b.x0 or b.y1 <= c.y0 or c.y1 <= b.y0
    k = 0
    for _, stages in recipes.RECIPES.values():
        lane = boxes[k:k + len(stages)]
        for b, c in zip(lane, lane[1:], strict=False):
            assert (c.y0 == b.y0 and c.x0 > b.x1) or c.y1 < b.y0
        k += len(stages)
    # DeepSeek-R1's six stages take two rows of three; each recipe of four takes two rows of two. Each second row is
    # joined to the first by one path.
    r1 = boxes[-6:]
    assert len({b.y0 for b in r1}) == 2 and len({b.x0 for b in r1}) == 3
    longer = sum(len(stages) > recipes.COLUMNS for _, stages in recipes.RECIPES.values())
    assert longer == 3 and sum(s.type == "path" for s in fig.layout.shapes) == longer


def test_the_figure_as_a_table_lists_each_recipes_stages_not_coordinates():
    """The claim review's E1: the pipeline figure's "Numbers behind the figure" were its boxes' plot coordinates. Its
    table is now one row per recipe, its stages in order with what each learns from, and no coordinate."""
    from bs4 import BeautifulSoup

    from toy.page.figures import _BookRenderer

    page = BeautifulSoup(_BookRenderer().to_mimebundle(recipes.pipeline_figure().to_dict())["text/html"],
                         "html.parser")
    details = page.select_one("details.toy-figure-table")
    assert details.summary.get_text() == "The figure as a table"
    assert "Numbers behind the figure" not in page.get_text()
    (table,) = details.select("table")
    assert table.caption.get_text() == "Recipe stages in order, with what each learns from (no numeric quantity)."
    rows = [[c.get_text() for c in tr.find_all(["th", "td"])] for tr in table.select("tbody tr")]
    assert [r[0] for r in rows] == list(recipes.RECIPES)
    for (name, stages_text), (_, stages) in zip(rows, recipes.RECIPES.values(), strict=True):
        parts = stages_text.split(" → ")
        assert len(parts) == len(stages), name
        for part, stage in zip(parts, stages, strict=True):
            assert part == f"{stage.name} ({recipes.KINDS[stage.kind]['label']}: {stage.data})"
    assert "RL (GRPO) (RL on the model's own samples: accuracy and format, by rule; no SFT)" in rows[2][1]
