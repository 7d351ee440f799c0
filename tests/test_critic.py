"""toy.critic against brute force: cells written out by hand, values by enumerating every response."""

import itertools

import numpy as np
import pytest

import toy
from toy.critic import FEATURES, Critic, monte_carlo_error, sampled_errors, value_error


def brute_values(policy, reward, x):
    """{prefix: (P(prefix), V(prefix), E[r² | prefix])} for every non-terminal prefix, by enumeration."""
    fn = toy.get_reward(reward)
    L, K = policy.length, policy.n_actions
    out = {}
    for t in range(L):
        for prefix in itertools.product(range(K), repeat=t):
            mass = ev = ev2 = 0.0
            for y in itertools.product(range(K), repeat=L):
                if y[:t] != prefix:
                    continue
                p = policy.prob(x, y) if not policy.eos or toy.EOS not in y or _padded(y) else 0.0
                r = fn(x, toy.strip_eos(y))
                mass, ev, ev2 = mass + p, ev + p * r, ev2 + p * r * r
            out[prefix] = (mass, ev / mass if mass > 0 else 0.0, ev2 / mass if mass > 0 else 0.0)
    return out


def _padded(y):
    first = y.index(toy.EOS)
    return all(tok == toy.EOS for tok in y[first:])


def hand_cell(features, x, prefix, L, K):
    """The cell of a state, written out case by case (independent of Critic._cells_at_depth)."""
    t = len(prefix)
    if features == "prompt":
        key = (x,)
    elif features == "position":
        key = (x, t)
    elif features == "last_token":
        key = (x, t, prefix[-1] if t else None)
    elif features == "running_sum":
        key = (x, t, prefix[-1] if t else None, sum(a for a in prefix if a < 5) % 5)
    else:
        key = (x, prefix)
    return key


@pytest.mark.parametrize("features", list(FEATURES))
def test_exact_fit_is_the_mean_of_targets_in_each_cell(features):
    rng = np.random.default_rng(3)
    L, K = 3, 5
    critic = Critic(L, features, l2=0.0)
    states = [(int(rng.integers(5)), tuple(int(a) for a in rng.integers(K, size=rng.integers(L))))
              for _ in range(300)]
    targets = rng.normal(size=len(states))
    critic.fit([x for x, _ in states], [p for _, p in states], targets)
    groups = {}
    for (x, p), g in zip(states, targets, strict=True):
        groups.setdefault(hand_cell(features, x, p, L, K), []).append(g)
    pred = critic.predict([x for x, _ in states], [p for _, p in states])
    for (x, p), v in zip(states, pred, strict=True):
        assert v == pytest.approx(np.mean(groups[hand_cell(features, x, p, L, K)]))
    # states that share a hand cell share a weight, and different hand cells have different weights
    cells = critic.cells([x for x, _ in states], [p for _, p in states])
    by_hand = {}
    for (x, p), c in zip(states, cells, strict=True):
        by_hand.setdefault(hand_cell(features, x, p, L, K), set()).add(int(c))
    assert all(len(s) == 1 for s in by_hand.values())
    assert len({next(iter(s)) for s in by_hand.values()}) == len(by_hand)


@pytest.mark.parametrize("features,count", [("prompt", 5), ("position", 20), ("last_token", 5 * 16),
                                            ("running_sum", 5 * 76), ("tabular", 5 * 156)])
def test_n_params(features, count):
    assert Critic(4, features).n_params == count
    assert Critic(4, features).per_prompt == count // 5


def test_the_critic_figure_counts_one_prompts_weights_as_the_text_does():
    """4.3's critic legend counted every prompt's weights (780 for the table) beside a text that counts one
    prompt's (156): the claim review's I5. The legend now names this prompt's weights, and the reachable ones."""
    from toy.page.explorers import classical

    names = [t.name.replace("<br>", " ") for t in classical.critic_figure(prompt=2).data]
    assert "critic, prompt (1 weight)" in names
    assert "critic, last token (16 weights)" in names
    assert "critic, running sum (56 reachable of 76 weights)" in names
    assert "critic, tabular (156 weights)" in names
    assert Critic(4, "running_sum").weights_reached(2) == 56


