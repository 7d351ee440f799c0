"""Timings for sections 4.4 and 4.5: training loops per method, exact estimator moments, static explorer builds.

Run: python benchmarks/bench_post_training.py (prints its figures; nothing is asserted).
"""

import time

import toy
from toy import estimators, train
from toy.page.explorers import critic_free, pipeline


def timed(fn, *args, **kwargs):
    t0 = time.perf_counter()
    fn(*args, **kwargs)
    return time.perf_counter() - t0


def main():
    print("train(): 40 steps, 4 betas x 5 seeds, all 5 prompts")
    for method in train.METHODS:
        for n in (4, 16):
            dt = timed(train.train, method, steps=40, group_size=n, betas=(0, 0.02, 0.1, 0.5), lr=4.0)
            print(f"  {method:>9}, n = {n:>2}: {dt:.3f} s")
    pi = toy.TabularPolicy.from_policy(toy.reference_policy())
    print("exact gradient moments, all 5 prompts, n = 16")
    for reward in ("sum_to_target", "count_target"):
        for method in list(estimators.METHODS) + [estimators.EXACT_CRITIC]:
            dt = sum(timed(estimators.gradient_moments, method, pi, reward, x, 16) for x in toy.PROMPTS)
            print(f"  {reward:>13} {method:>12}: {dt:.3f} s")
    print("static view of each explorer (payload on the full grid), fresh caches")
    for name, factory in {**pipeline.EXPLORERS, **critic_free.EXPLORERS}.items():
        t0 = time.perf_counter()
        html = factory().static_html()
        print(f"  {name:>20}: {time.perf_counter() - t0:.2f} s, {len(html) / 1024:.0f} KB")


if __name__ == "__main__":
    main()
