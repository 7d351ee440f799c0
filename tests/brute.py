"""Independent brute-force computations for the tests: plain Python loops over every response.

Values and advantages here never call toy.exact: they come from forward enumeration (sum over all completions
of a prefix of their probability times their reward), not from the package's backward induction. The finite-
difference gradient at the end takes J = toy.value as given, to check gradient formulas against it.
"""

from __future__ import annotations

import itertools
import math

import numpy as np

import toy

EOS = 5


PRESET_WEIGHTS = {
    "pretrained": dict(count=1.5, repeat=0.8, small=0.3, end=1.0),
    "knows_task": dict(count=1.5, repeat=0.8, small=0.3, end=1.0, know=2.0),
    "confidently_wrong": dict(miss=5.0, end=1.0),
    "terse": dict(repeat=0.8, small=1.5, stop=1.5),
    "uniform": dict(),
}
"""The presets' habit weights, copied from their descriptions in toy/policy.py (the formula below is our own)."""


def habit_logit(w: dict, prompt: int, prefix: tuple, a: int) -> float:
    """One next-token logit of a habit policy, written out from HabitPolicy's docstring, one token at a time."""
    t = len(prefix)
    if a == EOS:
        return w.get("stop", 0.0) + w.get("end", 0.0) * (t - 3)
    prev = prefix[-1] if prefix else prompt
    total = sum(tok for tok in prefix if tok != EOS)
    z = 0.0
    if a == (prev + 1) % 5:
        z += w.get("count", 0.0) * (1 + t / 6)
    if a == prev:
        z += w.get("repeat", 0.0)
    z -= w.get("small", 0.0) * a
    if (total + a) % 5 == prompt:
        z += w.get("know", 0.0)
    if (total + a) % 5 == (prompt + 1) % 5:
        z += w.get("miss", 0.0)
    return z


def preset_probs(preset: str, temperature: float, prompt: int, prefix: tuple, eos: bool = False,
                 **shifts) -> list[float]:
    """π_τ(· | x, prefix) for a preset (its weights shifted by ``shifts``): softmax(z / τ); after EOS only EOS."""
    k = 6 if eos else 5
    if eos and EOS in prefix:
        return [0.0] * 5 + [1.0]
    w = dict(PRESET_WEIGHTS[preset])
    for name, v in shifts.items():
        w[name] = w.get(name, 0.0) + v
    z = [habit_logit(w, prompt, tuple(prefix), a) / temperature for a in range(k)]
    m = max(z)
    e = [math.exp(v - m) for v in z]
    return [v / sum(e) for v in e]


def next_probs(preset: str, temperature: float, t: int, prev: int, eos: bool = False) -> list[float]:
    """π_τ(· | position t, previous token) for a preset whose probabilities depend only on t and the previous token
    (not 'knows_task' or 'confidently_wrong', which also read the running sum and the target)."""
    assert preset in ("pretrained", "terse", "uniform")
    prefix = (0,) * (t - 1) + (prev,) if t else ()
    return preset_probs(preset, temperature, prev if t == 0 else 0, prefix, eos)


def strip(response):
    out = []
    for tok in response:
        if tok == EOS:
            break
        out.append(tok)
    return tuple(out)


def completions(policy, prompt, prefix):
    """Every (padded) response that starts with ``prefix``, with its probability under ``policy`` given prefix."""
    L, K = policy.length, policy.n_actions
    for rest in itertools.product(range(K), repeat=L - len(prefix)):
        y = tuple(prefix) + rest
        p = 1.0
        for t in range(len(prefix), L):
            if p == 0.0:  # e.g. a digit written after EOS: no state to ask the policy about
                break
            p *= float(policy.next_token_probs(prompt, y[:t])[y[t]])
        yield y, p


def value(policy, reward, prompt, prefix=()):
    """V(s) = Σ over completions y of π(y | s) r(x, y)."""
    return sum(p * reward(prompt, strip(y)) for y, p in completions(policy, prompt, prefix))


def token_advantages(policy, reward, prompt, y):
    """A_t = V(y_≤t) − V(y_<t), each value by forward enumeration."""
    vals = [value(policy, reward, prompt, y[:t]) for t in range(len(y) + 1)]
    return [vals[t + 1] - vals[t] for t in range(len(y))]


