"""Section 4.2's explorers: why text generation is an unusually easy and an unusually hard RL problem.

One figure per property. Explorers: resets (``resets``), the prior (``prior``), a learned reward (``goodhart``), long
sequences (``long_credit``) and drift (``drift``); each computes with toy and declares which controls each output
depends on. Static figures (``FIGURES``): the action space (``action_space_figure``) and sparse reward
(``sparse_reward_figure``), where moving a control only re-ran a formula the text states.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from ... import exploration, longrun, resets
from ...exact import value
from ...policy import PRESETS, check_prompt, reference_policy
from ...reward_models import PROXY_FEATURES, ProxyReward, optimisation_curve
from ...rewards import REWARDS
from ...vocab import PROMPTS, VOCAB_SIZE
from ..explorer import Explorer, dropdown, reused, slider
from ..figures import (
    EXACT,
    EXACT_COLOUR,
    GREY,
    NOISE_LABEL,
    SEQUENCE,
    SEQUENCE_COLOUR,
    SIGNAL_LABEL,
    add_curve,
    base_layout,
)
from .credit import TEMPERATURES

PREFIXES = {(): "x (no tokens yet)", (1,): "x · 1", (1, 2): "x · 1 2", (1, 2, 3): "x · 1 2 3"}
REWARD_LABELS = {name: name.replace("_", " ") for name in REWARDS}


# -- known dynamics: resetting is free -----------------------------------------------------------------------------
RESET_KS = (1, 2, 4, 9, 16, 32, 64, 128, 256)
RESET_REPEATS = 20
RESET_TEMPERATURES = tuple(TEMPERATURES[i] for i in (0, 2, 4, 6, 8))
RMS_TICKS = tuple(m * 10.0 ** e for e in range(-4, 1) for m in (1, 2, 5))
"""The labels of the resets explorer's RMS error axis (log): 1, 2 and 5 of each decade from 10⁻⁴ to 5."""


def _all_zero_note(e, repeats: int) -> str:
    """What the seeded run shows at K = 1 (the first column of ``e.estimates``), for the resets caption."""
    zeros = int(np.sum(e.estimates[:, 0] == 0))
    if zeros == repeats:
        return (f"In this seeded run they all are, so the K = 1 error reads {e.rmse[0]:.3f} against the exact "
                f"{e.exact_rmse[0]:.3f}.")
    return f"In this seeded run {zeros} of the {repeats} are 0."


