"""Exercises, editions and grading.

For every code exercise in every notebook: the reference solution passes its check, the stub gets "not yet
implemented", and a deliberately wrong solution is caught. The student edition holds no solution and runs top to
bottom. An exercise's forbidden references resolve and are caught however they are reached. (Grading a class:
tests/test_grading.py.)
"""

import re
import sys
from pathlib import Path

import nbformat
import numpy as np
import pytest

import toy
from course import editions as course

ROOT = Path(__file__).resolve().parents[1]

DEF = re.compile(r"^def (\w+)\(", re.M)


def tags(cell):
    return cell.get("metadata", {}).get("tags", [])


def code_exercises():
    """(notebook, exercise name, stub source, solution source, function name) for every code exercise."""
    found = []
    for path in course.book_notebooks():
        nb = nbformat.read(path, as_version=4)
        stubs, solutions = {}, {}
        for cell in nb.cells:
            if cell.cell_type != "code":
                continue
            for fn in DEF.findall(cell.source):
                if "exercise" in tags(cell):
                    stubs[fn] = cell.source
                elif "solution" in tags(cell):
                    solutions[fn] = cell.source
            for name, fn in re.findall(r"toy\.exercises\.check\(\s*[\"']([^\"']+)[\"']\s*,\s*(\w+)", cell.source):
                found.append((path.name, name, stubs.get(fn), solutions.get(fn), fn))
    return found


EXERCISES = code_exercises()


def define(source, fn):
    namespace = {"np": np, "toy": toy}
    exec(compile(source, f"<{fn}>", "exec"), namespace)
    return namespace[fn]


def test_every_section_has_exercises():
    for path in course.book_notebooks():
        nb = nbformat.read(path, as_version=4)
        n_code = len(course.exercises_in(nb))
        n_all = sum("{exercise" in c.source for c in nb.cells if c.cell_type == "markdown")
        assert n_code >= 1 and n_all >= 3, f"{path.name}: {n_code} checked exercises, {n_all} in all"


@pytest.mark.parametrize("notebook, name, stub, solution, fn", EXERCISES, ids=[e[1] for e in EXERCISES])
def test_reference_passes_stub_is_not_implemented_and_a_wrong_answer_is_caught(notebook, name, stub, solution, fn):
    assert stub and solution, f"{notebook}: exercise {name} needs a stub cell (tag exercise) and a solution cell"
    assert "NotImplementedError" in stub
    result = toy.exercises.check(name, define(solution, fn))
    assert result.status == "pass", str(result)
    result = toy.exercises.check(name, define(stub, fn))
    assert result.status == "not implemented" and "not yet implemented" in result.message
    reference = define(solution, fn)

    def wrong(*args):
        return np.asarray(reference(*args)) * 1.01 + 1e-3

    result = toy.exercises.check(name, wrong)
    assert result.status == "fail" and "expected" in result.message and "returned" in result.message, str(result)


def test_in_the_books_build_a_check_says_not_run_never_pass(monkeypatch):
    """The book's build executes each notebook with the stub, then the folded solution, then the check: the check
    would pass (on the solution) under a stub the page shows unsolved. In the build (TOY_CHECKS="not run", set by
    book/_ext/toybook.py with the static view, and part of toyexec's execution key) it is not run and says where to
    run it; in JupyterLab, Colab and Live code (TOY_CHECKS unset; Live code's prelude unsets it) it runs."""
    import toybook  # book/_ext: tests/conftest.py puts it on sys.path
    import toyexec

    notebook, name, stub, solution, fn = EXERCISES[0]
    monkeypatch.setenv("TOY_EXPLORER_VIEW", "static")
    monkeypatch.setenv(toy.exercises.CHECKS_ENV, "not run")
    for function in (define(stub, fn), define(solution, fn)):
        result = toy.exercises.check(name, function)
        assert result.status == "not run" and not result.passed, str(result)
        assert "JupyterLab, Colab or Live code" in str(result) and "pass" not in str(result)
        bundle, meta = result._repr_mimebundle_()
        assert meta["toy_check"]["status"] == "not run" and "✓" not in bundle["text/html"]
    assert "TOY_CHECKS=not run" in toyexec.kernel_environment()
    monkeypatch.delenv(toy.exercises.CHECKS_ENV)
    assert toy.exercises.check(name, define(solution, fn)).status == "pass"  # the static view alone (the grader)
    source = Path(toybook.__file__).read_text()
    assert f'os.environ["{toy.exercises.CHECKS_ENV}"] = "not run"' in source
    live = (ROOT / "book" / "_static" / "toy" / "toy-live.js").read_text()
    assert f'os.environ.pop("{toy.exercises.CHECKS_ENV}", None)' in live


