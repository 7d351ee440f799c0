"""toy: a toy language model with exact credit assignment, for the chapter "The LLM as a Policy".

Digits 0-4 are the vocabulary, a response has RESPONSE_LENGTH tokens, a prompt is a target digit. Every value
and advantage is computed exactly by enumerating the prefix tree (see ``toy.exact``).
"""

# Modules are also reachable as toy.<module>; sections 4.2-4.5 add theirs to this line.
from . import (
    bootstrap,
    clipping,
    concepts,
    critic,
    discount,
    distillation,
    estimators,
    exercises,
    exploration,
    format_gate,
    gae,
    gae_discount,
    imitation,
    kl,
    longrun,
    montecarlo,
    offpolicy,
    ppo,
    prefix_tree,
    resets,
    reward_models,
    seeds,
    sft,
    train,
    trust_region,
)
from .exact import (
    advantage_table,
    credit_by_position,
    sequence_advantage,
    token_advantages,
    value,
    values,
)
from .page import explorers, fates, figures, glue, quote, recipes  # the page side, as the notebooks call it
from .policy import (
    HABIT_RANGE,
    HABITS,
    PRESETS,
    BigramPolicy,
    HabitPolicy,
    Policy,
    TabularPolicy,
    reference_policy,
    strip_eos,
)
from .rewards import REWARDS, get_reward, reward_table
from .vocab import EOS, PROMPTS, RESPONSE_LENGTH, VOCAB_SIZE

__all__ = [
    "exercises", "explorers", "figures", "kl", "montecarlo", "trust_region", "critic",
    "estimators", "gae", "gae_discount", "imitation", "ppo", "recipes", "sft", "train",
    "bootstrap", "clipping", "discount", "distillation", "exploration", "fates", "format_gate", "longrun", "offpolicy",
    "prefix_tree", "resets", "reward_models", "seeds", "concepts",
    "EOS", "HABITS", "HABIT_RANGE", "PRESETS", "PROMPTS", "RESPONSE_LENGTH", "REWARDS", "VOCAB_SIZE",
    "BigramPolicy", "HabitPolicy", "Policy", "TabularPolicy",
    "advantage_table", "credit_by_position", "get_reward", "reference_policy", "reward_table",
    "sequence_advantage", "strip_eos", "token_advantages", "value", "values",
    "glue", "quote",
]
