"""Grading the questions' answers and the written answers (course/answers.py, course/written.py).

Answers are read as the student wrote them (numbers, arithmetic, names bound earlier, any alias of ``answer``, cells
with magics) or, when computed by code, from the record the cell's run left; each is marked for the student's own
instance, so the page's answers (the book's setting) and a classmate's do not pass where the instances differ.
Written answers go to a marking page per exercise and a marks file that the instructor fills; the marks come back
into the gradebook and the feedback, and a mark out of range is refused in words.
"""

import ast
import csv
import json

import nbformat
import pytest

from course import answers, cli, editions, marks, written
from course.classroom import write_reports
from tests.test_grading import LIMITS, own_uids
from toy.exercises import questions as Q

NOTEBOOK = "4.1-formal-mapping.ipynb"
EXERCISES_41 = ["ex-4-1-telescope", "ex-4-1-predict"]


def right_answer(question: str, student: str | None):
    q = Q.QUESTIONS[question]
    return Q.as_value(q, q.spec(q.instance(student))["answer"])


def record_of(question: str, value, student: str) -> dict:
    """The output a cell ``toy.exercises.answer(question, value)`` leaves when the student runs it."""
    bundle, meta = Q.check_answer(question, value, student)._repr_mimebundle_()
    return {"output_type": "display_data", "data": bundle, "metadata": meta}


def notebook(*cells) -> dict:
    return {"cells": [{"cell_type": "code", "source": s, "outputs": o} if isinstance(s, str) and o is not None
                      else {"cell_type": "markdown", "source": s, "metadata": o or {}}
                      for s, o in cells], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}


@pytest.mark.parametrize("text, value", [
    ("4/25", 0.16), ("-math.log(0.2)", 1.6094379124341003), ("[0]*3 + [4/25]", [0, 0, 0, 0.16]),
    ("(1, 2.5)", [1, 2.5]), ("'positive'", "positive"), ("float(1)/4", 0.25), ("np.sqrt(4)", 2.0), ("...", ...),
])
def test_values_are_read_without_running_anything(text, value):
    assert answers.value_of(ast.parse(text, mode="eval").body, {}) == value


@pytest.mark.parametrize("text", ["f(3)", "x", "2**1000", "1/0", "__import__('os')", "[1]*10**9", "open('x')"])
def test_anything_else_is_not_a_literal(text):
    with pytest.raises(answers.NotLiteral):
        answers.value_of(ast.parse(text, mode="eval").body, {})


def test_honest_ways_of_answering_are_all_read_and_marked_for_the_students_instance():
    student = "alice"
    tel, pred = right_answer("ex-4-1-telescope", student), right_answer("ex-4-1-predict", student)
    styles = {
        "literal": notebook((f"toy.exercises.answer('ex-4-1-telescope', {tel!r})", []),
                            (f"toy.exercises.answer('ex-4-1-predict', {pred!r})", [])),
        "names and arithmetic, a magic, an alias": notebook(
            (f"%%time\nfrom toy.exercises import answer as mine\nblue = {pred[:4]!r}\nsumA = {tel!r} * 1", []),
            (f"mine('ex-4-1-telescope', sumA)\nmine(\"ex-4-1-predict\", blue + {pred[4:]!r})", [])),
        "computed, and run": notebook(
            ("a = my_sum()\ntoy.exercises.answer('ex-4-1-telescope', a)",
             [record_of("ex-4-1-telescope", tel, student)]),
            ("bars = compute()\ntoy.exercises.answer('ex-4-1-predict', bars)",
             [record_of("ex-4-1-predict", pred, student)])),
        "a first try, then the right one": notebook(
            ("toy.exercises.answer('ex-4-1-telescope', 0.123456)", []),
            (f"toy.exercises.answer('ex-4-1-telescope', {tel!r})\ntoy.exercises.answer('ex-4-1-predict', {pred!r})",
             [])),
    }
    for style, nb in styles.items():
        rows = answers.mark_answers(nb, student, EXERCISES_41)
        assert [r["status"] for r in rows] == ["right", "right"], (style, rows)


