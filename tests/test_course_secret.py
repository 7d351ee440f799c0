"""Issue 40: instances with a course secret, and anonymous marking that holds (course/secret.py,
course/coincidence.py, course/written.py).

``editions`` makes one secret per course, in the course folder (outside the repository and the students' editions);
each student's own edition carries the student's key, and the grader draws the same instance from the secret and the
name handed in under, so a classmate cannot compute another's instance from the name with ``toy``. The pseudonyms of
anonymous marking are keyed by the secret, and their key is kept beside the folder of marking pages, not in it.
The coincidence table: every graded question keeps a classmate's right answer, and the page's, right for at most
5 % of students; the others are practice, and the instructors' page lists them.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
from pathlib import Path

import nbformat
import pytest

from course import answers, cli, coincidence, editions, written
from course import secret as course_secret
from toy.exercises import questions as Q

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOK = "4.3-classical-vs-llm-rl.ipynb"
GRADED = [q for q in Q.QUESTIONS.values() if not q.practice]


def right(q, student, key=None):
    return Q.as_value(q, q.spec(q.instance(student, key))["answer"])


def test_the_coincidence_table(capsys):
    rows = coincidence.table()
    with capsys.disabled():
        print("\n" + coincidence.text(rows))
    for r in rows:
        if r.practice:
            assert not r.holds, f"{r.question} meets the 5 % limit: it could be graded"
        else:
            assert r.holds, f"{r.question}: a classmate's answer right {r.classmate:.1%}, the page's {r.book:.1%}"
    assert len(GRADED) >= 5


def test_the_instructors_page_lists_the_practice_questions():
    said = (ROOT / "book" / "instructors.md").read_text().split("Practice questions")[1].split("\n\n")[0]
    practice = said.split("Practice today:")[1].split("Graded:")[0]
    for q in Q.QUESTIONS.values():
        assert (f"`{q.name}`" in practice) == q.practice, q.name


def test_editions_make_one_secret_outside_the_editions_and_give_each_student_a_key(tmp_path, monkeypatch):
    course = tmp_path / "course"
    monkeypatch.setenv("TOYBOOK_COURSE_DIR", str(course))
    (course).mkdir()
    (course / "roster.txt").write_text("Ana\nBo\n")
    assert cli.main(["editions"]) == 0
    secret = course_secret.load(course)
    assert secret and stat.S_IMODE(os.stat(course_secret.path(course)).st_mode) == 0o600
    before = course_secret.path(course).read_text()
    assert cli.main(["editions"]) == 0 and course_secret.path(course).read_text() == before  # made once
    text = "".join(p.read_text() for p in (course / "editions").rglob("*.ipynb"))
    assert before.strip() not in text and not list((course / "editions").rglob(course_secret.FILE))
    assert not (ROOT / course_secret.FILE).exists()
    nb = nbformat.read(course / "editions" / "student" / "Ana" / NOTEBOOK, as_version=4)
    key = course_secret.student_key(secret, "Ana")
    assert any(c.source.endswith(f"toy.exercises.student('Ana', {key!r})") for c in nb.cells)


def _status(nb, q, key):
    return next(r["status"] for r in answers.mark_answers(nb, "Ana", [q.exercise], key) if r["question"] == q.name)


def test_a_classmate_cannot_compute_another_instance_from_the_name():
    secret = bytes(range(32, 64))
    for q in GRADED:
        key = course_secret.student_key(secret, "Ana")
        mine = right(q, "Ana", key)
        from_name = right(q, "Ana")  # what toy computes from the name alone
        nb = {"cells": [{"cell_type": "code", "source": f"toy.exercises.answer({q.name!r}, {v!r})", "outputs": []}
                        for v in (mine,)]}
        assert _status(nb, q, key) == "right", q.name
        if json.dumps(mine) != json.dumps(from_name):
            nb["cells"][0]["source"] = f"toy.exercises.answer({q.name!r}, {from_name!r})"
            assert _status(nb, q, key) == "wrong", q.name
    differ = sum(json.dumps(right(q, "Ana", course_secret.student_key(secret, "Ana"))) != json.dumps(right(q, "Ana"))
                 for q in GRADED)
    assert differ >= len(GRADED) - 1


def test_a_notebook_with_the_key_checks_the_instance_the_grader_marks():
    secret = bytes(range(32))
    key = course_secret.student_key(secret, "José")
    Q.student("José", key)
    try:
        for q in GRADED:
            assert Q.answer(q.name, right(q, "José", key)).right, q.name
    finally:
        Q.student(None)
        Q._student[2] = False


def test_pseudonyms_are_keyed_by_the_secret_and_the_key_is_outside_the_pages(tmp_path):
    texts = {"ex-4-1-telescope": {"alice": "a", "bob": "b"}}

    def write(path, text):
        path.write_text(text)

    written.write_marking(tmp_path, texts, {}, True, write, secret=b"s" * 32)
    page = (tmp_path / "written" / "ex-4-1-telescope.html").read_text()
    unsalted = "student " + hashlib.sha256(b"ex-4-1-telescope\0alice").hexdigest()[:6]
    assert "alice" not in page and unsalted not in page
    assert course_secret.pseudonym(b"s" * 32, "ex-4-1-telescope", "alice") in page
    assert course_secret.pseudonym(b"t" * 32, "ex-4-1-telescope", "alice") not in page
    assert not any(p.name.endswith(".csv") for p in (tmp_path / "written").iterdir())
    assert "alice" in (tmp_path / written.KEY).read_text()


def test_nbgraders_instance_is_drawn_with_the_secret():
    from course.nbgrader_release import course_student

    assert course_student(7, b"a" * 32) != course_student(7) != course_student(7, b"b" * 32)


@pytest.mark.parametrize("name", ["Ana", "李小龍"])
def test_the_grader_and_the_edition_agree_on_the_key(name):
    secret = bytes(range(32))
    cell = editions.with_student(nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_code_cell("import toy"), nbformat.v4.new_code_cell('toy.exercises.ask("ex-4-3-discount")')]),
        name, course_secret.student_key(secret, name)).cells[1].source
    found, declared = answers.read_answers_and_key({"cells": [{"cell_type": "code", "source": cell, "outputs": []}]})
    assert declared.key == course_secret.student_key(secret, name) and declared.name == name


def test_keys_prints_each_students_line_for_an_edition_without_names(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("TOYBOOK_COURSE_DIR", str(tmp_path))
    (tmp_path / "roster.txt").write_text("Ana\nJosé\n")
    with pytest.raises(SystemExit):
        cli.main(["keys"])  # no secret yet
    assert "run course.py editions first" in capsys.readouterr().err
    secret = course_secret.make(tmp_path)
    assert cli.main(["keys"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[1] == f"José\ttoy.exercises.student('José', {course_secret.student_key(secret, 'José')!r})"
