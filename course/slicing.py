"""Which of a notebook's code the grader runs for one exercise: everything the student wrote, and of the book's own
cells only what that needs.

The grader runs what the student ran. Of the code cells up to the last one that checks the exercise:

- **every cell the student wrote or changed runs whole**, as written (IPython magics such as ``%%time`` included;
  the worker runs them with IPython): helpers, constants, top-level calls that fill a table or set a global, imports,
  decorators, whatever the cell holds. Nothing the student wrote is dropped.
- **the book's own cells the student left unchanged** (the cells of the student edition, compared without trailing
  spaces) are the only ones the grader may skip: it knows them, and most of them draw figures. Of those it keeps the
  top-level statements that define, or change, a name the student's cells or the graded function read, found by
  following names outwards until nothing new is needed.

A statement that stores into ``x`` (``x = ...``, ``x[k] = ...``, ``x.a = ...``, ``for x in``, ``def x``,
``import x``) or calls a method on ``x`` (``x.append(...)``, when ``x`` is not a module) "changes" ``x``. A name a
kept statement reads is then needed too. Over-including costs time only.
"""

from __future__ import annotations

import ast
import re
import symtable
import threading
from dataclasses import dataclass


@dataclass
class Statement:
    """One top-level statement of a code cell: its cell (1-based among code cells) and its source."""

    cell: int
    source: str
    changes: frozenset
    reads: frozenset


def _python(source: str) -> str:
    """A code cell as plain Python: IPython's magics and shell escapes become ``get_ipython()`` calls."""
    try:
        from IPython.core.inputtransformer2 import TransformerManager
    except ImportError:  # pragma: no cover - IPython is in requirements.txt
        return source
    try:
        return TransformerManager().transform_cell(source)
    except Exception:  # noqa: BLE001 - a cell IPython cannot read is left for ast to refuse
        return source


class _Names(ast.NodeVisitor):
    """The names a statement changes (its function bodies aside), and, roughly, the names it reads (used where
    ``_global_reads`` cannot tell)."""

    def __init__(self):
        self.changes, self.reads, self.imports, self.depth = set(), set(), set(), 0

    def visit_Name(self, node):
        (self.reads if isinstance(node.ctx, ast.Load) else self.changes if self.depth == 0 else set()).add(node.id)

    def _base(self, node):
        while isinstance(node, (ast.Attribute, ast.Subscript, ast.Starred)):
            node = node.value
        return node.id if isinstance(node, ast.Name) else None

    def _store_target(self, node):
        if isinstance(node, (ast.Attribute, ast.Subscript)) and not isinstance(node.ctx, ast.Load) and self.depth == 0:
            base = self._base(node)
            if base:
                self.changes.add(base)

    def visit_Attribute(self, node):
        self._store_target(node)
        self.generic_visit(node)

    def visit_Subscript(self, node):
        self._store_target(node)
        self.generic_visit(node)

    def visit_Call(self, node):
        if self.depth == 0 and isinstance(node.func, ast.Attribute):
            base = self._base(node.func.value)
            if base:
                self.changes.add(("call", base))  # resolved once imports are known
        self.generic_visit(node)

    def _define(self, node):
        if self.depth == 0:
            self.changes.add(node.name)
        for decorator in node.decorator_list:
            self.visit(decorator)
        if not isinstance(node, ast.ClassDef):
            for default in node.args.defaults + [d for d in node.args.kw_defaults if d]:
                self.visit(default)
        self.depth += 1
        for child in node.body if isinstance(node, ast.ClassDef) else [node.args, *node.body]:
            self.visit(child)
        if isinstance(node, ast.ClassDef):
            for base in node.bases + [k.value for k in node.keywords]:
                self.visit(base)
        self.depth -= 1

    visit_FunctionDef = visit_AsyncFunctionDef = visit_ClassDef = _define

    def visit_Lambda(self, node):
        self.depth += 1
        self.generic_visit(node)
        self.depth -= 1

    def visit_Import(self, node):
        for alias in node.names:
            name = alias.asname or alias.name.split(".")[0]
            self.changes.add(name)
            self.imports.add(name)

    def visit_ImportFrom(self, node):
        for alias in node.names:
            if alias.name == "*":
                self.changes.add("*")
            else:
                self.changes.add(alias.asname or alias.name)

    def visit_Global(self, node):
        self.changes.update(node.names)


def _global_reads(source: str) -> set[str]:
    """The module-level names a statement reads, in its own code or in the functions, classes and comprehensions
    it defines (Python's own symbol tables: a function's parameters and locals are not module names)."""
    found = set()
    tables = [symtable.symtable(source, "<cell>", "exec")]
    while tables:
        table = tables.pop()
        top = table.get_type() == "module"
        for symbol in table.get_symbols():
            if symbol.is_referenced() and (top or symbol.is_global()):
                found.add(symbol.get_name())
        tables += table.get_children()
    return found


