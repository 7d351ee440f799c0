"""The numbers behind a figure, as tables a reader can read: what "Numbers behind the figure" shows.

A figure's **table plan** (``table_plan``) says, for each trace, whether and how it appears: its row name (plain
text, the legend's markup turned into text), which attribute holds its values (``y``, or ``x`` for horizontal bars,
or ``customdata``), the format its hover shows them in (``%{y:.4f}`` → ``.4f``), how a column is labelled (the
category, or the x value in the hover's format), the caption (the value axis's title, with its unit) and the corner
cell (the category axis's title). A figure overrides any of it per trace with ``trace.meta = {"table": {...}}``:

* ``skip``: leave the trace out (decoration: a guide line, the edges of a tree);
* ``name``, ``caption``, ``corner``: the row name, the table's caption, the corner cell;
* ``values``: the attribute whose values the row shows (``customdata`` for a tree's leaves, say);
* ``label``: a column label template over ``{x}`` and ``{y}``;
* ``points``: the x values a reader would ask about, the columns a long curve is sampled at;
* ``marks``: the trace marks points on curves (a selected τ, β = 1 and 0.1): no row of its own, its x values
  become columns of the curves on its x axis;
* ``error``: the name of a row for the trace's error bars (``± 1 sd``); without it, error bars get none;
* ``header``: the column labels, in place of the trace's x values (a line drawn at one level: "every step");
* ``columns``: the indices of the points shown (a curve over a grid of β: every third β);
* ``x_row``: the name of a row of the trace's x values, in the hover's format (a curve whose x is a result: KL);
* ``below``: values under this bound read "< bound" (a log axis's floor, not a value: "< 0.0001", not "1e-05").

Columns with the same label and the same values in every row (a curve padded by repeating its last point, a level
drawn from one end to the other) are shown once.

A trace whose points all share one x (a marker at the selected setting) marks that x by default.

``figure_tables(fig, plan)`` then groups the rows that share their column labels and value axis into one table,
samples a long curve (more than ``MAX_COLUMNS`` points) at its ``points`` (or ``SAMPLES`` evenly spaced points, the
ends included) and at the marked x values, and formats every value as the hover does. The page script
(``book/_static/toy/toy-explorer.js``) builds the same tables from the same plan, which the payload carries.
"""

from __future__ import annotations

import html
import math
import re

import numpy as np

MAX_COLUMNS = 9
"""The most columns a table has: a longer curve is sampled."""
SAMPLES = 6
"""Evenly spaced points (by index, the ends included) a long curve without ``points`` is sampled at."""
SMALL_DIGITS = 2
"""Significant figures of a value that its format would show as zeros."""
ROUNDOFF = 1e-12
"""Below this size a value is floating-point round-off of an exact 0 (3.4e-33), and reads as 0 in its format."""
DEFAULT_FORMAT = ".4g"
"""The format of values whose trace's hover names none."""

_FIELD = re.compile(r"%\{(\w+)(?:\.\w+)*(?:\[\d+\])?(?::([^}]*))?\}")
_SPEC = re.compile(r",?(?:\.\d+)?[fge%]?")
_PLAIN, _SUPERSCRIPT = "0123456789+-−()n", "⁰¹²³⁴⁵⁶⁷⁸⁹⁺⁻⁻⁽⁾ⁿ"  # (plain strings: the sandbox mirrors toy's constants)


def plain_text(text) -> str:
    """Plotly's markup as plain text: ``<br>`` a space, ``<sub>ref</sub>`` "_ref", ``<sup>2</sup>`` "²" (or "^(…)"
    when a character has no superscript), other tags dropped, entities decoded."""
    text = re.sub(r"\s*<br\s*/?>\s*", " ", str(text or ""))
    text = re.sub(r"<sub>(.*?)</sub>", lambda m: "_" + m.group(1), text)

    def sup(m):
        inner = m.group(1)
        plain = all(c in _PLAIN for c in inner)
        return inner.translate(str.maketrans(_PLAIN, _SUPERSCRIPT)) if plain else f"^({inner})"

    text = re.sub(r"<sup>(.*?)</sup>", sup, text)
    return html.unescape(re.sub(r"<[^>]*>", "", text)).strip()


