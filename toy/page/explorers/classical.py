"""Section 4.3's explorers: the rows of the classical-vs-LLM table that the book turns into experiments.

The discount (``discount``), GAE's γ and λ (``gae_discount``), bootstrapping (``bootstrapping``), off-policy staleness
(``staleness``) and the trust region (``clipping``). Each computes with toy and declares its dependencies. A learned
critic against Monte Carlo is a static figure (``critic_figure``): it has one setting worth showing.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from ... import bootstrap, clipping, critic, discount, gae_discount, offpolicy
from ...exact import value
from ...kl import response_kl
from ...policy import check_prompt, reference_policy
from ...rewards import REWARDS, reward_table
from ...vocab import PROMPTS, RESPONSE_LENGTH
from ..explorer import Explorer, dropdown, reused, slider
from ..figures import EXACT, EXACT_COLOUR, GREY, SEQUENCE_COLOUR, add_curve, base_layout

REWARD_LABELS = {name: name.replace("_", " ") for name in REWARDS}


# -- the discount -------------------------------------------------------------------------------------------------
GAMMAS = (0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 0.99, 1.0)
DISCOUNT_BETAS = (0.03, 0.1, 0.3, 1.0)


DISCOUNT_DEFAULTS = dict(gamma=0.9, beta=0.1, reward="sum_to_target", prompt=2)
"""The discount explorer's starting state: its caption explains the curve it shows there."""


def _discount_turn(optimum, ref, x):
    """Where the mean length against γ turns back up at the default β: its lowest γ and length, the length at the
    smallest γ, KL(π* ‖ π_ref) at both, and π_ref's mean length (prompt ``x``)."""
    lengths = [discount.mean_length(optimum(g), x) for g in GAMMAS]
    i = int(np.argmin(lengths))
    kl = [response_kl(optimum(g).response_probs(x), ref.response_probs(x)) for g in (GAMMAS[i], GAMMAS[0])]
    return dict(gamma=GAMMAS[i], low=lengths[i], first=lengths[0], kl_low=kl[0], kl_first=kl[1],
                ref=discount.mean_length(ref, x))