@pytest.mark.slow
def test_a_page_built_from_a_notebook_shows_its_checks_not_run(monkeypatch):
    """4.1 executed as the build executes it: every check it shows is "not run", none "pass"."""
    from nbclient import NotebookClient

    monkeypatch.setenv("TOY_EXPLORER_VIEW", "static")
    monkeypatch.setenv(toy.exercises.CHECKS_ENV, "not run")
    path = next(p for p in course.book_notebooks() if p.name.startswith("4.1"))
    nb = nbformat.read(path, as_version=4)
    NotebookClient(nb, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(path.parent)}}).execute()
    statuses = [o["metadata"]["toy_check"]["status"] for c in nb.cells for o in c.get("outputs", [])
                if "toy_check" in o.get("metadata", {})]
    assert statuses and set(statuses) == {"not run"}, statuses


def test_checks_explain_wrong_types_shapes_errors_and_loops():
    name = "4.1-token-advantages"
    r = toy.exercises.check(name, lambda *a: "three")
    assert r.status == "fail" and "shape" in r.message and "str" in r.message
    r = toy.exercises.check(name, lambda *a: np.zeros(17))
    assert r.status == "fail" and "shape (17,)" in r.message
    r = toy.exercises.check(name, lambda *a: [][1])
    assert r.status == "error" and "IndexError" in r.message and "case 1" in r.message
    r = toy.exercises.check("4.1-value", lambda *a: [0.2])
    assert r.status == "fail" and "expected a number" in r.message

    def loop(*args):
        while True:
            pass

    r = toy.exercises.check("4.1-value", loop, time_limit=0.3)
    assert r.status == "timeout" and "did not finish within 0.3 s" in r.message
    assert toy.exercises.check("no-such-exercise", loop).status == "error"
    assert "expected a function" in toy.exercises.check("4.1-value", 3).message


def test_student_edition_has_no_solution(tmp_path):
    course.write_editions(tmp_path)
    for path in course.book_notebooks():
        inst = nbformat.read(tmp_path / "instructor" / path.name, as_version=4)
        stud = nbformat.read(tmp_path / "student" / path.name, as_version=4)
        text = "\n".join(c.source for c in stud.cells)
        for cell in inst.cells:
            if "solution" in tags(cell):
                body = [line for line in cell.source.splitlines() if line.strip() and "def " not in line
                        and "'''" not in line and '"""' not in line]
                for line in body:
                    if len(line.strip()) > 12:
                        assert line not in text, f"{path.name}: solution line left in the student edition: {line}"
        assert not any("solution" in tags(c) for c in stud.cells)
        assert "{solution" not in text
        assert course.exercises_in(stud) == course.exercises_in(inst)
        assert all(c.outputs == [] for c in stud.cells if c.cell_type == "code")


@pytest.mark.slow
def test_student_edition_runs_top_to_bottom(tmp_path):
    from nbclient import NotebookClient

    course.write_editions(tmp_path)
    for path in sorted((tmp_path / "student").glob("*.ipynb")):
        nb = nbformat.read(path, as_version=4)
        NotebookClient(nb, timeout=120, kernel_name="python3", resources={"metadata": {"path": str(path.parent)}}
                       ).execute()
        statuses = [o["metadata"]["toy_check"]["status"] for c in nb.cells for o in c.get("outputs", [])
                    if "toy_check" in o.get("metadata", {})]
        assert statuses and set(statuses) == {"not implemented"}, (path.name, statuses)


