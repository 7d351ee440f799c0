"""Section 4.3's checked exercises: the discounted return of a response that can end early, and the variance of
the sequence importance weight between a policy and a stale copy of it."""

from __future__ import annotations

import numpy as np

from .. import offpolicy
from ..discount import DiscountedReward
from ..policy import reference_policy, strip_eos
from ..rewards import REWARDS
from ..vocab import EOS, PROMPTS, VOCAB_SIZE
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
