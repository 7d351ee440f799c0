"""Section 4.1's checked exercises: values by backward induction, response probabilities, token advantages."""

from __future__ import annotations

from .. import exact
from ..policy import PRESETS, reference_policy
from ..rewards import REWARDS
from ..vocab import PROMPTS, VOCAB_SIZE
from .questions import question, rubric
from .registry import Case, allow, forbid, random_setting, register


def _policy_and_prompt(rng):
    """A random reference policy (``random_setting``) and prompt: what every hidden case of 4.1 starts from."""
    preset, temperature, length = random_setting(rng)
    return reference_policy(preset, temperature, length), int(rng.choice(PROMPTS))


def _value_cases(rng, n=12):
    cases = []
    for _ in range(n):
        policy, prompt = _policy_and_prompt(rng)
        prefix = tuple(int(a) for a in rng.integers(0, VOCAB_SIZE, size=int(rng.integers(0, policy.length + 1))))
        name = str(rng.choice(sorted(REWARDS)))
        cases.append(Case((policy, REWARDS[name], prompt, prefix),
                          f"policy {policy!r}, reward {name}, prompt {prompt}, prefix {prefix}"))
    return cases


def _response_cases(rng, n=12):
    cases = []
    for _ in range(n):
        policy, prompt = _policy_and_prompt(rng)
        response = tuple(int(a) for a in rng.integers(0, VOCAB_SIZE, size=policy.length))
        cases.append(Case((policy, prompt, response), f"policy {policy!r}, prompt {prompt}, response {response}"))
    return cases


def _advantage_cases(rng):
    cases = []
    for case in _response_cases(rng):
        policy, prompt, response = case.args
        name = str(rng.choice(sorted(REWARDS)))
        cases.append(Case((policy, REWARDS[name], prompt, response), f"{case.description}, reward {name}"))
    return cases


register("4.1-value", "V(s) by backward induction", _value_cases, exact.value)
register("4.1-response-probability", "π(y|x) as a product of token probabilities", _response_cases,
         lambda policy, prompt, response: policy.prob(prompt, response))
register("4.1-token-advantages", "per-token advantages from values", _advantage_cases, exact.token_advantages,
         kind="array")

allow("4.1-value", "a policy's next-token probabilities and the reward", "policy.next_token_probs", "reward")
allow("4.1-response-probability", "a policy's next-token probabilities", "policy.next_token_probs")
allow("4.1-token-advantages", "toy.value, or a policy's next-token probabilities and the reward for values of your "
      "own", "toy.value", "policy.next_token_probs", "reward")

forbid("4.1-value", "V(s) by backward induction", "toy.value", "toy.values", "toy.resets.value_and_variance")
forbid("4.1-response-probability", "π(y|x) as a product of token probabilities", "toy.Policy.prob",
       "toy.Policy.response_probs")
forbid("4.1-token-advantages", "the advantages as differences of values", "toy.token_advantages",
       "toy.advantage_table")


# -- questions and rubrics (toy.exercises.questions): the exercises without a function to write -------------------

_X, _PRESETS_41 = 2, ("pretrained", "uniform", "confidently_wrong", "terse", "knows_task")


def _credit_bars(setting):
    policy = reference_policy(setting["preset"], setting["temperature"])
    signal, noise = exact.credit_by_position(policy, setting["reward"], _X)
    return [*signal.tolist(), *noise.tolist()]


def _telescope_sum(setting):
    policy = reference_policy(setting["preset"], setting["temperature"])
    return float(exact.token_advantages(policy, setting["reward"], _X, setting["response"]).sum())


def _draw_response(rng):
    return {"preset": str(rng.choice(sorted(PRESETS_41))), "temperature": 1.0,
            "reward": str(rng.choice(sorted(REWARDS))),
            "response": tuple(int(a) for a in rng.integers(0, VOCAB_SIZE, size=4))}


PRESETS_41 = tuple(p for p in _PRESETS_41 if p in PRESETS)

question("ex-4-1-telescope", "ex-4-1-telescope",
         "Part (a) at work: in Figure 4.1 under π_ref = {preset} at τ = {temperature}, with the {reward} reward and "
         "the response {response} to prompt 2, what do the four token advantages add up to?",
         "number", _telescope_sum,
         {"preset": "pretrained", "temperature": 1.0, "reward": "sum_to_target", "response": (1, 2, 3, 4)},
         draw=_draw_response, tolerance=0.005,
         mistakes=lambda s: [(_telescope_sum(s) + exact.value(reference_policy(s["preset"], s["temperature"]),
                                                               s["reward"], _X, ()),
                              "That is the reward r(x, y) itself: a term of the telescoping sum is missing.")],
         practice=True)
rubric("ex-4-1-telescope",
       ("(a) writes A(s_t, y_t) = V(s_{t+1}) − V(s_t) and shows that the sum collapses to V(s_T) − V(s_0)"
        " (split: 1 for writing each advantage as a difference of consecutive values; 1 for the collapse to "
        "V(s_T) − V(s_0))", 2),
       ("(a) identifies V(s_T) with r(x, y) (the complete response) and s_0 with x", 1),
       ("(b) writes E_a[A(s, a)] = Σ_a π(a|s) V(s·a) − V(s) and uses the backward-induction definition of V(s)"
        " (split: 1 for the expected advantage written out; 1 for using the definition of V(s) to make it "
        "zero)", 2),
       ("(c) splits the difference into terms before and after t and shows each has expectation zero against the "
        "score of y_t (earlier terms: the score's mean is zero given s_t; later terms: (b) given s_{t+1})"
        " (split: 1 for the split around t; 1 for the earlier terms; 1 for the later terms)", 3))

question("ex-4-1-predict", "ex-4-1-predict",
         "Under π_ref = {preset} and the {reward} reward (Figure 4.1's lower panel, τ = {temperature}): the four "
         "blue bars E[A_t²], then the four orange ones.",
         "numbers", _credit_bars,
         {"preset": "uniform", "temperature": 1.0, "reward": "count_target"},
         draw=lambda rng: {"preset": "uniform", "temperature": 1.0, "reward": str(rng.choice(sorted(REWARDS)))},
         labels=tuple(f"blue {t}" for t in range(1, 5)) + tuple(f"orange {t}" for t in range(1, 5)),
         tolerance=0.005, predict=True,
         mistakes=lambda s: [(_credit_bars(s)[4:] + _credit_bars(s)[:4],
                              "The blue and the orange bars are swapped: blue is E[A_t²], a token's own credit.")],
         practice=True)

rubric("ex-4-1-score",
       ("(a) writes log π(y|x) as Σ_t log π(y_t|s_t) and notes that the states do not depend on θ"
        " (split: 1 for the sum of log-probabilities; 1 for noting that the states do not depend on θ)", 2),
       ("(b) shows Σ_a π(a|s) ∇log π(a|s) = ∇ Σ_a π(a|s) = ∇1 = 0"
        " (split: 1 for the score's expectation as the gradient of Σ_a π(a|s); 1 for concluding it is ∇1 = 0)", 2),
       ("(c) uses the telescoping sum: the sequence weight is A(s_t, y_t) plus the other tokens' advantages", 1),
       ("(c) shows each extra term has expectation zero (earlier ones by (b), later ones by the zero-mean advantage)"
        " (split: 1 for the earlier terms; 1 for the later terms; 1 for concluding that only A(s_t, y_t) is "
        "left in expectation)",
        3))
