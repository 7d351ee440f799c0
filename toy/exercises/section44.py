"""Section 4.4's checked exercises: the behaviour-cloning cost, and SFT's next-token probabilities by counting."""

from __future__ import annotations

import numpy as np

from .. import imitation, sft
from ..exact import value
from ..page.explorers import pipeline
from ..policy import reference_policy
from ..rewards import sum_to_target
from ..vocab import PROMPTS, VOCAB_SIZE
from .questions import question, rubric
from .registry import Case, allow, forbid, random_setting, register


def _bc_cases(rng):
    """Edge values first (no mistakes, a mistake every step, one step), then ε log-uniform on 1e-5..0.9."""
    settings = [(0.0, 1), (0.0, 300), (1.0, 1), (1.0, 50), (0.5, 1), (1e-6, 1000)]
    for _ in range(10):
        eps = float(np.round(10 ** rng.uniform(-5, np.log10(0.9)), 6))
        horizon = int(np.round(10 ** rng.uniform(0, 3)))
        settings.append((eps, horizon))
    return [Case((eps, horizon), f"ε = {eps:g}, T = {horizon}") for eps, horizon in settings]


def _unvisited_prefix(rng, demos, depth):
    """A prefix of the given depth (>= 1) that no demonstration passes through, if there is one."""
    seen = {tuple(int(a) for a in y[:depth]) for y in demos}
    free = [p for p in np.ndindex(*(VOCAB_SIZE,) * depth) if p not in seen]
    pick = free[int(rng.integers(len(free)))] if free else demos[0, :depth]
    return tuple(int(a) for a in pick)


def _sft_cases(rng, n=12):
    """Demonstration sets of 1 to 64 responses (sampled from the base, or arbitrary), prefixes that some
    demonstration visits and prefixes that none does, prior strengths α from 0 (pure maximum likelihood) to 1e4."""
    cases = []
    for i in range(n):
        preset, temperature, length = random_setting(rng, length=int(rng.integers(2, 5)) if i in (2, 7) else None)
        base = reference_policy(preset, temperature, length)
        prompt = int(rng.choice(PROMPTS))
        n_demos = int(rng.choice([1, 2, 5, 20, 64]))
        if rng.random() < 0.7:
            demos = base.sample(prompt, n_demos, rng)
        else:
            demos = rng.integers(0, VOCAB_SIZE, size=(n_demos, length))
        demos = np.asarray(demos, dtype=int)
        if i == 1:  # every demonstration the same: maximum likelihood puts all the mass on one token
            demos = np.repeat(demos[:1], n_demos, axis=0)
        depth = int(rng.integers(1 if i in (2, 7) else 0, length))
        if i in (2, 7) or (i > 3 and rng.random() < 0.3):  # a prefix no demonstration visits (keeps the base)
            prefix = _unvisited_prefix(rng, demos, depth) if depth else ()
        else:  # a prefix some demonstration passes through
            prefix = tuple(int(a) for a in demos[int(rng.integers(n_demos)), :depth])
        alpha = 0.0 if i < 3 else [0.0, 0.1, 1.0, 10.0, 1e4][int(rng.integers(5))]
        visits = int(np.all(demos[:, :depth] == np.array(prefix, dtype=int), axis=1).sum())
        cases.append(Case((demos, base, prompt, prefix, alpha),
                          f"{n_demos} demonstration(s) of shape {demos.shape} for prompt {prompt} (first one "
                          f"{tuple(int(a) for a in demos[0])}), base {base!r}, prefix {prefix} "
                          f"(N(s) = {visits}), α = {alpha:g}"))
    return cases


def _sft_reference(demos, base, prompt, prefix, alpha):
    probs = sft.fit_sft({prompt: demos}, base, alpha).next_token_probs(prompt, prefix)
    return np.where(probs < 1e-300, 0.0, probs)  # fit_sft stores a zero count as the smallest float: show it as 0


