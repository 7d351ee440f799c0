"""An honest class (issue 29): every honest student's notebook (``tests/hostile_class.HONEST``) runs top to bottom in
a fresh kernel, as the student ran it, and the notebook's own checks pass all three 4.1 exercises. These are the
notebooks the grader must give full marks (the grading assertions live in tests/test_grading.py).

A check shows in a notebook as its display (the output's metadata has ``toy_check`` with a ``status``), or as its
printed text (``print(result)``, ``%timeit ... print(...)``); the last one shown for an exercise is the one that
counts (a student may check, fix and check again). Kernels run with TOY_EXPLORER_VIEW=static, as in the book's build.
"""

from __future__ import annotations

import ast
import re
import time

import nbformat
import numpy as np
import pytest
from nbclient import NotebookClient

import toy
from course.editions import student_edition
from course.slicing import _python, normal
from tests import hostile_class as hc
from toy.exercises import EXERCISES, hidden_cases

PRINTED = re.compile(r"^([✓✗…]) (4\.1-[a-z-]+): ", re.MULTILINE)
MARKS = {"✓": "pass", "…": "not implemented", "✗": "not passed"}


def shown_checks(nb) -> list[tuple[str, str]]:
    """(exercise, status) for every check result the executed notebook shows, in order."""
    found = []
    for cell in nb.cells:
        for out in cell.get("outputs", []):
            record = out.get("metadata", {}).get("toy_check")
            if record:
                found.append((record["exercise"], record["status"]))
            elif out.get("output_type") == "stream":
                found += [(ex, MARKS[mark]) for mark, ex in PRINTED.findall(out.get("text", ""))]
    return found


STUDENTS = [pytest.param(name, marks=[pytest.mark.slow] if name in hc.EDITION_BASED else [], id=name)
            for name in hc.HONEST]


@pytest.mark.parametrize("student", STUDENTS)
def test_an_honest_notebook_passes_its_own_checks(student, tmp_path, monkeypatch):
    monkeypatch.setenv("TOY_EXPLORER_VIEW", "static")
    monkeypatch.delenv("TOY_CHECK_SEED", raising=False)
    nb = hc.honest_notebook(student)
    client = NotebookClient(nb, timeout=120, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}})
    start = time.monotonic()
    client.execute()  # raises CellExecutionError on any error output
    seconds = time.monotonic() - start
    shown = shown_checks(nb)
    last = dict(shown)  # the last result shown for each exercise
    assert last == dict.fromkeys(hc.EXERCISES, "pass"), shown
    print(f"{student}: {seconds:.1f} s")


# -- what the class is made of -----------------------------------------------------------------------------------
def _functions(cells: list[str]) -> list[ast.AST]:
    """Every function, lambda and class the student's cells define (their bodies are what the grader calls)."""
    found = []
    for source in cells:
        for node in ast.walk(ast.parse(_python(source))):
            if isinstance(node, (ast.FunctionDef, ast.Lambda, ast.ClassDef)):
                found.append(node)
    return found


def _toy_names(node: ast.AST) -> set[str]:
    """``X`` of each ``toy.X`` read inside ``node``, and the names its ``from toy import`` brings in."""
    names = set()
    for sub in ast.walk(node):
        if isinstance(sub, ast.Attribute) and isinstance(sub.value, ast.Name) and sub.value.id == "toy":
            names.add(sub.attr)
        elif isinstance(sub, ast.ImportFrom) and sub.module == "toy":
            names |= {alias.name for alias in sub.names}
    return names


def test_the_honest_class_uses_only_what_the_exercises_allow():
    """Inside the code the grader calls (every function, lambda and class a student defines), only toy's constants
    and toy.value; no policy method but next_token_probs; top-level ``from toy import`` only of those too."""
    allowed = set(hc.ALLOWED_CONSTANTS) | {"value"}
    policy_only = {"prefix_probs", "_prefix_probs", "prob", "response_probs", "sample", "length_distribution"}
    handed_out = {normal(c.source) for c in student_edition(nbformat.read(hc.BOOK_NOTEBOOK, as_version=4)).cells
                  if c.cell_type == "code"}
    for student, cells in hc.HONEST.items():
        cells = [c for c in cells if normal(c) not in handed_out]  # the book's own cells use all of toy
        for fn in _functions(cells):
            used = _toy_names(fn)
            assert used <= allowed, (student, getattr(fn, "name", "lambda"), used - allowed)
            attrs = {n.attr for n in ast.walk(fn) if isinstance(n, ast.Attribute)}
            assert not attrs & policy_only, (student, getattr(fn, "name", "lambda"), attrs & policy_only)
        for source in cells:
            for node in ast.walk(ast.parse(_python(source))):
                if isinstance(node, ast.ImportFrom) and node.module == "toy":
                    assert {a.name for a in node.names} <= allowed, (student, ast.unparse(node))


def test_the_honest_class_covers_what_issue_29_asks():
    assert len(hc.HONEST) >= 14 and set(hc.HONEST) == set(hc.HONEST_ABOUT)
    text = "\n".join("\n".join(cells) for cells in hc.HONEST.values())
    for needle in ["%%time", "%%capture", "%time ", "%timeit -n1 -r1", "!echo", "%who", "global ", "lru_cache",
                   "functools.cache", "lambda", "__call__", "nonlocal", "value_of_prefix = my_value",
                   'check("4.1-value", my_value)', "result.passed", "print(result)", "__name__ == \"__main__\"",
                   "try:\n    from math import prod", "default_rng(", "math.prod", "np.log", "np.exp", "reduce(",
                   "while ", "itertools.product", "yield", "_memo={}", "configure()", "add_tokens(TOKENS",
                   "from toy import VOCAB_SIZE", "import numpy as np\n\n\ndef my_advantages", "step(state, token)"]:
        assert needle in text, needle
    assert hc.EDITION_BASED and all(hc.HONEST[s][0].startswith("# On Colab") for s in hc.EDITION_BASED)


@pytest.mark.parametrize("student", list(hc.ALTERNATE_ROUTES))
def test_every_alternate_route_reaches_the_right_answer(student):
    """Each route is a real one: called directly (no watch), every answer of an alternate-route student matches the
    reference on the book's hidden cases. So the allow-list, and nothing else, is what must stop it."""
    cells = hc.ALTERNATE_ROUTES[student]
    for exercise, function in zip(hc.EXERCISES, ("value_of_prefix", "response_probability", "advantages"),
                                  strict=True):
        namespace = {"np": np, "toy": toy}
        exec(next(c for c in cells if c.startswith(f"def {function}(")), namespace)
        for case in hidden_cases(exercise, 0):
            want, got = EXERCISES[exercise].reference(*case.args), namespace[function](*case.args)
            assert np.allclose(np.asarray(got, dtype=float), want, rtol=1e-9, atol=1e-9), (
                student, exercise, hc.ALTERNATE_ROUTES_ABOUT[student], case.description)
