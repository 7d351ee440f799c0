"""The toy language model: an autoregressive policy over the digits 0-4.

A state is s_t = (x, y_<t): the prompt x and the tokens generated so far (the *prefix*). A policy gives
π(a | s_t) for every next token a. Everything exact in this package needs only one method,
``prefix_probs(prompt, depth)``: the next-token distribution after *every* prefix of one depth at once,
an array of shape (n_actions,)*depth + (n_actions,).

With ``eos=True`` the action set gains an end-of-sequence token ``EOS`` (id 5). An episode then ends at EOS or
at the length limit. Internally a finished response is padded with EOS to the full length: after EOS the
policy puts probability 1 on EOS again, so padding changes no probability and no value.
"""

from __future__ import annotations

import numpy as np

from . import checks
from .vocab import EOS, PROMPTS, RESPONSE_LENGTH, VOCAB_SIZE

MAX_LENGTH = 10
"""Longest response the enumerating code accepts (5**10 ≈ 10 million responses)."""


def softmax(logits: np.ndarray, axis: int = -1) -> np.ndarray:
    """exp(z) / Σ exp(z) along ``axis``, stable for any finite logits."""
    logits = checks.array("logits", logits, min_ndim=1)
    z = logits - logits.max(axis=axis, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=axis, keepdims=True)


def log_softmax(logits: np.ndarray, axis: int = -1) -> np.ndarray:
    """log softmax(z) along ``axis``."""
    logits = checks.array("logits", logits, min_ndim=1)
    z = logits - logits.max(axis=axis, keepdims=True)
    return z - np.log(np.exp(z).sum(axis=axis, keepdims=True))


def check_policy(name: str, value, responses: bool = False) -> Policy:
    """A ``toy.Policy``, or ValueError naming the argument ``name``; with ``responses``, also one whose every
    response can be enumerated (``checks.responses_of``)."""
    if not isinstance(value, Policy):
        raise checks.fail(name, "a toy Policy (for example toy.reference_policy())", value)
    if responses:
        checks.responses_of(value, name=name)
    return value


def check_prompt(prompt) -> int:
    """The prompt as an int, or ValueError naming it and ``PROMPTS``."""
    return checks.prompt("prompt", prompt)


def strip_eos(response) -> tuple[int, ...]:
    """The tokens before the first EOS: what a reward reads."""
    return _strip_eos(checks.tokens("response", response, VOCAB_SIZE + 1))


def _strip_eos(response) -> tuple[int, ...]:
    out = []
    for tok in response:
        if tok == EOS:
            break
        out.append(int(tok))
    return tuple(out)


