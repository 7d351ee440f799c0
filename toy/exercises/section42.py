"""Section 4.2's checked exercises: the KL-regularised optimum, waiting for a first success, and the error of a
Monte Carlo value from resets."""

from __future__ import annotations

import functools

import numpy as np

from .. import exploration, kl, resets, reward_models
from ..page.explorers import easy_hard
from ..policy import reference_policy
from ..rewards import REWARDS
from ..vocab import PROMPTS, VOCAB_SIZE
from .questions import question, rubric
from .registry import Case, allow, forbid, random_setting, register

KL_OVERFLOW_SETTINGS = (("pretrained", 1.0, 4, "sum_to_target", 2, 0.001),
                        ("knows_task", 0.5, 3, "count_target", 1, 0.002))
"""The kl-optimum exercise's first hidden cases: β so small that r/β (1,000 and 1,500) overflows exp in float64, so
an answer that does not subtract the largest reward before exponentiating returns inf / inf = nan there and fails."""


def _kl_optimum_cases(rng):
    """The overflow cases first (``KL_OVERFLOW_SETTINGS``), then random settings with β log-uniform on 0.05..10."""
    cases = []
    for preset, temperature, length, name, prompt, beta in KL_OVERFLOW_SETTINGS:
        policy = reference_policy(preset, temperature, length)
        cases.append(Case((policy, REWARDS[name], prompt, beta),
                          f"policy {policy!r}, reward {name}, prompt {prompt}, β = {beta} (exp(r/β) overflows "
                          "unless the largest reward is subtracted first)"))
    for _ in range(8):
        preset, temperature, length = random_setting(rng, length=int(rng.integers(1, 4)))
        policy = reference_policy(preset, temperature, length)
        prompt = int(rng.choice(PROMPTS))
        beta = float(np.round(10 ** rng.uniform(-1.3, 1), 3))
        name = str(rng.choice(sorted(REWARDS)))
        cases.append(Case((policy, REWARDS[name], prompt, beta),
                          f"policy {policy!r}, reward {name}, prompt {prompt}, β = {beta}"))
    return cases


def _first_success_cases(rng):
    """Edge values first (n = 0; n = 1, where the answer is p itself; priors that almost never and almost always
    succeed, with n from 1 to 10^6), then random settings with n log-uniform on 1..1,000."""
    settings = [("uniform", 1.0, 1, "first_token", 3, 0), ("uniform", 1.0, 1, "first_token", 3, 1),
                ("confidently_wrong", 0.1, 4, "sum_to_target", 2, 1_000_000),
                ("confidently_wrong", 0.316, 4, "sum_to_target", 2, 24_300),
                ("terse", 0.3, 4, "sum_to_target", 4, 1000),
                ("knows_task", 0.1, 4, "sum_to_target", 3, 1), ("pretrained", 0.1, 4, "sum_to_target", 0, 1),
                ("pretrained", 0.1, 4, "sum_to_target", 0, 1000), ("knows_task", 1.0, 4, "count_target", 1, 7)]
    for _ in range(8):
        preset, temperature, length = random_setting(rng)
        settings.append((preset, temperature, length, str(rng.choice(sorted(REWARDS))), int(rng.choice(PROMPTS)),
                         int(np.round(10 ** rng.uniform(0, 3)))))
    cases = []
    for preset, temperature, length, name, prompt, n in settings:
        policy = reference_policy(preset, temperature, length)
        cases.append(Case((policy, REWARDS[name], prompt, n),
                          f"policy {policy!r}, reward {name}, prompt {prompt}, n = {n:,}"))
    return cases


def _first_success_reference(policy, reward, prompt, n):
    return float(exploration.first_success_cdf(exploration.success_probability(policy, reward, prompt), n))


