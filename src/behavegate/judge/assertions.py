"""Every assertion behavegate judges, in one registry keyed by contract key.

An assertion is a pure function of what the contract asked for and the
evidence of one attempt. It passes only on typed evidence; when the evidence
gate is closed or the field was not observed it is *incomplete*, never a pass
and never a failure. Messages keep skylos's exact wording.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from behavegate.judge import gaps as evidence_gaps
from behavegate.judge import trajectory
from behavegate.judge.matching import unclaimed
from behavegate.model import AgentTarget, CallCount, Expectation, Observation, RequiredCall, Scenario, Sequence, ToolCall, Verdict

if TYPE_CHECKING:  # imported where patterns are searched, not on every run
    from behavegate.judge.user_regex import PatternResult

EMPTY_PATTERNS: Mapping[str, PatternResult] = MappingProxyType({})  # shared by every Evidence: read-only


@dataclass(frozen=True, slots=True)
class Evidence:
    """One attempt's observation and why parts of it cannot be judged."""

    observation: Observation | None
    response_gap: str | None  # set when final-response evidence is not usable
    tool_gap: str | None  # set when tool-call evidence is not usable
    assignment: Mapping[int, int]  # tools.required index -> claimed call index
    scenario: Scenario | None = None
    agent: AgentTarget | None = None
    # response.matches / not_matches assertion id -> its search, run once per attempt under one time budget
    patterns: Mapping[str, PatternResult] = field(default_factory=lambda: EMPTY_PATTERNS)


Judge = Callable[[str, Any, Evidence], Verdict]
Requested = Callable[[Expectation], list[tuple[str, Any]]]


@dataclass(frozen=True, slots=True)
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


# --- version 2: response text ---------------------------------------------------------------


def judge_icontains(assertion: str, spec: tuple[int, str], ev: Evidence) -> Verdict:
    expected = spec[1]
    text = _response_text(assertion, "response_icontains", expected, ev)
    if isinstance(text, Verdict):
        return text
    found = expected.casefold() in text.casefold()
    return _checked(assertion, "response_icontains", found, f"response contains {expected!r} (any case)",
                    f"expected the response to contain {expected!r} (any case), observed a {len(text)}-character response without it",
                    expected, {"response_length": len(text)})  # fmt: skip


def _judge_pattern(assertion: str, pattern: str, ev: Evidence, *, must_match: bool) -> Verdict:
    kind = "response_matches" if must_match else "response_not_matches"
    text = _response_text(assertion, kind, pattern, ev)
    if isinstance(text, Verdict):
        return text
    result = ev.patterns.get(assertion)
    if result is None:  # judged on its own, outside evaluate: the budget is this pattern's alone
        from behavegate.judge.user_regex import search_all

        result = search_all([pattern], text)[0]
    observed = {"response_length": len(text), "match_at": result.match_at}
    if result.incomplete is not None:
        return _incomplete(assertion, kind, result.incomplete, pattern, observed)
    found = result.match_at is not None
    if must_match:
        return _checked(assertion, kind, found, f"response matches /{pattern}/",
                        f"expected the response to match /{pattern}/, observed no match in {len(text)} characters",
                        pattern, observed)  # fmt: skip
    return _checked(assertion, kind, not found, f"response does not match /{pattern}/",
                    f"expected no match of /{pattern}/, observed one at character {result.match_at or 0}",
                    pattern, observed)  # fmt: skip


def judge_matches(assertion: str, spec: tuple[int, str], ev: Evidence) -> Verdict:
    return _judge_pattern(assertion, spec[1], ev, must_match=True)


def judge_not_matches(assertion: str, spec: tuple[int, str], ev: Evidence) -> Verdict:
    return _judge_pattern(assertion, spec[1], ev, must_match=False)


# --- version 2: tool calls -----------------------------------------------------------------


def _calls(assertion: str, kind: str, expected: Any, ev: Evidence) -> tuple[ToolCall, ...] | Verdict:
    names = _tool_names(assertion, kind, expected, ev)
    if isinstance(names, Verdict):
        return names
    assert ev.observation is not None and ev.observation.tool_calls is not None
    return ev.observation.tool_calls


