"""Copy detection, as MOSS-style tools do it: fingerprints of normalised code, compared across the class.

For each exercise, a submission's fingerprint is the set of k-grams of its code's syntax tree walked in order,
with every name and constant replaced by its kind (so renaming variables, reformatting or editing comments changes
nothing), after removing the k-grams of the code handed out (the stub) and those that appear in too many
submissions to mean anything between classmates (the obvious way to write a short function; against the book's
solution every k-gram counts). Two fingerprints' similarity is their Jaccard index. A pair at or above
``THRESHOLD`` is flagged for the instructor, never marked down: near-copies of a classmate, and near-copies of the
book's solution.
"""

from __future__ import annotations

import ast
import hashlib
import itertools

from .slicing import AST_LOCK

K = 5  # syntax-tree nodes per k-gram
THRESHOLD = 0.7
MIN_GRAMS = 12  # a fingerprint smaller than this is too small to call a copy
COMMON = 0.4  # k-grams in more than this share of the submissions (and more than 3) are ignored


def _preorder(node):
    """The nodes of a syntax tree in source order (parent before children), imports and docstrings left out."""
    for child in ast.iter_child_nodes(node):
        if isinstance(child, (ast.Import, ast.ImportFrom)) or (
                isinstance(child, ast.Expr) and isinstance(child.value, ast.Constant)):
            continue
        yield child
        yield from _preorder(child)


def _tokens(source: str) -> list[str]:
    try:
        with AST_LOCK:  # see course.slicing.AST_LOCK
            tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError):
        return []
    out = []
    for node in _preorder(tree):
        if isinstance(node, (ast.Name, ast.arg)):
            out.append("name")
        elif isinstance(node, ast.Constant):
            out.append(type(node.value).__name__)
        elif isinstance(node, ast.Attribute):
            out.append("." + node.attr)
        elif isinstance(node, (ast.Load, ast.Store, ast.Del)):
            continue
        else:
            out.append(type(node).__name__)
    return out


def fingerprint(source: str) -> frozenset:
    """The set of hashed k-grams of ``source``'s normalised syntax tree (empty if it does not parse)."""
    try:
        tokens = _tokens(source)
    except RecursionError:
        return frozenset()
    return frozenset(hashlib.blake2b(" ".join(tokens[i:i + K]).encode(), digest_size=8).hexdigest()
                     for i in range(max(len(tokens) - K + 1, 0)))


def jaccard(a: frozenset, b: frozenset) -> float:
    return len(a & b) / len(a | b) if a or b else 0.0


def flag_copies(codes: dict[str, str], reference: str = "", handed_out: str = "") -> list[tuple[str, str, float]]:
    """[(student, other, similarity)] for each pair at or above THRESHOLD; ``other`` is a student or
    "the book's solution". ``codes`` maps each student to the code the grader ran for one exercise."""
    base = fingerprint(handed_out)
    prints = {student: fingerprint(code) - base for student, code in codes.items()}
    counts: dict[str, int] = {}
    for grams in prints.values():
        for g in grams:
            counts[g] = counts.get(g, 0) + 1
    limit = max(3, COMMON * len(prints))
    common = {g for g, c in counts.items() if c > limit}
    prints = {s: grams - common for s, grams in prints.items()}
    flags = []
    solution = fingerprint(reference) - base if reference else frozenset()
    for student, grams in sorted(prints.items()):
        grams = fingerprint(codes[student]) - base  # against the book, however many did the same
        if len(grams) >= MIN_GRAMS and len(solution) >= MIN_GRAMS:
            score = jaccard(grams, solution)
            if score >= THRESHOLD:
                flags.append((student, "the book's solution", round(score, 3)))
    for (a, ga), (b, gb) in itertools.combinations(sorted(prints.items()), 2):
        if len(ga) >= MIN_GRAMS and len(gb) >= MIN_GRAMS:
            score = jaccard(ga, gb)
            if score >= THRESHOLD:
                flags.append((a, b, round(score, 3)))
    return flags