# CPython 3.11 keeps one count of the depth of the syntax tree it is converting per interpreter, so two threads
# parsing at once can fail with "SystemError: AST constructor recursion depth mismatch" (python/cpython#106905; it
# happened in CI). The grader grades submissions in threads: every parse, unparse, symbol table and compile of
# source in course/ holds this lock.
AST_LOCK = threading.RLock()


def statements(cells: list[str]) -> tuple[list[Statement], list[str]]:
    """Every top-level statement of the code cells, in order, and the cells that could not be read."""
    with AST_LOCK:
        return _statements(cells)


def _statements(cells: list[str]) -> tuple[list[Statement], list[str]]:
    found, problems, modules = [], [], set()
    raw = []
    for i, source in enumerate(cells, start=1):
        try:
            tree = ast.parse(_python(source))
        except (SyntaxError, ValueError, RecursionError, MemoryError) as err:
            problems.append(f"Code cell {i} is not valid Python ({type(err).__name__}), so it was not run")
            continue
        for node in tree.body:
            names = _Names()
            try:
                names.visit(node)
            except RecursionError:
                problems.append(f"Code cell {i} is nested too deeply to read, so it was not run")
                break
            modules |= names.imports
            raw.append((i, node, names))
    for i, node, names in raw:
        changes = {c[1] for c in names.changes if isinstance(c, tuple) and c[1] not in modules}
        changes |= {c for c in names.changes if isinstance(c, str)}
        try:
            source = ast.unparse(node)
            reads = _global_reads(source)
        except (ValueError, RecursionError, SyntaxError):  # e.g. a return outside a function: runs, fails
            reads = names.reads
            source = source if "source" in locals() else ""
        found.append(Statement(i, source, frozenset(changes), frozenset(reads)))
    return found, problems


def normal(source: str) -> str:
    """A cell's source compared with the book's: trailing spaces and blank lines at either end do not count."""
    return "\n".join(line.rstrip() for line in source.strip("\n").splitlines()).strip()


def _check_pattern(exercise: str) -> re.Pattern:
    return re.compile(r"check\(\s*[\"']" + re.escape(exercise) + r"[\"']")


def last_check(cells: list[str], exercise: str) -> int:
    """The index of the last code cell that checks ``exercise`` (the last cell if none does)."""
    pattern = _check_pattern(exercise)
    found = [i for i, source in enumerate(cells) if pattern.search(source)]
    return found[-1] if found else len(cells) - 1


IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def student_reads(source: str) -> set[str]:
    """The module-level names a cell of the student's may read: its own reads, the names in the code its magics
    run (``%%time``'s body, ``%timeit``'s statement), and, for a cell Python cannot read, every identifier in it."""
    with AST_LOCK:
        python = _python(source)
        try:
            tree = ast.parse(python)
            reads = _global_reads(python)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return set(IDENTIFIER.findall(source))
        for node in ast.walk(tree):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                    and node.func.attr.startswith("run_") and node.func.attr.endswith("magic")):
                for arg in node.args:
                    if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                        reads |= set(IDENTIFIER.findall(arg.value))
    return reads


def cells_to_run(cells: list[str], exercise: str, function: str, book_cells: frozenset = frozenset()
                 ) -> tuple[list[tuple[int, str]], list[int], list[str]]:
    """What the grader runs for ``exercise`` of a notebook whose code cells are ``cells``.

    Returns ``[(cell, source), ...]`` in notebook order (``cell`` 1-based among code cells; the student's cells
    whole, the book's unchanged cells as their needed statements), the numbers of the student's own cells among
    them, and the cells that could not be read. ``book_cells``: the ``normal`` sources of the book's cells."""
    upto = last_check(cells, exercise)
    mine = [i for i in range(upto + 1) if normal(cells[i]) not in book_cells]
    needed = {function}
    for i in mine:
        needed |= student_reads(cells[i])
    book = [i for i in range(upto + 1) if i not in set(mine)]
    found, problems = statements([cells[i] for i in book])
    keep, grew = set(), True
    while grew:
        grew = False
        for k, s in enumerate(found):
            if k not in keep and ("*" in s.changes or s.changes & needed):
                keep.add(k)
                needed |= s.reads
                grew = True
    chunks: dict[int, list[str]] = {}
    for k, s in enumerate(found):
        if k in keep:
            chunks.setdefault(book[s.cell - 1], []).append(s.source)
    for i in mine:
        chunks[i] = [cells[i]]
    problems = [re.sub(r"Code cell (\d+)", lambda m: f"Code cell {book[int(m.group(1)) - 1] + 1}", p)
                for p in problems]
    run = [(i + 1, "\n".join(chunks[i])) for i in sorted(chunks)]
    return run, [i + 1 for i in mine], problems