# Exercise 22(b)'s closed form T − ((1 − ε)/ε)·[1 − (1 − ε)^T] is correct but loses digits: rounding 1 − ε (by up to
# 2^-53) moves (1 − ε)^T by T·2^-53 and the answer by T·2^-53/ε, up to 2.2e-7 of J_BC ≈ εT²/2 at ε = 1e-6, T = 1000
# (2.9e-8 off there in practice). A relative 1e-6 lets every correct formula pass; a wrong one is off by far more.
BC_RTOL = 1e-6
register("4.4-bc-cost", "the expected cost of behaviour cloning", _bc_cases, imitation.behaviour_cloning_cost,
         rtol=BC_RTOL)
register("4.4-sft-counts", "SFT's next-token probabilities by counting", _sft_cases, _sft_reference, kind="array")

allow("4.4-bc-cost", "nothing of toy but its constants")
allow("4.4-sft-counts", "the base policy's next-token probabilities", "policy.next_token_probs")

forbid("4.4-bc-cost", "J_BC(T) summed step by step", "toy.imitation.behaviour_cloning_cost",
       "toy.imitation.cost_curves")
forbid("4.4-sft-counts", "SFT's probabilities by counting", "toy.sft.fit_sft")


# -- questions and rubrics (toy.exercises.questions): the exercises without a function to write -------------------

# Ex. 4.4-closed-form: J_BC(T) at one (ε, T), from the closed form of part (b).
_BC_TOL = 0.002


def _bc(eps, T):
    return imitation.behaviour_cloning_cost(eps, T)


def _bc_mistakes(s):
    eps, T = s["eps"], s["T"]
    q = 1 - eps
    return [
        (imitation.quadratic_approximation(eps, T), "That is the approximation εT(T+1)/2, which overshoots once εT is "
                                                    "no longer small: sum the series exactly."),
        (T - q / eps, "That drops (1 − ε)^T, which is not negligible at this horizon."),
        (T - (1 - q**T) / eps, "Your geometric sum starts at t = 0, or lacks its factor 1 − ε: the steps run t = 1..T, "
                               "so the sum of (1 − ε)^t starts with 1 − ε."),
        (imitation.dagger_cost(eps, T), "That is DAgger's cost εT: behaviour cloning keeps paying after its first "
                                        "mistake."),
    ]


question("ex-4-4-closed-form", "ex-4-4-closed-form",
         "Part (b) at work: a learner that goes wrong with probability ε = {eps} at each step of the expert's path "
         "and never recovers. What is its expected cost J_BC(T) over T = {T} steps? (Three decimals.)",
         "number", lambda s: _bc(s["eps"], s["T"]), {"eps": 0.05, "T": 20},
         draw=lambda rng: {"eps": float(rng.choice([0.01, 0.02, 0.03, 0.05, 0.1, 0.2])),
                           "T": int(rng.choice([10, 15, 20, 25, 30, 40, 50]))},
         tolerance=_BC_TOL, mistakes=_bc_mistakes)
rubric("ex-4-4-closed-form",
       ("(a) the learner is still on the path at step t only if none of its t independent steps went wrong, "
        "probability (1 − ε)^t; its cost at step t is 1 exactly when off the path, and by linearity the expected "
        "total is the sum over t"
        " (split: 1 for the probability (1 − ε)^t of being on the path; 1 for the expected total by "
        "linearity)", 2),
       ("(a) DAgger pays at step t only for a mistake at that step, probability ε whatever happened before: εT", 1),
       ("(b) sums the geometric series with q = 1 − ε, Σ_{t=1..T} q^t = q(1 − q^T)/(1 − q), and subtracts it from T"
        " (split: 1 for the geometric sum; 1 for J_BC(T) = T minus it)",
        2),
       ("(c) small εT: (1 − ε)^t ≈ 1 − tε gives εT(T+1)/2, so the ratio to DAgger is about (T+1)/2 and grows with "
        "the horizon"
        " (split: 1 for εT(T+1)/2; 1 for the ratio (T+1)/2 and its growth with T)", 2),
       ("(c) (1 − ε)^T negligible: J_BC ≈ T − (1 − ε)/ε, so the ratio approaches 1/ε from below and grows no "
        "further (no learner pays more than once per step)"
        " (split: 1 for T − (1 − ε)/ε; 1 for the ratio's ceiling 1/ε)", 2))

