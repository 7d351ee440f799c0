"""Copy detection, MOSS-style, calibrated on independent honest answers so that a flag means something.

**The code compared** for one exercise is, of the student's own cells, the graded function and what it uses
(``code_for``: its last definition, the helpers, constants and tables it reads; not the other exercises' answers,
the stub it replaced, the checks or scratch code). IPython's magics are made plain Python first (``%%time``'s body
is kept, ``%time x = f()`` becomes ``x = f()``, other magics and shell escapes are dropped).

**Fingerprints.** The syntax tree is walked with every name and constant replaced by its kind (attribute names
kept; imports, docstrings and ``pass`` left out; ``a, b = x, y`` read as two assignments), each statement tagged
with the kind of block it stands in, and the statements of every block taken in a canonical order (sorted by their
own kinds) rather than as written. The k-grams of that walk (``K`` nodes) are the fingerprint; each k-gram
remembers the source lines it came from. Renaming, reformatting, comments, moving helpers and swapping statements
change nothing.

**Calibration.** ``course/calibration/<exercise>/`` holds independent honest answers to each checked exercise,
written the different ways students write them. What such answers share is not evidence of copying: a k-gram found
in ``OBVIOUS_AT`` or more of them is "the obvious way to write it" and is discounted, as are the k-grams of the
stub handed out and, between classmates, those shared by more than ``COMMON`` of the class (and more than 3
students). Two answers' **score** is the Jaccard index of what is left of their fingerprints; their **evidence** is
how many of those distinctive k-grams they share. Against the book's solution the same discount applies (a natural
recursion shares the obvious parts with the book's solution; a copy shares its particular parts too), except the
class-common one (a class that copied the book wholesale is still flagged).

**Thresholds**, per exercise, from the corpus itself (``calibrate``: computed once per process, cached, from the
shipped corpus and the book's stub and solution the grader is given). Every pair of corpus answers is scored with
the discount computed from the *other* answers (an answer is never discounted against itself), and so is every
answer against the book's solution. The threshold is ``MARGIN`` above the highest of those honest scores, at least
``FLOOR`` and at most ``CEILING``; the minimum evidence is ``MIN_SHARED`` or, when the ceiling leaves an honest
pair within ``MARGIN`` of the threshold, ``EVIDENCE_FACTOR`` times what such a pair shares, plus one. A pair at or
above the threshold with at least the minimum evidence is flagged for the instructor, never marked down. An
exercise without a corpus gets ``FLOOR`` and ``MIN_SHARED`` and only the stub discounted.
``benchmarks/bench_copies.py`` measures false flags (leave-one-out over the corpus, and the honest styles of
``tests/hostile_class.py``) and the detection of disguised copies; ``tests/test_copies.py`` asserts them.
"""

from __future__ import annotations

import ast
import functools
import hashlib
import itertools
import math
import re
from dataclasses import dataclass, field
from pathlib import Path

from .slicing import AST_LOCK

K = 6  # syntax-tree nodes per k-gram (see the note below)
OBVIOUS_AT = 2  # a k-gram in this many of the exercise's calibration answers is the obvious way to write it
COMMON = 0.4  # between classmates, k-grams in more than this share of the submissions (and more than 3) are ignored
MARGIN = 0.15  # the threshold is at least this far above every honest score of the corpus
FLOOR, CEILING = 0.8, 0.9  # the threshold's range
MIN_SHARED = 12  # fewer distinctive k-grams in common than this is too little to call a copy
EVIDENCE_FACTOR = 1.5  # ... and at least 1.5 times what an honest pair near the threshold shares
SAME_AS_BOOK = 0.95  # all but the book's own code (nothing discounted but the stub): flagged however obvious it is,
MIN_BOOK_GRAMS = 40  # when the book's solution has this many k-grams (no honest answer of the corpus is above 0.83)
# ... and has at least the exercise's minimum evidence of its own beyond what independent answers share: where the
# book's solution is *all* natural (4.1's value: nothing of it is left once the corpus's shared k-grams are taken
# out), an answer the same token for token is what an honest student writes, and a flag could mean nothing
BOOK = "the book's solution"
CALIBRATION = Path(__file__).resolve().parent / "calibration"
# cell magics whose body is Python (the grader's IPython runs it); any other cell magic's body is not fingerprinted
PYTHON_CELL_MAGICS = {"time", "timeit", "capture", "prun", "debug"}
STATEMENT_LINE_MAGICS = {"time", "timeit", "prun", "debug"}  # line magics whose argument is a Python statement
# K: 4 to 8 were measured (benchmarks/bench_copies.py). None flags an honest pair; 4 and 5 catch fewer disguised
# copies (86%, 94%); 7 and 8 catch 98% but leave the book's four-line loop for 4.1-response-probability with more than
# MIN_SHARED distinctive k-grams, so two students who both wrote that loop would be flagged.
# 6 catches 99% (benchmarks/bench_copies.py).


