"""The ``toy`` a sandboxed submission imports for one exercise: the book's package without what the exercise forbids.

An exercise that asks for V(s) by backward induction forbids ``toy.value`` (``toy.exercises.registry.forbid``).
Inside the sandbox that function is not there to call or to read: in the copy of ``toy`` the sandbox gets, the body
of each forbidden function (and of every method of a forbidden class) is replaced by one line that raises
``ForbiddenReference``, and its docstring and source are gone. A call to it, however it is reached (by a renamed
alias, a recompiled copy of its source, another process, another ``toy`` function that calls it), raises, and the
grader marks the exercise "forbidden".

``restricted_toy(exercise)`` returns the copy as the bytes of a zip file, with each module compiled (Python
imports from a zip on ``sys.path``), together with the worker that runs in the sandbox; the sandbox mounts it
read-only from memory, so nothing is written to disk.
"""

from __future__ import annotations

import ast
import functools
import importlib.util
import io
import marshal
import zipfile
from pathlib import Path

import toy
from toy.exercises import EXERCISES
from toy.exercises.forbidden import code_keys

from .slicing import AST_LOCK

TOY = Path(toy.__file__).parent
ARCHIVE = "/opt/grader/sandbox.zip"  # where the sandbox mounts it
RAISE = "raise __import__('toybook_forbidden').ForbiddenReference({reference!r})"
FORBIDDEN_MODULE = (
    '"""What a part of toy that an exercise forbids raises in the sandbox."""\n\n\n'
    "class ForbiddenReference(RuntimeError):\n"
    '    """Raised by a part of toy this exercise forbids: the grader took its code out."""\n')
HERE = Path(__file__).parent


class _Strip(ast.NodeTransformer):
    """Replace the bodies of the functions whose qualified names are in ``targets`` ({qualname: reference})."""

    def __init__(self, targets: dict[str, str]):
        self.targets, self.scope, self.found = targets, [], set()

    def _visit_def(self, node):
        qualname = ".".join([*self.scope, node.name])
        self.scope += [node.name, "<locals>"] if not isinstance(node, ast.ClassDef) else [node.name]
        self.generic_visit(node)
        del self.scope[-2 if not isinstance(node, ast.ClassDef) else -1:]
        if qualname in self.targets and not isinstance(node, ast.ClassDef):
            node.body = [ast.parse(RAISE.format(reference=self.targets[qualname])).body[0]]
            self.found.add(qualname)
        return node

    visit_FunctionDef = visit_AsyncFunctionDef = visit_ClassDef = _visit_def


def strip_source(source: str, targets: dict[str, str], where: str = "<toy>") -> str:
    """``source`` with each target function's body replaced by a raise; ValueError if a target is not there."""
    with AST_LOCK:  # see course.slicing.AST_LOCK
        tree = ast.parse(source)
        stripper = _Strip(targets)
        tree = stripper.visit(tree)
        missing = set(targets) - stripper.found
        if missing:
            raise ValueError(f"{where}: no function {', '.join(sorted(missing))} to take out")
        return ast.unparse(ast.fix_missing_locations(tree)) + "\n"


def _pyc(source: str, path: str) -> bytes:
    """An unchecked hash-based .pyc of ``source`` (zipimport loads it without compiling again)."""
    with AST_LOCK:
        code = compile(source, path, "exec", dont_inherit=True, optimize=0)
    flags = 0b01  # hash-based, not checked against the source
    return (importlib.util.MAGIC_NUMBER + flags.to_bytes(4, "little")
            + importlib.util.source_hash(source.encode()) + marshal.dumps(code))


@functools.cache
def restricted_toy(exercise: str | None) -> bytes:
    """The sandbox's zip for ``exercise`` (None: nothing forbidden), as bytes: ``toy`` without the forbidden code,
    ``toybook_forbidden.py``, and the worker with its protocol (``worker.py``, ``protocol.py``)."""
    ex = EXERCISES[exercise] if exercise else None
    keys = code_keys(ex.forbidden.references) if ex and ex.forbidden else {}
    by_file: dict[str, dict[str, str]] = {}
    for (filename, qualname), reference in keys.items():
        by_file.setdefault(str(Path(filename).resolve()), {})[qualname] = reference
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_STORED) as archive:
        for name, source in (("toybook_forbidden.py", FORBIDDEN_MODULE),
                             ("worker.py", (HERE / "worker.py").read_text()),
                             ("protocol.py", (HERE / "protocol.py").read_text())):
            archive.writestr(name, source)
            archive.writestr(name[:-3] + ".pyc", _pyc(source, f"{ARCHIVE}/{name}"))
        for path in sorted(TOY.rglob("*")):
            if path.is_dir() or "__pycache__" in path.parts or path.suffix == ".pyc":
                continue
            name = "toy/" + path.relative_to(TOY).as_posix()
            if path.suffix != ".py":
                archive.writestr(name, path.read_bytes())
                continue
            source = path.read_text()
            targets = by_file.pop(str(path.resolve()), None)
            if targets:
                source = strip_source(source, targets, name)
            archive.writestr(name, source)
            archive.writestr(name[:-3] + ".pyc", _pyc(source, f"{ARCHIVE}/{name}"))
    if by_file:
        raise ValueError(f"forbidden code outside the toy package: {sorted(by_file)}")
    return buffer.getvalue()