# Ex. 4.4-predict: pairs (ε, T) on the explorer's grids, one in each regime of part (c). Small εT: εT ≤ 0.2, with
# (T + 1)/2 off by more than the title's last digit (εT² ≥ 0.6); negligible (1 − ε)^T: below 1e-3, ε ≤ 0.2.
_SMALL_ET = [(e, T) for e in pipeline.EPSILONS for T in pipeline.HORIZONS if T >= 10 and e * T <= 0.2
             and e * T * T >= 0.6]
_LARGE_ET = [(e, T) for e in pipeline.EPSILONS for T in pipeline.HORIZONS if e <= 0.2 and (1 - e) ** T < 1e-3]
_RATIO_TOL = 0.05
"""The explorer's title prints the ratio to one decimal."""


def _ratio(eps, T):
    """J_BC(T) / J_DAgger(T), as the explorer's title prints it."""
    return imitation.behaviour_cloning_cost(eps, T) / imitation.dagger_cost(eps, T)


def _two_ratios(s):
    return [_ratio(s["eps_small"], s["T_small"]), _ratio(s["eps_big"], s["T_big"])]


def _draw_regimes(rng):
    (e1, T1), (e2, T2) = (pair[int(rng.integers(len(pair)))] for pair in (_SMALL_ET, _LARGE_ET))
    return {"eps_small": e1, "T_small": int(T1), "eps_big": e2, "T_big": int(T2)}


def _part_c(s):
    """The prediction the exercise prescribes: part (c)'s approximations, (T + 1)/2 at small εT and
    (T − (1 − ε)/ε)/(εT) where (1 − ε)^T is negligible. The note gives the exact ratios and why they differ."""
    right = _two_ratios(s)
    e1, T1, e2, T2 = s["eps_small"], s["T_small"], s["eps_big"], s["T_big"]
    approx = [(T1 + 1) / 2, (T2 - (1 - e2) / e2) / (e2 * T2)]
    left_out = (1 - e2) ** (T2 + 1) / e2
    return [(approx, f"Part (c) predicts {approx[0]:.2f} and {approx[1]:.2f}; the exact ratios, in the title, are "
                     f"{right[0]:.2f} and {right[1]:.2f}. (T + 1)/2 overshoots because 1 − (1 − ε)^t falls short of "
                     f"tε by about (tε)²/2, which grows with εT ({e1 * T1:g} here); T − (1 − ε)/ε leaves out "
                     f"(1 − ε)^(T+1)/ε, {left_out:.1e} steps here.")]


def _regime_mistakes(s):
    right = _two_ratios(s)
    e1, T1, e2, T2 = s["eps_small"], s["T_small"], s["eps_big"], s["T_big"]
    return [
        ([right[0], 1 / e2], "The second ratio is the ceiling 1/ε, which the ratio only approaches from below."),
        ([1 / r for r in right], "Upside down: the title gives behaviour cloning's cost over DAgger's."),
        ([_bc(e1, T1), _bc(e2, T2)], "Those are behaviour cloning's costs: the question asks for their ratio to "
                                     "DAgger's."),
    ]


question("ex-4-4-predict", "ex-4-4-predict",
         "In the explorer “Compounding errors: behaviour cloning against DAgger”, the title gives the ratio "
         "J_BC(T)/J_DAgger(T) of the two costs, to one decimal. Predict it with part (c) of the previous exercise, "
         "then set the two sliders and check: first at ε = {eps_small} and T = {T_small}, then at ε = {eps_big} and "
         "T = {T_big}.",
         "numbers", _two_ratios, {"eps_small": 0.001, "T_small": 40, "eps_big": 0.1, "T_big": 320},
         draw=_draw_regimes, labels=("ratio at small εT", "ratio at large εT"), tolerance=_RATIO_TOL, predict=True,
         mistakes=_regime_mistakes, accepted=_part_c)


# Ex. 4.4-sft-empirical: a few demonstrations written out, some repeated, and the α = 0 SFT policy fitted to them.
_SFT_TOL = 0.005
_SFT_DEMOS = {"prompt": 2, "response": (1, 2, 3, 1),
              "demos": ((1, 2, 3, 1), (0, 4, 4, 0), (1, 2, 3, 1), (3, 0, 4, 1), (1, 2, 3, 1), (1, 4, 2, 0))}