# -- fingerprints ---------------------------------------------------------------------------------------------------
_OPTIONS = re.compile(r"^(?:-[A-Za-z]+(?:\s*\d+)?\s+)*")
_ASSIGNED_MAGIC = re.compile(r"^(\s*[\w.,\[\]() ]+?=\s*)([%!])(\w*)\s*(.*)$")
_HELP = re.compile(r"^\s*(?:\?{1,2}[\w.]+|[\w.]+\?{1,2})\s*$")


def _plain_line(line: str) -> str:
    """One line of a cell as plain Python on the same line number: a timing magic's statement, else ``pass``."""
    if not any(c in line for c in "%!?"):
        return line
    stripped = line.lstrip()
    indent = line[:len(line) - len(stripped)]
    if stripped.startswith(("%", "!")):
        name, _, rest = stripped.lstrip("%").partition(" ")
        if stripped.startswith("%") and name in STATEMENT_LINE_MAGICS and rest.strip():
            return indent + _OPTIONS.sub("", rest.strip())
        return indent + "pass"
    if _HELP.match(line):  # obj? and obj?? ask for help
        return indent + "pass"
    assigned = _ASSIGNED_MAGIC.match(line)
    if assigned:
        target, kind, name, rest = assigned.groups()
        if kind == "%" and name in STATEMENT_LINE_MAGICS and rest.strip():
            return target + _OPTIONS.sub("", rest.strip())
        return target + "None"
    return line


def plain_python(source: str) -> str:
    """A notebook cell as plain Python with the same line numbers (see the module's docstring)."""
    lines = source.split("\n")
    first = next((i for i, line in enumerate(lines) if line.strip()), None)
    if first is not None and lines[first].lstrip().startswith("%%"):
        name = lines[first].strip()[2:].split(" ")[0]
        if name not in PYTHON_CELL_MAGICS:
            return ""
        lines[first] = ""
    return "\n".join(_plain_line(line) for line in lines)


def parse(source: str) -> ast.Module | None:
    """``source``'s syntax tree, magics made plain (line numbers are ``source``'s), or None if it does not parse."""
    for attempt in (plain_python, _ipython):
        try:
            with AST_LOCK:  # see course.slicing.AST_LOCK
                return ast.parse(attempt(source))
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            continue
    return None


def _ipython(source: str) -> str:
    from .slicing import _python

    return _python(source)


def _skipped(node) -> bool:
    return isinstance(node, (ast.Import, ast.ImportFrom, ast.Pass, ast.Load, ast.Store, ast.Del)) or (
        isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant))


def _kind(node: ast.AST) -> str:
    if isinstance(node, (ast.Name, ast.arg)):
        return "name"
    if isinstance(node, ast.Constant):
        return type(node.value).__name__
    if isinstance(node, ast.Attribute):
        return "." + node.attr
    return type(node).__name__


_BLOCK = (ast.stmt, ast.ExceptHandler, ast.match_case)


