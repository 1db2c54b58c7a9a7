"""From attempts to a scenario verdict, and from scenarios to suite gates.

For a scenario with ``runs: n`` and ``min_pass_rate: t``, with p passes and i
incompletes, needing k = ⌈t·n⌉ passes:

* pass when p ≥ k;
* fail when p + i < k: even if every incomplete attempt had passed, the
  threshold is out of reach;
* incomplete otherwise: missing evidence is never counted as pass or fail;
* and incomplete whatever the threshold when no attempt was judged pass or
  fail: a scenario never observed cannot pass, not even with ``min_pass_rate: 0``.

``gate: lower_bound`` applies the same rule to the lower end of the Wilson 95%
interval instead of the raw rate. With ``runs: 1, min_pass_rate: 1`` this is
exactly the version-1 rule.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

from behavegate.model import Reliability, Status

Z95 = 1.959963984540054


def wilson(passes: int, runs: int, z: float = Z95) -> tuple[float, float]:
    if runs <= 0:
        return (0.0, 1.0)
    phat = passes / runs
    denominator = 1 + z * z / runs
    centre = (phat + z * z / (2 * runs)) / denominator
    margin = z * math.sqrt(phat * (1 - phat) / runs + z * z / (4 * runs * runs)) / denominator
    low = 0.0 if passes == 0 else max(0.0, min(phat, centre - margin))
    high = 1.0 if passes == runs else min(1.0, max(phat, centre + margin))
    return (low, high)


def needed(runs: int, min_pass_rate: float) -> int:
    """Passes needed out of ``runs`` (a small tolerance keeps 0.7 × 10 at 7)."""
    return max(0, math.ceil(min_pass_rate * runs - 1e-9))


def reaches(passes: int, runs: int, min_pass_rate: float, gate: str) -> bool:
    if gate == "lower_bound":
        return wilson(passes, runs)[0] >= min_pass_rate - 1e-12
    return passes >= needed(runs, min_pass_rate)


def scenario_status(statuses: Sequence[Status], runs: int, min_pass_rate: float, gate: str = "rate") -> Status:
    passes = statuses.count("pass")
    incomplete = statuses.count("incomplete") + max(runs - len(statuses), 0)
    if passes + statuses.count("fail") == 0:
        return "incomplete"  # evidence is required: nothing observed never passes
    if reaches(passes, runs, min_pass_rate, gate):
        return "pass"
    if not reaches(passes + incomplete, runs, min_pass_rate, gate):
        return "fail"
    return "incomplete"


def reliability(
    statuses: Sequence[Status], runs: int, min_pass_rate: float, gate: str, scores: Mapping[str, float] | None = None
) -> Reliability:
    passes, failures = statuses.count("pass"), statuses.count("fail")
    return Reliability(
        runs=runs,
        passed=passes,
        failed=failures,
        incomplete=runs - passes - failures,
        min_pass_rate=min_pass_rate,
        gate=gate,
        pass_rate=passes / runs if runs else 0.0,
        interval=wilson(passes, runs),
        flaky=passes > 0 and failures > 0,
        scores=scores,
    )


def percentile(values: Sequence[float], q: float) -> float:
    """Nearest-rank percentile (q in 0..100) of a non-empty sequence."""
    ordered = sorted(values)
    rank = max(1, math.ceil(q / 100 * len(ordered)))
    return ordered[rank - 1]
