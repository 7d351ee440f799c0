"""Section 4.5's checked exercises: critic-free advantages (RLOO, GRPO, ReMax) and GAE(λ)."""

from __future__ import annotations

import numpy as np

from .. import estimators, exact, gae
from ..critic import FEATURES
from ..page.explorers import critic_free
from ..policy import TabularPolicy, reference_policy
from ..rewards import REWARDS
from .questions import question, rubric
from .registry import Case, allow, forbid, register

CRITIC_FREE = ("rloo", "grpo", "remax")
"""The methods the advantage exercise asks for."""


def _group(rng, n: int, kind: str) -> np.ndarray:
    if kind == "0/1":
        return rng.integers(0, 2, size=n).astype(float)
    if kind == "equal":
        return np.full(n, float(rng.integers(0, 2)))
    return np.round(rng.normal(0.0, 2.0, size=n), 3)


def _advantage_cases(rng):
    """Each method on 0/1 rewards, on real-valued rewards, and on a group whose rewards are all equal; group sizes
    from the smallest each method allows up to 16."""
    plan = [("rloo", 4, "0/1"), ("grpo", 4, "0/1"), ("remax", 4, "0/1"),
            ("rloo", 2, "real"), ("grpo", 2, "real"), ("remax", 1, "real"),
            ("rloo", 5, "equal"), ("grpo", 6, "equal"), ("remax", 3, "equal")]
    for _ in range(9):
        method = CRITIC_FREE[int(rng.integers(3))]
        plan.append((method, int(rng.integers(2, 17)), ["0/1", "real"][int(rng.integers(2))]))
    cases = []
    for method, n, kind in plan:
        rewards = _group(rng, n, kind)
        greedy = float(rng.choice([0.0, 1.0])) if kind != "real" else float(np.round(rng.normal(0.0, 2.0), 3))
        greedy = greedy if method == "remax" else None
        shown = np.array2string(rewards, separator=", ", max_line_width=10_000)
        extra = f", greedy reward {greedy:g}" if method == "remax" else ""
        cases.append(Case((method, rewards, greedy), f"method {method!r}, rewards {shown} (n = {n}){extra}"))
    return cases


def _gae_cases(rng):
    """Responses of 1 to 8 tokens; λ at both ends (0 and 1) and in between. Per-token rewards are a small KL-like
    penalty on every token plus a score on the last one, or all zero but the last."""
    lambdas = [0.0, 1.0, 0.95, 0.0, 1.0, 0.5]
    lambdas += [float(np.round(rng.uniform(0, 1), 3)) for _ in range(8)]
    cases = []
    for i, lam in enumerate(lambdas):
        L = [1, 1, 4, 4, 6, 8][i] if i < 6 else int(rng.integers(1, 9))
        rewards = np.zeros(L)
        if rng.random() < 0.6:
            rewards += np.round(-0.1 * rng.normal(size=L), 4)  # -β·log(π/π_ref) on every token
        rewards[-1] += float(rng.integers(0, 2))
        values = np.round(rng.uniform(0, 1, size=L), 4)
        shown = [np.array2string(a, separator=", ", max_line_width=10_000) for a in (rewards, values)]
        cases.append(Case((rewards, values, lam), f"rewards {shown[0]}, values {shown[1]}, λ = {lam:g}"))
    return cases


register("4.5-critic-free-advantages", "RLOO, GRPO and ReMax advantages for one group", _advantage_cases,
         estimators.advantages, kind="array")
register("4.5-gae", "GAE(λ) advantages along one response (γ = 1)", _gae_cases,
         lambda rewards, values, lam: gae.gae(rewards, values, lam), kind="array")

allow("4.5-critic-free-advantages", "nothing of toy but its constants (toy.estimators.GRPO_EPS)")
allow("4.5-gae", "nothing of toy but its constants")

forbid("4.5-critic-free-advantages", "each method's baseline written out", "toy.estimators.advantages")
forbid("4.5-gae", "GAE(λ) from the TD errors", "toy.gae.gae", "toy.gae.gae_table")