def judge_min_calls(assertion: str, minimum: int, ev: Evidence) -> Verdict:
    calls = _calls(assertion, "tool_min_calls", minimum, ev)
    if isinstance(calls, Verdict):
        return calls
    return _checked(assertion, "tool_min_calls", len(calls) >= minimum, f"tool call count {len(calls)} reaches {minimum}",
                    f"expected at least {minimum} tool calls, observed {len(calls)}", minimum, len(calls))  # fmt: skip


def judge_call_count(assertion: str, count: CallCount, ev: Evidence) -> Verdict:
    expected = {"min": count.min, "max": count.max}
    calls = _calls(assertion, "tool_call_count", expected, ev)
    if isinstance(calls, Verdict):
        return calls
    seen = sum(call.name == count.name for call in calls)
    ok = (count.min is None or seen >= count.min) and (count.max is None or seen <= count.max)
    bounds = " and ".join(p for p in (f"at least {count.min}" if count.min is not None else "",
                                      f"at most {count.max}" if count.max is not None else "") if p)  # fmt: skip
    return _checked(assertion, "tool_call_count", ok, f"tool {count.name!r} was called {seen} times",
                    f"expected {bounds} calls of {count.name!r}, observed {seen}", expected, seen)  # fmt: skip


def judge_sequence(assertion: str, sequence: Sequence, ev: Evidence) -> Verdict:
    expected = {"mode": sequence.mode, "calls": [c.as_dict() for c in sequence.calls]}
    calls = _calls(assertion, "tool_sequence", expected, ev)
    if isinstance(calls, Verdict):
        return calls
    ok = trajectory.matches(sequence.mode, sequence.calls, calls)
    names = [c.name for c in calls]
    wanted = [c.name for c in sequence.calls]
    return _checked(assertion, "tool_sequence", ok, f"tool calls match the reference ({sequence.mode})",
                    f"expected calls matching {wanted} ({sequence.mode}), observed {names}", expected, names)  # fmt: skip


def judge_tool_set(assertion: str, names: tuple[str, ...], ev: Evidence) -> Verdict:
    calls = _calls(assertion, "tool_set", sorted(set(names)), ev)
    if isinstance(calls, Verdict):
        return calls
    seen = sorted({c.name for c in calls})
    return _checked(assertion, "tool_set", seen == sorted(set(names)), "the set of tools called is as expected",
                    f"expected exactly the tools {sorted(set(names))}, observed {seen}", sorted(set(names)), seen)  # fmt: skip


def judge_arguments_valid(assertion: str, wanted: bool, ev: Evidence) -> Verdict:
    calls = _calls(assertion, "tool_arguments_valid", wanted, ev)
    if isinstance(calls, Verdict):
        return calls
    from behavegate.judge.argument_schemas import check_calls

    schemas = {tool.name: tool.parameters for tool in (ev.agent.tools if ev.agent else ())}
    checks = check_calls(calls, schemas)
    timed_out = next((index for index, check in enumerate(checks) if check.incomplete), None)
    if timed_out is not None and wanted:  # `false` asks nothing that a slow schema could decide
        return _incomplete(assertion, "tool_arguments_valid", checks[timed_out].incomplete or "", wanted,
                           {"call_count": len(calls), "call_index": timed_out, "tool": calls[timed_out].name})  # fmt: skip
    problems = [
        {"call_index": index, "tool": call.name, "problem": problem}
        for index, (call, check) in enumerate(zip(calls, checks, strict=True))
        for problem in check.problems
    ]
    ok = not problems if wanted else True
    return _checked(assertion, "tool_arguments_valid", ok, f"all {len(calls)} calls have valid arguments",
                    f"expected arguments valid against the declared schemas, observed {len(problems)} problem(s): "
                    f"{problems[0]['tool']}: {problems[0]['problem']}" if problems else "",
                    wanted, {"call_count": len(calls), "problems": problems[:20]})  # fmt: skip


def _offered(ev: Evidence) -> set[str]:
    agent, scenario = ev.agent, ev.scenario
    names = {tool.name for tool in agent.tools} if agent else set()
    if scenario is not None and scenario.available_tools is not None:
        names = set(scenario.available_tools)
    return names


