"""Issue 47, part 2: no answer can harm the grader. Answers are read and judged in a child of the grader's process
(``course.answers.bounded``: an address-space limit and a clock), and every value read is bounded in size after each
operation (``MAX_ITEMS``), so each hostile spelling below costs only its own question, with its reason, and the next
question of the same notebook is still marked; the grader's process never holds the hostile value.
"""

from __future__ import annotations

import resource
import time

import pytest

from course import answers
from toy.exercises import questions as Q

STUDENT = "alice"
TEL, PRED = "ex-4-1-telescope", "ex-4-1-predict"


def right(question: str):
    q = Q.QUESTIONS[question]
    return Q.as_value(q, q.spec(q.instance(STUDENT))["answer"])


def code(source: str) -> dict:
    return {"cell_type": "code", "source": source, "outputs": []}


HOSTILE = {
    "list repeat chain": "a = [0.1] * 64\nb = a * 64\nc = b * 64\nd = c * 64\ne1 = d * 64\nf = e1 * 64\n"
                         f"toy.exercises.answer({TEL!r}, f)",
    "nested list repeat": f"toy.exercises.answer({TEL!r}, [[[[0.1] * 64] * 64] * 64] * 64)",
    "repeat on the left": f"toy.exercises.answer({TEL!r}, 64 * (64 * (64 * (64 * [0.1]))))",
    "list add doubling": "a = [0.1] * 64\n" + "".join("a = a + a\n" for _ in range(40))
                         + f"toy.exercises.answer({TEL!r}, a)",
    "names in a list literal": "a = [0.1] * 64\nb = [a, a, a, a, a, a, a, a] * 8\nc = [b, b, b, b] * 16\n"
                               f"toy.exercises.answer({TEL!r}, c)",
    "string repeat chain": "s = 'x' * 64\nt = s * 64\nu = t * 64\nv = u * 64\n"
                           f"toy.exercises.answer({TEL!r}, v)",
    "nested comprehension": f"toy.exercises.answer({TEL!r}, [[0.1 for i in range(10**6)] for j in range(10**6)])",
    "big int power": f"toy.exercises.answer({TEL!r}, 10 ** 64 ** 64)",
    "power tower": f"toy.exercises.answer({TEL!r}, 9 ** 9 ** 9 ** 9)",
    "int products": "x = 999999 ** 64\ny = x * x\nz = y * y\n" + f"toy.exercises.answer({TEL!r}, z * z)",
    "float of text": f"toy.exercises.answer({TEL!r}, float('1e999'))",
    "int of a long text": f"toy.exercises.answer({TEL!r}, int('9' * 100000))",
}


@pytest.mark.parametrize("source", HOSTILE.values(), ids=HOSTILE.keys())
def test_a_hostile_answer_costs_only_its_question_and_says_why(source):
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    nb = {"cells": [code("import toy"), code(source), code(f"toy.exercises.answer({PRED!r}, {right(PRED)!r})")]}
    start = time.monotonic()
    rows = {r["question"]: r for r in answers.mark_answers(nb, STUDENT, [TEL, PRED])}
    assert time.monotonic() - start < 30
    assert rows[TEL]["status"] == "not readable" and rows[TEL]["mark"] == 0, rows[TEL]
    assert rows[TEL]["message"], rows[TEL]
    assert rows[PRED]["status"] == "right", rows[PRED]
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before < 100_000  # KB: the grader held no list


def test_a_list_repeat_is_refused_before_it_is_made():
    with pytest.raises(answers.NotLiteral, match="more than 4,096 numbers"):
        answers.value_of(answers.ast.parse("[[0.1] * 64] * 64 * 64", mode="eval").body, {})
    assert answers.size(answers.value_of(answers.ast.parse("[[0.1] * 62] * 64", mode="eval").body, {})) == 1 + 64 * 63


def test_the_reader_is_bounded_in_memory_and_time():
    """What slips past the size bound still meets the child's limits: a MemoryError there (RLIMIT_AS), never an
    allocation in the grader; a clock that kills a reader that does not end."""
    with pytest.raises(answers.TooCostly, match="more than 64 MB"):
        answers.bounded(lambda: bytearray(256 * 1024 * 1024), memory_mb=64)
    start = time.monotonic()
    with pytest.raises(answers.TooCostly, match="longer than 0.5 s"):
        answers.bounded(time.sleep, 30, seconds=0.5)
    assert time.monotonic() - start < 5
    assert answers.bounded(sum, [1, 2, 3]) == 6


def test_a_notebook_whose_reading_exhausts_the_child_costs_its_own_questions(monkeypatch):
    """A reader that needs more than the child may have (here: a value_of that allocates 2 GB) costs that question;
    with the limits themselves exceeded, the notebook's rows say why, and the grader goes on."""
    real = answers._value_of

    def greedy(node, names):
        if isinstance(node, answers.ast.Name) and node.id == "hog":
            return bytearray(2 * 1024 ** 3)
        return real(node, names)

    monkeypatch.setattr(answers, "_value_of", greedy)
    nb = {"cells": [code(f"toy.exercises.answer({TEL!r}, hog)"),
                    code(f"toy.exercises.answer({PRED!r}, {right(PRED)!r})")]}
    rows = {r["question"]: r for r in answers.mark_answers(nb, STUDENT, [TEL, PRED])}
    assert rows[TEL]["status"] == "not readable" and "too large" in rows[TEL]["message"], rows[TEL]
    assert rows[PRED]["status"] == "right"
    monkeypatch.setattr(answers, "READ_SECONDS", 0.5)
    monkeypatch.setattr(answers, "_mark_answers", lambda *a: time.sleep(30))
    rows = answers.mark_answers(nb, STUDENT, [TEL, PRED])
    assert [r["status"] for r in rows] == ["not readable"] * 2
    assert all("longer than 0.5 s" in r["message"] for r in rows)
