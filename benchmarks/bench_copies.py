"""How often copy flags are wrong, and how often a disguised copy gets through, per checked exercise.
Prints a table; tests/test_copies.py asserts the same figures (no false flag; at least 90% of copies caught).

False flags, among independent honest answers (each must be 0):

- **corpus, leave-one-out**: each answer of ``course/calibration/<exercise>/`` is held out, the exercise is
  calibrated on the others (threshold, minimum evidence, what is obvious), and the held-out answer is scored
  against every other answer (discounted by what the answers other than these two share) and against the book's
  solution;
- **hostile class**: the honest styles of ``tests/hostile_class.py`` (whatever it holds when this runs: its dicts
  of honest students, ``HONEST`` and any other module-level name with HONEST in it, and OWN_*, MEMO_VALUE and the
  book's own VALUE, PROBABILITY, ADVANTAGES), each exercise's code as the grader would compare it, against each
  other, against every corpus answer and against the book's solution, with the shipped calibration.

Detection: a disguised copy of every corpus answer (compared with the original, calibrated without it), of every
hostile-class honest style, and of the book's solution. ``disguise`` renames every identifier consistently (the
function, its parameters, helpers, locals, import aliases; not methods or a class's fields), reorders the
top-level definitions, swaps independent adjacent statements, reformats (``ast.unparse``, two-space indents), drops
every comment and adds new ones. Each disguise is checked to still pass ``toy.exercises.check`` (``--no-check``
skips that). The fingerprint is built not to see any of these changes, so a copy is missed only when the original
has too little that independent answers do not also write (the book's natural solutions, mostly).

``--today`` scores the same pairs as commit 4046ced did (before issue 29), for comparison.

Run: .venv/bin/python benchmarks/bench_copies.py [--seeds 3] [--no-check] [--today]
"""

from __future__ import annotations

import argparse
import ast
import builtins
import functools
import itertools
import random
import sys
import time
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the tests' hostile class lives in tests/

from course import editions, similarity, slicing
from course.similarity import BOOK, compare, obvious

WORDS = ["alpha", "beta", "gamma_", "delta", "omega", "tmp", "acc", "item", "node", "val", "res", "cur", "aux",
         "buf", "data", "thing", "q", "zz", "kk", "jj", "foo", "bar", "baz", "qux", "spam", "eggs", "ham"]
COMMENTS = ["# compute it step by step", "# TODO tidy up", "# see the lecture notes", "# my own approach",
            "# careful with the edge case", "# this part was tricky"]


def book_exercises() -> dict[str, tuple[str, str, str]]:
    """{exercise: (function, stub, the book's solution)} for every checked exercise of the book."""
    found = {}
    for nb in editions.book().values():
        for exercise, function in nb.exercises:
            found[exercise] = (function, nb.stubs.get(function, ""), nb.solutions.get(function, ""))
    return found


# -- disguises ------------------------------------------------------------------------------------------------------
class _Renamer(ast.NodeTransformer):
    def __init__(self, mapping: dict, own_functions: set):
        self.mapping, self.own, self.in_class = mapping, own_functions, False
        self.fields = set()  # class-level names (a NamedTuple's fields): read as attributes, so kept

    def _new(self, name):
        return self.mapping.get(name, name)

    def visit_Name(self, node):
        if id(node) not in self.fields:
            node.id = self._new(node.id)
        return node

    def visit_arg(self, node):
        node.arg = self._new(node.arg)
        return self.generic_visit(node)

    def _define(self, node):
        if not self.in_class:  # a method keeps its name (self.value(...) calls it by that name)
            node.name = self._new(node.name)
        if isinstance(node, ast.ClassDef):
            self.fields |= {id(t) for stmt in node.body if isinstance(stmt, (ast.Assign, ast.AnnAssign))
                            for t in (stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target])
                            if isinstance(t, ast.Name)}
        was, self.in_class = self.in_class, isinstance(node, ast.ClassDef)
        node = self.generic_visit(node)
        self.in_class = was
        return node

    visit_FunctionDef = visit_AsyncFunctionDef = visit_ClassDef = _define

    def visit_alias(self, node):
        if node.name != "*" and ("." not in node.name or node.asname):  # import a.b binds a: left as it is
            new = self._new(node.asname or node.name)
            node.asname = None if new == node.name else new
        return node

    def visit_Call(self, node):
        if isinstance(node.func, ast.Name) and node.func.id in self.own:
            for kw in node.keywords:
                if kw.arg:
                    kw.arg = self._new(kw.arg)
        return self.generic_visit(node)

    def visit_Global(self, node):
        node.names = [self._new(n) for n in node.names]
        return node

    visit_Nonlocal = visit_Global

    def visit_ExceptHandler(self, node):
        if node.name:
            node.name = self._new(node.name)
        return self.generic_visit(node)

    def visit_MatchAs(self, node):
        if node.name:
            node.name = self._new(node.name)
        return self.generic_visit(node)


