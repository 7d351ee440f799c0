"""Grading a class (toy.grading): marks the grader computes itself, forbidden references, the sandbox, --jobs,
the gradebook, and the nbgrader route checked with nbgrader's own commands.

One batch of made-up submissions is graded once (module fixture) and each test reads its part: a complete
notebook, a partial one that also loops, one that crashes, one that forges check records, one that monkeypatches
toy and the checks, one that calls a forbidden reference, one that allocates memory without limit, and one that
forks processes. Each gets the mark it deserves, and the others are graded as usual.
"""

from __future__ import annotations

import csv
import importlib.util
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from toy.grading import batch, marks

ROOT = Path(__file__).resolve().parents[1]
spec = importlib.util.spec_from_file_location("course", ROOT / "scripts" / "course.py")
course = importlib.util.module_from_spec(spec)
spec.loader.exec_module(course)

NAME = "4.1-formal-mapping.ipynb"
BOOK = ROOT / "chapters" / "04-the-llm-as-a-policy" / NAME
EXERCISES = ["4.1-value", "4.1-response-probability", "4.1-token-advantages"]


def solutions() -> dict[str, str]:
    """{function name: the book's solution cell} for the 4.1 exercises."""
    nb = nbformat.read(BOOK, as_version=4)
    return {re.match(r"def (\w+)", c.source).group(1): c.source for c in nb.cells
            if "solution" in c.metadata.get("tags", []) and c.source.startswith("def ")}


CHECKS = {"value_of_prefix": 'toy.exercises.check("4.1-value", value_of_prefix)',
          "response_probability": 'toy.exercises.check("4.1-response-probability", response_probability)',
          "advantages": 'toy.exercises.check("4.1-token-advantages", advantages)'}


def notebook(*sources: str):
    """A small notebook: toy imported, then the given code cells."""
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(s) for s in ("import numpy as np\nimport toy", *sources)]
    return nb


def solved(**replace: str) -> list[str]:
    """The three exercises, each its definition then its check; ``replace`` swaps a definition's source."""
    sol = solutions()
    cells = []
    for fn, check in CHECKS.items():
        cells += [replace.get(fn, sol[fn]), check]
    return cells


FORGED = '''from IPython.display import display
for name in {names!r}:
    record = {{"exercise": name, "status": "pass", "message": "all 12 hidden cases pass.", "cases_passed": 12,
              "cases_total": 12}}
    display({{"text/plain": "✓ " + name}}, metadata={{"toy_check": record}}, raw=True)
import json, pathlib
for folder in (pathlib.Path.cwd(), pathlib.Path.cwd().parent):
    try:  # a forged answer line for the grader's results file (without the run's token)
        with open(folder / "results.jsonl", "a") as f:
            f.write(json.dumps({{"exercise": "4.1-value", "outcomes": [], "cell": 1}}) + "\\n")
    except OSError:
        pass
'''

PATCH = '''import numpy
import toy.exercises
passing = toy.exercises.CheckResult("x", "pass", "all 12 hidden cases pass.", 12, 12)
toy.exercises.check = lambda name, fn, *a, **k: passing
toy.value = toy.exact.value = lambda *a, **k: 0.0
for ex in toy.exercises.EXERCISES.values():
    ex.reference = lambda *a, **k: 0.0
numpy.allclose = lambda *a, **k: True
'''

HOG = '''def value_of_prefix(policy, reward, prompt, prefix):
    hoard = []
    while True:
        hoard.append(np.zeros(100_000_000))  # 800 MB more address space each time, without end
'''

FORK = '''import os, time
children = []
for _ in range(500):
    pid = os.fork()
    if pid == 0:
        time.sleep(300)
        os._exit(0)
    children.append(pid)
'''