def _canonical(stmt: ast.AST, where: str) -> list[tuple[str, int]]:
    """(kind, line) of a statement's nodes in source order (parent before child), the statement's own kind tagged
    with the block it stands in, and the statements of each of its blocks sorted by their kinds: a canonical order,
    so that reordering statements (helpers moved, independent lines swapped) changes nothing. Expressions are walked
    without recursion; only blocks recurse (Python allows 100 levels)."""
    line = getattr(stmt, "lineno", None) or getattr(getattr(stmt, "pattern", None), "lineno", 1)
    out = [(f"{where}>{_kind(stmt)}", line)]
    stack: list = [(stmt, line)]
    while stack:
        node, line = stack.pop()
        if isinstance(node, list):  # a block, its statements' kinds already made and sorted
            for run in node:
                out += run
            continue
        line = getattr(node, "lineno", line)
        if node is not stmt:
            if _skipped(node):
                continue
            out.append((_kind(node), line))
        for name, value in reversed(list(ast.iter_fields(node))):
            if isinstance(value, list) and value and isinstance(value[0], _BLOCK):
                runs = [_canonical(child, f"{type(node).__name__}.{name}") for child in value if not _skipped(child)]
                stack.append((sorted(runs, key=lambda run: [kind for kind, _ in run]), line))
            elif isinstance(value, list):
                stack += [(v, line) for v in reversed(value) if isinstance(v, ast.AST)]
            elif isinstance(value, ast.AST):
                stack.append((value, line))
    return out


class _Unpack(ast.NodeTransformer):
    """``a, b = x, y`` as ``a = x`` and ``b = y`` (one statement or two is a matter of style)."""

    def visit_Assign(self, node):
        self.generic_visit(node)
        target, value = node.targets[0], node.value
        if (len(node.targets) == 1 and isinstance(target, (ast.Tuple, ast.List)) and isinstance(value, type(target))
                and len(target.elts) == len(value.elts)
                and not any(isinstance(e, ast.Starred) for e in target.elts + value.elts)):
            pairs = zip(target.elts, value.elts, strict=True)
            return [ast.copy_location(ast.Assign(targets=[t], value=v), node) for t, v in pairs]
        return node


def _tokens(tree: ast.AST | str) -> list[tuple[str, int]]:
    """(kind, line) of every node of ``tree`` (or of the source it parses) in canonical order (``_canonical``),
    multiple assignments unpacked (``_Unpack``)."""
    if isinstance(tree, str):
        tree = parse(tree)
    if tree is not None:
        tree = _Unpack().visit(tree)
    runs = [_canonical(stmt, "Module") for stmt in getattr(tree, "body", []) if not _skipped(stmt)]
    return [token for run in sorted(runs, key=lambda run: [kind for kind, _ in run]) for token in run]


@functools.lru_cache(maxsize=4096)
def grams(source: str) -> dict[str, frozenset]:
    """{hashed k-gram: the lines of ``source`` it covers, over all its occurrences} (empty if it does not parse).
    Cached: do not change the dict returned."""
    tree = parse(source)
    if tree is None:
        return {}
    try:
        tokens = _tokens(tree)
    except RecursionError:
        return {}
    found: dict[str, set] = {}
    for i in range(max(len(tokens) - K + 1, 1 if tokens else 0)):
        window = tokens[i:i + K]
        key = hashlib.blake2b(" ".join(kind for kind, _ in window).encode(), digest_size=8).hexdigest()
        found.setdefault(key, set()).update(line for _, line in window)
    return {key: frozenset(lines) for key, lines in found.items()}


@functools.lru_cache(maxsize=4096)
def fingerprint(source: str) -> frozenset:
    """The set of hashed k-grams of ``source``'s normalised syntax tree (empty if it does not parse)."""
    return frozenset(grams(source))


def jaccard(a: frozenset, b: frozenset) -> float:
    return len(a & b) / len(a | b) if a or b else 0.0


def _base_name(node) -> str | None:
    while isinstance(node, (ast.Attribute, ast.Subscript, ast.Starred)):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None


