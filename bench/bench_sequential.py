"""Operating characteristics of sequential attempts vs the fixed design (stdlib + behavegate).

Run from the repository root:

    .venv/bin/python bench/bench_sequential.py [--trials 20000] [--seed 15]

Seeded Bernoulli agents (every attempt passes with probability p, independently) are
judged by behavegate's own decision rule (``judge/sequential.py``: Wald's SPRT around
``min_pass_rate``, truncated at ``runs`` with the fixed rule) and by the fixed design
(all ``runs`` attempts, pass at ``ceil(min_pass_rate * runs)`` passes). It prints, per
agent, the share of fail verdicts and the mean attempts, simulated and exact (dynamic
programming over attempts and passes), then the smallest fixed design with the same
error rates, then how the cap changes the sequential design. See bench/README.md.
"""

from __future__ import annotations

import argparse
import math
import random
from collections.abc import Iterator
from typing import Literal

from behavegate.judge import aggregate, sequential
from behavegate.model import SequentialSpec

Status = Literal["pass", "fail", "incomplete"]


def attempts(rng: random.Random, p: float) -> Iterator[Status]:
    while True:
        yield "pass" if rng.random() < p else "fail"


def simulate_sequential(p: float, threshold: float, cap: int, trials: int, seed: int) -> tuple[float, float]:
    """(share of fail verdicts, mean attempts used)."""
    d = sequential.design(threshold, SequentialSpec(), cap)
    rng = random.Random(seed)
    fails = used = 0
    for _ in range(trials):
        stream = attempts(rng, p)
        statuses: list[Status] = []
        while True:
            statuses.append(next(stream))
            decision = sequential.decide(statuses, d)
            if decision.by == "boundary" or len(statuses) >= cap:
                break
        fails += decision.status == "fail"
        used += decision.used
    return fails / trials, used / trials


def simulate_fixed(p: float, threshold: float, runs: int, trials: int, seed: int) -> float:
    rng = random.Random(seed)
    need = aggregate.needed(runs, threshold)
    return sum(sum(rng.random() < p for _ in range(runs)) < need for _ in range(trials)) / trials


def binomial_below(n: int, p: float, k: int) -> float:
    """P(X < k) for X ~ Binomial(n, p)."""
    return sum(math.comb(n, i) * p**i * (1 - p) ** (n - i) for i in range(k))


def smallest_fixed(good: float, bad: float, false_fail: float, missed: float) -> tuple[int, int]:
    """The fewest attempts n (and passes needed k) with P(good fails) ≤ false_fail and
    P(bad passes) ≤ missed."""
    for n in range(1, 400):
        for k in range(n + 1):
            if binomial_below(n, good, k) <= false_fail and 1 - binomial_below(n, bad, k) <= missed:
                return n, k
    raise ValueError("no fixed design below 400 attempts")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=20_000)
    parser.add_argument("--seed", type=int, default=15)
    parser.add_argument("--threshold", type=float, default=0.85)
    parser.add_argument("--cap", type=int, default=40)
    args = parser.parse_args()
    t, cap = args.threshold, args.cap
    d = sequential.design(t, SequentialSpec(), cap)
    print(f"min_pass_rate {t}, runs (cap) {cap}, sequential defaults: false fail ≤ 1% at {d.p_good:.2f}, "
          f"missed drop ≤ 10% at {d.p_drop:.2f}; {args.trials} seeded trials per agent\n")  # fmt: skip
    print("agent  sequential: fail verdicts (exact)  mean attempts (exact)  | fixed runs=40: fail verdicts (exact)")
    for p in (0.95, 0.90, 0.85, 0.80, 0.75, 0.70):
        fail, mean = simulate_sequential(p, t, cap, args.trials, args.seed)
        exact_fail, exact_mean = sequential.operating(d, p)
        fixed = simulate_fixed(p, t, cap, args.trials, args.seed)
        fixed_exact = binomial_below(cap, p, aggregate.needed(cap, t))
        print(f"{p:5.0%}  {fail:>10.2%} ({exact_fail:6.2%})             {mean:6.2f} ({exact_mean:5.2f})"
              f"          | {fixed:>8.2%} ({fixed_exact:6.2%})")  # fmt: skip
    n_design, k_design = smallest_fixed(d.p_good, d.p_drop, 0.01, 0.10)
    n_sim, k_sim = smallest_fixed(0.95, 0.70, 0.01, 0.10)
    good_mean = sequential.operating(d, 0.95)[1]
    bad_mean = sequential.operating(d, 0.70)[1]
    print(
        f"\nfixed design with the same stated error rates (≤1% fails at {d.p_good:.0%}, ≤10% passes at "
        f"{d.p_drop:.0%}): {n_design} attempts, pass at {k_design}"
    )
    print(f"fixed design with ≤1% fails at 95% and ≤10% passes at 70%: {n_sim} attempts, pass at {k_sim}")
    print(
        f"sequential mean attempts: {good_mean:.2f} at 95%, {bad_mean:.2f} at 70% "
        f"({max(good_mean, bad_mean) / n_design:.0%} of {n_design}, {max(good_mean, bad_mean) / n_sim:.0%} of {n_sim})"
    )
    print("\ncap   false fail at +10  missed drop at -10  mean attempts at +10 / -10")
    for runs in (20, 30, 40, 60, 100):
        c = sequential.design(t, SequentialSpec(), runs)
        ff, gm = sequential.operating(c, c.p_good)
        df, dm = sequential.operating(c, c.p_drop)
        print(f"{runs:>4}  {ff:>16.2%}  {1 - df:>18.2%}  {gm:>10.2f} / {dm:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