def _reset_cases(rng):
    """Edge values first (a complete prefix, and first_token after its first token, leave nothing to chance), then
    random incomplete prefixes from empty to one token short, every reward, K from 1 to 1,000."""
    plan = [("pretrained", 1.0, 4, "sum_to_target", 2, (1, 2), 9), ("uniform", 1.0, 4, "sum_to_target", 0, (), 1),
            ("pretrained", 1.0, 3, "count_target", 1, (1, 1, 0), 4), ("knows_task", 1.0, 4, "first_token", 0, (0,), 16),
            ("confidently_wrong", 0.5, 4, "sum_to_target", 1, (2,), 9), ("terse", 2.0, 3, "count_target", 4, (), 64),
            ("pretrained", 10.0, 4, "sum_to_target", 2, (1, 2, 3), 9)]
    for _ in range(9):  # prefixes with something left to chance
        preset, temperature, length = random_setting(rng)
        depth = int(rng.integers(0, length))
        prefix = tuple(int(a) for a in rng.integers(0, VOCAB_SIZE, size=depth))
        name = str(rng.choice(sorted(REWARDS) if depth == 0 else ["count_target", "sum_to_target"]))
        plan.append((preset, temperature, length, name, int(rng.choice(PROMPTS)), prefix,
                     int(rng.choice([1, 2, 9, 64, 1000]))))
    cases = []
    for preset, temperature, length, name, prompt, prefix, k in plan:
        policy = reference_policy(preset, temperature, length)
        cases.append(Case((policy, REWARDS[name], prompt, prefix, k),
                          f"policy {policy!r}, reward {name}, prompt {prompt}, prefix {prefix}, K = {k}"))
    return cases


def _reset_reference(policy, reward, prompt, prefix, k):
    return resets.value_and_variance(policy, reward, prompt, prefix)[1] / k


register("4.2-kl-optimum", "the KL-regularised optimum over whole responses", _kl_optimum_cases,
         lambda policy, reward, prompt, beta: kl.kl_regularised_optimum(policy, reward, beta).response_probs(prompt),
         kind="array")
register("4.2-first-success", "the chance of a rewarded sample among the first n", _first_success_cases,
         _first_success_reference)
register("4.2-reset-mse", "the mean squared error of a Monte Carlo value from K resets", _reset_cases,
         _reset_reference)

allow("4.2-reset-mse", "a policy's next-token probabilities and the reward", "policy.next_token_probs", "reward")
allow("4.2-first-success", "a policy's response probabilities and the rewards (toy.reward_table, or the reward "
      "itself)", "policy.response_probs", "toy.reward_table", "reward")
allow("4.2-kl-optimum", "a policy's response probabilities and the rewards (toy.reward_table, or the reward "
      "itself)", "policy.response_probs", "toy.reward_table", "reward")

forbid("4.2-reset-mse", "Var[r | s] / K by backward induction", "toy.resets.value_and_variance",
       "toy.exact.return_variances", "toy.value", "toy.values")
forbid("4.2-first-success", "p from the rewarded responses, then the geometric law",
       "toy.exploration.first_success_cdf", "toy.exploration.success_probability")
forbid("4.2-kl-optimum", "π* computed from π_ref and the rewards", "toy.kl.kl_regularised_optimum")


# -- questions and rubrics (toy.exercises.questions): the exercises without a function to write -------------------
# A student's setting is drawn on the grid of the explorer it is read from, with the explorer's own constants
# (toy/page/explorers/easy_hard.py): the temperature sliders, the resets explorer's states and K, the Goodhart
# explorer's comparisons and sets, the β sliders, the reward menus' names.

_X = 2  # the prompt of the section's explorers (their default argument; tests/test_questions.py checks it)
_BINARY = tuple(easy_hard.REWARD_LABELS[r] for r in ("sum_to_target", "first_token"))  # 0/1 rewards, menu names
_REWARD_OF = {label: name for name, label in easy_hard.REWARD_LABELS.items()}
_SETS = {int(label): seed for seed, label in easy_hard.DATASETS.items()}  # the Goodhart explorer's set → its seed