@reused
def discount_explorer() -> Explorer:
    """With EOS, the optimum of E[γ^(T−1) r] − β·KL prefers shorter responses as γ falls: the length distribution
    of π* against π_ref's, and the mean length against γ."""
    ref = reference_policy(eos=True)
    L = ref.length

    @lru_cache(maxsize=128)
    def optimum(gamma, beta, reward):
        return discount.discounted_optimum(ref, reward, gamma, beta)

    def compute(state):
        x, beta, reward = state["prompt"], state["beta"], state["reward"]
        pi = optimum(state["gamma"], beta, reward)
        curve = np.array([discount.mean_length(optimum(g, beta, reward), x) for g in GAMMAS])
        return dict(star=pi.length_distribution(x), ref=ref.length_distribution(x), curve=curve,
                    here_x=[state["gamma"]], here_y=[discount.mean_length(pi, x)],
                    length=discount.mean_length(pi, x), earned=value(pi, reward, x),
                    earned1=value(optimum(1.0, beta, reward), reward, x))

    deps = ("gamma", "beta", "reward", "prompt")
    curve_deps = ("beta", "reward", "prompt")
    fig = make_subplots(rows=2, cols=1, vertical_spacing=0.2,
                        subplot_titles=("How long the responses are", "Mean length against γ"))
    lengths = [str(n) for n in range(L + 1)]
    fig.add_bar(x=lengths, y=[0.0] * (L + 1), name="π_ref", marker=dict(color=GREY, pattern=dict(shape=".")),
                row=1, col=1, hovertemplate="%{x} tokens: %{y:.3f}<extra>π_ref</extra>")
    fig.add_bar(x=lengths, y=[0.0] * (L + 1), name="π*, the optimum", marker=EXACT, row=1, col=1,
                hovertemplate="%{x} tokens: %{y:.3f}<extra>π*</extra>")
    fig.add_scatter(x=list(GAMMAS), y=[0.0] * len(GAMMAS), mode="lines+markers", name="E[length] under π*",
                    line=dict(color=EXACT_COLOUR, width=3), row=2, col=1,
                    hovertemplate="γ = %{x}: %{y:.2f} tokens<extra></extra>")
    fig.add_scatter(x=[1.0], y=[0.0], mode="markers", name="selected γ", marker=dict(symbol="diamond", size=12,
                    color="#222"), row=2, col=1, hovertemplate="γ = %{x}: %{y:.2f} tokens<extra>selected</extra>")
    for trace in fig.data[:2]:
        trace.meta = {"table": {"caption": "How long the responses are: probability of each length"}}
    fig.data[2].meta = {"table": {"caption": "Mean length of π*'s responses against γ (digit tokens)"}}
    fig.update_xaxes(title_text="digits before EOS (4: the limit)", row=1, col=1)
    fig.update_xaxes(title_text="discount γ", row=2, col=1)
    fig.update_yaxes(title_text="probability", rangemode="tozero", row=1, col=1)
    fig.update_yaxes(title_text="mean digit tokens", range=[0, L + 0.2], row=2, col=1)
    fig.update_layout(barmode="group")
    base_layout(fig, "", height=700)
    d = DISCOUNT_DEFAULTS
    turn = _discount_turn(lambda g: optimum(g, d["beta"], d["reward"]), ref, d["prompt"])
    steady = discount.mean_length(optimum(GAMMAS[0], DISCOUNT_BETAS[0], d["reward"]), d["prompt"])
    return Explorer(
        title="The discount: with γ < 1 the best policy ends early",
        controls=[slider("gamma", "Discount γ", GAMMAS, d["gamma"], fmt="{:g}"),
                  slider("beta", "KL coefficient β", DISCOUNT_BETAS, d["beta"], fmt="{:g}"),
                  dropdown("reward", "Reward", {k: REWARD_LABELS[k] for k in ("sum_to_target", "count_target")},
                           d["reward"]),
                  dropdown("prompt", "Prompt x", PROMPTS, d["prompt"])],
        outputs=dict(star=deps, ref=("prompt",), curve=curve_deps, here_x=deps, here_y=deps, length=deps,
                     earned=deps, earned1=curve_deps),
        compute=compute, figure=fig,
        traces=[(0, "y", ["ref"]), (1, "y", ["star"]), (2, "y", ["curve"]), (3, "x", ["here_x"]),
                (3, "y", ["here_y"])],
        layout={"title.text": "γ = {gamma}: π* writes {length:.2f} digits on average and earns E[r] = {earned:.3f} "
                              "(with γ = 1: {earned1:.3f})"},
        caption="π_ref with EOS (pretrained, at most 4 digits). π* maximises E[γ^(T−1) r] − β·KL(π ‖ π_ref) exactly; "
                "E[r] is the undiscounted reward it earns. Why the lower curve turns back up: at β = "
                f"{d['beta']:g} the mean length is lowest at γ = {turn['gamma']:g} ({turn['low']:.2f} digits) and "
                f"{turn['first']:.2f} at γ = {GAMMAS[0]:g}, because so small a γ shrinks every reward and leaves the "
                f"KL term in charge: π* moves back toward π_ref (KL {turn['kl_low']:.2f} → {turn['kl_first']:.2f} "
                f"nats) and its {turn['ref']:.2f} digits. At β = {DISCOUNT_BETAS[0]:g} the reward keeps the upper "
                f"hand and the length falls steadily, to {steady:.2f} at γ = {GAMMAS[0]:g}.",
    )


# -- a learned critic ---------------------------------------------------------------------------------------------
CRITIC_SIZES = (4, 8, 16, 32, 64, 128, 256, 512, 1024)
CRITIC_FEATURES = ("prompt", "last_token", "running_sum", "tabular")
CRITIC_SEEDS = 20
"""Seeds 0..CRITIC_SEEDS−1 of the sampled critics: the critic figure draws their mean, section 4.3 its spread."""
MC_KS = (1, 2, 4, 8, 9, 16, 32, 64)
"""Rollouts per state for the Monte Carlo values in the critic figure (9: VinePPO's configurations)."""
FEATURE_STYLE = {
    "prompt": dict(dash="dot", symbol="circle-open"),
    "last_token": dict(dash="dashdot", symbol="triangle-up"),
    "running_sum": dict(dash="dash", symbol="square"),
    "tabular": dict(dash="solid", symbol="circle"),
}