def hover_formats(template) -> dict[str, str]:
    """The formats a hovertemplate gives its fields: ``"K = %{x}: %{y:.3f}"`` → {"x": "", "y": ".3f"}; d3's "~" is
    dropped, and a format outside Python's and d3's shared subset (``,.Nf``, ``.Ng``, ``.N%``, ``.Ne``) is ignored."""
    out = {}
    for name, spec in _FIELD.findall(str(template or "")):
        spec = (spec or "").replace("~", "")
        out.setdefault(name, spec if _SPEC.fullmatch(spec) else "")
    return out


def format_value(value: float, spec: str) -> str:
    """``value`` in the hover's ``spec`` (Python's format mini-language, which shares d3's for these specs; a bare
    type or none gives 6 significant digits, as ``{:g}``). A value that is not 0 but would read as zeros ("0.0000"
    for 2.3e-05) is given in ``SMALL_DIGITS`` significant figures instead: a table never shows a small value as 0
    (round-off of an exact 0, under ``ROUNDOFF``, aside)."""
    value = float(value)
    if not math.isfinite(value):
        return str(value)
    if spec in ("", ","):
        spec = spec + "g"
    if spec[-1] not in "fge%":
        spec += "g"
    out = format(value, spec)
    if abs(value) >= ROUNDOFF and not re.search(r"[1-9]", out.split("e")[0]):
        return format(value * 100, f".{SMALL_DIGITS}g") + "%" if spec[-1] == "%" else format(value, f".{SMALL_DIGITS}g")
    return out


def _number(v) -> float | None:
    try:
        x = float(v)
    except (TypeError, ValueError):
        return None
    return x if math.isfinite(x) else None


def _axis_title(layout: dict, key: str) -> str:
    ax = layout.get(key) or {}
    title = ax.get("title")
    return plain_text(title.get("text") if isinstance(title, dict) else title)


def _subplot_titles(layout: dict) -> dict[str, str]:
    """Subplot titles (annotations over a subplot) by the x axis key of the subplot under them."""
    out = {}
    anns = [a for a in layout.get("annotations") or [] if a.get("xref") == "paper" and a.get("yref") == "paper"
            and not a.get("showarrow", True) and a.get("text")]
    for key, ax in layout.items():
        if not re.fullmatch(r"xaxis\d*", key) or not isinstance(ax, dict):
            continue
        y_key = "yaxis" + (ax.get("anchor") or "y")[1:]
        ydom = (layout.get(y_key) or {}).get("domain") or [0, 1]
        xdom = ax.get("domain") or [0, 1]
        for a in anns:
            if xdom[0] - 1e-6 <= a.get("x", 0.5) <= xdom[1] + 1e-6 and abs(a.get("y", 1) - ydom[1]) < 0.08:
                out[key] = plain_text(a["text"])
    return out