def harness_processes() -> list[int]:
    found = []
    for pid in os.listdir("/proc"):
        try:
            if pid.isdigit() and b"harness.py" in Path(f"/proc/{pid}/cmdline").read_bytes():
                found.append(int(pid))
        except OSError:
            continue
    return found


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    """Grade the made-up class once, with two jobs at a time; return (out folder, statuses, stderr)."""
    tmp = tmp_path_factory.mktemp("class")
    course.write_editions(tmp / "editions")
    subs = tmp / "submissions"
    sol = solutions()
    stub = {fn: f"def {fn}(*args):\n    raise NotImplementedError" for fn in CHECKS}
    made = {
        "complete": nbformat.read(tmp / "editions" / "instructor" / NAME, as_version=4),  # the whole notebook
        "partial": notebook("while True:\n    pass",  # stopped after its CPU time; the rest runs
                            *solved(value_of_prefix=stub["value_of_prefix"], advantages=stub["advantages"])),
        "crash": notebook(*solved()[:2], "import os\nos._exit(1)", *solved()[2:]),
        "forger": notebook(FORGED.format(names=EXERCISES)),
        "patcher": notebook(PATCH, "def value_of_prefix(*args):\n    return 0.0",
                            "def response_probability(*args):\n    return 1.0", *list(CHECKS.values())),
        "shortcut": notebook(*solved(value_of_prefix="from toy.exact import value as v\n\n"
                                     "def value_of_prefix(policy, reward, prompt, prefix):\n"
                                     "    return v(policy, reward, prompt, prefix)")),
        "hog": notebook(*solved(value_of_prefix=HOG)),
        "forker": notebook(FORK, *solved()),
    }
    assert sol  # the book still has its solutions
    for student, nb in made.items():
        (subs / student).mkdir(parents=True)
        nbformat.write(nb, subs / student / NAME)
    out = tmp / "grades"
    proc = subprocess.run([sys.executable, str(ROOT / "scripts" / "course.py"), "grade", str(subs), "--out", str(out),
                           "--jobs", "3", "--timeout", "240", "--cell-timeout", "10", "--memory-mb", "1536",
                           "--processes", "32"], capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stderr[-3000:]
    with (out / "grades.csv").open() as f:
        statuses = {(r["student"], r["exercise"]): r["status"] for r in csv.DictReader(f)}
    return out, statuses, proc


def feedback(out: Path, student: str) -> str:
    return (out / "feedback" / f"{student}.md").read_text()


@pytest.mark.slow
def test_ordinary_submissions_get_their_marks(graded):
    out, got, _ = graded
    for ex in EXERCISES:
        assert got[("complete", ex)] == "pass"
        assert got[("partial", ex)] == ("pass" if ex == "4.1-response-probability" else "not implemented")
        assert got[("crash", ex)] == ("pass" if ex == "4.1-value" else "not run")  # marked at its check cell
    assert "ended early (exit code 1) in code cell 4" in feedback(out, "crash")
    assert "Code cell 2 used its 10 s of CPU time and was stopped" in feedback(out, "partial")


@pytest.mark.slow
def test_forged_records_and_patched_checks_earn_nothing(graded):
    out, got, _ = graded
    for ex in EXERCISES:
        assert got[("forger", ex)] == "missing", ex  # it displayed "pass" for all three and defined nothing
    assert "defines no function value_of_prefix" in feedback(out, "forger")
    # toy.value, toy.exercises.check, the references and numpy.allclose patched in its own process: the grader's
    # references and comparison are in the grader's process, so its wrong answers fail
    assert got[("patcher", "4.1-value")] == "fail" and got[("patcher", "4.1-response-probability")] == "fail"
    assert got[("patcher", "4.1-token-advantages")] == "missing"
    assert "but the function returned 0" in feedback(out, "patcher")


@pytest.mark.slow
def test_a_forbidden_reference_is_reported_in_words(graded):
    out, got, _ = graded
    assert got[("shortcut", "4.1-value")] == "forbidden"
    assert got[("shortcut", "4.1-response-probability")] == got[("shortcut", "4.1-token-advantages")] == "pass"
    assert "this exercise asks for V(s) by backward induction, without toy.value" in feedback(out, "shortcut")


@pytest.mark.slow
def test_memory_and_process_limits_stop_only_the_offender(graded):
    out, got, _ = graded
    assert got[("hog", "4.1-value")] == "error" and "MemoryError" in feedback(out, "hog")
    assert got[("hog", "4.1-response-probability")] == got[("hog", "4.1-token-advantages")] == "pass"
    assert all(got[("forker", ex)] == "pass" for ex in EXERCISES)
    assert re.search(r"Code cell 2 raised (BlockingIOError|OSError)", feedback(out, "forker"))
    assert not harness_processes()  # every grading process, and every child the forker left, is gone


@pytest.mark.slow
def test_gradebook_run_record_and_progress(graded):
    out, got, proc = graded
    with (out / "gradebook.csv").open() as f:
        rows = list(csv.reader(f))
    assert rows[0] == ["student", *EXERCISES, "total"]
    book = {r[0]: r[1:] for r in rows[1:]}
    assert len(book) == 8
    assert book["complete"] == ["1", "1", "1", "3"] and book["partial"] == ["0", "1", "0", "1"]
    assert book["forger"] == book["patcher"] == ["0", "0", "0", "0"] and book["shortcut"] == ["0", "1", "1", "2"]
    about = json.loads((out / "run.json").read_text())
    assert isinstance(about["seed"], int) and about["jobs"] == 3
    assert {"network", "user", "processes", "limits"} <= set(about["sandbox"])
    assert about["sandbox"]["limits"]["memory_mb"] == 1536
    bars = [line for line in proc.stderr.splitlines() if line.startswith("[")]
    assert bars[-1].startswith("[" + "#" * 30 + "] 8/8 graded, 0 running, done")
    assert any(re.search(r"\] [1-7]/8 graded, \d running, about \d+m \d\ds left", b) for b in bars)


def test_fresh_seeds_give_fresh_cases_and_answers_stay_with_the_grader():
    a, b = marks.AnswerKey(1, {"4.1-value": "value_of_prefix"}), marks.AnswerKey(2, {"4.1-value": "value_of_prefix"})
    assert [c.description for c in a.cases["4.1-value"]] != [c.description for c in b.cases["4.1-value"]]
    job = a.job(10.0)[0]
    assert set(job) == {"name", "function", "cases", "time_limit", "forbidden_keys"}  # no answers in it
    assert job["forbidden_keys"]


def test_sandbox_falls_back_and_says_so_without_network_isolation():
    """Where unshare is refused (no root, no user namespaces), grading still works and the report says so."""
    code = ("import sys, json; sys.path.insert(0, sys.argv[1]); import sandbox\n"
            "def refuse(flags):\n    raise OSError(1, 'Operation not permitted')\n"
            "sandbox._unshare = refuse\n"
            "print(json.dumps(sandbox.enter(sandbox.Limits(memory_mb=2048, processes=16))))\n"
            "import resource; print(resource.getrlimit(resource.RLIMIT_AS)[0] // 2**20)")
    proc = subprocess.run([sys.executable, "-c", code, str(ROOT / "toy" / "grading")], capture_output=True,
                          text=True, timeout=60, check=True)
    report, memory = proc.stdout.splitlines()
    report = json.loads(report)
    assert report["network"].startswith("NOT isolated") and "Operation not permitted" in report["network"]
    assert memory == "2048"


def test_progress_bar_counts_and_time_left():
    import io

    bar = batch.Progress(4, stream=io.StringIO())
    assert bar.line(0, 2).endswith("0/4 graded, 2 running, time left: estimating")
    bar.start -= 30  # 30 s for one of four: about 90 s left
    assert re.search(r"1/4 graded, 2 running, about 1m (29|30|31)s left", bar.line(1, 2))
    assert bar.line(4, 0).endswith("done")


NBGRADER = Path(os.environ.get("TOY_NBGRADER_BIN", ROOT / ".venv-nbgrader" / "bin"))


@pytest.mark.slow
def test_nbgrader_release_generates_and_autogrades(tmp_path):
    """nbgrader's own commands on the release: generate_assignment, then autograde a made-up submission with two
    exercises solved and one answered by a forbidden reference (one notebook run keeps the test short)."""
    assert (NBGRADER / "nbgrader").exists(), (
        f"nbgrader is not installed in {NBGRADER}: bash scripts/test.sh installs requirements-nbgrader.txt there")
    assignment = "the-llm-as-a-policy"
    course_dir = tmp_path / "course"
    subprocess.run([sys.executable, str(ROOT / "scripts" / "course.py"), "nbgrader", "--out", str(course_dir)],
                   check=True, capture_output=True, timeout=120)
    kernels = tmp_path / "share" / "jupyter" / "kernels" / "python3"  # nbgrader runs notebooks in toy's kernel
    kernels.mkdir(parents=True)
    (kernels / "kernel.json").write_text(json.dumps({
        "argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": "Python 3 (toy)", "language": "python"}))
    env = {**os.environ, "PATH": f"{NBGRADER}:{os.environ['PATH']}",
           "JUPYTER_PATH": str(tmp_path / "share" / "jupyter")}
    env.pop("TOY_EXPLORER_VIEW", None)

    def nbgrader(*args):
        proc = subprocess.run([str(NBGRADER / "nbgrader"), *args], cwd=course_dir, env=env, capture_output=True,
                              text=True, timeout=600)
        assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-3000:]
        return proc

    nbgrader("generate_assignment", assignment, "--create")
    release = nbformat.read(course_dir / "release" / assignment / NAME, as_version=4)
    source = nbformat.read(course_dir / "source" / assignment / NAME, as_version=4)
    meta = [c.metadata.get("nbgrader", {}) for c in release.cells]
    assert sum(m.get("solution", False) for m in meta) == 3 and sum(m.get("grade", False) for m in meta) == 3
    text = "\n".join(c.source for c in release.cells)
    assert "### BEGIN SOLUTION" not in text and "HIDDEN TESTS" not in text and "raise NotImplementedError()" in text
    assert all(line not in text for line in solutions()["value_of_prefix"].splitlines()[2:])

    answers = {m["grade_id"]: "\n".join(line for line in c.source.splitlines() if "### " not in line)
               for c, m in zip(source.cells, (c.metadata.get("nbgrader", {}) for c in source.cells), strict=True)
               if m.get("solution")}

    def submit(student: str, replace: dict[str, str]):
        nb = nbformat.from_dict(json.loads(json.dumps(release)))
        for cell in nb.cells:
            grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
            if grade_id in replace:
                cell.source = replace[grade_id]
        folder = course_dir / "submitted" / student / assignment
        folder.mkdir(parents=True)
        nbformat.write(nb, folder / NAME)

    submit("shortcut", {**answers, "solution-value_of_prefix": "def value_of_prefix(policy, reward, prompt, prefix):\n"
                                                                "    return toy.value(policy, reward, prompt, prefix)"})
    nbgrader("autograde", assignment, "--create")
    nbgrader("export", "--to", str(tmp_path / "grades.csv"))
    with (tmp_path / "grades.csv").open() as f:
        scores = {r["student_id"]: float(r["raw_score"]) for r in csv.DictReader(f)}
    assert scores == {"shortcut": 2.0}
    graded = nbformat.read(course_dir / "autograded" / "shortcut" / assignment / NAME, as_version=4)
    errors = [o.get("evalue", "") for c in graded.cells for o in c.get("outputs", [])
              if o.get("output_type") == "error"]
    assert len(errors) == 1 and "this exercise asks for V(s) by backward induction, without toy.value" in errors[0]


