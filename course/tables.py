"""CSV as the course's files write it: cells a spreadsheet will not run as formulas, names kept exactly.

Text that starts with ``= + - @`` (or with a quote before one of them) gets a leading ``'``, which a spreadsheet
shows and ``read_cell`` takes off again. Control characters (a tab, a carriage return: what could end a cell in a
spreadsheet's eyes) become spaces; every other character stays as it is, so a name with a zero-width non-joiner is
written, and read back, exactly. Identity cells (a login, an SIS ID: what a learning platform matches students by)
are written as they are: an LMS compares them byte for byte, and they come from the instructor's roster.
"""

from __future__ import annotations

import csv
import io
import unicodedata

FORMULA_STARTS = ("=", "+", "-", "@")
ESCAPED = tuple("'" + c for c in FORMULA_STARTS)


def csv_cell(value):
    """A CSV cell a spreadsheet will not run: text starting with = + - @ is written with a leading quote."""
    if isinstance(value, str):
        value = "".join(" " if unicodedata.category(c) == "Cc" else c for c in value)
        if value[:1] in FORMULA_STARTS or value[:2] in ESCAPED:
            return "'" + value
    return value


def read_cell(text: str) -> str:
    """A cell written by ``csv_cell`` as it was before (the leading quote taken off again)."""
    return text[1:] if text[:2] in ESCAPED or text[:3] in tuple("'" + e for e in ESCAPED) else text


def to_csv(header: list, rows: list, verbatim: tuple[int, ...] = ()) -> str:
    """CSV text: ``header``, then ``rows``, each cell through ``csv_cell`` but for the columns ``verbatim``
    (identity cells, written as they are)."""
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    writer.writerow(header)
    writer.writerows([[v if i in verbatim else csv_cell(v) for i, v in enumerate(row)] for row in rows])
    return buffer.getvalue()