def table_plan(fig) -> list[dict | None]:
    """Each trace's part in the tables (None: none), from the figure and its traces' ``meta["table"]``."""
    layout = fig["layout"] if isinstance(fig, dict) else fig.layout.to_plotly_json()
    data = fig["data"] if isinstance(fig, dict) else [t.to_plotly_json() for t in fig.data]
    titles = _subplot_titles(layout)
    plan = []
    for t in data:
        own = ((t.get("meta") or {}) if isinstance(t.get("meta"), dict) else {}).get("table", {})
        if own.get("skip") or t.get("visible") is False:
            plan.append(None)
            continue
        horizontal = t.get("orientation") == "h"
        value_axis = (t.get("xaxis") or "x") if horizontal else (t.get("yaxis") or "y")
        cat_axis = (t.get("yaxis") or "y") if horizontal else (t.get("xaxis") or "x")
        value_key = ("xaxis" if horizontal else "yaxis") + value_axis[1:]
        cat_key = ("yaxis" if horizontal else "xaxis") + cat_axis[1:]
        values = own.get("values") or ("x" if horizontal else "y")
        cat = "y" if horizontal else "x"
        formats = hover_formats(t.get("hovertemplate"))
        xs = t.get(cat)
        single = xs is not None and len(xs) > 0 and len({str(v) for v in np.ravel(np.asarray(xs, dtype=object))}) == 1
        marks = own.get("marks", single and t.get("mode", "") != "lines" and len(xs) <= 2)
        caption = own.get("caption") or _axis_title(layout, value_key)
        panel = titles.get("xaxis" + (t.get("xaxis") or "x")[1:])
        if panel and "caption" not in own and panel.lower() not in caption.lower():
            caption = f"{panel}: {caption}" if caption else panel
        plan.append({
            "name": plain_text(own.get("name") or t.get("name") or ""),
            "values": values, "cat": cat, "axis": value_axis, "cat_axis": cat_axis,
            "format": formats.get(values, DEFAULT_FORMAT) or DEFAULT_FORMAT,
            "cat_format": formats.get(cat, ""),
            "label": own.get("label"),
            "caption": caption,
            "corner": own.get("corner", _axis_title(layout, cat_key)),
            "points": own.get("points"),
            "marks": bool(marks),
            "error": own.get("error"),
            "header": own.get("header"),
            "columns": own.get("columns"),
            "x_row": own.get("x_row"),
            "below": own.get("below"),
        })
    return plan


def _get(trace: dict, path: str):
    node = trace
    for part in path.split("."):
        node = (node or {}).get(part) if isinstance(node, dict) else getattr(node, part, None)
    return node


def _label(plan: dict, x, y) -> str:
    if plan["label"]:
        return plan["label"].replace("{x}", _cell(x, plan["cat_format"])).replace("{y}", _cell(y, ""))
    return _cell(x, plan["cat_format"])


def _cell(v, spec: str) -> str:
    x = _number(v)
    return plain_text(v) if x is None or isinstance(v, str) and spec == "" else format_value(x, spec)


def _columns(n: int, xs: list, points, marked: list[float]) -> list[int]:
    """The columns a table of ``n`` shows: all when few, else the ``points`` (or evenly spaced ones) and the marked x
    values, each the nearest of ``xs`` (numbers, or None when the columns are categories)."""
    if n <= MAX_COLUMNS:
        return list(range(n))
    numeric = all(x is not None for x in xs)

    def nearest(p):
        return min(range(n), key=lambda i: (abs(xs[i] - p), i))

    if points and numeric:
        keep = {nearest(p) for p in points}
    else:
        keep = {round(i * (n - 1) / (SAMPLES - 1)) for i in range(SAMPLES)}
    if numeric:
        keep |= {nearest(m) for m in marked}
    return sorted(keep)


def _shown(value: float, spec) -> str:
    """A cell: ``value`` in the format ``spec``, or (``spec`` a pair: format, bound) "< bound" when under the bound."""
    spec, below = spec if isinstance(spec, tuple) else (spec, None)
    return f"< {below:g}" if below is not None and value < below else format_value(value, spec)


