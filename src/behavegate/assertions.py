"""Every assertion behavegate judges, in one registry keyed by contract key.

An assertion is a pure function of what the contract asked for and the
evidence of one attempt. It passes only on typed evidence; when the evidence
gate is closed or the field was not observed it is *incomplete*, never a pass
and never a failure. Messages keep skylos's exact wording.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from .matching import unclaimed
from .model import Expectation, Observation, RequiredCall, Verdict


@dataclass(frozen=True)
class Evidence:
    """One attempt's observation and why parts of it cannot be judged."""

    observation: Observation | None
    response_gap: str | None  # set when final-response evidence is not usable
    tool_gap: str | None  # set when tool-call evidence is not usable
    assignment: Mapping[int, int]  # tools.required index -> claimed call index


Judge = Callable[[str, Any, Evidence], Verdict]
Requested = Callable[[Expectation], list[tuple[str, Any]]]


@dataclass(frozen=True)
class AssertionType:
    key: str  # the contract key, e.g. "tools.required"
    kind: str  # the report's kind, e.g. "tool_required"
    requested: Requested  # (assertion id, spec) for each assertion the contract asks for
    judge: Judge


def _checked(assertion: str, kind: str, passed: bool, ok: str, bad: str, expected: Any, observed: Any) -> Verdict:
    return Verdict(assertion, kind, "pass" if passed else "fail", ok if passed else bad, expected, observed)


def _incomplete(assertion: str, kind: str, message: str, expected: Any, observed: Any = None) -> Verdict:
    return Verdict(assertion, kind, "incomplete", message, expected, observed)


def _each(key: str, values: tuple[Any, ...]) -> list[tuple[str, Any]]:
    return [(f"{key}[{index}]", (index, value)) for index, value in enumerate(values)]


def _once(key: str, value: Any) -> list[tuple[str, Any]]:
    return [] if value is None else [(key, value)]


# --- final response -------------------------------------------------------------


def _response_text(assertion: str, kind: str, expected: str, ev: Evidence) -> str | Verdict:
    obs = ev.observation
    if ev.response_gap or obs is None or obs.response is None:
        return _incomplete(assertion, kind, ev.response_gap or "final response text was not observed", expected)
    return obs.response


def judge_contains(assertion: str, spec: tuple[int, str], ev: Evidence) -> Verdict:
    expected = spec[1]
    text = _response_text(assertion, "response_contains", expected, ev)
    if isinstance(text, Verdict):
        return text
    return _checked(
        assertion, "response_contains", expected in text,
        f"response contains {expected!r}", f"response does not contain {expected!r}",
        expected, {"response_length": len(text)},
    )  # fmt: skip


def judge_excludes(assertion: str, spec: tuple[int, str], ev: Evidence) -> Verdict:
    expected = spec[1]
    text = _response_text(assertion, "response_excludes", expected, ev)
    if isinstance(text, Verdict):
        return text
    return _checked(
        assertion, "response_excludes", expected not in text,
        f"response excludes {expected!r}", f"response contains forbidden text {expected!r}",
        expected, {"response_length": len(text)},
    )  # fmt: skip


def judge_refusal(assertion: str, expected: bool, ev: Evidence) -> Verdict:
    obs = ev.observation
    if ev.response_gap or obs is None or obs.refusal is None:
        return _incomplete(assertion, "refusal", ev.response_gap or "explicit refusal evidence was not observed", expected)
    return _checked(
        assertion, "refusal", obs.refusal is expected,
        f"explicit refusal is {expected}", f"explicit refusal is {obs.refusal}, expected {expected}",
        expected, obs.refusal,
    )  # fmt: skip


def judge_source(assertion: str, spec: tuple[int, str], ev: Evidence) -> Verdict:
    expected = spec[1]
    obs = ev.observation
    if ev.response_gap or obs is None or obs.sources is None:
        return _incomplete(assertion, "source_required", ev.response_gap or "explicit source evidence was not observed", expected)
    present = expected in obs.sources
    return _checked(
        assertion, "source_required", present,
        f"required source {expected!r} was observed", f"required source {expected!r} was not observed",
        expected, {"source_count": len(obs.sources), "present": present},
    )  # fmt: skip


# --- tool calls ---------------------------------------------------------------------


def _tool_names(assertion: str, kind: str, expected: Any, ev: Evidence) -> list[str] | Verdict:
    obs = ev.observation
    if ev.tool_gap or obs is None or obs.tool_calls is None:
        return _incomplete(assertion, kind, ev.tool_gap or "tool calls were not observed", expected)
    return [call.name for call in obs.tool_calls]


