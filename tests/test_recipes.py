"""The post-training recipes picture: every stage drawn, labelled with its data, citations in the bibliography."""

import re
from pathlib import Path

from toy import recipes

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
    assert len(fig.layout.shapes) == n_stages
    texts = " ".join(a.text for a in fig.layout.annotations)
    for _, stages in recipes.RECIPES.values():
        for s in stages:
            assert s.data.split()[0] in texts
    assert fig.layout.title.text
    assert {t.name for t in fig.data} == {k["label"] for k in recipes.KINDS.values()}
    assert len({t.marker.symbol for t in fig.data}) == len(recipes.KINDS)
