"""CSV as the course's files write it: cells a spreadsheet will not run as formulas."""

from __future__ import annotations

import csv
import io

FORMULA_STARTS = ("=", "+", "-", "@")


def csv_cell(value):
    """A CSV cell a spreadsheet will not run: text starting with = + - @ is written with a leading quote."""
    if isinstance(value, str):
        value = "".join(c if c.isprintable() else " " for c in value)
        if value[:1] in FORMULA_STARTS:
            return "'" + value
    return value


def read_cell(text: str) -> str:
    """A cell written by ``csv_cell`` as it was before (the leading quote taken off again)."""
    return text[1:] if text[:2] in tuple("'" + c for c in FORMULA_STARTS) else text


def to_csv(header: list, rows: list) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    writer.writerow(header)
    writer.writerows([[csv_cell(v) for v in row] for row in rows])
    return buffer.getvalue()
