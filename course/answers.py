"""Marks for the exercises without a function to write: the answers a student gave to an exercise's questions
(``toy.exercises.questions``), and the written answers that an instructor marks by rubric.

No student code runs here. A question's answer is what the student's ``answer("ex-...", value)`` call says:

* ``value`` written as numbers, options, or arithmetic on them with Python's rules (``4/25``, ``1 - 0.3125``,
  ``[0, 0, 0, 0.16]``, ``math.log(5)``, or a name given such a value earlier in the notebook) is read from the
  source, in order;
* the record that ``answer`` displays in the cell's output when run (``toy_answer``: the value it judged) is read
  too, whether the call was the cell's last line, printed, followed by other statements or one of several, and
  whatever name or loop made it (``check = toy.exercises.answer``; a loop over the questions): of every call that
  ran, the last run decides (the cells' execution counts order them, not where the cells stand). A value
  the student's code computed is read from it (the feedback says so); where it and the source disagree (a name
  corrected in a cell below, then the cell run again), the record of the last run counts, and the feedback says so.

An answer that cannot be read or judged (a number beyond 1e300, a list of more than ``MAX_ITEMS`` numbers, an
expression nested thousands deep) costs that question only, and its row says why. Answers are read and judged in a
child process of the grader's (``bounded``: a fork with an address-space limit and a clock), so that no answer can
take the grader's memory or time: a notebook that still exhausts them costs its own questions, said in their rows.
Each answer is judged by ``toy.exercises.questions.check_answer`` for the
student's own instance: the one drawn from the course's secret and the name the submission was handed in under
(``<class>/<student>/...``, NFC), whatever name the notebook set with ``toy.exercises.student`` (a different name,
a different key or none is said in the feedback). A practice question is judged and said, for no points.

A written answer is the Markdown cell the student edition holds for it (metadata ``toy_written``: the exercise).
"""

from __future__ import annotations

import ast
import json
import math
import operator
import os
import pickle
import re
import resource
import selectors
import signal
import time
import warnings
from dataclasses import dataclass

from toy.exercises.questions import ANSWER_KEY, QUESTIONS, RUBRICS, as_value, check_answer, normal_name, normalised

from .slicing import AST_LOCK

MATH = {"sqrt": math.sqrt, "log": math.log, "exp": math.exp, "log2": math.log2, "log10": math.log10,
        "log1p": math.log1p, "expm1": math.expm1}
CONSTANTS = {"pi": math.pi, "e": math.e}
MODULES = ("math", "np", "numpy")
MAX_POWER = 1e6
MAX_NUMBER = 1e300  # a number an answer may be: beyond it, float() overflows (999999 ** 64 is an int of 384 digits)
MAX_ITEMS = 4096
"""The most numbers (and lists) a value read from an answer may hold, nested lists counted whole: after every
operation (``[0.1] * 64 * 64 * 64`` stops at the third step, before its list is made)."""
READ_SECONDS = 60.0
READ_MEMORY_MB = 512
"""``bounded``'s limits on reading one notebook's answers: wall time, and address space beyond the grader's own."""
OPERATORS = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv,
             ast.Pow: operator.pow}
"""Arithmetic as Python does it (``1 - 0.3125`` is int.__sub__'s NotImplemented, then float.__rsub__)."""
PLACEHOLDER = re.compile(r"^\*\*Your written answer to .*write it in this cell\.[ \t]*$", re.M)
"""The line the student edition's written-answer cell starts with (not part of the answer)."""


class NotLiteral(ValueError):
    pass


def value_of(node: ast.AST, names: dict):
    """The value of an expression (``_value_of``); an expression too deeply nested to read (5,000 minus signs) is
    NotLiteral too, never a RecursionError."""
    try:
        return _value_of(node, names)
    except RecursionError:
        raise NotLiteral("an expression nested too deeply to read") from None
    except MemoryError:
        raise NotLiteral("a value too large to read") from None


