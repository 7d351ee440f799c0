"""Section 4.5's explorers: critic-free advantages beside exact credit, their gradients' bias and variance, value
estimates with and without a critic, and training curves of every method."""

from __future__ import annotations

from functools import cache

import numpy as np
from plotly.subplots import make_subplots

from ... import estimators, exact, gae, train
from ...critic import FEATURES, Critic
from ...policy import PRESETS, TabularPolicy, reference_policy
from ...rewards import REWARDS, reward_table
from ...vocab import PROMPTS
from .. import figures
from ..explorer import Action, Explorer, dropdown, reused, slider

PROMPT = 2
N_MAX = 16
GROUP_SIZES = (2, 4, 8, 16)
N_GROUPS = 16
REWARD_OPTIONS = {name: name.replace("_", " ") for name in REWARDS}
METHOD_LABELS = {"reinforce": "REINFORCE (mean)", "rloo": "RLOO", "remax": "ReMax", "grpo": "GRPO",
                 "dr_grpo": "Dr. GRPO", estimators.EXACT_CRITIC: "exact critic (per token)"}
"""Display names of the estimators."""
STYLE = {
    "reinforce": dict(color="#8c564b", dash="dot", symbol="triangle-up"),
    "rloo": dict(color="#1f77b4", dash="solid", symbol="circle"),
    "remax": dict(color="#2ca02c", dash="dashdot", symbol="square"),
    "grpo": dict(color="#d62728", dash="dash", symbol="diamond"),
    "dr_grpo": dict(color="#9467bd", dash="longdash", symbol="x"),
    estimators.EXACT_CRITIC: dict(color="#222222", dash="solid", symbol="star"),
    "exact": dict(color="#222222", dash="solid", symbol="star"),
    "ppo": dict(color="#d9620b", dash="longdashdot", symbol="cross"),
    "vineppo": dict(color="#138a9c", dash="6px,2px,2px,2px,2px,2px", symbol="hexagon"),
}
"""Colour, line dash and marker of every method: series differ by more than colour."""

OPTIMUM_BAND = "#8c8c8c"
"""The π* band: a mid grey, at least 3:1 against the light page and the dark one (a translucent black vanished)."""
UNUSED_TEMPLATE_PARTS = ("coloraxis", "colorscale", "geo", "mapbox", "polar", "scene", "ternary")
"""Parts of the plotly template for subplot kinds and colour scales that none of these figures has."""


def _base_layout(fig, height: int):
    """The book's look (``figures.base_layout``), keeping only the part of its template that the figure uses.

    The full template also holds defaults for every other trace type, 3-d scenes, maps and polar axes: about 6 KB
    that each explorer would store in the page for nothing. What is kept draws exactly as before."""
    figures.base_layout(fig, "", height=height)
    t = fig.layout.template.to_plotly_json()
    used = {trace.type for trace in fig.data}
    fig.layout.template = dict(data={k: v for k, v in t["data"].items() if k in used},
                               layout={k: v for k, v in t["layout"].items() if k not in UNUSED_TEMPLATE_PARTS})
    return fig


# -- one group's advantages beside exact credit ---------------------------------------------------------------
@cache
def sample_group(reward: str, group: int):
    """Sampled group number ``group`` (seeded) of N_MAX responses to prompt 2 under π_ref: (responses (N_MAX, L),
    their rewards, V(x), the first response's exact per-token advantages, the greedy response's reward)."""
    pi = reference_policy()
    ys = pi.sample(PROMPT, N_MAX, rng=np.random.default_rng(1000 + group))
    R = reward_table(reward, PROMPT, pi.length)
    V = exact.values(pi, reward, PROMPT)
    greedy = float(R[estimators.greedy_response(pi, PROMPT)])
    return ys, R[tuple(ys.T)], float(V[0]), exact.token_advantages(pi, reward, PROMPT, ys[0]), greedy


def _pad(a: np.ndarray, size: int = N_MAX) -> np.ndarray:
    """Pad with copies of the last entry: repeated points draw on top of each other."""
    return np.concatenate([a, np.full(size - len(a), a[-1])])


def _baseline(method: str, r: np.ndarray, greedy: float) -> float:
    """What the method subtracts from the first response's reward."""
    if method == "rloo":
        return float(r[1:].mean())
    if method == "remax":
        return greedy
    return float(r.mean())


