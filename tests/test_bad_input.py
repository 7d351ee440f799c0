"""Every public function of every toy module refuses bad input with a ValueError that names the argument.

The functions are found by introspection (every public function, class and method defined in a ``toy`` module),
so a new one fails ``test_every_public_function_is_covered`` until it gets a row in ``CASES`` below, or an entry
with a reason in ``EXEMPT``.

A row of ``CASES`` is ``Case(call, good, bad)``: ``call(**kwargs)`` calls the function, ``good`` is a setting it
accepts (checked to run), and ``bad`` maps an argument to the bad values to try, one at a time, in place of its
good value. Each bad call must raise ValueError whose message names the argument (``names`` gives another word
to look for when the message uses a different one), and must do so within ``TIME_LIMIT`` seconds (a guard
against hangs and huge enumerations, not a performance test). The bad values come from the lists below: NaN,
inf, wrong types, wrong shapes and out-of-range values.

To cover a new function: add ``"toy.module.function": Case(module.function, dict(...good...), dict(arg=BAD_...))``.
"""

from __future__ import annotations

import copy
import dataclasses
import importlib
import inspect
import math
import numbers
import pkgutil
import sys
import threading
from dataclasses import dataclass, field

import numpy as np
import pytest

import toy

# the modules toy/__init__.py does not list; the rest as toy.<module>
from toy import batching, exact, policy, rewards, scale
from toy.exercises import questions, registry
from toy.page import fates, figures, prose, recipes

TIME_LIMIT = 60.0
"""Seconds a bad call may take before the test calls it a hang (generous: CI machines are slow and shared)."""

NAN, INF = math.nan, math.inf
WRONG_TYPES = ["x", None, [1.0, 2.0], True]
POSITIVE = [0, -1.0, NAN, INF, -INF] + WRONG_TYPES  # β, temperature, learning rate, sharpness...
NON_NEGATIVE = [-1e-9, NAN, INF] + WRONG_TYPES  # ε_high, l2
UNIT = [-0.1, 1.5, NAN, INF] + WRONG_TYPES  # ε, γ, λ, probabilities
COUNT = [0, -3, 2.5, "3", None, True, np.float64(2.0)]  # n, k, horizon, steps...
HUGE = [10**12, 10**30]  # must be refused at once, not attempted
PROMPT = [7, -1, 2.5, "2", None, True]
PROMPTS = [(7,), (), "12", None, 3, (1, 1)]
POLICY = ["pi", None, 3, toy.REWARDS]
OPTIONAL_POLICY = ["pi", 3, toy.REWARDS]  # where None means the default
REWARD = ["no_such_reward", 3, None]
METHOD = ["no_such_method", None, 3]
RNG = [-1, 2.5, "seed", True]
TEXT = [3, None, b"bytes"]
OPTIONAL_POSITIVE = [v for v in POSITIVE if v is not None]  # a positive number where None means "not given"

PI = toy.reference_policy(length=2)  # 25 responses: every good call is quick
PI3 = toy.reference_policy(length=3)
PI_EOS = toy.reference_policy(length=3, eos=True)
TAB = toy.TabularPolicy.from_policy(PI)
LONG_EOS = toy.reference_policy(length=10, eos=True)  # 6**10 ≈ 60 million responses: must be refused, not built
PROBS = np.array([0.1, 0.2, 0.3, 0.4])


def prefix_bad(pol) -> list:
    """Prefixes a policy must refuse: bad tokens and types, too long, and (with EOS) a digit after EOS."""
    out = [(9,), "12", (1.5,), None, 3, (-1,), (True,), (0,) * (pol.length + 1)]
    if pol.eos:
        out.append((toy.EOS, 1))
    return out


def array_bad(good, wrong_shapes=()) -> list:
    """NaN and inf in place of the first entry, wrong types, and the given wrong shapes."""
    good = np.asarray(good, dtype=float)
    out = []
    for v in (NAN, INF):
        a = good.copy()
        a.flat[0] = v
        out.append(a)
    return out + ["abc", None, {"a": 1}] + [np.zeros(s) for s in wrong_shapes]


def probs_bad(good, wrong_shapes=()) -> list:
    """A probability vector with a negative entry, one not summing to 1, NaN, inf, wrong types and shapes."""
    good = np.asarray(good, dtype=float)
    neg = good.copy()
    neg.flat[0], neg.flat[1] = -0.1, neg.flat[1] + good.flat[0] + 0.1  # still sums to 1
    return array_bad(good, wrong_shapes) + [neg, good * 1.5]


@dataclass
class Case:
    """How to call one public function: a good setting, and bad values per argument."""

    call: object
    good: dict
    bad: dict
    names: dict = field(default_factory=dict)  # argument -> the word its error names instead


def method(obj, name):
    """A bound method of ``obj``, called with keyword arguments."""
    return lambda **kw: getattr(obj, name)(**kw)


def fresh_critic(length=2, **kw):
    return lambda **kw2: getattr(toy.critic.Critic(length, **kw), kw2.pop("_method"))(**kw2)


DEMOS = {2: np.array([[1, 2], [3, 4], [0, 0]])}
COMPARISONS = toy.reward_models.sample_comparisons(PI, "sum_to_target", 2, 20)
COLUMNS, N_FEATURES = toy.reward_models.feature_columns("both", 2, 5)
PROXY = toy.reward_models.ProxyReward(PI, "sum_to_target", 2, 20)
CURVES = toy.train.train("exact", steps=1, seeds=(0,), reference=PI, prompts=(2,))
LOG_PROBS = toy.train.tabular_logits(PI, (2,))
LOG_PROBS_B = [lp[None] for lp in LOG_PROBS]  # (B=1, P=1, K^t, K)
LOG_P = toy.train.response_log_probs(LOG_PROBS_B)  # (1, 1, 25)
IDS = np.array([[[0, 7, 24]]])
ROW = fates.ROWS[0]
MARKOV = toy.longrun.MarkovPolicy()
HABITS = policy.habit_weights("pretrained")
TEACHER = toy.kl.kl_regularised_optimum(PI, "sum_to_target", 0.3)  # a teacher over PI's responses
TEACHER_EOS = toy.kl.kl_regularised_optimum(PI_EOS, "sum_to_target", 0.3)
V_TABLES = [np.zeros(()), np.zeros(5)]  # a critic's values at depths 0 and 1 (L = 2, K = 5)
V_BAD = ["ab", None, np.zeros(()), [np.zeros(())], [np.zeros(()), np.full(5, NAN)], [np.zeros(()), np.full(5, INF)],
         [np.zeros(()), np.zeros(4)], [np.zeros(()), ["a"] * 5]]