CRITIC_YTICKS = (0.05, 0.1, 0.2, 0.3)
"""The critic figure's error axis (log): labelled at these values, since its errors span less than one decade."""


def critic_figure(prompt: int = 2) -> go.Figure:
    """A learned critic's error against the exact V, and Monte Carlo values from K rollouts per state, both against
    the rollouts they consume: N sampled responses for a critic fitted to N responses, K × (states) for Monte Carlo,
    which needs K fresh completions at every state it gives a value for. A static figure (sum reward, the pretrained
    π_ref at τ = 1): section 4.3 reads its claims off this one setting."""
    prompt = check_prompt(prompt)
    sizes = np.array(CRITIC_SIZES, dtype=float)
    policy = reference_policy("pretrained")
    reward = "sum_to_target"
    mc_cost = np.array([critic.monte_carlo_rollouts(policy, prompt, k) for k in MC_KS], dtype=float)
    n_states = int(mc_cost[0] // MC_KS[0])
    fig = go.Figure()
    for f in CRITIC_FEATURES:
        c = critic.Critic(RESPONSE_LENGTH, f)  # weights counted for this prompt, as the text counts them
        n, reached = c.per_prompt, c.weights_reached(prompt)
        count = f"{n} weight{'s' * (n != 1)}" if reached == n else f"{reached} reachable of {n} weights"
        st = FEATURE_STYLE[f]
        err = critic.sampled_errors(policy, reward, prompt, f, CRITIC_SIZES, seeds=CRITIC_SEEDS)
        fig.add_scatter(x=sizes, y=err, mode="lines+markers", name=f"critic, {f.replace('_', ' ')} ({count})",
                        line=dict(color=EXACT_COLOUR, dash=st["dash"], width=2.5),
                        marker=dict(symbol=st["symbol"], size=8, color=EXACT_COLOUR),
                        hovertemplate="fitted to %{x} responses: %{y:.4f}<extra>" + f + "</extra>")
    mc = np.array([critic.monte_carlo_error(policy, reward, prompt, int(k)) for k in MC_KS])
    fig.add_scatter(x=mc_cost, y=mc, mode="lines+markers",
                    name=f"Monte Carlo, K rollouts at each of {n_states} states (0 weights)",
                    customdata=np.array(MC_KS), line=dict(color=SEQUENCE_COLOUR, width=3),
                    marker=dict(symbol="x", size=9, color=SEQUENCE_COLOUR),
                    hovertemplate="K = %{customdata}, %{x} rollouts: %{y:.4f}<extra>Monte Carlo</extra>")
    fig.update_xaxes(type="log", title_text="rollouts consumed")
    fig.update_yaxes(type="log", tickvals=list(CRITIC_YTICKS), ticktext=[f"{v:g}" for v in CRITIC_YTICKS],
                     title_text="RMS error against the exact V")
    base_layout(fig, "A learned critic against Monte Carlo values, per rollout consumed<br>"
                     f"Prompt {prompt}, sum reward, pretrained π_ref at τ = 1. Critics: least squares on one-hot "
                     f"features (weights: this prompt's), fitted to N sampled responses (N rollouts), mean of "
                     f"{CRITIC_SEEDS} seeds. Monte "
                     f"Carlo: K rollouts restarted at each of the {n_states} states before the last token "
                     f"(K × {n_states} rollouts), its error √(Var[r | s]/K) exact.", height=480)
    return fig


# -- γ and λ inside the advantage estimator -----------------------------------------------------------------------
GAE_GAMMAS = (0.0, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 1.0)
GAE_CRITICS = {"exact": "exact V", "last_token": "learned, last token (256 responses)",
               "prompt": "learned, one value per prompt (256 responses)"}


@reused
def gae_discount_explorer(prompt: int = 2) -> Explorer:
    """Bias² and variance of GAE(γ, λ) advantages against the exact (undiscounted) A(s_t, y_t), against γ, for a
    chosen λ and critic: γ inside the estimator as a variance knob, computed exactly (toy.gae_discount)."""
    prompt = check_prompt(prompt)
    policy = reference_policy()
    reward = "sum_to_target"

    @lru_cache(maxsize=8)
    def tables(which):
        if which == "exact":
            return gae_discount.exact_critic(policy, reward, prompt)
        ys = policy.sample(prompt, 256, rng=np.random.default_rng(0))
        c = critic.Critic(policy.length, which).fit_returns(
            prompt, ys, reward_table(reward, prompt, policy.length, policy.n_actions)[tuple(ys.T)])
        return bootstrap.critic_tables(c, prompt, policy.length)

    def compute(state):
        errs = [gae_discount.advantage_error(policy, reward, prompt, tables(state["critic"]), g, state["lam"])
                for g in GAE_GAMMAS]
        mse = np.array([e.mse for e in errs])
        best = int(np.argmin(mse))
        return dict(bias=[e.mean_bias_sq for e in errs], var=[e.mean_variance for e in errs], mse=mse,
                    best_gamma=[GAE_GAMMAS[best]], best_mse=[mse[best]], mse1=[mse[-1]])

    deps = ("critic", "lam")
    fig = _error_figure("γ", GAE_GAMMAS, ("bias² of Â_t", "variance of Â_t", "MSE = bias² + variance"),
                        ("bias²", "variance", "MSE"), "γ inside GAE (objective: γ = 1)",
                        "error of Â_t against A(s_t, y_t)",
                        "Error of Â_t against A(s_t, y_t), mean over positions (reward²)")
    return Explorer(
        title="γ and λ inside the advantage estimator: bias against variance",
        controls=[dropdown("critic", "Critic", GAE_CRITICS, "exact"),
                  slider("lam", "λ", LAMBDAS, 1.0, fmt="{:.2f}")],
        outputs=dict(bias=deps, var=deps, mse=deps, best_gamma=deps, best_mse=deps, mse1=deps),
        compute=compute, figure=fig,
        traces=[(0, "y", ["bias"]), (1, "y", ["var"]), (2, "y", ["mse"])],
        layout={"title.text": "λ = {lam:.2f}: MSE {mse1:.4f} at γ = 1, lowest {best_mse:.4f} at γ = {best_gamma:.2f}"},
        caption=f"Prompt {prompt}, pretrained π_ref at τ = 1, sum-to-target reward. GAE(γ, λ) advantages "
                "Â_t = Σ_l (γλ)^l δ_(t+l) with δ_t = r_t + γV̂(s_(t+1)) − V̂(s_t), against the undiscounted exact "
                "A(s_t, y_t); bias² and variance exact (enumerating completions), averaged over positions and the "
                "states and tokens π visits. Learned critics are fitted to one sample of 256 responses (seed 0).",
    )


def _error_figure(symbol: str, xs, names, hovers, x_title: str, y_title: str, caption: str) -> go.Figure:
    """The bias², variance and MSE figure against a knob (``symbol`` over ``xs``): three traces in that order, named
    ``names`` (hover labels ``hovers``), whose y the explorer fills; ``caption`` heads the numbers behind it."""
    x = list(xs)
    fig = go.Figure()
    styles = (dict(color=EXACT_COLOUR, dash="dash", width=2.5, symbol="triangle-up"),
              dict(color=SEQUENCE_COLOUR, dash="dot", width=2.5, symbol="square"),
              dict(color="#222", width=3, symbol="circle"))
    for name, hover, style in zip(names, hovers, styles, strict=True):
        add_curve(fig, x, name, f"{symbol} = %{{x}}: %{{y:.4f}}<extra>{hover}</extra>", **style, size=8)
    for trace in fig.data:
        trace.meta = {"table": {"caption": caption}}
    fig.update_xaxes(title_text=x_title)
    fig.update_yaxes(title_text=y_title, rangemode="tozero")
    base_layout(fig, "", height=460)
    return fig


# -- bootstrapping ------------------------------------------------------------------------------------------------
LAMBDAS = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 1.0)
BOOT_SIZES = (2, 8, 32, 128, 512, 2048)
AVERAGED = (1, 4, 16, 64, 256)