# -- questions and rubrics (toy.exercises.questions): the exercises without a function to write -------------------

# Ex. 4.5-rloo: RLOO's advantage of one response of a group (a), and the mean baseline's shortfall (c).
_HAND_TOL = 0.001


def _rloo_advantage(s):
    return float(estimators.advantages("rloo", np.array(s["rewards"]))[s["i"] - 1])


def _draw_rewards(rng):
    """n = 3..6 rewards with one decimal in [0, 1], and a response whose reward is not the group's mean."""
    n = int(rng.integers(3, 7))
    while True:
        rewards = tuple(round(float(k) / 10, 1) for k in rng.integers(0, 11, size=n))
        i = int(rng.integers(1, n + 1))
        if abs(rewards[i - 1] - np.mean(rewards)) > 0.05:
            return {"rewards": rewards, "i": i}


def _rloo_mistakes(s):
    r, i = np.array(s["rewards"]), s["i"] - 1
    n, mean = len(r), float(r.mean())
    return [
        (r[i] - mean, "That is r_i − r̄, the mean baseline: RLOO's baseline leaves response i's own reward out."),
        (r[i] - (r.sum() - r[i]) / n, "The baseline is the mean of the other n − 1 rewards: divide their sum by "
                                      "n − 1."),
        ((n - 1) / n * (r[i] - mean), "The factor between RLOO's advantage and r_i − r̄ is upside down."),
    ]


question("ex-4-5-rloo-a", "ex-4-5-rloo",
         "Part (a) at work: a group of responses to one prompt has the rewards {rewards}. What is RLOO's advantage of "
         "response {i} (counting from 1)? (Three decimals.)",
         "number", _rloo_advantage, {"rewards": (0.2, 0.9, 0.4, 0.7, 0.3), "i": 2}, draw=_draw_rewards,
         tolerance=_HAND_TOL, mistakes=_rloo_mistakes)


def _mean_baseline_scale(s):
    """⟨E[g], ∇J⟩/‖∇J‖² of REINFORCE with the mean baseline, exactly, as section 4.5's cell measures it."""
    pi = TabularPolicy.from_policy(reference_policy())
    grad = estimators.exact_policy_gradient(pi, "sum_to_target", critic_free.PROMPT)
    mean, _ = estimators.gradient_moments("reinforce", pi, "sum_to_target", critic_free.PROMPT, s["n"])
    return float(mean @ grad / (grad @ grad))


def _scale_mistakes(s):
    n = s["n"]
    return [
        (1.0, "That is RLOO's multiple: you treated the mean baseline as if it were independent of y_i, as RLOO's "
              "is."),
        (n / (n - 1), "That multiple is above 1: the mean baseline would then lengthen the expected gradient "
                      "beyond ∇J."),
        (1 / n, "1/n is the weight of r_i inside r̄, not the multiple of ∇J that E[g] is."),
    ]


question("ex-4-5-rloo-b", "ex-4-5-rloo",
         "Part (c) at work: on the toy (π_ref, prompt 2, the sum-to-target reward), REINFORCE with the mean baseline "
         "samples groups of n = {n} responses. Its expected gradient E[g] is a multiple of ∇J: which multiple? (Three "
         "decimals, or a fraction.)",
         "number", _mean_baseline_scale, {"n": 4},
         draw=lambda rng: {"n": int(rng.choice([2, 3, 5, 6, 8, 10, 12, 16]))}, tolerance=0.005,
         mistakes=_scale_mistakes, practice=True)
