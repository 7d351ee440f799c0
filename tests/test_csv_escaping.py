"""Every character a spreadsheet reads as the start of a formula is escaped in the course's CSV files, each asserted
on its own (``course/tables.py``): = + - @ get a leading quote that ``read_cell`` takes off again, and a tab or a
carriage return (which can start or split a cell) becomes a space."""

import csv
import io

import pytest

from course import classroom, tables


@pytest.mark.parametrize("start", ["=", "+", "-", "@"])
def test_each_formula_start_is_escaped_and_read_back(start):
    text = f"{start}HYPERLINK(\"http://x\")"
    assert tables.csv_cell(text) == "'" + text
    assert tables.read_cell(tables.csv_cell(text)) == text
    quoted = "'" + text  # a value that already looks escaped keeps its own quote
    assert tables.csv_cell(quoted) == "''" + text and tables.read_cell(tables.csv_cell(quoted)) == quoted
    written = classroom._csv(["a"], [[text]])
    assert next(csv.reader(io.StringIO(written.splitlines()[1]))) == ["'" + text]


@pytest.mark.parametrize("control", ["\t", "\r", "\n", "\x00", "\x1b"])
def test_control_characters_become_spaces(control):
    assert tables.csv_cell(f"a{control}b") == "a b"
    assert tables.csv_cell(f"{control}=1+1") == "' =1+1"  # a formula after a space is still quoted
    assert tables.csv_cell(f"{control}@x")[:1] not in ("\t", "\r", *tables.FORMULA_STARTS)


def test_plain_text_and_numbers_pass_unchanged():
    for value in ("Ana", "O'Brien", "1e5", 3, 2.5, "", "José Núñez"):
        assert tables.csv_cell(value) == value