@reused
def resets_explorer(prompt: int = 2) -> Explorer:
    """Monte Carlo values from K rollouts restarted at a prefix converge to the exact V (VinePPO's estimator).

    Controls: the prefix (the state reset to) and the temperature of π_ref. Outputs: ``est`` (RESET_REPEATS
    estimates for each K), ``v`` (exact V), ``band_hi``/``band_lo`` (V ± exact standard error), ``rmse`` (measured)
    and ``exact_rmse`` = sqrt(Var[r|s]/K).
    """
    prompt = check_prompt(prompt)
    ks = np.array(RESET_KS, dtype=float)

    @lru_cache(maxsize=64)
    def result(prefix, temperature):
        policy = reference_policy("pretrained", temperature)
        return resets.reset_estimates(policy, "sum_to_target", prompt, prefix, RESET_KS, RESET_REPEATS, rng=0)

    def compute(state):
        e = result(state["prefix"], state["temperature"])
        return dict(est=e.estimates.T.ravel(), v=np.full(len(ks), e.value), band_hi=e.value + e.exact_rmse,
                    band_lo=e.value - e.exact_rmse, rmse=e.rmse, exact_rmse=e.exact_rmse, rmse9=e.rmse[3:4],
                    se9=e.exact_rmse[3:4])

    deps = ("prefix", "temperature")
    fig = make_subplots(rows=2, cols=1, vertical_spacing=0.2,
                        subplot_titles=("Estimates V̂_K(s) from K rollouts", "Their error against K"))
    fig.add_scatter(x=np.repeat(ks, RESET_REPEATS), y=np.zeros(len(ks) * RESET_REPEATS), mode="markers",
                    name="one estimate V̂_K", marker=dict(color=SEQUENCE_COLOUR, size=6, opacity=0.9, symbol="circle"),
                    row=1, col=1, hovertemplate="K = %{x}: %{y:.3f}<extra>estimate</extra>")
    fig.add_scatter(x=ks, y=np.zeros(len(ks)), mode="lines", name="exact V(s)", line=dict(color=EXACT_COLOUR, width=3),
                    row=1, col=1, hovertemplate="exact V = %{y:.4f}<extra></extra>")
    for name in ("V ± exact standard error", None):
        fig.add_scatter(x=ks, y=np.zeros(len(ks)), mode="lines", name=name or "", showlegend=name is not None,
                        legendgroup="band", line=dict(color=EXACT_COLOUR, dash="dot", width=1.5), row=1, col=1,
                        hovertemplate="%{y:.4f}<extra>V ± σ/√K</extra>")
    fig.add_scatter(x=ks, y=np.ones(len(ks)), mode="markers+lines", name="measured RMS error (20 repeats)",
                    marker=dict(color=SEQUENCE_COLOUR, symbol="square", size=8), line=dict(color=SEQUENCE_COLOUR),
                    row=2, col=1, hovertemplate="K = %{x}: %{y:.4f}<extra>measured</extra>")
    add_curve(fig, ks, "exact √(Var[r | s] / K)", "K = %{x}: %{y:.4f}<extra>exact</extra>", color=EXACT_COLOUR,
              dash="dash", width=2.5, y=np.ones(len(ks)), row=2, col=1)
    fig.data[0].meta = {"table": {"skip": True}}  # 20 estimates per K: their error is the lower panel's table
    fig.data[1].meta = {"table": {"caption": "The band the K-rollout estimates (the dots) fall in: the exact V and "
                                             "its standard error (reward units; the dots' error is the next table)"}}
    fig.data[2].meta = {"table": {"name": "V + exact standard error σ/√K",
                                  "caption": fig.data[1].meta["table"]["caption"]}}
    fig.data[3].meta = {"table": {"name": "V − exact standard error σ/√K",
                                  "caption": fig.data[1].meta["table"]["caption"]}}
    for trace in fig.data[4:]:
        trace.meta = {"table": {"caption": "Their error against K: RMS error of one estimate (reward units)"}}
    fig.update_xaxes(type="log", title_text="K, rollouts from the prefix")
    fig.update_yaxes(title_text="value estimate", row=1, col=1)
    # labelled at 1, 2 and 5 of each decade: the errors span about one decade, where decade labels alone left one
    fig.update_yaxes(type="log", tickvals=list(RMS_TICKS), ticktext=[f"{v:g}" for v in RMS_TICKS],
                     title_text="RMS error", row=2, col=1)
    base_layout(fig, "", height=700)
    one = result((1, 2), 1.0)  # the default state, whose K = 1 estimates the caption explains
    return Explorer(
        title="Resetting is free: Monte Carlo values from restarts converge to the exact V",
        controls=[dropdown("prefix", "Reset to the state", PREFIXES, (1, 2)),
                  slider("temperature", "Temperature τ", RESET_TEMPERATURES, 1.0)],
        outputs={name: deps for name in ("est", "v", "band_hi", "band_lo", "rmse", "exact_rmse", "rmse9", "se9")},
        compute=compute, figure=fig,
        traces=[(0, "y", ["est"]), (1, "y", ["v"]), (2, "y", ["band_hi"]), (3, "y", ["band_lo"]),
                (4, "y", ["rmse"]), (5, "y", ["exact_rmse"])],
        layout={"title.text": f"Prompt {prompt}, state {{prefix}}, τ = {{temperature}}: with K = 9 the error is "
                              "{rmse9:.3f} (exact {se9:.3f})"},
        caption=f"Sum reward, pretrained π_ref, prompt {prompt}; {RESET_REPEATS} seeded repeats at each K. At K = 1 "
                "an estimate is one reward, 0 or 1, so where V is small all of them can be 0 and the measured error is "
                f"then V itself: at {PREFIXES[(1, 2)]} (τ = 1) V = {one.value:.3f}, and all {RESET_REPEATS} are 0 "
                f"with probability (1 − V)^{RESET_REPEATS} = {(1 - one.value) ** RESET_REPEATS:.3f}. "
                f"{_all_zero_note(one, RESET_REPEATS)}",
    )


# -- a strong prior -------------------------------------------------------------------------------------------------
PRIOR_CURVE = tuple(float(t) for t in np.logspace(-1, 1, 17))


