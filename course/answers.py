"""Marks for the exercises without a function to write: the answers a student gave to an exercise's questions
(``toy.exercises.questions``), and the written answers that an instructor marks by rubric.

No student code runs here. A question's answer is what the student's ``answer("ex-...", value)`` call says:

* ``value`` written as numbers, options, or arithmetic on them (``4/25``, ``[0, 0, 0, 0.16]``, ``math.log(5)``,
  or a name given such a value earlier in the notebook) is read from the source, as it stands now;
* otherwise (a value the student's code computed), the record that the call left in the cell's output when the
  student ran it (``toy_answer``): the feedback says so, since an answer changed after its last run is not seen.

Each answer is judged by ``toy.exercises.questions.check_answer`` for the student's own instance: the one drawn from
the name the submission was handed in under (``<class>/<student>/...``), whatever name the notebook set with
``toy.exercises.student`` (a difference is said in the feedback).

A written answer is the Markdown cell the student edition holds for it (metadata ``toy_written``: the exercise).
"""

from __future__ import annotations

import ast
import math
import re
from dataclasses import dataclass

from toy.exercises.questions import ANSWER_KEY, QUESTIONS, RUBRICS, as_value, check_answer

from .slicing import AST_LOCK

MATH = {"sqrt": math.sqrt, "log": math.log, "exp": math.exp, "log2": math.log2, "log10": math.log10,
        "log1p": math.log1p, "expm1": math.expm1}
CONSTANTS = {"pi": math.pi, "e": math.e}
MODULES = ("math", "np", "numpy")
MAX_POWER = 1e6
PLACEHOLDER = re.compile(r"^\*\*Your written answer to .*write it in this cell\.[ \t]*$", re.M)
"""The line the student edition's written-answer cell starts with (not part of the answer)."""


class NotLiteral(ValueError):
    pass


def value_of(node: ast.AST, names: dict):
    """The value of an expression made of numbers, text, lists, arithmetic, ``math``'s functions and names bound
    earlier to such values; NotLiteral for anything else (nothing is executed)."""
    if isinstance(node, ast.Constant) and (isinstance(node.value, (int, float, str)) or node.value is Ellipsis):
        return node.value
    if isinstance(node, (ast.List, ast.Tuple)):
        return [value_of(e, names) for e in node.elts]
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        v = _number(value_of(node.operand, names))
        return -v if isinstance(node.op, ast.USub) else v
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub, ast.Mult, ast.Div, ast.Pow)):
        a, b = value_of(node.left, names), value_of(node.right, names)
        if isinstance(node.op, ast.Add) and isinstance(a, list) and isinstance(b, list) and len(a) + len(b) <= 64:
            return a + b
        if isinstance(node.op, ast.Mult) and (isinstance(a, list) or isinstance(b, list)):  # [0.2] * 4
            items, times = (a, b) if isinstance(a, list) else (b, a)
            if isinstance(times, int) and not isinstance(times, bool) and 0 <= times <= 64:
                return items * times
            raise NotLiteral(ast.unparse(node)[:60])
        a, b = _number(a), _number(b)
        try:
            if isinstance(node.op, ast.Pow):
                if abs(b) > 64 or abs(a) > MAX_POWER:
                    raise NotLiteral("a power too large to read")
                return a ** b
            return {ast.Add: a.__add__, ast.Sub: a.__sub__, ast.Mult: a.__mul__, ast.Div: a.__truediv__}[
                type(node.op)](b)
        except (ZeroDivisionError, OverflowError) as err:
            raise NotLiteral(str(err)) from None
    if isinstance(node, ast.Name) and node.id in names:
        return names[node.id]
    if isinstance(node, ast.Name) and node.id in CONSTANTS:
        return CONSTANTS[node.id]
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in MODULES \
            and node.attr in CONSTANTS:
        return CONSTANTS[node.attr]
    if isinstance(node, ast.Call) and not node.keywords and len(node.args) == 1:
        f = node.func
        name = f.id if isinstance(f, ast.Name) else (
            f.attr if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) and f.value.id in MODULES
            else None)
        if name in MATH:
            try:
                return MATH[name](_number(value_of(node.args[0], names)))
            except (ValueError, OverflowError) as err:
                raise NotLiteral(str(err)) from None
        if name in ("float", "int", "list", "tuple"):
            return value_of(node.args[0], names)
    raise NotLiteral(ast.unparse(node)[:60])


def _number(v):
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise NotLiteral(f"{v!r:.40} is not a number")
    return v


@dataclass
class Given:
    """One question's answer in a submission: ``value`` (None: not readable), where it was read, and a note."""

    question: str
    value: object
    source: str  # "code", "output" or "" (not readable)
    note: str = ""


def _parse(source: str) -> ast.Module | None:
    lines = [line for line in source.split("\n") if not line.lstrip().startswith(("%", "!"))]  # magics
    try:
        return ast.parse("\n".join(lines))
    except SyntaxError:
        return None


def _question_of(call: ast.Call) -> str | None:
    if call.args and isinstance(call.args[0], ast.Constant) and call.args[0].value in QUESTIONS:
        return call.args[0].value
    return None


SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)


def _in_order(node: ast.AST):
    """The nodes under ``node`` in source order, not entering function, lambda or class bodies (code that does not
    run where it stands)."""
    for child in ast.iter_child_nodes(node):
        if isinstance(child, SCOPES):
            continue
        yield child
        yield from _in_order(child)


