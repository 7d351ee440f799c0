"""Issue 40: every ordinary way of answering a question gets its mark (course/answers.py, toy.exercises.answer).

Each honest style is a notebook run top to bottom in a real kernel, as the student ran it (``nbclient``), then read
by the grader: arithmetic read as Python reads it (an int on the left of a float), ``print(answer(...))``, a print
after the answer, two computed answers in one cell, a name corrected in a cell below and the answer cell run again.
An answer that cannot be read (an overflow, 5,000 minus signs) costs only itself and says why; a forgotten name
(``toy.exercises.student(None)``) is said in the notebook and in the feedback.
"""

from __future__ import annotations

import ast
import json

import nbformat
import pytest
from nbclient import NotebookClient

from course import answers
from toy.exercises import questions as Q

STUDENT = "alice"
TEL, PRED = "ex-4-1-telescope", "ex-4-1-predict"
EXERCISES_41 = [TEL, PRED]


def right(question: str, student: str | None = STUDENT):
    q = Q.QUESTIONS[question]
    return Q.as_value(q, q.spec(q.instance(student))["answer"])


def run(*sources: str, again: tuple[int, ...] = (), tmp_path=None) -> dict:
    """A notebook of ``sources`` (after ``import toy`` and the student's name) run top to bottom in a fresh kernel,
    then the cells at ``again`` (indices into ``sources``) run once more, as a student re-runs a cell."""
    head = ["import toy", f"toy.exercises.student({STUDENT!r})"]
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(s) for s in head + list(sources)])
    client = NotebookClient(nb, timeout=120, kernel_name="python3",
                            resources={"metadata": {"path": str(tmp_path) if tmp_path else "."}})
    with client.setup_kernel():
        for i, cell in enumerate(nb.cells):
            client.execute_cell(cell, i)
        for k in again:
            client.execute_cell(nb.cells[len(head) + k], len(head) + k)
    return json.loads(nbformat.writes(nb))


def marked(nb: dict, student: str = STUDENT) -> dict[str, dict]:
    return {r["question"]: r for r in answers.mark_answers(nb, student, EXERCISES_41)}


def _text(value) -> str:
    return "".join(value) if isinstance(value, list) else value or ""


def shown(nb: dict) -> str:
    return "\n".join(_text(o.get("text")) + _text(o.get("data", {}).get("text/plain"))
                     for c in nb["cells"] for o in c.get("outputs", []))


# -- 1. arithmetic as Python reads it ------------------------------------------------------------------------------
@pytest.mark.parametrize("text", ["1 - {c}", "0 - {m}", "2 * {h}", "r - v0"])
def test_style_int_on_the_left_of_a_float_is_read(text):
    v = right(TEL)
    expression = text.format(c=repr(1 - v), m=repr(-v), h=repr(v / 2))
    source = (f"r = 0\nv0 = {-v!r}\n" if text == "r - v0" else "") + f"toy.exercises.answer({TEL!r}, {expression})"
    found, _ = answers.read_answers({"cells": [{"cell_type": "code", "source": source, "outputs": []}]})
    assert found[TEL].source == "code" and abs(found[TEL].value - v) < 1e-9, found[TEL]
    assert marked({"cells": [{"cell_type": "code", "source": source, "outputs": []}]})[TEL]["status"] == "right"


def test_arithmetic_follows_pythons_rules():
    for text, value in [("1 - 0.3125", 0.6875), ("0 - 0.0453", -0.0453), ("2 * 0.3", 0.6), ("3 / 2", 1.5),
                        ("2 ** -1", 0.5), ("1 + 2", 3)]:
        assert answers.value_of(ast.parse(text, mode="eval").body, {}) == value, text


# -- 1. computed answers: the record answer() leaves in its output -------------------------------------------------
def test_style_print_of_the_answer_is_read(tmp_path):
    nb = run(f"def tel():\n    return {right(TEL)!r}\nprint(toy.exercises.answer({TEL!r}, tel()))",
             f"bars = list({right(PRED)!r})\nprint(toy.exercises.answer({PRED!r}, [b * 1 for b in bars]))",
             tmp_path=tmp_path)
    rows = marked(nb)
    assert [rows[q]["status"] for q in EXERCISES_41] == ["right", "right"], rows


def test_style_a_print_after_the_answer_is_read(tmp_path):
    nb = run(f"x = sum([{right(TEL)!r}])\ntoy.exercises.answer({TEL!r}, x)\nprint('done')", tmp_path=tmp_path)
    assert marked(nb)[TEL]["status"] == "right"


def test_style_two_computed_answers_in_one_cell_are_both_read(tmp_path):
    nb = run(f"x = sum([{right(TEL)!r}])\nbars = list({right(PRED)!r})\n"
             f"toy.exercises.answer({TEL!r}, x)\ntoy.exercises.answer({PRED!r}, bars)", tmp_path=tmp_path)
    rows = marked(nb)
    assert [rows[q]["status"] for q in EXERCISES_41] == ["right", "right"], rows
    assert shown(nb).count(f"{TEL}: right") == 1  # shown once, not twice (the cell's value is not shown again)


def test_style_a_name_corrected_below_and_the_cell_run_again(tmp_path):
    """x = 0.5 guessed, answered, corrected in a cell below, the answer cell run again: the last run counts."""
    nb = run("x = 0.5", f"toy.exercises.answer({TEL!r}, x)", f"x = {right(TEL)!r}", again=(1,), tmp_path=tmp_path)
    row = marked(nb)[TEL]
    assert row["status"] == "right" and "the last run's record counts" in row["message"], row