@reused
def prior_explorer() -> Explorer:
    """As π_ref concentrates: P(a sample is rewarded), the share of responses in play, and the policy gradient's
    noise-to-signal ratio, against the temperature (curves) with the selected temperature marked."""

    @lru_cache(maxsize=512)
    def at(preset, temperature, prompt, reward):
        policy = reference_policy(preset, temperature)
        with_b = exploration.gradient_moments(policy, reward, prompt, "value")
        without = exploration.gradient_moments(policy, reward, prompt, "none")
        return (exploration.success_probability(policy, reward, prompt),
                exploration.effective_responses(policy, prompt) / VOCAB_SIZE**policy.length,
                min(with_b.noise_to_signal, 1e12), min(without.noise_to_signal, 1e12))

    def compute(state):
        key = (state["preset"], state["prompt"], state["reward"])
        curve = np.array([at(key[0], t, key[1], key[2]) for t in PRIOR_CURVE])
        here = at(key[0], state["temperature"], key[1], key[2])
        return dict(success=curve[:, 0], share=curve[:, 1], nsr=curve[:, 2], nsr0=curve[:, 3],
                    t_here=[state["temperature"]], p_here=here[0], share_here=here[1],
                    nsr_here=here[2], n_here=here[1] * VOCAB_SIZE**4)

    curve_deps = ("preset", "prompt", "reward")
    here_deps = curve_deps + ("temperature",)
    fig = make_subplots(rows=2, cols=1, vertical_spacing=0.2,
                        subplot_titles=("Chance of a reward", "Gradient noise ÷ signal"))
    t = list(PRIOR_CURVE)
    for name, hover, row, style in (
            ("P(a sample earns reward)", "3g}<extra>P(reward > 0)", 1, dict(color=EXACT_COLOUR, width=3)),
            ("e^H / 625: share in play", "3g}<extra>e^H / 625", 1, dict(color=GREY, dash="dot", width=2)),
            ("tr Cov(g) / ‖∇J‖², baseline V(x)", "4g}<extra>with baseline", 2, dict(color=SEQUENCE_COLOUR, width=3)),
            ("the same, no baseline", "4g}<extra>no baseline", 2, dict(color=SEQUENCE_COLOUR, dash="dash"))):
        add_curve(fig, t, name, "τ = %{x:.2f}: %{y:." + hover + "</extra>", **style, row=row, col=1)
    for row in (1, 2):
        fig.add_scatter(x=[1.0], y=[0.5], mode="markers", name="selected τ", showlegend=row == 1, legendgroup="here",
                        marker=dict(symbol="diamond", size=12, color="#222"), row=row, col=1,
                        hovertemplate="τ = %{x:.2f}: %{y:.4g}<extra>selected</extra>")
    points = {"points": [0.1, 0.316, 1.0, 3.16, 10.0]}  # the static slider's every other stop, its ends included
    for trace in fig.data[:2]:
        trace.meta = {"table": {**points, "caption": "Chance of a reward: probability, and share of the 625 "
                                                     "responses in play"}}
    for trace in fig.data[2:4]:
        trace.meta = {"table": {**points, "caption": "Gradient noise ÷ signal: samples needed (a ratio, no unit)"}}
    fig.update_xaxes(type="log", title_text="temperature τ of π<sub>ref</sub>")
    fig.update_yaxes(title_text="probability / share", range=[0, 1.05], row=1, col=1)
    fig.update_yaxes(type="log", title_text="samples needed", row=2, col=1)
    base_layout(fig, "", height=720)
    return Explorer(
        title="A strong prior: how concentration changes success and the variance of the policy gradient",
        controls=[dropdown("preset", "π_ref", {p: p for p in PRESETS}, "pretrained"),
                  dropdown("prompt", "Prompt x", PROMPTS, 2),
                  dropdown("reward", "Reward", REWARD_LABELS, "sum_to_target"),
                  slider("temperature", "Temperature τ", TEMPERATURES, 1.0)],
        outputs=dict(success=curve_deps, share=curve_deps, nsr=curve_deps, nsr0=curve_deps, t_here=here_deps,
                     p_here=here_deps, share_here=here_deps, nsr_here=here_deps, n_here=here_deps),
        compute=compute, figure=fig,
        traces=[(0, "y", ["success"]), (1, "y", ["share"]), (2, "y", ["nsr"]), (3, "y", ["nsr0"]),
                (4, "x", ["t_here"]), (4, "y", ["p_here"]), (5, "x", ["t_here"]), (5, "y", ["nsr_here"])],
        layout={"title.text": "τ = {temperature}: P(reward) = {p_here:.3f}, about {n_here:.0f} of 625 responses in "
                              "play, noise/signal = {nsr_here:.1f}"},
        caption="Exact, by enumerating the 625 responses; g is the one-sample REINFORCE gradient for a policy with "
                "one softmax per state.",
    )


