"""Section 4.4's explorers: compounding errors in behaviour cloning, SFT then RL, and RL that waits for a success."""

from __future__ import annotations

from functools import cache

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from ... import distillation, format_gate, imitation, sft, train
from ...policy import reference_policy
from .. import figures
from ..explorer import Explorer, dropdown, reused, slider

EPSILONS = (0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5)
"""Grid of per-step mistake probabilities ε."""
HORIZONS = (1, 5, 10, 20, 40, 80, 160, 320)
"""Grid of horizons T for the read-out."""
CURVE_T = np.unique(np.concatenate([np.round(np.logspace(0, np.log10(HORIZONS[-1]), 70)).astype(int), HORIZONS]))
"""Horizons at which the exact curves are drawn (log-spaced integers, and the read-out horizons)."""
SIM_T = np.array([1, 2, 5, 10, 20, 40, 80, 160, 320])
"""Horizons at which the simulation is shown, with error bars."""
EPISODES = 4000
"""Simulated episodes per ε."""

BC = dict(color="#d62728")
DAGGER = dict(color="#2ca02c")
BASES = {"sharp": "sharp base (terse preset, τ = 0.5)", "pretrained": "pretrained base (τ = 1)"}
"""Base models for the SFT explorers: name → label."""


def base_policy(name: str):
    """The base model a pipeline starts from: 'sharp' (rarely right on some prompts) or 'pretrained' (π_ref)."""
    return reference_policy("terse", 0.5) if name == "sharp" else reference_policy()


# -- compounding errors ---------------------------------------------------------------------------------------
def simulation(eps: float, seed: int = 0) -> dict[str, np.ndarray]:
    """One run of the simulation: ``EPISODES`` episodes of ``SIM_T[-1]`` steps drawn with ``seed``.

    ``imitation.simulated_cost``'s means and standard errors at every horizon T = 1..SIM_T[-1] (index T − 1). The
    explorer shows seed 0; section 4.4 reads T = 80 from seeds 0..19, so the explorer's run is the first of those.
    Every horizon of one run comes from the same episodes (the cost up to T is part of the cost up to any later
    horizon), so a run's errors at different horizons are correlated.
    """
    return imitation.simulated_cost(eps, int(SIM_T[-1]), EPISODES, rng=np.random.default_rng(seed))