rubric("ex-4-5-rloo",
       ("(a) writes the other rewards' sum as n r̄ − r_i and simplifies r_i − (n r̄ − r_i)/(n − 1) to "
        "n/(n − 1)(r_i − r̄)"
        " (split: 1 for the sum of the other rewards; 1 for the simplification)", 2),
       ("(b) the group's responses are independent, so b_i is independent of y_i and the expectation factors into "
        "E[b_i] E[∇ log π(y_i | x)]"
        " (split: 1 for the independence of b_i and y_i; 1 for the factored expectation)", 2),
       ("(b) shows the score has mean zero (Σ_y π ∇log π = ∇ Σ_y π = ∇1 = 0), so each term has the expectation of "
        "r_i ∇log π(y_i | x), which is ∇J: RLOO is unbiased"
        " (split: 1 for the score's zero mean; 1 for concluding that the expectation is ∇J)", 2),
       ("(c) by (a), r_i − r̄ = (n − 1)/n · A_i^RLOO in every group, so the mean-baseline estimate is (1 − 1/n) "
        "times RLOO's and E[g] = (1 − 1/n)∇J"
        " (split: 1 for the relation to RLOO's advantage from (a); 1 for E[g] = (1 − 1/n)∇J)", 2))


# Ex. 4.5-predict: the explorer's own sampled groups (prompt 2, π_ref) and GRPO's advantages of them.
_GROUP_TOL = 0.005
"""The prompts ask for two decimals (the explorer prints three); (n − 1)/√n, which leaves out GRPO's ε, is within
0.0015 of A₁."""
_EXPLORER = "In the explorer “Critic-free advantages beside exact credit”, with the method GRPO and the {reward} reward"


def _group_rewards(s, n):
    return critic_free.sample_group(s["reward"], s["group"])[1][:n]


def _lone_successes():
    """(reward, group, n1, n2): the first response is the only success among the first n2, and n1 < n2."""
    out = []
    for reward in ("sum_to_target", "first_token"):  # the 0/1 rewards
        for g in range(critic_free.N_GROUPS):
            r = critic_free.sample_group(reward, g)[1]
            alone = [n for n in critic_free.GROUP_SIZES if r[0] == 1 and r[1:n].sum() == 0]
            out += [(reward, g, n1, n2) for n2 in alone for n1 in alone if n1 < n2]
    return out


def _pair_groups():
    """(reward, group): the first two rewards differ."""
    return [(reward, g) for reward in REWARDS for g in range(critic_free.N_GROUPS)
            if len(set(critic_free.sample_group(reward, g)[1][:2])) == 2]


_LONE, _PAIRS = _lone_successes(), _pair_groups()
_BOOK_LONE = next(c for c in _LONE if c[0] == "sum_to_target" and c[2:] == (4, critic_free.N_MAX))
_BOOK_PAIR = next(g for reward, g in _PAIRS if reward == "sum_to_target")


def _lone_success_a1(s):
    return [float(estimators.advantages("grpo", _group_rewards(s, n))[0]) for n in (s["n1"], s["n2"])]


def _pair_advantages(s):
    return [float(a) for a in estimators.advantages("grpo", _group_rewards(s, 2))]


def _grpo_mistakes(s, sizes, first_only):
    """The same group's advantages with the population std, with RLOO's, and with the mean baseline alone."""
    pick = (lambda a: [a[0]]) if first_only else list
    pop, rloo, mean = [], [], []
    for n in sizes:
        r = _group_rewards(s, n)
        pop += pick((r - r.mean()) / (r.std() + estimators.GRPO_EPS))
        rloo += pick(estimators.advantages("rloo", r))
        mean += pick(estimators.advantages("reinforce", r))
    return [(pop, "That divides by the population standard deviation (dividing by n); GRPO's is the sample one, "
                  "dividing by n − 1."),
            (rloo, "Those are RLOO's advantages: set the method to GRPO."),
            (mean, "That is r_i − r̄ alone: GRPO also divides by the group's standard deviation.")]


def _draw_lone(rng):
    reward, group, n1, n2 = _LONE[int(rng.integers(len(_LONE)))]
    return {"reward": reward, "group": group, "n1": n1, "n2": n2}


def _draw_pair(rng):
    reward, group = _PAIRS[int(rng.integers(len(_PAIRS)))]
    return {"reward": reward, "group": group}