def _reset_variance(s):
    """Var[r | s] at the state the resets explorer resets to (pretrained π_ref at τ, prompt 2, sum reward)."""
    return resets.value_and_variance(reference_policy("pretrained", s["temperature"]), "sum_to_target", _X,
                                     s["prefix"])[1]


def _reset_error(s):
    return np.sqrt(_reset_variance(s) / 9)


def _reset_mistakes(s):
    var = _reset_variance(s)
    ks = easy_hard.RESET_KS
    measured = resets.reset_estimates(reference_policy("pretrained", s["temperature"]), "sum_to_target", _X,
                                      s["prefix"], ks, easy_hard.RESET_REPEATS, rng=0).rmse[ks.index(9)]
    return [(measured, "That is the error measured over 20 seeded repeats: the question asks for the exact one."),
            (np.sqrt(var), "That is one rollout's standard deviation: nine rollouts average it down."),
            (var / 9, "That is the mean squared error: the error in the title is its square root."),
            (np.sqrt(var) / 9, "Averaging K rollouts divides the standard deviation by √K, not by K.")]


_UNIFORM_AT = 10.0
"""The temperature at which the prompt lets the reader take the tokens left as uniform (the slider's hottest)."""


def _reset_uniform(s):
    """The prediction the exercise prescribes at τ = 10: the tokens left taken as uniform, so the sum hits the target
    with probability 1/5 and the error is √((1/5)(4/5)/9) = 2/15; the note gives the exact value and why it differs."""
    if s["temperature"] != _UNIFORM_AT:
        return []
    p = resets.value_and_variance(reference_policy("pretrained", s["temperature"]), "sum_to_target", _X,
                                  s["prefix"])[0]
    return [(np.sqrt(0.2 * 0.8 / 9),
             f"Uniform tokens give 2/15 = 0.1333; exactly, the error is {_reset_error(s):.4f}: at τ = 10 the tokens "
             f"left are close to uniform but not quite, so the reward is 1 with probability {p:.4f}, not 1/5.")]


def _uniform_hint(temperature: float) -> str:
    """The prompt's licence to take the tokens left as uniform: only at τ = 10, where it is close (at τ = 0.32 the
    uniform answer is off by about 0.1)."""
    return " (at τ = 10 you may take the tokens left as uniform)" if temperature == _UNIFORM_AT else ""


def _draw_reset(rng):
    prefix = tuple(easy_hard.PREFIXES)[int(rng.integers(len(easy_hard.PREFIXES)))]
    temperature = float(rng.choice(easy_hard.RESET_TEMPERATURES[1:]))
    return {"prefix": prefix, "state": easy_hard.PREFIXES[prefix], "temperature": temperature,
            "uniform_hint": _uniform_hint(temperature)}


question("ex-4-2-resets", "ex-4-2-resets",
         "In the explorer Resetting is free (prompt 2, sum reward, pretrained π_ref), reset to the state {state} and "
         "set τ = {temperature:.3g}. Predict the error of the value estimated from K = 9 rollouts, √(Var[r | s] / K)"
         "{uniform_hint}, then read the exact one in the title (the figure in brackets).",
         "number", _reset_error,
         {"prefix": (1, 2, 3), "state": easy_hard.PREFIXES[(1, 2, 3)],
          "temperature": easy_hard.RESET_TEMPERATURES[-1],
          "uniform_hint": _uniform_hint(easy_hard.RESET_TEMPERATURES[-1])},
         draw=_draw_reset, tolerance=0.001, predict=True, mistakes=_reset_mistakes, accepted=_reset_uniform,
         practice=True)


@functools.lru_cache(maxsize=16)
def _lowest_ratio(prompt: int) -> tuple[float, float, float]:
    """(τ on the slider's grid where the noise-to-signal ratio with baseline V(x) is lowest, that ratio, the ratio at
    τ = 0.1) for the pretrained π_ref and the sum reward, as the prior explorer computes them."""
    ratios = [exploration.gradient_moments(reference_policy("pretrained", t), "sum_to_target", prompt,
                                           "value").noise_to_signal for t in easy_hard.TEMPERATURES]
    i = int(np.argmin(ratios))
    return easy_hard.TEMPERATURES[i], ratios[i], ratios[0]