def _answer_names(tree: ast.Module, known: set[str]) -> set[str]:
    """The names by which this code calls ``toy.exercises.answer``: ``answer`` imported from ``toy.exercises``
    (under its name or an alias), besides those already ``known``."""
    names = set(known)
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module in ("toy.exercises", "toy.exercises.questions"):
            names |= {a.asname or a.name for a in node.names if a.name in ("answer", "check_answer")}
    return names


def _calls_answer(call: ast.Call, names: set[str]) -> bool:
    f = call.func
    if isinstance(f, ast.Name):
        return f.id in names
    return isinstance(f, ast.Attribute) and f.attr == "answer"  # toy.exercises.answer, exercises.answer, ...


def read_answers(notebook: dict) -> tuple[dict[str, Given], str | None]:
    """{question: Given} from a submitted notebook, and the name the notebook gave ``toy.exercises.student``, if
    any. Cells are read in order, and each cell's statements in source order; the last answer to a question counts,
    with the value its names had at that point (a name rebound in any way but ``name = <literal>`` is unknown)."""
    with AST_LOCK:  # the grader's threads parse one at a time (see course/slicing.py)
        return _read_answers(notebook)


def _read_answers(notebook: dict) -> tuple[dict[str, Given], str | None]:
    names: dict = {}
    found: dict[str, Given] = {}
    declared, callers = None, set()
    for cell in notebook.get("cells", []):
        if not isinstance(cell, dict) or cell.get("cell_type") != "code":
            continue
        source = cell.get("source", "")
        source = "".join(source) if isinstance(source, list) else source
        tree = _parse(source) if isinstance(source, str) else None
        if tree is None:
            continue
        records = {}
        for output in cell.get("outputs", []) if isinstance(cell.get("outputs"), list) else []:
            meta = output.get("metadata", {}) if isinstance(output, dict) else {}
            record = meta.get(ANSWER_KEY) if isinstance(meta, dict) else None
            if isinstance(record, dict) and record.get("question") in QUESTIONS:
                records[record["question"]] = record
        callers = _answer_names(tree, callers)
        bound = set()  # the targets of the assignments read below
        for node in _in_order(tree):
            if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)) and id(node) not in bound:
                names.pop(node.id, None)  # rebound (a loop, +=, a with, a walrus...): unknown from here on
            if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
                bound.add(id(node.targets[0]))
                try:
                    value = value_of(node.value, names)
                except NotLiteral:
                    value = None
                names.pop(node.targets[0].id, None)
                if value is not None:
                    names[node.targets[0].id] = value
                continue
            if not isinstance(node, ast.Call):
                continue
            f = node.func
            fname = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""
            if fname == "student" and node.args and isinstance(node.args[0], ast.Constant) \
                    and isinstance(node.args[0].value, str):
                declared = node.args[0].value.strip()
            name = _question_of(node)
            if name is None or len(node.args) < 2 or not _calls_answer(node, callers | {"answer"}):
                continue
            try:
                found[name] = Given(name, value_of(node.args[1], names), "code")
            except NotLiteral as err:
                record = records.get(name)
                value = as_value(QUESTIONS[name], record.get("given")) if record is not None else None
                if value is not None:
                    found[name] = Given(name, value, "output", "read from the cell's output, as it was "
                                        "when you last ran it (the answer is computed, not written as numbers)")
                else:
                    found[name] = Given(name, None, "", f"the answer ({err}) is computed by code and the cell has "
                                        "no output recording it: run the cell before handing in, or write the "
                                        "answer as numbers")
    return found, declared


def mark_answers(notebook: dict, student: str, exercises: list[str]) -> list[dict]:
    """One row per question of ``exercises``: status, mark (its points if right), message."""
    found, declared = read_answers(notebook)
    rows = []
    for q in (q for q in QUESTIONS.values() if q.exercise in exercises):
        given = found.get(q.name)
        if given is None:
            rows.append({"question": q.name, "status": "not answered", "mark": 0, "points": q.points,
                         "message": "no answer call for this question"})
            continue
        if given.value is None:
            rows.append({"question": q.name, "status": "not readable", "mark": 0, "points": q.points,
                         "message": given.note})
            continue
        result = check_answer(q.name, given.value, student)
        note = [given.note] if given.note else []
        if declared and declared != student and q.draw is not None:
            note.append(f"your notebook set the name {declared!r}; answers are marked for the instance of "
                        f"{student!r}, the name you handed in under")
        message = result.message + (f" ({'; '.join(note)})" if note else "")
        rows.append({"question": q.name, "status": result.status, "mark": q.points if result.right else 0,
                     "points": q.points, "message": message})
    return rows


def written_answers(notebook: dict) -> dict[str, str]:
    """{exercise: the student's written answer}, from the Markdown cells the student edition holds for them."""
    texts: dict[str, list[str]] = {}
    for cell in notebook.get("cells", []):
        if not isinstance(cell, dict) or cell.get("cell_type") != "markdown":
            continue
        meta = cell.get("metadata") if isinstance(cell.get("metadata"), dict) else {}
        exercise = meta.get("toy_written")
        if isinstance(exercise, str) and exercise in RUBRICS:
            source = cell.get("source", "")
            source = "".join(source) if isinstance(source, list) else str(source)
            texts.setdefault(exercise, []).append(PLACEHOLDER.sub("", source).strip())
    return {ex: "\n\n".join(p for p in parts if p) for ex, parts in texts.items()}
