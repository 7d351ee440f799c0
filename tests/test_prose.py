"""The notebooks read the same in JupyterLab (jupyterlab-myst) as in the book (issue 11), checked on their source.

JupyterLab renders MyST's directives, ``{eval}`` expressions and links, but not myst-nb's ``{glue}`` roles, gated
``{exercise-start}`` blocks (each cell is rendered alone) or ``{cite}`` roles against a .bib file. So a notebook
quotes numbers with ``{eval}`toy.quote(...)` `` (toy.page.prose), writes each exercise and solution as one
directive, and cites with a link whose text comes from book/references.bib. These tests fail on any construct
JupyterLab would show raw, and on a number quoted before the cell that computes it (both views evaluate Markdown in
order).
"""

import ast
import json
import re
import sys
from pathlib import Path

import nbformat
import pytest
import yaml

from toy.page import prose

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted(p for p in (ROOT / "chapters").rglob("*.ipynb") if ".ipynb_checkpoints" not in p.parts)
IDS = [p.name for p in NOTEBOOKS]
sys.path.insert(0, str(ROOT / "book" / "_ext"))
import toybook  # noqa: E402

# What jupyterlab-myst cannot render from a notebook's Markdown cell, and why.
RAW_IN_JUPYTERLAB = {
    r"\{glue(:\w+)?\}`": "myst-nb's glue roles: quote numbers with {eval}`toy.quote(\"name\", \"spec\")`",
    r"\{cite(:\w+)?\}`": "citation roles: cite with a link, [Author, Year](../../book/references.bib#key)",
    r"\{(exercise|solution)-(start|end)\}": "gated exercises span cells; write one {exercise} / {solution} directive",
    r"\{eval\}`(?!toy\.quote\()": "an {eval} expression other than toy.quote(...), which the book's build refuses",
}
# Directives jupyterlab-myst renders (MyST's own set); anything else shows as an error box.
DIRECTIVES = {"exercise", "solution", "note", "tip", "warning", "important", "admonition", "math", "figure",
              "image", "code", "code-block", "dropdown", "margin", "seealso", "attention", "caution", "danger",
              "error", "hint", "list-table", "table", "div", "card", "grid", "tab-set", "tab-item", "glossary"}
CITE_LINK = re.compile(r"\[([^\]]+)\]\(((?:\.\./)*)book/references\.bib#([\w:-]+)\)")


def markdown(nb):
    return [c for c in nb.cells if c.cell_type == "markdown"]


def glued_by(code: str) -> list[re.Pattern]:  # glue(...) or toy.glue(...)
    """The names a code cell glues: one regex per glue(...) call, an f-string's {...} matching any identifier part."""
    tree = ast.parse(code)
    assigned: dict[str, list] = {}  # key = f"..." then glue(key, ...)
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            assigned.setdefault(node.targets[0].id, []).append(node.value)
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and "glue" in (getattr(node.func, "id", None), getattr(node.func, "attr", None)) \
                and node.args:
            args = assigned.get(node.args[0].id, []) if isinstance(node.args[0], ast.Name) else [node.args[0]]
            for arg in args:
                if isinstance(arg, ast.Constant):
                    out.append(re.compile(re.escape(arg.value) + "$"))
                elif isinstance(arg, ast.JoinedStr):
                    out.append(re.compile("".join(re.escape(v.value) if isinstance(v, ast.Constant) else r"\w+"
                                                  for v in arg.values) + "$"))
    return out


@pytest.mark.parametrize("path", NOTEBOOKS, ids=IDS)
def test_no_markdown_that_jupyterlab_shows_raw(path):
    nb = nbformat.read(path, as_version=4)
    for cell in markdown(nb):
        for pattern, why in RAW_IN_JUPYTERLAB.items():
            m = re.search(pattern, cell.source)
            assert m is None, f"{path.name}, cell {cell.id}: {m.group(0)!r} shows raw in JupyterLab ({why})"
        for name in re.findall(r"^(?:`{3,}|:{3,})\{([\w:-]+)\}", cell.source, re.M):
            assert name in DIRECTIVES, f"{path.name}, cell {cell.id}: JupyterLab cannot render {{{name}}}"
    code = "\n".join(c.source for c in nb.cells if c.cell_type == "code")
    assert "myst_nb" not in code, (f"{path.name}: glue comes from toy.page.prose, which also works where myst-nb "
                                   "is absent")


@pytest.mark.parametrize("path", NOTEBOOKS, ids=IDS)
def test_every_quoted_number_is_glued_before_the_prose_quotes_it(path):
    nb = nbformat.read(path, as_version=4)
    glued: list[re.Pattern] = []
    imported = False
    quoted = 0
    for cell in nb.cells:
        if cell.cell_type == "code":
            glued += glued_by(re.sub(r"^(\s*)[%!].*$", r"\1pass", cell.source, flags=re.M))
            imported |= bool(re.search(r"^import toy\b", cell.source, re.M))
            continue
        for expression in re.findall(r"\{eval\}`([^`]*)`", cell.source):
            assert re.match(prose.EVAL_PATTERN, expression), f"{path.name}, cell {cell.id}: {expression!r}"
        for name, spec in prose.quoted_names(cell.source):
            quoted += 1
            assert imported, f"{path.name}, cell {cell.id}: quotes {name!r} before `import toy`"
            assert any(p.match(name) for p in glued), (
                f"{path.name}, cell {cell.id} quotes {name!r}, which no earlier code cell glues: JupyterLab's Run "
                "All and the book evaluate Markdown in order")
            format(0.5 if "d" not in spec and "n" not in spec else 1, spec)  # a valid format specification
    if "{eval}" in "".join(c.source for c in markdown(nb)):
        assert quoted > 0


