"""Properties that must hold for any policy, reward and prompt (hypothesis)."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import toy

temperatures = st.floats(min_value=0.1, max_value=10.0)
presets = st.sampled_from(sorted(toy.PRESETS))
rewards = st.sampled_from(sorted(toy.REWARDS))
prompts = st.sampled_from(toy.PROMPTS)
lengths = st.integers(min_value=1, max_value=5)


@st.composite
def policies(draw):
    return toy.reference_policy(draw(presets), draw(temperatures), draw(lengths), eos=draw(st.booleans()))


@st.composite
def random_tabular(draw):
    """A tabular policy with arbitrary logits: the properties are not special to the presets."""
    length = draw(st.integers(1, 4))
    seed = draw(st.integers(0, 2**32 - 1))
    scale = draw(st.floats(0.0, 6.0))
    rng = np.random.default_rng(seed)
    return toy.TabularPolicy([scale * rng.normal(size=(5,) + (5,) * (t + 1)) for t in range(length)])


any_policy = st.one_of(policies(), random_tabular())


@settings(max_examples=60, deadline=None)
@given(any_policy, rewards, prompts, st.data())
def test_advantages_telescope_to_the_sequence_advantage(policy, reward, prompt, data):
    y = tuple(int(a) for a in policy.sample(prompt, 1, rng=data.draw(st.integers(0, 10**6)))[0])
    A = toy.token_advantages(policy, reward, prompt, y)
    assert np.isclose(A.sum(), toy.sequence_advantage(policy, reward, prompt, y), atol=1e-12)
    table = toy.advantage_table(policy, reward, prompt)
    R = toy.reward_table(reward, prompt, policy.length, policy.n_actions)
    np.testing.assert_allclose(table.sum(axis=-1), R - toy.value(policy, reward, prompt), atol=1e-12)


@settings(max_examples=60, deadline=None)
@given(any_policy, rewards, prompts)
def test_expected_advantage_is_zero_at_every_state(policy, reward, prompt):
    V = toy.values(policy, reward, prompt)
    for t in range(policy.length):
        probs = policy.prefix_probs(prompt, t)  # (K,)*t + (K,)
        expected = (probs * (V[t + 1] - V[t][..., None])).sum(axis=-1)
        np.testing.assert_allclose(expected, 0.0, atol=1e-12)


@settings(max_examples=60, deadline=None)
@given(any_policy, prompts)
def test_probabilities_sum_to_one(policy, prompt):
    for t in range(policy.length):
        np.testing.assert_allclose(policy.prefix_probs(prompt, t).sum(axis=-1), 1.0, atol=1e-12)
    assert np.isclose(policy.response_probs(prompt).sum(), 1.0, atol=1e-12)


@settings(max_examples=60, deadline=None)
@given(any_policy, rewards, prompts)
def test_values_lie_within_the_rewards_range(policy, reward, prompt):
    R = toy.reward_table(reward, prompt, policy.length, policy.n_actions)
    for V in toy.values(policy, reward, prompt):
        assert np.all(V >= R.min() - 1e-12) and np.all(V <= R.max() + 1e-12)


@settings(max_examples=40, deadline=None)
@given(any_policy, rewards, prompts)
def test_noise_is_the_other_tokens_squared_advantages(policy, reward, prompt):
    """E[(r − V(x) − A_t)²] = Σ_{s≠t} E[A_s²]: advantages at different steps are uncorrelated."""
    _, noise = toy.credit_by_position(policy, reward, prompt)
    P = policy.response_probs(prompt)
    A = toy.advantage_table(policy, reward, prompt)
    second = np.tensordot(P, A**2, axes=policy.length)  # E[A_t²]
    np.testing.assert_allclose(noise, second.sum() - second, atol=1e-10)


@settings(max_examples=40, deadline=None)
@given(presets.filter(lambda p: p != "uniform"), prompts, lengths)
def test_temperature_limits(preset, prompt, length):
    hot = toy.reference_policy(preset, 1e3, length)
    cold = toy.reference_policy(preset, 0.02, length)
    base = toy.reference_policy(preset, 1.0, length)
    for t in range(length):
        np.testing.assert_allclose(hot.prefix_probs(prompt, t), 0.2, atol=5e-3)
        b = base.prefix_probs(prompt, t)
        c = cold.prefix_probs(prompt, t)
        top = np.take_along_axis(c, b.argmax(axis=-1)[..., None], axis=-1)[..., 0]
        # the cold policy's mass on π's favourite: at least 1 / (1 + (K − 1) e^(−gap/τ)), where gap is the
        # log-probability gap to the runner-up (so near 1 unless two tokens nearly tie, as habits can make them)
        logb = np.sort(np.log(b), axis=-1)
        gap = logb[..., -1] - logb[..., -2]
        bound = 1 / (1 + (b.shape[-1] - 1) * np.exp(-gap / 0.02))
        assert np.all(top >= bound - 1e-12)
        assert np.all(top[gap > 0.5] > 1 - 1e-6)