def test_forbidden_references_resolve_and_are_caught_however_reached():
    from toy.exercises.forbidden import code_keys

    declared = {name: ex.forbidden for name, ex in toy.exercises.EXERCISES.items() if ex.forbidden}
    assert set(declared) == set(toy.exercises.EXERCISES)  # every code exercise names its shortcut
    for ex in declared.values():
        assert code_keys(ex.references)
    from toy.exact import value as renamed

    r = toy.exercises.check("4.1-value", lambda policy, reward, prompt, prefix: renamed(policy, reward, prompt, prefix))
    assert r.status == "forbidden" and "asks for V(s) by backward induction, without toy.value" in r.message
    r = toy.exercises.check("4.1-value", lambda *a: toy.resets.value_and_variance(*a)[0])
    assert r.status == "forbidden" and "toy.resets.value_and_variance" in r.message
    r = toy.exercises.check("4.1-response-probability", lambda policy, prompt, response: policy.prob(prompt, response))
    assert r.status == "forbidden" and "toy.Policy.prob" in r.message

    def discounted(reward, prompt, response, gamma):
        return toy.discount.DiscountedReward(reward, gamma, len(response))(prompt, toy.strip_eos(response))

    r = toy.exercises.check("4.3-discounted-return", discounted)
    assert r.status == "forbidden" and "toy.discount.DiscountedReward" in r.message
    # allowed where the text allows it: 4.1's advantages may use toy.value
    solution = next(e for e in EXERCISES if e[1] == "4.1-token-advantages")[3]
    assert "toy.value" in solution
    assert toy.exercises.check("4.1-token-advantages", define(solution, "advantages")).passed
    # the stub's message states the rule before the student writes anything
    stub = next(e for e in EXERCISES if e[1] == "4.1-value")[2]
    assert "without toy.value" in toy.exercises.check("4.1-value", define(stub, "value_of_prefix")).message


def test_a_check_that_switches_the_watch_off_does_not_pass():

    def sneaky(policy, reward, prompt, prefix):
        sys.setprofile(None)
        return toy.value(policy, reward, prompt, prefix)

    r = toy.exercises.check("4.1-value", sneaky)
    assert r.status == "error" and "switched off" in r.message


def test_instructors_page_lists_every_forbidden_reference():
    page = (ROOT / "book" / "instructors.md").read_text()
    for name, ex in toy.exercises.EXERCISES.items():
        row = next((line for line in page.splitlines() if line.startswith(f"| `{name}` |")), "")
        assert row and all(f"`{ref}`" in row for ref in ex.forbidden.references), (name, row)


@pytest.mark.parametrize("seed", [0, 1, 7])
def test_hidden_cases_meet_every_preset(seed):
    """Every exercise whose hidden cases draw reference policies at random meets all of toy.PRESETS."""
    import zlib

    from toy.exercises import EXERCISES

    with_priors = 0
    for name, ex in EXERCISES.items():
        cases = ex.cases(np.random.default_rng(seed + zlib.crc32(name.encode())))
        seen = {a.name for c in cases for a in c.args if isinstance(a, toy.HabitPolicy) and a.name in toy.PRESETS}
        if seen:
            with_priors += 1
            assert seen == set(toy.PRESETS), (name, seen)
    assert with_priors >= 7


def test_the_grader_parses_python_only_under_its_lock(monkeypatch):
    """CPython 3.11 can fail two threads that build syntax trees at once ("SystemError: AST constructor recursion
    depth mismatch", python/cpython#106905; it failed a CI run), and the grader grades submissions in threads: every
    parse, unparse, symbol table and compile of source in course/ happens under course.slicing.AST_LOCK."""
    import ast
    import builtins
    import symtable

    from course import restricted, similarity, slicing

    calls = []

    def watched(name, real):
        def call(*args, **kwargs):
            calls.append((name, slicing.AST_LOCK._is_owned()))
            return real(*args, **kwargs)
        return call

    for module, name in ((ast, "parse"), (ast, "unparse"), (symtable, "symtable"), (builtins, "compile")):
        monkeypatch.setattr(module, name, watched(name, getattr(module, name)))
    cells = ["import numpy as np\nx = np.arange(3)", "def f(y):\n    return x + y\n", "print(f(1))"]
    slicing.statements(cells)
    restricted.strip_source("def g():\n    return 1\n", {"g": "toy.g"})
    restricted._pyc("y = 2\n", "<test>")
    similarity._tokens("def h(a):\n    return a * 2\n")
    names = {name for name, _ in calls}
    assert {"parse", "unparse", "symtable", "compile"} <= names, names
    assert all(held for _, held in calls), [name for name, held in calls if not held]


def test_success_probability_of_a_reward_that_pays_every_response_is_one_exactly():
    """A sum of all response probabilities can round to just above 1 (1.0000000000000016 failed a CI run of the
    grader: first_success_cdf refused it); the chance that a sample earns a reward is at most 1, and the cdf works."""
    from toy import exploration

    def always(x, y):
        return 1.0

    for temperature in (0.3, 0.7, 1.0, 1.7, 3.0):
        pi = toy.reference_policy(temperature=temperature)
        for x in toy.PROMPTS:
            p = exploration.success_probability(pi, always, x)
            assert 1 - 1e-12 <= p <= 1.0
            assert np.allclose(exploration.first_success_cdf(p, [0, 1, 5]), [0.0, 1.0, 1.0], rtol=0, atol=1e-12)