# -- an enormous action space (a static figure) -------------------------------------------------------------------
GPT2_VOCAB = 50_257
ENTROPIES = (2.0, 0.5, 0.05)
"""The entropies per token (nats) whose responses in play the figure draws: loose, moderate, very concentrated."""
LENGTHS = np.unique(np.round(np.logspace(0, 4, 41)).astype(int))
ENTROPY_DASHES = ("dash", "dashdot", "dot")
TABLE_LENGTHS = (1, 10, 100, 1000, 10000)
"""The lengths the action-space figure's table shows (with the toy's 4): 1,000, which its title quotes, among them."""


def action_space_figure() -> go.Figure:
    """A static figure: log10 |V|^T against the response length T for GPT-2's vocabulary, and log10 e^(h·T), the
    responses a policy with h nats of entropy per token effectively chooses among, for each h in ``ENTROPIES``;
    the toy's own numbers marked. One idea: concentration shrinks the exponent, but an exponent remains."""
    toy_policy = reference_policy()
    toy_h = float(np.log(exploration.effective_responses(toy_policy, 2)) / toy_policy.length)
    T = LENGTHS.astype(float)
    fig = go.Figure()
    fig.add_scatter(x=LENGTHS, y=T * np.log10(GPT2_VOCAB), mode="lines",
                    name=f"every response, |V| = {GPT2_VOCAB:,} (GPT-2)", line=dict(color=GREY, width=3),
                    meta={"table": {"points": list(TABLE_LENGTHS)}},
                    hovertemplate="T = %{x}: 10^%{y:,.0f}<extra>|V|^T</extra>")
    for h, dash in zip(ENTROPIES, ENTROPY_DASHES, strict=True):
        fig.add_scatter(x=LENGTHS, y=T * h / np.log(10), mode="lines", name=f"in play at h = {h:g} nats/token",
                        line=dict(color=EXACT_COLOUR, dash=dash, width=3 if h == ENTROPIES[0] else 2.5),
                        meta={"table": {"points": list(TABLE_LENGTHS)}},
                        hovertemplate="T = %{x}: 10^%{y:,.1f}<extra>e^(hT)</extra>")
    fig.add_scatter(x=[4, 4], y=[4 * np.log10(5), 4 * toy_h / np.log(10)], mode="markers+text",
                    name=f"the toy: 625, of which {np.exp(4 * toy_h):.0f} in play",
                    text=["625", f"{np.exp(4 * toy_h):.0f}"], textposition=["top right", "bottom right"],
                    marker=dict(symbol="star", size=14, color=SEQUENCE_COLOUR),
                    hovertemplate="the toy: 10^%{y:.2f}<extra></extra>")
    fig.update_xaxes(type="log", title_text="response length T (tokens)")
    fig.update_yaxes(type="log", title_text="log₁₀(number of responses)")
    return base_layout(fig, "An enormous action space: at 1,000 tokens there are 10^"
                       f"{1000 * np.log10(GPT2_VOCAB):,.0f} responses, and even at h = {ENTROPIES[-1]:g} nats per "
                       f"token about 10^{1000 * ENTROPIES[-1] / np.log(10):.0f} stay in play", height=460)


# -- sparse reward (a static figure) -------------------------------------------------------------------------------
WAIT_PRESETS = ("knows_task", "pretrained", "confidently_wrong")
"""The priors whose mean wait the figure draws: one that knows the task, the default, one that is sure and wrong."""
WAIT_DASHES = ("solid", "dash", "dot")
WAIT_COLOURS = (EXACT_COLOUR, GREY, SEQUENCE_COLOUR)


def mean_waits(preset: str, prompt: int = 2) -> np.ndarray:
    """1/p, the mean number of samples until the first rewarded one (sum reward), at each of ``TEMPERATURES``."""
    prompt = check_prompt(prompt)
    return np.array([1 / exploration.success_probability(reference_policy(preset, t), "sum_to_target", prompt)
                     for t in TEMPERATURES])