@reused
def compounding_errors() -> Explorer:
    """Expected cost against horizon T for behaviour cloning and DAgger: exact curves and a seeded simulation.

    Controls: ε (per-step mistake probability) and the read-out horizon T. Outputs depend on ε only, except the
    read-out (ε, T).
    """

    @cache
    def curves(eps: float):
        T_max = int(CURVE_T[-1])
        c = imitation.cost_curves(eps, T_max)
        sim = simulation(eps, seed=0)
        pick = CURVE_T - 1
        sims = SIM_T - 1
        return {
            "bc": c["behaviour_cloning"][pick], "dagger": c["dagger"][pick], "quad": c["quadratic"][pick],
            "sim_bc": sim["behaviour_cloning"][sims], "sim_bc_se": sim["behaviour_cloning_se"][sims],
            "sim_dagger": sim["dagger"][sims], "sim_dagger_se": sim["dagger_se"][sims],
            # error bars of two standard errors
            "sim_bc_se2": 2 * sim["behaviour_cloning_se"][sims], "sim_dagger_se2": 2 * sim["dagger_se"][sims],
        }

    def compute(state):
        eps, T = state["eps"], int(state["T"])
        out = dict(curves(eps))
        bc, dg = imitation.behaviour_cloning_cost(eps, T), imitation.dagger_cost(eps, T)
        out.update(mark_x=[T, T], mark_y=[bc, dg], bc_T=bc, dagger_T=dg, ratio=bc / dg,
                   quad_T=imitation.quadratic_approximation(eps, T))
        return out

    fig = go.Figure()
    x = CURVE_T.astype(float)
    fig.add_scatter(x=x, y=x, name="paying every step (cost T)", mode="lines",
                    line=dict(color="#8c8c8c", dash="dot", width=1), hoverinfo="skip")
    fig.add_scatter(x=x, y=x, name="exact BC: Σₜ[1 − (1−ε)ᵗ]", mode="lines", line=dict(**BC, width=3))
    fig.add_scatter(x=x, y=x, name="DAgger, exact εT", mode="lines", line=dict(**DAGGER, width=3, dash="dash"))
    fig.add_scatter(x=x, y=x, name="εT(T+1)/2 (small εT)", mode="lines", line=dict(color="#555", dash="dashdot"))
    sx = SIM_T.astype(float)
    fig.add_scatter(x=sx, y=sx, name=f"simulated BC, {EPISODES} runs (± 2 s.e.)", mode="markers",
                    marker=dict(symbol="circle-open", size=10, color=BC["color"], line=dict(width=2)),
                    error_y=dict(type="data", array=list(sx), visible=True))
    fig.add_scatter(x=sx, y=sx, name="simulated DAgger (± 2 s.e.)", mode="markers",
                    marker=dict(symbol="square-open", size=9, color=DAGGER["color"], line=dict(width=2)),
                    error_y=dict(type="data", array=list(sx), visible=True))
    fig.add_scatter(x=[1, 1], y=[1, 1], name="read-out at T", mode="markers",
                    marker=dict(symbol="x", size=12, color="#222"), hovertemplate="T = %{x}: %{y:.3f}<extra></extra>")
    fig.data[0].meta = {"table": {"skip": True}}  # a guide, cost = T
    where = {"points": [1, 10, 40, 80, 160, 320]}
    for trace in fig.data[1:4]:
        trace.meta = {"table": {**where, "caption": "Expected cost, exact (steps off the expert's path)"}}
    for trace in fig.data[4:6]:
        trace.meta = {"table": {"caption": "Expected cost, simulated (steps off the expert's path)", "error": trace.name
                                .replace("simulated BC, 4000 runs (± 2 s.e.)", "BC: 2 standard errors")
                                .replace("simulated DAgger (± 2 s.e.)", "DAgger: 2 standard errors")}}
    # Ticks far enough apart that a narrow screen does not turn their labels on their side (into the legend).
    fig.update_xaxes(title_text="horizon T (steps)", type="log", tickvals=[1, 3, 10, 30, 100, 300])
    fig.update_yaxes(title_text="expected cost (steps off the expert's path)", type="log", dtick=1,
                     exponentformat="power")
    figures.base_layout(fig, "", height=520)

    return Explorer(
        title="Compounding errors: behaviour cloning against DAgger",
        controls=[slider("eps", "Mistake probability ε", EPSILONS, 0.01),
                  slider("T", "Read-out horizon T", HORIZONS, 40, fmt="{:.0f}")],
        outputs={"bc": ("eps",), "dagger": ("eps",), "quad": ("eps",), "sim_bc": ("eps",), "sim_bc_se": ("eps",),
                 "sim_dagger": ("eps",), "sim_dagger_se": ("eps",), "sim_bc_se2": ("eps",),
                 "sim_dagger_se2": ("eps",), "mark_x": ("T",), "mark_y": ("eps", "T"),
                 "bc_T": ("eps", "T"), "dagger_T": ("eps", "T"), "ratio": ("eps", "T"), "quad_T": ("eps", "T")},
        compute=compute,
        figure=fig,
        traces=[(1, "y", ["bc"]), (2, "y", ["dagger"]), (3, "y", ["quad"]), (4, "y", ["sim_bc"]),
                (4, "error_y.array", ["sim_bc_se2"]), (5, "y", ["sim_dagger"]),
                (5, "error_y.array", ["sim_dagger_se2"]), (6, "x", ["mark_x"]), (6, "y", ["mark_y"])],
        layout={"title.text": "ε = {eps}, T = {T}: behaviour cloning pays {bc_T:.3f}, DAgger {dagger_T:.3f} "
                              "({ratio:.1f}×)"},
        caption=f"Exact curves, and a simulation of {EPISODES:,} episodes per ε (one run, seed 0, the first of the "
                f"{len(SEEDS)} runs the page quotes), precomputed by toy on the grid of ε and T. The run uses the "
                "same episodes at every horizon, so its errors at different horizons go together: an unlucky run's "
                "± 2 s.e. bars can miss the exact curve at several horizons at once.",
    )