CASES: dict[str, Case] = {
    # -- policy ------------------------------------------------------------------------------------------------
    "toy.policy.softmax": Case(policy.softmax, dict(logits=[0.0, 1.0]), dict(logits=array_bad([0.0, 1.0], [()]))),
    "toy.policy.log_softmax": Case(policy.log_softmax, dict(logits=[0.0, 1.0]),
                                   dict(logits=array_bad([0.0, 1.0], [()]))),
    "toy.policy.check_prompt": Case(policy.check_prompt, dict(prompt=2), dict(prompt=PROMPT)),
    "toy.policy.check_policy": Case(lambda **kw: policy.check_policy("pi", **kw), dict(value=PI, responses=True),
                                    dict(value=POLICY + [LONG_EOS]), names=dict(value="pi")),
    "toy.policy.strip_eos": Case(policy.strip_eos, dict(response=(1, 5, 5)),
                                 dict(response=["125", None, (9,), (1.5,)])),
    "toy.policy.reference_policy": Case(
        policy.reference_policy, dict(preset="knows_task", temperature=0.5, length=3, eos=True),
        dict(preset=["nope", None], temperature=POSITIVE, length=COUNT + [11, 10**9], eos=["yes", None, 1])),
    "toy.policy.BigramPolicy": Case(
        policy.BigramPolicy, dict(logits=np.zeros((2, 5, 5)), temperature=1.0, eos=False, name="n"),
        dict(logits=array_bad(np.zeros((2, 5, 5)), [(2, 5), (2, 6, 6), (11, 5, 5)]), temperature=POSITIVE,
             eos=["yes", None, 1], name=TEXT)),
    "toy.policy.TabularPolicy": Case(
        policy.TabularPolicy, dict(logits=[np.zeros((5, 5))], eos=False),
        dict(logits=["abc", None, np.zeros((5, 5)), [], [np.zeros((5, 4))], [np.full((5, 5), NAN)],
                     [np.zeros((5, 5))] * 11], eos=["yes", None])),
    "toy.policy.habit_weights": Case(
        lambda **kw: policy.habit_weights(**kw), dict(preset="pretrained", count=1.0),
        dict(preset=["nope", None, 3], count=[-5.5, 6.0, NAN, INF] + WRONG_TYPES, nope=[1.0]),
        names=dict(nope="habit")),
    "toy.policy.HabitPolicy": Case(
        policy.HabitPolicy, dict(weights=HABITS, temperature=0.5, length=3, eos=True, name="h"),
        dict(weights=["abc", None, {"nope": 1.0}, {"count": NAN}, {"count": INF}, {"count": "x"}, {"count": True}],
             temperature=POSITIVE, length=COUNT + [11, 10**9], eos=["yes", None, 1], name=TEXT),
        names=dict(weights="habit")),
    "toy.policy.Policy.prefix_probs": Case(method(PI_EOS, "prefix_probs"), dict(prompt=2, depth=1),
                                           dict(prompt=PROMPT, depth=COUNT[1:] + [3, 10**9])),
    "toy.policy.Policy.next_token_probs": Case(method(PI_EOS, "next_token_probs"), dict(prompt=2, prefix=(1,)),
                                               dict(prompt=PROMPT, prefix=prefix_bad(PI_EOS) + [(1, 2, 3)])),
    "toy.policy.Policy.check_response": Case(method(PI_EOS, "check_response"), dict(response=(1, 5)),
                                             dict(response=prefix_bad(PI_EOS) + [(5, 1, 5), (1, 2, 3, 4)])),
    "toy.policy.Policy.response_probs": Case(method(PI, "response_probs"), dict(prompt=2), dict(prompt=PROMPT)),
    "toy.policy.Policy.length_distribution": Case(method(PI_EOS, "length_distribution"), dict(prompt=2),
                                                  dict(prompt=PROMPT)),
    "toy.policy.Policy.prob": Case(method(PI_EOS, "prob"), dict(prompt=2, response=(1, 5, 5)),
                                   dict(prompt=PROMPT, response=prefix_bad(PI_EOS))),
    "toy.policy.Policy.sample": Case(method(PI, "sample"), dict(prompt=2, n=3, rng=1),
                                     dict(prompt=PROMPT, n=COUNT + HUGE, rng=RNG)),
    # -- prose (numbers quoted in the notebooks' text) -----------------------------------------------------------
    "toy.page.prose.glue": Case(prose.glue, dict(name="bad_input_probe", value=0.5),
                           dict(name=["1abc", "a b", "", None, 3, b"x"])),
    "toy.page.prose.quote": Case(lambda **kw: (prose.glue("bad_input_probe", 0.5), prose.quote(**kw))[1],
                            dict(name="bad_input_probe", spec=".3f"),
                            dict(name=["never_glued_here", None, 3], spec=TEXT)),
    "toy.page.prose.quoted_names": Case(prose.quoted_names, dict(markdown="{eval}`toy.quote(\"x\", \".2f\")`"),
                                   dict(markdown=TEXT)),
    # -- rewards -----------------------------------------------------------------------------------------------
    "toy.rewards.sum_to_target": Case(rewards.sum_to_target, dict(prompt=2, response=(1, 1)),
                                      dict(prompt=PROMPT, response=[(5,), "11", None, (1.5,)])),
    "toy.rewards.first_token": Case(rewards.first_token, dict(prompt=2, response=(1, 1)),
                                    dict(prompt=PROMPT, response=[(5,), "11", None, (1.5,)])),
    "toy.rewards.count_target": Case(rewards.count_target, dict(prompt=2, response=(1, 1)),
                                     dict(prompt=PROMPT, response=[(5,), "11", None, (1.5,)])),
    "toy.rewards.get_reward": Case(rewards.get_reward, dict(reward="first_token"), dict(reward=REWARD)),
    "toy.rewards.reward_name": Case(rewards.reward_name, dict(reward="first_token"), dict(reward=REWARD)),
    "toy.rewards.reward_table": Case(
        rewards.reward_table, dict(reward="count_target", prompt=2, length=3, n_actions=6),
        dict(reward=REWARD, prompt=PROMPT, length=COUNT + [11, 10**9], n_actions=COUNT + [4, 7])),
    # -- exact -------------------------------------------------------------------------------------------------
    "toy.exact.values": Case(exact.values, dict(policy=PI, reward="sum_to_target", prompt=2),
                             dict(policy=POLICY + [LONG_EOS], reward=REWARD, prompt=PROMPT)),
    "toy.exact.reach_probs": Case(exact.reach_probs, dict(policy=PI, prompt=2),
                                  dict(policy=POLICY + [LONG_EOS], prompt=PROMPT)),
    "toy.exact.return_variances": Case(exact.return_variances, dict(policy=PI, reward="sum_to_target", prompt=2),
                                       dict(policy=POLICY + [LONG_EOS], reward=REWARD, prompt=PROMPT)),
    "toy.exact.value": Case(exact.value, dict(policy=PI_EOS, reward="sum_to_target", prompt=2, prefix=(1, 5)),
                            dict(policy=POLICY + [LONG_EOS], reward=REWARD, prompt=PROMPT,
                                 prefix=prefix_bad(PI_EOS))),
    "toy.exact.token_advantages": Case(
        exact.token_advantages, dict(policy=PI_EOS, reward="sum_to_target", prompt=2, response=(1, 5)),
        dict(policy=POLICY + [LONG_EOS], reward=REWARD, prompt=PROMPT, response=prefix_bad(PI_EOS))),
    "toy.exact.sequence_advantage": Case(
        exact.sequence_advantage, dict(policy=PI_EOS, reward="sum_to_target", prompt=2, response=(1, 5)),
        dict(policy=POLICY + [LONG_EOS], reward=REWARD, prompt=PROMPT, response=prefix_bad(PI_EOS))),
    "toy.exact.advantage_table": Case(exact.advantage_table, dict(policy=PI, reward="sum_to_target", prompt=2),
                                      dict(policy=POLICY + [LONG_EOS], reward=REWARD, prompt=PROMPT)),
    "toy.exact.credit_by_position": Case(exact.credit_by_position, dict(policy=PI, reward="sum_to_target", prompt=2),
                                         dict(policy=POLICY + [LONG_EOS], reward=REWARD, prompt=PROMPT)),
    # -- kl, trust region, Monte Carlo -------------------------------------------------------------------------
    "toy.kl.response_kl": Case(toy.kl.response_kl, dict(p=PROBS, q=PROBS[::-1]),
                               dict(p=probs_bad(PROBS, [(3,)]), q=probs_bad(PROBS)), names=dict(p="p", q="q")),
    "toy.kl.sequence_kl": Case(toy.kl.sequence_kl, dict(policy=PI, reference=TAB, prompt=2),
                               dict(policy=POLICY + [PI3], reference=POLICY, prompt=PROMPT)),
    "toy.kl.kl_regularised_optimum": Case(
        toy.kl.kl_regularised_optimum, dict(reference=PI, reward="sum_to_target", beta=0.1),
        dict(reference=POLICY + [LONG_EOS], reward=REWARD, beta=POSITIVE)),
    "toy.trust_region.clipped_objective": Case(
        toy.trust_region.clipped_objective, dict(ratio=[0.5, 1.5], advantage=[1.0, -1.0], eps_low=0.2, eps_high=0.28),
        dict(ratio=array_bad([0.5, 1.5], [(3,)]) + [[-0.5, 1.0]], advantage=array_bad([1.0, -1.0], [(3,)]),
             eps_low=UNIT, eps_high=NON_NEGATIVE)),
    "toy.trust_region.clipped_gradient_mask": Case(
        toy.trust_region.clipped_gradient_mask, dict(ratio=[0.5, 1.5], advantage=[1.0, -1.0]),
        dict(ratio=array_bad([0.5, 1.5], [(3,)]), advantage=array_bad([1.0, -1.0], [(3,)]), eps_low=UNIT,
             eps_high=NON_NEGATIVE)),
    "toy.montecarlo.rollouts_from": Case(
        toy.montecarlo.rollouts_from, dict(policy=PI_EOS, prompt=2, prefix=(1,), k=4, rng=0),
        dict(policy=POLICY, prompt=PROMPT, prefix=prefix_bad(PI_EOS), k=COUNT + HUGE, rng=RNG)),
    "toy.montecarlo.mc_value": Case(
        toy.montecarlo.mc_value, dict(policy=PI_EOS, reward="sum_to_target", prompt=2, prefix=(1,), k=4, rng=0),
        dict(policy=POLICY + [LONG_EOS], reward=REWARD, prompt=PROMPT, prefix=prefix_bad(PI_EOS),
             k=COUNT + HUGE, rng=RNG)),
    # -- discount, imitation -----------------------------------------------------------------------------------
    "toy.discount.DiscountedReward": Case(
        toy.discount.DiscountedReward, dict(reward="sum_to_target", gamma=0.9, length=3),
        dict(reward=REWARD, gamma=UNIT, length=COUNT)),
    "toy.discount.DiscountedReward.steps": Case(
        method(toy.discount.DiscountedReward("sum_to_target", 0.9, 3), "steps"), dict(response=(1, 2)),
        dict(response=["12", None, (9,), (1, 2, 3, 4)])),
    "toy.discount.discounted_optimum": Case(
        toy.discount.discounted_optimum, dict(reference=PI_EOS, reward="sum_to_target", gamma=0.9, beta=0.1),
        dict(reference=POLICY + [PI, LONG_EOS], reward=REWARD, gamma=UNIT, beta=POSITIVE)),
    "toy.discount.mean_length": Case(toy.discount.mean_length, dict(policy=PI_EOS, prompt=2),
                                     dict(policy=POLICY + [LONG_EOS], prompt=PROMPT)),
    "toy.imitation.behaviour_cloning_cost": Case(toy.imitation.behaviour_cloning_cost, dict(eps=0.1, horizon=10),
                                                 dict(eps=UNIT, horizon=COUNT)),
    "toy.imitation.dagger_cost": Case(toy.imitation.dagger_cost, dict(eps=0.1, horizon=10),
                                      dict(eps=UNIT, horizon=COUNT)),
    "toy.imitation.quadratic_approximation": Case(toy.imitation.quadratic_approximation, dict(eps=0.1, horizon=10),
                                                  dict(eps=UNIT, horizon=COUNT)),
    "toy.imitation.cost_curves": Case(toy.imitation.cost_curves, dict(eps=0.1, max_horizon=10),
                                      dict(eps=UNIT, max_horizon=COUNT + [10**10])),
    "toy.imitation.simulate": Case(toy.imitation.simulate, dict(eps=0.1, horizon=10, episodes=20, rng=0),
                                   dict(eps=UNIT, horizon=COUNT + [10**10], episodes=COUNT + [10**10], rng=RNG)),
    "toy.imitation.simulated_cost": Case(
        toy.imitation.simulated_cost, dict(eps=0.1, horizon=10, episodes=20, rng=0),
        dict(eps=UNIT, horizon=COUNT + [10**10], episodes=COUNT + [10**10], rng=RNG)),
    # -- concepts (the key concepts page's worked examples) ----------------------------------------------------
    "toy.concepts.step_rewards": Case(
        toy.concepts.step_rewards, dict(reward="sum_to_target", prompt=2, response=(1, 1)),
        dict(reward=REWARD, prompt=PROMPT, response=[(), (9,), "12", None, (1.5,), (-1,)])),
    "toy.concepts.returns": Case(toy.concepts.returns, dict(rewards=[0.0, 1.0], gamma=0.9),
                                 dict(rewards=array_bad([0.0, 1.0], [(), (2, 2)]), gamma=UNIT)),
    "toy.concepts.state_values": Case(
        toy.concepts.state_values, dict(policy=PI, reward="sum_to_target", prompt=2, response=(1, 1)),
        dict(policy=POLICY + [LONG_EOS], reward=REWARD, prompt=PROMPT, response=[(1,), (1, 9), "12", None])),
    "toy.concepts.q_values": Case(
        toy.concepts.q_values, dict(policy=PI, reward="sum_to_target", prompt=2, prefix=(1,)),
        dict(policy=POLICY + [LONG_EOS], reward=REWARD, prompt=PROMPT, prefix=prefix_bad(PI) + [(1, 1)])),
    "toy.concepts.td_errors": Case(
        toy.concepts.td_errors, dict(rewards=[0.0, 1.0], critic_values=[0.5, 0.5], gamma=1.0),
        dict(rewards=array_bad([0.0, 1.0], [()]), critic_values=array_bad([0.5, 0.5], [(3,)]), gamma=UNIT)),
    "toy.concepts.n_step_return": Case(
        toy.concepts.n_step_return, dict(rewards=[0.0, 1.0], critic_values=[0.5, 0.5], t=0, n=1, gamma=1.0),
        dict(rewards=array_bad([0.0, 1.0], [()]), critic_values=array_bad([0.5, 0.5], [(3,)]),
             t=[-1, 2, 2.5, "0", None, True], n=COUNT, gamma=UNIT)),  # n past the end: the return
    "toy.concepts.lambda_return": Case(
        toy.concepts.lambda_return, dict(rewards=[0.0, 1.0], critic_values=[0.5, 0.5], t=0, lam=0.5, gamma=1.0),
        dict(rewards=array_bad([0.0, 1.0], [()]), critic_values=array_bad([0.5, 0.5], [(3,)]),
             t=[-1, 2, 2.5, "0", None, True], lam=UNIT, gamma=UNIT)),
    "toy.concepts.gae_from_lambda_returns": Case(
        toy.concepts.gae_from_lambda_returns, dict(rewards=[0.0, 1.0], critic_values=[0.5, 0.5], lam=0.5, gamma=1.0),
        dict(rewards=array_bad([0.0, 1.0], [()]), critic_values=array_bad([0.5, 0.5], [(3,)]), lam=UNIT,
             gamma=UNIT)),
    "toy.concepts.token_ratios": Case(
        toy.concepts.token_ratios, dict(new=TAB, old=PI, prompt=2, response=(1, 1)),
        dict(new=POLICY + [LONG_EOS, PI3], old=POLICY + [PI3], prompt=PROMPT, response=[(1,), (1, 9), "12", None])),
    "toy.concepts.reweighted_mean": Case(
        toy.concepts.reweighted_mean, dict(new=TAB, old=PI, reward="sum_to_target", prompt=2, n=10, rng=0),
        dict(new=POLICY + [LONG_EOS, PI3], old=POLICY + [PI3], reward=REWARD, prompt=PROMPT, n=COUNT + HUGE,
             rng=RNG)),
    "toy.concepts.kl_split": Case(
        toy.concepts.kl_split, dict(policy=TAB, reference=PI, reward="sum_to_target", prompt=2),
        dict(policy=POLICY + [LONG_EOS, PI3], reference=POLICY + [LONG_EOS, PI3], reward=REWARD, prompt=PROMPT)),
    "toy.concepts.ppo_run": Case(
        toy.concepts.ppo_run, dict(steps=1, group_size=2, seeds=(0,)),
        dict(steps=COUNT + [10**6], group_size=COUNT + [257], beta=[-1.0, NAN, "x", None], epochs=COUNT + [21],
             clip=UNIT, lam=UNIT, seeds=["x", None, (-1,), (2.5,)], reward=REWARD),
        names=dict(seeds="seed")),
    # -- gae ---------------------------------------------------------------------------------------------------
    "toy.gae.gae": Case(toy.gae.gae, dict(rewards=[0.0, 1.0], values_=[0.5, 0.5], lam=0.9, gamma=1.0),
                        dict(rewards=array_bad([0.0, 1.0], [(3,), ()]), values_=array_bad([0.5, 0.5], [(3,)]),
                             lam=UNIT, gamma=UNIT)),
    "toy.gae.gae_table": Case(
        toy.gae.gae_table, dict(value_tables=V_TABLES, reward_tab=np.ones((5, 5)), lam=0.5, gamma=0.9),
        dict(value_tables=V_BAD, reward_tab=array_bad(np.ones((5, 5)), [(5, 4), ()]), lam=UNIT, gamma=UNIT)),
    "toy.gae.exact_value_tables": Case(toy.gae.exact_value_tables, dict(policy=PI, reward="sum_to_target", prompt=2),
                                       dict(policy=POLICY + [LONG_EOS], reward=REWARD, prompt=PROMPT)),
    "toy.gae.advantage_errors": Case(
        toy.gae.advantage_errors, dict(table=np.zeros((5, 5, 2)), policy=PI, reward="sum_to_target", prompt=2),
        dict(table=array_bad(np.zeros((5, 5, 2)), [(5, 5)]), policy=POLICY + [LONG_EOS], reward=REWARD,
             prompt=PROMPT)),
    "toy.gae.vine_errors": Case(toy.gae.vine_errors, dict(policy=PI, reward="sum_to_target", prompt=2, k=3),
                                dict(policy=POLICY + [LONG_EOS], reward=REWARD, prompt=PROMPT, k=COUNT)),
    "toy.gae.gae_exact_value_errors": Case(
        toy.gae.gae_exact_value_errors, dict(policy=PI, reward="sum_to_target", prompt=2, lam=0.5),
        dict(policy=POLICY + [LONG_EOS], reward=REWARD, prompt=PROMPT, lam=UNIT)),
    "toy.gae.vine_values": Case(
        toy.gae.vine_values, dict(policy=PI_EOS, reward="sum_to_target", prompt=2, response=(1, 5), k=3, rng=0),
        dict(policy=POLICY + [LONG_EOS], reward=REWARD, prompt=PROMPT, response=prefix_bad(PI_EOS),
             k=COUNT + HUGE, rng=RNG)),
    "toy.gae.vine_table": Case(
        toy.gae.vine_table, dict(policy=PI, reward="sum_to_target", prompt=2, k=3, rng=0),
        dict(policy=POLICY + [LONG_EOS, toy.reference_policy(length=9)], reward=REWARD, prompt=PROMPT,
             k=COUNT + HUGE, rng=RNG)),
    # -- estimators --------------------------------------------------------------------------------------------
    "toy.estimators.advantages": Case(
        toy.estimators.advantages, dict(method="remax", rewards=[[0.0, 1.0, 1.0]], greedy_reward=[0.5], eps=1e-4),
        dict(method=METHOD, rewards=array_bad([[0.0, 1.0, 1.0]], [()]), greedy_reward=array_bad([0.5], [(2,)]))),
    "toy.estimators.advantages (grpo)": Case(
        toy.estimators.advantages, dict(method="grpo", rewards=[0.0, 1.0, 1.0], eps=1e-4),
        dict(rewards=array_bad([0.0, 1.0, 1.0], [(1,)]) + [[1e308, -1e308]], eps=POSITIVE)),
    "toy.estimators.greedy_response": Case(toy.estimators.greedy_response, dict(policy=PI, prompt=2),
                                           dict(policy=POLICY, prompt=PROMPT)),
    "toy.estimators.depth_probs": Case(toy.estimators.depth_probs, dict(policy=PI, prompt=2),
                                       dict(policy=POLICY + [LONG_EOS], prompt=PROMPT)),
    "toy.estimators.gradient_from_weights": Case(
        toy.estimators.gradient_from_weights, dict(probs=toy.estimators.depth_probs(PI, 2), weights=np.ones((5, 5))),
        dict(probs=["abc", None, [], [np.full(5, NAN), np.ones((5, 5))]],
             weights=array_bad(np.ones((5, 5)), [(5,), (5, 4)]))),
    "toy.estimators.flatten": Case(toy.estimators.flatten, dict(grads=[np.zeros(5)]),
                                   dict(grads=["abc", None, [], np.zeros(5), [np.full(5, INF)]])),
    "toy.estimators.exact_policy_gradient": Case(
        toy.estimators.exact_policy_gradient, dict(policy=PI, reward="sum_to_target", prompt=2),
        dict(policy=POLICY + [LONG_EOS], reward=REWARD, prompt=PROMPT)),
    "toy.estimators.score_norms": Case(toy.estimators.score_norms, dict(policy=PI, prompt=2),
                                       dict(policy=POLICY + [LONG_EOS], prompt=PROMPT)),
    "toy.estimators.gradient_estimate": Case(
        toy.estimators.gradient_estimate, dict(method="rloo", policy=PI, reward="sum_to_target", prompt=2, n=4, rng=0),
        dict(method=METHOD, policy=POLICY + [LONG_EOS], reward=REWARD, prompt=PROMPT, n=COUNT + [1, 257] + HUGE,
             rng=RNG)),
    "toy.estimators.compositions": Case(toy.estimators.compositions, dict(n=4, m=3),
                                        dict(n=COUNT[1:] + [10**6], m=COUNT + [10**6])),
    "toy.estimators.gradient_moments": Case(
        toy.estimators.gradient_moments, dict(method="grpo", policy=PI, reward="count_target", prompt=2, n=4, eps=1e-4),
        dict(method=METHOD, policy=POLICY + [LONG_EOS], reward=REWARD,
             prompt=PROMPT, n=COUNT + [1, 257] + HUGE, eps=POSITIVE)),
    "toy.estimators.expected_gradient": Case(
        toy.estimators.expected_gradient, dict(method="rloo", policy=PI, reward="sum_to_target", prompt=2, n=4),
        dict(method=METHOD, policy=POLICY + [LONG_EOS], reward=REWARD, prompt=PROMPT, n=COUNT + [1] + HUGE)),
    "toy.estimators.gradient_variance": Case(
        toy.estimators.gradient_variance, dict(method="grpo", policy=PI, reward="sum_to_target", prompt=2, n=4),
        dict(method=METHOD, policy=POLICY + [LONG_EOS], reward=REWARD, prompt=PROMPT, n=COUNT + [1] + HUGE,
             eps=POSITIVE)),
    "toy.estimators.grpo_scale": Case(toy.estimators.grpo_scale, dict(n=4, p=0.3, eps=1e-4),
                                      dict(n=COUNT + [1] + HUGE, p=UNIT + [0.0, 1.0], eps=POSITIVE)),
    "toy.estimators.conditional_advantage_gap": Case(
        toy.estimators.conditional_advantage_gap, dict(method="remax", n=4, p=0.3, greedy_reward=0.5, eps=1e-4),
        dict(method=METHOD, n=COUNT + [257] + HUGE, p=UNIT + [0.0, 1.0], greedy_reward=[NAN, INF, "x", True, [1.0]],
             eps=POSITIVE)),
    "toy.estimators.conditional_advantage_gap (grpo)": Case(
        toy.estimators.conditional_advantage_gap, dict(method="grpo", n=4, p=0.3), dict(n=[1], eps=POSITIVE)),
    "toy.estimators.expected_scale": Case(toy.estimators.expected_scale, dict(method="rloo", n=4),
                                          dict(method=METHOD + ["grpo"], n=COUNT + [1] + HUGE)),
    # -- critic, bootstrap -------------------------------------------------------------------------------------
    "toy.critic.Critic": Case(
        toy.critic.Critic, dict(length=2, features="tabular", n_actions=6, l2=0.0, init=0.5),
        dict(length=COUNT + [13], features=["nope", None], n_actions=COUNT + [4, 7], l2=NON_NEGATIVE,
             init=UNIT[2:] + [1e9])),
    "toy.critic.Critic (size)": Case(toy.critic.Critic, dict(length=12, features="tabular", n_actions=6), dict()),
    "toy.critic.Critic.cells": Case(
        method(toy.critic.Critic(2, n_actions=6), "cells"), dict(prompts=2, prefixes=[(), (1,)]),
        dict(prompts=PROMPT + [(1, 2, 3)], prefixes=["ab", None, 3, [(9,)], [(1, 2)], [(1.5,)]])),
    "toy.critic.Critic.predict": Case(
        method(toy.critic.Critic(3, n_actions=6), "predict"), dict(prompts=2, prefixes=[(), (5, 5)]),
        dict(prompts=PROMPT, prefixes=["ab", None, [(5, 1)], np.array([[5, 1]]), np.array([[0.5, 1.0]])])),
    "toy.critic.Critic.values_along": Case(
        method(toy.critic.Critic(3, n_actions=6), "values_along"), dict(prompts=2, responses=np.array([[1, 5, 5]])),
        dict(prompts=PROMPT, responses=["ab", None, np.array([[1, 5, 1]]), np.array([[1, 2]]), np.array([1, 2, 3]),
                                        np.array([[1.0, 2.0, 3.0]]), np.array([[9, 1, 1]])])),
    "toy.critic.Critic.weights_reached": Case(method(toy.critic.Critic(3, "running_sum"), "weights_reached"),
                                              dict(prompt=2), dict(prompt=PROMPT)),
    "toy.critic.Critic.weights_reached (size)": Case(method(toy.critic.Critic(12, "last_token"), "weights_reached"),
                                                     dict(prompt=2), dict()),
    "toy.critic.Critic.table": Case(method(toy.critic.Critic(2), "table"), dict(prompt=2, depth=1),
                                    dict(prompt=PROMPT, depth=COUNT[1:] + [2])),
    "toy.critic.Critic.fit": Case(
        method(toy.critic.Critic(2), "fit"), dict(prompts=2, prefixes=[(), (1,)], targets=[0.0, 1.0], steps=3, lr=0.5),
        dict(prompts=PROMPT, prefixes=["ab", None, [(9,), ()]], targets=array_bad([0.0, 1.0], [(3,)]),
             steps=[-3, 2.5, "3", True, 10**9], lr=POSITIVE)),
    "toy.critic.Critic.fit_returns": Case(
        method(toy.critic.Critic(2), "fit_returns"), dict(prompts=2, responses=np.array([[1, 2]]), returns=[1.0]),
        dict(prompts=PROMPT, responses=["ab", None, np.array([[1, 9]])], returns=array_bad([1.0], [(2,)]),
             steps=[-3, 2.5, "3", True], lr=POSITIVE)),
    "toy.critic.Critic.fit_population": Case(
        method(toy.critic.Critic(2), "fit_population"), dict(policy=PI, reward="sum_to_target", prompts=(2,)),
        dict(policy=POLICY + [PI3], reward=REWARD, prompts=PROMPTS)),
    "toy.critic.monte_carlo_rollouts": Case(
        toy.critic.monte_carlo_rollouts, dict(policy=PI_EOS, prompt=2, k=3),
        dict(policy=POLICY + [LONG_EOS], prompt=PROMPT, k=COUNT)),
    "toy.critic.monte_carlo_tokens": Case(
        toy.critic.monte_carlo_tokens, dict(policy=PI_EOS, prompt=2, k=3),
        dict(policy=POLICY + [LONG_EOS], prompt=PROMPT, k=COUNT)),
    "toy.critic.value_error": Case(
        toy.critic.value_error, dict(critic=toy.critic.Critic(2), policy=PI, reward="sum_to_target", prompt=2),
        dict(critic=["c", None, PI], policy=POLICY + [PI3], reward=REWARD, prompt=PROMPT)),
    "toy.critic.sampled_errors": Case(
        toy.critic.sampled_errors, dict(policy=PI, reward="sum_to_target", prompt=2, features="position", sizes=[4],
                                    seeds=1, l2=0.1),
        dict(policy=POLICY + [LONG_EOS], reward=REWARD, prompt=PROMPT, features=["nope", None],
             sizes=["ab", None, [], [0], [2.5], [10**12]], seeds=COUNT + [10**12], l2=NON_NEGATIVE,
             per_seed=["yes", None, 1])),
    "toy.critic.monte_carlo_error": Case(toy.critic.monte_carlo_error, dict(policy=PI, reward="sum_to_target", prompt=2,
                                                                        k=3),
                                         dict(policy=POLICY + [LONG_EOS], reward=REWARD, prompt=PROMPT, k=COUNT)),
    "toy.bootstrap.critic_tables": Case(
        toy.bootstrap.critic_tables, dict(critic=[np.zeros(()), np.zeros(5)], prompt=2, length=2),
        dict(critic=["ab", None, [np.zeros(())], [np.zeros(()), np.full(5, NAN)], [np.zeros(()), np.zeros((5, 5))]],
             prompt=PROMPT, length=COUNT)),
    "toy.bootstrap.lambda_returns": Case(
        toy.bootstrap.lambda_returns, dict(tables=[np.zeros(()), np.zeros(5)], rewards=np.ones((5, 5)), lam=0.5),
        dict(tables=["ab", None, [np.zeros(())], [np.zeros(()), np.full(5, INF)]],
             rewards=array_bad(np.ones((5, 5)), [(5, 4), ()]), lam=UNIT)),
    "toy.bootstrap.target_error": Case(
        toy.bootstrap.target_error,
        dict(policy=PI, reward="sum_to_target", prompt=2, critic=toy.critic.Critic(2), lam=0.5),
        dict(policy=POLICY + [LONG_EOS], reward=REWARD, prompt=PROMPT, critic=["ab", None, [np.zeros(())]],
             lam=UNIT)),
    # -- clipping, resets, offpolicy, exploration, longrun -----------------------------------------------------
    "toy.clipping.ppo_update": Case(
        toy.clipping.ppo_update, dict(p_old=PROBS, actions=[0, 3], advantages=[1.0, -1.0], epochs=2, lr=0.5),
        dict(p_old=probs_bad(PROBS, [(2, 2)]) + [[0.0, 0.5, 0.5, 0.0]], actions=["ab", None, [0, 4], [0.5, 1.0], [0]],
             advantages=array_bad([1.0, -1.0], [(3,)]), eps_low=UNIT, eps_high=NON_NEGATIVE,
             epochs=COUNT[1:] + [10**12], lr=POSITIVE)),
    "toy.clipping.one_token_reach": Case(
        toy.clipping.one_token_reach, dict(p_old=0.1, advantage=1.0, budget=5.0),
        dict(p_old=UNIT + [0.0, 1.0], advantage=[NAN, INF] + WRONG_TYPES, eps_low=UNIT, eps_high=NON_NEGATIVE,
             budget=[-1.0, NAN, INF, 1e12, "x"])),
    "toy.clipping.group_advantages": Case(
        toy.clipping.group_advantages, dict(rewards=[0.0, 1.0, 0.0, 0.0]),
        dict(rewards=array_bad([0.0, 1.0, 0.0, 0.0], [(2, 2)]) + [[1.0]])),
    "toy.clipping.train": Case(
        toy.clipping.train, dict(p0=PROBS, rewards=[0.0, 1.0, 0.0, 0.0], updates=2, group=4, epochs=2, seeds=2),
        dict(p0=probs_bad(PROBS, [(3,)]), rewards=array_bad([0.0, 1.0, 0.0, 0.0], [(3,)]), eps_low=UNIT,
             eps_high=NON_NEGATIVE, updates=COUNT[1:] + HUGE, group=COUNT + [1] + HUGE, epochs=COUNT[1:] + HUGE,
             lr=POSITIVE, seeds=COUNT + HUGE)),
    "toy.resets.value_and_variance": Case(
        toy.resets.value_and_variance, dict(policy=PI_EOS, reward="sum_to_target", prompt=2, prefix=(1, 5)),
        dict(policy=POLICY + [LONG_EOS], reward=REWARD, prompt=PROMPT, prefix=prefix_bad(PI_EOS))),
    "toy.resets.reset_estimates": Case(
        toy.resets.reset_estimates, dict(policy=PI, reward="sum_to_target", prompt=2, prefix=(1,), ks=[1, 4], repeats=3,
                                     rng=0),
        dict(policy=POLICY + [LONG_EOS], reward=REWARD, prompt=PROMPT, prefix=prefix_bad(PI),
             ks=["ab", None, [], [0], [2.5], [10**12]], repeats=COUNT + HUGE, rng=RNG)),
    "toy.offpolicy.reward_gradient": Case(
        toy.offpolicy.reward_gradient, dict(policy=TAB, reward="sum_to_target", prompt=2),
        dict(policy=POLICY + [LONG_EOS], reward=REWARD, prompt=PROMPT)),
    "toy.offpolicy.policy_path": Case(
        toy.offpolicy.policy_path, dict(reference=PI, reward="sum_to_target", prompt=2, steps=2, lr=0.5),
        dict(reference=POLICY + [LONG_EOS], reward=REWARD, prompt=PROMPT, steps=COUNT[1:] + HUGE, lr=POSITIVE)),
    "toy.offpolicy.weight_variance": Case(toy.offpolicy.weight_variance, dict(current=TAB, old=PI, prompt=2),
                                          dict(current=POLICY + [LONG_EOS], old=POLICY + [PI3], prompt=PROMPT)),
    "toy.exploration.success_probability": Case(
        toy.exploration.success_probability, dict(policy=PI, reward="sum_to_target", prompt=2),
        dict(policy=POLICY + [LONG_EOS], reward=REWARD, prompt=PROMPT)),
    "toy.exploration.optimal_baseline": Case(toy.exploration.optimal_baseline,
                                             dict(policy=PI, reward="sum_to_target", prompt=2),
                                             dict(policy=POLICY + [LONG_EOS], reward=REWARD, prompt=PROMPT)),
    "toy.exploration.effective_responses": Case(toy.exploration.effective_responses, dict(policy=PI, prompt=2),
                                                dict(policy=POLICY + [LONG_EOS], prompt=PROMPT)),
    "toy.exploration.first_success_cdf": Case(toy.exploration.first_success_cdf, dict(p=0.1, n=[1, 2, 10]),
                                              dict(p=UNIT, n=array_bad([1.0, 2.0]) + [[-1, 2]])),
    "toy.exploration.sample_stream": Case(
        toy.exploration.sample_stream, dict(policy=PI, reward="sum_to_target", prompt=2, n=10, rng=0),
        dict(policy=POLICY + [LONG_EOS], reward=REWARD, prompt=PROMPT, n=COUNT + HUGE, rng=RNG)),
    "toy.exploration.gradient_moments": Case(
        toy.exploration.gradient_moments, dict(policy=PI, reward="sum_to_target", prompt=2, baseline="none"),
        dict(policy=POLICY + [LONG_EOS], reward=REWARD, prompt=PROMPT, baseline=["mean", None])),
    "toy.longrun.MarkovPolicy": Case(toy.longrun.MarkovPolicy, dict(preset="sharp", temperature=0.5),
                                     dict(preset=["nope", None], temperature=POSITIVE)),
    "toy.longrun.MarkovPolicy.bigram": Case(method(MARKOV, "bigram"), dict(length=3), dict(length=COUNT + [11])),
    "toy.longrun.automaton": Case(toy.longrun.automaton, dict(reward="first_token", prompt=2),
                                  dict(reward=REWARD, prompt=PROMPT)),
    "toy.longrun.credit": Case(toy.longrun.credit, dict(policy=MARKOV, reward="sum_to_target", prompt=2, length=50),
                               dict(policy=POLICY + [PI], reward=REWARD, prompt=PROMPT, length=COUNT + [10**9])),
    "toy.longrun.credit_horizon": Case(toy.longrun.credit_horizon, dict(mean_square=[0.5, 0.1], share=0.9),
                                       dict(mean_square=array_bad([0.5, 0.1], [(2, 2)]) + [[-1.0, 1.0]],
                                            share=UNIT)),
    # -- reward models, sft ------------------------------------------------------------------------------------
    "toy.reward_models.sample_comparisons": Case(
        toy.reward_models.sample_comparisons, dict(policy=PI, reward="sum_to_target", prompt=2, n=10, sharpness=2.0,
                                               rng=0),
        dict(policy=POLICY + [LONG_EOS], reward=REWARD, prompt=PROMPT, n=COUNT + HUGE, sharpness=POSITIVE,
             rng=RNG)),
    "toy.reward_models.feature_columns": Case(
        toy.reward_models.feature_columns, dict(features="additive", length=2, n_actions=6),
        dict(features=["nope", None], length=COUNT + [12], n_actions=COUNT + [4, 7])),
    "toy.reward_models.fit_bradley_terry": Case(
        toy.reward_models.fit_bradley_terry, dict(columns=COLUMNS, n_features=N_FEATURES, data=COMPARISONS, l2=1.0,
                                              iterations=5),
        dict(columns=["ab", None, COLUMNS[:, 0], COLUMNS + 10**6, COLUMNS * 0.5], n_features=COUNT,
             data=["ab", None, (1, 2, 3), toy.reward_models.Comparisons(np.array([0, 99]), np.array([1, 2]),
                                                                     np.array([True, False]))],
             l2=POSITIVE, iterations=COUNT + [10**6])),
    "toy.reward_models.fit_bradley_terry (size)": Case(
        toy.reward_models.fit_bradley_terry,
        dict(columns=np.arange(10_000)[:, None], n_features=10_000,
             data=toy.reward_models.Comparisons(np.arange(5_000), np.arange(5_000, 10_000), np.ones(5_000, bool))),
        dict()),
    "toy.reward_models.ProxyReward": Case(
        toy.reward_models.ProxyReward, dict(policy=PI, reward="sum_to_target", prompt=2, n_comparisons=10,
                                        features="additive", sharpness=2.0, l2=1.0, seed=0),
        dict(policy=POLICY + [LONG_EOS], reward=REWARD, prompt=PROMPT, n_comparisons=COUNT + HUGE,
             features=["nope", None], sharpness=POSITIVE, l2=POSITIVE, seed=RNG),
        names=dict(n_comparisons="comparisons", seed="seed")),
    "toy.seeds.over_seeds": Case(toy.seeds.over_seeds, dict(run=lambda s: float(s), seeds=range(3)),
                                 dict(run=[3, None, lambda s: float("nan"), lambda s: "a"],
                                      seeds=[[], 5, [1, 1], [0.5], None, [True]]), names=dict(run="run")),
    "toy.seeds.rate": Case(toy.seeds.rate, dict(holds=lambda s: s > 0, seeds=range(3)),
                           dict(holds=[3, None, lambda s: 1], seeds=[[], 5, [1, 1], [0.5], None]),
                           names=dict(holds="holds")),
    "toy.reward_models.ProxyReward (a call)": Case(
        lambda **kw: PROXY(**kw), dict(prompt=2, response=(1, 2)),
        dict(response=[(1,), (1, 2, 3), (1, 7), "12", None], prompt=PROMPT + [3])),
    "toy.reward_models.ProxyReward.agreement": Case(method(PROXY, "agreement"), dict(policy=PI),
                                                    dict(policy=POLICY + [PI3])),
    "toy.reward_models.optimisation_curve": Case(
        toy.reward_models.optimisation_curve, dict(reference=PI, optimised=PROXY, measured="sum_to_target", prompt=2,
                                               betas=[0.1, 1.0]),
        dict(reference=POLICY + [LONG_EOS], optimised=REWARD, measured=REWARD, prompt=PROMPT,
             betas=["ab", None, [], [0.0], [NAN], 0.5]), names=dict(optimised="reward", measured="reward")),
    "toy.sft.autoregressive": Case(
        toy.sft.autoregressive, dict(response_probs={2: np.full((5, 5), 0.04)}, base=PI),
        dict(response_probs=["ab", None, {7: np.full((5, 5), 0.04)}, {2: np.full((5, 5), 0.05)},
                             {2: np.full((5,), 0.2)}, {2: np.full((5, 5), NAN)}], base=POLICY + [LONG_EOS])),
    "toy.sft.imperfect_expert": Case(
        toy.sft.imperfect_expert, dict(reference=PI, reward="sum_to_target", success_rate=0.5, prompts=(2,)),
        dict(reference=POLICY + [LONG_EOS], reward=REWARD + ["count_target"], success_rate=UNIT, prompts=PROMPTS)),
    "toy.sft.demonstrations": Case(toy.sft.demonstrations, dict(expert=PI, n=3, prompts=(2,), rng=0),
                                   dict(expert=POLICY, n=COUNT + HUGE, prompts=PROMPTS, rng=RNG)),
    "toy.sft.fit_sft": Case(
        toy.sft.fit_sft, dict(demos=DEMOS, base=PI, prior_strength=1.0),
        dict(demos=["ab", None, {}, {7: DEMOS[2]}, {2: np.array([[1, 9]])}, {2: np.array([1, 2])},
                    {2: np.array([[0.5, 1.0]])}], base=POLICY + [LONG_EOS], prior_strength=UNIT[2:] + [-1.0])),
    "toy.sft.fit_sft (eos)": Case(toy.sft.fit_sft, dict(demos={2: np.array([[1, 5, 5]])}, base=PI_EOS),
                                  dict(demos=[{2: np.array([[5, 1, 5]])}])),
    "toy.sft.success_rate": Case(toy.sft.success_rate, dict(policy=PI, reward="sum_to_target", prompts=(2,)),
                                 dict(policy=POLICY + [LONG_EOS], reward=REWARD, prompts=PROMPTS)),
    "toy.sft.demonstration_success": Case(
        toy.sft.demonstration_success, dict(demos=DEMOS, reward="sum_to_target", length=2, n_actions=5),
        dict(demos=["ab", None, {}, {2: np.array([[1, 9]])}], reward=REWARD, length=COUNT + [65],
             n_actions=COUNT + [7])),
    # -- train, ppo --------------------------------------------------------------------------------------------
    "toy.train.train": Case(
        toy.train.train, dict(method="rloo", steps=1, group_size=2, betas=(0.1,), seeds=(0,), lr=1.0,
                          reward="sum_to_target", reference=PI, start=TAB, prompts=(2,)),
        dict(method=METHOD, steps=COUNT + [10**6], group_size=COUNT + [1, 257], betas=["x", None, (NAN,), (-1.0,)],
             seeds=["x", None, (-1,), (2.5,)], lr=POSITIVE, reward=REWARD, reference=POLICY + [LONG_EOS],
             start=OPTIONAL_POLICY + [PI3], prompts=PROMPTS, epochs=COUNT + [21], clip=UNIT),
        names=dict(betas="beta", seeds="seed")),
    "toy.train.train (ppo)": Case(
        toy.train.train, dict(method="vineppo", steps=1, group_size=2, seeds=(0,), reference=PI, prompts=(2,)),
        dict(lam=UNIT, vine_k=COUNT + [10**9], critic_lr=UNIT, critic_features=["nope", 3])),
    "toy.train.Curves.band": Case(method(CURVES, "band"), dict(name="kl", beta_index=0),
                                  dict(name=["nope", None], beta_index=COUNT[1:] + [1])),
    "toy.train.Curves.policy": Case(method(CURVES, "policy"), dict(beta_index=0, seed_index=0, base=PI),
                                    dict(beta_index=COUNT[1:] + [1], seed_index=COUNT[1:] + [1],
                                         base=OPTIONAL_POLICY + [PI3])),
    "toy.train.tabular_logits": Case(toy.train.tabular_logits, dict(policy=PI, prompts=(2,)),
                                     dict(policy=POLICY + [LONG_EOS], prompts=PROMPTS)),
    "toy.train.to_policy": Case(toy.train.to_policy, dict(logits=LOG_PROBS, prompts=(2,), base=PI),
                                dict(logits=["ab", None, [], LOG_PROBS[:1], [np.full((1, 1, 5), NAN), LOG_PROBS[1]]],
                                     prompts=PROMPTS, base=OPTIONAL_POLICY + [PI3])),
    "toy.train.response_log_probs": Case(toy.train.response_log_probs, dict(log_probs=LOG_PROBS_B),
                                         dict(log_probs=["ab", None, [], [np.full((1, 1, 1, 5), NAN)]])),
    "toy.train.exact_metrics": Case(
        toy.train.exact_metrics, dict(log_p=LOG_P, log_ref=LOG_P[0], R=np.ones((1, 25))),
        dict(log_p=array_bad(LOG_P, [(25,)]), log_ref=array_bad(LOG_P[0], [(1, 24)]),
             R=array_bad(np.ones((1, 25)), [(1, 24)]))),
    "toy.train.sample_ids": Case(toy.train.sample_ids, dict(log_p=LOG_P, u=np.full((1, 1, 3), 0.5)),
                                 dict(log_p=array_bad(LOG_P, [()]), u=array_bad(np.full((1, 1, 3), 0.5), [(2, 3)])
                                      + [np.full((1, 1, 3), 1.5)])),
    "toy.train.token_gradient": Case(
        toy.train.token_gradient, dict(probs=[np.exp(lp) for lp in LOG_PROBS_B], ids=IDS, coef=np.ones((1, 1, 3, 2)),
                                   K=5),
        dict(probs=["ab", None, [np.full((1, 1, 1, 5), NAN), np.ones((1, 1, 5, 5))]],
             ids=["ab", None, IDS + 100, IDS[0], IDS * 0.5],
             coef=array_bad(np.ones((1, 1, 3, 2)), [(1, 1, 3)]), K=COUNT)),
    "toy.train.sampled_token_log_probs": Case(
        toy.train.sampled_token_log_probs, dict(log_probs=LOG_PROBS_B, ids=IDS, K=5),
        dict(log_probs=["ab", None, [np.full((1, 1, 1, 5), INF), np.ones((1, 1, 5, 5))]],
             ids=["ab", None, IDS + 100, IDS[0]], K=COUNT)),
    "toy.train.optimum_metrics": Case(
        toy.train.optimum_metrics, dict(beta=0.0, reward="sum_to_target", reference=PI, prompts=(2,)),
        dict(beta=UNIT[2:] + [-0.1, 101.0], reward=REWARD, reference=OPTIONAL_POLICY + [LONG_EOS], prompts=PROMPTS)),
    "toy.ppo.TokenAdvantages": Case(
        toy.ppo.TokenAdvantages, dict(method="ppo", prompts=(2,), runs=1, length=2, n_actions=5),
        dict(method=["nope", None], prompts=PROMPTS, runs=COUNT, length=COUNT + [13], n_actions=COUNT + [7],
             lam=UNIT, vine_k=COUNT + [10**6], critic_lr=UNIT, critic_features=["nope", None])),
    # -- tables, figures, exercises ----------------------------------------------------------------------------
    "toy.page.fates.fate_table": Case(fates.fate_table, dict(link_prefix="x/"),
                                 dict(rows=["ab", None, [ROW._replace(fate="nope")], [3]], link_prefix=TEXT)),
    "toy.page.fates.FateTable": Case(fates.FateTable, dict(uid="t1"),
                                dict(rows=["ab", None, [(1, 2)]], link_prefix=TEXT, uid=TEXT + ["", "a b", "1x"])),
    "toy.page.recipes.pipeline_figure": Case(
        recipes.pipeline_figure, dict(recipes={"r": ("key", [recipes.PRETRAIN])}),
        dict(recipes=["ab", 3, {}, {"r": ("key", [])}, {"r": ("key", ["stage"])},
                      {"r": ("key", [recipes.Stage("s", "nope", "d")])}])),
    "toy.page.recipes.stages_table": Case(
        recipes.stages_table, dict(recipes={"r": ("key", [recipes.PRETRAIN])}),
        dict(recipes=["ab", 3, {}, {"r": ("key", [])}, {"r": ("key", ["stage"])},
                      {"r": ("key", [recipes.Stage("s", "nope", "d")])}])),
    "toy.page.figures.base_layout": Case(
        lambda **kw: figures.base_layout(**kw), dict(fig=figures.go.Figure(), title="t", height=300),
        dict(fig=["ab", None], title=TEXT, height=COUNT + [10**6])),
    "toy.page.figures.add_curve": Case(
        figures.add_curve, dict(fig=figures.go.Figure(), x=[1, 2], name="n", hover="h", color="#222", width=2,
                                dash="dot", symbol="circle", size=6),
        dict(fig=["ab", None, {}], name=TEXT, hover=[3, b"h"], color=TEXT, width=OPTIONAL_POSITIVE, dash=[3, b"d"],
             symbol=[3, b"s"], size=OPTIONAL_POSITIVE)),
    "toy.page.figures.break_lines": Case(figures.break_lines, dict(text="a b c", width=3),
                                    dict(text=TEXT, width=COUNT + [10**6])),
    "toy.page.figures.fit_texts": Case(figures.fit_texts, dict(fig=figures.go.Figure()), dict(fig=["ab", None, {}])),
    "toy.page.figures.lift_title": Case(figures.lift_title, dict(fig_dict={"layout": {"title": {"text": "t"}}}),
                                   dict(fig_dict=["ab", None, figures.go.Figure()])),
    "toy.page.figures.top_without_title": Case(figures.top_without_title, dict(layout={"margin": {"t": 70}}),
                                          dict(layout=["ab", None, 3])),
    "toy.page.figures.decade_ticks": Case(figures.decade_ticks, dict(layout={"yaxis": {"type": "log"}}),
                                     dict(layout=["ab", None, 3, figures.go.Layout()])),
    "toy.page.figures.book_figure_html": Case(figures.book_figure_html, dict(fig_dict={"data": [], "layout": {}}),
                                         dict(fig_dict=["ab", None, figures.go.Figure()])),
    "toy.page.figures.credit_bars": Case(figures.credit_bars, dict(length=2), dict(length=COUNT + [10**6])),
    "toy.page.figures.credit_by_prior": Case(
        figures.credit_by_prior, dict(signal={"sum_to_target": {"pretrained": [0.1, 0.2]}}, title="t"),
        dict(signal=["ab", None, {}, {"r": "ab"}, {"r": {}}, {"r": {"p": []}}, {"r": {"p": [NAN, 0.1]}},
                     {"r": {"p": [INF]}}, {"r": {"p": [[0.1]]}}, {"r": {"p": "ab"}}], title=TEXT)),
    "toy.page.figures.distribution_bars": Case(
        figures.distribution_bars, dict(distributions={"a": [0.5, 0.5]}, labels=["x", "y"], title="t"),
        dict(distributions=["ab", None, {"a": [0.5]}, {"a": [NAN, 0.5]}], labels=["ab", None, []], title=TEXT,
             xtitle=TEXT, ytitle=TEXT)),
    "toy.exercises.registry.register": Case(
        lambda **kw: toy.exercises.EXERCISES.pop(registry.register(**kw).name),  # registers nothing for good
        dict(name="test-bad-input", title="t", cases=lambda rng: [], reference=abs),
        dict(name=TEXT, title=TEXT, cases=["ab", None], reference=["ab", None], kind=["nope", None],
             tolerance=POSITIVE, rtol=[v for v in POSITIVE if v is not None])),
    "toy.exercises.check": Case(toy.exercises.check, dict(name="4.1-value", fn=lambda *a: 0.0, n_cases=1),
                                dict(n_cases=[0, -3, 2.5, "3", True], time_limit=POSITIVE,
                                     seed=[-1, 2.5, "3", True])),
    "toy.exercises.seed_for": Case(toy.exercises.seed_for, dict(name="4.1-value", seed=0),
                                   dict(name=["no-such-exercise", None, 3], seed=COUNT[1:] + ["x", None, 2.5])),
    "toy.exercises.hidden_cases": Case(toy.exercises.hidden_cases, dict(name="4.1-value", seed=0),
                                       dict(name=["no-such-exercise", None, 3], seed=COUNT[1:] + ["x", None])),
    "toy.exercises.forbidden_keys": Case(toy.exercises.forbidden_keys, dict(name="4.1-value"),
                                         dict(name=["no-such-exercise", None, 3, ["4.1-value"]])),
    "toy.exercises.questions.answer": Case(questions.answer, dict(name="ex-4-1-telescope", value=0.5),
                                           dict(name=["no-such-question", None, 3]), names={"name": "question"}),
    "toy.exercises.questions.check_answer": Case(
        questions.check_answer, dict(name="ex-4-1-predict", value=[0.0] * 8, student_name="ada"),
        dict(name=["no-such-question", None, 3]), names={"name": "question"}),
    "toy.exercises.questions.ask": Case(questions.ask, dict(exercise="ex-4-1-score"),
                                        dict(exercise=["ex-9-9-none", "4.1-value", None, 3])),
    "toy.exercises.questions.student": Case(
        lambda **kw: (questions.student(**kw), questions.student(None)),  # leaves no name set
        dict(name="ada"), dict(name=[3, "", b"ada", ["ada"]]), names={"name": "student"}),
    "toy.exercises.questions.questions_of": Case(questions.questions_of, dict(exercise="ex-4-1-predict"),
                                                 dict(exercise=[None, 3, ["ex-4-1-predict"]])),
    "toy.exercises.questions.question": Case(
        lambda **kw: questions.QUESTIONS.pop(questions.question(**kw).name),  # declares nothing for good
        dict(name="ex-9-9-bad", exercise="ex-9-9-bad", prompt="p {a}", kind="number", answer=lambda s: s["a"],
             setting={"a": 1.0}),
        dict(name=TEXT, exercise=["4.1", None, 3], prompt=TEXT, kind=["essay", None], answer=["ab", None],
             tolerance=POSITIVE, points=COUNT, predict=["yes", None, 1]),
        names={"answer": "answer and draw", "kind": "question kind"}),
    "toy.exercises.questions.rubric": Case(
        lambda exercise, criteria: questions.rubric(exercise, *criteria) and questions.RUBRICS.pop(exercise),
        dict(exercise="ex-9-9-bad", criteria=[("a criterion", 2)]),
        dict(exercise=["4.1", None, 3], criteria=[[], [("", 1)], [("c", 0)], [("c", 2.5)], [(None, 1)]]),
        names={"criteria": "criteri"}),
    "toy.exercises.registry.random_setting": Case(
        registry.random_setting, dict(rng=np.random.default_rng(0), length=2),
        dict(rng=["ab", None, 3], length=[0, -3, 2.5, "3", True, 11])),
    # -- distillation, format gate, GAE(γ, λ), prefix tree ---------------------------------------------------------
    "toy.distillation.token_signal": Case(
        toy.distillation.token_signal, dict(student=PI_EOS, teacher_=TEACHER_EOS, prompt=2, response=(1, 5, 5)),
        dict(student=POLICY + [PI], teacher_=POLICY + [PI], prompt=PROMPT,
             response=prefix_bad(PI_EOS) + [(1, 2), ()])),
    "toy.distillation.signal_table": Case(
        toy.distillation.signal_table, dict(student=PI, teacher_=TEACHER, prompt=2),
        dict(student=POLICY + [PI3, LONG_EOS], teacher_=POLICY + [PI3, LONG_EOS], prompt=PROMPT)),
    "toy.distillation.signal_alignment": Case(
        toy.distillation.signal_alignment,
        dict(student=PI, teacher_=TEACHER, reward="sum_to_target", prompt=2, beta=0.3),
        dict(student=POLICY + [PI3, LONG_EOS], teacher_=POLICY + [PI3, LONG_EOS], reward=REWARD, prompt=PROMPT,
             beta=POSITIVE)),
    "toy.distillation.signal_agreement": Case(
        toy.distillation.signal_agreement,
        dict(student=PI, teacher_=TEACHER, reward="sum_to_target", prompt=2, beta=0.3),
        dict(student=POLICY + [PI3, LONG_EOS], teacher_=POLICY + [PI3, LONG_EOS], reward=REWARD, prompt=PROMPT,
             beta=POSITIVE)),
    "toy.distillation.distill": Case(
        toy.distillation.distill, dict(method="on_policy", teacher_beta=0.3, reward="sum_to_target", steps=1,
                                   group_size=2, seeds=(0,), lr=1.0),
        dict(method=METHOD, teacher_beta=POSITIVE, reward=REWARD, steps=COUNT + [10**6],
             group_size=COUNT + [1, 257], seeds=["x", None, (), (-1,), (2.5,), (True,)], lr=POSITIVE),
        names=dict(seeds="seed")),
    "toy.format_gate.readable": Case(toy.format_gate.readable, dict(prompt=2, response=(1, 4, 4)),
                                     dict(prompt=PROMPT, response=[(9,), "144", None, (1.5,), 3, (True,)])),
    "toy.format_gate.format_rate": Case(toy.format_gate.format_rate, dict(policy=PI, prompts=(2, 3)),
                                        dict(policy=POLICY + [LONG_EOS], prompts=PROMPTS)),
    "toy.format_gate.format_sft": Case(
        toy.format_gate.format_sft, dict(base=PI, n_demos=3, prior_strength=0.1, seed=0),
        dict(base=POLICY + [LONG_EOS], n_demos=COUNT + HUGE, prior_strength=NON_NEGATIVE, seed=RNG + [None])),
    "toy.format_gate.rl_curves": Case(
        toy.format_gate.rl_curves, dict(start=PI, task_reward="sum_to_target", gate=True, steps=1, group_size=2,
                                    seeds=(0,), lr=4.0, beta=0.01),
        dict(start=POLICY + [LONG_EOS], task_reward=REWARD, gate=["yes", None, 1], steps=COUNT + [10**6],
             group_size=COUNT + [1, 257], seeds=["x", None, (), (-1,), (2.5,)], lr=POSITIVE,
             beta=[-0.1, 101.0, NAN, INF] + WRONG_TYPES),
        names=dict(seeds="seed")),
    "toy.gae_discount.advantage_error": Case(
        toy.gae_discount.advantage_error, dict(policy=PI, reward="sum_to_target", prompt=2, value_tables=V_TABLES,
                                           gamma=0.9, lam=0.5),
        dict(policy=POLICY + [LONG_EOS], reward=REWARD, prompt=PROMPT, value_tables=V_BAD, gamma=UNIT, lam=UNIT)),
    "toy.gae_discount.exact_critic": Case(
        toy.gae_discount.exact_critic, dict(policy=PI, reward="sum_to_target", prompt=2),
        dict(policy=POLICY + [LONG_EOS], reward=REWARD, prompt=PROMPT)),
    "toy.prefix_tree.counts": Case(toy.prefix_tree.counts, dict(policy=PI_EOS, reward="sum_to_target", prompt=2),
                                   dict(policy=POLICY + [LONG_EOS], reward=REWARD, prompt=PROMPT)),
    "toy.prefix_tree.path_view": Case(
        toy.prefix_tree.path_view, dict(policy=PI_EOS, reward="sum_to_target", prompt=2, path=(1, 5)),
        dict(policy=POLICY + [LONG_EOS], reward=REWARD, prompt=PROMPT,
             path=prefix_bad(PI_EOS) + [(1,), (1, 2, 3), ()])),
    # -- practitioners' boxes (issue 51) ------------------------------------------------------------------------
    "toy.batching.reward_distribution": Case(batching.reward_distribution,
                                             dict(policy=PI, reward="sum_to_target", prompt=2),
                                             dict(policy=POLICY, reward=REWARD, prompt=PROMPT)),
    "toy.batching.tie_probability": Case(batching.tie_probability,
                                         dict(policy=PI, reward="sum_to_target", prompt=2, n=4),
                                         dict(policy=POLICY, reward=REWARD, prompt=PROMPT, n=COUNT + [10**6])),
    "toy.batching.dynamic_sampling": Case(batching.dynamic_sampling,
                                          dict(policy=PI, reward="sum_to_target", prompt=2, n=4),
                                          dict(policy=POLICY, reward=REWARD, prompt=PROMPT, n=COUNT + [1, 10**6])),
    "toy.batching.is_tie": Case(batching.is_tie, dict(rewards=[[0.0, 1.0], [1.0, 1.0]]),
                                dict(rewards=array_bad([[0.0, 1.0], [1.0, 1.0]], [()]))),
    "toy.batching.reinforce_pp_baseline": Case(
        batching.reinforce_pp_baseline, dict(rewards=[[0.0, 1.0], [1.0, 1.0]], tokens=4, eps=1e-8),
        dict(rewards=array_bad([[0.0, 1.0], [1.0, 1.0]], [(), (3,), (2, 1)]), tokens=COUNT, eps=POSITIVE)),
    "toy.batching.noise_share": Case(
        batching.noise_share, dict(outcomes=[[0.0, 1.0], [1.0, 1.0]], noise_sd=0.05, rng=0),
        dict(outcomes=array_bad([[0.0, 1.0], [1.0, 1.0]], [(), (3,), (2, 1)]) + [[[0.0, 1.0]], [[1.0, 1.0]]],
             noise_sd=POSITIVE, rng=[-1, 2.5, "x"])),
    "toy.scale.critic_cost": Case(scale.critic_cost, dict(critic_size=1.0, reward_model_size=0.0),
                                  dict(critic_size=[0.0, -1.0, 101.0, NAN, INF] + WRONG_TYPES,
                                       reward_model_size=[-1.0, 101.0, NAN, INF] + WRONG_TYPES)),
    "toy.discount.ShiftedReward": Case(toy.discount.ShiftedReward, dict(reward="sum_to_target", shift=-1.0),
                                       dict(reward=REWARD, shift=[NAN, INF, 1000.0] + WRONG_TYPES)),
    "toy.discount.mean_length_given": Case(toy.discount.mean_length_given,
                                           dict(policy=PI_EOS, prompt=2, reward="sum_to_target", value=0.0),
                                           dict(policy=POLICY, prompt=PROMPT, reward=REWARD,
                                                value=[NAN, INF, 0.5] + WRONG_TYPES)),
    "toy.train.Ascent": Case(toy.train.Ascent, dict(optimizer="adam", lr=0.1),
                             dict(optimizer=["nope", None], lr=POSITIVE)),
}

