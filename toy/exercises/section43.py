"""Section 4.3's checked exercises: the discounted return of a response that can end early, and the variance of
the sequence importance weight between a policy and a stale copy of it."""

from __future__ import annotations

import functools

import numpy as np

from .. import bootstrap, clipping, critic, offpolicy
from ..discount import DiscountedReward
from ..page.explorers import classical
from ..policy import reference_policy, strip_eos
from ..rewards import REWARDS, reward_table
from ..vocab import EOS, PROMPTS, VOCAB_SIZE
from .questions import question, rubric
from .registry import Case, allow, forbid, random_setting, register


def _response(rng, length: int, digits: int, name: str, prompt: int, rewarded: bool) -> tuple[int, ...]:
    """``digits`` digit tokens then EOS padding up to ``length``; for the sum reward, rewarded if asked."""
    ys = [int(a) for a in rng.integers(0, VOCAB_SIZE, size=digits)]
    if rewarded and digits and name == "sum_to_target":
        ys[-1] = (prompt - sum(ys[:-1])) % VOCAB_SIZE
    elif rewarded and digits:
        ys[0] = prompt
    return tuple(ys) + (EOS,) * (length - digits)


def _discount_cases(rng):
    """Responses that end at once (only EOS), part-way, one digit short of the limit (the EOS is then the last
    action) and not at all; γ at both ends (0 and 1) and in between; rewarded and unrewarded responses."""
    plan = [(4, 0, 0.9, "sum_to_target", 0, True), (4, 1, 0.9, "sum_to_target", 2, True),
            (4, 3, 0.9, "sum_to_target", 2, True), (4, 4, 0.9, "sum_to_target", 2, True),
            (4, 2, 0.0, "count_target", 3, True), (4, 0, 0.0, "sum_to_target", 0, True),
            (4, 2, 1.0, "first_token", 1, True), (1, 1, 0.5, "first_token", 4, True)]
    for _ in range(8):
        length = int(rng.integers(1, 9))
        gamma = float(rng.choice([0.0, 1.0, 0.5, 0.99, np.round(rng.uniform(0, 1), 3)]))
        plan.append((length, int(rng.integers(0, length + 1)), gamma, str(rng.choice(sorted(REWARDS))),
                     int(rng.choice(PROMPTS)), bool(rng.random() < 0.7)))
    cases = []
    for length, digits, gamma, name, prompt, rewarded in plan:
        response = _response(rng, length, digits, name, prompt, rewarded)
        cases.append(Case((REWARDS[name], prompt, response, gamma),
                          f"reward {name}, prompt {prompt}, response {response} (EOS = {EOS}), γ = {gamma:g}"))
    return cases


def _discount_reference(reward, prompt, response, gamma):
    return DiscountedReward(reward, gamma, len(response))(prompt, strip_eos(response))


def _weight_cases(rng):
    """Pairs (π_θ, π_old): the same policy (no correction needed), π_θ a few exact gradient steps ahead of π_old
    (stale samples, as in the section), and two reference policies with temperatures on 0.5..2 and the same or
    different presets (kept away from 0.1 so that no response of π_old has a probability that underflows)."""
    cases = []
    policy = reference_policy("pretrained", 1.0, 4)
    cases.append(Case((policy, policy, 2), f"π_θ = π_old = {policy!r}, prompt 2"))
    for k, lr, length, prompt in [(1, 5.0, 4, 2), (4, 5.0, 4, 2), (16, 5.0, 4, 2), (3, 20.0, 2, 0), (8, 1.0, 1, 4)]:
        old = reference_policy("pretrained", 1.0, length)
        current = offpolicy.policy_path(old, "sum_to_target", prompt, k, lr)[-1]
        cases.append(Case((current, old, prompt), f"π_old = {old!r}, π_θ = π_old after {k} exact gradient step(s) "
                                                  f"of size {lr:g} on the sum reward for prompt {prompt}"))
    for _ in range(8):
        preset, _, length = random_setting(rng)
        other = str(rng.choice(["pretrained", "knows_task", "confidently_wrong", "terse", preset]))
        other = "pretrained" if other == preset == "uniform" else other  # uniform at any temperature is one policy
        t_current, t_old = (float(np.round(10 ** rng.uniform(-0.3, 0.3), 3)) for _ in range(2))
        current, old = reference_policy(preset, t_current, length), reference_policy(other, t_old, length)
        prompt = int(rng.choice(PROMPTS))
        cases.append(Case((current, old, prompt), f"π_θ = {current!r}, π_old = {old!r}, prompt {prompt}"))
    return cases


