"""A failed check shows the expected and returned numbers with digits enough to tell them apart, and the tolerance
(issue 50c: a newcomer's Exercise 21 failed with "expected 0.500333, but the function returned 0.500333")."""

from __future__ import annotations

import numpy as np

from toy import exercises
from toy.exercises import EXERCISES


def test_a_near_miss_shows_both_numbers_apart_and_the_tolerance():
    ex = EXERCISES["4.4-bc-cost"]
    want = 0.50033333333
    message = exercises._compare(ex, want + 3e-6, want)
    assert message == ("expected 0.50033333333, but the function returned 0.50033633333 (off by 3e-06; the check "
                       f"allows {ex.relative * want:.3g})")
    assert exercises._compare(ex, want + 1e-12, want) is None


def closed_form(eps, horizon):
    """Exercise 22(b)'s closed form, written as a student would: T − ((1 − ε)/ε)·[1 − (1 − ε)^T]."""
    return horizon - (1 - eps) / eps * (1 - (1 - eps) ** horizon) if eps else 0.0


def test_exercise_22s_closed_form_passes_the_check_and_wrong_answers_still_fail():
    """Issue 49 (round 5): the closed form of Exercise 22(b) was off by 2.9e-8 at ε = 1e-6, T = 1000, against an
    allowance of 1e-9, and failed 4.4-bc-cost. It rounds, it is not wrong: it now passes on every seed's cases, while
    an off-by-one sum, the quadratic approximation and an answer off by a relative 1e-5 still fail."""
    ex = EXERCISES["4.4-bc-cost"]
    off = abs(closed_form(1e-6, 1000) - ex.reference(1e-6, 1000))
    assert 1e-9 < off < ex.relative * ex.reference(1e-6, 1000)  # over the old allowance, within the new one
    for seed in range(5):
        assert exercises.check("4.4-bc-cost", closed_form, seed=seed).status == "pass"
    wrong = {"off by one": lambda eps, T: sum(1 - (1 - eps) ** t for t in range(T)),
             "quadratic": lambda eps, T: eps * T * (T + 1) / 2,
             "relative 1e-5": lambda eps, T: closed_form(eps, T) * (1 + 1e-5)}
    for name, fn in wrong.items():
        assert exercises.check("4.4-bc-cost", fn).status == "fail", name


def test_an_array_near_miss_names_the_entry_and_the_tolerance():
    ex = EXERCISES["4.4-sft-counts"]
    want = np.array([0.25, 0.5, 0.25])
    message = exercises._compare(ex, want + np.array([0, 2e-7, 0]), want)
    assert "(entry 1: expected 0.5, returned 0.5000002, off by 2e-07; the check allows" in message