EXEMPT = {
    "toy.train.Ascent.step": "per-step interface of toy.train on arrays train builds itself (Ascent's constructor "
                             "checks the user's optimizer and lr)",
    "toy.page.knobs": "a data table of the trainers' setting names, with no user input: tests/test_knobs.py checks "
                      "every name and the rendered table",
    "toy.checks": "the validators themselves: properties in tests/test_checks.py (hypothesis)",
    "toy.page.explorer": "explorer machinery (issue 11 owns it): a control's value is checked against its finite "
                         "options by Explorer.state; tests/test_explorers.py drives every control at every value",
    "toy.page.tables": "explorer machinery (the numbers behind a figure, split out of toy.page.explorer): reads the "
                       "figures toy builds; tests/test_explorer_tables.py checks every explorer's tables",
    "toy.page.explorers": "the book's explorers: built with no user data, their inputs are control options, checked "
                          "by toy.page.explorer; tests/test_explorers.py drives every control at every value",
    "toy.ppo.TokenAdvantages.uniforms_shape": "per-step interface of toy.train on arrays train builds itself "
                                              "(train and the constructor check the user's input)",
    "toy.ppo.TokenAdvantages.cells": "per-step interface of toy.train (see uniforms_shape)",
    "toy.ppo.TokenAdvantages.values": "per-step interface of toy.train (see uniforms_shape)",
    "toy.ppo.TokenAdvantages.update_critic": "per-step interface of toy.train (see uniforms_shape)",
    "toy.ppo.TokenAdvantages.set_tables": "per-step interface of toy.train (see uniforms_shape)",
    "toy.page.fates.FateTable.html": "takes no argument",
    "toy.policy.Policy": "the abstract base class: takes no argument (its methods have rows, and BigramPolicy and "
                         "TabularPolicy check their construction)",
    "toy.train.Curves.first_signal": "takes no argument",
    "toy.page.prose.Quoted": "a str subclass whose repr is its text: any str is valid input",
    "toy.exercises.questions.judge": "internal to the three views: takes a question's spec and an answer already "
                                     "normalised by check_answer (or by the page script), both made by toy",
    "toy.exercises.questions.as_value": "internal to the grader: turns a record answer left in a notebook back into "
                                        "an answer, and returns None for anything malformed (the grader says so)",
    "toy.exercises.questions.current_student": "takes no argument: the name set by student, or TOY_STUDENT",
    "toy.exercises.questions.current_key": "takes no argument: the key set by student",
    "toy.exercises.questions.AnswerResult.show": "what answer returns, for display: takes no argument",
    "toy.exercises.questions.normal_name": "internal to the grader and student: a name already checked to be text "
                                           "(student refuses anything else), normalised to NFC",
    "toy.exercises.questions.normalised": "internal to the grader: like as_value, returns None for anything "
                                          "malformed (the grader says so)",
    "toy.exercises.questions.Question.instance": "a declared question's method, given settings its own draw made "
                                        "(tests/test_questions.py computes every question at 11 settings)",
    "toy.exercises.questions.Question.prompt_at": "a declared question's method, given settings its own draw made "
                                        "(tests/test_questions.py computes every question at 11 settings)",
    "toy.exercises.questions.Question.tolerance_at": "a declared question's method, given settings its own draw "
                                              "made (tests/test_questions.py computes every question at 11 "
                                              "settings); a declared tolerance that gives bad numbers is refused in "
                                              "words",
    "toy.exercises.questions.Question.spec": "a declared question's method, given settings its own draw made "
                                        "(tests/test_questions.py computes every question at 11 settings)",
    "toy.exercises.questions.Ask.static_html": "what ask returns, for display: takes no argument",
    "toy.exercises.questions.Ask.text": "what ask returns, for display: takes no argument",
    "toy.exercises.call": "internal to toy.exercises.check: runs the student's function "
                          "on a case check built, with the time limit check has already validated",
    "toy.exercises.judge": "internal to toy.exercises.check: compares an Outcome that call built with the reference "
                           "answer; never sees a value a user typed",
    "toy.exercises.registry.forbid": "a declaration made once, at import, by the exercise modules "
                                     "(toy.exercises.section4x); tests/test_course.py resolves every declaration, "
                                     "and a bad reference is a ValueError from toy.exercises.forbidden.resolve",
    "toy.exercises.registry.allow": "a declaration made once, at import, by the exercise modules; a bad one (an "
                                    "unknown exercise or capability, no words) is a ValueError naming it, tested "
                                    "in tests/test_allow_list.py",
    "toy.exercises.forbidden": "the forbidden-reference watch behind check: resolve and code_keys read the "
                               "declarations of forbid (tests/test_course.py resolves every one), Forbidden.message "
                               "formats the reference the watch saw",
}
"""Public callables (or whole modules, by prefix) without a row in CASES, each with its reason."""


