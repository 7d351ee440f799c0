"""The claims section 4.1 makes about Figure 4.1's lower panel and about each prior (prompt 2, τ = 1), so that a
change to toy that breaks one of them fails here. The numbers themselves are glued into the page by toy."""

import numpy as np
import pytest

import toy

X = 2


def credit(preset, reward="sum_to_target"):
    signal, noise = toy.credit_by_position(toy.reference_policy(preset), reward, X)
    return signal, noise, signal / signal.sum()


def test_blue_and_orange_add_up_to_the_reward_variance_at_every_position():
    for preset in toy.PRESETS:
        for reward in toy.REWARDS:
            signal, noise, _ = credit(preset, reward)
            var = float(toy.exact.return_variances(toy.reference_policy(preset), reward, X)[0])
            np.testing.assert_allclose(signal + noise, var, atol=1e-12)


def test_sum_reward_under_pretrained():
    signal, noise, share = credit("pretrained")
    assert 0.5 < share[-1] < 0.95  # the last token decides most, not everything
    assert noise[0] > 10 * signal[0]  # the first token decides little and receives much noise
    uniform, _, _ = credit("uniform")
    assert uniform[:3].max() < 1e-12  # under uniform the earlier blue bars vanish


def test_first_token_reward_noise_on_later_tokens_equals_token_ones_signal():
    for preset in toy.PRESETS:
        signal, noise, share = credit(preset, "first_token")
        np.testing.assert_allclose(noise[1:], signal[0], rtol=1e-12)
        assert noise[0] < 1e-28 and share[0] == pytest.approx(1.0)
    first_var = {p: credit(p, "first_token")[0][0] for p in toy.PRESETS}
    assert max(first_var, key=first_var.get) == "knows_task"
    assert min(first_var, key=first_var.get) == "confidently_wrong"


def test_prior_by_prior():
    pre, kno, wro, ter, uni = (credit(p) for p in ("pretrained", "knows_task", "confidently_wrong", "terse",
                                                    "uniform"))
    value = {p: toy.value(toy.reference_policy(p), "sum_to_target", X) for p in toy.PRESETS}
    assert value["knows_task"] > 0.5 and kno[0].sum() > pre[0].sum() and kno[2][-1] > pre[2][-1]
    assert value["confidently_wrong"] < 0.01 and wro[0].sum() < 0.01 and max(wro[0].max(), wro[1].max()) < 0.01
    assert ter[2].min() > max(c[2].min() for c in (pre, kno, wro, uni)) and ter[2][-1] < 0.5
    assert uni[2][-1] == pytest.approx(1.0)


def test_what_the_live_sliders_show_in_try_this():
    """4.1's 'Try this' 4: from uniform, a counting habit gives the earlier tokens credit; from pretrained, knowing
    the task gathers the credit on the last token."""
    for count in (0.5, 1.5, 5.0):
        signal, _ = toy.credit_by_position(toy.reference_policy("uniform", count=count), "sum_to_target", X)
        assert signal[:3].sum() / signal.sum() > 0.01
    signals = [toy.credit_by_position(toy.reference_policy("pretrained", know=k), "sum_to_target", X)[0]
               for k in (0, 1, 2, 3)]
    last = [s[-1] / s.sum() for s in signals]
    assert all(b > a for a, b in zip(last, last[1:], strict=False))
