"""toy.bootstrap against brute force: λ-returns written out per response, moments by enumerating completions."""

import itertools

import numpy as np
import pytest

import toy
from tests import brute
from toy.bootstrap import critic_tables, lambda_returns, target_error
from toy.critic import Critic


def random_critic(L, seed=0):
    rng = np.random.default_rng(seed)
    return [rng.random((5,) * t) for t in range(L)]


def brute_lambda_return(tables, r, y, t, lam):
    L = len(y)
    n_step = [tables[t + n][tuple(y[: t + n])] if t + n < L else r for n in range(1, L - t + 1)]
    total = sum((1 - lam) * lam ** (n - 1) * n_step[n - 1] for n in range(1, L - t))
    return total + lam ** (L - t - 1) * r


@pytest.mark.parametrize("lam", [0.0, 0.3, 0.9, 1.0])
def test_lambda_returns_match_the_formula(lam):
    L = 3
    tables = random_critic(L)
    r = toy.reward_table("count_target", 1, L, 5)
    G = lambda_returns(tables, r, lam)
    for y in itertools.product(range(5), repeat=L):
        for t in range(L):
            assert G[t][y] == pytest.approx(brute_lambda_return(tables, r[y], y, t, lam))


@pytest.mark.parametrize("lam", [0.0, 0.5, 1.0])
def test_target_error_matches_enumeration(lam):
    L = 3
    policy = toy.reference_policy("pretrained", 1.2, length=L)
    tables = random_critic(L, seed=2)
    fn = toy.REWARDS["sum_to_target"]
    bias_sq = variance = 0.0
    for t in range(L):
        for prefix in itertools.product(range(5), repeat=t):
            reach = 1.0
            for u in range(t):
                reach *= policy.next_token_probs(2, prefix[:u])[prefix[u]]
            pairs = list(brute.completions(policy, 2, prefix))
            G = [brute_lambda_return(tables, fn(2, y), y, t, lam) for y, _ in pairs]
            m1 = sum(p * g for (_, p), g in zip(pairs, G, strict=True))
            m2 = sum(p * g * g for (_, p), g in zip(pairs, G, strict=True))
            v = brute.value(policy, fn, 2, prefix)
            bias_sq += reach * (m1 - v) ** 2
            variance += reach * (m2 - m1 * m1)
    got = target_error(policy, "sum_to_target", 2, tables, lam)
    assert got.bias_sq == pytest.approx(bias_sq / L, abs=1e-12)
    assert got.variance == pytest.approx(variance / L, abs=1e-12)
    assert got.mse == pytest.approx(got.bias_sq + got.variance)


def test_monte_carlo_targets_are_unbiased_whatever_the_critic():
    policy = toy.reference_policy()
    e = target_error(policy, "sum_to_target", 0, random_critic(4, seed=9), 1.0)
    assert e.bias_sq == 0.0
    assert e.variance > 0.05


def test_with_the_exact_critic_every_lambda_is_unbiased_and_td_has_the_least_variance():
    policy = toy.reference_policy()
    exact = Critic(4, "tabular").fit_population(policy, "sum_to_target")
    errors = [target_error(policy, "sum_to_target", 2, exact, lam) for lam in (0.0, 0.5, 1.0)]
    assert all(e.bias_sq < 1e-20 for e in errors)
    assert errors[0].variance < errors[1].variance < errors[2].variance


def test_critic_tables_accepts_a_critic_or_arrays():
    c = Critic(3, "position")
    c.weights[:] = np.arange(c.n_params)
    tables = critic_tables(c, 1, 3)
    assert [np.shape(v) for v in tables] == [(), (5,), (5, 5)]
    with pytest.raises(ValueError):
        critic_tables([np.zeros(())], 1, 3)
