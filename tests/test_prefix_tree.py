"""The prefix tree of section 4.1 (toy.prefix_tree and its explorer) against brute force."""

import itertools

import numpy as np
import pytest

import toy
from tests import brute
from toy import prefix_tree
from toy.page.explorers import mapping

X = 2


def test_counts_of_the_whole_tree():
    pi = toy.reference_policy()
    for name, reward in toy.REWARDS.items():
        c = prefix_tree.counts(pi, name, X)
        assert c.states == (1, 5, 25, 125) and c.leaves == 625
        rewarded = sum(reward(X, y) > 0 for y in itertools.product(range(5), repeat=4))
        assert c.rewarded == rewarded


@pytest.mark.parametrize("path", [(1, 2, 3), (0, 0, 0), (4, 3, 2)])
@pytest.mark.parametrize("reward", ["sum_to_target", "first_token"])
def test_path_view_against_brute_force(path, reward):
    pi = toy.reference_policy()
    view = prefix_tree.path_view(pi, reward, X, path)
    r = toy.REWARDS[reward]
    reach = 1.0
    for t in range(4):
        prefix = path[:t]
        prev = X if t == 0 else prefix[-1]
        probs = brute.next_probs("pretrained", 1.0, t, prev)
        np.testing.assert_allclose(view.probs[t], probs, rtol=1e-12)
        np.testing.assert_allclose(view.reach[t], reach * np.array(probs), rtol=1e-12)
        want_v = [brute.value(pi, r, X, prefix + (a,)) for a in range(5)]
        np.testing.assert_allclose(view.values[t], want_v, atol=1e-12)
        assert view.path_values[t] == pytest.approx(brute.value(pi, r, X, prefix), abs=1e-12)
        if t < 3:
            reach *= probs[path[t]]
    # the value of a state is the average of its children's (backward induction, read off the tree)
    for t in range(4):
        assert view.probs[t] @ view.values[t] == pytest.approx(view.path_values[t], abs=1e-12)
    np.testing.assert_array_equal(view.leaf_rewards, [r(X, path + (a,)) for a in range(5)])


def test_path_view_bad_input():
    pi = toy.reference_policy()
    with pytest.raises(ValueError, match="first 3 tokens"):
        prefix_tree.path_view(pi, "sum_to_target", X, (1, 2))
    with pytest.raises(ValueError, match="allowed tokens"):
        prefix_tree.path_view(pi, "sum_to_target", X, (1, 2, 7))


def test_explorer_draws_the_path_and_the_rewarded_leaves():
    ex = mapping.tree_explorer(prompt=X)
    fig = ex.figure_for(reward="sum_to_target", y1=1, y2=2, y3=3)
    rewarded = [a for a in range(5) if toy.REWARDS["sum_to_target"](X, (1, 2, 3, a))]
    hit, miss = fig.data[6].marker.size, fig.data[7].marker.size
    assert [a for a in range(5) if hit[a] > 0] == rewarded
    assert [a for a in range(5) if miss[a] > 0] == [a for a in range(5) if a not in rewarded]
    assert list(fig.data[5].y) == [2.0, 1.0, 2.0, 3.0]
    v = toy.value(toy.reference_policy(), "sum_to_target", X, (1, 2, 3))
    assert f"V = {v:.3f}" in fig.layout.title.text


def test_sum_reward_has_exactly_one_rewarded_leaf_under_every_last_state():
    """4.1: 'below every state of depth three exactly one of the five last tokens fixes the sum'; first-token: all
    five or none."""
    pi = toy.reference_policy()
    for path in itertools.product(range(5), repeat=3):
        assert (prefix_tree.path_view(pi, "sum_to_target", X, path).leaf_rewards > 0).sum() == 1
        first = prefix_tree.path_view(pi, "first_token", X, path).leaf_rewards > 0
        assert first.sum() == (5 if path[0] == X else 0)