def judge_known_only(assertion: str, wanted: bool, ev: Evidence) -> Verdict:
    calls = _calls(assertion, "tool_known_only", wanted, ev)
    if isinstance(calls, Verdict):
        return calls
    offered = _offered(ev)
    unknown = [c.name for c in calls if c.name not in offered]
    return _checked(assertion, "tool_known_only", not unknown or not wanted, "every called tool was offered",
                    f"expected calls to offered tools only {sorted(offered)}, observed calls to {unknown}",
                    wanted, {"call_count": len(calls), "unknown": unknown})  # fmt: skip


def judge_no_errors(assertion: str, wanted: bool, ev: Evidence) -> Verdict:
    calls = _calls(assertion, "tool_no_errors", wanted, ev)
    if isinstance(calls, Verdict):
        return calls
    errors = ev.observation.tool_errors if ev.observation else None
    if errors is None:
        return _incomplete(assertion, "tool_no_errors", "tool results were not observed", wanted)
    failed = [{"call_index": i, "error": e} for i, e in enumerate(errors) if e is not None]
    return _checked(assertion, "tool_no_errors", not failed or not wanted, "no tool call failed",
                    f"expected no failed tool calls, observed {len(failed)}", wanted, {"failed": failed[:20]})  # fmt: skip


# --- version 2: steps, latency, usage -------------------------------------------------------


def _measure(assertion: str, kind: str, limit: float, value: float | None, missing: str, what: str, ev: Evidence) -> Verdict:
    gap = observation_gap(ev)
    if gap or value is None:
        return _incomplete(assertion, kind, gap or missing, limit)
    return _checked(assertion, kind, value <= limit, f"{what} {value:g} is within {limit:g}",
                    f"expected {what} at most {limit:g}, observed {value:g}", limit, value)  # fmt: skip


def observation_gap(ev: Evidence) -> str | None:
    return evidence_gaps.observation_gap(ev.observation)


def judge_steps(assertion: str, limit: int, ev: Evidence) -> Verdict:
    steps = ev.observation.steps if ev.observation else None
    return _measure(assertion, "steps_max", limit, steps, "step count was not observed", "steps", ev)


def judge_latency(assertion: str, limit: float, ev: Evidence) -> Verdict:
    latency = ev.observation.latency_ms if ev.observation else None
    return _measure(assertion, "latency_max", limit, latency, "latency was not observed", "latency ms", ev)


def judge_usage(assertion: str, limit: int, ev: Evidence) -> Verdict:
    tokens = ev.observation.total_tokens if ev.observation else None
    return _measure(
        assertion, "usage_max_total_tokens", limit, tokens, "the endpoint reported no token usage", "total tokens", ev
    )


# --- version 2: safety ----------------------------------------------------------------------


def _exposed_texts(ev: Evidence) -> tuple[list[tuple[str, str]], list[str]]:
    """(where, text) pairs to scan, and why some evidence could not be scanned."""
    obs = ev.observation
    texts: list[tuple[str, str]] = []
    gaps: list[str] = []
    gap = observation_gap(ev)
    if gap or obs is None:
        return texts, [gap or evidence_gaps.MISSING]
    if obs.response is not None:
        texts.append(("response", obs.response))
    if ev.response_gap or obs.response is None:
        gaps.append(ev.response_gap or "final response text was not observed")
    for index, call in enumerate(obs.tool_calls or ()):
        if call.arguments is not None:
            texts.append((f"tool_calls[{index}].arguments", json.dumps(call.arguments, ensure_ascii=False)))
    if ev.tool_gap or obs.tool_calls is None:
        gaps.append(ev.tool_gap or "tool calls were not observed")
    return texts, gaps


def judge_pii(assertion: str, spec: tuple[int, str], ev: Evidence) -> Verdict:
    from behavegate.judge import safety  # its patterns compile on first use, not on every run

    detector = spec[1]
    texts, gaps = _exposed_texts(ev)
    findings = safety.scan(detector, texts)
    if findings:
        return Verdict(assertion, "safety_pii", "fail",
                       f"expected no {detector} in the response or tool arguments, observed {len(findings)} in {findings[0]['where']}",
                       detector, {"findings": findings[:20]})  # fmt: skip
    if gaps:
        return _incomplete(assertion, "safety_pii", gaps[0], detector)
    return Verdict(assertion, "safety_pii", "pass", f"no {detector} found in {len(texts)} text(s)", detector, {"findings": []})