@lru_cache(maxsize=1024)
def boot_errors(features: str, n: int, reward: str = "sum_to_target", prompt: int = 2, seed: int = 0) -> np.ndarray:
    """Exact bias² and variance of the λ-return target at every λ in LAMBDAS (shape (len(LAMBDAS), 2)) under the
    pretrained π_ref, for a critic with ``features`` fitted to the returns of ``n`` responses sampled with numpy's
    default_rng(seed)."""
    policy = reference_policy()
    prompt = check_prompt(prompt)
    ys = policy.sample(prompt, int(n), rng=np.random.default_rng(seed))
    r = reward_table(reward, prompt, policy.length, policy.n_actions)[tuple(ys.T)]
    c = critic.Critic(policy.length, features).fit_returns(prompt, ys, r)
    out = bootstrap._target_errors(policy, reward, prompt, bootstrap.critic_tables(c, prompt, policy.length), LAMBDAS)
    out.setflags(write=False)  # cached: shared by every caller
    return out


def boot_rewarded(n: int, reward: str = "sum_to_target", prompt: int = 2, seed: int = 0) -> int:
    """How many of the ``n`` responses ``boot_errors`` fits its critic to earn a nonzero reward. With none, every
    critic fits 0 everywhere, so its errors are the same for every such n."""
    policy = reference_policy()
    prompt = check_prompt(prompt)
    ys = policy.sample(prompt, int(n), rng=np.random.default_rng(seed))
    return int(np.count_nonzero(reward_table(reward, prompt, policy.length, policy.n_actions)[tuple(ys.T)]))


