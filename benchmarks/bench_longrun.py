"""Benchmark: exact long-response credit by dynamic programming (toy.longrun), and its agreement with enumeration.

Prints the time of one ``toy.longrun.credit`` call at several lengths (the book needs length 1,000 in at most
1 s) and, at small lengths, the largest difference from ``toy.exact.credit_by_position``, which enumerates the
whole prefix tree of the same policy. Run: ``python benchmarks/bench_longrun.py``.
"""

import time

import numpy as np

import toy
from toy.longrun import LONG_REWARDS, MarkovPolicy, credit

BUDGET_SECONDS = 1.0


def best_time(fn, repeats=5):
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def main():
    policy = MarkovPolicy("pretrained", 1.0)
    print("dynamic programme: seconds per call (best of 5)")
    print(f"{'reward':<15}" + "".join(f"{'L=' + format(L, ','):>12}" for L in (10, 100, 1_000, 10_000)))
    worst_1000 = 0.0
    for reward in LONG_REWARDS:
        row = []
        for L in (10, 100, 1_000, 10_000):
            s = best_time(lambda L=L, reward=reward: credit(policy, reward, 2, L))
            row.append(s)
            if L == 1_000:
                worst_1000 = max(worst_1000, s)
        print(f"{reward:<15}" + "".join(f"{s:>12.4f}" for s in row))
    verdict = "OK" if worst_1000 <= BUDGET_SECONDS else "TOO SLOW"
    print(f"length 1,000: {worst_1000:.4f} s (budget {BUDGET_SECONDS} s): {verdict}")

    print("\nagreement with enumeration (toy.exact.credit_by_position on the same policy as a BigramPolicy)")
    print(f"{'reward':<15}{'L':>3}{'max |ΔE[A_t²]|':>16}{'max |Δnoise_t|':>16}{'DP s':>10}{'enum s':>10}")
    worst = 0.0
    for reward in LONG_REWARDS:
        for L in (2, 4, 6, 8):
            for temperature in (0.5, 1.0, 3.0):
                p = MarkovPolicy("pretrained", temperature)
                t0 = time.perf_counter()
                dp = credit(p, reward, 2, L)
                t1 = time.perf_counter()
                signal, noise = toy.credit_by_position(p.bigram(L), reward, 2)
                t2 = time.perf_counter()
                d1 = float(np.abs(dp.mean_square - signal).max())
                d2 = float(np.abs(dp.noise - noise).max())
                worst = max(worst, d1, d2)
            print(f"{reward:<15}{L:>3}{d1:>16.2e}{d2:>16.2e}{t1 - t0:>10.4f}{t2 - t1:>10.4f}")
    print(f"largest difference over all cases: {worst:.2e}: {'OK' if worst < 1e-10 else 'MISMATCH'}")


if __name__ == "__main__":
    main()
