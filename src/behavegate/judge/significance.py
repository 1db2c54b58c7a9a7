"""Is a pass rate lower now than in the baseline, beyond sampling error?

Two samples of attempts, the baseline's and this run's, make a 2×2 table
(baseline, now) × (passed, failed). With its margins fixed, the baseline's
number of passes X is hypergeometric under "the pass rate did not change", and
the one-sided Fisher exact test asks how likely a baseline at least this far
ahead is: ``P(X ≥ observed)``. Exact, so it holds for the small samples agents
are run with (8 against 8), where normal approximations do not.

A run compares many scenarios and assertions at once, and the gate fails when
any one drop is significant, so the level must hold for the whole run: the
chance that sampling noise alone fails a pull request. Tarone's modified
Bonferroni (Tarone 1990, "A modified Bonferroni method for discrete data",
Biometrics 46:1071-1085) keeps it at ``alpha`` and loses little power: a
discrete test whose margins cannot produce a p-value below the threshold (a
scenario that failed once in 16 attempts cannot show a significant drop)
cannot produce a false alarm either, so it is not counted.
"""

from __future__ import annotations

from collections.abc import Sequence
from math import comb

ALPHA = 0.05


def _tail(passed_before: int, runs_before: int, passed_now: int, runs_now: int, *, upper: bool) -> float:
    passed = passed_before + passed_now
    total = runs_before + runs_now
    low, high = max(0, passed - runs_now), min(runs_before, passed)
    xs = range(passed_before, high + 1) if upper else range(low, passed_before + 1)
    mass = sum(comb(passed, x) * comb(total - passed, runs_before - x) for x in xs)
    return min(1.0, mass / comb(total, runs_before))


def drop_p_value(passed_before: int, runs_before: int, passed_now: int, runs_now: int) -> float:
    """One-sided Fisher exact p-value that the pass rate is lower now (1.0 without data)."""
    return _tail(passed_before, runs_before, passed_now, runs_now, upper=True)


def rise_p_value(passed_before: int, runs_before: int, passed_now: int, runs_now: int) -> float:
    """One-sided Fisher exact p-value that the pass rate is higher now."""
    return _tail(passed_before, runs_before, passed_now, runs_now, upper=False)


def least_drop_p_value(passed_before: int, runs_before: int, passed_now: int, runs_now: int) -> float:
    """The smallest drop p-value any table with these margins could give: the most
    extreme one, every pass in the baseline."""
    passed = passed_before + passed_now
    most = min(runs_before, passed)
    return drop_p_value(most, runs_before, passed - most, runs_now)


def tarone_threshold(least: Sequence[float], alpha: float = ALPHA) -> tuple[float, int]:
    """The per-test threshold that keeps the family-wise level at ``alpha``, and how
    many tests it counts: ``alpha / k`` for the smallest k such that at most k tests
    could reach ``alpha / k`` at all (those are the ones counted)."""
    k = 1
    while True:
        counted = sum(1 for p in least if p <= alpha / k)
        if counted <= k:
            return alpha / k, counted
        k += 1
