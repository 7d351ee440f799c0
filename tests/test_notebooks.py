"""Every notebook: stored without outputs, importing toy with no path hacks.

That each runs top to bottom in a fresh kernel as a learner runs it (live explorers, no error or stderr output) is
checked where a learner runs it: in JupyterLab, by Run All (tests/browser/test_jupyterlab_reading.py)."""

import re
from pathlib import Path

import nbformat
import pytest

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