# -- SFT, then RL ---------------------------------------------------------------------------------------------
RHOS = (0.25, 0.5, 0.75)
"""Grid of the expert's success rate ρ."""
N_DEMOS = (8, 64, 512)
"""Grid of demonstrations per prompt."""
SFT_PRIOR = 0.1
"""Pseudo-counts of the base model kept at every prefix by SFT (so no probability becomes exactly zero)."""
RL_STEPS = 40
RL_SEEDS = (0, 1, 2, 3, 4)
"""Seeds of the SFT-then-RL explorer's runs (its band is one standard deviation over them)."""
SEEDS = tuple(range(20))
"""Seeds over which section 4.4's text quotes a random experiment's result (its spread) or a claim (how often)."""
RL_BETA = 0.01
RL_GROUP = 4
RL_LR = 4.0
REWARD = "sum_to_target"


@cache
def sft_policy(base: str, rho: float, n_demos: int):
    """(SFT policy, fraction of correct demonstrations) for a base, an expert success rate and a demo count."""
    pi0 = base_policy(base)
    expert = sft.imperfect_expert(pi0, REWARD, rho)
    demos = sft.demonstrations(expert, n_demos, rng=np.random.default_rng(0))
    return sft.fit_sft(demos, pi0, SFT_PRIOR), sft.demonstration_success(demos, REWARD, pi0.length, pi0.n_actions)


@cache
def rl_curves(base: str, rho: float | None, n_demos: int | None, seeds: tuple = RL_SEEDS) -> train.Curves:
    """RLOO from the SFT policy (KL to the SFT policy), or from the base itself when rho is None, at ``seeds``."""
    if rho is None:
        start = base_policy(base)
    else:
        start = sft_policy(base, rho, n_demos)[0]
    return train.train("rloo", start=start, reference=start, steps=RL_STEPS, group_size=RL_GROUP,
                       betas=(RL_BETA,), seeds=seeds, lr=RL_LR, reward=REWARD)


def _reward_axes(fig, x_title: str, y_title: str, height: int) -> None:
    """Titles for a figure of rewards in [0, 1] over RL steps (its y axis shows all of [0, 1]), and the book's look."""
    fig.update_xaxes(title_text=x_title)
    fig.update_yaxes(title_text=y_title, range=[0, 1.02])
    figures.base_layout(fig, "", height=height)


def _band_trace(fig, name, group, color, fillcolor, dash, row=None):
    """A mean line and its band, in one legend group: the band belongs to its line (they show and hide together),
    so the two series differ by the line's dash, not only by colour."""
    steps = list(range(RL_STEPS + 1))
    kw = dict(row=row, col=1) if row else {}
    fig.add_scatter(x=steps + steps[::-1], y=[0.0] * (2 * len(steps)), fill="toself", fillcolor=fillcolor,
                    line=dict(width=0), hoverinfo="skip", showlegend=False, name=name + " band", legendgroup=group,
                    **kw)
    figures.add_curve(fig, steps, name, "step %{x}: %{y:.3f}<extra>" + name + "</extra>", color=color, dash=dash,
                      width=3, y=[0.0] * len(steps), legendgroup=group, **kw)