def _pair_mistakes(s):
    right = _pair_advantages(s)
    swapped = ([-a for a in right], "The signs are swapped: the response with the higher reward gets the positive "
                                    "advantage.")
    return [swapped, *_grpo_mistakes(s, (2,), first_only=False)]


question("ex-4-5-predict-a", "ex-4-5-predict",
         _EXPLORER + ", sampled group {group}: its first response is the only success among the first {n1} and "
         "among the first {n2}. Predict its advantage A₁ at group size n = {n1} and at n = {n2} (two decimals), then "
         "check.",
         "numbers", _lone_success_a1, dict(zip(("reward", "group", "n1", "n2"), _BOOK_LONE, strict=True)),
         draw=_draw_lone, labels=("A₁ at the smaller n", "A₁ at the larger n"), tolerance=_GROUP_TOL, predict=True,
         mistakes=lambda s: _grpo_mistakes(s, (s["n1"], s["n2"]), first_only=True), practice=True)
question("ex-4-5-predict-b", "ex-4-5-predict",
         _EXPLORER + ", group size n = 2 and sampled group {group}, whose two rewards differ: predict both "
         "advantages, A₁ and A₂ (two decimals), then check.",
         "numbers", _pair_advantages, {"reward": "sum_to_target", "group": _BOOK_PAIR}, draw=_draw_pair,
         labels=("A₁", "A₂"), tolerance=_GROUP_TOL, predict=True, mistakes=_pair_mistakes, practice=True)


# Ex. 4.5-lambda: GAE along one response by hand (a, b), and the explorer's last position (c).
_GAE_TOL = 0.005
"""Inputs with two decimals: every answer is exact to two decimals."""


def _gae_three(s):
    r, v = np.array(s["rewards"]), np.array(s["values"])
    return [float(gae.gae(r, v, 0.0)[0]), float(gae.gae(r, v, 1.0)[0]), float(gae.gae(r, v, s["lam"])[-1])]


def _draw_response_rewards(rng):
    """A small KL-like penalty on every token, a 0/1 score on the last one; values in [0, 1]; two decimals each."""
    rewards = np.round(rng.uniform(-0.1, 0.1, size=4), 2)
    rewards[-1] += float(rng.integers(0, 2))
    return {"rewards": tuple(round(float(a), 2) for a in rewards),
            "values": tuple(round(float(a), 2) for a in rng.uniform(0, 1, size=4)),
            "lam": float(rng.choice([0.5, 0.8, 0.9, 0.95]))}


def _gae_mistakes(s):
    r, v = np.array(s["rewards"]), np.array(s["values"])
    a0, a1, last = _gae_three(s)
    return [
        ([r[0] - v[0], a1, last], "At λ = 0, A₀ is the TD error δ₀, which adds the critic's value of the next state."),
        ([a0, r.sum(), last], "At λ = 1 the values telescope, but V̂(s₀) does not cancel."),
        ([a1, a0, last], "λ = 0 and λ = 1 are the wrong way round."),
        ([a0, a1, s["lam"] * last], "The last token has no later TD errors: λ multiplies nothing there."),
    ]


question("ex-4-5-lambda-a", "ex-4-5-lambda",
         "Parts (a) and (b) at work: GAE with γ = 1 along one response of 4 tokens, with per-token rewards r₀..r₃ = "
         "{rewards} and a critic's values V̂(s₀)..V̂(s₃) = {values} (V̂(s₄) = 0). Give A₀ at λ = 0, A₀ at λ = 1, and "
         "the last token's A₃ at λ = {lam}.",
         "numbers", _gae_three,
         {"rewards": (-0.03, 0.05, -0.02, 0.96), "values": (0.41, 0.57, 0.38, 0.72), "lam": 0.95},
         draw=_draw_response_rewards, labels=("A₀ at λ = 0", "A₀ at λ = 1", "A₃ at the given λ"), tolerance=_GAE_TOL,
         mistakes=_gae_mistakes)

