"""The discount γ on a problem with an end-of-sequence token: why LLM post-training keeps γ = 1.

With a terminal reward r(x, y) that arrives at the last step of an episode of T actions (the digits, plus the EOS
when the response ends early), the discounted return from the prompt is γ^(T−1)·r(x, y). With γ < 1 two responses
that the reward scores equally are no longer equal: for a positive reward the shorter one is worth more, and for a
negative reward (a penalty) the longer one, since γ^(T−1) shrinks a penalty as much as a prize (``ShiftedReward``
moves the toy's rewards, all ≥ 0, below zero). The policy that maximises
E[γ^(T−1) r] − β·KL(π ‖ π_ref) is π*(y) ∝ π_ref(y) exp(γ^(T−1) r(x, y)/β) (``toy.kl.kl_regularised_optimum``
with the discounted return as its reward), so the bias toward short answers can be computed exactly.
"""

from __future__ import annotations

import numpy as np

from . import checks
from .kl import kl_regularised_optimum
from .policy import Policy, TabularPolicy, check_policy
from .rewards import get_reward, reward_name, reward_table
from .vocab import EOS, VOCAB_SIZE


class DiscountedReward:
    """γ^(T−1)·r(x, y) with T = min(len(y) + 1, length): the number of actions of the episode (EOS included)."""

    def __init__(self, reward, gamma: float, length: int):
        self.reward = get_reward(reward)
        self.gamma = checks.discount("gamma", gamma)
        self.length = checks.positive_int("length", length, low=1, high=10**6)
        self.__name__ = f"{reward_name(reward)} discounted by {self.gamma:g}"

    def steps(self, response) -> int:
        """T, the number of actions in the episode whose digits are ``response`` (EOS already removed)."""
        response = checks.tokens("response", response, VOCAB_SIZE)
        if len(response) > self.length:
            raise checks.fail("response", f"at most {self.length} digit tokens", response)
        return min(len(response) + 1, self.length)

    def __call__(self, prompt, response) -> float:
        return self.gamma ** (self.steps(response) - 1) * self.reward(prompt, response)

    def __eq__(self, other):
        return isinstance(other, DiscountedReward) and (self.reward, self.gamma, self.length) == (
            other.reward, other.gamma, other.length)

    def __hash__(self):
        return hash((self.reward, self.gamma, self.length))


class ShiftedReward:
    """r(x, y) + shift: the same ranking of responses, moved up or down. With shift = −1 the sum reward becomes 0 for a
    right answer and −1 for a wrong one, a penalty: undiscounted, the KL-regularised optimum is unchanged (a constant
    cancels in the normalisation); discounted, it is not."""

    def __init__(self, reward, shift: float):
        self.reward = get_reward(reward)
        self.shift = checks.in_range("shift", shift, -100.0, 100.0)
        self.__name__ = f"{reward_name(reward)} {self.shift:+g}"

    def __call__(self, prompt, response) -> float:
        return self.reward(prompt, response) + self.shift

    def __eq__(self, other):
        return isinstance(other, ShiftedReward) and (self.reward, self.shift) == (other.reward, other.shift)

    def __hash__(self):
        return hash((self.reward, self.shift))


def discounted_optimum(reference: Policy, reward, gamma: float, beta: float) -> TabularPolicy:
    """π*(y|x) ∝ π_ref(y|x)·exp(γ^(T−1) r(x, y)/β): the best policy for the discounted objective with a KL penalty."""
    check_policy("reference", reference)
    if not reference.eos:
        raise ValueError("the discount experiment needs a reference policy with eos=True "
                         "(for example toy.reference_policy(eos=True)), so that episodes can end early")
    return kl_regularised_optimum(reference, DiscountedReward(reward, gamma, reference.length), beta)


def mean_length(policy: Policy, prompt) -> float:
    """E[number of digit tokens] under π(· | x)."""
    check_policy("policy", policy)
    dist = policy.length_distribution(prompt)
    return float(np.arange(len(dist)) @ dist)


def mean_length_given(policy: Policy, prompt, reward, value: float) -> float:
    """E[number of digit tokens | r(x, y) = value] under π(· | x): the mean length among the responses the reward
    scores ``value`` (for example the wrong answers, where a penalty acts)."""
    check_policy("policy", policy)
    value = checks.finite("value", value)
    P = policy.response_probs(prompt)
    R = reward_table(reward, prompt, policy.length, policy.n_actions)
    n_digits = (sum(np.indices(P.shape)[t] != EOS for t in range(policy.length)) if policy.eos
                else np.full(P.shape, policy.length))
    mask = R == value
    mass = float(P[mask].sum())
    if mass <= 0:
        raise checks.fail("value", "a reward some response with nonzero probability gets", value)
    return float((P * n_digits)[mask].sum() / mass)