class Policy:
    """Base class: an autoregressive policy over ``n_actions`` tokens and responses of ``length`` tokens.

    Subclasses implement ``_prefix_probs``; the base class adds EOS absorption, input checks, response
    probabilities and sampling.
    """

    length: int = RESPONSE_LENGTH
    eos: bool = False

    @property
    def n_actions(self) -> int:
        """Size of the action set: VOCAB_SIZE, plus one for EOS."""
        return VOCAB_SIZE + int(self.eos)

    def _prefix_probs(self, prompt: int, depth: int) -> np.ndarray:
        raise NotImplementedError

    def _next_rows(self, prompt: int, prefixes: np.ndarray) -> np.ndarray:
        """π(· | x, prefix) for each row of ``prefixes`` (an int array (n, t)), before EOS absorption: shape
        (n, n_actions). Subclasses compute it from the prefixes alone; this default reads the full table of depth t
        (``prefix_probs``' size guard)."""
        return np.broadcast_to(self.prefix_probs(prompt, prefixes.shape[1])[tuple(prefixes.T)],
                               (len(prefixes), self.n_actions))

    def _rows(self, prompt: int, prefixes: np.ndarray) -> np.ndarray:
        """π(· | x, prefix) for each row of ``prefixes`` (n, t), with EOS absorption: shape (n, n_actions).
        Memory O(n · n_actions), whatever t."""
        rows = self._next_rows(prompt, prefixes)
        if self.eos and prefixes.shape[1] > 0:
            ended = prefixes[:, -1] == EOS
            if ended.any():
                rows = np.array(rows)  # writable copy
                rows[ended] = 0.0
                rows[ended, EOS] = 1.0
        return rows

    def prefix_probs(self, prompt, depth: int) -> np.ndarray:
        """π(· | x, y_<t) for every prefix y_<t of length ``depth``.

        Returns an array of shape (n_actions,)*depth + (n_actions,); entry [y_0, ..., y_{t-1}, a] is
        π(a | x, y_0 ... y_{t-1}). Rows sum to one. After an EOS the next token is EOS with probability one.
        Refused beyond ``checks.MAX_ENUMERATION`` entries (n_actions**(depth+1)), by the guard every enumerating
        entry point shares (``checks.responses_of``).
        """
        prompt = check_prompt(prompt)
        depth = checks.positive_int("depth", depth, low=0, high=self.length - 1)
        checks.responses_of(self, f"the next-token table after every prefix of depth {depth}", length=depth + 1)
        probs = self._prefix_probs(prompt, depth)
        if self.eos and depth > 0:
            probs = np.array(probs)  # writable copy
            probs[..., EOS, :] = 0.0
            probs[..., EOS, EOS] = 1.0
        return probs

    def next_token_probs(self, prompt, prefix=()) -> np.ndarray:
        """π(· | x, prefix): shape (n_actions,). Computed from the prefix alone (no table of every prefix), so its
        time and memory do not grow with the prefix's length."""
        prefix = self._check_prefix(prefix)
        prompt = check_prompt(prompt)
        return np.array(self._rows(prompt, np.array(prefix, dtype=int).reshape(1, len(prefix)))[0])

    def _check_prefix(self, prefix) -> tuple[int, ...]:
        """A prefix that still has a next token: at most length − 1 tokens, no digit after an EOS."""
        return checks.prefix("prefix", prefix, self.length, self.eos, strict=True)

    def check_response(self, response) -> tuple[int, ...]:
        """A complete response, padded with EOS to ``length`` tokens; ValueError if it is not one.

        Without EOS a response has exactly ``length`` tokens. With EOS it may be shorter if its last token is
        EOS; tokens after an EOS must be EOS.
        """
        response = checks.tokens("response", response, self.n_actions)
        n = len(response)
        if self.eos and EOS in response:
            first = response.index(EOS)
            if any(tok != EOS for tok in response[first:]) or n > self.length:
                raise ValueError(
                    f"response {response!r} is not a finished episode: after EOS ({EOS}) only EOS may follow, "
                    f"and it has at most {self.length} tokens"
                )
            return response + (EOS,) * (self.length - n)
        if n != self.length:
            ends = f", or fewer ending with EOS ({EOS})" if self.eos else ""
            raise ValueError(f"response {response!r} has {n} tokens; allowed: exactly {self.length}{ends}")
        return response

    def response_probs(self, prompt) -> np.ndarray:
        """π(y | x) for every (padded) response y: shape (n_actions,)*length, summing to one.

        π(y | x) = Π_t π(y_t | x, y_<t), built one depth at a time.
        """
        prompt = check_prompt(prompt)
        checks.responses_of(self)
        p = np.ones(())
        for t in range(self.length):
            p = p[..., None] * self.prefix_probs(prompt, t)
        return p

    def length_distribution(self, prompt) -> np.ndarray:
        """P(the response has n digit tokens) for n = 0..length: shape (length+1,).

        With EOS, n < length means the episode ended at EOS and n = length that it hit the length limit.
        """
        P = self.response_probs(prompt)
        n_digits = sum(np.indices(P.shape)[t] != EOS for t in range(self.length)) if self.eos else None
        if n_digits is None:
            return np.eye(self.length + 1)[self.length]
        return np.bincount(n_digits.ravel(), weights=P.ravel(), minlength=self.length + 1)

    def prob(self, prompt, response) -> float:
        """π(y | x) = Π_t π(y_t | s_t) for one response."""
        response = self.check_response(response)
        prompt = check_prompt(prompt)
        row = np.array(response, dtype=int)[None, :]
        p = 1.0
        for t in range(self.length):
            p *= float(self._rows(prompt, row[:, :t])[0, response[t]])
        return p

    def sample(self, prompt, n: int, rng=None) -> np.ndarray:
        """n responses y ~ π(· | x): an int array of shape (n, length), EOS-padded when EOS is on.

        ``rng`` is a numpy Generator or a seed (default seed 0), so results are reproducible.
        """
        prompt = check_prompt(prompt)
        n = checks.positive_int("n", n, low=1, high=checks.MAX_ENUMERATION // self.length)
        rng = checks.rng("rng", rng)
        ys = np.zeros((n, self.length), dtype=int)
        for t in range(self.length):
            probs = self._rows(prompt, ys[:, :t])
            u = rng.random((n, 1))
            ys[:, t] = np.minimum((probs.cumsum(axis=1) < u).sum(axis=1), self.n_actions - 1)
        return ys


class BigramPolicy(Policy):
    """π(a | s_t) depends only on the position t and the previous token (the prompt digit when t = 0).

    ``logits`` has shape (length, n_actions, n_actions): logits[t, prev, a]. Temperature τ rescales the
    log-probabilities: π_τ(a|s) ∝ π(a|s)^(1/τ).
    """

    def __init__(self, logits, temperature: float = 1.0, eos: bool = False, name: str = "custom"):
        logits = checks.array("logits", logits)
        self.eos = checks.flag("eos", eos)
        k = self.n_actions
        if logits.ndim != 3 or logits.shape[1:] != (k, k) or not 1 <= logits.shape[0] <= MAX_LENGTH:
            raise ValueError(
                f"logits must have shape (length, {k}, {k}) with 1 <= length <= {MAX_LENGTH}, got {logits.shape}"
            )
        self.length = logits.shape[0]
        self.temperature = checks.positive_finite("temperature", temperature)
        self.name = checks.text("name", name)
        self.logits = logits
        self.table = softmax(log_softmax(logits) / self.temperature)  # (length, prev, a)

    def _prefix_probs(self, prompt: int, depth: int) -> np.ndarray:
        k = self.n_actions
        if depth == 0:
            return self.table[0, prompt]
        row = self.table[depth].reshape((1,) * (depth - 1) + (k, k))
        return np.broadcast_to(row, (k,) * depth + (k,))

    def _next_rows(self, prompt: int, prefixes: np.ndarray) -> np.ndarray:
        depth = prefixes.shape[1]
        prev = prefixes[:, -1] if depth else np.full(len(prefixes), prompt)
        return self.table[depth, prev]

    def __repr__(self) -> str:
        eos = ", eos=True" if self.eos else ""
        return f"BigramPolicy({self.name!r}, temperature={self.temperature:g}, length={self.length}{eos})"


class TabularPolicy(Policy):
    """One free next-token distribution per (prompt, prefix): the most general policy on the toy.

    ``logits[t]`` has shape (len(PROMPTS),) + (n_actions,)*t + (n_actions,). Used by training loops, where
    every parameter is one logit of one state.
    """

    def __init__(self, logits: list, eos: bool = False):
        self.eos = checks.flag("eos", eos)
        if isinstance(logits, (str, bytes, np.ndarray)) or not isinstance(logits, (list, tuple)):
            raise checks.fail("logits", "a list of arrays, one per depth", logits)
        self.length = checks.positive_int("len(logits), the length,", len(logits), low=1, high=MAX_LENGTH)
        k = self.n_actions
        checks.enumeration(f"logits: a tabular policy of length {self.length} with {k} tokens",
                           len(PROMPTS) * sum(k ** (t + 1) for t in range(self.length)),
                           smaller="a shorter response length (or eos=False)")
        for t, z in enumerate(logits):
            want = (len(PROMPTS),) + (k,) * (t + 1)
            if np.shape(z) != want:
                raise ValueError(f"logits[{t}] must have shape {want}, got {np.shape(z)}")
        self.logits = [np.array(checks.array(f"logits[{t}]", z), dtype=float) for t, z in enumerate(logits)]

    @classmethod
    def from_policy(cls, policy: Policy) -> TabularPolicy:
        """A tabular copy of any policy: logits = log π(a | s) for every prompt and prefix."""
        check_policy("policy", policy)
        tiny = np.finfo(float).tiny
        logits = [
            np.stack([np.log(np.maximum(policy.prefix_probs(x, t), tiny)) for x in PROMPTS])
            for t in range(policy.length)
        ]
        return cls(logits, eos=policy.eos)

    def _prefix_probs(self, prompt: int, depth: int) -> np.ndarray:
        return softmax(self.logits[depth][PROMPTS.index(prompt)])

    def _next_rows(self, prompt: int, prefixes: np.ndarray) -> np.ndarray:
        z = self.logits[prefixes.shape[1]][PROMPTS.index(prompt)]
        return softmax(np.broadcast_to(z[tuple(prefixes.T)], (len(prefixes), self.n_actions)))

    def __repr__(self) -> str:
        return f"TabularPolicy(length={self.length}, eos={self.eos})"


HABITS = {
    "count": "counting up: extra weight (1 + t/6) · w on digit p+1 after digit p",
    "repeat": "repeating: extra weight w on writing the previous digit again",
    "small": "small digits: weight −w · a on digit a",
    "know": "knowing the task: extra weight w on the digit that brings the running sum to the target (mod 5)",
    "miss": "missing by one: extra weight w on the digit that brings the running sum one past the target",
    "stop": "stopping (with EOS only): extra weight w on EOS at every step",
    "end": "ending late (with EOS only): weight w · (t − 3) on EOS, so ending grows likelier along the response",
}
"""The habits a reference policy is made of: next-token logit z(a | x, y_<t) = Σ_habit weight · feature(a)."""

HABIT_RANGE = (-5.0, 5.0)
"""Allowed range of the habit weights that shape a preset (``reference_policy(..., count=0.5)``)."""

_PRESET_HABITS = {
    "pretrained": dict(count=1.5, repeat=0.8, small=0.3, end=1.0),
    "knows_task": dict(count=1.5, repeat=0.8, small=0.3, end=1.0, know=2.0),
    "confidently_wrong": dict(miss=5.0, end=1.0),
    "terse": dict(repeat=0.8, small=1.5, stop=1.5),
    "uniform": dict(),
}

PRESETS = {
    "pretrained": "counts up (after digit p mostly p+1, sometimes p again): its last token can still fix the sum, but "
                  "how likely it is to depends on the digit before, so the earlier tokens share some of the credit",
    "knows_task": "the counting habit plus extra weight on the digit that brings the running sum to the target: the "
                  "reward comes more often than not, and the credit gathers on the last token, which usually fixes "
                  "the sum whatever came before",
    "confidently_wrong": "sure of a habit that lands one past the target: the reward almost never comes, so there is "
                         "almost no credit to assign at any position, and almost no noise either",
    "terse": "prefers small digits and repeats, and with EOS on likes to stop early: every token changes which digits "
             "come next, so the credit is spread over the response more evenly than under any other prior",
    "uniform": "every token equally likely at every step: for sum to target only the last token changes the odds, so "
               "it gets all the credit",
}
"""Names of the reference policies, each with what it does to credit. No temperature turns one into another
(tests/test_policy.py checks it); ``uniform`` is every preset's limit τ → ∞."""


def habit_weights(preset: str = "pretrained", **habits) -> dict[str, float]:
    """A preset's habit weights, each shifted by the value given for it: name → weight, for every name in HABITS.

    ValueError for an unknown preset or habit, or a shift outside ``HABIT_RANGE``.
    """
    checks.choose("preset", preset, PRESETS)
    weights = {name: float(_PRESET_HABITS[preset].get(name, 0.0)) for name in HABITS}
    for name, shift in habits.items():
        checks.choose("habit", name, HABITS)
        weights[name] += checks.in_range(f"habit weight {name}", shift, *HABIT_RANGE)
    return weights


class HabitPolicy(Policy):
    """π_ref made of habits: the next-token logits depend on the position t, the previous token (the prompt digit
    at t = 0), the running sum of the digits so far mod 5, and the prompt (the target)::

        z(a | x, y_<t) = count·(1 + t/6)·[a = prev+1] + repeat·[a = prev] − small·a
                         + know·[sum + a ≡ x] + miss·[sum + a ≡ x+1]            for a digit a
        z(EOS | x, y_<t) = stop + end·(t − 3)                                    with ``eos=True``

    and π_τ(a | s) = softmax(z / τ). ``weights`` maps each name of ``HABITS`` to its weight.
    """

    def __init__(self, weights: dict, temperature: float = 1.0, length: int = RESPONSE_LENGTH, eos: bool = False,
                 name: str = "custom"):
        self.eos = checks.flag("eos", eos)
        self.length = checks.positive_int("length", length, low=1, high=MAX_LENGTH)
        self.temperature = checks.positive_finite("temperature", temperature)
        if not isinstance(weights, dict):
            raise checks.fail("weights", "a dict of habit name -> weight", weights)
        for h, w in weights.items():
            checks.choose("habit", h, HABITS)
            checks.finite("habit weight " + str(h), w)
        self.weights = {h: float(weights.get(h, 0.0)) for h in HABITS}
        self.name = checks.text("name", name)
        k, w = self.n_actions, self.weights
        t = np.arange(self.length)[:, None, None, None, None]
        x = np.arange(len(PROMPTS))[None, None, None, :, None]
        prev = np.arange(k)[None, :, None, None, None]
        s = np.arange(VOCAB_SIZE)[None, None, :, None, None]
        a = np.arange(VOCAB_SIZE)[None, None, None, None, :]
        digits = (w["count"] * (1 + t / 6) * (a == (prev + 1) % VOCAB_SIZE) + w["repeat"] * (a == prev)
                  - w["small"] * a + w["know"] * ((s + a) % VOCAB_SIZE == x)
                  + w["miss"] * ((s + a) % VOCAB_SIZE == (x + 1) % VOCAB_SIZE))
        z = np.broadcast_to(digits, (self.length, k, VOCAB_SIZE, len(PROMPTS), VOCAB_SIZE))
        if self.eos:
            stop = np.broadcast_to(w["stop"] + w["end"] * (t - 3.0), z.shape[:-1] + (1,))
            z = np.concatenate([z, stop], axis=-1)
        self.sum_matters = bool(w["know"] or w["miss"])
        # table[t, prev, sum, x, a] = π_τ(a | position t, previous token, running sum, prompt)
        self.table = softmax(z / self.temperature)

    def _prefix_probs(self, prompt: int, depth: int) -> np.ndarray:
        k = self.n_actions
        if depth == 0:
            return self.table[0, prompt, 0, prompt]
        if not self.sum_matters:  # the previous token decides: one row per previous token, broadcast
            row = self.table[depth, :, 0, prompt].reshape((1,) * (depth - 1) + (k, k))
            return np.broadcast_to(row, (k,) * depth + (k,))
        prev, total = _prefix_features(k, depth)
        return self.table[depth][prev, total, prompt]

    def _next_rows(self, prompt: int, prefixes: np.ndarray) -> np.ndarray:
        depth = prefixes.shape[1]
        if depth == 0:
            return np.broadcast_to(self.table[0, prompt, 0, prompt], (len(prefixes), self.n_actions))
        total = np.where(prefixes == EOS, 0, prefixes).sum(axis=1) % VOCAB_SIZE if self.sum_matters else 0
        return self.table[depth][prefixes[:, -1], total, prompt]

    def __repr__(self) -> str:
        eos = ", eos=True" if self.eos else ""
        return f"HabitPolicy({self.name!r}, temperature={self.temperature:g}, length={self.length}{eos})"


_FEATURES: dict = {}
_CACHED_FEATURES = 6**6
"""The largest tables of prefix features kept between calls (entries per table); larger ones are rebuilt each time,
so the cache holds at most a few megabytes whatever is asked."""


def _prefix_features(k: int, depth: int) -> tuple[np.ndarray, np.ndarray]:
    """For every prefix of ``depth`` tokens (shape (k,)*depth): its last token, and its digit sum mod 5 (EOS as 0),
    each as small ints built one token at a time (no (depth, k**depth) grid)."""
    if (k, depth) in _FEATURES:
        return _FEATURES[(k, depth)]
    digit = np.where(np.arange(k) == EOS, 0, np.arange(k)).astype(np.int8)
    total = np.zeros((), dtype=np.int8)
    for _ in range(depth):
        total = (total[..., None] + digit) % VOCAB_SIZE
    last = np.broadcast_to(np.arange(k, dtype=np.int8), (k,) * depth)
    if k**depth <= _CACHED_FEATURES:
        _FEATURES[(k, depth)] = (last, total)
    return last, total


def reference_policy(preset: str = "pretrained", temperature: float = 1.0, length: int = RESPONSE_LENGTH,
                     eos: bool = False, **habits) -> HabitPolicy:
    """π_ref from ``PRESETS`` at temperature τ (π_τ ∝ π_ref^(1/τ)), for responses of ``length`` tokens.

    Keyword arguments named after ``HABITS`` shift the preset's habit weights, each by a value in ``HABIT_RANGE``:
    ``reference_policy("uniform", count=1.5)`` is a prior that only counts up.
    """
    weights = habit_weights(preset, **habits)
    length = checks.positive_int("length", length, low=1, high=MAX_LENGTH)
    temperature = checks.positive_finite("temperature", temperature)
    eos = checks.flag("eos", eos)
    name = preset if not any(habits.values()) else preset + "+" + ",".join(f"{h}{v:+g}" for h, v in habits.items()
                                                                          if v)
    return HabitPolicy(weights, temperature=temperature, length=length, eos=eos, name=name)
