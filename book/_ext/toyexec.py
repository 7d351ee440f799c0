"""A notebook's execution, recorded and replayed: a rebuild executes only the notebooks whose execution could differ.

Every build executes the notebooks inline (myst-nb's ``inline`` mode: the prose's ``{eval}`` roles are evaluated
in the running kernel as the page is rendered). What a notebook's execution gives (each code cell's outputs and
execution count, the kernel's ``language_info``, the value of each ``{eval}`` expression in turn, and the lines
``toy.quote`` appends for the Colab edition) depends only on

* the notebook's own file, without what running it left (outputs, execution counts: ``toysite.strip_outputs``),
* the ``toy`` package the kernel imports, and the Python and the packages installed beside it,
* the execution settings (timeout, errors allowed, the ``{eval}`` pattern), ``TOY_EXPLORER_VIEW`` and ``TOY_CHECKS``.

A successful execution is recorded under ``_build/.toybook-executed/<page>.json`` with the hash of those inputs
(``execution_key``). A later build whose inputs hash the same replays the record (``ReplayedClient``) instead of
starting a kernel: one edited notebook means one executed notebook, and the pages are the same bytes as a clean
build's, since an execution of the same inputs gives the same outputs (the book's outputs are seeded). Anything
else (a changed ``toy``, an upgraded package) changes every key, and every notebook runs again.
``TOYBOOK_REBUILD=1`` ignores the records and executes everything.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import sys
from pathlib import Path

import nbformat
import toysite  # its sibling in book/_ext (on sys.path when Sphinx loads toybook, and in the tests)

FORMAT = 1  # bumped when a record's layout or meaning changes
FOLDER_NAME = ".toybook-executed"  # beside the html folder: _build/.toybook-executed
REBUILD_ENV = "TOYBOOK_REBUILD"


def kernel_environment() -> list[str]:
    """What every notebook's kernel runs on: Python, the installed packages, and the ``toy`` it imports (the
    files of the package, wherever it is installed from)."""
    spec = importlib.util.find_spec("toy")
    toy_dir = Path(next(iter(spec.submodule_search_locations))) if spec and spec.submodule_search_locations else None
    toy = toysite.files_digest(toy_dir) if toy_dir else "missing"
    view, checks = os.environ.get("TOY_EXPLORER_VIEW"), os.environ.get("TOY_CHECKS")
    return [sys.version, *toysite.installed_packages(), f"toy={toy}", f"TOY_EXPLORER_VIEW={view}",
            f"TOY_CHECKS={checks}"]


def execution_key(notebook_file: Path, nb_config, environment: list[str]) -> str:
    """The hash of everything a notebook's execution depends on (see the module's docstring)."""
    settings = [nb_config.execution_timeout, nb_config.execution_allow_errors, nb_config.execution_raise_on_error,
                nb_config.execution_in_temp, nb_config.eval_name_regex]
    h = hashlib.sha256(f"toybook execution record {FORMAT}\n".encode())
    h.update(json.dumps([environment, [str(s) for s in settings]]).encode())
    h.update(toysite.notebook_digest(Path(notebook_file)))  # without outputs: they never change an execution
    return h.hexdigest()


def record_path(folder: Path, docname: str) -> Path:
    return Path(folder) / (docname.replace("/", "__") + ".json")


def load(folder: Path, docname: str, key: str) -> dict | None:
    """The record of ``docname``'s last execution if it was made from inputs with this ``key``, else None."""
    path = record_path(folder, docname)
    try:
        record = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return record if isinstance(record, dict) and record.get("key") == key else None


def save(folder: Path, docname: str, record: dict) -> None:
    path = record_path(folder, docname)
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_suffix(".partial")
    partial.write_text(json.dumps(record, ensure_ascii=False), encoding="utf-8")
    partial.replace(path)


def _cells(notebook) -> list[dict]:
    return [{"execution_count": c.get("execution_count"), "outputs": c.get("outputs", [])}
            if c.get("cell_type") == "code" else None for c in notebook.cells]


