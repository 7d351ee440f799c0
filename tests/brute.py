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


def pretrained_logit(t: int, prev: int, a: int, eos: bool) -> float:
    """The 'pretrained' preset written out again from its description."""
    if a == EOS:
        return -3.0 + 1.0 * t
    return (1.5 + 0.25 * t) * (a == (prev + 1) % 5) + 0.8 * (a == prev) - 0.3 * a


def next_probs(preset: str, temperature: float, t: int, prev: int, eos: bool = False) -> list[float]:
    """π_τ(· | position t, previous token) from the preset's formula: softmax(log_softmax(z) / τ)."""
    k = 6 if eos else 5
    if eos and prev == EOS:
        return [0.0] * 5 + [1.0]
    scale = {"pretrained": 1.0, "uniform": 0.0, "tuned": 3.0}[preset]
    z = [scale * pretrained_logit(t, prev, a, eos) for a in range(k)]
    m = max(z)
    log_norm = m + math.log(sum(math.exp(v - m) for v in z))
    w = [math.exp((v - log_norm) / temperature) for v in z]
    s = sum(w)
    return [v / s for v in w]


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


def reference_response_probs(preset, temperature, length, prompt, eos=False):
    """π_ref(y | x) for every padded response, as a dict, from the preset's formula (``next_probs``)."""
    k = 6 if eos else 5
    out = {}
    for y in itertools.product(range(k), repeat=length):
        p, prev = 1.0, prompt
        for t, tok in enumerate(y):
            p *= next_probs(preset, temperature, t, prev, eos)[tok]
            prev = tok
        out[y] = p
    return out


def best_restricted(preset, temperature, length, prompt, reward, eos=False):
    """The β → 0 limit of π* ∝ π_ref·exp(r/β): π_ref restricted to the responses of the highest reward."""
    ref = reference_response_probs(preset, temperature, length, prompt, eos)
    r = {y: reward(prompt, strip(y)) for y, p in ref.items() if p > 0}
    best = max(r.values())
    mass = sum(p for y, p in ref.items() if y in r and r[y] == best)
    return {y: (p / mass if y in r and r[y] == best else 0.0) for y, p in ref.items()}