@reused
def sft_then_rl() -> Explorer:
    """Success rate during RL, started from an SFT policy and from the base model, beside the expert's rate.

    Controls: base model, expert success rate ρ, demonstrations per prompt. RLOO, group of 4, β = 0.01,
    5 seeds (mean ± one standard deviation).
    """

    def compute(state):
        base, rho, n = state["base"], state["rho"], int(state["n_demos"])
        pi_sft, demo_rate = sft_policy(base, rho, n)
        m, lo, hi = rl_curves(base, rho, n).band("reward")
        bm, blo, bhi = rl_curves(base, None, None).band("reward")
        steps = RL_STEPS + 1
        return {
            "sft_band": np.concatenate([hi, lo[::-1]]), "sft_mean": m,
            "base_band": np.concatenate([bhi, blo[::-1]]), "base_mean": bm,
            "expert": np.full(steps, rho), "demo_line": np.full(steps, demo_rate),
            "demo": demo_rate, "sft": sft.success_rate(pi_sft, REWARD), "final": m[-1], "base_final": bm[-1],
            "base_start": bm[0],
        }

    fig = go.Figure()
    steps = list(range(RL_STEPS + 1))
    _band_trace(fig, "RL from the SFT policy", "sft", "#1f77b4", "rgba(31,119,180,0.2)", "solid")
    _band_trace(fig, "RL from the base model", "base", "#7f7f7f", "rgba(127,127,127,0.2)", "dash")
    for name, hover, style in (("the expert's success rate ρ", "ρ", dict(color="#d62728", dash="dot", width=2)),
                               ("fraction of correct demonstrations", "correct demonstrations",
                                dict(color="#9467bd", dash="longdash", width=1.5))):
        figures.add_curve(fig, steps, name, f"%{{y:.3f}}<extra>{hover}</extra>", **style, y=[0.0] * len(steps))
    for trace in fig.data[:-2]:
        trace.meta = {"table": {"skip": True} if trace.name.endswith(" band") else {
            "caption": f"Success rate E[r], exact, mean of the {len(RL_SEEDS)} seeds the figure draws (a probability; "
                       f"the text quotes means of {len(SEEDS)})"}}
    for trace in fig.data[-2:]:  # levels: one column, not the same number at every step
        trace.meta = {"table": {"caption": "The two levels drawn across: success rate (a probability)", "corner": "",
                                "header": ["at every step"] * len(steps)}}
    _reward_axes(fig, "RL step", "success rate E[r], exact", height=460)
    return Explorer(
        title="SFT, then RL: imitation stops at the demonstrator, RL goes past it",
        controls=[dropdown("base", "Base model", BASES, "sharp"),
                  slider("rho", "Expert success rate ρ", RHOS, 0.5, fmt="{:.2f}"),
                  slider("n_demos", "Demonstrations per prompt", N_DEMOS, 64, fmt="{:.0f}")],
        outputs={"sft_band": ("base", "rho", "n_demos"), "sft_mean": ("base", "rho", "n_demos"),
                 "base_band": ("base",), "base_mean": ("base",), "expert": ("rho",),
                 "demo_line": ("base", "rho", "n_demos"), "demo": ("base", "rho", "n_demos"),
                 "sft": ("base", "rho", "n_demos"), "final": ("base", "rho", "n_demos"),
                 "base_final": ("base",), "base_start": ("base",)},
        compute=compute,
        figure=fig,
        traces=[(0, "y", ["sft_band"]), (1, "y", ["sft_mean"]), (2, "y", ["base_band"]), (3, "y", ["base_mean"]),
                (4, "y", ["expert"]), (5, "y", ["demo_line"])],
        layout={"title.text": "Expert ρ = {rho}: SFT on {n_demos} demonstrations reaches {sft:.3f} "
                              "({demo:.3f} of them correct); RL from SFT {final:.3f}, from the base "
                              "{base_start:.3f} → {base_final:.3f}"},
        caption=(f"Precomputed by toy: exact success rates, RLOO (groups of {RL_GROUP}, β = {RL_BETA:g}) from each "
                 f"start, {len(RL_SEEDS)} seeds (line: mean, band: ± one standard deviation)."),
    )


# -- no signal until the first success -----------------------------------------------------------------------
HARD_PROMPT = 3
HARD_STEPS = 150
HARD_SEEDS = tuple(range(32))
SHOWN_SEEDS = 6
GROUPS = (2, 4, 8, 16)
STARTS = {"base": "the sharp base model", "sft": "after SFT (expert ρ = 0.5, 64 demonstrations)"}


@cache
def hard_prompt_runs(start: str, n: int) -> train.Curves:
    """RLOO (β = 0) on the hard prompt alone, from the sharp base or from SFT on that prompt."""
    base = base_policy("sharp")
    pi0 = base if start == "base" else sft_policy("sharp", 0.5, 64)[0]
    return train.train("rloo", start=pi0, reference=pi0, prompts=(HARD_PROMPT,), steps=HARD_STEPS, group_size=n,
                       betas=(0.0,), seeds=HARD_SEEDS, lr=RL_LR, reward=REWARD)