_PRIOR_COLDER = ("the first prompt", "the second prompt", "both at the same temperature")
_FINE_TEMPERATURES = tuple(float(t) for t in np.logspace(-1, 1, 201))
"""Temperatures between the slider's stops, finer than the explorer's curve: where the ratio is lowest exactly."""


@functools.lru_cache(maxsize=64)
def _coldest_lowest(prompt: int, temperatures: tuple) -> float:
    """The temperature, among ``temperatures``, where the prior explorer's noise-to-signal ratio with baseline V(x)
    is lowest (pretrained π_ref, sum reward)."""
    ratios = [exploration.gradient_moments(reference_policy("pretrained", t), "sum_to_target", prompt,
                                           "value").noise_to_signal for t in temperatures]
    return temperatures[int(np.argmin(ratios))]


def _colder(first: int, second: int, temperatures: tuple) -> str:
    a, b = _coldest_lowest(first, temperatures), _coldest_lowest(second, temperatures)
    return _PRIOR_COLDER[0 if a < b else 1 if b < a else 2]


def _prior_colder(s):
    """The answer read on the slider's stops, which is also what the explorer's curve (drawn between the stops) and
    the exact ratio between them show: a pair of prompts where these differ is no question (``_prior_pairs``)."""
    answers = {_colder(s["first"], s["second"], grid)
               for grid in (easy_hard.TEMPERATURES, easy_hard.PRIOR_CURVE, _FINE_TEMPERATURES)}
    if len(answers) != 1:
        raise ValueError(f"prompts {s['first']} and {s['second']}: the slider, the curve and the exact ratio disagree "
                         f"on which is lowest at the colder temperature ({sorted(answers)})")
    return answers.pop()


@functools.lru_cache(maxsize=1)
def _prior_pairs() -> tuple[tuple[int, int], ...]:
    """The ordered pairs of prompts whose ex-4-2-prior-a answer is the same on the slider's stops, on the drawn curve
    and between them: where prompt 3's curve dips below its stops at τ = 0.237 (against 0 and 1), or two prompts
    share a stop but not the exact minimum (0 and 1, 2 and 4), the question would have two answers."""
    pairs = []
    for first in PROMPTS:
        for second in PROMPTS:
            if first != second and len({_colder(first, second, grid) for grid in (
                    easy_hard.TEMPERATURES, easy_hard.PRIOR_CURVE, _FINE_TEMPERATURES)}) == 1:
                pairs.append((int(first), int(second)))
    return tuple(pairs)


def _prior_lowest(s):
    return [*_lowest_ratio(s["first"])[:2], *_lowest_ratio(s["second"])[:2]]


_PRIOR_COLD = ("both: almost no sample is rewarded, so the samples carry no signal",
               "both: almost every sample is rewarded, so ∇J is nearly zero",
               "the first: almost no sample rewarded; the second: almost every one",
               "the first: almost every sample rewarded; the second: almost none")


def _prior_cold(s):
    rewarded = []
    for prompt in (s["first"], s["second"]):
        if _lowest_ratio(prompt)[2] <= _lowest_ratio(prompt)[1]:
            raise ValueError(f"the ratio for prompt {prompt} does not climb at τ = 0.1")
        p = exploration.success_probability(reference_policy("pretrained", 0.1), "sum_to_target", prompt)
        rewarded.append(p > 0.5)
    return _PRIOR_COLD[{(False, False): 0, (True, True): 1, (False, True): 2, (True, False): 3}[tuple(rewarded)]]


