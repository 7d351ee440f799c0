"""Figure 4.1 (section 4.1): exact per-token credit against sequence-level credit."""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from .. import exact, figures
from ..explorer import Action, Explorer, dropdown, slider
from ..policy import PRESETS, VOCAB_SIZE, check_prompt, reference_policy
from ..rewards import REWARDS

TEMPERATURES = tuple(float(t) for t in np.logspace(-1, 1, 9))
"""The temperature grid of the explorers' sliders: 0.1 to 10, evenly spaced in log τ (τ = 1 is on it)."""

N_SAMPLES = 32
"""How many sampled responses a "Sample a response" button cycles through at each setting."""


def credit_assignment(prompt: int = 2, length: int = 4, response=(1, 2, 3, 4)) -> Explorer:
    """Figure 4.1: exact per-token advantages against the sequence-level advantage, under π_ref at temperature τ.

    Controls: reward, temperature τ, π_ref preset, and the response's tokens (or a sampled response).
    Outputs: ``A{t}`` = A(s_t, y_t) (depends on y_0..y_t), ``seq`` = r − V(x), ``r``, ``v`` = V(x),
    ``mean_abs`` and ``noise`` (shape (length,)), and ``samples`` (N_SAMPLES responses drawn from π).
    """
    prompt = check_prompt(prompt)
    tokens = [f"y{t}" for t in range(length)]
    policy_controls = ("reward", "temperature", "preset")

    @lru_cache(maxsize=128)
    def tables(reward: str, temperature: float, preset: str):
        policy = reference_policy(preset, temperature, length)
        V = exact.values(policy, reward, prompt)
        A = exact.advantage_table(policy, reward, prompt)
        mean_abs, noise = exact.credit_by_position(policy, reward, prompt)
        samples = policy.sample(prompt, N_SAMPLES, rng=np.random.default_rng(0))
        return V, A, mean_abs, noise, samples

    def compute(state: dict) -> dict:
        V, A, mean_abs, noise, samples = tables(state["reward"], state["temperature"], state["preset"])
        y = tuple(state[name] for name in tokens)
        out = {f"A{t}": A[y + (t,)] for t in range(length)}
        out.update(seq=V[length][y] - V[0], r=V[length][y], v=V[0], mean_abs=mean_abs, noise=noise,
                   samples=samples.ravel())
        return out

    outputs = {f"A{t}": policy_controls + tuple(tokens[: t + 1]) for t in range(length)}
    outputs.update(
        seq=policy_controls + tuple(tokens), r=("reward",) + tuple(tokens), v=policy_controls,
        mean_abs=policy_controls, noise=policy_controls, samples=("temperature", "preset"),
    )
    controls = [
        dropdown("reward", "Reward", {name: name.replace("_", " ") for name in REWARDS}, "sum_to_target"),
        slider("temperature", "Temperature τ", TEMPERATURES, 1.0),
        dropdown("preset", "π_ref", {name: name for name in PRESETS}, "pretrained"),
    ] + [dropdown(name, f"Token {t + 1}", range(VOCAB_SIZE), response[t]) for t, name in enumerate(tokens)]
    words = " ".join("{" + name + "}" for name in tokens)
    return Explorer(
        title="Figure 4.1: exact per-token credit against sequence-level credit",
        controls=controls,
        outputs=outputs,
        compute=compute,
        figure=figures.credit_bars(length),
        traces=[
            (0, "y", [f"A{t}" for t in range(length)]),
            (1, "y", ["seq"] * length),
            (2, "y", ["mean_abs"]),
            (3, "y", ["noise"]),
        ],
        layout={"title.text": f"Prompt {prompt}, response {words}: r = {{r:.2f}}, V(x) = {{v:.3f}}"},
        actions=[Action("Sample a response", "samples", tuple(tokens), N_SAMPLES)],
        caption=(f"Precomputed by toy for prompt {prompt} at every setting (temperatures on a grid from 0.1 to 10); "
                 "run the notebook for the live version."),
    )