def sparse_reward_figure(prompt: int = 2) -> go.Figure:
    """A static figure: the mean wait for a first rewarded sample, 1/p, against the temperature, for a prior that
    knows the task, the pretrained one, and one that is confidently wrong. One idea: sharpening a prior shortens
    the wait only where its mass sits on rewarded responses; elsewhere the wait grows by orders of magnitude."""
    prompt = check_prompt(prompt)
    fig = go.Figure()
    for preset, dash, colour in zip(WAIT_PRESETS, WAIT_DASHES, WAIT_COLOURS, strict=True):
        fig.add_scatter(x=list(TEMPERATURES), y=mean_waits(preset, prompt), mode="lines+markers",
                        name=preset.replace("_", " "), line=dict(color=colour, dash=dash, width=3),
                        hovertemplate="τ = %{x:.2f}: %{y:,.3g} samples<extra>" + preset + "</extra>")
    fig.update_xaxes(type="log", title_text="temperature τ of π<sub>ref</sub>")
    # a label every three decades (1, 1000, 10⁶, ...): the waits span some 22 decades
    fig.update_yaxes(type="log", dtick=3, exponentformat="power", title_text="mean samples to a first reward, 1/p")
    return base_layout(fig, f"Sparse reward: the wait for a first success, 1/p (prompt {prompt}, sum reward)",
                       height=440)


# -- a learned, hackable reward -----------------------------------------------------------------------------------
GOODHART_BETAS = tuple(float(b) for b in np.logspace(1, -2, 19))
COMPARISONS = (10, 30, 100, 300, 1000, 3000)
DATASETS = {0: "1", 1: "2"}


@reused
def goodhart_explorer(prompt: int = 2) -> Explorer:
    """Optimising a Bradley–Terry proxy exactly: proxy reward and true reward against KL(π*_β ‖ π_ref)."""
    prompt = check_prompt(prompt)
    ref = reference_policy()

    @lru_cache(maxsize=64)
    def curve(n, features, seed):
        proxy = ProxyReward(ref, "sum_to_target", prompt, int(n), features=features, seed=seed)
        c = optimisation_curve(ref, proxy, "sum_to_target", prompt, GOODHART_BETAS)
        return c, proxy.agreement(ref)

    def compute(state):
        c, agreement = curve(state["comparisons"], state["features"], state["dataset"])
        i = GOODHART_BETAS.index(state["beta"])
        peak = int(np.argmax(c.true))
        return dict(kl=c.kl, proxy=c.proxy, true=c.true, proxy_here=c.proxy[i], true_here=c.true[i], kl_i=c.kl[i],
                    agree=agreement * 100, peak_true=c.true[peak], peak_kl=c.kl[peak])

    curve_deps = ("comparisons", "features", "dataset")
    here = curve_deps + ("beta",)
    fig = go.Figure()
    add_curve(fig, [0.0], "proxy E[r̂] (what is optimised)", "KL %{x:.2f}: %{y:.3f}<extra>proxy</extra>",
              color=SEQUENCE_COLOUR, dash="dash", width=3, y=[0.0])
    add_curve(fig, [0.0], "true E[r] (what was wanted)", "KL %{x:.2f}: %{y:.3f}<extra>true</extra>",
              color=EXACT_COLOUR, width=3, y=[0.0])
    fig.add_scatter(x=[0.0, 0.0], y=[0.0, 0.0], mode="markers", name="π*<sub>β</sub> at the selected β",
                    marker=dict(symbol="diamond", size=12, color="#222"),
                    hovertemplate="KL %{x:.2f}: %{y:.3f}<extra>selected β</extra>")
    betas = {"header": [f"β = {b:.3g}" for b in GOODHART_BETAS], "columns": list(range(0, len(GOODHART_BETAS), 3)),
             "caption": "Expected reward (reward units) and KL to π_ref (nats) along π*_β", "corner": ""}
    fig.data[0].meta = {"table": {**betas, "x_row": "KL(π*_β ‖ π_ref), nats"}}
    fig.data[1].meta = {"table": betas}
    fig.data[2].meta = {"table": {"marks": True}}
    fig.update_xaxes(title_text="KL(π*<sub>β</sub> ‖ π<sub>ref</sub>), nats", rangemode="tozero")
    fig.update_yaxes(title_text="expected reward")
    base_layout(fig, "", height=460)
    return Explorer(
        title="A learned reward is hackable: optimising a proxy fitted to comparisons",
        controls=[slider("comparisons", "Comparisons", COMPARISONS, 100, fmt="{:,.0f}"),
                  dropdown("features", "Reward model", {f: f for f in PROXY_FEATURES}, "both"),
                  dropdown("dataset", "Comparison set", DATASETS, 0),
                  slider("beta", "β", GOODHART_BETAS, GOODHART_BETAS[9], fmt="{:.3g}")],
        outputs=dict(kl=curve_deps, proxy=curve_deps, true=curve_deps, agree=curve_deps, peak_true=curve_deps,
                     peak_kl=curve_deps, proxy_here=here, true_here=here, kl_i=here),
        compute=compute, figure=fig,
        traces=[(0, "x", ["kl"]), (0, "y", ["proxy"]), (1, "x", ["kl"]), (1, "y", ["true"]),
                (2, "x", ["kl_i", "kl_i"]), (2, "y", ["proxy_here", "true_here"])],
        layout={"title.text": "β = {beta}: KL {kl_i:.2f}, proxy {proxy_here:.2f}, true {true_here:.3f} (best true "
                              "{peak_true:.3f} at KL {peak_kl:.2f}); r̂ orders {agree:.0f}% of pairs right"},
        caption=f"Prompt {prompt}, sum reward, pretrained π_ref. Comparisons are pairs sampled from π_ref, judged with "
                "P(a preferred) = σ(3·(r(a) − r(b))); π*_β ∝ π_ref·exp(r̂/β) is computed exactly. “r̂ orders X% of "
                "pairs right”: of two responses drawn from π_ref with different true rewards, the chance that r̂ "
                "ranks them as r does (a tie in r̂ counts one half), so 50% is chance and below it r̂ is mostly wrong.",
    )


