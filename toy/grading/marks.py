"""Marks, computed by the grader: fresh hidden cases, the grader's own references, and the answers compared.

The grader never runs a submission's code in its own process. For each notebook it draws the hidden cases with the
run's seed and computes the reference answers with its own ``toy`` (imported before any submission ran, so no
submission can have patched it). The grading process (``harness.py``) gets only the cases' inputs and sends back
what the submission's functions returned; ``verdict`` compares those answers here, with the same words as
``toy.exercises.check``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import numpy as np

from ..exercises import EXERCISES, CheckResult, Outcome, forbidden_keys, hidden_cases, judge

CHECK_CALL = re.compile(r"toy\.exercises\.check\(\s*[\"']([^\"']+)[\"']\s*,\s*(\w+)")


def exercises_checked(nb) -> list[tuple[str, str]]:
    """(exercise, function name) for each check call in a notebook's code cells, in order."""
    found = []
    for cell in nb.cells:
        if cell.cell_type == "code":
            found += [pair for pair in CHECK_CALL.findall(cell.source) if pair not in found]
    return found


@dataclass
class AnswerKey:
    """The hidden cases of some exercises for one run, with the reference answers (kept by the grader)."""

    seed: int
    functions: dict  # exercise -> the function name the book's notebook checks
    cases: dict = field(default_factory=dict)
    answers: dict = field(default_factory=dict)

    def __post_init__(self):
        for name in self.functions:
            self.cases[name] = hidden_cases(name, self.seed)
            self.answers[name] = [EXERCISES[name].reference(*case.args) for case in self.cases[name]]

    def job(self, time_limit: float) -> list[dict]:
        """What the grading process needs: inputs, function names, forbidden references; no answers."""
        return [{"name": name, "function": fn, "cases": [case.args for case in self.cases[name]],
                 "time_limit": time_limit, "forbidden_keys": forbidden_keys(name)}
                for name, fn in self.functions.items()]


class _Other:
    """Stands for a returned object that is neither a number nor an array (its type's name and repr)."""

    def __init__(self, text: str):
        self.text = text

    def __repr__(self):
        return self.text


def decode(value: dict):
    """The answer the grading process described, rebuilt for ``toy.exercises``' comparison."""
    if "number" in value:
        return float(value["number"])
    if "array" in value:
        if value["array"] is None:  # too large to send: only its shape matters (it cannot be right)
            return np.broadcast_to(np.float64(np.nan), tuple(value["shape"]))
        arr = np.array(value["array"], dtype=float).reshape(value["shape"])
        return arr.tolist() if value.get("type") == "list" else arr
    other = type(str(value.get("other", "object")), (_Other,), {})
    return other(str(value.get("repr", "")))


def verdict(key: AnswerKey, name: str, record: dict | None, problem: str = "") -> CheckResult:
    """The mark for exercise ``name`` from the grading process's ``record`` (None if it never got there)."""
    cases = key.cases[name]
    if record is None:
        return CheckResult(name, "not run", problem or "the notebook never got to this exercise", 0, len(cases))
    if "missing" in record:
        return CheckResult(name, "missing", f"the notebook defines no function {record['missing']}", 0, len(cases))
    try:
        return _compare_answers(key, name, record)
    except (KeyError, TypeError, ValueError, AttributeError) as err:  # a record no grading process writes
        return CheckResult(name, "error", f"the grader could not read the answers ({type(err).__name__})", 0,
                           len(cases))


def _compare_answers(key: AnswerKey, name: str, record: dict) -> CheckResult:
    cases, ex = key.cases[name], EXERCISES[name]
    for i, (case, raw) in enumerate(zip(cases, record["outcomes"], strict=False)):
        value = decode(raw["value"]) if raw["kind"] == "returned" else None
        result = judge(ex, i, len(cases), case, Outcome(raw["kind"], value, raw.get("detail", "")),
                       key.answers[name][i])
        if result:
            return result
    if len(record["outcomes"]) < len(cases):
        return CheckResult(name, "error", "the grading process stopped before the last hidden case", 0, len(cases))
    return CheckResult(name, "pass", f"all {len(cases)} hidden cases pass.", len(cases), len(cases))
