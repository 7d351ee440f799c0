"""Speed of the exact computations and of one explorer control change. Prints its figures; asserts nothing.

Targets (issue 2): advantage_table at length 4 in at most 1 ms; at length 8 (390,625 responses) in at most
200 ms and at least 20 times faster than a plain-Python backward induction over the same prefix tree; the Python
side of one control change of the Figure 4.1 explorer (recompute and update the figure) in at most 30 ms, the
continuous temperature slider and the habit sliders that shape π_ref included (issue 9).
Issue 13: the cold first call at length 8, evaluating the built-in reward on every response (as a vectorised
table), in at most 100 ms; the length-8 table from a warm cache still at most 200 ms. A reward that is an
arbitrary Python function takes the slow path (one call per response): its cold time is printed for comparison.
Size guards (issue 13): the enumerations the issue names are refused well under a second.

Run: .venv/bin/python benchmarks/bench_exact.py
"""

from __future__ import annotations

import itertools
import statistics
import time

import numpy as np

import toy


def median_ms(fn, repeat):
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(times)


def plain_python_advantages(policy, reward, prompt):
    """Backward induction over the same prefix tree with dicts and loops: the baseline to beat."""
    L, K = policy.length, policy.n_actions
    table = toy.reward_table(reward, prompt, L, K)  # same cached rewards as the vectorised code
    probs = [policy.prefix_probs(prompt, t) for t in range(L)]
    V = {y: float(table[y]) for y in itertools.product(range(K), repeat=L)}
    for t in reversed(range(L)):
        for prefix in itertools.product(range(K), repeat=t):
            p = probs[t][prefix]
            V[prefix] = sum(float(p[a]) * V[prefix + (a,)] for a in range(K))
    return {y: [V[y[: t + 1]] - V[y[:t]] for t in range(L)] for y in itertools.product(range(K), repeat=L)}


def main():
    reward = "sum_to_target"
    pi4 = toy.reference_policy()
    toy.advantage_table(pi4, reward, 2)  # warm the reward table (computed once per reward and prompt)
    t4 = median_ms(lambda: toy.advantage_table(pi4, reward, 2), 300)
    print(f"advantage_table, length 4 (625 responses):        {t4:8.3f} ms   (target <= 1 ms)")

    pi8 = toy.reference_policy(length=8)
    toy.rewards._TABLES.clear()
    t0 = time.perf_counter()
    toy.advantage_table(pi8, reward, 2)
    cold = (time.perf_counter() - t0) * 1e3
    print(f"advantage_table, length 8, cold (reward included):{cold:8.1f} ms   (target <= 100 ms)")
    t8 = median_ms(lambda: toy.advantage_table(pi8, reward, 2), 7)
    print(f"advantage_table, length 8, warm reward cache:     {t8:8.1f} ms   (target <= 200 ms)")

    def python_reward(prompt, response):  # the same reward as a plain function: no vectorised table for it
        return float(sum(response) % 5 == prompt)

    t0 = time.perf_counter()
    toy.advantage_table(pi8, python_reward, 2)
    slow = (time.perf_counter() - t0) * 1e3
    print(f"  same, cold, reward as an arbitrary Python function (slow path): {slow:.0f} ms   (no target)")
    tp = median_ms(lambda: plain_python_advantages(pi8, reward, 2), 1)
    print(f"plain-Python backward induction, length 8:        {tp:8.1f} ms   -> vectorised is {tp / t8:.0f}x faster"
          " (target >= 20x)")

    refusals = {
        "value on an EOS policy of length 10 (6**10 responses)":
            lambda: toy.value(toy.reference_policy(length=10, eos=True), reward, 2),
        "imitation.cost_curves with max_horizon 10**10": lambda: toy.imitation.cost_curves(0.1, 10**10),
        "GRPO's exact moments, n = 256, 125 distinct rewards":
            lambda: toy.estimators.gradient_moments("grpo", toy.reference_policy(length=3),
                                                    lambda x, y: float(sum(7**t * v for t, v in enumerate(y))), 2, 256),
    }
    for name, call in refusals.items():
        t0 = time.perf_counter()
        try:
            call()
            outcome = "ran (NOT refused)"
        except ValueError:
            outcome = "refused"
        ms = (time.perf_counter() - t0) * 1e3
        print(f"size guard: {name}: {outcome} in {ms:.1f} ms   (target: refused, well under 1,000 ms)")
    t0 = time.perf_counter()
    toy.estimators.gradient_moments("rloo", toy.reference_policy(length=3),
                                    lambda x, y: float(sum(7**t * v for t, v in enumerate(y))), 2, 256)
    print(f"RLOO's exact moments, same setting, by the closed form: {(time.perf_counter() - t0) * 1e3:.1f} ms"
          "   (no target: the cheaper exact route)")

    ex = toy.explorers.credit_assignment()
    live = ex.live()
    settings = list(itertools.product(toy.REWARDS, toy.explorers.TEMPERATURES, toy.PRESETS))
    times = []
    for reward_name, temperature, preset in settings:  # every setting is new: nothing is cached
        t0 = time.perf_counter()
        live.set(reward=reward_name, temperature=temperature, preset=preset)
        times.append((time.perf_counter() - t0) * 1e3)
    print(f"Figure 4.1 live control change, Python side:      {statistics.median(times):8.2f} ms median,"
          f" {max(times):.2f} ms max over {len(times)} new settings   (target <= 30 ms:"
          f" {'OK' if statistics.median(times) <= 30 else 'TOO SLOW'})")
    rng = np.random.default_rng(0)
    for name, moves in [
        ("continuous τ", [dict(temperature=float(10 ** u)) for u in rng.uniform(-1, 1, 60)]),
        ("habit sliders", [{h: float(v) for h, v in zip(("count", "repeat", "know"), rng.uniform(-5, 5, 3),
                                                        strict=True)} for _ in range(60)]),
        ("one habit slider", [dict(know=float(v)) for v in rng.uniform(-5, 5, 60)]),
    ]:
        times = []
        for move in moves:  # off the static grid: every setting is new, nothing is cached
            t0 = time.perf_counter()
            live.set(**move)
            times.append((time.perf_counter() - t0) * 1e3)
        med = statistics.median(times)
        print(f"Figure 4.1 live change, {name + ',':<18} Python:  {med:8.2f} ms median,"
              f" {max(times):.2f} ms max over {len(times)}   (target <= 30 ms: {'OK' if med <= 30 else 'TOO SLOW'})")
    times = []
    for y in itertools.islice(itertools.product(range(5), repeat=4), 0, 200, 3):
        t0 = time.perf_counter()
        live.set(**{f"y{t}": y[t] for t in range(4)})
        times.append((time.perf_counter() - t0) * 1e3)
    print(f"Figure 4.1 live response change, Python side:     {statistics.median(times):8.2f} ms median")


if __name__ == "__main__":
    main()
