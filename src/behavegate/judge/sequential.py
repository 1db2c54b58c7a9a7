"""Sequential attempts: Wald's sequential probability ratio test, truncated.

A scenario with ``sequential`` and ``min_pass_rate: t`` tests a good agent
(pass rate ``t + margin``) against a dropped one (``t - margin``). After each
attempt judged pass or fail, with s passes out of n such attempts, the log
likelihood ratio of "dropped" over "good" is ``n·b − s·(a + b)`` with
``a = ln(p_good / p_drop)`` and ``b = ln((1 − p_drop) / (1 − p_good))``. It
fails as soon as that reaches ``ln((1 − missed_drop) / false_fail)`` and passes
as soon as it falls to ``ln(missed_drop / (1 − false_fail))``: in passes, pass
when ``s ≥ slope·n + pass_offset``, fail when ``s ≤ slope·n − fail_offset``.

An incomplete attempt moves neither count: it is never a pass or a failure. At
the cap (``runs``) undecided, the fixed rule decides (judge/aggregate.py). The
design's exact operating characteristics with that truncation (the chance a
good agent fails, a dropped one passes, and the mean attempts of each) are
computed by dynamic programming over (attempts, passes), not approximated.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from functools import lru_cache

from behavegate.frozen import Frozen
from behavegate.judge import aggregate
from behavegate.model import JSON, SequentialSpec, Status

EDGE = 0.001  # hypotheses are kept inside (0, 1): a threshold of 1 tests 0.999 against 0.9


class Design(Frozen):
    threshold: float
    cap: int
    p_good: float
    p_drop: float
    slope: float
    pass_offset: float
    fail_offset: float
    upper: float  # the log likelihood ratio that fails
    lower: float  # ... and the one that passes
    a: float
    b: float
    spec: SequentialSpec


class Decision(Frozen):
    status: Status
    used: int  # attempts consumed, in order (the rest are unused)
    by: str  # "boundary" | "cap" | "evidence" (fewer attempts than the cap, undecided)
    passes: int
    failures: int


@lru_cache(maxsize=256)
def design(threshold: float, spec: SequentialSpec, cap: int) -> Design:
    p_good = min(threshold + spec.margin, 1 - EDGE)
    p_drop = min(max(threshold - spec.margin, EDGE), p_good - EDGE)  # never equal: a tiny margin stays a test
    a = math.log(p_good / p_drop)
    b = math.log((1 - p_drop) / (1 - p_good))
    upper = math.log((1 - spec.missed_drop) / spec.false_fail)
    lower = math.log(spec.missed_drop / (1 - spec.false_fail))
    return Design(threshold, cap, p_good, p_drop, b / (a + b), -lower / (a + b), upper / (a + b), upper, lower, a, b, spec)


def _verdict(d: Design, passes: int, failures: int) -> Status | None:
    llr = failures * d.b - passes * d.a
    if llr >= d.upper - 1e-12:
        return "fail"
    if llr <= d.lower + 1e-12:
        return "pass"
    return None


def decide(statuses: Sequence[Status], d: Design, gate: str = "rate") -> Decision:
    """Consume attempts in order until the boundary decides or the cap is reached."""
    passes = failures = 0
    for index, status in enumerate(statuses[: d.cap]):
        passes += status == "pass"
        failures += status == "fail"
        found = _verdict(d, passes, failures) if status != "incomplete" else None
        if found is not None:
            return Decision(found, index + 1, "boundary", passes, failures)
    used = min(len(statuses), d.cap)
    fixed = aggregate.scenario_status(list(statuses[:used]), d.cap, d.threshold, gate)
    if passes + failures == 0:
        fixed = "incomplete"  # no observed attempt: never a verdict
    return Decision(fixed, used, "cap" if used >= d.cap else "evidence", passes, failures)


def decided(statuses: Sequence[Status], d: Design) -> bool:
    """Is the scenario decided by these attempts (in order; live scheduling)?"""
    return decide(statuses, d).by == "boundary" or len(statuses) >= d.cap


@lru_cache(maxsize=1024)
def operating(d: Design, p: float) -> tuple[float, float]:
    """(chance of a fail verdict, mean attempts) for an agent passing with
    probability ``p`` on every attempt, the truncation at the cap included."""
    need = aggregate.needed(d.cap, d.threshold)
    alive = {0: 1.0}  # passes -> probability of being undecided with them
    fail = mean = 0.0
    for n in range(1, d.cap + 1):
        step: dict[int, float] = {}
        for s, chance in alive.items():
            step[s + 1] = step.get(s + 1, 0.0) + chance * p
            step[s] = step.get(s, 0.0) + chance * (1 - p)
        alive = {}
        for s, chance in step.items():
            found = _verdict(d, s, n - s)
            if found is None and n == d.cap:
                found = "pass" if s >= need else "fail"
            if found is None:
                alive[s] = chance
                continue
            mean += n * chance
            fail += chance if found == "fail" else 0.0
    return fail, mean


def summary(d: Design, decision: Decision) -> dict[str, JSON]:
    """What the reports show: attempts used vs the cap, how it stopped, the boundary
    and the design's operating characteristics."""
    false_fail, good_mean = operating(d, d.p_good)
    drop_fail, drop_mean = operating(d, d.p_drop)
    return {
        "used": decision.used,
        "cap": d.cap,
        "decided_by": decision.by,
        "settings": {"false_fail": d.spec.false_fail, "missed_drop": d.spec.missed_drop, "margin": d.spec.margin},
        "boundary": {
            "pass_when_passes_at_least": f"{d.slope:.4f}*n + {d.pass_offset:.4f}",
            "fail_when_passes_at_most": f"{d.slope:.4f}*n - {d.fail_offset:.4f}",
            "n": "attempts judged pass or fail",
        },
        "design": {
            "good_rate": round(d.p_good, 6),
            "drop_rate": round(d.p_drop, 6),
            "false_fail": round(false_fail, 6),
            "missed_drop": round(1 - drop_fail, 6),
            "mean_attempts_good": round(good_mean, 3),
            "mean_attempts_drop": round(drop_mean, 3),
        },
    }


def boundary_text(d: Design, n: int) -> str:
    """The boundary after ``n`` judged attempts, in passes."""
    low = math.floor(d.slope * n - d.fail_offset + 1e-9)
    high = math.ceil(d.slope * n + d.pass_offset - 1e-9)
    return f"after {n} judged: pass at ≥{high} passes, fail at ≤{low}"


def fewest_to_decide(statuses: Sequence[Status], d: Design) -> int:
    """The fewest further attempts that could decide the scenario after these (in
    order): all passing to the pass boundary, all failing to the fail one, or the cap."""
    if decide(statuses, d).by == "boundary":
        return 0
    passes, failures = statuses.count("pass"), statuses.count("fail")
    left = max(d.cap - len(statuses), 0)
    best = left
    for k in range(1, left):
        if _verdict(d, passes + k, failures) == "pass" or _verdict(d, passes, failures + k) == "fail":
            best = k
            break
    return best
