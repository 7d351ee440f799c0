"""CSV as the course's files write it: no cell a spreadsheet would run as a formula, names kept exactly.

Every cell of every CSV the course writes goes through ``csv_cell``: text that starts with ``= + - @`` (after any
spaces, or with a quote before one of them) gets a leading ``'``, which a spreadsheet shows and ``read_cell`` takes
off again; a lone ``-`` (Moodle's "no date") and a plain number such as ``-1.5`` are no formula and stay. Control
characters (a tab, a carriage return: what could start or end a cell in a spreadsheet's eyes) become spaces; every
other character stays as it is, so a name with a zero-width non-joiner is written, and read back, exactly.

Identity cells get no exception. Each LMS matches a student by a column that cannot start a formula: Canvas's
gradebook import by its ``ID`` (Canvas's user id, digits), Moodle's grading worksheet by its ``Identifier``
("Participant 123"); those pass ``csv_cell`` unchanged. A login or SIS ID that starts with ``= + - @`` is escaped like
any cell: in ``canvas-import.csv`` and ``moodle-worksheet.csv`` the student is still matched by the id; in the
course roster's ``canvas.csv`` and ``moodle.csv`` (no LMS id) such a student must be entered by hand, and the grader
says which (``formula_like``).
"""

from __future__ import annotations

import csv
import io
import re
import unicodedata

FORMULA_STARTS = ("=", "+", "-", "@")
ESCAPED = tuple("'" + c for c in FORMULA_STARTS)


NUMBER = re.compile(r"^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$|^-$")
"""A plain number, or a lone dash: no formula, written as it is."""


def formula_like(value) -> bool:
    """Whether a spreadsheet could take text ``value`` for a formula (``csv_cell`` escapes it)."""
    if not isinstance(value, str):
        return False
    value = "".join(" " if unicodedata.category(c) == "Cc" else c for c in value)
    start = value.lstrip(" ")
    return (start[:1] in FORMULA_STARTS and not NUMBER.match(start)) or start[:2] in ESCAPED


def csv_cell(value):
    """A CSV cell a spreadsheet will not run: control characters made spaces, and text that starts with = + - @
    (after spaces) written with a leading quote."""
    if isinstance(value, str):
        cleaned = "".join(" " if unicodedata.category(c) == "Cc" else c for c in value)
        return "'" + cleaned if formula_like(value) else cleaned
    return value


def read_cell(text: str) -> str:
    """A cell written by ``csv_cell`` as it was before (the leading quote taken off again)."""
    return text[1:] if text[:1] == "'" and formula_like(text[1:]) else text


def to_csv(header: list, rows: list) -> str:
    """CSV text: ``header``, then ``rows``, every cell through ``csv_cell``."""
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    writer.writerow([csv_cell(h) for h in header])
    writer.writerows([[csv_cell(v) for v in row] for row in rows])
    return buffer.getvalue()