@pytest.mark.parametrize("features", list(FEATURES))
@pytest.mark.parametrize("length", [1, 2, 4])
def test_weights_reached_are_the_distinct_cells_of_one_prompts_states(features, length):
    """4.3 quotes each critic's size for the one prompt it is fitted to (issue: it quoted every prompt's weights, 5
    times as many, beside 'one cell per state'): the number of distinct hand-written cells over every prefix."""
    import itertools

    K = 5
    for x in (0, 2):
        states = [p for t in range(length) for p in itertools.product(range(K), repeat=t)]
        expected = len({hand_cell(features, x, p, length, K) for p in states})
        assert Critic(length, features).weights_reached(x) == expected
    assert Critic(4, "tabular").weights_reached(2) == 1 + 5 + 25 + 125  # one cell per state before the last token
    assert Critic(4, "running_sum").weights_reached(2) < Critic(4, "running_sum").n_params // 5
    with pytest.raises(ValueError, match="prompt"):
        Critic(4, "prompt").weights_reached(7)


def test_ridge_shrinks_toward_zero():
    critic = Critic(2, "prompt", l2=2.0).fit(1, [(), (3,)], [1.0, 1.0])
    assert critic.predict(1, [()])[0] == pytest.approx(2 / (2 + 2.0))
    assert critic.predict(0, [()])[0] == 0.0  # a cell without data keeps 0


def test_gradient_steps_converge_to_the_least_squares_fit():
    rng = np.random.default_rng(0)
    policy = toy.reference_policy(length=3)
    ys = policy.sample(2, 200, rng=rng)
    r = rng.normal(size=200)
    exact = Critic(3, "last_token", l2=0.0).fit_returns(2, ys, r)
    gd = Critic(3, "last_token").fit_returns(2, ys, r, steps=3000, lr=1.0)
    seen = np.unique(exact.cells(2, [tuple(y[:t]) for y in ys for t in range(3)]))
    np.testing.assert_allclose(gd.weights[seen], exact.weights[seen], atol=1e-6)
    # one gradient step by hand: w ← w − lr·(count·w − Σ G)/n for the prompt cell
    one = Critic(3, "prompt", init=0.5).fit(0, [(), (1,)], [1.0, 0.0], steps=1, lr=0.3)
    assert one.weights[0] == pytest.approx(0.5 - 0.3 * (2 * 0.5 - 1.0) / 2)


@pytest.mark.parametrize("reward", ["sum_to_target", "first_token", "count_target"])
@pytest.mark.parametrize("preset,temperature", [("pretrained", 1.0), ("knows_task", 0.5), ("confidently_wrong", 1.0),
                                                ("terse", 1.0), ("uniform", 1.0)])
def test_tabular_population_fit_is_the_exact_value(reward, preset, temperature):
    policy = toy.reference_policy(preset, temperature, length=3)
    critic = Critic(3, "tabular").fit_population(policy, reward)
    for x in (0, 3):
        for prefix, (_, v, _) in brute_values(policy, reward, x).items():
            assert critic.predict(x, [prefix])[0] == pytest.approx(v, abs=1e-12)
        assert value_error(critic, policy, reward, x) < 1e-12


def test_running_sum_is_exact_for_the_sum_reward_under_a_bigram_policy():
    # V depends on the state only through (position, previous token, digit sum mod 5) for this pair.
    policy = toy.reference_policy("pretrained", 0.7, length=4)
    critic = Critic(4, "running_sum").fit_population(policy, "sum_to_target")
    assert value_error(critic, policy, "sum_to_target", 2) < 1e-12
    coarse = Critic(4, "last_token").fit_population(policy, "sum_to_target")
    assert value_error(coarse, policy, "sum_to_target", 2) > 0.05