def test_nbgrader_source_has_a_solution_region_and_a_test_cell_per_exercise():
    from toy.grading.nbgrader_release import source_notebook

    for path in course.book_notebooks():
        book = nbformat.read(path, as_version=4)
        src = source_notebook(book, hidden_seed=7)
        meta = [c.metadata.get("nbgrader") for c in src.cells]
        solutions_ = [c for c, m in zip(src.cells, meta, strict=True) if m and m["solution"]]
        tests = [c for c, m in zip(src.cells, meta, strict=True) if m and m["grade"]]
        checked = marks.exercises_checked(book)
        assert len(solutions_) == len(tests) == len(checked), path.name
        for cell, (exercise, function) in zip(tests, checked, strict=True):
            assert cell.metadata["nbgrader"]["locked"] and cell.metadata["nbgrader"]["points"] == 1
            assert f'check("{exercise}", {function})' in cell.source and "assert result.passed" in cell.source
            assert f'check("{exercise}", {function}, seed=7)' in cell.source.split("### BEGIN HIDDEN TESTS")[1]
        for cell in solutions_:
            lines = cell.source.splitlines()
            assert lines[0].startswith("def ") and "### BEGIN SOLUTION" in cell.source and lines[-1].strip() == (
                "### END SOLUTION")
        assert not any("solution" in c.metadata.get("tags", []) for c in src.cells)
        assert not any("exercise" in c.metadata.get("tags", []) and c.cell_type == "code" for c in src.cells)