def test_the_pages_answers_and_a_classmates_do_not_pass_where_instances_differ():
    for question in ("ex-4-1-telescope", "ex-4-1-predict"):
        book, alice = right_answer(question, None), right_answer(question, "alice")
        for copied in (book, alice):
            mark = answers.mark_answers(notebook((f"toy.exercises.answer({question!r}, {copied!r})", [])), "bob",
                                        EXERCISES_41)
            bob_differs = json.dumps(right_answer(question, "bob")) != json.dumps(copied)
            got = next(r for r in mark if r["question"] == question)
            assert got["status"] == ("wrong" if bob_differs else "right"), (question, got)


def test_answers_that_cannot_be_read_say_why():
    nb = notebook(("x = compute()\ntoy.exercises.answer('ex-4-1-telescope', x)", []),
                  ("toy.exercises.answer('ex-4-1-predict', [1, 2])", []))
    rows = {r["question"]: r for r in answers.mark_answers(nb, "alice", EXERCISES_41)}
    assert rows["ex-4-1-telescope"]["status"] == "not readable"
    assert "run the cell before handing in" in rows["ex-4-1-telescope"]["message"]
    assert rows["ex-4-1-predict"]["status"] == "malformed"
    forged = notebook(("v = f()\ntoy.exercises.answer('ex-4-1-telescope', v)",
                       [{"output_type": "display_data", "data": {}, "metadata": {Q.ANSWER_KEY: {
                           "question": "ex-4-1-telescope", "given": [[1e400]] * 10**3}}}]))
    assert answers.mark_answers(forged, "alice", EXERCISES_41)[0]["status"] == "not readable"
    rows = answers.mark_answers(notebook(("toy.exercises.student('bob')", [])), "alice", EXERCISES_41)
    assert {r["status"] for r in rows} == {"not answered"}


def test_a_different_name_in_the_notebook_is_said_and_the_submitted_name_counts():
    nb = notebook(("toy.exercises.student('bob')", []),
                  (f"toy.exercises.answer('ex-4-1-telescope', {right_answer('ex-4-1-telescope', 'alice')!r})", []))
    row = answers.mark_answers(nb, "alice", EXERCISES_41)[0]
    assert row["status"] == "right" and "set the name 'bob'" in row["message"]


def test_written_answers_are_marked_by_rubric_and_come_back_into_the_gradebook(tmp_path):
    def write(path, text):
        path.write_text(text)

    texts = {"ex-4-1-telescope": {"alice": "The sum telescopes: <b>V(s_T) − V(s_0)</b>.", "bob": ""}}
    pages = written.write_marking(tmp_path, texts, {"ex-4-1-telescope": "(a) The sum is ..."}, False, write)
    html = (tmp_path / pages["ex-4-1-telescope"]).read_text()
    assert "&lt;b&gt;V(s_T)" in html and "No written answer." in html and "(a) The sum is" in html
    with open(tmp_path / written.MARKS, newline="") as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == 2 * len(Q.RUBRICS["ex-4-1-telescope"]) and {r["given"] for r in rows} == {""}
    for r in rows:
        r["given"] = r["available"] if r["student"] == "alice" else "0"
    with open(tmp_path / written.MARKS, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=written.FIELDS)
        w.writeheader()
        w.writerows(rows)
    written.write_marking(tmp_path, {**texts, "ex-4-1-score": {"alice": "(a) ..."}}, {}, True, write)
    given = written.read_marks(tmp_path)
    assert all(g == a for _, a, g in given[("alice", "ex-4-1-telescope")])  # kept, not overwritten
    assert all(g is None for _, _, g in given[("alice", "ex-4-1-score")])  # added, blank
    assert "alice" not in (tmp_path / "written" / "ex-4-1-score.html").read_text()  # anonymous
    assert "alice" in (tmp_path / written.KEY).read_text() and not (tmp_path / "written" / "key.csv").exists()

    record = {"student": "alice", "notebook": NOTEBOOK, "exercises": [], "answers": [],
              "written": {"ex-4-1-telescope": texts["ex-4-1-telescope"]["alice"]}}
    book = editions.book()
    keys = {NOTEBOOK: marks.AnswerKey(1, dict(book[NOTEBOOK].exercises))}
    book = {NOTEBOOK: book[NOTEBOOK]}
    (tmp_path / "feedback").mkdir()
    write_reports(tmp_path, [record], book, keys)
    gradebook = list(csv.DictReader(open(tmp_path / "gradebook.csv")))
    full = sum(c.points for c in Q.RUBRICS["ex-4-1-telescope"])
    assert gradebook[0]["ex-4-1-telescope written"] == str(full) and gradebook[0]["total"] == str(full)
    feedback = (tmp_path / "feedback" / "alice.md").read_text()
    assert feedback.count("✓") == len(Q.RUBRICS["ex-4-1-telescope"])

    rows[0]["given"] = "99"
    with open(tmp_path / written.MARKS, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=written.FIELDS)
        w.writeheader()
        w.writerows(rows)
    with pytest.raises(written.MarksError, match="line 2: given must be a whole number from 0 to"):
        written.read_marks(tmp_path)


