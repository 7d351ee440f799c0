"""Numbers quoted in a notebook's prose: computed once by a code cell, shown by the Markdown around it.

A code cell records a value under a name, and a Markdown cell quotes it with MyST's ``{eval}`` role::

    toy.glue("p_eos", float(1 - lengths[-1]))                          # code cell
    ends at EOS with probability {eval}`toy.quote("p_eos", ".3f")`.    # Markdown cell

The same source reads right in both views: the book's build (myst-nb, ``execute_notebooks: inline``) and
JupyterLab with jupyterlab-myst both evaluate the expression in the notebook's kernel when they reach the Markdown
cell, and show the text it returns. ``quote`` is the one place where a value becomes text: Python's format
specification (``".3f"``, ``".1e"``, ``","``, or none for ``str(value)``), returned as a string whose ``repr`` has
no quotes, so neither front end prints them.

Both are exported as ``toy.glue`` and ``toy.quote``, so a notebook needs nothing but ``import toy``. ``glue`` keeps
myst-nb's signature (``glue(name, value, display=False)``), so a call written for myst-nb's glue works unchanged.
"""

from __future__ import annotations

import json
import os
import re

from .. import checks

__all__ = ["EVAL_PATTERN", "QUOTES_ENV", "Quoted", "glue", "quote", "quoted_names"]

_NAME = r"[A-Za-z_][A-Za-z0-9_]*"
#: The one form of ``{eval}`` expression the book uses: ``toy.quote("name")`` or ``toy.quote("name", "spec")``.
#: The book's build accepts no other (myst-nb's ``nb_eval_name_regex``).
EVAL_PATTERN = rf'^toy\.quote\("{_NAME}"(, "[^"\\]*")?\)$'

#: Set by the book's build (``book/_ext/toybook.py``): a file to which every ``quote`` appends [name, spec, text].
QUOTES_ENV = "TOY_QUOTES_FILE"

_values: dict[str, object] = {}


class Quoted(str):
    """A quoted value's text. Its ``repr`` is the text itself, so a front end's ``text/plain`` shows no quotes."""

    def __repr__(self) -> str:
        return str(self)


def glue(name: str, value, display: bool = False):
    """Record ``value`` under ``name`` for the prose to quote; with ``display=True`` also return it (shown)."""
    if not isinstance(name, str) or not re.fullmatch(_NAME, name):
        raise checks.fail("name", "a Python identifier (letters, digits, underscores)", name)
    _values[name] = value
    return value if display else None


def quote(name: str, spec: str = "") -> Quoted:
    """The text of the value recorded under ``name``, formatted with the format specification ``spec``."""
    if not isinstance(spec, str):
        raise checks.fail("spec", "a format specification such as '.3f' (text)", spec)
    if not isinstance(name, str) or name not in _values:
        known = ", ".join(sorted(_values)) or "none yet"
        raise checks.fail("name", f"a name glued before this cell (glued so far: {known}; run the code cell that "
                          "calls toy.glue(name, ...) first)", name)
    value = _values[name]
    try:
        text = Quoted(format(value, spec))
    except (ValueError, TypeError) as err:
        raise ValueError(f"cannot format {name!r} = {value!r} with spec {spec!r}: {err}") from None
    record = os.environ.get(QUOTES_ENV)
    if record:  # the book's build keeps every quote, in order, for the notebook's Colab edition
        with open(record, "a", encoding="utf-8") as f:
            f.write(json.dumps([name, spec, str(text)]) + "\n")
    return text


def quoted_names(markdown: str) -> list[tuple[str, str]]:
    """The (name, spec) of every ``{eval}`toy.quote(...)` `` in a Markdown text, in order."""
    if not isinstance(markdown, str):
        raise checks.fail("markdown", "text", markdown)
    return [(m.group(1), m.group(2) or "")
            for m in re.finditer(rf'\{{eval\}}`toy\.quote\("({_NAME})"(?:, "([^"\\]*)")?\)`', markdown)]