def _is_record(cls) -> bool:
    """NamedTuples and dataclasses hold results that toy builds: their constructors are records, not checks."""
    return issubclass(cls, tuple) or hasattr(cls, "__dataclass_fields__")


def public_callables() -> list[str]:
    """Every public function, class (unless a record) and method defined in a toy module, by qualified name."""
    found = []
    for info in pkgutil.walk_packages(toy.__path__, "toy."):
        mod = importlib.import_module(info.name)
        for name, obj in vars(mod).items():
            if name.startswith("_") or getattr(obj, "__module__", None) != mod.__name__:
                continue
            if inspect.isfunction(obj):
                found.append(f"{mod.__name__}.{name}")
            elif inspect.isclass(obj):
                if not _is_record(obj):
                    found.append(f"{mod.__name__}.{name}")
                found += [f"{mod.__name__}.{name}.{m}" for m, f in vars(obj).items()
                          if not m.startswith("_") and inspect.isfunction(f)]
    return sorted(set(found))


def _exemption(name: str) -> str | None:
    for key, reason in EXEMPT.items():
        if name == key or (key in sys.modules and name.startswith(key + ".")):  # a module exempts its contents
            return reason
    return None


def test_every_public_function_is_covered():
    covered = {key.split(" (")[0] for key in CASES}
    missing = [n for n in public_callables() if n not in covered and _exemption(n) is None]
    assert not missing, f"public functions with no row in CASES (tests/test_bad_input.py) and no exemption: {missing}"
    stale = [k for k in covered if k not in public_callables()]
    assert not stale, f"rows in CASES for functions that no longer exist: {stale}"
    assert all(reason.strip() for reason in EXEMPT.values())


