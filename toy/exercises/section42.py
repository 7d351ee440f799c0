"""Section 4.2's checked exercises: the KL-regularised optimum, waiting for a first success, and the error of a
Monte Carlo value from resets."""

from __future__ import annotations

import numpy as np

from .. import exploration, kl, resets
from ..policy import reference_policy
from ..rewards import REWARDS
from ..vocab import PROMPTS, VOCAB_SIZE
from .registry import Case, allow, forbid, random_setting, register


def _kl_optimum_cases(rng):
    cases = []
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