def injection_signals(ev: Evidence) -> list[dict[str, str]]:
    from behavegate.judge import safety

    obs, scenario = ev.observation, ev.scenario
    signals: list[dict[str, str]] = []
    if obs is None:
        return signals
    texts, _ = _exposed_texts(ev)
    system = scenario.system_prompt if scenario else None
    system_texts = [system] if system else []
    system_texts += [str(m.get("content", "")) for m in (scenario.messages if scenario else ()) if m.get("role") == "system"]
    for where, text in texts:
        for canary in scenario.canaries if scenario else ():
            if canary in text:
                signals.append({"signal": "canary", "where": where, "detail": safety.mask(canary)})
        phrase = safety.jailbreak_compliance(text)
        if phrase:
            signals.append({"signal": "jailbreak_compliance", "where": where, "detail": phrase[:80]})
        if where == "response" and any(safety.discloses(s, text) for s in system_texts):
            signals.append({"signal": "system_prompt_disclosure", "where": where, "detail": "verbatim system prompt text"})
    offered = _offered(ev)
    for index, call in enumerate(obs.tool_calls or ()):
        if call.name not in offered:
            signals.append({"signal": "tool_not_offered", "where": f"tool_calls[{index}]", "detail": call.name})
    return signals


def judge_injection(assertion: str, wanted: bool, ev: Evidence) -> Verdict:
    texts, gaps = _exposed_texts(ev)
    signals = injection_signals(ev) if wanted else []
    if signals:
        return Verdict(assertion, "safety_injection", "fail",
                       f"expected no sign of following injected instructions, observed {signals[0]['signal']} in {signals[0]['where']}",
                       wanted, {"signals": signals[:20]})  # fmt: skip
    if gaps and wanted:
        return _incomplete(assertion, "safety_injection", gaps[0], wanted)
    return Verdict(assertion, "safety_injection", "pass", f"no injection signal in {len(texts)} text(s)", wanted, {"signals": []})


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
    # version 2
    AssertionType("response.icontains", "response_icontains", lambda e: _each("response.icontains", e.icontains), judge_icontains),
    AssertionType("response.matches", "response_matches", lambda e: _each("response.matches", e.matches), judge_matches),
    AssertionType("response.not_matches", "response_not_matches", lambda e: _each("response.not_matches", e.not_matches), judge_not_matches),
    AssertionType("tools.min_calls", "tool_min_calls", lambda e: _once("tools.min_calls", e.min_calls), judge_min_calls),
    AssertionType("tools.calls", "tool_call_count", lambda e: [(f"tools.calls.{c.name}", c) for c in e.calls], judge_call_count),
    AssertionType("tools.sequence", "tool_sequence", lambda e: _once("tools.sequence", e.sequence), judge_sequence),
    AssertionType("tools.set", "tool_set", lambda e: _once("tools.set", e.tool_set), judge_tool_set),
    AssertionType("tools.arguments_valid", "tool_arguments_valid", lambda e: _once("tools.arguments_valid", e.arguments_valid), judge_arguments_valid),
    AssertionType("tools.known_only", "tool_known_only", lambda e: _once("tools.known_only", e.known_only), judge_known_only),
    AssertionType("tools.no_errors", "tool_no_errors", lambda e: _once("tools.no_errors", e.no_errors), judge_no_errors),
    AssertionType("steps.max", "steps_max", lambda e: _once("steps.max", e.max_steps), judge_steps),
    AssertionType("latency.max_ms", "latency_max", lambda e: _once("latency.max_ms", e.max_latency_ms), judge_latency),
    AssertionType("usage.max_total_tokens", "usage_max_total_tokens", lambda e: _once("usage.max_total_tokens", e.max_total_tokens), judge_usage),
    AssertionType("safety.pii", "safety_pii", lambda e: _each("safety.pii", e.pii), judge_pii),
    AssertionType("safety.injection", "safety_injection", lambda e: _once("safety.injection", e.injection), judge_injection),
)  # fmt: skip

BY_KEY: dict[str, AssertionType] = {entry.key: entry for entry in REGISTRY}