@reused
def group_advantages() -> Explorer:
    """One advantage per response (each critic-free method) beside the exact per-token advantages of response 1.

    Controls: method, group size n, reward, and which sampled group (prompt 2, π_ref). Outputs: the method's
    advantages of the n responses and their exact r_i − V(x) (padded to 16 by repeating the last), response 1's
    exact A(s_t, y_t) and its method advantage on every token.
    """
    L = reference_policy().length

    def compute(state):
        method, n, reward, g = state["method"], int(state["n"]), state["reward"], int(state["group"])
        ys, r, vx, tok, greedy = sample_group(reward, g)
        r = r[:n]
        A = estimators.advantages(method, r, greedy)
        # what (r₁ − baseline) is divided by: the group's std (+ ε) for GRPO, 1 otherwise; the title shows it to 3
        # significant digits in general format: "1", or GRPO's ε alone (0.0001) for a group of equal rewards
        divisor = float(r.std(ddof=1) + estimators.GRPO_EPS) if method == "grpo" else 1.0
        return {
            "adv": _pad(A), "seq": _pad(r - vx), "idx": _pad(np.arange(1.0, n + 1)),
            "tok_exact": tok, "tok_seq": np.full(L, r[0] - vx), "tok_method": np.full(L, A[0]),
            "a1": A[0], "r1": r[0], "vx": vx, "baseline": _baseline(method, r, greedy),
            "divisor": divisor, "divisor_shown": float(f"{divisor:.3g}"),
            **{f"y{t}": float(ys[0, t]) for t in range(L)},
            "next_group": (np.arange(N_GROUPS) + 1) % N_GROUPS,
        }

    # Short titles and numbered tokens: at 320 px the panels are about 270 px wide, and "token 1" labels would
    # turn on end and push the upper axis title into the lower panel's title.
    fig = make_subplots(rows=2, cols=1, vertical_spacing=0.22,
                        subplot_titles=("Response 1, token by token", "One advantage per response"))
    positions = list(range(1, L + 1))
    zeros = [0.0] * L
    fig.add_bar(x=positions, y=zeros, name="exact A(s_t, y_t)", marker=figures.EXACT, row=1, col=1,
                hovertemplate="%{x}: %{y:.4f}<extra>exact</extra>")
    fig.add_bar(x=positions, y=zeros, name="r − V(x) (the ideal baseline)", row=1, col=1,
                marker=dict(color="#8c8c8c", pattern=dict(shape=".", fgcolor="#333", solidity=0.3)),
                hovertemplate="%{x}: %{y:.4f}<extra>r − V(x)</extra>")
    fig.add_bar(x=positions, y=zeros, name="the method's A₁, on every token", marker=figures.SEQUENCE, row=1, col=1,
                hovertemplate="%{x}: %{y:.4f}<extra>method</extra>")
    idx = list(range(1, N_MAX + 1))
    fig.add_scatter(x=idx, y=[0.0] * N_MAX, mode="markers", name="the method's A_i", row=2, col=1,
                    marker=dict(symbol="diamond", size=11, color=figures.SEQUENCE["color"]),
                    hovertemplate="response %{x}: %{y:.3f}<extra>method</extra>")
    fig.add_scatter(x=idx, y=[0.0] * N_MAX, mode="markers", name="exact r_i − V(x)", row=2, col=1,
                    marker=dict(symbol="circle-open", size=13, color=figures.EXACT["color"], line=dict(width=2)),
                    hovertemplate="response %{x}: %{y:.3f}<extra>r − V(x)</extra>")
    for trace in fig.data[:3]:
        trace.meta = {"table": {"caption": "Response 1, token by token: advantage (reward units)"}}
    for trace in fig.data[3:]:
        trace.meta = {"table": {"caption": "One advantage per response of the group (reward units; GRPO's A_i "
                                           "have none)"}}
    # the method's rows by the method's name ({method}: the selected one, as the tables name it at each setting)
    for i, name in ((2, "{method}'s A₁, on every token"), (3, "{method}'s A_i")):
        fig.data[i].meta = {"table": {**fig.data[i].meta["table"], "name": name}}
    fig.update_yaxes(title_text="advantage", zeroline=True, zerolinecolor="#444", row=1, col=1)
    fig.update_yaxes(title_text="advantage", zeroline=True, zerolinecolor="#444", row=2, col=1)
    fig.update_xaxes(title_text="token of response 1", dtick=1, row=1, col=1)
    fig.update_xaxes(title_text="response i in the group", dtick=1, row=2, col=1)
    fig.update_layout(barmode="group", bargap=0.25)
    _base_layout(fig, 640)
    tokens = " ".join("{" + f"y{t}:.0f" + "}" for t in range(L))
    return Explorer(
        title="Critic-free advantages beside exact credit",
        controls=[dropdown("method", "Method", {m: METHOD_LABELS[m] for m in estimators.METHODS}, "rloo"),
                  dropdown("n", "Group size n", GROUP_SIZES, 4),
                  dropdown("reward", "Reward", REWARD_OPTIONS, "sum_to_target"),
                  slider("group", "Sampled group", range(N_GROUPS), 0, fmt="{:.0f}")],
        outputs={"adv": ("method", "n", "reward", "group"), "seq": ("n", "reward", "group"), "idx": ("n",),
                 "tok_exact": ("reward", "group"), "tok_seq": ("reward", "group"),
                 "tok_method": ("method", "n", "reward", "group"), "a1": ("method", "n", "reward", "group"),
                 "r1": ("reward", "group"), "vx": ("reward",), "baseline": ("method", "n", "reward", "group"),
                 "divisor": ("method", "n", "reward", "group"), "divisor_shown": ("method", "n", "reward", "group"),
                 **{f"y{t}": ("group",) for t in range(L)}, "next_group": ()},
        compute=compute,
        figure=fig,
        traces=[(0, "y", ["tok_exact"]), (1, "y", ["tok_seq"]), (2, "y", ["tok_method"]),
                (3, "x", ["idx"]), (3, "y", ["adv"]), (4, "x", ["idx"]), (4, "y", ["seq"])],
        layout={"title.text": f"Prompt {PROMPT}, response 1 = {tokens}: r = {{r1:.0f}}, V(x) = {{vx:.3f}}; "
                              "{method}: A₁ = (r₁ − {baseline:.3f}) / {divisor_shown} = {a1:.3f}"},
        actions=[Action("Sample another group", "next_group", ("group",), N_GROUPS)],
        caption=f"Precomputed by toy: {N_GROUPS} groups of up to {N_MAX} responses sampled from π_ref (seeded). "
                "Only GRPO divides: by the group's standard deviation plus ε = 0.0001, so under GRPO a group of "
                "equal rewards gets 0 / 0.0001 = 0. The other methods do not divide: their title shows / 1.",
    )