@reused
def waiting_for_signal() -> Explorer:
    """Exact success probability on a hard prompt during RL, for a few seeds, and the chance that no group has
    seen a success yet. Until the first success every advantage is zero (β = 0), the policy does not move, and the
    chance of still waiting after k steps is exactly (1 − p)^(n·k), p the start's success probability."""

    def compute(state):
        start, n = state["start"], int(state["n"])
        c = hard_prompt_runs(start, n)
        runs = c.reward[0]  # (seeds, steps+1)
        first = c.first_signal()[0]
        k = np.arange(HARD_STEPS + 1)
        waiting = np.array([np.mean((first == 0) | (first > s)) for s in k])
        out = {f"seed{i}": runs[i] for i in range(SHOWN_SEEDS)}
        p = runs[0, 0]  # the start's exact success probability (all seeds start there)
        per_step = 1 - (1 - p) ** n
        out.update(waiting=waiting, exact_wait=(1 - p) ** (n * k), mean=runs.mean(axis=0), p0=p,
                   per_step=per_step, expected_steps=1 / per_step, never=float(np.mean(first == 0)),
                   never_exact=float((1 - p) ** (n * HARD_STEPS)))
        return out

    fig = make_subplots(rows=2, cols=1, vertical_spacing=0.16, row_heights=[0.6, 0.4],
                        subplot_titles=("Each run's success", "Runs still waiting"))
    steps = list(range(HARD_STEPS + 1))
    dashes = ["solid", "dot", "dash", "longdash", "dashdot", "longdashdot"]
    for i in range(SHOWN_SEEDS):
        fig.add_scatter(x=steps, y=[0.0] * len(steps), mode="lines", name=f"seed {i}", legendgroup="seeds",
                        showlegend=i == 0, line=dict(color="#1f77b4", width=1.5, dash=dashes[i]),
                        hovertemplate="step %{x}: %{y:.4f}<extra>seed " + str(i) + "</extra>", row=1, col=1)
    fig.data[0].name = f"one line per seed ({SHOWN_SEEDS} of {len(HARD_SEEDS)})"
    for i, trace in enumerate(fig.data):
        trace.meta = {"table": {"name": f"seed {i}" if i < SHOWN_SEEDS else trace.name, "corner": "RL step k",
                                "caption": "Each run's success: exact success probability on the hard prompt"}}
    figures.add_curve(fig, steps, f"mean of {len(HARD_SEEDS)} seeds", "step %{x}: %{y:.4f}<extra>mean</extra>",
                      color="#222", width=3, y=[0.0] * len(steps), row=1, col=1)
    fig.add_scatter(x=steps, y=[0.0] * len(steps), mode="lines", name=f"fraction of {len(HARD_SEEDS)} seeds",
                    line=dict(color="#d9620b", width=3, shape="hv"),
                    hovertemplate="step %{x}: %{y:.3f}<extra>waiting</extra>", row=2, col=1)
    figures.add_curve(fig, steps, "exact: (1 − p)^(n·k)", "step %{x}: %{y:.3f}<extra>exact</extra>", color="#222",
                      width=2, dash="dash", y=[0.0] * len(steps), row=2, col=1)
    fig.update_yaxes(title_text="success probability", type="log", range=[-3, 0.05], dtick=1, row=1, col=1)
    fig.data[SHOWN_SEEDS].meta = {"table": {"corner": "RL step k",
                                            "caption": "Each run's success: exact success probability on the hard "
                                                       "prompt"}}
    for trace in fig.data[SHOWN_SEEDS + 1:]:
        trace.meta = {"table": {"caption": "Runs still waiting for a first success: fraction"}}
    fig.update_yaxes(title_text="fraction waiting", range=[0, 1.02], row=2, col=1)
    fig.update_xaxes(title_text="RL step k (RLOO, β = 0)", row=2, col=1)
    figures.base_layout(fig, "", height=640)
    traces = [(i, "y", [f"seed{i}"]) for i in range(SHOWN_SEEDS)]
    traces += [(SHOWN_SEEDS, "y", ["mean"]), (SHOWN_SEEDS + 1, "y", ["waiting"]),
               (SHOWN_SEEDS + 2, "y", ["exact_wait"])]
    outputs = {f"seed{i}": ("start", "n") for i in range(SHOWN_SEEDS)}
    outputs.update(mean=("start", "n"), waiting=("start", "n"), exact_wait=("start", "n"), p0=("start",),
                   per_step=("start", "n"), expected_steps=("start", "n"), never=("start", "n"),
                   never_exact=("start", "n"))
    return Explorer(
        title="No signal until the first success",
        controls=[dropdown("start", "Start RL from", STARTS, "base"),
                  dropdown("n", "Group size n", GROUPS, 4)],
        outputs=outputs,
        compute=compute,
        figure=fig,
        traces=traces,
        layout={"title.text": "Start succeeds with p = {p0:.4f}: a group of {n} holds a success with probability "
                              "{per_step:.3f} per step (about {expected_steps:.0f} steps); "
                              f"{{never:.2f}} of the {len(HARD_SEEDS)} runs never saw one (the chance for one run: "
                              "{never_exact:.2f})"},
        caption=(f"Precomputed by toy: RLOO on prompt {HARD_PROMPT} alone, {len(HARD_SEEDS)} seeds, "
                 "exact success probabilities."),
    )