def size(value) -> int:
    """How many numbers and lists ``value`` holds, nested lists counted whole (a list of 64 copies of one list of 64
    numbers holds 64 * 65 + 1)."""
    return 1 + sum(size(v) for v in value) if isinstance(value, list) else 1


def _bounded_size(value):
    if size(value) > MAX_ITEMS:
        raise NotLiteral(f"a list of more than {MAX_ITEMS:,} numbers: too large to be an answer")
    return value


def _value_of(node: ast.AST, names: dict):
    """The value of an expression made of numbers, text, lists, arithmetic, ``math``'s functions and names bound
    earlier to such values; NotLiteral for anything else (nothing is executed)."""
    if isinstance(node, ast.Constant) and (isinstance(node.value, (int, float, str)) or node.value is Ellipsis):
        return node.value
    if isinstance(node, (ast.List, ast.Tuple)):
        if len(node.elts) > MAX_ITEMS:
            raise NotLiteral(f"a list of more than {MAX_ITEMS:,} numbers: too large to be an answer")
        return _bounded_size([_value_of(e, names) for e in node.elts])
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        v = _number(_value_of(node.operand, names))
        return -v if isinstance(node.op, ast.USub) else v
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub, ast.Mult, ast.Div, ast.Pow)):
        a, b = _value_of(node.left, names), _value_of(node.right, names)
        if isinstance(node.op, ast.Add) and isinstance(a, list) and isinstance(b, list):
            if size(a) + size(b) - 1 > MAX_ITEMS:
                raise NotLiteral(f"a list of more than {MAX_ITEMS:,} numbers: too large to be an answer")
            return a + b
        if isinstance(node.op, ast.Mult) and (isinstance(a, list) or isinstance(b, list)):  # [0.2] * 4
            items, times = (a, b) if isinstance(a, list) else (b, a)
            if isinstance(times, int) and not isinstance(times, bool) and 0 <= times <= 64:
                if (size(items) - 1) * times + 1 > MAX_ITEMS:  # said before the list is made
                    raise NotLiteral(f"a list of more than {MAX_ITEMS:,} numbers: too large to be an answer")
                return items * times
            raise NotLiteral(ast.unparse(node)[:60])
        a, b = _number(a), _number(b)
        if isinstance(node.op, ast.Pow) and (abs(b) > 64 or abs(a) > MAX_POWER):
            raise NotLiteral("a power too large to read")
        try:
            return _number(OPERATORS[type(node.op)](a, b))
        except (ZeroDivisionError, OverflowError, TypeError) as err:
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
                return _number(MATH[name](_number(_value_of(node.args[0], names))))
            except (ValueError, OverflowError) as err:
                raise NotLiteral(str(err)) from None
        if name in ("float", "int"):  # as Python does: int(0.9) is 0
            value = _value_of(node.args[0], names)
            if not isinstance(value, (int, float, str)) or isinstance(value, bool) or len(str(value)) > 400:
                raise NotLiteral(f"{name}() of {str(value)[:40]}")
            try:
                return _number({"float": float, "int": int}[name](value))
            except (ValueError, OverflowError) as err:
                raise NotLiteral(str(err)[:60]) from None
        if name in ("list", "tuple"):
            value = _value_of(node.args[0], names)
            if not isinstance(value, list):
                raise NotLiteral(f"{name}() of {str(value)[:40]}")
            return list(value)
    raise NotLiteral(ast.unparse(node)[:60])


def _number(v):
    """``v`` if it is a number an answer can be (a real number within ``MAX_NUMBER``), else NotLiteral."""
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise NotLiteral(f"{str(v)[:40]} is not a number")
    if isinstance(v, int) and v.bit_length() > 1100 or abs(v) > MAX_NUMBER:  # bit_length first: no huge str()
        raise NotLiteral("a number too large to be an answer (beyond 1e300)")
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


NO_NAME = ""
"""``read_answers``'s declared name when the notebook calls ``toy.exercises.student(None)``: a forgotten name."""
QUESTION_IN_TEXT = re.compile(r"[\"'](ex-\d-\d-[a-z0-9-]+)[\"']")