@pytest.mark.parametrize("path", NOTEBOOKS, ids=IDS)
def test_citations_read_author_year_and_lead_to_the_reference(path):
    nb = nbformat.read(path, as_version=4)
    entries = toybook.bib_entries()
    for cell in markdown(nb):
        for text, up, key in CITE_LINK.findall(cell.source):
            assert key in entries, f"{path.name}: {key!r} is not in book/references.bib"
            assert (path.parent / up / "book" / "references.bib").resolve() == ROOT / "book" / "references.bib"
            assert text in (toybook.cite_text(key, False, entries), toybook.cite_text(key, True, entries)), (
                f"{path.name}: the link text {text!r} is not {key!r}'s author and year")


@pytest.mark.parametrize("path", NOTEBOOKS, ids=IDS)
def test_solutions_are_collapsed_in_both_views(path):
    nb = nbformat.read(path, as_version=4)
    solutions = 0
    for i, cell in enumerate(nb.cells):
        if cell.cell_type == "markdown" and re.search(r"^(`{3,}|:{3,})\{solution\}", cell.source, re.M):
            solutions += 1
            assert re.search(r"^:class: dropdown\s*$", cell.source, re.M), f"{path.name}, {cell.id}: not a dropdown"
            if "solution" in cell.metadata.get("tags", []) and i + 1 < len(nb.cells):
                after = nb.cells[i + 1]
                if after.cell_type == "code" and "solution" in after.metadata.get("tags", []):
                    assert after.metadata.get("jupyter", {}).get("source_hidden") is True, after.id
                    assert "hide-input" in after.metadata["tags"], after.id
    exercises = sum(bool(re.search(r"\{exercise\}", c.source)) for c in markdown(nb))
    if path.name.startswith("4."):  # a section; the optional pages (key concepts, review) have no exercises
        assert exercises > 0 and solutions > 0, f"{path.name}: no exercises or solutions found"


def test_quote_formats_once_and_shows_no_quotes():
    import toy

    assert toy.glue is prose.glue and toy.quote is prose.quote
    prose.glue("p_test", 0.123456)
    assert prose.quote("p_test", ".3f") == "0.123" and repr(prose.quote("p_test", ".3f")) == "0.123"
    assert prose.quote("p_test") == "0.123456"
    assert prose.glue("n_test", 3125, display=True) == 3125 and prose.quote("n_test", ",") == "3,125"
    with pytest.raises(ValueError, match="never_glued"):
        prose.quote("never_glued")
    with pytest.raises(ValueError, match="p_test"):
        prose.quote("p_test", ".3q")
    with pytest.raises(ValueError, match="identifier"):
        prose.glue("not a name", 1)
    assert re.match(prose.EVAL_PATTERN, 'toy.quote("a_1", ".3f")') and re.match(prose.EVAL_PATTERN, 'toy.quote("a")')
    assert not re.match(prose.EVAL_PATTERN, '__import__("os")')


def test_the_book_accepts_exactly_toy_prose_expressions():
    config = yaml.safe_load((ROOT / "_config.yml").read_text())
    assert config["execute"]["execute_notebooks"] == "inline", "only inline execution evaluates {eval} roles"
    assert config["sphinx"]["config"]["nb_eval_name_regex"] == prose.EVAL_PATTERN
    assert config["sphinx"]["config"]["bibtex_cite_id"] == "{key}"


def test_jupyterlab_news_popup_is_off_by_project_settings():
    requirements = (ROOT / "requirements.txt").read_text()
    assert re.search(r"^\./lab-settings\b", requirements, re.M) and re.search(r"^jupyterlab-myst==", requirements,
                                                                              re.M)
    settings = json.loads((ROOT / "lab-settings" / "toybook.json").read_text())
    assert settings["@jupyterlab/apputils-extension:notification"]["fetchNews"] == "false"
    assert "share/jupyter/lab/settings/overrides.d" in (ROOT / "lab-settings" / "pyproject.toml").read_text()


def test_jupyterlab_windowing_is_off_by_project_settings():
    # With windowing, jupyterlab-myst renders each Markdown cell on its own once attached: cross-references to labels
    # further down stay raw, and JupyterLab's cell toolbar throws on a Markdown cell not yet rendered after Run All
    # (tests/browser/test_jupyterlab_reading.py opens every notebook with these defaults and checks both).
    settings = json.loads((ROOT / "lab-settings" / "toybook.json").read_text())
    assert settings["@jupyterlab/notebook-extension:tracker"]["windowingMode"] == "none"