# -- a format-gated reward -----------------------------------------------------------------------------------------
FORMAT_DEMOS = (8, 64, 512)
FORMAT_SEEDS = SEEDS
"""Seeds of the format-gated runs (RL's sampling; SFT's demonstrations are one sample, seed 0)."""
FORMAT_REWARDS = {"gated": "task reward, only if readable", "task": "task reward, format ignored"}


@cache
def format_runs(start: str, gate: bool, n_demos: int | None = None) -> train.Curves:
    """RLOO on the (gated) sum reward from the pretrained base, or from SFT on ``n_demos`` readable demonstrations."""
    base = reference_policy()
    pi0 = base if start == "base" else format_gate.format_sft(base, n_demos)
    return format_gate.rl_curves(pi0, REWARD, gate=gate, steps=RL_STEPS, group_size=RL_GROUP, seeds=FORMAT_SEEDS,
                                 lr=RL_LR, beta=RL_BETA)


@reused
def format_gated() -> Explorer:
    """Exact expected reward during RL from the base model and from SFT on readable demonstrations, with the
    verifier's format gate on or off: the gate, not the task, is what RL from the base model cannot get past."""
    base = reference_policy()

    def compute(state):
        gate = state["reward"] == "gated"
        from_base = format_runs("base", gate)
        from_sft = format_runs("sft", gate, int(state["n"]))
        sft_policy = format_gate.format_sft(base, int(state["n"]))
        return {"base": from_base.reward[0].mean(axis=0), "sft": from_sft.reward[0].mean(axis=0),
                "fmt_base": [format_gate.format_rate(base)], "fmt_sft": [format_gate.format_rate(sft_policy)],
                "end_base": [from_base.reward[0, :, -1].mean()], "end_sft": [from_sft.reward[0, :, -1].mean()]}

    steps = list(range(RL_STEPS + 1))
    fig = go.Figure()
    for name, hover, style in (
            ("RL from the base model", "from base", dict(color="#d62728", width=2.5, dash="dash", symbol="x")),
            ("RL after SFT on readable demos", "after SFT", dict(color="#2ca02c", width=3, symbol="circle"))):
        figures.add_curve(fig, steps, name, f"step %{{x}}: %{{y:.3f}}<extra>{hover}</extra>", **style, size=6)
    for trace in fig.data:
        trace.meta = {"table": {"caption": "Expected reward, exact, mean of the seeds (reward units)"}}
    _reward_axes(fig, "RL step (RLOO, n = 4, 5 prompts)", "expected reward (exact)", height=440)
    return Explorer(
        title="A format-gated reward: why SFT comes before RL with verifiers",
        controls=[dropdown("reward", "Reward", FORMAT_REWARDS, "gated"),
                  dropdown("n", "Readable demonstrations per prompt", FORMAT_DEMOS, 64)],
        outputs=dict(base=("reward",), sft=("reward", "n"), fmt_base=(), fmt_sft=("n",), end_base=("reward",),
                     end_sft=("reward", "n")),
        compute=compute, figure=fig,
        traces=[(0, "y", ["base"]), (1, "y", ["sft"])],
        layout={"title.text": "Readable: base {fmt_base:.4f}, after SFT {fmt_sft:.3f}. After "
                              f"{RL_STEPS} steps: " + "{end_base:.3f} from the base, {end_sft:.3f} after SFT"},
        caption=f"Pretrained π_ref as the base model; a response is readable when it ends with "
                f"{' '.join(map(str, format_gate.FORMAT_MARKER))}; SFT is fitted to one sample of demonstrations "
                f"(seed 0). RLOO with β = {RL_BETA} toward its start, mean of {len(FORMAT_SEEDS)} seeds; expected "
                "rewards exact over all 625 responses per prompt.",
    )