_SFT_PROMPT = ("SFT with α = 0 (pure maximum likelihood) is fitted to these demonstrations for prompt {prompt}: "
               "{demos}. ")


def _sft_pure(s):
    demos = {s["prompt"]: np.array(s["demos"], dtype=int)}
    return sft.fit_sft(demos, reference_policy(), prior_strength=0.0)


def _response_prob(s):
    return float(_sft_pure(s).response_probs(s["prompt"])[tuple(s["response"])])


def _sft_reward(s):
    return value(_sft_pure(s), "sum_to_target", s["prompt"])


def _draw_demos(rng):
    """3 or 4 distinct responses, each demonstrated 1 to 3 times, in a shuffled order, at least one of them right and
    one wrong under the sum-to-target reward; y: the most repeated."""
    prompt, k = int(rng.choice(PROMPTS)), int(rng.integers(3, 5))
    while True:
        distinct = set()
        while len(distinct) < k:
            distinct.add(tuple(int(a) for a in rng.integers(0, VOCAB_SIZE, size=4)))
        if len({sum_to_target(prompt, y) for y in distinct}) == 2:
            break
    distinct = sorted(distinct)
    counts = rng.integers(1, 4, size=len(distinct))
    demos = [y for y, c in zip(distinct, counts, strict=True) for _ in range(int(c))]
    order = rng.permutation(len(demos))
    return {"prompt": prompt, "demos": tuple(demos[i] for i in order),
            "response": distinct[int(np.argmax(counts))]}


def _probability_mistakes(s):
    demos, y = np.array(s["demos"]), s["response"]
    per_position = float(np.prod([(demos[:, t] == a).mean() for t, a in enumerate(y)]))
    return [
        (per_position, "That multiplies how often each token stands at its position among all the demonstrations: "
                       "N(s·a)/N(s) counts only those that begin with the prefix s."),
        (1 / len(demos), "N(y) counts every demonstration equal to y, not just one."),
    ]


def _reward_mistakes(s):
    distinct = set(s["demos"])
    return [
        (float(np.mean([sum_to_target(s["prompt"], y) for y in distinct])),
         "You counted each distinct response once: a response demonstrated twice has twice the probability."),
        (1 - _sft_reward(s), "That is the share of wrong demonstrations."),
    ]


question("ex-4-4-sft-empirical-a", "ex-4-4-sft-empirical",
         _SFT_PROMPT + "What probability π_SFT(y | x) does it give the response y = {response}? (Three "
         "decimals, or a fraction.)",
         "number", _response_prob, _SFT_DEMOS, draw=_draw_demos, tolerance=_SFT_TOL, mistakes=_probability_mistakes,
         practice=True)
question("ex-4-4-sft-empirical-b", "ex-4-4-sft-empirical",
         _SFT_PROMPT + "What is its expected reward E[r] on this prompt under the sum-to-target reward (1 when the "
         "tokens sum to the prompt's digit mod 5, else 0)? (Three decimals, or a fraction.)",
         "number", _sft_reward, _SFT_DEMOS, draw=_draw_demos, tolerance=_SFT_TOL, mistakes=_reward_mistakes,
         practice=True)
rubric("ex-4-4-sft-empirical",
       ("(a) writes π(y | x) as the product over t of the count ratios N(y_≤t)/N(y_<t)", 1),
       ("(a) shows the product telescopes to N(y)/N(∅) = N(y)/n, since every demonstration begins with the empty "
        "prefix"
        " (split: 1 for the telescoping product; 1 for N(∅) = n)", 2),
       ("(a) treats a response no demonstration equals: the first prefix no demonstration begins with has count 0, "
        "so the product is 0 = N(y)/n", 1),
       ("(b) E[r] = Σ_y (N(y)/n) r(x, y) = (1/n) Σ_i r(x, y_i), the mean reward of the demonstrations, whatever the "
        "reward"
        " (split: 1 for the sum over responses; 1 for the mean reward of the demonstrations)", 2),
       ("(c) the demonstrations are the expert's samples, so their fraction of correct ones has expectation ρ; more "
        "of them only shrink its scatter, and doing better needs feedback on responses the expert did not write"
        " (split: 1 for the expectation ρ; 1 for why more demonstrations cannot do better)", 2))
