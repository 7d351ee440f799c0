"""Figure 4.1 (section 4.1): exact per-token credit against sequence-level credit."""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from ... import exact
from ...policy import HABIT_RANGE, PRESETS, check_prompt, reference_policy
from ...rewards import REWARDS
from ...vocab import VOCAB_SIZE
from .. import figures
from ..explorer import Action, Explorer, dropdown, live_slider, reused, slider

TEMPERATURES = tuple(float(t) for t in np.logspace(-1, 1, 9))
"""The temperature grid of the explorers' sliders: 0.1 to 10, evenly spaced in log τ (τ = 1 is on it)."""

SHAPING = {"count": "counting habit", "repeat": "repeat habit", "know": "knows the task"}
"""The habits of π_ref the live view's sliders shift (names of ``toy.HABITS`` → slider label)."""

N_SAMPLES = 32
"""How many sampled responses a "Sample a response" button cycles through at each setting."""


@reused
def credit_assignment(prompt: int = 2, length: int = 4, response=(1, 2, 3, 4)) -> Explorer:
    """Figure 4.1: exact per-token advantages against the sequence-level advantage, under π_ref at temperature τ.

    Controls: reward, temperature τ (continuous from 0.1 to 10 in the live view, a 9-point grid in the static
    view), π_ref preset, the live view's habit sliders (``SHAPING``: shifts of the preset's habit weights), and
    the response's tokens (or a sampled response). Outputs: ``A{t}`` = A(s_t, y_t) (depends on y_0..y_t),
    ``seq`` = r − V(x), ``r``, ``v`` = V(x), ``signal`` = E[A_t²] and ``noise`` = E[(r − V(x) − A_t)²]
    (shape (length,), see ``toy.credit_by_position``), and ``samples`` (N_SAMPLES responses drawn from π).
    """
    prompt = check_prompt(prompt)
    tokens = [f"y{t}" for t in range(length)]
    prior_controls = ("temperature", "preset") + tuple(SHAPING)
    policy_controls = ("reward",) + prior_controls

    @lru_cache(maxsize=128)
    def tables(reward: str, temperature: float, preset: str, *shifts: float):
        policy = reference_policy(preset, temperature, length, **dict(zip(SHAPING, shifts, strict=True)))
        V = exact.values(policy, reward, prompt)
        A = exact.advantage_table(policy, reward, prompt)
        signal, noise = exact.credit_by_position(policy, reward, prompt)
        samples = policy.sample(prompt, N_SAMPLES, rng=np.random.default_rng(0))
        return V, A, signal, noise, samples

    def compute(state: dict) -> dict:
        V, A, signal, noise, samples = tables(state["reward"], *(state[c] for c in prior_controls))
        y = tuple(state[name] for name in tokens)
        out = {f"A{t}": A[y + (t,)] for t in range(length)}
        out.update(seq=V[length][y] - V[0], r=V[length][y], v=V[0], signal=signal, noise=noise,
                   samples=samples.ravel())
        return out

    outputs = {f"A{t}": policy_controls + tuple(tokens[: t + 1]) for t in range(length)}
    outputs.update(
        seq=policy_controls + tuple(tokens), r=("reward",) + tuple(tokens), v=policy_controls,
        signal=policy_controls, noise=policy_controls, samples=prior_controls,
    )
    controls = [
        dropdown("reward", "Reward", {name: name.replace("_", " ") for name in REWARDS}, "sum_to_target"),
        slider("temperature", "Temperature τ", TEMPERATURES, 1.0, live=True, log=True),
        dropdown("preset", "π_ref", {name: name for name in PRESETS}, "pretrained"),
    ] + [live_slider(habit, f"{label} +", *HABIT_RANGE, 0.0) for habit, label in SHAPING.items()]
    controls += [dropdown(name, f"Token {t + 1}", range(VOCAB_SIZE), response[t]) for t, name in enumerate(tokens)]
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
            (2, "y", ["signal"]),
            (3, "y", ["noise"]),
        ],
        layout={"title.text": f"Prompt {prompt}, response {words}: r = {{r:.2f}}, V(x) = {{v:.3f}}"},
        actions=[Action("Sample a response", "samples", tuple(tokens), N_SAMPLES)],
        caption=(f"Precomputed by toy for prompt {prompt} at every setting of these controls: the temperature on "
                 "a grid of 9 values from 0.1 to 10 and π_ref's five presets. Run the notebook for the live "
                 "version, where τ moves continuously and sliders shape π_ref's habits (counting, repeating, "
                 "knowing the task)."),
    )


def credit_by_prior(prompt: int = 2, length: int = 4, temperature: float = 1.0,
                    rewards=("sum_to_target", "first_token")) -> dict:
    """E[A_t²] at every position, for every preset and each reward: {reward: {preset: array of shape (length,)}}.

    The data of the figure that shows the two rewards side by side (``toy.figures.credit_by_prior``).
    """
    return {reward: {preset: exact.credit_by_position(reference_policy(preset, temperature, length), reward,
                                                      prompt)[0]
                     for preset in PRESETS}
            for reward in rewards}


def prior_comparison(prompt: int = 2, length: int = 4, temperature: float = 1.0):
    """The two rewards side by side: E[A_t²] by position for every preset, sum to target above, first token below
    (a plotly figure, from ``credit_by_prior``)."""
    data = credit_by_prior(prompt, length, temperature)
    title = f"Where credit sits, prior by prior (prompt {prompt}, τ = {temperature:g}): E[A_t²] for both rewards"
    return figures.credit_by_prior(data, title)