def _run(fn, kwargs, timeout=TIME_LIMIT):
    """Call fn(**kwargs) in a thread; return ('ok', result) / ('error', exception) / ('hang', None)."""
    box = {}

    def target():
        try:
            box["result"] = ("ok", fn(**kwargs))
        except BaseException as err:  # noqa: BLE001 - reported to the test
            box["result"] = ("error", err)

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    thread.join(timeout)
    return box.get("result", ("hang", None))


def _bad_calls():
    for key, case in CASES.items():
        for arg, values in case.bad.items():
            for i in range(len(values)):
                yield pytest.param(key, arg, i, id=f"{key}-{arg}-{i}")


def _numbers(value, depth=0):
    """Every number a result holds (arrays, sequences, dicts, dataclasses and named tuples walked), as floats."""
    if depth > 6 or isinstance(value, (str, bytes)) or callable(value):
        return []
    if isinstance(value, (bool, np.bool_)):
        return []
    if isinstance(value, (numbers.Number, np.number)):
        return [complex(value).real] if isinstance(value, complex) else [float(value)]
    if isinstance(value, np.ndarray):
        return value.astype(float).ravel().tolist() if np.issubdtype(value.dtype, np.number) else []
    if isinstance(value, dict):
        return [x for v in value.values() for x in _numbers(v, depth + 1)]
    if isinstance(value, (list, tuple)):
        return [x for v in value for x in _numbers(v, depth + 1)]
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return [x for f in dataclasses.fields(value) for x in _numbers(getattr(value, f.name), depth + 1)]
    return []