def test_an_answer_written_and_run_is_read_from_its_source_with_no_note(tmp_path):
    nb = run(f"toy.exercises.answer({TEL!r}, {right(TEL)!r})", tmp_path=tmp_path)
    row = marked(nb)[TEL]
    assert row["status"] == "right" and "record" not in row["message"], row


# -- 2. an unreadable answer costs only itself ----------------------------------------------------------------------
@pytest.mark.parametrize("bad, why", [("999999 ** 64", "too large"), ("-" * 5000 + "1", "nested too deeply")])
def test_an_unreadable_answer_costs_only_itself(bad, why):
    nb = {"cells": [{"cell_type": "code", "source": f"toy.exercises.answer({TEL!r}, {bad})", "outputs": []},
                    {"cell_type": "code", "source": f"toy.exercises.answer({PRED!r}, {right(PRED)!r})",
                     "outputs": []},
                    {"cell_type": "markdown", "source": "My written answer.",
                     "metadata": {"toy_written": "ex-4-1-telescope"}}]}
    rows = marked(nb)
    assert rows[TEL]["status"] == "not readable" and why in rows[TEL]["message"], rows[TEL]
    assert rows[PRED]["status"] == "right"
    assert answers.written_answers(nb) == {"ex-4-1-telescope": "My written answer."}


def test_an_overflowing_answer_is_malformed_in_the_notebook_not_a_traceback():
    result = Q.check_answer(TEL, 999999 ** 64, STUDENT)
    assert result.status == "malformed" and "finite" in result.message


def test_an_unreadable_answer_is_said_in_the_gradebook_and_the_feedback(tmp_path):
    from course import editions, marks
    from course.classroom import write_reports

    name = "4.1-formal-mapping.ipynb"
    nb = {"cells": [{"cell_type": "code", "source": f"toy.exercises.answer({TEL!r}, 999999 ** 64)", "outputs": []},
                    {"cell_type": "code", "source": f"toy.exercises.answer({PRED!r}, {right(PRED)!r})",
                     "outputs": []}]}
    record = {"student": STUDENT, "notebook": name, "exercises": [], "written": {},
              "answers": answers.mark_answers(nb, STUDENT, EXERCISES_41)}
    book = editions.book()
    (tmp_path / "feedback").mkdir()
    write_reports(tmp_path, [record], {name: book[name]}, {name: marks.AnswerKey(1, dict(book[name].exercises))})
    grades = (tmp_path / "grades.csv").read_text()
    assert "not readable" in grades and "too large" in grades
    feedback = (tmp_path / "feedback" / f"{STUDENT}.md").read_text()
    assert "too large" in feedback and f"**{PRED}** (practice): right" in feedback


# -- 2. a forgotten name -----------------------------------------------------------------------------------------
def test_a_forgotten_name_is_said_in_the_notebook_and_in_the_feedback(tmp_path):
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(s) for s in [
        "import toy", "toy.exercises.student(None)", f"toy.exercises.answer({TEL!r}, {right(TEL, None)!r})"]])
    NotebookClient(nb, timeout=120, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}).execute()
    nb = json.loads(nbformat.writes(nb))
    assert "no name is set" in shown(nb)
    row = marked(nb)[TEL]
    assert "your notebook set no name" in row["message"], row


# -- issue 47, part 6: every call of answer that ran is read from its record; the last run decides -----------------
def test_style_answer_under_another_name(tmp_path):
    nb = run(f"check = toy.exercises.answer\ncheck({TEL!r}, {right(TEL)!r})",
             f"from toy import exercises\nsay = exercises.answer\nsay({PRED!r}, {right(PRED)!r})", tmp_path=tmp_path)
    rows = marked(nb)
    assert [rows[q]["status"] for q in EXERCISES_41] == ["right", "right"], rows


def test_style_answer_in_a_loop_over_the_questions(tmp_path):
    nb = run(f"mine = {{{TEL!r}: {right(TEL)!r}, {PRED!r}: {right(PRED)!r}}}\n"
             "for question, value in mine.items():\n    toy.exercises.answer(question, value)", tmp_path=tmp_path)
    rows = marked(nb)
    assert [rows[q]["status"] for q in EXERCISES_41] == ["right", "right"], rows


def test_style_a_later_run_beats_an_older_print_below_it(tmp_path):
    """The right answer's cell sits above an older guess, printed; the student ran the guess, then the right cell
    again: the last run counts, not the last cell."""
    nb = run(f"def tel():\n    return {right(TEL)!r}\ntoy.exercises.answer({TEL!r}, tel())",
             f"print(toy.exercises.answer({TEL!r}, 7.0))", again=(0,), tmp_path=tmp_path)
    row = marked(nb)[TEL]
    assert row["status"] == "right" and "last run" in row["message"], row


def test_style_int_is_applied_as_python_does(tmp_path):
    v = right(TEL)
    source = f"k = 3.9\ntoy.exercises.answer({TEL!r}, {v!r} + int(k) - 3)"
    assert marked({"cells": [{"cell_type": "code", "source": source, "outputs": []}]})[TEL]["status"] == "right"
    row = marked(run(source, tmp_path=tmp_path))[TEL]
    assert row["status"] == "right" and "record" not in row["message"], row  # source and record agree
    assert answers.value_of(ast.parse("int(2.7) + float('0.5') + int(-1.5)", mode="eval").body, {}) == 1.5