def _prior_tolerance(s):
    """τ: within the slider's grid's rounding; a ratio: to one decimal (the title's), or to three significant
    figures when that is coarser (a ratio of 124.3 may be read as 124)."""
    ratio_tol = [max(0.05, 0.5 * 10 ** (np.floor(np.log10(r)) - 2)) for r in _prior_lowest(s)[1::2]]
    return [0.05, ratio_tol[0], 0.05, ratio_tol[1]]


def _prior_mistakes(s):
    return [(_prior_lowest(s)[2:] + _prior_lowest(s)[:2], "The two prompts are swapped.")]


def _draw_prompts(rng):
    """Two prompts whose answers are unambiguous (``_prior_pairs``): the same pair for the exercise's three
    questions."""
    first, second = _prior_pairs()[int(rng.integers(len(_prior_pairs())))]
    return {"first": first, "second": second}


_PRIOR = "In the explorer A strong prior (π_ref = pretrained, sum reward), compare prompt {first} (the first) with " \
         "prompt {second} (the second) on the temperature slider. "
question("ex-4-2-prior-a", "ex-4-2-prior",
         _PRIOR + "Which reaches its lowest noise-to-signal ratio at the colder temperature?",
         "choice", _prior_colder, {"first": 0, "second": 2}, draw=_draw_prompts, options=_PRIOR_COLDER,
         option_hints={i: "Not that one: for each prompt, find the slider's temperature where the ratio in the title "
                          "is lowest, then compare the two temperatures." for i in range(3)},
         predict=True, practice=True)
question("ex-4-2-prior-b", "ex-4-2-prior",
         _PRIOR + "For each, the slider's temperature where the ratio is lowest, and that ratio (the title's "
                  "noise/signal, to one decimal or three significant figures).",
         "numbers", _prior_lowest, {"first": 0, "second": 2}, draw=_draw_prompts,
         labels=("τ (first prompt)", "lowest ratio (first prompt)", "τ (second prompt)",
                 "lowest ratio (second prompt)"), tolerance=_prior_tolerance, predict=True,
         mistakes=_prior_mistakes, practice=True)
question("ex-4-2-prior-c", "ex-4-2-prior",
         _PRIOR + "At τ = 0.1 both ratios climb above their lowest values. Why, for each prompt? (P(reward) is in "
                  "the title.)",
         "choice", _prior_cold, {"first": 0, "second": 2}, draw=_draw_prompts, options=_PRIOR_COLD,
         option_hints={i: "Not that one: read P(reward) at τ = 0.1 for each prompt." for i in range(4)},
         predict=True, practice=True)


@functools.lru_cache(maxsize=64)
def _goodhart_curve(features: str, comparisons: int, dataset: int):
    """The Goodhart explorer's curve: π*_β against a reward model fitted to ``comparisons`` comparisons of
    comparison set ``dataset`` (1 or 2, as the explorer's menu names them), at every β of its slider."""
    ref = reference_policy()
    proxy = reward_models.ProxyReward(ref, "sum_to_target", _X, comparisons, features=features, seed=_SETS[dataset])
    return reward_models.optimisation_curve(ref, proxy, "sum_to_target", _X, easy_hard.GOODHART_BETAS)


def _ends(s, end=lambda curve: curve.true[-1]):
    """Where the curves end (the smallest β): tabular with fewer and more comparisons, then additive."""
    return [float(end(_goodhart_curve(f, n, s["set"]))) for f in ("tabular", "additive")
            for n in (s["fewer"], s["more"])]


def _ends_mistakes(s):
    return [(_ends(s, lambda c: c.proxy[-1]), "Those are proxy rewards, what the optimiser sees: the question asks "
                                              "for the true reward."),
            (_ends(s, lambda c: c.true.max()), "Those are the best true rewards along each curve: the question asks "
                                               "where the curve ends, at β = 0.01.")]