def finite_difference_gradient(tabular, reward, prompt, h=1e-6):
    """∂J/∂z for every logit of ``prompt`` in a TabularPolicy, J = V(x), by central differences.

    Returns one array per depth t, of shape (K,)*(t+1), like the tabular logits of one prompt.
    """
    i = toy.PROMPTS.index(prompt)
    grads = []
    for t, z in enumerate(tabular.logits):
        g = np.zeros(z.shape[1:])
        for idx in itertools.product(*(range(n) for n in z.shape[1:])):
            up = [w.copy() for w in tabular.logits]
            dn = [w.copy() for w in tabular.logits]
            up[t][(i,) + idx] += h
            dn[t][(i,) + idx] -= h
            g[idx] = (toy.value(toy.TabularPolicy(up), reward, prompt)
                      - toy.value(toy.TabularPolicy(dn), reward, prompt)) / (2 * h)
        grads.append(g)
    return grads


def advantage_gap(method: str, n: int, p: float, eps: float = 1e-6) -> float:
    """E[A_1 | r_1 = 1] − E[A_1 | r_1 = 0] for a 0/1 reward, by listing all 2^n reward patterns of a group."""
    num = {1: 0.0, 0: 0.0}
    den = {1: 0.0, 0: 0.0}
    for pattern in itertools.product((0, 1), repeat=n):
        prob = math.prod(p if r else 1 - p for r in pattern)
        mean = sum(pattern) / n
        if method == "rloo":
            a = pattern[0] - (sum(pattern) - pattern[0]) / (n - 1)
        elif method in ("reinforce", "dr_grpo"):
            a = pattern[0] - mean
        elif method == "grpo":
            sd = math.sqrt(sum((r - mean) ** 2 for r in pattern) / (n - 1))
            a = (pattern[0] - mean) / (sd + eps)
        else:
            raise ValueError(method)
        num[pattern[0]] += prob * a
        den[pattern[0]] += prob
    return num[1] / den[1] - num[0] / den[0]


def gae_bias_variance(policy, reward, prompt, critic_value, gamma, lam):
    """Bias² and variance of GAE(γ, λ) per position, by loops: for every prefix y_≤t, the completions' Â_t.

    Â_t = Σ_{u ≥ t} (γλ)^(u−t) δ_u with δ_u = r_u + γ V̂(y_≤u) − V̂(y_<u) (V̂ of a complete response is 0, r_u is
    the reward at the last token only); the target is the undiscounted A_t = V(y_≤t) − V(y_<t).
    ``critic_value(prefix)`` gives V̂ at a non-terminal prefix.
    """
    L, K = policy.length, policy.n_actions

    def a_hat(y, t):
        total = 0.0
        for u in range(t, L):
            r_u = reward(prompt, strip(y)) if u == L - 1 else 0.0
            next_v = critic_value(y[: u + 1]) if u + 1 < L else 0.0
            total += (gamma * lam) ** (u - t) * (r_u + gamma * next_v - critic_value(y[:u]))
        return total

    bias_sq, variance = [0.0] * L, [0.0] * L
    for t in range(L):
        for prefix in itertools.product(range(K), repeat=t + 1):
            p_prefix = 1.0
            for u in range(t + 1):
                p_prefix *= float(policy.next_token_probs(prompt, prefix[:u])[prefix[u]])
            target = value(policy, reward, prompt, prefix) - value(policy, reward, prompt, prefix[:t])
            pairs = [(p, a_hat(y, t)) for y, p in completions(policy, prompt, prefix)]
            mean = sum(p * a for p, a in pairs)
            var = sum(p * (a - mean) ** 2 for p, a in pairs)
            bias_sq[t] += p_prefix * (mean - target) ** 2
            variance[t] += p_prefix * var
    return np.array(bias_sq), np.array(variance)


def reference_response_probs(preset, temperature, length, prompt, eos=False):
    """π_ref(y | x) for every padded response, as a dict, from the preset's formula (``preset_probs``)."""
    k = 6 if eos else 5
    out = {}
    for y in itertools.product(range(k), repeat=length):
        p = 1.0
        for t, tok in enumerate(y):
            p *= preset_probs(preset, temperature, prompt, y[:t], eos)[tok]
        out[y] = p
    return out


def best_restricted(preset, temperature, length, prompt, reward, eos=False):
    """The β → 0 limit of π* ∝ π_ref·exp(r/β): π_ref restricted to the responses of the highest reward."""
    ref = reference_response_probs(preset, temperature, length, prompt, eos)
    r = {y: reward(prompt, strip(y)) for y, p in ref.items() if p > 0}
    best = max(r.values())
    mass = sum(p for y, p in ref.items() if y in r and r[y] == best)
    return {y: (p / mass if y in r and r[y] == best else 0.0) for y, p in ref.items()}
