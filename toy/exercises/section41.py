"""Section 4.1's checked exercises: values by backward induction, response probabilities, token advantages."""

from __future__ import annotations

from .. import exact
from ..policy import reference_policy
from ..rewards import REWARDS
from ..vocab import PROMPTS, VOCAB_SIZE
from .registry import Case, allow, forbid, random_setting, register


def _value_cases(rng, n=12):
    cases = []
    for _ in range(n):
        preset, temperature, length = random_setting(rng)
        policy = reference_policy(preset, temperature, length)
        prompt = int(rng.choice(PROMPTS))
        prefix = tuple(int(a) for a in rng.integers(0, VOCAB_SIZE, size=int(rng.integers(0, length + 1))))
        name = str(rng.choice(sorted(REWARDS)))
        cases.append(Case((policy, REWARDS[name], prompt, prefix),
                          f"policy {policy!r}, reward {name}, prompt {prompt}, prefix {prefix}"))
    return cases


def _response_cases(rng, n=12):
    cases = []
    for _ in range(n):
        preset, temperature, length = random_setting(rng)
        policy = reference_policy(preset, temperature, length)
        prompt = int(rng.choice(PROMPTS))
        response = tuple(int(a) for a in rng.integers(0, VOCAB_SIZE, size=length))
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
