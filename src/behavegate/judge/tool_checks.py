"""Checks of the tool calls an agent made: required (with argument subsets),
allowed, forbidden, sequences, counts, argument schemas, known tools, tool errors."""

from __future__ import annotations

from typing import Any

from behavegate.judge import trajectory
from behavegate.judge.evidence import Evidence, checked, incomplete
from behavegate.judge.matching import unclaimed
from behavegate.model import CallCount, RequiredCall, ToolCall, TrajectorySpec, Verdict

# --- tool calls ---------------------------------------------------------------------


def _tool_names(assertion: str, kind: str, expected: Any, ev: Evidence) -> list[str] | Verdict:
    obs = ev.observation
    if ev.tool_gap or obs is None or obs.tool_calls is None:
        return incomplete(assertion, kind, ev.tool_gap or "tool calls were not observed", expected)
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
            return checked(
                assertion,
                kind,
                True,
                f"required tool {required.name!r} was called",
                "",
                required.as_dict(),
                {"call_index": call_index},
            )
        return checked(
            assertion,
            kind,
            True,
            f"required tool {required.name!r} matched expected arguments",
            "",
            required.as_dict(),
            {"call_index": call_index, "arguments_matched": True},
        )
    same_name = names.count(required.name)
    spare = unclaimed(required.name, calls, ev.assignment)
    if required.arguments is not None and any(calls[i].arguments is None for i in spare):
        return incomplete(
            assertion,
            kind,
            f"arguments for tool {required.name!r} were not fully observed",
            required.as_dict(),
            {"matching_call_indices": spare, "arguments_observed": False},
        )
    if not same_name:
        message = f"required tool {required.name!r} was not called"
    elif required.arguments is not None and spare:
        message = f"tool {required.name!r} was called with non-matching arguments"
    else:
        message = f"required tool {required.name!r} needs another distinct call"
    return checked(
        assertion, kind, False, "", message, required.as_dict(), {"call_count": len(calls), "matching_name_count": same_name}
    )


def judge_allowed(assertion: str, allowed: tuple[str, ...], ev: Evidence) -> Verdict:
    names = _tool_names(assertion, "tools_allowed", list(allowed), ev)
    if isinstance(names, Verdict):
        return names
    permitted = set(allowed)
    unexpected = [name for name in names if name not in permitted]
    return checked(
        assertion,
        "tools_allowed",
        not unexpected,
        "all observed tools are allowed",
        f"observed tools outside the allowed set: {unexpected}",
        list(allowed),
        {"call_count": len(names), "unexpected": unexpected},
    )


def judge_forbidden(assertion: str, spec: tuple[int, str], ev: Evidence) -> Verdict:
    name = spec[1]
    names = _tool_names(assertion, "tool_forbidden", name, ev)
    if isinstance(names, Verdict):
        return names
    hits = [index for index, called in enumerate(names) if called == name]
    return checked(
        assertion,
        "tool_forbidden",
        not hits,
        f"forbidden tool {name!r} was not called",
        f"forbidden tool {name!r} was called",
        name,
        {"call_count": len(names), "matching_call_indices": hits},
    )


def judge_exact_sequence(assertion: str, sequence: tuple[str, ...], ev: Evidence) -> Verdict:
    names = _tool_names(assertion, "tool_exact_sequence", list(sequence), ev)
    if isinstance(names, Verdict):
        return names
    assert ev.observation is not None and ev.observation.tool_calls is not None
    in_sequence = trajectory.exact([RequiredCall(name) for name in sequence], ev.observation.tool_calls)
    return checked(
        assertion,
        "tool_exact_sequence",
        in_sequence,
        "tool call sequence matches exactly",
        "tool call sequence does not match",
        list(sequence),
        names,
    )


def judge_max_calls(assertion: str, limit: int, ev: Evidence) -> Verdict:
    names = _tool_names(assertion, "tool_max_calls", limit, ev)
    if isinstance(names, Verdict):
        return names
    count = len(names)
    return checked(
        assertion,
        "tool_max_calls",
        count <= limit,
        f"tool call count {count} is within limit {limit}",
        f"tool call count {count} exceeds limit {limit}",
        limit,
        count,
    )


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
    return checked(
        assertion,
        "tool_min_calls",
        len(calls) >= minimum,
        f"tool call count {len(calls)} reaches {minimum}",
        f"expected at least {minimum} tool calls, observed {len(calls)}",
        minimum,
        len(calls),
    )


def judge_call_count(assertion: str, count: CallCount, ev: Evidence) -> Verdict:
    expected = {"min": count.min, "max": count.max}
    calls = _calls(assertion, "tool_call_count", expected, ev)
    if isinstance(calls, Verdict):
        return calls
    seen = sum(call.name == count.name for call in calls)
    ok = (count.min is None or seen >= count.min) and (count.max is None or seen <= count.max)
    bounds = " and ".join(
        p
        for p in (
            f"at least {count.min}" if count.min is not None else "",
            f"at most {count.max}" if count.max is not None else "",
        )
        if p
    )
    return checked(
        assertion,
        "tool_call_count",
        ok,
        f"tool {count.name!r} was called {seen} times",
        f"expected {bounds} calls of {count.name!r}, observed {seen}",
        expected,
        seen,
    )