def figure_tables(fig, plan: list[dict | None] | None = None) -> list[dict]:
    """The tables of ``fig`` (a plotly figure or its dict) by ``plan`` (``table_plan(fig)`` when None): each a dict
    with ``caption``, ``corner``, ``header`` (column labels) and ``rows`` ([name, cell text, ...])."""
    plan = table_plan(fig) if plan is None else plan
    data = fig["data"] if isinstance(fig, dict) else list(fig.data)
    data = [t if isinstance(t, dict) else t.to_plotly_json() for t in data]
    marked: dict[str, list[float]] = {}
    groups: dict[tuple, dict] = {}
    for t, p in zip(data, plan, strict=True):
        if p is None:
            continue
        values = _get(t, p["values"])
        if values is None:
            continue
        values = [float(v) for v in np.ravel(np.asarray(values, dtype=float))]
        cats = t.get(p["cat"])
        cats = list(np.ravel(np.asarray(cats, dtype=object))) if cats is not None else list(range(len(values)))
        if p["marks"]:
            marked.setdefault(p["cat_axis"], []).extend(x for x in map(_number, cats) if x is not None)
            continue
        ys = t.get("y") if p["label"] else None
        ys = list(np.ravel(np.asarray(ys, dtype=object))) if ys is not None else [None] * len(cats)
        labels = [_label(p, x, y) for x, y in zip(cats, ys, strict=False)]
        if p.get("header"):
            labels = [str(h) for h in p["header"]][: len(values)]
        key = (tuple(labels), p["axis"], p["caption"])
        g = groups.setdefault(key, {"caption": p["caption"], "corner": p["corner"], "labels": labels,
                                    "xs": [_number(c) if not isinstance(c, str) else None for c in cats],
                                    "points": p["points"], "cat_axis": p["cat_axis"], "rows": [],
                                    "columns": p["columns"]})
        g["points"] = g["points"] or p["points"]
        if p["x_row"]:
            g["rows"].append((p["x_row"], [_number(c) for c in cats], p["cat_format"] or DEFAULT_FORMAT))
        g["rows"].append((p["name"], values, (p["format"], p.get("below"))))
        error = _get(t, "error_y.array")
        if p["error"] and error is not None:
            g["rows"].append((p["error"], [float(v) for v in np.ravel(np.asarray(error, dtype=float))], p["format"]))
    tables = []
    for g in groups.values():
        seen, distinct = set(), []
        for i, label in enumerate(g["labels"] if not g["columns"] else []):
            cells = (label,) + tuple(_shown(vals[i], spec) for _n, vals, spec in g["rows"])
            if cells not in seen:
                seen.add(cells)
                distinct.append(i)
        if not g["columns"]:
            g["labels"], g["xs"] = [g["labels"][i] for i in distinct], [g["xs"][i] for i in distinct]
            g["rows"] = [(name, [vals[i] for i in distinct], spec) for name, vals, spec in g["rows"]]
        if g["columns"]:  # chosen points: no duplicates to drop, the marked x values added
            cols = sorted(set(g["columns"]) | {min(range(len(g["xs"])), key=lambda i: (abs(g["xs"][i] - m), i))
                                               for m in marked.get(g["cat_axis"], []) if g["xs"][0] is not None})
        else:
            cols = _columns(len(g["labels"]), g["xs"], g["points"], marked.get(g["cat_axis"], []))
        tables.append({
            "caption": g["caption"], "corner": g["corner"], "header": [g["labels"][i] for i in cols],
            "rows": [[name] + [_shown(vals[i], spec) for i in cols] for name, vals, spec in g["rows"]],
        })
    return tables


def tables_html(tables: list[dict]) -> str:
    """``figure_tables`` as HTML tables."""
    parts = []
    for tab in tables:
        corner = f'<th scope="col">{html.escape(tab["corner"])}</th>' if tab["corner"] else "<td></td>"
        head = "".join(f'<th scope="col">{html.escape(c)}</th>' for c in tab["header"])
        body = "".join("<tr>" + f'<th scope="row">{html.escape(r[0])}</th>'
                       + "".join(f"<td>{html.escape(v)}</td>" for v in r[1:]) + "</tr>" for r in tab["rows"])
        caption = f"<caption>{html.escape(tab['caption'])}</caption>" if tab["caption"] else ""
        parts.append(f'<table class="toy-explorer-numbers">{caption}<thead><tr>{corner}{head}</tr></thead>'
                     f"<tbody>{body}</tbody></table>")
    return "".join(parts)