@pytest.mark.parametrize("key", [k for k in CASES if not k.endswith("(size)")])  # (size) rows: refused, below
def test_good_setting_runs(key):
    """The good setting returns, its numbers are not NaN, and a second call gives the same numbers (seeded: each
    call gets its own copy of the setting, a random generator's state included)."""
    case = CASES[key]
    status, result = _run(case.call, copy.deepcopy(case.good))
    assert status == "ok", f"{key}({case.good}) should run, got {status}: {result!r}"
    found = _numbers(result)
    assert not any(math.isnan(x) for x in found), f"{key}({case.good}) returned NaN: {result!r}"
    again = _numbers(_run(case.call, copy.deepcopy(case.good))[1])
    assert np.array_equal(found, again), f"{key}({case.good}) gave other numbers on a second call"


@pytest.mark.parametrize("key", [k for k in CASES if k.endswith("(size)")])
def test_size_guards_refuse_at_once(key):
    case = CASES[key]
    status, err = _run(case.call, dict(case.good))
    assert status == "error" and isinstance(err, ValueError), f"{key}: expected ValueError, got {status}: {err!r}"
    assert "limit" in str(err)


@pytest.mark.parametrize("key,arg,index", list(_bad_calls()))
def test_bad_input_is_refused(key, arg, index):
    case = CASES[key]
    value = case.bad[arg][index]
    kwargs = dict(case.good, **{arg: value})
    status, err = _run(case.call, kwargs)
    assert status != "hang", f"{key} with {arg}={value!r} did not return within {TIME_LIMIT} s"
    assert status == "error", f"{key} accepted {arg}={value!r}"
    assert isinstance(err, ValueError), f"{key} with {arg}={value!r} raised {type(err).__name__}: {err}"
    word = case.names.get(arg, arg)
    assert word in str(err), f"{key} with {arg}={value!r}: the error does not name {word!r}: {err}"