# -- long sequences -----------------------------------------------------------------------------------------------
LONG_LENGTHS = (4, 10, 30, 100, 300, 1000)
LENGTH_CURVE = (2, 4, 7, 10, 20, 30, 50, 100, 200, 300, 500, 1000)
BINS = 20
LOG_FLOOR = 1e-4
LONG_TEMPERATURES = tuple(TEMPERATURES[i] for i in (0, 2, 4, 6, 8))


def binned_profile(values: np.ndarray, bins: int = BINS) -> np.ndarray:
    """Mean of ``values`` over each of ``bins`` equal stretches of the positions; a stretch with no position in it
    takes the position under its centre."""
    n = len(values)
    out = np.empty(bins)
    for i in range(bins):
        lo, hi = int(np.ceil(i * n / bins)), int(np.ceil((i + 1) * n / bins))
        out[i] = values[lo:hi].mean() if hi > lo else values[min(int((i + 0.5) * n / bins), n - 1)]
    return out


@reused
def long_credit_explorer(prompt: int = 2) -> Explorer:
    """Exact per-token credit for responses of up to 1,000 tokens (toy.longrun), and how the sequence-level
    noise per token grows with the length."""
    prompt = check_prompt(prompt)

    @lru_cache(maxsize=512)
    def at(reward, temperature, length):
        return longrun.credit(longrun.MarkovPolicy("pretrained", temperature), reward, prompt, length)

    def compute(state):
        c = at(state["reward"], state["temperature"], int(state["length"]))
        sig = np.array([at(state["reward"], state["temperature"], L).mean_square.mean() for L in LENGTH_CURVE])
        noise = np.array([at(state["reward"], state["temperature"], L).noise.mean() for L in LENGTH_CURVE])
        floor = LOG_FLOOR / 10  # below the axis: not drawn
        return dict(signal=np.maximum(binned_profile(c.mean_square), floor),
                    noise=np.maximum(binned_profile(c.noise), floor), sig=sig, nse=noise,
                    horizon=[longrun.credit_horizon(c.mean_square)], var=[c.mean_square.sum()],
                    ratio=[c.noise.mean() / max(c.mean_square.mean(), 1e-300)])

    policy = ("reward", "temperature")
    here = policy + ("length",)
    centres = [(i + 0.5) / BINS for i in range(BINS)]
    fig = make_subplots(rows=2, cols=1, vertical_spacing=0.2,
                        subplot_titles=("Where credit sits along the response", "Per token, against the length"))
    fig.add_bar(x=centres, y=centres, name=SIGNAL_LABEL, marker=EXACT, row=1, col=1,
                hovertemplate="%{x:.1%} of the way: %{y:.4g}<extra>E[A_t²]</extra>")
    fig.add_bar(x=centres, y=centres, name=NOISE_LABEL, marker=SEQUENCE,
                row=1, col=1, hovertemplate="%{x:.1%} of the way: %{y:.4g}<extra>noise</extra>")
    add_curve(fig, LENGTH_CURVE, "signal per token: mean E[A_t²]", "L = %{x:,}: %{y:.3g}<extra>signal</extra>",
              color=EXACT_COLOUR, width=3, symbol="circle", row=2, col=1)
    add_curve(fig, LENGTH_CURVE, "noise per token: mean", "L = %{x:,}: %{y:.3g}<extra>noise</extra>",
              color=SEQUENCE_COLOUR, dash="dash", width=3, symbol="square", row=2, col=1)
    for trace in fig.data[:2]:
        trace.meta = {"table": {"caption": "Where credit sits: mean square over six of the response's twenty "
                                           "twentieths (reward²; values below 10⁻⁴ are not drawn)", "below": 1e-4}}
    for trace in fig.data[2:]:
        trace.meta = {"table": {"caption": "Per token, against the length: mean square per token (reward²)"}}
    fig.update_xaxes(title_text="position (share of the response)", tickformat=".0%", tickvals=[0.25, 0.5, 0.75, 1.0],
                     row=1, col=1)  # no "0%" at the corner, where it met the log axis's bottom label
    fig.update_xaxes(type="log", title_text="response length L", row=2, col=1)
    # one range for every setting, up to the tallest bar any of them draws (the count reward's noise at 1,000 tokens
    # is about 170: a range fitted to the sum reward cut those bars off)
    tallest = max(max(binned_profile(c.mean_square).max(), binned_profile(c.noise).max())
                  for c in (at(r, t, L) for r in REWARDS for t in LONG_TEMPERATURES for L in LONG_LENGTHS))
    fig.update_yaxes(type="log", title_text="reward²", range=[np.log10(LOG_FLOOR), np.log10(tallest) + 0.15], row=1,
                     col=1)
    fig.update_yaxes(type="log", title_text="per token", row=2, col=1)
    fig.update_layout(barmode="group", bargap=0.15)
    base_layout(fig, "", height=720)
    return Explorer(
        title="Long sequences: exact per-token credit up to 1,000 tokens",
        controls=[slider("length", "Length L", LONG_LENGTHS, 1000, fmt="{:,.0f}"),
                  dropdown("reward", "Reward", REWARD_LABELS, "sum_to_target"),
                  slider("temperature", "Temperature τ", LONG_TEMPERATURES, 1.0)],
        outputs=dict(signal=here, noise=here, horizon=here, var=here, ratio=here, sig=policy, nse=policy),
        compute=compute, figure=fig,
        traces=[(0, "y", ["signal"]), (1, "y", ["noise"]), (2, "y", ["sig"]), (3, "y", ["nse"])],
        layout={"title.text": "L = {length}: {horizon:.0f} token(s) hold 90% of the credit; each token's "
                              "sequence-level credit has {ratio:.0f}× more noise than signal"},
        caption=f"Prompt {prompt}, a Markov π_ref (the pretrained habit, same at every position), exact by dynamic "
                "programming (toy.longrun). Top: the mean over each twentieth of the response; values below 10⁻⁴ are "
                "not drawn.",
    )