register("4.3-discounted-return", "the discounted return γ^(T−1)·r of a response with EOS", _discount_cases,
         _discount_reference)
register("4.3-weight-variance", "the variance of the sequence importance weight", _weight_cases,
         lambda current, old, prompt: offpolicy.weight_variance(current, old, prompt).sequence)

allow("4.3-discounted-return", "the reward", "reward")
allow("4.3-weight-variance", "the two policies' response probabilities", "policy.response_probs")

forbid("4.3-discounted-return", "the discounted return counted by hand", "toy.discount.DiscountedReward")
forbid("4.3-weight-variance", "Var[w] from the two policies' probabilities", "toy.offpolicy.weight_variance")


# -- questions and rubrics (toy.exercises.questions): the exercises without a function to write -------------------
# A student's setting is drawn on the grid of the explorer it is read from, with the explorer's own constants
# (toy/page/explorers/classical.py): the discount explorer's γ and β, the bootstrapping explorer's critics, sizes and
# numbers of targets averaged, the trust-region explorer's ε_high and its rarest and commonest tokens.

_X = 2  # the prompt of the section's explorers (their default argument; tests/test_questions.py checks it)
_CRITICS = tuple(f.replace("_", " ") for f in classical.CRITIC_FEATURES)  # the bootstrapping explorer's menu names
_AVERAGED = classical.AVERAGED[1:4]  # the bootstrapping explorer's numbers of targets averaged, but its ends
_RAREST, _COMMONEST = classical.P_GRID[0], classical.P_GRID[-1]  # the trust-region curve's first and last tokens


_REF_EOS = reference_policy(eos=True)  # the discount explorer's π_ref: pretrained, with EOS, at most 4 digits
_IS_EOS = np.indices((_REF_EOS.n_actions,) * _REF_EOS.length) == EOS  # axis 0: the position in the response
_DIGITS = np.where(_IS_EOS.any(axis=0), _IS_EOS.argmax(axis=0), _REF_EOS.length)
"""The number of digits of every response (the position of its first EOS), on the grid of response_probs."""


def _preference(s):
    """π*(y_1)/π*(y_2) over π_ref(y_1)/π_ref(y_2) for two rewarded responses of T_1 and T_2 actions:
    exp((γ^(T_1−1) − γ^(T_2−1))/β), the discounted rewards of two responses that sum to the target (prompt 2)."""
    discounted = DiscountedReward("sum_to_target", s["gamma"], _REF_EOS.length)
    y1, y2 = ((0,) * (t - 2) + (_X,) for t in (s["t1"], s["t2"]))  # T − 1 digits that sum to 2, then EOS
    return float(np.exp((discounted(_X, y1) - discounted(_X, y2)) / s["beta"]))


def _preference_mistakes(s):
    g, b, t1, t2 = s["gamma"], s["beta"], s["t1"], s["t2"]
    return [(np.log(_preference(s)), "That is the exponent: the factor is e to that power."),
            (np.exp((g**t1 - g**t2) / b), "An episode of T actions is discounted by γ^(T−1), not γ^T."),
            (np.exp((g ** (t1 - 1) - g ** (t2 - 1)) * b), "β divides the reward in π* ∝ π_ref·exp(γ^(T−1) r / β)."),
            (1 / _preference(s), "That is the preference for the longer response over the shorter one.")]


def _draw_preference(rng):
    t1, t2 = ((2, 3), (2, 4), (3, 4))[int(rng.integers(3))]
    return {"gamma": float(rng.choice(classical.GAMMAS[:-1])), "beta": float(rng.choice(classical.DISCOUNT_BETAS[1:])),
            "t1": t1, "t2": t2}


question("ex-4-3-discount-a", "ex-4-3-discount",
         "The result at work: at γ = {gamma:g} and β = {beta:g}, by what factor does the optimum prefer a rewarded "
         "response of T₁ = {t1} actions to one of T₂ = {t2} actions, on top of π_ref's preference (to two decimals)?",
         "number", _preference, {"gamma": 0.9, "beta": 0.03, "t1": 2, "t2": 4}, draw=_draw_preference,
         tolerance=0.01, mistakes=_preference_mistakes)