def test_a_class_graded_whole_marks_each_students_own_instance(tmp_path, monkeypatch):
    """Students' own editions (a roster), answered as each would: every question right for alice and bob, the
    page's answers copied by carol right only where her instance is the book's; the written answers reach the
    marking page."""
    own_uids(monkeypatch)
    eds, cls = tmp_path / "editions", tmp_path / "class"
    editions.write_editions(eds, ["alice", "bob", "carol"])
    for student in ("alice", "bob", "carol"):
        nb = nbformat.read(eds / "student" / student / NOTEBOOK, as_version=4)
        whose = None if student == "carol" else student
        for cell in nb.cells:
            for question in EXERCISES_41:
                if cell.source.startswith(f'toy.exercises.answer("{question}", ...)'):
                    cell.source = f"toy.exercises.answer({question!r}, {right_answer(question, whose)!r})"
            if cell.get("metadata", {}).get("toy_written") == "ex-4-1-telescope":
                cell.source += f"\n\nThe advantages telescope ({student})."
        (cls / student).mkdir(parents=True)
        nbformat.write(nb, cls / student / NOTEBOOK)
    out = tmp_path / "out"
    cli.grade(cls, out, jobs=2, timeout=120, limits=LIMITS, progress=False)
    book = list(csv.DictReader(open(out / "gradebook.csv")))
    marks = {row["student"]: row for row in book}
    status = {(r["student"], r["exercise"]): r for r in csv.DictReader(open(out / "grades.csv"))}
    for student in ("alice", "bob"):
        assert [status[student, q]["status"] for q in EXERCISES_41] == ["right", "right"], status
    for q in EXERCISES_41:
        same = json.dumps(right_answer(q, None)) == json.dumps(right_answer(q, "carol"))
        assert status["carol", q]["status"] == ("right" if same else "wrong")
        # 4.1's questions are practice (issue 40: too few instances): said, never in the gradebook
        assert q not in marks["alice"] and status["alice", q]["mark"] == "0"
    page = (out / "written" / "ex-4-1-telescope.html").read_text()
    assert all(f"The advantages telescope ({s})." in page for s in ("alice", "bob", "carol"))
    assert marks["alice"]["ex-4-1-telescope written"] == ""  # not marked yet


# -- assignments -----------------------------------------------------------------------------------------------
ASSIGNMENT = '''name = "Week 3"
due = "2027-01-15 23:59"
[points]
ex-4-1-value = 2
ex-4-1-telescope = 18
'''


def known():
    return {label: parts for nb in editions.book().values() for label, parts in nb.parts.items()}


def test_an_assignment_file_is_checked_in_words(tmp_path):
    from course.assignment import load

    path = tmp_path / "a.toml"
    for text, said in [("[points]\nex-9-9 = 1", "not an exercise of the chapter"),
                       ("[points]\nex-4-1-value = -1", "a number above 0"),
                       ("[points]\nex-4-1-value = true", "a number above 0"),
                       ("name = 3\n[points]\nex-4-1-value = 1", "name must be text"),
                       ("title = 'x'\n[points]\nex-4-1-value = 1", "unknown keys title"),
                       ("[points]", "at least one exercise"), ("points = [", "is not TOML")]:
        path.write_text(text)
        with pytest.raises(ValueError, match=said):
            load(path, known())
    with pytest.raises(ValueError, match="could not be read"):
        load(tmp_path / "missing.toml", known())