def _binds_and_reads(node: ast.stmt) -> tuple[set, set, set, set]:
    """The module-level names a top-level statement binds or changes, every name it reads (over-including a local
    that shadows a global costs only an extra statement), the functions it calls by name, and the names whose
    method it calls at top level (``TABLE.update(...)``: a change, unless the name is a module)."""
    binds, reads, calls, methods = set(), set(), set(), set()
    for sub in ast.walk(node):
        if isinstance(sub, ast.Name):
            (reads if isinstance(sub.ctx, ast.Load) else binds).add(sub.id)
        elif isinstance(sub, (ast.Attribute, ast.Subscript)) and not isinstance(sub.ctx, ast.Load):
            binds.add(_base_name(sub))
        elif isinstance(sub, ast.Global):
            binds.update(sub.names)
        elif isinstance(sub, ast.Call) and isinstance(sub.func, ast.Name):
            calls.add(sub.func.id)
        elif isinstance(sub, ast.AugAssign):  # x += 1 reads x too
            reads.add(_base_name(sub.target))
        elif isinstance(sub, (ast.Import, ast.ImportFrom)):  # under an if or a try
            binds |= {a.asname or a.name.split(".")[0] for a in sub.names}
        elif isinstance(sub, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and sub is not node:
            binds.add(sub.name)  # a def under an if or a try (one inside a def is local: replaced below)
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        # what a body assigns is local, but for the globals it declares (a call binds those: see code_for)
        declared = {n for sub in ast.walk(node) if isinstance(sub, ast.Global) for n in sub.names}
        binds, calls = {node.name} | declared, set()
    elif isinstance(node, (ast.Import, ast.ImportFrom)):
        binds = {a.asname or a.name.split(".")[0] for a in node.names}
    elif isinstance(node, ast.Expr) and isinstance(node.value, ast.Call) and isinstance(node.value.func, ast.Attribute):
        methods.add(_base_name(node.value.func.value))
    for names in (binds, reads, methods):
        names.discard(None)
    return binds, reads, calls, methods


def code_for(cells: list[str], function: str) -> str:
    """Of a student's code ``cells``, the top-level statements ``function`` needs: its last definition, the
    helpers, constants and tables it reads (their last definitions, any statement that changes them, and any call
    of the student's own function that fills them: ``add_tokens(TOKENS)``, ``configure()`` setting a global),
    followed outwards, as written (magics included), in order. All the cells if no statement binds ``function``."""
    found = []  # [binds, reads, calls, definition, source of the statement]
    modules = set()
    for source in cells:
        tree = parse(source)
        if tree is None:
            continue
        lines = source.split("\n")
        for node in tree.body:
            first = min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", [])])
            binds, reads, calls, methods = _binds_and_reads(node)
            definition = node.name if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) else ""
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                modules |= binds
            found.append([binds, reads, calls, definition, "\n".join(lines[first - 1:node.end_lineno]), methods])
    last_def = {entry[3]: k for k, entry in enumerate(found) if entry[3]}
    for entry in found:
        entry[0] |= entry[5] - modules
        for name in entry[2] & set(last_def):  # a call of the student's own function binds what that function
            entry[0] |= found[last_def[name]][0] - {name}  # declares global, and may fill the names it is given
            entry[0] |= {n for n in entry[1] if n != name and n not in last_def and n not in modules}
    if not any(function in entry[0] for entry in found):
        return "\n\n".join(cells)
    needed, keep, grew = {function}, set(), True
    while grew:
        grew = False
        for k, (binds, reads, _, definition, _, _) in enumerate(found):
            if k in keep or not binds & needed or definition and last_def[definition] != k:
                continue  # (a definition replaced later: the stub, an earlier attempt)
            keep.add(k)
            needed |= reads
            grew = True
    return "\n\n".join(found[k][4] for k in sorted(keep))


def checked_function(cells: list[str], exercise: str) -> str | None:
    """The name of the function the last ``check("<exercise>", fn)`` call in ``cells`` passes, if any."""
    name = None
    for source in cells:
        tree = parse(source) if exercise in source else None
        for node in ast.walk(tree) if tree else ():
            if (isinstance(node, ast.Call) and getattr(node.func, "id", getattr(node.func, "attr", "")) == "check"
                    and node.args and isinstance(node.args[0], ast.Constant) and node.args[0].value == exercise):
                fn = node.args[1] if len(node.args) > 1 else next(
                    (k.value for k in node.keywords if k.arg == "fn"), None)
                if isinstance(fn, ast.Name):
                    name = fn.id
    return name


# -- calibration ----------------------------------------------------------------------------------------------------
def exercises() -> list[str]:
    """The exercises that have a calibration corpus."""
    return sorted(p.name for p in CALIBRATION.iterdir() if p.is_dir() and any(p.glob("*.py"))) \
        if CALIBRATION.is_dir() else []