def _length_share(s, optimum=True):
    """The probability that π* (or π_ref) writes exactly ``digits`` digits, a bar of the discount explorer: π* is
    π_ref·exp(γ^(T−1) r/β), normalised, over the prompt's whole responses (toy.discount.discounted_optimum's)."""
    probs = _REF_EOS.response_probs(s["prompt"])
    if optimum:
        r = reward_table(DiscountedReward("sum_to_target", s["gamma"], _REF_EOS.length), s["prompt"],
                         _REF_EOS.length, _REF_EOS.n_actions)
        probs = probs * np.exp((r - r.max()) / s["beta"])
    return float(probs[_DIGITS == s["digits"]].sum() / probs.sum())


def _length_mistakes(s):
    return [(_length_share(s, optimum=False), "That is π_ref's bar: the question asks for the optimum's.")]


question("ex-4-3-discount-b", "ex-4-3-discount",
         "Check it in the explorer The discount (sum reward): at γ = {gamma:g}, β = {beta:g} and prompt {prompt}, "
         "with what probability does the optimum π* write exactly {digits} digit(s)? (Two decimals, as you read the "
         "bar; pointing at it shows three.)",
         "number", _length_share, {"gamma": 0.9, "beta": 0.03, "prompt": 2, "digits": 1},
         draw=lambda rng: {"gamma": float(rng.choice(classical.GAMMAS)),
                           "beta": float(rng.choice(classical.DISCOUNT_BETAS)), "prompt": int(rng.choice(PROMPTS)),
                           "digits": int(rng.integers(0, _REF_EOS.length + 1))},
         tolerance=0.005, mistakes=_length_mistakes, practice=True)
rubric("ex-4-3-discount",
       ("writes π*(y) ∝ π_ref(y)·exp(γ^(T(y)−1) r(y)/β) and sets r = 1 for two rewarded responses", 1),
       ("takes the ratio π*(y_1)/π*(y_2): the normaliser cancels, leaving π_ref's ratio times "
        "exp((γ^(T_1−1) − γ^(T_2−1))/β)"
        " (split: 1 for the normaliser cancelling; 1 for the factor that is left)", 2),
       ("shows the exponent is positive for γ < 1 and T_1 < T_2, so the shorter response gains", 1),
       ("explains the growth as β falls: the same difference in discounted reward is divided by a smaller β, a "
        "weaker pull toward π_ref", 1),
       ("checks the claim in the explorer The discount at β = 0.03 with any reading that tests it: for example the "
        "optimum's share of one-digit responses against π_ref's (the worked solution's), or the optimum's lengths "
        "shortening as γ falls", 1))


@functools.lru_cache(maxsize=64)
def _target_errors(features: str, n: int) -> tuple[bootstrap.TargetError, bootstrap.TargetError]:
    """TD(0)'s and the Monte Carlo return's targets for the bootstrapping explorer's critic: ``features``, fitted
    to the returns of n responses sampled with seed 0 (pretrained π_ref, prompt 2, sum reward)."""
    policy = reference_policy()
    ys = policy.sample(_X, n, rng=np.random.default_rng(0))
    returns = reward_table("sum_to_target", _X, policy.length, policy.n_actions)[tuple(ys.T)]
    fitted = critic.Critic(policy.length, features).fit_returns(_X, ys, returns)
    return tuple(bootstrap.target_error(policy, "sum_to_target", _X, fitted, lam) for lam in (0.0, 1.0))


def _averaged_errors(s, averaged=None):
    """[TD(0), Monte Carlo]: bias² + variance / n for n targets averaged per state."""
    n = averaged or s["averaged"]
    return [e.bias_sq + e.variance / n for e in _target_errors(s["critic"].replace(" ", "_"), s["n"])]


def _averaged_mistakes(s):
    return [(_averaged_errors(s, 1), "Those are the errors of one target: averaging n targets divides the variance "
                                     "by n."),
            (_averaged_errors(s)[::-1], "TD(0) and Monte Carlo are swapped.")]


question("ex-4-3-bootstrap-a", "ex-4-3-bootstrap",
         "In the explorer Bootstrapping (sum reward), with the critic {critic} fitted to {n:,} responses and "
         "{averaged} targets averaged per state: the error of TD(0)'s averaged target, then the Monte Carlo "
         "return's (the title's MSEs).",
         "numbers", _averaged_errors, {"critic": "last token", "n": 32, "averaged": 16},
         draw=lambda rng: {"critic": str(rng.choice(_CRITICS)), "n": int(rng.choice(classical.BOOT_SIZES)),
                           "averaged": int(rng.choice(_AVERAGED))},
         labels=("TD(0)", "Monte Carlo"), tolerance=0.0001, mistakes=_averaged_mistakes)


