"""The nbgrader route stays lean: an autograded notebook stores no widget state and weighs at most 2 MB.

With the live explorers (ipywidgets and plotly FigureWidgets, each carrying about 5 MB of plotly.js in its widget
state), nbgrader's autograde wrote 118 MB of notebooks per student. The course folder's kernel shows them in the
explorers' text view instead (``TOY_EXPLORER_VIEW=text`` in its kernel spec: a title, nothing computed), and its
``nbgrader_config.py`` has nbgrader drop the widget state a student's Jupyter saved with a notebook. The route itself,
run as printed, is checked lean in ``tests/test_grading.py`` (every autograded notebook at most 2 MB, no widget
state), with a student whose notebook was saved with live widgets (``saved_with_widgets``)."""

from __future__ import annotations

import json
import os

import nbformat
import pytest

from course import cli, editions
from course.nbgrader_release import KERNEL_DIR, write_course

MAX_BYTES = 2_000_000
WIDGET_STATE = "application/vnd.jupyter.widget-state+json"
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"


def widget_traces(nb: dict) -> list[str]:
    """Where a notebook (as JSON) holds widget state or widget views."""
    found = [f"metadata.{key}" for key, value in nb.get("metadata", {}).items()
             if key == "widgets" or WIDGET_STATE in json.dumps(value)]
    for i, cell in enumerate(nb.get("cells", [])):
        if WIDGET_STATE in json.dumps(cell.get("metadata", {})):
            found.append(f"cell {i} metadata")
        found += [f"cell {i} output" for output in cell.get("outputs", []) if WIDGET_VIEW in output.get("data", {})]
    return found


def saved_with_widgets(nb):
    """The notebook as a student's Jupyter saves it after running the live explorers: widget state in the
    notebook's metadata (megabytes: plotly.js) and widget views among the outputs."""
    nb.metadata["widgets"] = {WIDGET_STATE: {"version_major": 2, "version_minor": 0, "state": {
        "f00d": {"model_name": "FigureModel", "model_module": "jupyterlab-plotly", "model_module_version": "^5.24.1",
                 "state": {"_js2py_pointsCallback": {}, "_view_count": 1, "plotlyjs": "x" * 5_000_000}}}}}
    code = next(cell for cell in nb.cells if cell.cell_type == "code")
    code.outputs = [nbformat.v4.new_output("display_data", data={
        WIDGET_VIEW: {"model_id": "f00d", "version_major": 2, "version_minor": 0}, "text/plain": "FigureWidget()"})]
    return nb


def test_the_course_kernel_shows_explorers_statically_and_nbgrader_drops_widget_state(tmp_path, monkeypatch):
    out = tmp_path / "course"
    write_course(out, editions.book_notebooks()[:1], cli.ASSIGNMENT, hidden_seed=1, python="/usr/bin/python3")
    spec = json.loads((out / KERNEL_DIR / "kernel.json").read_text())
    assert spec["env"] == {"TOY_EXPLORER_VIEW": "text"}
    from traitlets.config import Config

    config = Config()
    for name in ("JUPYTER_PATH", "PATH"):  # the config file sets them for nbgrader: restored after the test
        monkeypatch.setenv(name, os.environ.get(name, ""))
    path = out / "nbgrader_config.py"
    exec(compile(path.read_text(), str(path), "exec"), {"get_config": lambda: config, "__file__": str(path)})
    clear = config.ClearMetadataPreprocessor
    assert clear.enabled and not clear.clear_cell_metadata  # nbgrader's own cell metadata stays
    assert set(clear.preserve_nb_metadata_mask) == {"kernelspec", "language_info"}


def test_the_text_view_shows_an_explorers_title_and_computes_nothing(monkeypatch):
    import toy

    explorer = toy.explorers.credit_assignment(prompt=2)
    monkeypatch.setattr(type(explorer), "static_payload", lambda self: pytest.fail("the text view computed a grid"))
    monkeypatch.setenv("TOY_EXPLORER_VIEW", "text")
    shown = explorer._repr_mimebundle_()
    assert set(shown) == {"text/plain"} and explorer.title in shown["text/plain"]