@functools.cache
def corpus(exercise: str) -> dict[str, str]:
    """{style: source} of ``exercise``'s independent honest answers (empty if it has none)."""
    folder = CALIBRATION / exercise
    if "/" in exercise or exercise.startswith(".") or not folder.is_dir():
        return {}
    return {path.stem: path.read_text() for path in sorted(folder.glob("*.py"))}


def defined_functions(source: str) -> list[str]:
    tree = parse(source)
    return [n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))] if tree else []


def exercise_of(function: str) -> str | None:
    """The exercise whose corpus answers define ``function`` last (the graded function), if one does."""
    for exercise in exercises():
        answers = corpus(exercise)
        if answers and all(defined_functions(src)[-1:] == [function] for src in answers.values()):
            return exercise
    return None


def obvious(prints: list[frozenset], at: int | None = None) -> frozenset:
    """The k-grams found in at least ``at`` (``OBVIOUS_AT``) of ``prints``."""
    at = OBVIOUS_AT if at is None else at
    counts: dict[str, int] = {}
    for grams_ in prints:
        for g in grams_:
            counts[g] = counts.get(g, 0) + 1
    return frozenset(g for g, c in counts.items() if c >= at)


def compare(a: frozenset, b: frozenset, discount: frozenset = frozenset()) -> tuple[float, frozenset]:
    """(score, shared k-grams) of two fingerprints once ``discount`` is removed from both."""
    a, b = a - discount, b - discount
    shared = a & b
    union = a | b
    return (len(shared) / len(union) if union else 0.0), shared


@dataclass(frozen=True)
class Calibration:
    """An exercise's threshold and minimum evidence, and the honest scores they were chosen from."""

    exercise: str
    answers: int  # in the corpus
    threshold: float
    min_shared: int
    honest: tuple = ()  # (score, shared, "a vs b") of every honest pair of the corpus, the book's solution included
    discount: frozenset = field(default=frozenset(), repr=False)  # stub + obvious k-grams of the whole corpus

    @property
    def highest(self) -> tuple:
        return max(self.honest, default=(0.0, 0, ""))


def honest_points(answers: dict[str, str], reference: str = "", handed_out: str = "") -> list[tuple]:
    """(score, shared, "a vs b") of each pair of independent answers, and of each against ``reference``, every
    pair discounted by what the *other* answers share (leave-one-out)."""
    stub = fingerprint(handed_out)
    prints = {name: fingerprint(src) - stub for name, src in answers.items()}
    points = []
    for a, b in itertools.combinations(sorted(prints), 2):
        others = [g for name, g in prints.items() if name not in (a, b)]
        score, shared = compare(prints[a], prints[b], obvious(others))
        points.append((round(score, 3), len(shared), f"{a} vs {b}"))
    if reference:
        book = fingerprint(reference) - stub
        for a in sorted(prints):
            others = [g for name, g in prints.items() if name != a]
            score, shared = compare(prints[a], book, obvious(others))
            points.append((round(score, 3), len(shared), f"{a} vs {BOOK}"))
    return points


def thresholds(points: list[tuple]) -> tuple[float, int]:
    """(threshold, minimum evidence) clear of every honest point by the margins (see the module's docstring)."""
    top = max((s for s, _, _ in points), default=0.0)
    threshold = round(min(max(top + MARGIN, FLOOR), CEILING), 3)
    near = [e for s, e, _ in points if s > threshold - MARGIN]  # only when the ceiling holds the threshold down
    return threshold, max(MIN_SHARED, math.ceil(EVIDENCE_FACTOR * max(near)) + 1) if near else MIN_SHARED


def calibration_from(answers: dict[str, str], reference: str = "", handed_out: str = "",
                     exercise: str = "") -> Calibration:
    """The calibration of an exercise whose independent honest answers are ``answers`` (see ``calibrate``)."""
    points = honest_points(answers, reference, handed_out)
    threshold, min_shared = thresholds(points)
    stub = fingerprint(handed_out)
    discount = stub | obvious([fingerprint(src) - stub for src in answers.values()])
    return Calibration(exercise, len(answers), threshold, min_shared, tuple(sorted(points, reverse=True)), discount)