question("ex-4-2-goodhart-a", "ex-4-2-goodhart",
         "In the explorer A learned reward is hackable, on comparison set {set}, at the right end of the curve "
         "(β = 0.01, the slider's smallest): the true reward of the optimum for the tabular reward model fitted to "
         "{fewer:,} and to {more:,} comparisons, then for the additive model fitted to {fewer:,} and to {more:,}.",
         "numbers", _ends, {"fewer": easy_hard.COMPARISONS[0], "more": easy_hard.COMPARISONS[-1], "set": 1},
         draw=lambda rng: {"fewer": int(rng.choice(easy_hard.COMPARISONS[:2])),
                           "more": int(rng.choice(easy_hard.COMPARISONS[-2:])),
                           "set": list(_SETS)[int(rng.integers(len(_SETS)))]},
         labels=("tabular (fewer)", "tabular (more)", "additive (fewer)", "additive (more)"), tolerance=0.001,
         mistakes=_ends_mistakes, practice=True)


_CURED = ("the tabular model's", "the additive model's", "both", "neither")


def _cured(s):
    right = [all(_goodhart_curve(f, s["more"], d).true[-1] > 0.99 for d in _SETS) for f in ("tabular", "additive")]
    return _CURED[{(True, False): 0, (False, True): 1, (True, True): 2, (False, False): 3}[tuple(right)]]


question("ex-4-2-goodhart-b", "ex-4-2-goodhart",
         "Which failure do more comparisons cure: whose optimum ends at a right response (true reward above 0.99 at "
         "β = 0.01) on both comparison sets once the reward model is fitted to {more:,} comparisons?",
         "choice", _cured, {"more": easy_hard.COMPARISONS[-1]}, options=_CURED,
         option_hints={0: "Compare where each model's curve ends with the most comparisons, on both sets.",
                       1: "Look at where the additive model's curves end with the most comparisons, on both sets.",
                       2: "Not both: compare where each model's curve ends with the most comparisons, on both sets.",
                       3: "Not neither: one model ends at a right response on both sets once it has enough data."},
         practice=True)
rubric("ex-4-2-goodhart",
       ("reads the four ends on set 1 (tabular and additive, 10 and 3,000 comparisons) and names the tabular model's "
        "failure as the one more data cures", 1),
       ("explains the tabular failure as a shortage of data: it can represent any reward, its errors sit on responses "
        "it has rarely or never seen, and more comparisons remove them where π_ref puts mass, where the optimum goes "
        "first"
        " (split: 1 for tying the errors to responses with few or no comparisons; 1 for why more comparisons "
        "cure it where the optimum goes)", 2),
       ("explains the additive failure as a model that cannot represent the reward: 'the digits sum to the target mod "
        "5' is no sum of per-position scores, so its fit ranks a wrong response highest and the optimum finds it"
        " (split: 1 for the reward being no sum of per-position scores; 1 for the optimum finding the wrong "
        "response the fit ranks highest)", 2),
       ("uses set 2 (or more seeds) to show that one run does not settle it: with few comparisons, which response "
        "comes out on top is luck", 1))


def _reward(s) -> str:
    return _REWARD_OF[s["reward"]]


def _success(s):
    return exploration.success_probability(reference_policy(), _reward(s), s["prompt"])


def _limit_kl(s):
    return -np.log(_success(s))


def _draw_binary(rng):
    return {"prompt": int(rng.choice(PROMPTS)), "reward": str(rng.choice(_BINARY))}


def _limit_mistakes(s):
    p = _success(s)
    return [(np.log(p), "Mind the sign: a KL divergence is never negative."),
            (p, "That is p, π_ref's chance of a reward: the question asks for a KL."),
            (-np.log1p(-p), "That is −log of the unrewarded share: the limit keeps the rewarded responses."),
            (-np.log10(p), "Nats need the natural logarithm.")]


