"""Section 4.4's checked exercises: the behaviour-cloning cost, and SFT's next-token probabilities by counting."""

from __future__ import annotations

import numpy as np

from .. import imitation, sft
from ..policy import reference_policy
from ..vocab import PROMPTS, VOCAB_SIZE
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


register("4.4-bc-cost", "the expected cost of behaviour cloning", _bc_cases, imitation.behaviour_cloning_cost)
register("4.4-sft-counts", "SFT's next-token probabilities by counting", _sft_cases, _sft_reference, kind="array")

allow("4.4-bc-cost", "nothing of toy but its constants")
allow("4.4-sft-counts", "the base policy's next-token probabilities", "policy.next_token_probs")

forbid("4.4-bc-cost", "J_BC(T) summed step by step", "toy.imitation.behaviour_cloning_cost",
       "toy.imitation.cost_curves")
forbid("4.4-sft-counts", "SFT's probabilities by counting", "toy.sft.fit_sft")