@functools.lru_cache(maxsize=64)
def calibrate(exercise: str | None, reference: str = "", handed_out: str = "") -> Calibration:
    """``exercise``'s threshold and minimum evidence from its shipped corpus, the book's solution ``reference`` and
    the stub ``handed_out`` (computed once per process; see the module's docstring)."""
    return calibration_from(corpus(exercise) if exercise else {}, reference, handed_out, exercise or "")


# -- a class --------------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Match:
    """One flagged pair: ``other`` is a classmate or ``BOOK``; ``shared`` the distinctive k-grams they share."""

    exercise: str
    student: str
    other: str
    score: float
    threshold: float
    min_shared: int
    shared: frozenset = field(default=frozenset(), repr=False)
    answers: int = 0  # in the exercise's calibration corpus
    honest_high: float = 0.0  # the highest score between independent answers of the corpus
    book: bool = False  # ``other`` is the book's solution (not a student who calls themself that)


def find_copies(codes: dict[str, str], reference: str = "", handed_out: str = "",
                exercise: str | None = None, function: str | None = None) -> list[Match]:
    """Each flagged pair among ``codes`` (student -> the code compared for one exercise: ``code_for``) and
    against the book's solution ``reference``; ``handed_out`` is the stub. ``exercise`` picks the calibration
    corpus (without it, the exercise whose corpus defines ``function``, or the function the stub or the solution
    defines)."""
    if exercise is None:
        name = function or next(iter(defined_functions(handed_out)[-1:] or defined_functions(reference)[-1:]), None)
        exercise = exercise_of(name) if name else None
    cal = calibrate(exercise, reference, handed_out)
    prints = {student: fingerprint(code) for student, code in codes.items()}
    counts: dict[str, int] = {}
    for grams_ in prints.values():
        for g in grams_ - cal.discount:
            counts[g] = counts.get(g, 0) + 1
    limit = max(3, COMMON * len(prints))
    common = frozenset(g for g, c in counts.items() if c > limit)
    found = []

    def consider(student, other, a, b, discount, book=False):
        score, shared = compare(a, b, discount)
        if score >= cal.threshold and len(shared) >= cal.min_shared:
            found.append(Match(cal.exercise, student, other, round(score, 3), cal.threshold, cal.min_shared, shared,
                               cal.answers, cal.highest[0], book))

    if reference:
        book = fingerprint(reference)
        stub = fingerprint(handed_out) if handed_out else frozenset()
        short = len(book - stub) < MIN_BOOK_GRAMS  # a few lines two people write alike: a match means nothing
        for student in sorted(prints):
            before = len(found)
            if not short:
                consider(student, BOOK, prints[student], book, cal.discount, book=True)
            # the book's own code, renamed and reordered: where the book's solution is the natural answer nothing
            # of it is distinctive, so the rule above cannot see a copy of it; the whole of it, all but unchanged,
            # is another matter when it is long enough that two people do not write it alike by chance
            score, shared = compare(prints[student], book, stub)
            if len(found) == before and score >= SAME_AS_BOOK and len(book - stub) >= MIN_BOOK_GRAMS \
                    and len(book - cal.discount) >= cal.min_shared:
                found.append(Match(cal.exercise, student, BOOK, round(score, 3), SAME_AS_BOOK, MIN_BOOK_GRAMS,
                                   shared, cal.answers, cal.highest[0], True))
    # two classmates who both wrote the book's own answer, all but token for token, share it because the book has it:
    # not a copy of each other (the book's rules above say what such an answer means)
    bookish = set()
    if reference:
        book, stub = fingerprint(reference), fingerprint(handed_out) if handed_out else frozenset()
        bookish = {s for s, p in prints.items() if compare(p, book, stub)[0] >= SAME_AS_BOOK}
    for a, b in itertools.combinations(sorted(prints), 2):
        if not {a, b} <= bookish:
            consider(a, b, prints[a], prints[b], cal.discount | common)
    return found


def flag_copies(codes: dict[str, str], reference: str = "", handed_out: str = "",
                exercise: str | None = None) -> list[tuple[str, str, float]]:
    """[(student, other, score)] for each flagged pair (``find_copies``); ``other`` is a student or BOOK."""
    return [(m.student, m.other, m.score) for m in find_copies(codes, reference, handed_out, exercise)]