# -- on-policy distillation ---------------------------------------------------------------------------------------
DISTILL_BETAS = (0.3, 1.0)
DISTILL_RESPONSES = 8
DISTILL_PROMPT = 2
DISTILL_SEEDS = SEEDS
"""Seeds of the distillation runs: the explorer draws their mean, and section 4.4 quotes their spread."""
DISTILL_REWARDS = {"sum_to_target": "sum to target", "first_token": "first token"}
DISTILL_STYLE = {"on_policy": dict(color="#2ca02c", dash="solid", symbol="circle"),
                 "sft": dict(color="#9467bd", dash="dash", symbol="square"),
                 "rl": dict(color="#d9620b", dash="dot", symbol="x")}
DISTILL_LABELS = {"on_policy": "on-policy distillation", "sft": "SFT on the teacher's outputs",
                  "rl": "RL on the reward (RLOO)"}


@cache
def distill_responses(reward: str) -> np.ndarray:
    """The responses the explorer offers: π_ref's samples for the prompt, seeded, shape (DISTILL_RESPONSES, L)."""
    return reference_policy().sample(DISTILL_PROMPT, DISTILL_RESPONSES, rng=np.random.default_rng(1))


@reused
def distillation_explorer() -> Explorer:
    """Upper panel: for one response of π_ref, Figure 4.1's exact advantages and r − V(x) beside β times the
    teacher's per-token log-ratio (reward units). Lower panels: training a student from π_ref by on-policy
    distillation, SFT on the teacher's outputs, or RL on the sparse reward; exact task reward and KL to the teacher."""
    from ...exact import sequence_advantage, token_advantages, value
    from ..figures import EXACT, SEQUENCE

    student = reference_policy()
    L = student.length

    def compute(state):
        reward, beta = state["reward"], state["beta"]
        y = tuple(int(a) for a in distill_responses(reward)[int(state["response"])])
        T = distillation.teacher(beta, reward)
        out = {"A": token_advantages(student, reward, DISTILL_PROMPT, y),
               "seq": np.full(L, sequence_advantage(student, reward, DISTILL_PROMPT, y)),
               "sig": beta * distillation.token_signal(student, T, DISTILL_PROMPT, y),
               "teacher_r": [sft.success_rate(T, reward)],
               "teacher_r_prompt": [value(T, reward, DISTILL_PROMPT)],
               "align": [distillation.signal_alignment(student, T, reward, DISTILL_PROMPT, beta)]}
        for m in distillation.METHODS:
            c = distillation.distill(m, beta, reward, steps=RL_STEPS, group_size=RL_GROUP, lr=RL_LR,
                                     seeds=DISTILL_SEEDS)
            out[f"r_{m}"] = c.reward.mean(axis=0)
            out[f"kl_{m}"] = c.kl.mean(axis=0)
            out[f"end_kl_{m}"] = [out[f"kl_{m}"][-1]]
        return out

    fig = make_subplots(rows=3, cols=1, vertical_spacing=0.1, row_heights=[0.36, 0.32, 0.32],
                        subplot_titles=("Credit per token", "Student's task reward",
                                        "Reverse KL to the teacher"))
    pos = [f"t = {t + 1}" for t in range(L)]  # short: four of them fit a 320 px screen unturned
    fig.add_bar(x=pos, y=[0.0] * L, name="exact advantage A(s_t, y_t)", marker=dict(color=EXACT["color"]),
                row=1, col=1)
    fig.add_bar(x=pos, y=[0.0] * L, name="sequence-level r − V(x)", marker=dict(**SEQUENCE), row=1, col=1)
    fig.add_bar(x=pos, y=[0.0] * L, name="β × teacher's log π_T/π_ref",
                marker=dict(color="#2ca02c", pattern=dict(shape=".", fgcolor="#0b4d0b", solidity=0.3)), row=1, col=1)
    steps = list(range(RL_STEPS + 1))
    for row in (2, 3):
        for m in distillation.METHODS:
            st = DISTILL_STYLE[m]
            fig.add_scatter(x=steps, y=steps, mode="lines+markers", name=DISTILL_LABELS[m], legendgroup=m,
                            showlegend=row == 2, line=dict(color=st["color"], dash=st["dash"], width=2.5),
                            marker=dict(symbol=st["symbol"], size=5, maxdisplayed=11),
                            hovertemplate="step %{x}: %{y:.3f}<extra>" + DISTILL_LABELS[m] + "</extra>",
                            row=row, col=1)
    for trace in fig.data[:3]:
        trace.meta = {"table": {"caption": "Credit per token for one response of π_ref (reward units)",
                                "corner": "position t"}}
    for trace in fig.data[3:3 + len(distillation.METHODS)]:
        trace.meta = {"table": {"caption": "Student's task reward E[r] (reward units)", "corner": "step"}}
    for trace in fig.data[3 + len(distillation.METHODS):]:
        trace.meta = {"table": {"caption": "Reverse KL to the teacher (nats)", "corner": "step"}}
    fig.update_yaxes(title_text="credit (reward units)", row=1, col=1)
    fig.update_yaxes(title_text="E[r]", range=[0, 1.02], row=2, col=1)
    fig.update_yaxes(title_text="KL (nats)", rangemode="tozero", row=3, col=1)
    fig.update_xaxes(title_text="step (n = 4, all 5 prompts)", row=3, col=1)
    fig.update_layout(barmode="group")
    figures.base_layout(fig, "", height=820)
    methods = list(distillation.METHODS)
    deps = ("reward", "beta")
    outputs = {"A": ("reward", "response"), "seq": ("reward", "response"), "sig": ("reward", "beta", "response"),
               "teacher_r": deps, "teacher_r_prompt": deps, "align": deps}
    outputs.update({f"{k}_{m}": deps for k in ("r", "kl", "end_kl") for m in methods})
    traces = [(0, "y", ["A"]), (1, "y", ["seq"]), (2, "y", ["sig"])]
    traces += [(3 + i, "y", [f"r_{m}"]) for i, m in enumerate(methods)]
    traces += [(3 + len(methods) + i, "y", [f"kl_{m}"]) for i, m in enumerate(methods)]
    return Explorer(
        title="On-policy distillation: the teacher's signal on every token",
        controls=[dropdown("reward", "Reward", DISTILL_REWARDS, "sum_to_target"),
                  dropdown("beta", "Teacher π_T ∝ π_ref·e^(r/β), β", DISTILL_BETAS, 0.3),
                  slider("response", "Response of π_ref (sample)", list(range(DISTILL_RESPONSES)), 0,
                         fmt="{:.0f}")],
        outputs=outputs, compute=compute, figure=fig, traces=traces,
        layout={"title.text": "Teacher: success {teacher_r:.3f} on average over the five prompts, "
                              "{teacher_r_prompt:.3f} on prompt " + str(DISTILL_PROMPT) + ", where its signal "
                              "follows the exact credit with correlation {align:.2f}. After " + str(RL_STEPS) +
                              " steps the student is {end_kl_on_policy:.3f} nats from it on-policy, "
                              "{end_kl_sft:.3f} by SFT (averaged over the prompts)"},
        caption=f"Upper panel: prompt {DISTILL_PROMPT}; exact credit and the teacher's signal are for π_ref, the "
                "student at step 0. Lower panels: the student, a tabular policy starting at π_ref, is trained on all "
                f"five prompts, and its task reward and KL are averaged over them; every method samples {RL_GROUP} "
                "responses per prompt and step (the teacher's for SFT, the student's otherwise), step size "
                f"{RL_LR}, mean of {len(DISTILL_SEEDS)} seeds. The KL is the reverse one, KL(π_S ‖ π_T), which "
                "on-policy distillation minimises (SFT minimises the forward one).",
    )


EXPLORERS = {
    "compounding_errors": compounding_errors,
    "sft_then_rl": sft_then_rl,
    "waiting_for_signal": waiting_for_signal,
    "format_gated": format_gated,
    "distillation": distillation_explorer,
}
"""Section 4.4's explorers, for ``toy.explorers.ALL``."""
