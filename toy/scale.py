"""What PPO's critic costs at LLM scale, against a group method: an estimate from counting, not a measurement.

**Memory** (model states, activations aside). Mixed-precision Adam keeps, per trained parameter, 2-byte weights and
gradients, 4-byte master weights and Adam's two 4-byte moments: 16 bytes (the count of ZeRO, Rajbhandari et al.
2020). A frozen model run in 16 bits (the reference, a reward model) keeps 2 bytes per parameter.

**Compute** per token of a sampled response, in units of the policy's size N: a forward pass costs about 2N FLOPs
and a backward pass 4N (Kaplan et al. 2020). A group method samples (2N), scores the tokens under the sampling
policy and the reference (2N + 2N) and trains the policy (6N); PPO adds the critic's values (2C) and its training
(6C) for a critic of size C. A reward model of size R adds 2R to both.

With sizes in units of the policy's (C = 1 is a critic the policy's size), PPO's multiples are

    memory  = (16 + 2 + 2R + 16C) / (16 + 2 + 2R),
    compute = (12 + 2R + 8C) / (12 + 2R).

Sampling is slower per FLOP than training (one token at a time), so the wall-clock multiple is smaller than the
compute one.
"""

from __future__ import annotations

from typing import NamedTuple

from . import checks

TRAINED_BYTES = 2 + 2 + 4 + 4 + 4
"""Bytes per trained parameter under mixed-precision Adam: weights, gradients, master weights, two moments."""
FROZEN_BYTES = 2
"""Bytes per parameter of a frozen model run in 16 bits."""
FORWARD_FLOPS, BACKWARD_FLOPS = 2, 4
"""FLOPs per parameter per token."""


class CriticCost(NamedTuple):
    """PPO's memory and compute as multiples of a group method's (the same policy, reference and reward model)."""

    memory: float
    compute: float


def critic_cost(critic_size: float = 1.0, reward_model_size: float = 0.0) -> CriticCost:
    """PPO against a group method, sizes in units of the policy's: ``CriticCost``. A 0/1 verifier has
    ``reward_model_size=0``; InstructGPT's 6B critic beside its 175B policy is ``critic_size=6/175``."""
    c = checks.in_range("critic_size", critic_size, 0.0, 100.0)
    r = checks.in_range("reward_model_size", reward_model_size, 0.0, 100.0)
    if c <= 0:
        raise checks.fail("critic_size", "a positive size, in units of the policy's", critic_size)
    group_memory = TRAINED_BYTES + FROZEN_BYTES * (1 + r)  # policy; reference and reward model
    group_compute = FORWARD_FLOPS * 3 + (FORWARD_FLOPS + BACKWARD_FLOPS) + FORWARD_FLOPS * r  # sample, 2 scores, train
    return CriticCost((group_memory + TRAINED_BYTES * c) / group_memory,
                      (group_compute + (2 * FORWARD_FLOPS + BACKWARD_FLOPS) * c) / group_compute)
