"""A failed check shows the expected and returned numbers with digits enough to tell them apart, and the tolerance
(issue 50c: a newcomer's Exercise 21 failed with "expected 0.500333, but the function returned 0.500333")."""

from __future__ import annotations

import numpy as np

from toy import exercises
from toy.exercises import EXERCISES


def test_a_near_miss_shows_both_numbers_apart_and_the_tolerance():
    ex = EXERCISES["4.4-bc-cost"]
    want = 0.50033333333
    message = exercises._compare(ex, want + 3e-7, want)
    assert message == ("expected 0.50033333333, but the function returned 0.50033363333 (off by 3e-07; the check "
                       f"allows {ex.tolerance:.3g})")
    assert exercises._compare(ex, want + 1e-12, want) is None


def test_an_array_near_miss_names_the_entry_and_the_tolerance():
    ex = EXERCISES["4.4-sft-counts"]
    want = np.array([0.25, 0.5, 0.25])
    message = exercises._compare(ex, want + np.array([0, 2e-7, 0]), want)
    assert "(entry 1: expected 0.5, returned 0.5000002, off by 2e-07; the check allows" in message