def install(folder: Path, srcdir: Path, quotes_env: str) -> None:
    """Make myst-nb's inline execution record each notebook's execution in ``folder``, and replay a record whose
    inputs are unchanged. ``srcdir`` is the book's folder (records are named by page), ``quotes_env`` the variable
    naming the file ``toy.quote`` appends to."""
    import myst_nb.sphinx_ as sphinx_
    from myst_nb.core.execute import NotebookClientBase, NotebookClientInline
    from myst_nb.core.execute import create_client as myst_create_client

    state = {"folder": Path(folder), "srcdir": Path(srcdir).resolve(), "environment": None}
    if getattr(sphinx_.create_client, "_toybook", False):
        sphinx_.create_client._toybook_state.update(state)
        return

    def quotes_file() -> Path | None:
        return Path(os.environ[quotes_env]) if os.environ.get(quotes_env) else None

    class RecordingClient(NotebookClientInline):
        """myst-nb's inline execution, which also records what it gave."""

        def __init__(self, *args, docname: str, key: str, **kwargs):
            super().__init__(*args, **kwargs)
            self._docname, self._key, self._evals = docname, key, []

        def eval_variable(self, name):
            outputs = super().eval_variable(name)
            self._evals.append([name, json.loads(json.dumps(outputs))])
            return outputs

        def close_client(self, exc_type, exc_val, exc_tb):
            super().close_client(exc_type, exc_val, exc_tb)
            code = [i for i, c in enumerate(self.notebook.cells) if c.get("cell_type") == "code"]
            ran_all = not code or self._last_cell_executed >= code[-1]  # a replay must not skip a code cell
            if exc_type is None and not self._cell_error and ran_all:
                quotes = quotes_file()
                save(state["folder"], self._docname, {
                    "key": self._key, "docname": self._docname,
                    "metadata": {k: self.notebook.metadata[k] for k in ("language_info", "widgets")
                                 if k in self.notebook.metadata},
                    "cells": json.loads(json.dumps(_cells(self.notebook))), "evals": self._evals,
                    "quotes": quotes.read_text(encoding="utf-8") if quotes and quotes.is_file() else None})

    class ReplayedClient(NotebookClientBase):
        """A recorded execution played back: the outputs, ``{eval}`` values and quotes it gave, no kernel."""

        def __init__(self, *args, record: dict, **kwargs):
            super().__init__(*args, **kwargs)
            self._record, self._next_eval = record, 0

        def start_client(self):
            cells = self._record["cells"]
            if len(cells) != len(self.notebook.cells):
                raise RuntimeError(f"toybook: the execution record of {self.path} has {len(cells)} cells, "
                                   f"the notebook {len(self.notebook.cells)}")
            for cell, recorded in zip(self.notebook.cells, cells, strict=True):
                if recorded is not None:
                    cell["execution_count"] = recorded["execution_count"]
                    cell["outputs"] = [nbformat.from_dict(o) for o in recorded["outputs"]]
            for k, v in self._record["metadata"].items():
                self.notebook.metadata[k] = nbformat.from_dict(v)
            quotes = quotes_file()
            if quotes is not None and self._record["quotes"] is not None:
                quotes.write_text(self._record["quotes"], encoding="utf-8")
            self.logger.info("Replayed the recorded execution of this notebook: it, toy and the packages are "
                             "unchanged since it last ran (TOYBOOK_REBUILD=1 executes it anyway)")

        def eval_variable(self, name):
            evals = self._record["evals"]
            if self._next_eval >= len(evals) or evals[self._next_eval][0] != name:
                raise RuntimeError(f"toybook: the execution record of {self.path} has no value for {name!r} at "
                                   f"this point; delete {state['folder']} and build again")
            outputs = evals[self._next_eval][1]
            self._next_eval += 1
            return [nbformat.from_dict(o) for o in outputs]

    def create_client(notebook, source, nb_config, logger, read_fmt=None):
        path = Path(source)
        if nb_config.execution_mode != "inline" or not path.is_file():
            return myst_create_client(notebook, source, nb_config, logger, read_fmt)
        docname = _docname(path)
        if state["environment"] is None:
            state["environment"] = kernel_environment()
        key = execution_key(path, nb_config, state["environment"])
        record = None if os.environ.get(REBUILD_ENV, "0") not in ("", "0") else \
            load(state["folder"], docname, key)
        if record is not None:
            return ReplayedClient(notebook, path, nb_config, logger, record=record)
        return RecordingClient(notebook, path, nb_config, logger, docname=docname, key=key)

    def _docname(path: Path) -> str:
        root = state["srcdir"]
        rel = path.resolve().relative_to(root) if path.resolve().is_relative_to(root) else Path(path.name)
        return rel.with_suffix("").as_posix()

    create_client._toybook = True
    create_client._toybook_state = state
    sphinx_.create_client = create_client