@reused
def bootstrap_explorer(prompt: int = 2) -> Explorer:
    """Bias² and variance of λ-return targets (λ = 0: TD(0); λ = 1: Monte Carlo) for a critic fitted to N responses
    (one sample, seed 0), and the error of the average of n such targets, bias² + variance/n."""
    prompt = check_prompt(prompt)

    def errors(features, n, reward):
        return boot_errors(features, int(n), reward, prompt, 0)

    def compute(state):
        e = errors(state["features"], state["n"], state["reward"])
        var = e[:, 1] / state["averaged"]
        mse = e[:, 0] + var
        best = int(np.argmin(mse))
        return dict(bias=e[:, 0], var=var, mse=mse, best_lam=[LAMBDAS[best]], mse0=[mse[0]], mse1=[mse[-1]],
                    rewarded=[boot_rewarded(int(state["n"]), state["reward"], prompt, 0)])

    deps = ("features", "n", "reward", "averaged")
    fig = _error_figure("λ", LAMBDAS, ("bias²: the critic's error, passed on", "variance / n: noise left",
                                       "MSE = bias² + variance / n"), ("bias²", "variance / n", "MSE"),
                        "λ (0: TD(0) … 1: Monte Carlo)", "error of the averaged target",
                        "Error of the averaged target against V, mean over states (reward²)")
    return Explorer(
        title="Bootstrapping: a TD target's bias against a Monte Carlo return's variance",
        controls=[dropdown("features", "Critic", {f: f.replace("_", " ") for f in CRITIC_FEATURES}, "last_token"),
                  slider("n", "Responses the critic was fitted to", BOOT_SIZES, 32, fmt="{:,.0f}"),
                  slider("averaged", "Targets averaged per state n", AVERAGED, 1, fmt="{:.0f}"),
                  dropdown("reward", "Reward", REWARD_LABELS, "sum_to_target")],
        outputs=dict(bias=deps, var=deps, mse=deps, best_lam=deps, mse0=deps, mse1=deps,
                     rewarded=("n", "reward")),
        compute=compute, figure=fig,
        traces=[(0, "y", ["bias"]), (1, "y", ["var"]), (2, "y", ["mse"])],
        layout={"title.text": "{features} critic fitted to {n} responses ({rewarded:.0f} rewarded), {averaged} "
                              "target(s) averaged: MSE "
                              "{mse0:.4f} with TD(0), {mse1:.4f} with Monte Carlo; lowest at λ = {best_lam:.2f}"},
        caption=f"Prompt {prompt}, pretrained π_ref at τ = 1. The critic is fitted to one sample of N responses "
                "(seed 0): one run, whose comparisons the page repeats over 20 seeds (folded below). Bias and "
                "variance are exact (enumerating completions), averaged over positions and the states π visits; "
                "averaging n independent targets divides the variance by n. While none of the N responses is "
                "rewarded (the title counts them), every critic fits 0 everywhere, so its errors stay the same "
                "as N grows.",
    )