@dataclass
class Declared:
    """What the notebook said of its student: the name (``NO_NAME`` for ``student(None)``, None if it never
    called ``student``) and the key given with it."""

    name: str | None = None
    key: str | None = None


def read_answers(notebook: dict) -> tuple[dict[str, Given], str | None]:
    """{question: Given} from a submitted notebook, and the name the notebook gave ``toy.exercises.student``
    (``NO_NAME`` for ``student(None)``; None if it never called it). Cells are read in order, and each cell's
    statements in source order; the last answer to a question counts, with the value its names had at that point
    (a name rebound in any way but ``name = <literal>`` is unknown). Where the cell's output records the value its
    last run judged and the source now reads otherwise (a name corrected in a later cell, then this cell run
    again), the record counts, and the note says so."""
    found, declared = read_answers_and_key(notebook)
    return found, declared.name


def read_answers_and_key(notebook: dict) -> tuple[dict[str, Given], Declared]:
    """``read_answers``, with the key the notebook gave ``student`` too."""
    with AST_LOCK:  # the grader's threads parse one at a time (see course/slicing.py)
        return _read_answers(notebook)


def _records(cell: dict) -> dict:
    """{question: the record of its last ``answer`` call} from a code cell's outputs."""
    records = {}
    for output in cell.get("outputs", []) if isinstance(cell.get("outputs"), list) else []:
        meta = output.get("metadata", {}) if isinstance(output, dict) else {}
        record = meta.get(ANSWER_KEY) if isinstance(meta, dict) else None
        if isinstance(record, dict) and isinstance(record.get("question"), str) and record["question"] in QUESTIONS:
            records[record["question"]] = record
    return records


def _recorded(name: str, records: dict):
    """The value the cell's last run judged for question ``name``, as ``answer`` takes it; None if none."""
    record = records.get(name)
    try:
        return as_value(QUESTIONS[name], record.get("given")) if record is not None else None
    except (TypeError, ValueError, OverflowError, RecursionError):
        return None


def _same(name: str, a, b) -> bool:
    q = QUESTIONS[name]
    x, y = normalised(q, a), normalised(q, b)
    return x is not None and y is not None and json.dumps(x) == json.dumps(y)


def _shown(value) -> str:
    return json.dumps(value, ensure_ascii=False)[:80] if not isinstance(value, str) else repr(value)[:80]


def _given(name: str, node: ast.Call, names: dict, records: dict) -> Given:
    """The answer one ``answer`` call gives, from its source and its cell's record of the last run."""
    recorded = _recorded(name, records)
    try:
        value = value_of(node.args[1], names)
    except NotLiteral as err:
        if recorded is not None:
            return Given(name, recorded, "output", "read from the cell's output, as it was when you last ran it (the "
                         "answer is computed, not written as numbers)")
        return Given(name, None, "", f"the answer ({err}) is computed by code and the cell has no output recording "
                     "it: run the cell before handing in, or write the answer as numbers")
    if recorded is not None and not _same(name, value, recorded):
        return Given(name, recorded, "output", f"the cell's last run judged {_shown(recorded)}, while its code, "
                     f"read in order, gives {_shown(value)}: the last run's record counts")
    return Given(name, value, "code")


def _unreadable_cell(source: str, records: dict, found: dict, why: str) -> None:
    """Answers in a cell the grader cannot parse: each from its record if the cell has one, else not readable."""
    for name in dict.fromkeys(QUESTION_IN_TEXT.findall(source)):
        if name not in QUESTIONS:
            continue
        recorded = _recorded(name, records)
        found[name] = (Given(name, recorded, "output", f"read from the cell's output ({why})") if recorded is not None
                       else Given(name, None, "", f"the cell could not be read ({why})"))