def judge_required(assertion: str, spec: tuple[int, RequiredCall], ev: Evidence) -> Verdict:
    index, required = spec
    kind = "tool_required"
    names = _tool_names(assertion, kind, required.as_dict(), ev)
    if isinstance(names, Verdict):
        return names
    assert ev.observation is not None and ev.observation.tool_calls is not None
    calls = ev.observation.tool_calls
    call_index = ev.assignment.get(index)
    if call_index is not None:
        if required.arguments is None:
            return _checked(assertion, kind, True, f"required tool {required.name!r} was called", "",
                            required.as_dict(), {"call_index": call_index})  # fmt: skip
        return _checked(assertion, kind, True, f"required tool {required.name!r} matched expected arguments", "",
                        required.as_dict(), {"call_index": call_index, "arguments_matched": True})  # fmt: skip
    same_name = names.count(required.name)
    spare = unclaimed(required.name, calls, ev.assignment)
    if required.arguments is not None and any(calls[i].arguments is None for i in spare):
        return _incomplete(
            assertion, kind, f"arguments for tool {required.name!r} were not fully observed",
            required.as_dict(), {"matching_call_indices": spare, "arguments_observed": False},
        )  # fmt: skip
    if not same_name:
        message = f"required tool {required.name!r} was not called"
    elif required.arguments is not None and spare:
        message = f"tool {required.name!r} was called with non-matching arguments"
    else:
        message = f"required tool {required.name!r} needs another distinct call"
    return _checked(assertion, kind, False, "", message, required.as_dict(),
                    {"call_count": len(calls), "matching_name_count": same_name})  # fmt: skip


def judge_allowed(assertion: str, allowed: tuple[str, ...], ev: Evidence) -> Verdict:
    names = _tool_names(assertion, "tools_allowed", list(allowed), ev)
    if isinstance(names, Verdict):
        return names
    permitted = set(allowed)
    unexpected = [name for name in names if name not in permitted]
    return _checked(
        assertion, "tools_allowed", not unexpected,
        "all observed tools are allowed", f"observed tools outside the allowed set: {unexpected}",
        list(allowed), {"call_count": len(names), "unexpected": unexpected},
    )  # fmt: skip


def judge_forbidden(assertion: str, spec: tuple[int, str], ev: Evidence) -> Verdict:
    name = spec[1]
    names = _tool_names(assertion, "tool_forbidden", name, ev)
    if isinstance(names, Verdict):
        return names
    hits = [index for index, called in enumerate(names) if called == name]
    return _checked(
        assertion, "tool_forbidden", not hits,
        f"forbidden tool {name!r} was not called", f"forbidden tool {name!r} was called",
        name, {"call_count": len(names), "matching_call_indices": hits},
    )  # fmt: skip


def judge_exact_sequence(assertion: str, sequence: tuple[str, ...], ev: Evidence) -> Verdict:
    names = _tool_names(assertion, "tool_exact_sequence", list(sequence), ev)
    if isinstance(names, Verdict):
        return names
    return _checked(
        assertion, "tool_exact_sequence", names == list(sequence),
        "tool call sequence matches exactly", "tool call sequence does not match",
        list(sequence), names,
    )  # fmt: skip


def judge_max_calls(assertion: str, limit: int, ev: Evidence) -> Verdict:
    names = _tool_names(assertion, "tool_max_calls", limit, ev)
    if isinstance(names, Verdict):
        return names
    count = len(names)
    return _checked(
        assertion, "tool_max_calls", count <= limit,
        f"tool call count {count} is within limit {limit}", f"tool call count {count} exceeds limit {limit}",
        limit, count,
    )  # fmt: skip


# --- the registry, in report order ------------------------------------------------------

REGISTRY: tuple[AssertionType, ...] = (
    AssertionType("response.contains", "response_contains", lambda e: _each("response.contains", e.contains), judge_contains),
    AssertionType("response.excludes", "response_excludes", lambda e: _each("response.excludes", e.excludes), judge_excludes),
    AssertionType("tools.required", "tool_required", lambda e: _each("tools.required", e.required), judge_required),
    AssertionType("tools.allowed", "tools_allowed", lambda e: _once("tools.allowed", e.allowed), judge_allowed),
    AssertionType("tools.forbidden", "tool_forbidden", lambda e: _each("tools.forbidden", e.forbidden), judge_forbidden),
    AssertionType("tools.exact_sequence", "tool_exact_sequence", lambda e: _once("tools.exact_sequence", e.exact_sequence), judge_exact_sequence),
    AssertionType("tools.max_calls", "tool_max_calls", lambda e: _once("tools.max_calls", e.max_calls), judge_max_calls),
    AssertionType("refusal", "refusal", lambda e: _once("refusal", e.refusal), judge_refusal),
    AssertionType("sources.required", "source_required", lambda e: _each("sources.required", e.sources), judge_source),
)  # fmt: skip

BY_KEY: dict[str, AssertionType] = {entry.key: entry for entry in REGISTRY}