# -- off-policy staleness -----------------------------------------------------------------------------------------
STALENESS = (1, 2, 3, 4, 6, 8, 12, 16)
STEP_SIZES = (1.0, 2.0, 5.0, 10.0, 20.0, 50.0)
RUN_UPDATES = 30
EARLY_UPDATES = 4
"""The staleness explorer's title gives E[r] after this many updates: how fast the step size makes the run converge."""


@reused
def staleness_explorer(prompt: int = 2) -> Explorer:
    """Variance of importance weights when samples come from the policy k updates behind, averaged over a training
    run: the sequence weight, PPO's per-token ratios and GSPO's length-normalised ratio."""
    prompt = check_prompt(prompt)
    ref = reference_policy()

    @lru_cache(maxsize=16)
    def curves(lr):
        path = offpolicy.policy_path(ref, "sum_to_target", prompt, RUN_UPDATES, lr)
        out = np.array([np.mean([offpolicy.weight_variance(path[n], path[n - k], prompt)
                                 for n in range(k, RUN_UPDATES + 1)], axis=0) for k in STALENESS])
        return out, value(path[-1], "sum_to_target", prompt), value(path[EARLY_UPDATES], "sum_to_target", prompt)

    def compute(state):
        v, final, early = curves(state["lr"])
        i = STALENESS.index(state["k"])
        floor = 1e-12
        return dict(seq=np.maximum(v[:, 0], floor), tok=np.maximum(v[:, 1], floor), norm=np.maximum(v[:, 2], floor),
                    k_here=[state["k"]], y_here=[max(v[i, 0], floor)], ess=[100 / (1 + v[i, 0])], var=[v[i, 0]],
                    tok_here=[v[i, 1]], final=[final], early=[early])

    here = ("lr", "k")
    k = list(STALENESS)
    fig = go.Figure()
    for name, hover, style in (
            ("sequence weight π<sub>θ</sub>(y)/π<sub>old</sub>(y)", "sequence",
             dict(color=SEQUENCE_COLOUR, width=3, symbol="circle")),
            ("per-token ratio ρ_t (PPO)", "per token",
             dict(color=EXACT_COLOUR, dash="dash", width=2.5, symbol="square")),
            ("w^(1/L), length-normalised (GSPO)", "normalised",
             dict(color=GREY, dash="dot", width=2.5, symbol="triangle-up"))):
        add_curve(fig, k, name, f"k = %{{x}}: %{{y:.3g}}<extra>{hover}</extra>", **style, size=8)
    fig.add_scatter(x=[1.0], y=[1.0], mode="markers", name="selected staleness",
                    marker=dict(symbol="diamond", size=13, color="#222"), hoverinfo="skip")
    for trace in fig.data[:3]:
        trace.meta = {"table": {"caption": "Variance of the importance weight under π_old, averaged over the run "
                                           "(no unit)"}}
    fig.update_xaxes(type="log", title_text="staleness k (updates behind)", tickvals=k)
    fig.update_yaxes(type="log", title_text="variance under π<sub>old</sub>")
    base_layout(fig, "", height=440)
    return Explorer(
        title="Off-policy staleness: importance weights as the sampling policy falls behind",
        controls=[slider("lr", "Step size", STEP_SIZES, 5.0, fmt="{:g}"),
                  slider("k", "Staleness k", STALENESS, 4, fmt="{:.0f}")],
        outputs=dict(seq=("lr",), tok=("lr",), norm=("lr",), final=("lr",), early=("lr",), k_here=here,
                     y_here=here, ess=here, var=here, tok_here=here),
        compute=compute, figure=fig,
        traces=[(0, "y", ["seq"]), (1, "y", ["tok"]), (2, "y", ["norm"]), (3, "x", ["k_here"]),
                (3, "y", ["y_here"])],
        layout={"title.text": "k = {k}: Var[w] averaged over the run = {var:.3f}, so a batch with that variance is "
                              "worth {ess:.0f}% of its samples; per-token Var[ρ] = {tok_here:.4f}; E[r] after "
                              + f"{EARLY_UPDATES} updates {{early:.2f}}, after {RUN_UPDATES} {{final:.2f}}"},
        caption=f"Prompt {prompt}, sum reward: {RUN_UPDATES} exact gradient-ascent updates of a tabular policy from "
                "the pretrained π_ref; variances are exact and averaged over the run (a policy that has converged "
                "barely moves, so its later windows add little). GSPO's ratio is w^(1/L), the sequence weight's "
                "geometric mean per token.",
    )


