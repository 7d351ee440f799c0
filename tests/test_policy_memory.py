"""toy's policies on the longest legal responses: every entry point either answers within a small memory bound or
refuses at once through the one size guard (``checks.responses_of``), and the caches behind them stay bounded."""

import itertools
import tracemalloc

import numpy as np
import pytest

import toy
from toy import checks, policy
from toy.vocab import EOS, PROMPTS


def peak_bytes(fn) -> int:
    """The peak of memory traced (numpy's arrays included) while ``fn`` runs."""
    tracemalloc.start()
    try:
        fn()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def policies(length: int):
    """One policy of each kind at ``length`` with EOS: habits with and without the running sum, a bigram."""
    yield toy.reference_policy("knows_task", length=length, eos=True)
    yield toy.reference_policy("pretrained", length=length, eos=True)
    rng = np.random.default_rng(0)
    yield policy.BigramPolicy(rng.normal(size=(length, 6, 6)), eos=True)


@pytest.mark.parametrize("pi", list(policies(policy.MAX_LENGTH)), ids=repr)
def test_next_token_probs_at_the_longest_prefix_stays_small(pi):
    """Length 10 with EOS, a prefix of 9 tokens: the old code built the table of all 6**9 prefixes (about 2 GB on
    the way); the answer needs six numbers, and 1 MB is plenty."""
    prefix = (1, 2, 3, 4, 0, 1, 2, 3, 4)
    assert peak_bytes(lambda: pi.next_token_probs(3, prefix)) < 1_000_000
    assert peak_bytes(lambda: pi.prob(3, prefix + (EOS,))) < 1_000_000
    assert peak_bytes(lambda: pi.sample(3, 100, rng=0)) < 1_000_000


def test_the_size_guard_of_prefix_probs_names_the_limit_and_the_size():
    pi = toy.reference_policy(length=policy.MAX_LENGTH, eos=True)
    with pytest.raises(ValueError) as err:
        pi.prefix_probs(0, 9)
    message = str(err.value)
    assert f"{checks.MAX_ENUMERATION:,}" in message and f"{6**10:,}" in message and "depth 9" in message
    assert pi.prefix_probs(0, 8).shape == (6,) * 9  # 6**9 ≈ 10 million entries: under the limit


def test_entry_points_share_one_guard(monkeypatch):
    """Lowering ``MAX_ENUMERATION`` (read by ``checks.enumeration``) refuses prefix_probs, response_probs,
    length_distribution and the enumerating checks alike; next_token_probs, prob and sample enumerate nothing."""
    pi = toy.reference_policy(length=4, eos=True)
    monkeypatch.setattr(checks.enumeration, "__defaults__", (6**3 - 1, "a smaller setting"))
    for call in (lambda: pi.prefix_probs(0, 2), lambda: pi.response_probs(0), lambda: pi.length_distribution(0),
                 lambda: policy.check_policy("policy", pi, responses=True)):
        with pytest.raises(ValueError, match="beyond the limit of 215"):
            call()
    pi.prefix_probs(0, 1)
    pi.next_token_probs(0, (1, 2, 3))
    pi.prob(0, (1, 2, 3, 4))
    pi.sample(0, 10)


@pytest.mark.parametrize("pi", [*policies(4), toy.reference_policy("terse", length=4),
                                policy.TabularPolicy.from_policy(toy.reference_policy("knows_task", length=3,
                                                                                      eos=True))], ids=repr)
def test_next_token_probs_equal_the_table_of_every_prefix(pi):
    """The prefix-only route gives exactly the numbers of the full table, EOS absorption included."""
    for x in PROMPTS:
        for depth in range(pi.length):
            table = pi.prefix_probs(x, depth)
            for prefix in itertools.product(range(pi.n_actions), repeat=depth):
                if pi.eos and EOS in prefix and any(t != EOS for t in prefix[prefix.index(EOS):]):
                    continue
                np.testing.assert_array_equal(pi.next_token_probs(x, prefix), table[prefix])


def test_the_prefix_feature_cache_is_bounded():
    """Tables of prefix features are kept only up to ``_CACHED_FEATURES`` entries, so a long call leaves none."""
    policy._FEATURES.clear()
    pi = toy.reference_policy("knows_task", length=policy.MAX_LENGTH, eos=True)
    pi.prefix_probs(0, 8)
    pi.next_token_probs(0, (1,) * 9)
    assert all(k**d <= policy._CACHED_FEATURES for k, d in policy._FEATURES)
    assert sum(a.nbytes + b.nbytes for a, b in policy._FEATURES.values()) < 1_000_000


@pytest.mark.parametrize("fn", [toy.distillation.teacher, toy.distillation._distill, toy.format_gate.gated,
                                toy.format_gate._rl], ids=lambda f: f.__qualname__)
def test_toy_caches_have_a_size(fn):
    assert fn.cache_info().maxsize is not None