question("ex-4-2-drift", "ex-4-2-drift",
         "Part (b) at work: under π_ref = pretrained (τ = 1), with the reward {reward} (0 or 1) and prompt {prompt}, "
         "how many nats from π_ref is the limit of π*_β as β → 0? Compare with the right end of the curve in the "
         "explorer It must not drift, at that reward and prompt.",
         "number", _limit_kl, {"prompt": 2, "reward": _BINARY[0]}, draw=_draw_binary, tolerance=0.01,
         mistakes=_limit_mistakes, practice=True)
rubric("ex-4-2-drift",
       ("(a) writes the normaliser Z_β = 1 − p + p·e^(1/β) and π*_β on rewarded and unrewarded responses"
        " (split: 1 for Z_β; 1 for π*_β on both kinds of response)", 2),
       ("(a) takes the limit: a rewarded response tends to π_ref(y)/p, an unrewarded one to 0, i.e. π_ref conditioned "
        "on r = 1"
        " (split: 1 for the two limits; 1 for recognising π_ref conditioned on r = 1)", 2),
       ("(b) uses π*(y)/π_ref(y) = 1/p on the rewarded responses (and π* = 0 elsewhere) to get KL = −log p"
        " (split: 1 for the ratio 1/p on the rewarded responses; 1 for summing to −log p)", 2),
       ("(b) compares with the explorer: the right end of the curve (the smallest β) sits at −log p nats", 1))


def _best_value(s, part="best"):
    """β·log Z = E_π*[r] − β·KL(π* ‖ π_ref), from the drift explorer's curve at β (or one of its parts)."""
    c = reward_models.optimisation_curve(reference_policy(), _reward(s), _reward(s), s["prompt"], [s["beta"]])
    return {"best": c.true[0] - s["beta"] * c.kl[0], "reward": c.true[0]}[part]


def _best_value_mistakes(s):
    return [(_best_value(s) / s["beta"], "That is log Z: the best value is β·log Z."),
            (_best_value(s, "reward"), "That is E_π*[r], the reward alone: F also subtracts β·KL(π* ‖ π_ref)."),
            (_success(s), "That is F at π_ref itself (its expected reward): π* does better.")]


question("ex-4-2-optimum", "ex-4-2-optimum",
         "Part (b) at work: for prompt {prompt} and the reward {reward} (0 or 1) under π_ref = pretrained (τ = 1), "
         "what is the best value β·log Z of F at β = {beta:.3g}? (π_ref's chance of a reward is in the title of the "
         "explorer It must not drift.)",
         "number", _best_value, {"prompt": 2, "reward": _BINARY[0], "beta": 1.0},
         draw=lambda rng: {**_draw_binary(rng), "beta": float(rng.choice(easy_hard.DRIFT_BETAS[3:13:3]))},
         tolerance=0.005, mistakes=_best_value_mistakes, practice=True)
rubric("ex-4-2-optimum",
       ("(a) solves the definition of π* for the reward: r(y) = β·log(π*(y)/π_ref(y)) + β·log Z"
        " (split: 1 for the form of r(y); 1 for the log Z term)", 2),
       ("(a) substitutes it into F and uses Σ_y π(y) = 1 to reach F(π) = β·log Z − β·KL(π ‖ π*)"
        " (split: 1 for the substitution; 1 for using Σ_y π(y) = 1 to reach the KL)", 2),
       ("(b) concludes from (a): KL(π ‖ π*) ≥ 0 with equality only at π = π*, so F(π) ≤ β·log Z with equality only "
        "at π*, the unique maximiser. The worked solution's Lagrange route (stationarity of F + μ(Σ_y π(y) − 1)) "
        "finds π* and earns the first point; uniqueness then needs (a)'s equality case, or F's strict concavity"
        " (split: 1 for F(π) ≤ β·log Z with value β·log Z at π*; 1 for uniqueness)", 2),
       ("(c) e^(r/β) → 1 as β → ∞, so π* → π_ref: the penalty wins and the policy does not move", 1))