def _read_answers(notebook: dict) -> tuple[dict[str, Given], Declared]:
    names: dict = {}
    found: dict[str, Given] = {}
    declared, callers = Declared(), set()
    last_run: dict[str, tuple] = {}  # question -> ((execution count, cell index), its record's value)
    for index, cell in enumerate(notebook.get("cells", [])):
        if not isinstance(cell, dict) or cell.get("cell_type") != "code":
            continue
        records = _records(cell)
        count = cell.get("execution_count")
        when = (count if isinstance(count, int) and not isinstance(count, bool) else -1, index)
        for name in records:
            value = _recorded(name, records)
            if value is not None and (name not in last_run or when > last_run[name][0]):
                last_run[name] = (when, value)
        source = cell.get("source", "")
        source = "".join(source) if isinstance(source, list) and all(isinstance(x, str) for x in source) else source
        if not isinstance(source, str):
            continue
        try:
            tree = _parse(source)
        except (RecursionError, MemoryError):
            _unreadable_cell(source, records, found, "nested too deeply to parse")
            continue
        if tree is None:
            continue
        try:
            callers = _answer_names(tree, callers)
            _read_cell(tree, names, records, found, declared, callers)
        except RecursionError:
            _unreadable_cell(source, records, found, "nested too deeply to read")
    for name, (_, value) in last_run.items():  # every call that ran, whatever name or loop made it: the last decides
        given = found.get(name)
        if given is not None and given.value is not None and _same(name, given.value, value):
            continue
        if given is not None and given.value is not None and given.source == "code":
            note = (f"your last run of an answer call judged {_shown(value)}, while the code, read in order, gives "
                    f"{_shown(given.value)}: the last run's record counts")
        else:
            note = "read from the record your last run of an answer call left in its cell's output"
        found[name] = Given(name, value, "output", note)
    return found, declared


def _read_cell(tree: ast.Module, names: dict, records: dict, found: dict, declared: Declared,
               callers: set) -> None:
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
        if fname == "student" and node.args and isinstance(node.args[0], ast.Constant):
            said = node.args[0].value
            if said is None:
                declared.name, declared.key = NO_NAME, None
            elif isinstance(said, str):
                declared.name, declared.key = normal_name(said), _key_of(node)
        name = _question_of(node)
        if name is None or len(node.args) < 2 or not _calls_answer(node, callers | {"answer"}):
            continue
        found[name] = _given(name, node, names, records)


def _key_of(call: ast.Call) -> str | None:
    args = call.args[1:2] + [k.value for k in call.keywords if k.arg == "key"]
    for arg in args:
        if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
            return arg.value.strip()
    return None


class TooCostly(RuntimeError):
    """Reading a notebook's answers took more memory or time than ``bounded`` allows."""


def _mapped() -> int:
    """The bytes of address space this process maps now (VmSize)."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmSize:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return 0


def bounded(fn, *args, seconds: float = READ_SECONDS, memory_mb: int = READ_MEMORY_MB):
    """``fn(*args)`` run in a child process forked from this one, whose address space may grow by ``memory_mb``
    beyond what this process maps now (RLIMIT_AS: an allocation beyond it is a MemoryError there, never the OOM
    killer here), killed after ``seconds``; its value comes back pickled. TooCostly says which limit it met; an
    exception in ``fn`` is raised here as TooCostly too, with its name. The fork is made holding ``AST_LOCK``, so
    the child never waits on a lock another of the grader's threads held."""
    with AST_LOCK:
        reader, writer = os.pipe()
        limit = _mapped() + memory_mb * 1024 * 1024
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)  # fork with threads: the child only reads and judges
            pid = os.fork()
        if pid == 0:  # pragma: no cover - the child
            code = 0
            try:
                os.close(reader)
                resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
                try:
                    out = ("value", fn(*args))
                except MemoryError:
                    out = ("memory", None)
                except BaseException as err:  # noqa: BLE001 - said to the parent
                    out = ("error", f"{type(err).__name__}: {str(err)[:200]}")
                data = pickle.dumps(out)
                view = memoryview(data)
                while view:
                    view = view[os.write(writer, view):]
            except BaseException:  # noqa: BLE001
                code = 1
            finally:
                os._exit(code)
    os.close(writer)
    chunks, deadline, late = [], time.monotonic() + seconds, False
    with selectors.DefaultSelector() as sel:
        sel.register(reader, selectors.EVENT_READ)
        while True:
            left = deadline - time.monotonic()
            if left <= 0 or not sel.select(left):
                late = True
                break
            chunk = os.read(reader, 1 << 20)
            if not chunk:
                break
            chunks.append(chunk)
    os.close(reader)
    if late:
        os.kill(pid, signal.SIGKILL)
    _, status = os.waitpid(pid, 0)
    if late:
        raise TooCostly(f"reading the answers took longer than {seconds:g} s")
    try:
        kind, value = pickle.loads(b"".join(chunks))
    except Exception:  # noqa: BLE001 - the child died before it said anything
        raise TooCostly(f"reading the answers needed more than {memory_mb} MB (the reader ended with status "
                        f"{status})") from None
    if kind == "memory":
        raise TooCostly(f"reading the answers needed more than {memory_mb} MB")
    if kind == "error":
        raise TooCostly(f"reading the answers failed ({value})")
    return value