# -- bias and variance of each gradient estimate, exactly -----------------------------------------------------
VARIANCE_SIZES = (2, 3, 4, 6, 8, 12, 16)
"""Group sizes on the x-axis of the variance figure."""
ESTIMATORS = (*estimators.METHODS, estimators.EXACT_CRITIC)


@cache
def gradient_statistics(reward: str, preset: str) -> dict[str, np.ndarray]:
    """For every estimator and group size, over all prompts (the gradient is the mean of the prompts' gradients):
    relative variance E‖g − E g‖²/‖E g‖², scale ⟨E g, ∇J⟩/‖∇J‖², and the angle between E g and ∇J in degrees.
    Returns {"<quantity>_<method>": array over VARIANCE_SIZES}."""
    pi = TabularPolicy.from_policy(reference_policy(preset))
    grads = [estimators.exact_policy_gradient(pi, reward, x) for x in PROMPTS]
    gg = sum(g @ g for g in grads)
    out = {}
    for m in ESTIMATORS:
        rel, scale, angle = [], [], []
        for n in VARIANCE_SIZES:
            moments = [estimators.gradient_moments(m, pi, reward, x, n) for x in PROMPTS]
            mm = sum(mean @ mean for mean, _ in moments)
            mg = sum(mean @ g for (mean, _), g in zip(moments, grads, strict=True))
            rel.append(sum(v for _, v in moments) / mm if mm > 0 else 0.0)
            scale.append(mg / gg if gg > 0 else 0.0)
            cos = mg / np.sqrt(mm * gg) if mm > 0 and gg > 0 else 1.0
            angle.append(float(np.degrees(np.arccos(np.clip(cos, -1.0, 1.0)))))
        out[f"rel_{m}"], out[f"scale_{m}"], out[f"angle_{m}"] = np.array(rel), np.array(scale), np.array(angle)
    return out