def judge_sequence(assertion: str, sequence: TrajectorySpec, ev: Evidence) -> Verdict:
    expected = {"mode": sequence.mode, "calls": [c.as_dict() for c in sequence.calls]}
    calls = _calls(assertion, "tool_sequence", expected, ev)
    if isinstance(calls, Verdict):
        return calls
    ok = trajectory.matches(sequence.mode, sequence.calls, calls)
    with_arguments = {c.name for c in sequence.calls if c.arguments is not None}
    unseen = [i for i, c in enumerate(calls) if c.name in with_arguments and c.arguments is None]
    if not ok and unseen:  # it might have matched on the arguments nobody recorded
        return incomplete(
            assertion,
            "tool_sequence",
            f"arguments of tool call {unseen[0]} ({calls[unseen[0]].name!r}) were not observed",
            expected,
            {"calls": [c.name for c in calls], "arguments_observed": False},
        )
    names = [c.name for c in calls]
    wanted = [c.name for c in sequence.calls]
    return checked(
        assertion,
        "tool_sequence",
        ok,
        f"tool calls match the reference ({sequence.mode})",
        f"expected calls matching {wanted} ({sequence.mode}), observed {names}",
        expected,
        names,
    )


def judge_tool_set(assertion: str, names: tuple[str, ...], ev: Evidence) -> Verdict:
    calls = _calls(assertion, "tool_set", sorted(set(names)), ev)
    if isinstance(calls, Verdict):
        return calls
    seen = sorted({c.name for c in calls})
    return checked(
        assertion,
        "tool_set",
        seen == sorted(set(names)),
        "the set of tools called is as expected",
        f"expected exactly the tools {sorted(set(names))}, observed {seen}",
        sorted(set(names)),
        seen,
    )


def judge_arguments_valid(assertion: str, wanted: bool, ev: Evidence) -> Verdict:
    calls = _calls(assertion, "tool_arguments_valid", wanted, ev)
    if isinstance(calls, Verdict):
        return calls
    from behavegate.judge.argument_schemas import check_calls

    schemas = {tool.name: tool.parameters for tool in (ev.agent.tools if ev.agent else ())}
    checks = check_calls(calls, schemas)
    timed_out = next((index for index, check in enumerate(checks) if check.incomplete), None)
    if timed_out is not None and wanted:  # `false` asks nothing that a slow schema could decide
        return incomplete(
            assertion,
            "tool_arguments_valid",
            checks[timed_out].incomplete or "",
            wanted,
            {"call_count": len(calls), "call_index": timed_out, "tool": calls[timed_out].name},
        )
    problems = [
        {"call_index": index, "tool": call.name, "problem": problem}
        for index, (call, check) in enumerate(zip(calls, checks, strict=True))
        for problem in check.problems
    ]
    ok = not problems if wanted else True
    return checked(
        assertion,
        "tool_arguments_valid",
        ok,
        f"all {len(calls)} calls have valid arguments",
        f"expected arguments valid against the declared schemas, observed {len(problems)} problem(s): "
        f"{problems[0]['tool']}: {problems[0]['problem']}"
        if problems
        else "",
        wanted,
        {"call_count": len(calls), "problems": problems[:20]},
    )


def offered_tools(ev: Evidence) -> set[str]:
    agent, scenario = ev.agent, ev.scenario
    names = {tool.name for tool in agent.tools} if agent else set()
    if scenario is not None and scenario.available_tools is not None:
        names = set(scenario.available_tools)
    return names


def judge_known_only(assertion: str, wanted: bool, ev: Evidence) -> Verdict:
    calls = _calls(assertion, "tool_known_only", wanted, ev)
    if isinstance(calls, Verdict):
        return calls
    offered = offered_tools(ev)
    unknown = [c.name for c in calls if c.name not in offered]
    return checked(
        assertion,
        "tool_known_only",
        not unknown or not wanted,
        "every called tool was offered",
        f"expected calls to offered tools only {sorted(offered)}, observed calls to {unknown}",
        wanted,
        {"call_count": len(calls), "unknown": unknown},
    )


def judge_no_errors(assertion: str, wanted: bool, ev: Evidence) -> Verdict:
    calls = _calls(assertion, "tool_no_errors", wanted, ev)
    if isinstance(calls, Verdict):
        return calls
    errors = ev.observation.tool_errors if ev.observation else None
    if errors is None:
        return incomplete(assertion, "tool_no_errors", "tool results were not observed", wanted)
    failed = [{"call_index": i, "error": e} for i, e in enumerate(errors) if e is not None]
    return checked(
        assertion,
        "tool_no_errors",
        not failed or not wanted,
        "no tool call failed",
        f"expected no failed tool calls, observed {len(failed)}",
        wanted,
        {"failed": failed[:20]},
    )