# -- the trust region -----------------------------------------------------------------------------------------------
EPS_HIGH = (0.1, 0.2, 0.28, 0.4, 0.6)
P_GRID = tuple(float(p) for p in np.logspace(-3, np.log10(0.95), 16))
CLIP_PRIOR = (0.55, 0.25, 0.12, 0.05, 0.03)
CLIP_REWARDS = (1.0, 0.0, 0.0, 0.0, 1.0)
CLIP_EPOCHS, CLIP_LR = 8, 1.0


@reused
def clipping_explorer() -> Explorer:
    """How far one PPO update lets a token's probability move, by its old probability (PPO's ε = 0.2 against the
    selected ε_high), and entropy over sampled training on one state."""

    @lru_cache(maxsize=16)
    def reach(eps_high):
        return np.array([clipping.one_token_reach(p, 1.0, 0.2, eps_high) for p in P_GRID])

    @lru_cache(maxsize=16)
    def run(eps_high):
        return clipping.train(CLIP_PRIOR, CLIP_REWARDS, 0.2, eps_high, epochs=CLIP_EPOCHS, lr=CLIP_LR)

    def compute(state):
        p = np.array(P_GRID)
        up, ppo = reach(state["eps_high"]), reach(0.2)
        tr, tr_ppo = run(state["eps_high"]), run(0.2)
        return dict(gain=(up - p) / p, gain_ppo=(ppo - p) / p, step=up - p, step_ppo=ppo - p, ent=tr.entropy,
                    ent_ppo=tr_ppo.entropy,
                    rare=tr.probs[:, -1], rare_ppo=tr_ppo.probs[:, -1], rare_end=[tr.probs[-1, -1]],
                    ent_end=[tr.entropy[-1]], ent_end_ppo=[tr_ppo.entropy[-1]], abs01=[reach_at(0.01, state)])

    def reach_at(p, state):
        return clipping.one_token_reach(p, 1.0, 0.2, state["eps_high"]) - p

    updates = list(range(len(run(0.2).entropy)))
    fig = make_subplots(rows=2, cols=1, vertical_spacing=0.2,
                        subplot_titles=("One update: room to grow", "Training on one state"))
    growth, entropy = "p = %{x:.3g}: +%{y:.1%}<extra>", "update %{x}: %{y:.3f} nats<extra>"
    rare = "update %{x}: %{y:.4f}<extra>"
    for name, hover, style in (
            ("growth, PPO (ε = 0.2)", growth + "PPO", dict(color=GREY, dash="dash", width=2.5, symbol="square")),
            ("growth, selected ε_high", growth + "selected", dict(color=EXACT_COLOUR, width=3, symbol="circle"))):
        add_curve(fig, list(P_GRID), name, hover + "</extra>", **style, size=7, row=1, col=1)
    for name, hover, style in (
            ("entropy, PPO (ε = 0.2)", entropy + "PPO", dict(color=GREY, dash="dash", width=2.5)),
            ("entropy, selected ε_high", entropy + "selected", dict(color=EXACT_COLOUR, width=3)),
            ("P(rare rewarded token), PPO", rare + "rare token, PPO", dict(color=SEQUENCE_COLOUR, dash="dot", width=2)),
            ("P(rare rewarded), selected ε_high", rare + "rare token",
             dict(color=SEQUENCE_COLOUR, dash="dashdot", width=3))):
        add_curve(fig, updates, name, hover + "</extra>", **style, row=2, col=1)
    for name, dash in (("absolute growth, PPO (ε = 0.2)", "dash"), ("absolute growth, selected ε_high", "solid")):
        # in the table only (the axis is relative): p_new − p_old, the unit "generous for a common token" speaks in
        fig.add_scatter(x=list(P_GRID), y=list(P_GRID), mode="lines", name=name, visible="legendonly",
                        showlegend=False, line=dict(color=GREY, dash=dash), row=1, col=1,
                        hovertemplate="p = %{x:.3g}: +%{y:.2g}<extra></extra>")
    rows = ("relative growth (p_new − p_old) / p_old, PPO (ε = 0.2)", "relative growth, ε_high = {eps_high}",
            "absolute growth p_new − p_old, PPO (ε = 0.2)", "absolute growth, ε_high = {eps_high}")
    for trace, name in zip((*fig.data[:2], *fig.data[6:]), rows, strict=True):
        trace.meta = {"table": {"caption": "One update: growth of the token's probability, relative and absolute",
                                "points": [0.001, 0.003, 0.01, 0.03, 0.1, 0.3, 0.95], "name": name}}
    for trace in fig.data[2:4]:
        trace.meta = {"table": {"caption": "Training on one state: entropy (nats)"}}
    for trace in fig.data[4:6]:
        trace.meta = {"table": {"caption": "Training on one state: probability of the rare rewarded token"}}
    for trace, name in zip(fig.data[3:6:2], ("entropy", "P(rare rewarded)"), strict=True):
        trace.meta = {"table": {**trace.meta["table"], "name": name + ", ε_high = {eps_high}"}}  # the value, named
    fig.update_xaxes(type="log", title_text="probability before the update", row=1, col=1)
    fig.update_xaxes(title_text="update", row=2, col=1)
    fig.update_yaxes(title_text="(p_new − p_old) / p_old", tickformat=".0%", rangemode="tozero", row=1, col=1)
    fig.update_yaxes(title_text="nats / probability", rangemode="tozero", row=2, col=1)
    base_layout(fig, "", height=720)
    return Explorer(
        title="The trust region: how PPO's clip and DAPO's clip-higher let probabilities move",
        controls=[slider("eps_high", "Upper clip ε_high", EPS_HIGH, 0.28, fmt="{:g}")],
        outputs={name: ("eps_high",) for name in ("gain", "gain_ppo", "step", "step_ppo", "ent", "ent_ppo", "rare",
                                                  "rare_ppo", "rare_end", "ent_end", "ent_end_ppo", "abs01")},
        compute=compute, figure=fig,
        traces=[(0, "y", ["gain_ppo"]), (1, "y", ["gain"]), (2, "y", ["ent_ppo"]), (3, "y", ["ent"]),
                (4, "y", ["rare_ppo"]), (5, "y", ["rare"]), (6, "y", ["step_ppo"]), (7, "y", ["step"])],
        layout={"title.text": "ε_high = {eps_high}: a token at p = 0.01 can gain {abs01:.4f}; entropy after "
                              "30 updates {ent_end:.3f} nats (PPO: {ent_end_ppo:.3f})"},
        caption="Top: one PPO update on a batch holding only that token, with advantage +1 (gradient steps until "
                f"the clip stops it or their learning rates add up to {clipping.REACH_BUDGET:g}, the update's step "
                "budget). Bottom: five tokens with π_old = (0.55, 0.25, 0.12, 0.05, 0.03), "
                "tokens 1 and 5 rewarded; 16 samples per update, group-normalised advantages, 8 epochs; mean of 20 "
                "seeds.",
    )


EXPLORERS = {
    "discount": discount_explorer,
    "gae_discount": gae_discount_explorer,
    "bootstrapping": bootstrap_explorer,
    "staleness": staleness_explorer,
    "clipping": clipping_explorer,
}
"""Section 4.3's explorers by name (merged into ``toy.explorers.ALL``)."""