_POSITIONS = tuple(f"token {t + 1}" for t in range(reference_policy().length))


def _still_position(s):
    """The position where the learned critic's GAE error is the same at λ = 0 and at λ = 1 (the explorer's
    default critic, last-token features and 256 responses); the exact V's error is 0 there at every λ."""
    ends = [critic_free.critic_errors_per_seed(s["reward"], "last_token", 256, lam).mean(axis=0)
            for lam in (0.0, 1.0)]
    (t,) = np.flatnonzero(np.isclose(*ends, rtol=0, atol=1e-12))
    return _POSITIONS[t]


question("ex-4-5-lambda-b", "ex-4-5-lambda",
         "Part (c): in the explorer “With a critic, and without one”, with the {reward} reward and the other "
         "controls at their defaults, at which position do the two GAE bars of the lower panel (learned critic, "
         "exact V) stay where they are as the λ slider moves?",
         "choice", _still_position, {"reward": "sum_to_target"}, options=_POSITIONS,
         option_hints={i: "GAE at this position adds the later tokens' TD errors, weighted by powers of λ: it moves "
                          "with λ." for i in range(len(_POSITIONS) - 1)}, practice=True)

_BAR_TOL = 0.0002
"""The bar's value shows to four decimals when pointed at."""


def _critic_bars(s):
    """The learned critic's GAE bars, E[(Â_t − A_t)²] per position: the mean over the explorer's critics (seeds)."""
    return critic_free.critic_errors_per_seed(s["reward"], s["features"], s["n_data"], s["lam"]).mean(axis=0)


def _critic_mistakes(s):
    bars = _critic_bars(s)
    critic_free_bar = exact.credit_by_position(reference_policy(), s["reward"], critic_free.PROMPT)[1][-1]
    return [
        (0.0, "That is the error of GAE with the exact V there; the question asks for the learned critic's."),
        (float(bars.sum()), "That is the learned critic's error summed over the four positions (the title): the "
                            "question asks for one bar."),
        (float(critic_free_bar), "That is the critic-free r − V(x) bar."),
    ]


question("ex-4-5-lambda-c", "ex-4-5-lambda",
         "Part (c) on the explorer “With a critic, and without one”: with the {reward} reward, critic features "
         "{features}, {n_data} training responses for the critic and λ = {lam}, what error E[(Â_t − A_t)²] does the "
         "learned critic's GAE bar show at the position that stays where it is as λ moves? (Four decimals, as the bar "
         "shows it when you point at it.)",
         "number", lambda s: float(_critic_bars(s)[-1]),
         {"reward": "sum_to_target", "features": "last_token", "n_data": 256, "lam": 0.95},
         draw=lambda rng: {"reward": str(rng.choice(sorted(REWARDS))), "features": str(rng.choice(sorted(FEATURES))),
                           "n_data": int(rng.choice(critic_free.CRITIC_DATA)),
                           "lam": float(rng.choice(critic_free.LAMBDAS))},
         tolerance=_BAR_TOL, mistakes=_critic_mistakes)
rubric("ex-4-5-lambda",
       ("(a) at λ = 1 sums the TD errors and telescopes the values, using V̂(s_L) = 0, to Σ_{u≥t} r_u − V̂(s_t)"
        " (split: 1 for summing the TD errors; 1 for the telescoped values with V̂(s_L) = 0)", 2),
       ("(a) at λ = 0 only the l = 0 term is left: δ_t", 1),
       ("(b) after the last token there are no more terms: A_{L−1} = δ_{L−1} = r_{L−1} − V̂(s_{L−1}), with no λ in it"
        " (split: 1 for no later terms; 1 for the one-step difference with no λ)",
        2),
       ("(c) names the last position (token 4): with the exact V its error is 0 at every λ, and the learned critic's "
        "error there is that of V̂(s_3) alone, the same at every λ"
        " (split: 1 for naming token 4; 1 for why both its bars stay put)", 2))
