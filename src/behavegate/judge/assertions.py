"""Every assertion behavegate judges, in one registry keyed by contract key:
``REGISTRY`` says which function judges each key (and the report's kind).

An assertion is a pure function of what the contract asked for and the
evidence of one attempt. It passes only on typed evidence; when the evidence
gate is closed or the field was not observed it is *incomplete*, never a pass
and never a failure. Messages keep skylos's exact wording.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from behavegate.contract.assertion_keys import REQUESTS, Requested, requested_keys
from behavegate.frozen import frozen
from behavegate.judge.conversation_checks import judge_no_repeat, judge_turns, judge_uses_tool_result
from behavegate.judge.evidence import EMPTY_PATTERNS, Evidence
from behavegate.judge.judged_checks import judge_response_judge
from behavegate.judge.measure_checks import judge_latency, judge_steps, judge_usage
from behavegate.judge.response_checks import (
    judge_contains,
    judge_excludes,
    judge_icontains,
    judge_matches,
    judge_not_matches,
    judge_refusal,
    judge_source,
)
from behavegate.judge.safety_checks import judge_injection, judge_pii
from behavegate.judge.tool_checks import (
    judge_allowed,
    judge_arguments_valid,
    judge_call_count,
    judge_exact_sequence,
    judge_forbidden,
    judge_known_only,
    judge_max_calls,
    judge_min_calls,
    judge_no_errors,
    judge_required,
    judge_sequence,
    judge_tool_set,
)
from behavegate.model import CallCount, Expectation, Scenario, TrajectorySpec, Verdict

__all__ = ["BY_KEY", "EMPTY_PATTERNS", "REGISTRY", "AssertionType", "Evidence", "requested_assertions", "scenario_assertions"]

Judge = Callable[[str, Any, Evidence], Verdict]


@frozen
class AssertionType:
    key: str  # the contract key, e.g. "tools.required"
    kind: str  # the report's kind, e.g. "tool_required"
    requested: Requested  # (assertion id, spec) for each assertion the contract asks for
    judge: Judge
    # Which verdict the tool calls that could be read settle when the rest are not known (more
    # calls cannot undo a forbidden call seen, or a required call matched): judge/evidence.py's ``seen``.
    seen_decides: Callable[[Any], str | None] = lambda spec: None


def _fail(spec: Any) -> str:
    return "fail"


def _pass(spec: Any) -> str:
    return "pass"


def _counted(spec: CallCount) -> str | None:
    """More calls can only raise a count: past ``max`` is final; reaching ``min`` is, with no ``max``.
    With both, a fail on the calls read may be short of ``min`` (more may have run): not final."""
    if spec.max is None:
        return "pass"
    return "fail" if not spec.min else None


def _ordered(spec: TrajectorySpec) -> str | None:
    """An ordered subsequence (or a superset) of the calls read stays one whatever else ran."""
    return "pass" if spec.mode in ("in_order", "superset") else None


# --- the registry, in report order ------------------------------------------------------

REGISTRY: tuple[AssertionType, ...] = (
    AssertionType("response.contains", "response_contains", REQUESTS["response.contains"], judge_contains),
    AssertionType("response.excludes", "response_excludes", REQUESTS["response.excludes"], judge_excludes),
    AssertionType("tools.required", "tool_required", REQUESTS["tools.required"], judge_required, _pass),
    AssertionType("tools.allowed", "tools_allowed", REQUESTS["tools.allowed"], judge_allowed, _fail),
    AssertionType("tools.forbidden", "tool_forbidden", REQUESTS["tools.forbidden"], judge_forbidden, _fail),
    AssertionType("tools.exact_sequence", "tool_exact_sequence", REQUESTS["tools.exact_sequence"], judge_exact_sequence),
    AssertionType("tools.max_calls", "tool_max_calls", REQUESTS["tools.max_calls"], judge_max_calls, _fail),
    AssertionType("refusal", "refusal", REQUESTS["refusal"], judge_refusal),
    AssertionType("sources.required", "source_required", REQUESTS["sources.required"], judge_source),
    AssertionType("response.icontains", "response_icontains", REQUESTS["response.icontains"], judge_icontains),
    AssertionType("response.matches", "response_matches", REQUESTS["response.matches"], judge_matches),
    AssertionType("response.not_matches", "response_not_matches", REQUESTS["response.not_matches"], judge_not_matches),
    AssertionType("tools.min_calls", "tool_min_calls", REQUESTS["tools.min_calls"], judge_min_calls, _pass),
    AssertionType("tools.calls", "tool_call_count", REQUESTS["tools.calls"], judge_call_count, _counted),
    AssertionType("tools.sequence", "tool_sequence", REQUESTS["tools.sequence"], judge_sequence, _ordered),
    AssertionType("tools.set", "tool_set", REQUESTS["tools.set"], judge_tool_set),
    AssertionType(
        "tools.arguments_valid", "tool_arguments_valid", REQUESTS["tools.arguments_valid"], judge_arguments_valid, _fail
    ),
    AssertionType("tools.known_only", "tool_known_only", REQUESTS["tools.known_only"], judge_known_only, _fail),
    AssertionType("tools.no_errors", "tool_no_errors", REQUESTS["tools.no_errors"], judge_no_errors, _fail),
    AssertionType("steps.max", "steps_max", REQUESTS["steps.max"], judge_steps),
    AssertionType("latency.max_ms", "latency_max", REQUESTS["latency.max_ms"], judge_latency),
    AssertionType("usage.max_total_tokens", "usage_max_total_tokens", REQUESTS["usage.max_total_tokens"], judge_usage),
    AssertionType("safety.pii", "safety_pii", REQUESTS["safety.pii"], judge_pii),
    AssertionType("safety.injection", "safety_injection", REQUESTS["safety.injection"], judge_injection),
    AssertionType(
        "response.uses_tool_result", "response_uses_tool_result", REQUESTS["response.uses_tool_result"], judge_uses_tool_result
    ),
    AssertionType("tools.no_repeat", "tool_no_repeat", REQUESTS["tools.no_repeat"], judge_no_repeat),
    AssertionType("turns.max", "turns_max", REQUESTS["turns.max"], judge_turns),
    AssertionType("response.judge", "response_judge", REQUESTS["response.judge"], judge_response_judge),
)

BY_KEY: dict[str, AssertionType] = {entry.key: entry for entry in REGISTRY}


def requested_assertions(expect: Expectation) -> tuple[tuple[AssertionType, str, Any], ...]:
    """Every assertion ``expect`` asks for, in report order: (its type, its id, its spec).
    Kept on the (immutable) expectation: every attempt of a scenario asks the same."""
    cached: tuple[tuple[AssertionType, str, Any], ...] | None = expect.__dict__.get("_requested")
    if cached is None:
        cached = tuple((BY_KEY[key], a, spec) for key in requested_keys(expect) for a, spec in BY_KEY[key].requested(expect))
        object.__setattr__(expect, "_requested", cached)
    return cached


def scenario_assertions(scenario: Scenario) -> list[tuple[str, str]]:
    """(assertion id, kind) of every check a scenario asks for, in report order: its own, then
    each scripted user turn's as ``turns[i].<id>`` (what judge/evaluate.py reports)."""
    found = [(a, entry.kind) for entry, a, _ in requested_assertions(scenario.expect)]
    for index, turn in enumerate(scenario.turns):
        if turn.expect is not None:
            found += [(f"turns[{index}].{a}", entry.kind) for entry, a, _ in requested_assertions(turn.expect)]
    return found