@reused
def estimator_variance() -> Explorer:
    """Exact bias and variance of each method's policy-gradient estimate against the group size n.

    Controls: reward and π_ref preset. Three panels over n: relative variance (noise per unit of signal), the
    expected gradient's component along ∇J (1 = unbiased), and its angle to ∇J.
    """

    def compute(state):
        return gradient_statistics(state["reward"], state["preset"])

    fig = make_subplots(rows=3, cols=1, vertical_spacing=0.1, shared_xaxes=True,
                        subplot_titles=("Noise per unit of signal:<br>E‖g − E g‖² / ‖E g‖²",
                                        "Along ∇J: ⟨E g, ∇J⟩ / ‖∇J‖²<br>(1 = unbiased)",
                                        "Angle of E g to ∇J (degrees)"))
    ns = list(VARIANCE_SIZES)
    traces, outputs = [], {}
    for row, quantity in enumerate(("rel", "scale", "angle"), start=1):
        for m in ESTIMATORS:
            st = STYLE[m]
            fig.add_scatter(x=ns, y=[1.0] * len(ns), mode="lines+markers", name=METHOD_LABELS[m], legendgroup=m,
                            showlegend=row == 1, line=dict(color=st["color"], dash=st["dash"], width=2),
                            marker=dict(symbol=st["symbol"], size=8, color=st["color"]), row=row, col=1,
                            hovertemplate="n = %{x}: %{y:.4g}<extra>" + METHOD_LABELS[m] + "</extra>")
            traces.append((len(fig.data) - 1, "y", [f"{quantity}_{m}"]))
            outputs[f"{quantity}_{m}"] = ("reward", "preset")
    captions = ("Noise per unit of signal, E‖g − E g‖² / ‖E g‖² (a ratio, no unit)",
                "Along ∇J, ⟨E g, ∇J⟩ / ‖∇J‖² (a ratio: 1 = unbiased)", "Angle of E g to ∇J (degrees)")
    for k, trace in enumerate(fig.data):
        trace.meta = {"table": {"caption": captions[k // len(ESTIMATORS)], "corner": "group size n"}}
    fig.update_xaxes(type="log", tickvals=ns, row=3, col=1, title_text="group size n (per prompt)")
    fig.update_xaxes(type="log", tickvals=ns)
    fig.update_yaxes(type="log", title_text="relative variance", row=1, col=1)
    fig.update_yaxes(title_text="scale", row=2, col=1)
    fig.update_yaxes(title_text="degrees", rangemode="tozero", row=3, col=1)
    _base_layout(fig, 820)
    return Explorer(
        title="Bias and variance of the critic-free gradient estimates, exactly",
        controls=[dropdown("reward", "Reward", REWARD_OPTIONS, "sum_to_target"),
                  dropdown("preset", "π_ref", {p: p for p in PRESETS}, "pretrained")],
        outputs=outputs,
        compute=compute,
        figure=fig,
        traces=traces,
        layout={"title.text": "Reward {reward}, π_ref {preset}: one group of n responses per prompt, all 5 prompts"},
        caption="Exact expectations over every group of n responses, computed by toy (no sampling).",
    )


# -- value estimates: a learned critic with GAE, VinePPO's Monte Carlo, exact -------------------------------------
LAMBDAS = (0.0, 0.5, 0.8, 0.9, 0.95, 1.0)
CRITIC_DATA = (16, 64, 256, 1024)
VINE_K = (1, 3, 9, 27)
CRITIC_SEEDS = 20
"""Critics fitted per setting, one per seed (seeds 500, 501, ...): the explorer's errors are their mean, and the prose
quotes the spread over them."""
N_RESPONSES = 16
CRITIC_COLOR = "#8c564b"


@cache
def _critics(reward: str, features: str, n_data: int) -> list[Critic]:
    """Critics fitted (exact least squares) to the returns of n_data responses from π_ref, one per seed."""
    pi = reference_policy()
    R = reward_table(reward, PROMPT, pi.length)
    out = []
    for s in range(CRITIC_SEEDS):
        ys = pi.sample(PROMPT, n_data, rng=np.random.default_rng(500 + s))
        out.append(Critic(pi.length, features).fit_returns(PROMPT, ys, R[tuple(ys.T)]))
    return out


@cache
def _exact_tables(reward: str):
    """π_ref(y | x), r(x, y) and the exact advantage table of prompt 2: what every critic's error is measured with."""
    pi = reference_policy()
    return (pi.response_probs(PROMPT), reward_table(reward, PROMPT, pi.length),
            exact.advantage_table(pi, reward, PROMPT))


@cache
def _critic_value_tables(reward: str, features: str, n_data: int) -> np.ndarray:
    """Every seed's critic values V̂(s_t) broadcast over the responses: shape (CRITIC_SEEDS,) + (K,)*L + (L,)."""
    L = reference_policy().length
    tables = []
    for c in _critics(reward, features, n_data):
        depth = [c.table(PROMPT, t) for t in range(L)]
        K = c.n_actions
        tables.append(np.stack([np.broadcast_to(v.reshape(v.shape + (1,) * (L - t)), (K,) * L)
                                for t, v in enumerate(depth)], axis=-1))
    return np.stack(tables)


@cache
def critic_errors_per_seed(reward: str, features: str, n_data: int, lam: float) -> np.ndarray:
    """E_y[(Â_t − A_t)²] of GAE(λ) with each seed's critic, per position: shape (CRITIC_SEEDS, L). All seeds at once,
    the same numbers as ``gae.advantage_errors(gae.gae_table(...), ...)`` critic by critic."""
    P, R, A = _exact_tables(reward)
    V = _critic_value_tables(reward, features, n_data)
    L = V.shape[-1]
    r = np.zeros(V.shape)
    r[..., L - 1] = R
    table = gae.gae(r, V, lam)
    return np.tensordot((table - A) ** 2, P, axes=(tuple(range(1, L + 1)), tuple(range(L))))


def _critic_errors(reward: str, features: str, n_data: int, lam: float) -> np.ndarray:
    """The mean over seeds of ``critic_errors_per_seed``: shape (L,)."""
    return critic_errors_per_seed(reward, features, n_data, lam).mean(axis=0)


@cache
def _responses():
    return reference_policy().sample(PROMPT, N_RESPONSES, rng=np.random.default_rng(77))


@cache
def _exact_values(reward: str):
    """Exact V at every prefix and Var[r | s] at every state, prompt 2 under π_ref (each depends on the reward only)."""
    pi = reference_policy()
    return exact.values(pi, reward, PROMPT), exact.return_variances(pi, reward, PROMPT)


@cache
def _exact_value_errors(reward: str, which: str, setting) -> tuple[float, ...]:
    """Exact per-position errors that involve no sampled critic: GAE(λ = setting) with the exact V ("gae"),
    VinePPO with K = setting rollouts ("vine"), and the critic-free r − V(x) ("seq")."""
    pi = reference_policy()
    if which == "gae":
        out = gae.gae_exact_value_errors(pi, reward, PROMPT, setting)
    elif which == "vine":
        out = gae.vine_errors(pi, reward, PROMPT, setting)
    else:
        out = exact.credit_by_position(pi, reward, PROMPT)[1]
    return tuple(float(e) for e in out)


@cache
def _vine_values(reward: str, i: int, k: int) -> tuple[float, ...]:
    """VinePPO's values along response i, one seeded realisation (seed 900 + i)."""
    y = tuple(int(a) for a in _responses()[i])
    return tuple(gae.vine_values(reference_policy(), reward, PROMPT, y, k, rng=np.random.default_rng(900 + i)))


@reused
def value_estimates() -> Explorer:
    """Values along one response and the error of each method's per-token advantages, against exact.

    Controls: reward, GAE's λ, the critic's features and training data, VinePPO's K, and the response.
    """
    pi = reference_policy()
    L = pi.length

    def compute(state):
        reward, lam, feat = state["reward"], state["lam"], state["features"]
        n_data, k, i = int(state["n_data"]), int(state["k"]), int(state["response"])
        y = tuple(int(a) for a in _responses()[i])
        V, var = _exact_values(reward)
        r = float(V[L][y])
        critic = _critics(reward, feat, n_data)[0]
        mse = {
            "mse_critic": _critic_errors(reward, feat, n_data, lam),
            "mse_exact": _exact_value_errors(reward, "gae", lam),
            "mse_vine": _exact_value_errors(reward, "vine", k),
            "mse_seq": _exact_value_errors(reward, "seq", None),
        }
        out = {
            "v_exact": [float(V[t][y[:t]]) for t in range(L + 1)],
            "v_critic": list(critic.values_along(PROMPT, np.array([y]))[0]) + [r],
            "v_vine": list(_vine_values(reward, i, k)),
            "v_vine_sd": [float(np.sqrt(var[t][y[:t]] / k)) for t in range(L + 1)],
            **{name: np.array(v) for name, v in mse.items()},
            **{f"tot_{name[4:]}": float(np.sum(v)) for name, v in mse.items()},
            **{f"y{t}": float(y[t]) for t in range(L)}, "r": r,
            "next_response": (np.arange(N_RESPONSES) + 1) % N_RESPONSES,
        }
        return out

    fig = make_subplots(rows=2, cols=1, vertical_spacing=0.2,
                        subplot_titles=("V(s_t) along the response",
                                        "Advantage error E[(Â_t − A_t)²]"))
    ts = list(range(L + 1))
    fig.add_scatter(x=ts, y=[0.0] * (L + 1), mode="lines+markers", name="exact V", row=1, col=1,
                    line=dict(color="#222", width=3), marker=dict(symbol="star", size=11))
    fig.add_scatter(x=ts, y=[0.0] * (L + 1), mode="lines+markers", name="learned critic V̂", row=1, col=1,
                    line=dict(color=CRITIC_COLOR, dash="dash", width=2), marker=dict(symbol="cross", size=10))
    fig.add_scatter(x=[t + 0.06 for t in ts], y=[0.0] * (L + 1), mode="markers", row=1, col=1,
                    name="VinePPO: K rollouts' mean ± 1 sd",
                    marker=dict(symbol="hexagon-open", size=11, color=STYLE["vineppo"]["color"], line=dict(width=2)),
                    error_y=dict(type="data", array=[0.0] * (L + 1), visible=True))
    positions = [f"token {t + 1}" for t in range(L)]
    bars = [("GAE(λ), learned critic", dict(color=CRITIC_COLOR, pattern=dict(shape="x", solidity=0.3))),
            ("GAE(λ), exact V", dict(color="#666", pattern=dict(shape="", solidity=0.3))),
            ("VinePPO, K rollouts", dict(color=STYLE["vineppo"]["color"], pattern=dict(shape=".", solidity=0.3))),
            ("critic-free r − V(x)", figures.SEQUENCE)]
    for name, marker in bars:
        fig.add_bar(x=positions, y=[0.0] * L, name=name, marker=marker, row=2, col=1,
                    hovertemplate="%{x}: %{y:.4f}<extra>" + name + "</extra>")
    values = {"caption": "V(s_t) along the response (reward units)", "header": [str(t) for t in ts]}
    for trace in fig.data[:3]:
        trace.meta = {"table": values if trace.error_y.array is None else {
            **values, "name": "VinePPO: mean of K rollouts", "error": "VinePPO: sd of that mean, √(Var/K)"}}
    for trace in fig.data[3:]:
        trace.meta = {"table": {"caption": "Advantage error E[(Â_t − A_t)²] (reward²)"}}
    fig.update_xaxes(title_text="tokens written, t", dtick=1, row=1, col=1)
    fig.update_yaxes(title_text="value", row=1, col=1)
    fig.update_yaxes(title_text="mean squared error", rangemode="tozero", row=2, col=1)
    fig.update_xaxes(title_text="position in the response", row=2, col=1)
    fig.update_layout(barmode="group")
    _base_layout(fig, 700)
    tokens = " ".join("{" + f"y{t}:.0f" + "}" for t in range(L))
    return Explorer(
        title="With a critic, and without one",
        controls=[dropdown("reward", "Reward", REWARD_OPTIONS, "sum_to_target"),
                  slider("lam", "GAE λ", LAMBDAS, 0.95, fmt="{:.2f}"),
                  dropdown("features", "Critic features", {f: f.replace("_", " ") for f in FEATURES}, "last_token"),
                  slider("n_data", "Critic's training responses", CRITIC_DATA, 256, fmt="{:.0f}"),
                  slider("k", "VinePPO rollouts K", VINE_K, 9, fmt="{:.0f}"),
                  slider("response", "Response", range(N_RESPONSES), 0, fmt="{:.0f}")],
        outputs={"v_exact": ("reward", "response"), "v_critic": ("reward", "features", "n_data", "response"),
                 "v_vine": ("reward", "k", "response"), "v_vine_sd": ("reward", "k", "response"),
                 "mse_critic": ("reward", "lam", "features", "n_data"), "mse_exact": ("reward", "lam"),
                 "mse_vine": ("reward", "k"), "mse_seq": ("reward",),
                 "tot_critic": ("reward", "lam", "features", "n_data"), "tot_exact": ("reward", "lam"),
                 "tot_vine": ("reward", "k"), "tot_seq": ("reward",),
                 **{f"y{t}": ("response",) for t in range(L)}, "r": ("reward", "response"), "next_response": ()},
        compute=compute,
        figure=fig,
        traces=[(0, "y", ["v_exact"]), (1, "y", ["v_critic"]), (2, "y", ["v_vine"]),
                (2, "error_y.array", ["v_vine_sd"]), (3, "y", ["mse_critic"]), (4, "y", ["mse_exact"]),
                (5, "y", ["mse_vine"]), (6, "y", ["mse_seq"])],
        layout={"title.text": f"Prompt {PROMPT}, response {tokens} (r = {{r:.0f}}). Error summed over tokens, mean "
                              "over all responses: critic "
                              "{tot_critic:.4f}, exact V {tot_exact:.4f}, VinePPO {tot_vine:.4f}, "
                              "critic-free {tot_seq:.4f}"},
        actions=[Action("Next response", "next_response", ("response",), N_RESPONSES)],
        caption=(f"Precomputed by toy: critics fitted to sampled returns ({CRITIC_SEEDS} seeds averaged in the "
                 "errors, seed 0 drawn above); VinePPO's errors exact, its values one seeded realisation."),
    )


# -- training curves ------------------------------------------------------------------------------------------
TRAIN_METHODS = tuple(train.METHODS)
TRAIN_SIZES = (2, 4, 16)
BETAS = (0.0, 0.1, 0.5)
TRAIN_STEPS = 40
TRAIN_SEEDS = tuple(range(20))
"""Seeds of every sampled method's runs: the curves are their mean, and the prose quotes the spread over them."""
TRAIN_LR = 4.0
CURVE_STEPS = (0, 1, 2, 3, 4, 6, 8, 10, 12, 15, 20, 25, 30, 35, 40)
"""Steps at which the curves are drawn: close together early, where they move fast (the page stays small)."""
CHECKPOINTS = (10, 20, 30, 40)
"""Steps at which the chosen method's spread over seeds is drawn."""
TRAIN_LINES = {m: dict(color=STYLE[m]["color"], dash=STYLE[m]["dash"], width=1.5) for m in TRAIN_METHODS}
TRAIN_LINES["exact"]["width"] = TRAIN_LINES["reinforce"]["width"] = 3
"""Line of each method in the training curves. No two share a dash and a width: the exact gradient's solid line
is wider than RLOO's, and REINFORCE's wide dots stay visible under Dr. GRPO's identical curve."""


@cache
def training_runs(method: str, n: int) -> train.Curves:
    """Every β at once for one method and group size. The exact gradient samples nothing: it ignores n and the
    seed, so it runs once (seed 0 only)."""
    if method == "exact":
        if n != TRAIN_SIZES[0]:
            return training_runs(method, TRAIN_SIZES[0])
        return train.train(method, steps=TRAIN_STEPS, betas=BETAS, seeds=TRAIN_SEEDS[:1], lr=TRAIN_LR)
    return train.train(method, steps=TRAIN_STEPS, group_size=n, betas=BETAS, seeds=TRAIN_SEEDS, lr=TRAIN_LR)


ADAM_LR = 0.2
"""Adam's learning rate for the optimiser comparison of 4.5: RLOO then ends near its reward under plain steps."""
ADAM_BETA = 0.1
"""The KL coefficient of that comparison (the running text's)."""


@cache
def adam_runs(method: str, n: int = 4) -> train.Curves:
    """The training runs of ``training_runs`` at β = ``ADAM_BETA`` with Adam's step (learning rate ``ADAM_LR``) in
    place of plain gradient steps: same seeds, same samples at the first step."""
    seeds = TRAIN_SEEDS[:1] if method == "exact" else TRAIN_SEEDS
    return train.train(method, steps=TRAIN_STEPS, group_size=n, betas=(ADAM_BETA,), seeds=seeds, lr=ADAM_LR,
                       optimizer="adam")


@cache
def _optimum(beta: float) -> tuple[float, float]:
    return train.optimum_metrics(beta)


def correct_mass(policy, reward: str = "sum_to_target") -> tuple[np.ndarray, np.ndarray]:
    """How a policy spreads its probability over the correct responses (reward 1) of each prompt: the entropy of
    π(y | x, r = 1) in nats, and the share of that probability on the correct response that π_ref likes best.
    Two arrays over PROMPTS. (π* ∝ π_ref·e^{r/β} keeps π_ref's proportions among them, so both equal π_ref's.)"""
    ref = reference_policy(length=policy.length)
    entropy, favourite = [], []
    for x in PROMPTS:
        correct = reward_table(reward, x, policy.length) == 1
        q = policy.response_probs(x)[correct]
        q = q / q.sum()
        entropy.append(float(-(q * np.log(np.maximum(q, np.finfo(float).tiny))).sum()))
        favourite.append(float(q[np.argmax(ref.response_probs(x)[correct])]))
    return np.array(entropy), np.array(favourite)


@reused
def training_curves() -> Explorer:
    """Exact expected reward and KL to π_ref during training: every method's mean over seeds (lines), the chosen
    method's mean ± one standard deviation over the seeds at a few steps (markers and error bars), and the
    KL-regularised optimum (wide grey line). Controls: method, group size n, KL coefficient β."""
    steps, marks = list(CURVE_STEPS), list(CHECKPOINTS)

    def compute(state):
        method, n, beta = state["method"], int(state["n"]), state["beta"]
        b = BETAS.index(beta)
        out = {}
        for metric in ("reward", "kl"):
            m, lo, hi = training_runs(method, n).band(metric, b)
            out[f"sel_{metric}"] = m[marks]
            out[f"sd_{metric}"] = (hi - m)[marks]
            out[f"final_{metric}"] = m[-1]
            for other in TRAIN_METHODS:
                out[f"{metric}_{other}"] = training_runs(other, n).band(metric, b)[0][steps]
        opt_r, opt_kl = _optimum(beta)
        out.update(opt_reward=[opt_r, opt_r], opt_kl=[opt_kl, opt_kl], opt_r=opt_r, opt_k=opt_kl)
        return out

    fig = make_subplots(rows=1, cols=2, horizontal_spacing=0.12,
                        subplot_titles=("Expected reward E[r] (exact)", "KL(π ‖ π_ref) (exact)"))
    traces, outputs = [], {}
    for col, metric in enumerate(("reward", "kl"), start=1):
        fig.add_scatter(x=[0, TRAIN_STEPS], y=[0.0, 0.0], mode="lines", name="KL-regularised optimum π*",
                        legendgroup="opt", showlegend=col == 1, line=dict(color=OPTIMUM_BAND, width=7),
                        hovertemplate="π*: %{y:.3f}<extra></extra>", row=1, col=col)
        traces.append((len(fig.data) - 1, "y", [f"opt_{metric}"]))
        for m in TRAIN_METHODS:
            fig.add_scatter(x=steps, y=[0.0] * len(steps), mode="lines", name=train.LABELS[m], legendgroup=m,
                            showlegend=col == 1, line=TRAIN_LINES[m],
                            hovertemplate="step %{x}: %{y:.3f}<extra>" + train.LABELS[m] + "</extra>",
                            row=1, col=col)
            traces.append((len(fig.data) - 1, "y", [f"{metric}_{m}"]))
            # The exact gradient samples nothing: its curves do not depend on n.
            outputs[f"{metric}_{m}"] = ("beta",) if m == "exact" else ("n", "beta")
        fig.add_scatter(x=marks, y=[0.0] * len(marks), mode="markers", name="chosen: mean ± 1 sd over seeds",
                        legendgroup="sel", showlegend=col == 1,
                        marker=dict(symbol="circle-open", size=11, color="#222", line=dict(width=2.5)),
                        error_y=dict(type="data", array=[0.0] * len(marks), visible=True, thickness=2, width=6,
                                     color="#222"),
                        hovertemplate="step %{x}: %{y:.3f} ± %{error_y.array:.3f}<extra>chosen</extra>",
                        row=1, col=col)
        traces += [(len(fig.data) - 1, "y", [f"sel_{metric}"]), (len(fig.data) - 1, "error_y.array", [f"sd_{metric}"])]
    for trace in fig.data:
        metric = "Expected reward E[r], exact (reward units)" if trace.xaxis in (None, "x") else \
            "KL(π ‖ π_ref), exact (nats)"
        table = {"caption": metric + ", mean of the seeds", "points": [0, 2, 4, 10, 20, 30, 40]}
        if trace.name == "KL-regularised optimum π*":
            table.update(header=["every step"] * 2)
        elif trace.name == "chosen: mean ± 1 sd over seeds":
            table.update(name="{method}: mean", error="{method}: 1 sd over seeds")
        trace.meta = {"table": table}
    fig.update_xaxes(title_text="training step", range=[-1, TRAIN_STEPS + 1])
    fig.update_yaxes(title_text="E[r]", range=[0, 1.04], row=1, col=1)
    fig.update_yaxes(title_text="KL (nats)", rangemode="tozero", row=1, col=2)
    _base_layout(fig, 560)
    sel = ("method", "n", "beta")
    outputs.update({"sel_reward": sel, "sel_kl": sel, "sd_reward": sel, "sd_kl": sel, "final_reward": sel,
                    "final_kl": sel, "opt_reward": ("beta",), "opt_kl": ("beta",), "opt_r": ("beta",),
                    "opt_k": ("beta",)})
    return Explorer(
        title="Training curves: every method from π_ref with a KL penalty",
        controls=[dropdown("method", "Method", {m: train.LABELS[m] for m in TRAIN_METHODS}, "rloo"),
                  dropdown("n", "Group size n", TRAIN_SIZES, 4),
                  slider("beta", "KL coefficient β", BETAS, 0.1, fmt="{:g}")],
        outputs=outputs,
        compute=compute,
        figure=fig,
        traces=traces,
        layout={"title.text": "{method}, n = {n}, β = {beta}: after {steps} steps E[r] = {final_reward:.3f}, "
                              "KL = {final_kl:.3f} (optimum π*: {opt_r:.3f}, {opt_k:.3f})".replace(
                                  "{steps}", str(TRAIN_STEPS))},
        caption=(f"Precomputed by toy: {len(TRAIN_SEEDS)} seeds per setting (the exact gradient samples nothing: one "
                 f"run), learning rate {TRAIN_LR:g}, "
                 f"{TRAIN_STEPS} steps, all 5 prompts; reward and KL computed exactly after every step and drawn at "
                 f"{len(CURVE_STEPS)} of them, closer together early on."),
    )


EXPLORERS = {
    "group_advantages": group_advantages,
    "estimator_variance": estimator_variance,
    "value_estimates": value_estimates,
    "training_curves": training_curves,
}
"""Section 4.5's explorers, for ``toy.explorers.ALL``."""