def _comparisons(s):
    """(winner's score, loser's score) for each comparison of the setting, e.g. 'a ≻ b, c ≻ a'."""
    score = {"a": s["ra"], "b": s["rb"], "c": s["rc"]}
    return np.array([[score[w], score[lo]] for w, lo in (c.split(" ≻ ") for c in s["comparisons"].split(", "))])


def _log_likelihood(s, sign=1.0):
    """Σ_i log σ(r̂(w_i) − r̂(l_i)), with log σ(z) = −log(1 + e^(−z)); sign −1 flips every difference."""
    d = sign * (_comparisons(s)[:, 0] - _comparisons(s)[:, 1])
    return float(-np.logaddexp(0.0, -d).sum())


def _draw_bt(rng):
    scores = rng.choice(np.arange(-4, 5) / 2, size=3, replace=False)
    pairs = [rng.choice(["a", "b", "c"], size=2, replace=False) for _ in range(4)]
    return {"ra": float(scores[0]), "rb": float(scores[1]), "rc": float(scores[2]),
            "comparisons": ", ".join(f"{w} ≻ {lo}" for w, lo in pairs)}


def _one_flipped(s):
    """For each comparison: the log-likelihood with that one comparison's score difference taken the wrong way round
    (loser minus winner), and a hint naming it. A winner that scored lower gives a negative difference, which is the
    sign most easily dropped."""
    pairs = [c.split(" ≻ ") for c in s["comparisons"].split(", ")]
    d = _comparisons(s)[:, 0] - _comparisons(s)[:, 1]
    out = []
    for i, (w, lo) in enumerate(pairs):
        flipped = d.copy()
        flipped[i] = -d[i]
        why = ", negative because the winner scored lower" if d[i] < 0 else ""
        out.append((float(-np.logaddexp(0.0, -flipped).sum()),
                    f"One term has its sign flipped: for {w} ≻ {lo} the difference is winner minus loser, "
                    f"r̂({w}) − r̂({lo}) = {d[i]:g}{why}.".replace("-", "−")))
    return out


def _likelihood_mistakes(s):
    return [(np.exp(_log_likelihood(s)), "That is the likelihood itself: the question asks for its logarithm."),
            (_log_likelihood(s, -1.0), "Your score differences run the wrong way round: loser minus winner."),
            *_one_flipped(s),
            (_log_likelihood(s) / np.log(10), "Use the natural logarithm."),
            (float(np.subtract(*_comparisons(s).T).sum()), "That adds up the score differences themselves: the "
                                                           "logistic function σ is missing.")]


question("ex-4-2-bt", "ex-4-2-bt",
         "Part (b) at work: three responses have the scores r̂(a) = {ra:g}, r̂(b) = {rb:g} and r̂(c) = {rc:g}. Four "
         "independent comparisons say {comparisons} (the first named won). What is the Bradley–Terry "
         "log-likelihood of these scores (natural logarithm)?",
         "number", _log_likelihood, {"ra": 1.0, "rb": 0.0, "rc": -0.5, "comparisons": "a ≻ b, a ≻ c, c ≻ b, b ≻ a"},
         draw=_draw_bt, tolerance=0.005, mistakes=_likelihood_mistakes)
rubric("ex-4-2-bt",
       ("(a) divides numerator and denominator by e^(r̂(a)) to get σ(r̂(a) − r̂(b))", 1),
       ("(a) notes that only the difference of the scores enters, so a constant added to every score cancels (the "
        "reward model is determined only up to a shift)", 1),
       ("(b) multiplies the independent comparisons' probabilities: ℓ = Σ_i log σ(r̂(w_i) − r̂(l_i))"
        " (split: 1 for the product of the probabilities; 1 for its logarithm as the sum of log σ terms)", 2),
       ("(c) uses d/dz log σ(z) = 1 − σ(z) and ∇_w(r̂(w_i) − r̂(l_i)) = φ(w_i) − φ(l_i), with the chain rule"
        " (split: 1 for d/dz log σ(z); 1 for the chain rule through the features)", 2))