# -- the policy must not drift --------------------------------------------------------------------------------------
DRIFT_BETAS = tuple(float(b) for b in np.logspace(1, -2, 19))


DRIFT_MARKS = (1.0, 0.1)
"""The β values marked on the drift curve (points of ``DRIFT_BETAS``), as the text quotes them. The second sits near
the curve's right end, so its label goes to the left of it (inside a phone's width)."""


@reused
def drift_explorer() -> Explorer:
    """E[r] against KL(π*_β ‖ π_ref) along the KL-regularised family, β from 10 to 0.01, for a reward and a prompt;
    the points at β = 1 and 0.1 marked. The controls change the curve (how rare π_ref's reward is), not a point on
    it: where the curve ends says how far a policy must move to be always right."""
    ref = reference_policy()
    marks = [DRIFT_BETAS.index(min(DRIFT_BETAS, key=lambda b: abs(b - m))) for m in DRIFT_MARKS]

    @lru_cache(maxsize=32)
    def curve(reward, prompt):
        return optimisation_curve(ref, reward, reward, prompt, DRIFT_BETAS)

    def compute(state):
        c = curve(state["reward"], state["prompt"])
        r0 = value(ref, state["reward"], state["prompt"])  # π_ref's own E[r] (β = 10's optimum is already above it)
        return dict(kl=c.kl, r=c.true, ref=[r0] * 2, ref_x=[0.0, float(c.kl.max())],
                    kl_marks=c.kl[marks], r_marks=c.true[marks], r0=[r0], kl_end=[c.kl[-1]], r_end=[c.true[-1]])

    deps = ("reward", "prompt")
    fig = go.Figure()
    fig.add_scatter(x=[0.0], y=[0.0], mode="lines", name="π*<sub>β</sub> ∝ π<sub>ref</sub>·exp(r/β), β 10 → 0.01",
                    line=dict(color=EXACT_COLOUR, width=3), hovertemplate="KL %{x:.2f}: E[r] %{y:.3f}<extra></extra>")
    fig.add_scatter(x=[0.0, 1.0], y=[0.0, 0.0], mode="lines", name="π_ref",
                    line=dict(color=GREY, dash="dot", width=2), hoverinfo="skip")
    fig.add_scatter(x=[0.0] * len(marks), y=[0.0] * len(marks), mode="markers+text", name="β = 1 and β = 0.1",
                    text=[f"β = {m:g}" for m in DRIFT_MARKS], textposition=["bottom right", "bottom left"],
                    marker=dict(symbol="diamond", size=11, color="#222"),
                    hovertemplate="KL %{x:.2f}: E[r] %{y:.3f}<extra>%{text}</extra>")
    caption = "Expected reward E[r] (reward units) against the KL to π_ref"
    fig.data[0].meta = {"table": {"caption": caption, "name": "E[r] under π*_β ∝ π_ref·exp(r/β)", "corner": "",
                                  "x_row": "KL(π*_β ‖ π_ref), nats", "header": [f"β = {b:.3g}" for b in DRIFT_BETAS],
                                  "columns": list(range(0, len(DRIFT_BETAS), 3))}}
    fig.data[1].meta = {"table": {"caption": "π_ref itself, at KL 0: expected reward E[r] (reward units)",
                                  "name": "E[r] under π_ref (the dotted line)", "header": ["π_ref"] * 2,
                                  "corner": ""}}
    fig.data[2].meta = {"table": {"marks": True}}  # β = 1 and 0.1: columns of the curve's table
    fig.update_xaxes(title_text="KL(π*<sub>β</sub> ‖ π<sub>ref</sub>), nats", rangemode="tozero")
    fig.update_yaxes(title_text="expected reward E[r]")
    base_layout(fig, "", height=440)
    return Explorer(
        title="It must not drift: reward against distance from π_ref",
        controls=[dropdown("reward", "Reward", REWARD_LABELS, "sum_to_target"),
                  dropdown("prompt", "Prompt x", PROMPTS, 2)],
        outputs=dict(kl=deps, r=deps, ref=deps, ref_x=deps, r0=deps, kl_marks=deps, r_marks=deps, kl_end=deps,
                     r_end=deps),
        compute=compute, figure=fig,
        traces=[(0, "x", ["kl"]), (0, "y", ["r"]), (1, "x", ["ref_x"]), (1, "y", ["ref"]), (2, "x", ["kl_marks"]),
                (2, "y", ["r_marks"])],
        layout={"title.text": "π_ref: E[r] = {r0:.3f}; at β = 0.01 the optimum is {kl_end:.2f} nats away, "
                              "E[r] = {r_end:.3f}"},
        caption="Pretrained π_ref; every point is the exact optimum of E[r] − β·KL(π ‖ π_ref) for one β.",
    )



EXPLORERS = {
    "resets": resets_explorer,
    "prior": prior_explorer,
    "goodhart": goodhart_explorer,
    "long_credit": long_credit_explorer,
    "drift": drift_explorer,
}
"""Section 4.2's explorers by name (merged into ``toy.explorers.ALL``)."""

FIGURES = {
    "action_space": action_space_figure,
    "sparse_reward": sparse_reward_figure,
}
"""Section 4.2's static figures by name: the action space and sparse reward, whose controls taught nothing the
text did not say."""
