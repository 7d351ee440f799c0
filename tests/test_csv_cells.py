"""Issue 47, part 7: no cell of any CSV the course writes starts a formula, identity cells included, and every
student is still matched by the LMS's own id (Canvas's numeric ID, Moodle's "Participant N"), which cannot start
one. A login that would start a formula is escaped, and by-hand.txt names its student."""

from __future__ import annotations

import csv
import re
from pathlib import Path

import pytest

from course import editions, marks, roster, tables
from course.classroom import write_reports

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOK = "4.1-formal-mapping.ipynb"
DANGEROUS = ["=HYPERLINK(\"http://x\")", "+1+2", "-2+3", "@SUM(A1)", "\t=1+1", "\r=1+1", "  =1", "'=1"]


def runs(cell: str) -> bool:
    """Whether a spreadsheet could run ``cell`` as a formula (the check, written apart from tables.py's)."""
    start = cell.lstrip(" \t\r\n")
    if start[:1] not in ("=", "+", "-", "@"):
        return False
    return not re.fullmatch(r"[-+]?\d+(\.\d+)?", start) and start != "-"


@pytest.mark.parametrize("value", DANGEROUS)
def test_every_formula_start_is_escaped_and_read_back(value):
    cell = tables.csv_cell(value)
    assert not runs(cell) and cell.startswith("'") and "\t" not in cell and "\r" not in cell
    assert tables.read_cell(cell) == tables.csv_cell(value)[1:]


def test_numbers_ids_and_a_lone_dash_stay_as_they_are():
    for value in ("12345", "-1.5", "2", "-", "Participant 12", "alice@example.edu", "S1"):
        assert tables.csv_cell(value) == value
    text = tables.to_csv(["Student", "ID", "SIS User ID", "SIS Login ID"], [["Ana", "12345", "-x", "@ana"]])
    assert list(csv.reader(text.splitlines())) == [["Student", "ID", "SIS User ID", "SIS Login ID"],
                                                   ["Ana", "12345", "'-x", "'@ana"]]


def test_every_csv_the_course_writes_goes_through_to_csv():
    writer = re.compile(r"csv\.(writer|DictWriter)\(")
    writers = [p.name for p in (ROOT / "course").glob("*.py") if writer.search(p.read_text())]
    assert writers == ["tables.py"]


def test_the_gradebooks_and_lms_files_hold_no_formula(tmp_path):
    students = [roster.Student(f"s{i}", login, sis) for i, (login, sis) in
                enumerate([(d, "S1") for d in DANGEROUS] + [("ok@example.edu", d) for d in DANGEROUS])]
    book = editions.book()
    records = [{"student": s.name, "notebook": NOTEBOOK, "exercises": [], "answers": [], "written": {}}
               for s in students]
    out = tmp_path / "out"
    (out / "feedback").mkdir(parents=True)
    write_reports(out, records, {NOTEBOOK: book[NOTEBOOK]},
                  {NOTEBOOK: marks.AnswerKey(1, dict(book[NOTEBOOK].exercises))}, roster=roster.identities(students))
    files = sorted(out.glob("*.csv"))
    assert {"canvas.csv", "moodle.csv", "gradebook.csv", "grades.csv"} <= {p.name for p in files}
    for path in files:
        for row in csv.reader(open(path, newline="")):
            assert not [c for c in row if runs(c)], (path.name, row)
    assert (out / "by-hand.txt").read_text().count("\n  s") == len(students)