def _fewest(s):
    """The fewest responses on the slider from which TD(0) beats the Monte Carlo return (with that many responses
    and with every larger number), or None if it never does."""
    wins = [np.less(*_averaged_errors({**s, "n": n})) for n in classical.BOOT_SIZES]
    return next((n for i, n in enumerate(classical.BOOT_SIZES) if all(wins[i:])), None)


def _draw_fewest(rng):
    while True:  # a setting where TD(0) does win, at some size on the slider
        s = {"critic": str(rng.choice(_CRITICS)), "averaged": int(rng.choice(_AVERAGED))}
        if _fewest(s) is not None:
            return s


def _fewest_mistakes(s):
    alone = _fewest({**s, "averaged": 1})
    return [] if alone is None else [(alone, "That is where TD(0) wins with a single target: this question averages "
                                             "more.")]


question("ex-4-3-bootstrap-b", "ex-4-3-bootstrap",
         "In the explorer Bootstrapping (sum reward), with the critic {critic} and {averaged} targets averaged per "
         "state: from how many responses on the slider does TD(0) beat the Monte Carlo return, with that many "
         "responses and with every larger number?",
         "number", _fewest, {"critic": "last token", "averaged": 16}, draw=_draw_fewest, tolerance=0.5,
         mistakes=_fewest_mistakes, practice=True)
rubric("ex-4-3-bootstrap",
       ("names a setting of the explorer where TD(0) beats Monte Carlo with 16 targets averaged (a critic fitted to "
        "enough responses)", 1),
       ("splits the averaged errors: TD(0)'s bias² + variance/n against Monte Carlo's variance/n, so the critic's "
        "squared bias must fall below the difference of the variances divided by n"
        " (split: 1 for each target's averaged error; 1 for the condition on the critic's bias)", 2),
       ("concludes that the critic must be accurate where the policy goes: fitted to enough responses for its number "
        "of parameters", 1),
       ("explains why that is hard for a language model: a critic must generalise over astronomically many prefixes "
        "from a reward that arrives only at the end, while sampling more responses is routine"
        " (split: 1 for the number of prefixes a critic must cover; 1 for the reward arriving only at the "
        "end, against cheap sampling)", 2))


@functools.lru_cache(maxsize=16)
def _reach(eps_high: float) -> tuple[float, float]:
    """(p_new − p_old)/p_old in percent, after one PPO update with advantage +1 and the explorer's step budget, for
    the trust-region explorer's rarest and commonest tokens (the commonest's growth is set by the budget alone)."""
    return tuple(100 * (clipping.one_token_reach(p, 1.0, 0.2, eps_high, budget=clipping.REACH_BUDGET) - p) / p
                 for p in (_RAREST, _COMMONEST))


def _growth(s, eps_high=None):
    return list(_reach(s["eps_high"] if eps_high is None else eps_high))


def _unclippable(s):
    """The old probability above which the clip never binds: a token's ratio cannot pass 1/p."""
    return 1 / (1 + s["eps_high"])


def _draw_eps(rng):
    return {"eps_high": float(rng.choice(classical.EPS_HIGH))}


def _unclippable_mistakes(s):
    return [(1 - s["eps_high"], "That is 1 − ε_high, a probability: the clip bounds the ratio p_new/p_old, not p."),
            (s["eps_high"], "That is ε_high itself, a bound on the ratio's growth, not a probability.")]


def _growth_mistakes(s):
    return [([g / 100 for g in _growth(s)], "Give the growth in percent."),
            (_growth(s, 0.2), "That is PPO's curve (ε = 0.2, dashed): set the slider to the question's ε_high.")]


question("ex-4-3-clip-a", "ex-4-3-clip",
         "In the explorer The trust region, at ε_high = {eps_high:g}: by how many percent can one update with "
         "advantage +1 raise the probability of the rarest token on the curve (p = 0.001), and of the rightmost one "
         "(p = 0.95)? The update takes gradient steps until the clip stops them or their sizes add up to "
         + f"{clipping.REACH_BUDGET:g}" + " (its step budget).",
         "numbers", _growth, {"eps_high": 0.6}, draw=_draw_eps, labels=("p = 0.001 (%)", "p = 0.95 (%)"),
         tolerance=0.1, predict=True, mistakes=_growth_mistakes, practice=True)
question("ex-4-3-clip-b", "ex-4-3-clip",
         "At ε_high = {eps_high:g}: above which old probability p can the clip no longer stop a token at all? "
         "(Three decimals, or a fraction.)",
         "number", _unclippable, {"eps_high": 0.6}, draw=_draw_eps, tolerance=0.005, predict=True,
         mistakes=_unclippable_mistakes, practice=True)
