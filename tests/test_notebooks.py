"""Every notebook: stored without outputs, importing toy with no path hacks, running top to bottom in a fresh
kernel as a learner runs it (live explorers, TOY_EXPLORER_VIEW unset)."""

import os
import re
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((ROOT / "chapters").rglob("*.ipynb"))
NOTEBOOKS = [p for p in NOTEBOOKS if ".ipynb_checkpoints" not in p.parts]
IDS = [p.name for p in NOTEBOOKS]


def test_there_are_notebooks():
    assert any(p.name.startswith("4.1") for p in NOTEBOOKS)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=IDS)
def test_stored_without_outputs_and_without_path_hacks(path):
    nb = nbformat.read(path, as_version=4)
    for cell in nb.cells:
        if cell.cell_type == "code":
            assert cell.outputs == [] and cell.execution_count is None, f"{path.name}: outputs are stored"
            assert not re.search(r"sys\.path|os\.chdir|PYTHONPATH", cell.source), f"{path.name}: path manipulation"
    assert "widgets" not in nb.metadata, f"{path.name}: widget state is stored"
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert any("import toy" in c.source for c in code)
    # on Colab (a launch button) the first code cell installs toy; elsewhere it does nothing
    assert "colab-setup" in code[0].metadata.get("tags", []) and "google.colab" in code[0].source


@pytest.mark.slow
@pytest.mark.parametrize("path", NOTEBOOKS, ids=IDS)
def test_runs_top_to_bottom_in_a_fresh_kernel(path, monkeypatch):
    monkeypatch.delenv("TOY_EXPLORER_VIEW", raising=False)
    nb = nbformat.read(path, as_version=4)
    client = NotebookClient(nb, timeout=120, kernel_name="python3", resources={"metadata": {"path": str(path.parent)}})
    client.execute()
    for cell in nb.cells:
        for out in cell.get("outputs", []):
            assert out.output_type != "error", f"{path.name}: {out.get('ename')}: {out.get('evalue')}"
            if out.output_type == "stream":
                assert out.name != "stderr", f"{path.name} wrote to stderr: {out.text[:500]}"
    # the explorers showed as live widgets, not static pages
    text = str(nb)
    if "toy.explorers." in "".join(c.source for c in nb.cells):
        assert "application/vnd.jupyter.widget-view+json" in text
        assert "toy-explorer-spec" not in text
    assert os.environ.get("TOY_EXPLORER_VIEW") is None
