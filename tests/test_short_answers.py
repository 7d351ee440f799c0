"""Issue 40: no false copy flag for answers too short or too natural for a match to mean anything
(course/similarity.py).

Two honest styles of the issue's class matched the book's solution to 4.1's value token for token (one under
``%%time``, one checked under another name): nothing of that solution is left once what independent students all
write is taken out, so a match with it says nothing, and it is not flagged. Two independent students' short natural
answers (the book's few lines for 4.3's weight variance or 4.4's cost) matched at 1.000: a solution shorter than
``MIN_BOOK_GRAMS`` k-grams is what two people write alike, so neither a match with it nor two students who both
wrote it are flagged. A longer copy of a classmate still is.
"""

from __future__ import annotations

import pytest

from course import editions, similarity
from course.classroom import _final_code


def book_parts(exercise: str):
    for nb in editions.book().values():
        for ex, function in nb.exercises:
            if ex == exercise:
                return function, nb.solutions[function], nb.stubs.get(function, "")
    raise KeyError(exercise)


def test_style_percent_time_and_a_renamed_check_are_not_flagged_against_the_books_natural_solution():
    function, solution, stub = book_parts("4.1-value")
    timed = [[1, "%%time\n" + solution], [2, f'toy.exercises.check("4.1-value", {function})']]
    renamed = [[1, solution.replace(function, "my_value")], [2, 'toy.exercises.check("4.1-value", my_value)']]
    codes = {"n48": _final_code(timed, function, "4.1-value"), "n49": _final_code(renamed, function, "4.1-value")}
    assert similarity.compare(similarity.fingerprint(codes["n48"]), similarity.fingerprint(solution),
                              frozenset())[0] == 1.0  # token for token
    flags = similarity.find_copies(codes, solution, stub, "4.1-value")
    assert not [m for m in flags if m.book], flags


@pytest.mark.parametrize("exercise", ["4.3-weight-variance", "4.4-bc-cost"])
def test_style_two_short_natural_answers_alike_are_not_flagged(exercise):
    function, solution, stub = book_parts(exercise)
    prints = similarity.fingerprint(solution) - similarity.fingerprint(stub)
    cal = similarity.calibrate(exercise, solution, stub)
    assert len(prints - cal.discount) >= cal.min_shared  # enough to flag, by the distinctive rule alone
    assert len(prints) < similarity.MIN_BOOK_GRAMS
    codes = {"ana": solution, "bo": solution.replace(function, "mine")}
    assert not similarity.find_copies(codes, solution, stub, exercise)


def test_a_long_copy_of_a_classmate_is_still_flagged():
    function, solution, stub = book_parts("4.5-gae")
    assert len(similarity.fingerprint(solution)) >= similarity.MIN_BOOK_GRAMS
    codes = {"ana": solution, "bo": solution.replace(function, "mine")}
    assert [m for m in similarity.find_copies(codes, "", stub, "4.5-gae") if {m.student, m.other} == {"ana", "bo"}]