def _own_names(tree: ast.AST) -> tuple[set, set]:
    """Every identifier the code binds (so may rename), and the names of the functions it defines."""
    names, functions = set(), set()
    methods = {id(m) for c in ast.walk(tree) if isinstance(c, ast.ClassDef) for m in c.body}  # self.value: kept
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
            names.add(node.id)
        elif isinstance(node, ast.arg):
            names.add(node.arg)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and id(node) not in methods:
            names.add(node.name)
            functions.add(node.name)
        elif isinstance(node, ast.alias) and node.name != "*" and ("." not in node.name or node.asname):
            names.add(node.asname or node.name)
        elif isinstance(node, (ast.ExceptHandler, ast.MatchAs)) and node.name:
            names.add(node.name)
    return {n for n in names if not n.startswith("__")} - set(dir(builtins)), functions


def _writes_reads(node: ast.stmt) -> tuple[set, set]:
    """Names a simple statement may change (targets, mutated objects, anything passed to a call) and reads."""
    writes, reads = set(), set()
    for sub in ast.walk(node):
        if isinstance(sub, ast.Name):
            (reads if isinstance(sub.ctx, ast.Load) else writes).add(sub.id)
        elif isinstance(sub, (ast.Attribute, ast.Subscript)) and not isinstance(sub.ctx, ast.Load):
            base = sub
            while isinstance(base, (ast.Attribute, ast.Subscript)):
                base = base.value
            if isinstance(base, ast.Name):
                writes.add(base.id)
        elif isinstance(sub, ast.Call):
            for part in [sub.func, *sub.args, *(k.value for k in sub.keywords)]:
                while isinstance(part, (ast.Attribute, ast.Subscript, ast.Starred)):
                    part = part.value
                if isinstance(part, ast.Name):
                    writes.add(part.id)
    return writes, reads


def _independent(a: ast.stmt, b: ast.stmt) -> bool:
    simple = (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Expr)
    if not (isinstance(a, simple) and isinstance(b, simple)):
        return False
    if any(isinstance(n, (ast.Yield, ast.YieldFrom, ast.Await, ast.NamedExpr)) for s in (a, b) for n in ast.walk(s)):
        return False
    if any(isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant) for s in (a, b)):
        return False  # a docstring stays where it is
    (wa, ra), (wb, rb) = _writes_reads(a), _writes_reads(b)
    return not (wa & (rb | wb) or wb & ra)


def _swap_statements(body: list, rng: random.Random) -> int:
    swaps, i = 0, 0
    while i + 1 < len(body):
        if _independent(body[i], body[i + 1]) and rng.random() < 0.8:
            body[i], body[i + 1] = body[i + 1], body[i]
            swaps += 1
            i += 2
        else:
            i += 1
    for node in body:
        if isinstance(node, ast.ClassDef):
            continue  # a class's statements keep their order (a NamedTuple's fields are ordered)
        for attr in ("body", "orelse", "finalbody"):
            if isinstance(getattr(node, attr, None), list):
                swaps += _swap_statements(getattr(node, attr), rng)
        for handler in getattr(node, "handlers", []):
            swaps += _swap_statements(handler.body, rng)
        for case in getattr(node, "cases", []):
            swaps += _swap_statements(case.body, rng)
    return swaps


