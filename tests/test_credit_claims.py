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


def test_what_the_temperature_question_of_try_this_asks_about():
    """4.1's 'Try this' 1 on Figure 4.1: with the sum reward, as τ falls from 1 to 0.1 on the page's grid, the last
    token's blue bar of the lower panel is far the tallest at τ = 1, and token 2 catches up with it (as tall, within
    the eye's reach, at the two lowest stops); the lower panel's axis changes unit (plotly's "μ", once its range is
    below a thousandth) only at τ = 0.1, as the page's browser check showed (ticks 10μ, 20μ)."""
    from toy.page.explorers.credit import TEMPERATURES

    falling = sorted((t for t in TEMPERATURES if t <= 1.0), reverse=True)  # 1 down to 0.1
    assert falling[0] == pytest.approx(1.0) and falling[-1] == pytest.approx(0.1)
    ratio, top = [], []
    for t in falling:
        signal, noise = toy.credit_by_position(toy.reference_policy("pretrained", t), "sum_to_target", X)
        ratio.append(signal[1] / signal[3])  # token 2's bar against the last token's
        top.append(max(signal.max(), noise.max()))
        if t == falling[0]:
            assert signal[3] > 3 * signal[:3].max()  # at τ = 1 the last bar is far the tallest
    assert all(b > a for a, b in zip(ratio[:-2], ratio[1:-1], strict=True))  # token 2 catches up as τ falls
    assert all(r > 0.95 for r in ratio[-2:]), ratio  # and is as tall as the last at τ = 0.18 and 0.1
    assert top[-1] < 1e-4  # at τ = 0.1 the axis counts in millionths ("μ")
    assert all(m > 1.1e-3 for m in top[:-1])  # above it, no unit change


def test_what_the_tree_questions_of_try_this_ask_about():
    """4.1's 'Try this' on the tree explorer: (1) with the sum reward some paths have V above 0.5, and on each the
    starred last token is the digit after the path's third token (π_ref's counting habit); (2) with the first-token
    reward, a path starting with the prompt's digit 2 has five stars, one starting with 1 none."""
    import itertools

    from toy import prefix_tree

    policy = toy.reference_policy()
    high = []
    for path in itertools.product(range(toy.VOCAB_SIZE), repeat=3):
        view = prefix_tree.path_view(policy, "sum_to_target", X, path)
        if view.path_values[-1] > 0.5:
            stars = np.flatnonzero(view.leaf_rewards > 0)
            assert len(stars) == 1
            high.append((path, int(stars[0])))
    assert high, "no path with V above 0.5"
    assert all(star == (path[-1] + 1) % toy.VOCAB_SIZE for path, star in high), high
    for first, n_stars in ((2, 5), (1, 0)):
        view = prefix_tree.path_view(policy, "first_token", X, (first, 0, 0))
        assert int((view.leaf_rewards > 0).sum()) == n_stars


def test_the_folded_answers_to_4_1s_try_this_say_what_toy_computes():
    """Round two: the answers folded under 4.1's two 'Try this' boxes. Tree: 20 paths have V above 0.5 (0.542 to
    0.800), each starred last token one more than the third; first-token stars 5 and 0. Figure 4.1: (1) at τ = 0.1
    token 2 decides about as much as the last token (44% and 44%); (2) token 1's advantage is 1 − V(x) or −V(x), with
    V(x) the chance the first token is 2; (3) τ = 10 is nearly uniform (the last token decides over 99%); (4) counting
    moves credit to token 1 under uniform, knowing the task gathers it on the last token under pretrained."""
    import json
    from pathlib import Path

    nb = json.loads((Path(__file__).resolve().parents[1] / "chapters" / "04-the-llm-as-a-policy"
                     / "4.1-formal-mapping.ipynb").read_text(encoding="utf-8"))
    text = {c["id"]: "".join(c["source"]) for c in nb["cells"]}
    for name in ("tree_high_n", "tree_high_lo", "tree_high_hi", "tree_first_stars_2", "tree_first_stars_1"):
        assert f'toy.quote("{name}"' in text["try-tree-answer"] and name.rstrip("12") in text["glue-try-tree"], name
    for name in ("cold_share_2", "cold_share_4", "cold_var", "first_v", "hot_last", "count_first", "know_last"):
        assert f'toy.quote("{name}"' in text["try-credit-answer"] and f'"{name}"' in text["glue-try-credit"], name

    pi = toy.reference_policy()
    V = toy.exact.values(pi, "sum_to_target", X)
    high = [s for s in np.ndindex(5, 5, 5) if V[3][s] > 0.5]
    assert len(high) == 20 and min(V[3][s] for s in high) == pytest.approx(0.542, abs=5e-4)
    assert max(V[3][s] for s in high) == pytest.approx(0.800, abs=5e-4)

    def shares(policy):
        signal, _ = toy.credit_by_position(policy, "sum_to_target", X)
        return 100 * signal / signal.sum()

    cold = shares(toy.reference_policy(temperature=0.1))
    assert round(cold[1]) == round(cold[3]) == 44 and cold[1] > cold[3]  # "catches up": 44% and 44%
    assert shares(pi)[3] > 1.5 * max(cold[1], cold[3])  # the last token held far more at τ = 1
    p_first = sum(pi.prob(X, y) for y in np.ndindex(5, 5, 5, 5) if y[0] == X)
    assert toy.value(pi, "first_token", X) == pytest.approx(p_first)
    assert shares(toy.reference_policy(temperature=10.0))[3] > 99
    top = toy.HABIT_RANGE[1]
    counting = shares(toy.reference_policy("uniform", count=top))
    assert counting[0] == counting.max() and counting[:3].sum() > 50  # earlier tokens gain, token 1 most
    assert shares(toy.reference_policy("pretrained", know=top))[3] > 95
