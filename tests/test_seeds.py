"""toy.seeds: a random experiment's number with its spread over seeds, a trend with its rate."""

import numpy as np
import pytest

import toy
from toy.seeds import over_seeds, rate


def test_a_spread_is_the_mean_and_range_of_the_runs():
    s = over_seeds(lambda seed: np.random.default_rng(seed).normal(), seeds=range(20))
    draws = [np.random.default_rng(seed).normal() for seed in range(20)]
    assert s.n == 20 and s.seeds == tuple(range(20))
    assert s.mean == pytest.approx(np.mean(draws)) and s.lo == min(draws) and s.hi == max(draws)
    assert format(s, ".2f") == f"{np.mean(draws):.2f} ({min(draws):.2f} to {max(draws):.2f} over 20 seeds)"
    assert format(over_seeds(lambda seed: seed, [3, 1]), ".1f") == "2.0 (1.0 to 3.0 over 2 seeds)"


def test_a_rate_counts_the_seeds_where_a_claim_holds():
    r = rate(lambda seed: seed % 4 != 0, seeds=range(12))
    assert (r.k, r.n) == (9, 12) and format(r) == "9 of 12 seeds" and format(r, "%") == "75%"
    toy.glue("a_rate", r)
    assert toy.quote("a_rate") == "9 of 12 seeds"
    with pytest.raises(ValueError, match="format"):
        format(r, ".3f")


@pytest.mark.parametrize("seeds, message", [([], "non-empty"), (5, "iterable"), ([1, 1], "distinct"),
                                            ([0.5], "integer"), ([True], "integer")])
def test_bad_seeds_are_refused_by_name(seeds, message):
    with pytest.raises(ValueError, match=f"seeds must be .*{message}"):
        over_seeds(lambda seed: 0.0, seeds)


def test_a_run_that_gives_no_number_is_refused_by_seed():
    with pytest.raises(ValueError, match=r"run\(2\) must be a finite number, got nan"):
        over_seeds(lambda seed: float("nan") if seed == 2 else 1.0, range(4))
    with pytest.raises(ValueError, match=r"holds\(0\) must be True or False"):
        rate(lambda seed: 1, range(3))
    with pytest.raises(ValueError, match="run must be a function"):
        over_seeds(3)