def _definition_reads(node) -> set:
    """The names a definition reads when it runs (decorators, defaults, bases, annotations), not when called."""
    parts = list(node.decorator_list)
    if isinstance(node, ast.ClassDef):
        parts += node.bases + [k.value for k in node.keywords]
    else:
        parts += node.args.defaults + [d for d in node.args.kw_defaults if d] + ([node.returns] if node.returns else [])
    return {n.id for part in parts for n in ast.walk(part) if isinstance(n, ast.Name)}


def _reorder_definitions(tree: ast.Module, rng: random.Random) -> None:
    """Shuffle each run of consecutive top-level definitions (the last one, usually the graded function, first),
    keeping each after the definitions it reads when it runs (a decorator, a default)."""
    body, i = tree.body, 0
    while i < len(body):
        j = i
        while j < len(body) and isinstance(body[j], (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            j += 1
        if j - i > 1:
            run = body[i:j]
            rest = run[:-1]
            rng.shuffle(rest)
            order = [run[-1]] + rest
            placed = []
            while order:  # the first one whose definition-time names are all placed (or not defined in the run)
                names = {d.name for d in order}
                pick = next((d for d in order if not (_definition_reads(d) & names - {d.name})), order[0])
                order.remove(pick)
                placed.append(pick)
            body[i:j] = placed
        i = max(j, i + 1)


def disguise(source: str, seed: int = 0) -> tuple[str, dict]:
    """A disguised copy of ``source`` (see the module's docstring), and the renaming {old: new} it applied."""
    rng = random.Random(seed)
    tree = ast.parse(similarity.plain_python(source))
    names, functions = _own_names(tree)
    words = WORDS[:]
    rng.shuffle(words)
    mapping = {name: f"{words[k % len(words)]}{k}" for k, name in enumerate(sorted(names))}
    tree = _Renamer(mapping, functions).visit(tree)
    _reorder_definitions(tree, rng)
    _swap_statements(tree.body, rng)
    ast.fix_missing_locations(tree)
    lines = []
    for line in ast.unparse(tree).split("\n"):
        stripped = line.lstrip(" ")
        indent = (len(line) - len(stripped)) // 4
        if stripped and rng.random() < 0.3:
            lines.append("  " * indent + rng.choice(COMMENTS))
        lines.append("  " * indent + stripped)
    return "\n".join(lines) + "\n", mapping


# -- what to compare ------------------------------------------------------------------------------------------------
def honest_styles(functions: dict[str, str], book_cells: frozenset = frozenset()
                  ) -> dict[str, dict[str, tuple[str, str]]]:
    """{exercise: {name: (the code compared, the function graded)}}: the honest styles of tests/hostile_class.py:
    its dicts of honest students (module-level names with HONEST in them, descriptions aside), the honest answers
    OWN_* and MEMO_VALUE, and VALUE, PROBABILITY, ADVANTAGES (the book's own code, honest between classmates).
    A list of code strings is one student's notebook: each exercise's code is what the grader would compare
    (``similarity.code_for`` of the student's own cells up to its check, the book's unchanged ``book_cells`` left
    out, for the function the check passes); a single string is one answer. ``functions``: {graded function:
    exercise}."""
    from tests import hostile_class as hc

    found: dict[str, dict[str, tuple[str, str]]] = {}

    def notebook(name: str, cells: list[str]) -> None:
        cells = [c for c in cells if slicing.normal(c) not in book_cells]
        for exercise in dict.fromkeys(functions.values()):
            upto = [k for k, c in enumerate(cells) if exercise in c and "check" in c]
            mine = cells[:upto[-1] + 1] if upto else cells
            function = similarity.checked_function(mine, exercise) or next(
                (f for f, ex in functions.items() if ex == exercise), "")
            if upto or function in similarity.defined_functions("\n\n".join(c for c in mine if "def " in c)):
                code = similarity.code_for(mine, function)
                if function in similarity.defined_functions(code) or f"{function} =" in code:
                    found.setdefault(exercise, {}).setdefault(code, (name, function))

    def add(name: str, value) -> None:
        if isinstance(value, dict):
            for key, item in value.items():
                add(f"{name}[{key}]", item)
        elif isinstance(value, (list, tuple)) and value and all(isinstance(c, str) for c in value):
            notebook(name, list(value))
        elif isinstance(value, (list, tuple)):
            for k, item in enumerate(value):
                add(f"{name}[{k}]", item)
        elif isinstance(value, str) and "def " in value:
            notebook(name, [value])

    for name, value in vars(hc).items():
        if ("HONEST" in name and "ABOUT" not in name or name.startswith("OWN_")
                or name in ("VALUE", "PROBABILITY", "ADVANTAGES")):
            add(name, value)
    if hasattr(hc, "MEMO_VALUE"):  # the hostile class answers 4.1-value through this helper
        add("MEMO_VALUE", hc.MEMO_VALUE + "\n\n\ndef value_of_prefix(policy, reward, prompt, prefix):\n"
                                          "    return _memo_value(policy, reward, prompt, prefix)")
    return {ex: {name: (code, function) for code, (name, function) in styles.items()} for ex, styles in found.items()}


def _same_as(source: str, other: str) -> bool:
    return bool(other) and similarity.fingerprint(source) == similarity.fingerprint(other)


@dataclass
class Case:
    """One scored pair: an honest one (``copy`` False: flagged is a false flag) or a disguised copy and its
    original (flagged is a detection)."""

    exercise: str
    what: str
    copy: bool
    score: float
    shared: int
    threshold: float
    min_shared: int
    broken: bool = False  # the disguise no longer passes the exercise's check

    @property
    def flagged(self) -> bool:
        return self.score >= self.threshold and self.shared >= self.min_shared


@functools.lru_cache(maxsize=4096)
def _today_fingerprint(source: str) -> frozenset:
    """The fingerprint of course/similarity.py before issue 29 (commit 4046ced): k-grams (k = 5) of the syntax
    tree in source order, names and constants by kind, imports and docstrings left out, magics not understood."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError):
        return frozenset()
    tokens = []

    def walk(node):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.Import, ast.ImportFrom)) or (
                    isinstance(child, ast.Expr) and isinstance(child.value, ast.Constant)):
                continue
            if isinstance(child, (ast.Name, ast.arg)):
                tokens.append("name")
            elif isinstance(child, ast.Constant):
                tokens.append(type(child.value).__name__)
            elif isinstance(child, ast.Attribute):
                tokens.append("." + child.attr)
            elif not isinstance(child, (ast.Load, ast.Store, ast.Del)):
                tokens.append(type(child).__name__)
            walk(child)

    walk(tree)
    return frozenset(" ".join(tokens[i:i + 5]) for i in range(max(len(tokens) - 4, 0)))


def exercise_cases(exercise: str, function: str, stub: str, solution: str, styles: dict[str, tuple[str, str]],
                   seeds: int = 1, run_check: bool = True, today: bool = False,
                   check_cases: int | None = None) -> list[Case]:
    """Every honest pair and every disguised copy of one exercise, scored (see the module's docstring); with
    ``today``, by the scoring of commit 4046ced instead (Jaccard of whole fingerprints at 0.7, at least 12 k-grams
    each, the stub's removed, nothing calibrated). ``check_cases``: how many of each check's hidden cases a disguise
    must pass (all by default)."""
    answers = similarity.corpus(exercise)
    fp = similarity.fingerprint
    stub_fp = fp(stub)
    prints = {name: fp(src) - stub_fp for name, src in answers.items()}
    shipped = similarity.calibrate(exercise, solution, stub)
    held_out = {held: similarity.calibration_from({n: s for n, s in answers.items() if n != held}, solution, stub,
                                                  exercise) for held in answers}
    cases = []

    def score(what, a, b, cal, left_out=(), copy=False, broken=False, book=False):
        """``a``, ``b``: sources; ``left_out``: corpus answers not counted in what is obvious (the pair's own);
        ``book``: ``b`` is the book's solution (its second rule applies: the book's own code all but unchanged)."""
        if today:
            ga, gb = _today_fingerprint(a) - _today_fingerprint(stub), _today_fingerprint(b) - _today_fingerprint(stub)
            value = similarity.jaccard(ga, gb)
            cases.append(Case(exercise, what, copy, round(value, 3), min(len(ga), len(gb)), 0.7, 12, broken))
            return
        discount = stub_fp | obvious([g for n, g in prints.items() if n not in left_out])
        if book and len(fp(b) - stub_fp) < similarity.MIN_BOOK_GRAMS:  # too short for a flag against the book
            cases.append(Case(exercise, what, copy, 0.0, 0, cal.threshold, cal.min_shared, broken))
            return
        value, shared = compare(fp(a), fp(b), discount)
        case = Case(exercise, what, copy, round(value, 3), len(shared), cal.threshold, cal.min_shared, broken)
        if book and not case.flagged and len(fp(b) - stub_fp) >= similarity.MIN_BOOK_GRAMS \
                and len(fp(b) - cal.discount) >= cal.min_shared:
            raw, _ = compare(fp(a), fp(b), stub_fp)
            if raw >= similarity.SAME_AS_BOOK:
                case = Case(exercise, what, copy, round(raw, 3), len(fp(b) - stub_fp), similarity.SAME_AS_BOOK,
                            similarity.MIN_BOOK_GRAMS, broken)
        cases.append(case)

    # corpus, leave-one-out: the held-out answer against the others and the book, calibrated without it
    for held in sorted(answers):
        for other in sorted(answers):
            if other != held:
                score(f"{held} vs {other}", answers[held], answers[other], held_out[held], (held, other))
        if solution:
            score(f"{held} vs {BOOK}", answers[held], solution, held_out[held], (held,), book=True)
    # the hostile class's honest styles, with the shipped calibration
    bookish = {name for name, (code, _) in styles.items() if _same_as(code, solution)}
    for a, b in itertools.combinations(sorted(styles), 2):
        if not {a, b} <= bookish:
            score(f"{a} vs {b}", styles[a][0], styles[b][0], shipped)
    for name in sorted(styles):
        for other in sorted(answers):
            score(f"{name} vs {other}", styles[name][0], answers[other], shipped, (other,))
        if solution and name not in bookish:  # a literal copy of the book's code is a copy
            score(f"{name} vs {BOOK}", styles[name][0], solution, shipped, book=True)
    # disguised copies: of each corpus answer (calibrated without it), of each honest style, of the book's solution
    originals = [(f"corpus/{n}", src, function, held_out[n], (n,)) for n, src in answers.items()]
    originals += [(f"hostile/{n}", code, fn, shipped, ()) for n, (code, fn) in styles.items() if n not in bookish]
    originals += [(BOOK, solution, function, shipped, ())] if solution else []
    for name, source, fn, cal, left_out in originals:
        checkable = run_check and _passes(exercise, source, fn, check_cases)  # not if it needs the book's cells
        for seed in range(seeds):
            text, mapping = disguise(source, seed)
            broken = checkable and not _passes(exercise, text, mapping.get(fn, fn), check_cases)
            score(f"{name} (disguise {seed})", text, source, cal, left_out, True, broken, book=name == BOOK)
    return cases


def _passes(exercise: str, source: str, function: str, n_cases: int | None = None) -> bool:
    import contextlib
    import io
    import warnings

    import numpy as np

    import toy
    from toy.exercises import check

    namespace = {"np": np, "toy": toy, "display": print}
    try:
        with warnings.catch_warnings(), contextlib.redirect_stdout(io.StringIO()):
            warnings.simplefilter("ignore")
            exec(compile(source, f"<disguised {exercise}>", "exec"), namespace)  # our own corpus
            return check(exercise, namespace[function], n_cases=n_cases).passed
    except Exception:  # noqa: BLE001 - a disguise that broke the code is reported, not raised
        return False


def all_cases(seeds: int = 1, run_check: bool = True, today: bool = False, check_cases: int | None = None
              ) -> list[Case]:
    """``exercise_cases`` for every checked exercise of the book."""
    exercises = book_exercises()
    functions = {function: exercise for exercise, (function, _, _) in exercises.items()}
    book_cells = frozenset().union(*(nb.cells for nb in editions.book().values()))
    styles = honest_styles(functions, book_cells)
    return [case for exercise, (function, stub, solution) in exercises.items()
            for case in exercise_cases(exercise, function, stub, solution, styles.get(exercise, {}), seeds, run_check,
                                       today, check_cases)]


def summary(cases: list[Case], today: bool = False) -> list[dict]:
    """Per exercise: its threshold and minimum evidence, the honest pairs, the false flags, the closest honest
    pair, the disguised copies and how many were detected, and the cases behind them."""
    rows = {}
    exercises = book_exercises()
    for case in cases:
        if case.exercise not in rows:
            cal = similarity.calibrate(case.exercise, exercises[case.exercise][2], exercises[case.exercise][1])
            rows[case.exercise] = {"exercise": case.exercise, "answers": cal.answers,
                                   "threshold": 0.7 if today else cal.threshold,
                                   "min_shared": 12 if today else cal.min_shared, "honest": 0, "false_flags": [],
                                   "closest": None, "copies": 0, "detected": 0, "missed": [], "broken": []}
        row = rows[case.exercise]
        if case.copy:
            row["copies"] += 1
            row["detected"] += case.flagged
            row["missed"] += [] if case.flagged else [case]
            row["broken"] += [case] if case.broken else []
        else:
            row["honest"] += 1
            row["false_flags"] += [case] if case.flagged else []
            if row["closest"] is None or _nearness(case) > _nearness(row["closest"]):
                row["closest"] = case
    return list(rows.values())


def _nearness(case: Case) -> float:
    """How near an honest pair comes to a flag: 1 is flagged (both the score and the evidence are at the mark)."""
    return min(case.score / case.threshold, case.shared / case.min_shared)


def table(rows: list[dict]) -> str:
    out = [f"{'exercise':28} {'corpus':>6} {'threshold':>9} {'min':>4} {'honest pairs':>12} {'false':>5} "
           f"{'closest honest':>14} {'copies detected':>16}"]
    for r in rows:
        c = r["closest"]
        closest = f"{c.score:.2f}/{c.shared:<3}" if c else ""
        out.append(f"{r['exercise']:28} {r['answers']:6} {r['threshold']:9.2f} {r['min_shared']:4} "
                   f"{r['honest']:12} {len(r['false_flags']):5} {closest:>14} "
                   f"{r['detected']:7}/{r['copies']:<4} {r['detected'] / max(r['copies'], 1):4.0%}")
    honest, false = sum(r["honest"] for r in rows), sum(len(r["false_flags"]) for r in rows)
    copies, detected = sum(r["copies"] for r in rows), sum(r["detected"] for r in rows)
    out.append(f"{'all':28} {sum(r['answers'] for r in rows):6} {'':9} {'':4} {honest:12} {false:5} {'':14} "
               f"{detected:7}/{copies:<4} {detected / max(copies, 1):4.0%}")
    out.append("(closest honest: the score / shared k-grams of the honest pair nearest to a flag)")
    for r in rows:
        for c in r["false_flags"]:
            out.append(f"FALSE FLAG {r['exercise']}: {c.what} ({c.score:.2f}, {c.shared} k-grams)")
    for r in rows:
        for c in r["missed"]:
            out.append(f"missed {r['exercise']}: {c.what} ({c.score:.2f}, {c.shared} k-grams; needs {c.threshold:.2f} "
                       f"and {c.min_shared})")
        for c in r["broken"]:
            out.append(f"BROKEN DISGUISE {r['exercise']}: {c.what} no longer passes the check")
    return "\n".join(out)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seeds", type=int, default=3, help="disguises per original (default 3)")
    parser.add_argument("--no-check", action="store_true", help="do not run the checks on the disguises")
    parser.add_argument("--today", action="store_true", help="also score by commit 4046ced's rule, for comparison")
    args = parser.parse_args()
    start = time.monotonic()
    print("Calibrated scoring (course/similarity.py):")
    print(table(summary(all_cases(args.seeds, not args.no_check))))
    if args.today:
        print("\nThe scoring before issue 29 (commit 4046ced), on the same pairs:")
        text = table(summary(all_cases(args.seeds, False, today=True), today=True))
        print("\n".join(line for line in text.split("\n") if not line.startswith("missed")))
    print(f"({time.monotonic() - start:.1f} s)")


if __name__ == "__main__":
    main()
