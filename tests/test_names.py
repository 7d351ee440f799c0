"""Issue 40: names kept exactly (course/roster.py, course/tables.py, course/written.py, course/classroom.py).

A name with a zero-width non-joiner keeps its written marks through a marking round and ``--resume``; a name typed
as NFC in the roster and unzipped as NFD draws the same instance; a bad roster is refused before anything is
written, naming each bad line; a login that starts like a formula is escaped in the LMS files like any cell, and
by-hand.txt names its student (issue 47); a CSV roster's login and SIS ID go into the LMS files, the display
name stays the name.
"""

from __future__ import annotations

import csv
import unicodedata

import pytest

from course import answers, editions, marks, roster, tables, written
from course.classroom import submissions, write_reports
from toy.exercises import questions as Q

NOTEBOOK = "4.1-formal-mapping.ipynb"
ZWNJ_NAME = "Zahra Mehr\u200cAbadi"  # Persian names join with a zero-width non-joiner
NFC = "José Núñez"
NFD = unicodedata.normalize("NFD", NFC)


def book_and_keys():
    book = editions.book()
    return {NOTEBOOK: book[NOTEBOOK]}, {NOTEBOOK: marks.AnswerKey(1, dict(book[NOTEBOOK].exercises))}


def record(student: str, text: str = "an answer") -> dict:
    return {"student": student, "notebook": NOTEBOOK, "exercises": [], "answers": [],
            "written": {"ex-4-1-telescope": text}}


def fill_marks(out, value_of) -> None:
    with open(out / written.MARKS, newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    for r in rows:
        r["given"] = value_of(r)
    with open(out / written.MARKS, "w", newline="", encoding="utf-8") as f:
        w = csv.DictWriter(f, fieldnames=written.FIELDS)
        w.writeheader()
        w.writerows(rows)


def test_a_name_with_a_zero_width_non_joiner_keeps_its_written_marks_through_resume(tmp_path):
    book, keys = book_and_keys()
    (tmp_path / "feedback").mkdir()
    records = [record(ZWNJ_NAME), record("Ana")]
    write_reports(tmp_path, records, book, keys)
    fill_marks(tmp_path, lambda r: r["available"])
    for _ in range(2):  # the marks come back, and each --resume keeps the file as it is
        write_reports(tmp_path, records, book, keys)
    with open(tmp_path / written.MARKS, newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == 2 * len(Q.RUBRICS["ex-4-1-telescope"]), "duplicate rows were added"
    assert ZWNJ_NAME in {r["student"] for r in rows}
    with open(tmp_path / "gradebook.csv", newline="", encoding="utf-8") as f:
        book_rows = {r["student"]: r for r in csv.DictReader(f)}
    assert book_rows[ZWNJ_NAME]["total"] == book_rows["Ana"]["total"] != "0", book_rows


def test_csv_cells_keep_every_printable_and_format_character_and_escape_formulas():
    assert tables.csv_cell(ZWNJ_NAME) == ZWNJ_NAME
    assert tables.csv_cell("a\tb\rc") == "a b c"
    for text in ("=1+1", "-ann", "'=x", "+4", "@me", "O'Brien", "'quoted"):
        assert tables.read_cell(tables.csv_cell(text)) == text, text
    assert tables.csv_cell("=1+1").startswith("'")


def test_a_name_typed_nfc_and_unzipped_nfd_is_one_student(tmp_path):
    for q in Q.QUESTIONS.values():
        assert q.instance(NFD) == q.instance(NFC), q.name
    (tmp_path / NFD).mkdir()
    (tmp_path / NFD / NOTEBOOK).write_text("{}")
    assert submissions(tmp_path)[0][0] == NFC
    right = Q.as_value(Q.QUESTIONS["ex-4-1-telescope"], Q.QUESTIONS["ex-4-1-telescope"].spec(
        Q.QUESTIONS["ex-4-1-telescope"].instance(NFC))["answer"])
    nb = {"cells": [{"cell_type": "code", "source": f"toy.exercises.student({NFD!r})", "outputs": []},
                    {"cell_type": "code", "source": f"toy.exercises.answer('ex-4-1-telescope', {right!r})",
                     "outputs": []}]}
    row = answers.mark_answers(nb, NFD, ["ex-4-1-telescope"])[0]
    assert row["status"] == "right" and "set the name" not in row["message"], row


@pytest.mark.parametrize("line, said", [
    (".hidden", "starts with '.'"), ("a" * 300, "bytes long"), ("a/b", "path or control character"),
    ("back\\slash", "path or control character"), ("Ana\tB", "path or control character"),
])
def test_a_bad_roster_line_is_refused_by_its_line(line, said):
    with pytest.raises(ValueError, match=f"line 2: .*{said}"):
        roster.parse(f"Ana\n{line}\nBo\n")


def test_duplicates_are_refused_also_when_they_differ_only_in_normal_form():
    with pytest.raises(ValueError, match="line 3: the name 'José Núñez' is already on line 1"):
        roster.parse(f"{NFC}\nBo\n{NFD}\n")


def test_a_bad_roster_is_refused_before_anything_is_written(tmp_path):
    with pytest.raises(ValueError) as err:
        editions.write_editions(tmp_path / "eds", ["Ana", ".dot", "Ana", "x" * 300])
    said = str(err.value)
    assert "line 2" in said and "line 3" in said and "line 4" in said and "nothing was written" in said
    assert not (tmp_path / "eds").exists()


def test_the_names_of_issue_40_are_accepted():
    names = [ZWNJ_NAME, NFD, "O'Brien", "李小龍", "=Eve", "-Dash", "@at", "+plus", "N" * 150]
    assert [s.name for s in roster.from_names(names)] == [unicodedata.normalize("NFC", n) for n in names]


def test_a_csv_roster_keeps_login_and_sis_id_apart_from_the_name(tmp_path):
    path = tmp_path / "roster.csv"
    path.write_text("name,login,sis_id\nJosé Núñez,=jnunez,S001\nAna,-ana,\n", encoding="utf-8")
    students = roster.read(path)
    assert students[0] == roster.Student("José Núñez", "=jnunez", "S001")
    book, keys = book_and_keys()
    (tmp_path / "feedback").mkdir()
    write_reports(tmp_path, [record(NFC), record("Ana"), record("=Eve")], book, keys,
                  roster=roster.identities(students))
    canvas = list(csv.reader(open(tmp_path / "canvas.csv", encoding="utf-8")))
    by_name = {tables.read_cell(r[0]): r for r in canvas[2:]}
    # a login that starts like a formula is escaped (issue 47), and by-hand.txt names its student
    assert by_name[NFC][2:4] == ["S001", "'=jnunez"] and by_name["Ana"][3] == "'-ana"
    assert by_name["=Eve"][3] == "'=Eve"  # no roster entry: the folder's name
    moodle = list(csv.reader(open(tmp_path / "moodle.csv", encoding="utf-8")))
    assert {tables.read_cell(r[0]) for r in moodle[1:]} == {"=jnunez", "-ana", "=Eve"}
    assert set((tmp_path / "by-hand.txt").read_text().splitlines()[1:]) == {f"  {n}" for n in (NFC, "Ana", "=Eve")}
