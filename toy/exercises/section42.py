"""Section 4.2's checked exercises."""

from __future__ import annotations

import numpy as np

from .. import kl
from ..policy import PROMPTS, reference_policy
from ..rewards import REWARDS
from . import Case, random_setting, register


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


register("4.2-kl-optimum", "the KL-regularised optimum over whole responses", _kl_optimum_cases,
         lambda policy, reward, prompt, beta: kl.kl_regularised_optimum(policy, reward, beta).response_probs(prompt),
         kind="array")
