"""Checks of what an attempt cost: model and tool steps, latency, tokens."""

from __future__ import annotations

from behavegate.cost import attempt_tokens
from behavegate.judge.evidence import Evidence, checked, incomplete, observation_gap
from behavegate.model import Verdict

# --- version 2: steps, latency, usage -------------------------------------------------------


def _measure(assertion: str, kind: str, limit: float, value: float | None, missing: str, what: str, ev: Evidence) -> Verdict:
    gap = observation_gap(ev)
    if gap or value is None:
        return incomplete(assertion, kind, gap or missing, limit)
    return checked(
        assertion,
        kind,
        value <= limit,
        f"{what} {value:g} is within {limit:g}",
        f"expected {what} at most {limit:g}, observed {value:g}",
        limit,
        value,
    )


def judge_steps(assertion: str, limit: int, ev: Evidence) -> Verdict:
    steps = ev.observation.steps if ev.observation else None
    return _measure(assertion, "steps_max", limit, steps, "step count was not observed", "steps", ev)


def judge_latency(assertion: str, limit: float, ev: Evidence) -> Verdict:
    latency = ev.observation.latency_ms if ev.observation else None
    return _measure(assertion, "latency_max", limit, latency, "latency was not observed", "latency ms", ev)


def judge_usage(assertion: str, limit: int, ev: Evidence) -> Verdict:
    tokens = attempt_tokens(ev.observation)  # total, else input + output: the one meaning of tokens
    traced = ev.observation is not None and ev.observation.trace_id is not None
    missing = "a model step of the trace recorded no token usage" if traced else "the endpoint reported no token usage"
    return _measure(assertion, "usage_max_total_tokens", limit, tokens, missing, "total tokens", ev)
