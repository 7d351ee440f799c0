"""A format-gated reward: the verifier scores a response only if it can read it.

A real verifier parses the answer out of the response (a boxed number, a closing tag); a response without that
format earns nothing, however good its content. In the toy, a response is *readable* when it ends with the marker
``FORMAT_MARKER`` (two 4s, a closing tag), and the gated reward is

    r_gate(x, y) = r(x, y) · 1[y is readable].

A base model that rarely writes the marker gets almost no signal from r_gate, so RL from it waits; SFT on
demonstrations that are all readable (their content as the base model would write it, right or wrong) teaches the
format and nothing else, and RL from there has signal at once. That is one reason SFT comes before RL with
verifiers (section 4.4).
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from . import checks, sft, train
from .policy import Policy, check_policy, check_prompt
from .rewards import REWARDS, get_reward, reward_table
from .vocab import PROMPTS, VOCAB_SIZE

FORMAT_MARKER = (4, 4)
"""The last tokens a readable response ends with."""


def readable(prompt, response) -> float:
    """1.0 when the response ends with FORMAT_MARKER (the verifier can read it), else 0.0."""
    check_prompt(prompt)
    response = checks.tokens("response", response, VOCAB_SIZE)
    return float(response[-len(FORMAT_MARKER):] == FORMAT_MARKER)


@lru_cache(maxsize=64)
def gated(reward) -> callable:
    """The reward r(x, y) where y is readable and 0 elsewhere, as a reward function ``r_gate(prompt, response)``.
    The same function object is returned for the same ``reward`` (among the last 64 asked), so tables computed from
    it can be cached."""
    inner = get_reward(reward)

    def r_gate(prompt, response):
        return inner(prompt, response) * readable(prompt, response)

    r_gate.__name__ = f"{getattr(inner, '__name__', 'reward')}_if_readable"
    return r_gate


def format_rate(policy: Policy, prompts=PROMPTS) -> float:
    """Mean over prompts of P_π(the response is readable), exactly."""
    check_policy("policy", policy, responses=True)
    rates = []
    for x in checks.prompts("prompts", prompts):
        R = reward_table(readable, x, policy.length, policy.n_actions)
        rates.append(float((policy.response_probs(x) * R).sum()))
    return float(np.mean(rates))


def format_sft(base: Policy, n_demos: int, prior_strength: float = 0.1, seed: int = 0) -> Policy:
    """SFT on ``n_demos`` readable demonstrations per prompt: each is the base model's response conditioned on
    being readable (so its content is right only as often as the base model's), fitted by ``toy.sft.fit_sft``."""
    check_policy("base", base, responses=True)
    n_demos = checks.positive_int("n_demos", n_demos, low=1, high=100_000)
    checks.non_negative_finite("prior_strength", prior_strength)
    seed = checks.positive_int("seed", seed, low=0)
    expert = sft.imperfect_expert(base, readable, 1.0)
    demos = sft.demonstrations(expert, n_demos, rng=np.random.default_rng(seed))
    return sft.fit_sft(demos, base, prior_strength)


@lru_cache(maxsize=64)
def _rl(start: Policy, reward, steps: int, group_size: int, seeds: tuple, lr: float, beta: float) -> train.Curves:
    return train.train("rloo", start=start, reference=start, steps=steps, group_size=group_size, betas=(beta,),
                       seeds=seeds, lr=lr, reward=reward)


def rl_curves(start: Policy, task_reward="sum_to_target", gate: bool = True, steps: int = 40, group_size: int = 4,
              seeds=(0, 1, 2, 3, 4), lr: float = 4.0, beta: float = 0.01) -> train.Curves:
    """RLOO from ``start`` (KL to ``start``) on the gated task reward (``gate=True``) or the task reward alone;
    ``Curves.reward`` is then the exact expected training reward after every step."""
    check_policy("start", start, responses=True)
    checks.choose("task_reward", task_reward, REWARDS)
    reward = gated(task_reward) if checks.flag("gate", gate) else task_reward
    steps = checks.positive_int("steps", steps, low=1, high=2000)
    group_size = checks.positive_int("group_size", group_size, low=2, high=256)
    seeds = tuple(checks.positive_int("seed", s, low=0) for s in np.atleast_1d(np.asarray(seeds, dtype=object)))
    if not seeds:
        raise ValueError("seeds must hold at least one seed")
    lr = checks.positive_finite("lr", lr)
    beta = checks.in_range("beta", beta, 0.0, 100.0)
    return _rl(start, reward, steps, group_size, seeds, lr, beta)