def mark_answers(notebook: dict, student: str, exercises: list[str], key: str | None = None) -> list[dict]:
    """One row per question of ``exercises``: status, mark (its points if right), message. Each answer is judged
    for ``student``'s instance (drawn from ``key``, the student's course key, when the course has a secret); an
    answer that cannot be read or judged costs that question only, and its row says why. A practice question is
    judged and said, for 0 points. Read and judged in a child process (``bounded``): a notebook whose answers take
    more memory or time than that allows gets a row for each of its questions that says so."""
    try:
        return bounded(_mark_answers, notebook, student, exercises, key, seconds=READ_SECONDS,
                       memory_mb=READ_MEMORY_MB)
    except TooCostly as err:
        return [{"question": q.name, "status": "not readable", "mark": 0, "points": 0 if q.practice else q.points,
                 "message": f"the answers of this notebook could not be read: {err}"}
                for q in QUESTIONS.values() if q.exercise in exercises]


def _mark_answers(notebook: dict, student: str, exercises: list[str], key: str | None = None) -> list[dict]:
    student = normal_name(student)
    found, declared = read_answers_and_key(notebook)
    rows = []
    for q in (q for q in QUESTIONS.values() if q.exercise in exercises):
        points = 0 if q.practice else q.points
        given = found.get(q.name)
        if given is None:
            rows.append({"question": q.name, "status": "not answered", "mark": 0, "points": points,
                         "message": "no answer call for this question"})
            continue
        if given.value is None:
            rows.append({"question": q.name, "status": "not readable", "mark": 0, "points": points,
                         "message": given.note})
            continue
        try:
            result = check_answer(q.name, given.value, student, key)
        except (OverflowError, ValueError, TypeError, RecursionError, MemoryError) as err:
            rows.append({"question": q.name, "status": "not readable", "mark": 0, "points": points,
                         "message": f"the answer could not be judged ({type(err).__name__}): write it as a number"})
            continue
        note = [given.note] if given.note else []
        if q.draw is not None:
            note += _name_notes(declared, student, key)
        if q.practice:
            note.append("a practice question: checked, not graded")
        message = result.message + (f" ({'; '.join(note)})" if note else "")
        rows.append({"question": q.name, "status": result.status, "mark": points if result.right else 0,
                     "points": points, "message": message})
    return rows


def _name_notes(declared: Declared, student: str, key: str | None) -> list[str]:
    if declared.name == NO_NAME:
        return ["your notebook set no name (toy.exercises.student(None)), so it checked your answers at the book's "
                f"setting, not your own; they are marked for the instance of {student!r}, the name you handed in "
                "under"]
    if declared.name and declared.name != student:
        return [f"your notebook set the name {declared.name!r}; answers are marked for the instance of "
                f"{student!r}, the name you handed in under"]
    if declared.name and key and declared.key != key:
        return ["your notebook's key is not the one your course gave you, so it checked another instance; answers "
                f"are marked for the instance of {student!r}"]
    return []


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
