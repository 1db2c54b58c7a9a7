"""The evidence one attempt offers the checks, and the two ways a check ends
without a pass: a failure (``checked``) or missing evidence (``incomplete``)."""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from behavegate.frozen import Frozen, field
from behavegate.judge import gaps as evidence_gaps
from behavegate.model import AgentTarget, Observation, Scenario, ToolCall, Verdict

if TYPE_CHECKING:  # imported where patterns are searched, not on every run
    from behavegate.judge.user_regex import PatternResult

EMPTY_PATTERNS: Mapping[str, PatternResult] = MappingProxyType({})  # shared by every Evidence: read-only


class Evidence(Frozen):
    """One attempt's observation and why parts of it cannot be judged."""

    observation: Observation | None
    response_gap: str | None  # set when final-response evidence is not usable
    tool_gap: str | None  # set when tool-call evidence is not usable
    assignment: Mapping[int, int]  # tools.required index -> claimed call index
    scenario: Scenario | None = None
    agent: AgentTarget | None = None
    # response.matches / not_matches assertion id -> its search, run once per attempt under one time budget
    patterns: Mapping[str, PatternResult] = field(default_factory=lambda: EMPTY_PATTERNS)
    # Version 2, tool evidence incomplete: the calls that could be read (a lower bound, e.g. the earlier
    # turns of a conversation whose last answer left its calls out). A check they already decide
    # (a forbidden call seen, a required call matched) is decided on them; the rest stay incomplete.
    seen: tuple[ToolCall, ...] = ()


def checked(assertion: str, kind: str, passed: bool, ok: str, bad: str, expected: Any, observed: Any) -> Verdict:
    return Verdict(assertion, kind, "pass" if passed else "fail", ok if passed else bad, expected, observed)


def incomplete(assertion: str, kind: str, message: str, expected: Any, observed: Any = None) -> Verdict:
    return Verdict(assertion, kind, "incomplete", message, expected, observed)


def partly(verdict: Verdict, ev: Evidence) -> Verdict:
    """A verdict decided on the calls that could be read, saying so."""
    message = f"{verdict.message} (decided on the {len(ev.seen)} tool call(s) that could be read; the rest: {ev.tool_gap})"
    return Verdict(verdict.assertion, verdict.kind, verdict.status, message, verdict.expected, verdict.observed)


def observation_gap(ev: Evidence) -> str | None:
    return evidence_gaps.observation_gap(ev.observation)
