"""Which of a notebook's code the grader runs for one exercise: what the student's function needs, no figures.

The grader does not run a whole notebook to mark an exercise. From the code cells up to the one that checks the
exercise it keeps the top-level statements that define, or change, a name the function needs (its own ``def``,
the helpers and constants it uses, their imports, a statement that fills a table it reads), found by following
names from the function outwards until nothing new is needed. Figures, explorers, training runs and prints that
no needed name depends on are left out, which is most of a chapter's running time.

A statement that stores into ``x`` (``x = ...``, ``x[k] = ...``, ``x.a = ...``, ``for x in``, ``def x``,
``import x``) or calls a method on ``x`` (``x.append(...)``, when ``x`` is not a module) "changes" ``x``. A name a
statement reads is then needed too. Over-including costs time only; the other way, a function that is missing
from the slice, the grader falls back to running every code cell up to the check (``needed_code(..., everything=
True)``).
"""

from __future__ import annotations

import ast
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


def needed_code(cells: list[str], function: str, everything: bool = False) -> tuple[list[tuple[int, str]], list[str]]:
    """[(cell, source), ...] of the statements ``function`` needs, in notebook order, and the cells that could
    not be read. ``everything``: every statement (a notebook run top to bottom, as the fallback)."""
    found, problems = statements(cells)
    if everything:
        return [(s.cell, s.source) for s in found], problems
    needed, keep = {function}, set()
    grew = True
    while grew:
        grew = False
        for k, s in enumerate(found):
            if k not in keep and ("*" in s.changes or s.changes & needed):
                keep.add(k)
                needed |= s.reads
                grew = True
    return [(s.cell, s.source) for k, s in enumerate(found) if k in keep], problems
