"""Properties of the validators in toy.checks (hypothesis): they accept exactly what they promise, return it in
clean form, and otherwise raise a ValueError that names the argument."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import toy
from toy import checks

anything = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=True, allow_infinity=True),
                     st.text(max_size=5), st.lists(st.integers(), max_size=3), st.binary(max_size=3))
fast = settings(max_examples=150, deadline=None)


def refused(fn, *args, name="arg"):
    with pytest.raises(ValueError) as err:
        fn(name, *args)
    assert name in str(err.value)
    return str(err.value)


@fast
@given(anything)
def test_positive_finite(value):
    ok = (isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value) and value > 0)
    if ok:
        assert checks.positive_finite("arg", value) == float(value)
    else:
        refused(checks.positive_finite, value)


@fast
@given(anything, st.floats(-10, 10), st.floats(0, 10))
def test_in_range(value, low, width):
    high = low + width
    ok = isinstance(value, (int, float)) and not isinstance(value, bool) and low <= value <= high
    if ok:
        assert low <= checks.in_range("arg", value, low, high) <= high
    else:
        refused(checks.in_range, value, low, high)


@fast
@given(anything, st.integers(-5, 5), st.one_of(st.none(), st.integers(5, 50)))
def test_positive_int(value, low, high):
    ok = (isinstance(value, int) and not isinstance(value, bool) and value >= low
          and (high is None or value <= high))
    if ok:
        assert checks.positive_int("arg", value, low, high) == value
    else:
        refused(checks.positive_int, value, low, high)


@fast
@given(st.lists(st.floats(allow_nan=True, allow_infinity=True), min_size=1, max_size=8))
def test_array_refuses_exactly_the_non_finite(values):
    if all(math.isfinite(v) for v in values):
        np.testing.assert_array_equal(checks.array("arg", values), np.array(values))
    else:
        refused(checks.array, values)


@fast
@given(st.lists(st.floats(0, 1), min_size=1, max_size=8), st.floats(-0.5, 0.5))
def test_probabilities(weights, perturb):
    total = sum(weights)
    if total == 0:
        return
    p = np.array(weights) / total
    np.testing.assert_allclose(checks.probabilities("arg", p), p)
    q = p.copy()
    q[0] += perturb
    if q[0] < 0 or abs(q.sum() - 1) > checks.PROBABILITY_TOLERANCE:
        msg = refused(checks.probabilities, q)
        assert "probabilities" in msg
    else:
        checks.probabilities("arg", q)


@fast
@given(st.lists(st.integers(-2, 8), max_size=6), st.integers(1, 6), st.booleans(), st.booleans())
def test_prefix_keeps_the_response_rules(tokens, length, eos, strict):
    """checks.prefix accepts a prefix exactly when Policy.check_response accepts some completion of it."""
    n_actions = toy.VOCAB_SIZE + int(eos)
    in_range = all(0 <= t < n_actions for t in tokens)
    short = len(tokens) <= (length - 1 if strict else length)
    after_eos = eos and toy.EOS in tokens and any(t != toy.EOS for t in tokens[tokens.index(toy.EOS):])
    if in_range and short and not after_eos:
        assert checks.prefix("arg", tokens, length, eos, strict) == tuple(tokens)
        if eos and length <= 6:  # the prefix, finished with EOS (or as it is), is a response the policy accepts
            pol = toy.reference_policy(length=length, eos=True)
            done = tuple(tokens) if len(tokens) == length else tuple(tokens) + (toy.EOS,)
            pol.check_response(done)
    else:
        refused(checks.prefix, tokens, length, eos, strict)


@fast
@given(st.integers(0, 10**40), st.integers(1, 10**9))
def test_enumeration_guard(size, limit):
    if size <= limit:
        assert checks.enumeration("thing", size, limit) == size
    else:
        with pytest.raises(ValueError) as err:
            checks.enumeration("thing", size, limit, smaller="a smaller n")
        msg = str(err.value)
        assert "thing" in msg and f"{limit:,}" in msg and "a smaller n" in msg


@fast
@given(anything)
def test_show_is_short(value):
    assert len(checks.show(value)) <= 80


def test_show_abbreviates_arrays():
    text = checks.show(np.arange(10**6, dtype=float))
    assert "shape (1000000,)" in text and len(text) < 80