def test_an_assignment_shows_in_the_student_edition_and_scales_the_gradebook(tmp_path):
    from course.assignment import load

    path = tmp_path / "a.toml"
    path.write_text(ASSIGNMENT)
    assignment = load(path, known())
    editions.write_editions(tmp_path / "eds", None, assignment)
    nb = nbformat.read(tmp_path / "eds" / "student" / NOTEBOOK, as_version=4)
    text = "\n".join(c.source for c in nb.cells if "assignment" in c.metadata.get("tags", []))
    assert "**Assignment: Week 3**, due **2027-01-15 23:59**" in text
    assert "{ref}`ex-4-1-value`: 2 points" in text and "{ref}`ex-4-1-telescope`: 18 points" in text
    assert "*This exercise: 18 points.*" in text and text.count("*Not part of this assignment.*") == 4
    assert nb.cells[0].source.startswith("#")  # the title stays first
    other = nbformat.read(tmp_path / "eds" / "student" / "4.2-easy-and-hard.ipynb", as_version=4)
    assert "No exercise of this section is part of it." in other.cells[1].source

    q = Q.QUESTIONS["ex-4-1-telescope"]
    record = {"student": "alice", "notebook": NOTEBOOK,
              "exercises": [{"exercise": "4.1-value", "status": "pass", "message": "", "cases_passed": 12,
                             "cases_total": 12}],
              "answers": [{"question": q.name, "status": "right", "mark": 1, "points": 1, "message": ""}],
              "written": {"ex-4-1-telescope": "..."}}
    book = editions.book()
    out = tmp_path / "out"
    (out / "feedback").mkdir(parents=True)
    write_reports(out, [record], {NOTEBOOK: book[NOTEBOOK]},
                  {NOTEBOOK: marks.AnswerKey(1, dict(book[NOTEBOOK].exercises))}, assignment=assignment)
    row = next(csv.DictReader(open(out / "gradebook.csv")))
    # ex-4-1-telescope's question is practice (issue 40): its written answer carries the exercise's 18 points
    assert list(row) == ["student", "4.1-value", "ex-4-1-telescope written", "total", "flags"]
    assert (row["4.1-value"], row["ex-4-1-telescope written"]) == ("2", "")
    assert row["total"] == "2"
    canvas = list(csv.reader(open(out / "canvas.csv")))
    assert canvas[0] == ["Student", "ID", "SIS User ID", "SIS Login ID", "Section", "Week 3"]
    assert canvas[1] == ["Points Possible", "", "", "", "", "20"] and canvas[2][3] == "alice"
    assert list(csv.reader(open(out / "moodle.csv"))) == [["Username", "Week 3"], ["alice", "2"]]


@pytest.mark.parametrize("source, value", [
    ("kl = 1.0\nkl += 0.671\ntoy.exercises.answer('ex-4-2-drift', kl)", None),  # += : unknown, not 1.0
    ("x = 1.67\ntoy.exercises.answer('ex-4-2-drift', x)\nx = 5", 1.67),  # the value at the call
    ("p = 0.188\ndef h():\n    p = 0.5\n    return p\ntoy.exercises.answer('ex-4-2-drift', p)", 0.188),
    ("if True:\n    toy.exercises.answer('ex-4-2-drift', 1)\ntoy.exercises.answer('ex-4-2-drift', 2)", 2),
    ("print('ex-4-2-drift', 0.28)", "no call"),  # only answer (or its alias) counts
    ("from toy.exercises import answer as a\na('ex-4-2-drift', 3)", 3),
    ("for i in range(3):\n    v = i\ntoy.exercises.answer('ex-4-2-drift', v)", None),
    ("x = 4/25\nx = x * 2\ntoy.exercises.answer('ex-4-2-drift', x)", 0.32),
])
def test_answers_are_read_in_source_order_with_the_values_names_have_there(source, value):
    found, _ = answers.read_answers(notebook((source, [])))
    given = found.get("ex-4-2-drift")
    assert ("no call" if given is None else given.value) == value


def test_a_marks_file_saved_by_a_spreadsheet_is_read(tmp_path):
    """Excel's "CSV UTF-8" (a byte-order mark) and a locale's ";" between cells."""
    rows = [written.FIELDS, ["=alice", "ex-4-1-score", "1", "criterion", "2", "2"]]
    (tmp_path / written.MARKS).write_text("\ufeff" + "\n".join(";".join(r) for r in rows) + "\n", encoding="utf-8")
    assert written.read_marks(tmp_path) == {("=alice", "ex-4-1-score"): [(1, 2, 2)]}