def test_value_error_matches_brute_force():
    policy = toy.reference_policy(length=3)
    critic = Critic(3, "last_token")
    critic.weights = np.random.default_rng(1).random(critic.n_params)
    brute = brute_values(policy, "sum_to_target", 1)
    sq = sum(p * (critic.predict(1, [prefix])[0] - v) ** 2 for prefix, (p, v, _) in brute.items())
    assert value_error(critic, policy, "sum_to_target", 1) == pytest.approx(np.sqrt(sq / 3))


def test_population_fit_is_the_visit_weighted_mean_in_a_cell():
    policy = toy.reference_policy(length=3)
    critic = Critic(3, "position").fit_population(policy, "count_target", prompts=[4])
    brute = brute_values(policy, "count_target", 4)
    for t in range(3):
        states = [(p, v) for prefix, (p, v, _) in brute.items() if len(prefix) == t]
        want = sum(p * v for p, v in states) / sum(p for p, _ in states)
        assert critic.predict(4, [(0,) * t])[0] == pytest.approx(want)


def test_monte_carlo_error_is_the_exact_standard_error():
    policy = toy.reference_policy(length=3)
    brute = brute_values(policy, "sum_to_target", 0)
    var = sum(p * (e2 - v * v) for p, v, e2 in brute.values()) / 3
    for k in (1, 9, 64):
        assert monte_carlo_error(policy, "sum_to_target", 0, k) == pytest.approx(np.sqrt(var / k))


def test_sampled_errors_fall_with_data_for_a_critic_that_can_represent_v():
    policy = toy.reference_policy(length=3)
    errs = sampled_errors(policy, "sum_to_target", 2, "tabular", [4, 64, 4096], seeds=3)
    assert errs[0] > errs[1] > errs[2]
    assert errs[2] < 0.03


def test_values_along_and_table_agree_with_predict():
    policy = toy.reference_policy(length=4, eos=True)
    critic = Critic(4, "running_sum", n_actions=6)
    ys = policy.sample(1, 50, rng=0)
    critic.fit_returns(1, ys, np.arange(50.0))
    along = critic.values_along(1, ys)
    for i, y in enumerate(ys[:10]):
        for t in range(4):
            assert along[i, t] == critic.predict(1, [tuple(y[:t])])[0]
            assert critic.table(1, t)[tuple(y[:t])] == along[i, t]


def test_prompts_per_state():
    critic = Critic(2, "prompt").fit([0, 1, 1], [(), (), (2,)], [1.0, 2.0, 4.0])
    np.testing.assert_allclose(critic.predict([0, 1], [(), ()]), [1 / 1.001, 6 / 2.001])


@pytest.mark.parametrize("call", [
    lambda c: Critic(4, "mlp"),
    lambda c: Critic(0),
    lambda c: c.predict(9, [()]),
    lambda c: c.predict(0, [(1, 2, 3, 4)]),
    lambda c: c.predict(0, [(7,)]),
    lambda c: c.predict([0, 1], [()]),
    lambda c: c.predict(0, "12"),
    lambda c: c.fit(0, [(), ()], [1.0]),
    lambda c: c.fit(0, [()], [float("nan")]),
    lambda c: c.fit(0, [()], [1.0], steps=-1),
    lambda c: c.fit(0, [()], [1.0], steps=2, lr=0.0),
    lambda c: c.fit_returns(0, np.zeros((3, 2), dtype=int), np.zeros(3)),
    lambda c: c.values_along(0, np.full((2, 4), 5)),
    lambda c: c.table(0, 4),
    lambda c: c.fit_population(toy.reference_policy(length=3), "sum_to_target"),
    lambda c: value_error(c, "not a policy", "sum_to_target", 0),
    lambda c: monte_carlo_error(toy.reference_policy(), "sum_to_target", 0, 0),
])
def test_bad_input_raises_value_error(call):
    with pytest.raises(ValueError):
        call(Critic(4, "last_token"))
