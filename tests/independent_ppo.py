"""An independent PPO (learned critic + GAE) and VinePPO for the toy, written for the tests from the conventions
toy's docstrings state (toy/train.py, toy/ppo.py), not from its code: one run at a time, one prompt at a time, one
sampled response and token at a time, with π_ref's next-token probabilities from tests/brute.py's own formula.

The conventions (section 4.5's runs): a tabular policy (one softmax per prompt and prefix) starts at π_ref; each step
samples n responses per prompt by inverse CDF over the responses in lexicographic order (the first token most
significant), with uniforms ``rng.random((P, n))`` from numpy's default_rng(seed), then, for VinePPO, its rollout
uniforms ``rng.random((P, n + 1, L, K_vine))``. Per-token rewards are −β·log(π(y_t|s_t)/π_ref(y_t|s_t)), plus r(x, y)
on the last token. PPO: GAE(λ = 0.95, γ = 1) of a critic with one value per (prompt, position, previous token, digit
sum mod 5), starting at 0, moved half-way to the mean of its new targets A_t + V̂(s_t) at every state it saw; the run's
token advantages whitened with their population std (+ 1e-8). VinePPO: V̂(s_t) the mean penalised return of K
completions of y_<t (at t = 0 one set per prompt, shared by the group), V̂(s_L) = 0, A_t = r_t + V̂(s_t+1) − V̂(s_t).
Update: logits += lr · (1/n) Σ_i Σ_t A_i,t ∇ log π(y_i,t | s_i,t). Expected reward and KL are exact (all 625
responses), averaged over the prompts.
"""

from __future__ import annotations

import itertools

import numpy as np

from tests import brute

K, L = 5, 4
PROMPTS = (0, 1, 2, 3, 4)
RESPONSES = list(itertools.product(range(K), repeat=L))  # lexicographic: the first token most significant


def sum_reward(prompt: int, y) -> float:
    return float(sum(y) % 5 == prompt % 5)


IDS = np.arange(K**L)
PREFIX = [IDS // K ** (L - t) for t in range(L)]  # each response's prefix y_<t, as an index into depth t's rows
TOKEN = [(IDS // K ** (L - 1 - t)) % K for t in range(L)]


def row(pre) -> int:
    """A prefix's row in its depth's table (lexicographic)."""
    out = 0
    for a in pre:
        out = out * K + a
    return out


class Run:
    def __init__(self, method: str, beta: float, seed: int, n: int = 4, lr: float = 4.0, vine_k: int = 9):
        self.method, self.beta, self.n, self.lr, self.vine_k = method, beta, n, lr, vine_k
        self.rng = np.random.default_rng(seed)
        # per prompt and depth t, one row of logits per prefix: π_ref's log-probabilities from brute's formula
        self.ref = {x: [np.log(np.array([brute.preset_probs("pretrained", 1.0, x, pre)
                                         for pre in itertools.product(range(K), repeat=t)])) for t in range(L)]
                    for x in PROMPTS}
        self.logits = {x: [z.copy() for z in self.ref[x]] for x in PROMPTS}
        self.critic: dict[tuple, float] = {}
        self.R = {x: np.array([sum_reward(x, y) for y in RESPONSES]) for x in PROMPTS}
        self.ref_lp = {x: sum(self.ref[x][t][PREFIX[t], TOKEN[t]] for t in range(L)) for x in PROMPTS}

    def cond(self, x, pre) -> np.ndarray:
        z = self.logits[x][len(pre)][row(pre)]
        e = np.exp(z - z.max())
        return e / e.sum()

    def log_cond(self, x, pre) -> np.ndarray:
        z = self.logits[x][len(pre)][row(pre)]
        return z - z.max() - np.log(np.exp(z - z.max()).sum())

    def ref_cond(self, x, pre) -> np.ndarray:
        return self.ref[x][len(pre)][row(pre)]

    def response_logp(self, x) -> np.ndarray:
        total = np.zeros(K**L)
        for t in range(L):
            z = self.logits[x][t]
            ls = z - z.max(axis=1, keepdims=True)
            ls = ls - np.log(np.exp(ls).sum(axis=1, keepdims=True))
            total += ls[PREFIX[t], TOKEN[t]]
        return total

    def ref_logp(self, x) -> np.ndarray:
        return self.ref_lp[x]

    def metrics(self) -> tuple[float, float]:
        rs, kls = [], []
        for x in PROMPTS:
            lp, lr = self.response_logp(x), self.ref_logp(x)
            p = np.exp(lp)
            rs.append(float(p @ self.R[x]))
            kls.append(float(p @ (lp - lr)))
        return float(np.mean(rs)), max(float(np.mean(kls)), 0.0)

    @staticmethod
    def draw(weights: np.ndarray, u: float) -> int:
        cdf = np.cumsum(weights)
        return min(int(np.sum(cdf < u * cdf[-1])), len(weights) - 1)

    def cell(self, x, pre) -> tuple:
        return (x, 0) if not pre else (x, len(pre), pre[-1], sum(pre) % 5)

    def step(self) -> None:
        P, n = len(PROMPTS), self.n
        u = self.rng.random((P, n))
        u_vine = self.rng.random((P, n + 1, L, self.vine_k)) if self.method == "vineppo" else None
        batch = []  # (x, y, per-token rewards, per-token log-ratios)
        logp = {x: self.response_logp(x) for x in PROMPTS}
        refp = {x: self.ref_logp(x) for x in PROMPTS}
        for i, x in enumerate(PROMPTS):
            p = np.exp(logp[x])
            for j in range(n):
                y = RESPONSES[self.draw(p, u[i, j])]
                ratio = np.array([self.log_cond(x, y[:t])[y[t]] - self.ref_cond(x, y[:t])[y[t]] for t in range(L)])
                rewards = -self.beta * ratio
                rewards[-1] += sum_reward(x, y)
                batch.append((i, j, x, y, rewards, ratio))
        if self.method == "ppo":
            adv = self.ppo_advantages(batch)
        else:
            adv = self.vine_advantages(batch, logp, refp, u_vine)
        grads = {x: [np.zeros_like(z) for z in self.logits[x]] for x in PROMPTS}
        for (_i, _j, x, y, _r, _ratio), a in zip(batch, adv, strict=True):
            for t in range(L):
                pre = y[:t]
                g = -self.cond(x, pre)
                g[y[t]] += 1.0
                grads[x][t][row(pre)] += a[t] / n * g
        for x in PROMPTS:
            for t in range(L):
                self.logits[x][t] = self.logits[x][t] + self.lr * grads[x][t]

    def ppo_advantages(self, batch) -> list[np.ndarray]:
        out, targets = [], {}
        for _i, _j, x, y, rewards, _ratio in batch:
            v = np.array([self.critic.get(self.cell(x, y[:t]), 0.0) for t in range(L)])
            a, running = np.zeros(L), 0.0
            for t in reversed(range(L)):
                delta = rewards[t] + (v[t + 1] if t + 1 < L else 0.0) - v[t]
                running = delta + 0.95 * running
                a[t] = running
            for t in range(L):
                targets.setdefault(self.cell(x, y[:t]), []).append(a[t] + v[t])
            out.append(a)
        for c, ts in targets.items():
            w = self.critic.get(c, 0.0)
            self.critic[c] = w + 0.5 * (float(np.mean(ts)) - w)
        flat = np.concatenate(out)
        mean, sd = flat.mean(), flat.std()
        return [(a - mean) / (sd + 1e-8) for a in out]

    def vine_advantages(self, batch, logp, refp, u_vine) -> list[np.ndarray]:
        out = []
        for i, j, x, y, rewards, ratio in batch:
            full_ratio = logp[x] - refp[x]
            p = np.exp(logp[x])
            v = np.zeros(L + 1)
            for t in range(L):
                size = K ** (L - t)
                first = row(y[:t]) * size  # the prefix's block of completions
                block = p[first:first + size]
                uu = u_vine[i, n_shared(self.n) if t == 0 else j, t]
                done = ratio[:t].sum()
                gs = []
                for k in range(self.vine_k):
                    leaf = first + self.draw(block, uu[k])
                    gs.append(self.R[x][leaf] - self.beta * (full_ratio[leaf] - done))
                v[t] = float(np.mean(gs))
            out.append(rewards + v[1:] - v[:-1])
        return out

    def train(self, steps: int = 40) -> tuple[np.ndarray, np.ndarray]:
        rs, kls = [], []
        for s in range(steps + 1):
            r, kl = self.metrics()
            rs.append(r)
            kls.append(kl)
            if s < steps:
                self.step()
        return np.array(rs), np.array(kls)


def n_shared(n: int) -> int:
    """The index of the group's shared rollout uniforms for the prompt's own state (after the n responses')."""
    return n
