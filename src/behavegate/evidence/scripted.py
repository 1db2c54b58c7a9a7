"""Scripted tool results: what behavegate answers a tool call with (tools are never run).

Two forms (version 2): the mapping ``{tool_name: result}`` (one result per name; a
call to an unscripted tool gets an error result and the conversation goes on), and
the rule list ``[{name, arguments?, content | error}, ..., {default: ...}]``: the
first rule whose name equals the call's and whose ``arguments`` are a JSON subset of
the call's answers it, else the default; no match and no default stops the attempt
(incomplete, naming the call). Pure functions.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from behavegate.contract.subset import json_subset
from behavegate.conversation import ScriptedResult, ToolResultRule
from behavegate.frozen import frozen
from behavegate.limits import SHOWN_CALL_CHARS, SHOWN_POSITIONS, SHOWN_REPEATS
from behavegate.model import JSON, Scenario, ToolCall
from behavegate.text import one_line


@frozen
class Answer:
    """The tool message's content and the record kept as evidence."""

    content: str
    record: ScriptedResult


def scripts_results(scenario: Scenario) -> bool:
    """Does the scenario answer tool calls (so a conversation can go on past one request)?"""
    return bool(scenario.tool_results) or scenario.tool_rules is not None


def canonical_call(call: ToolCall) -> str:
    """``name {"arguments": ...}`` with sorted keys: identical calls, identical text."""
    if call.arguments is None:
        return f"{call.name} (arguments not observed)"
    return f"{call.name} {json.dumps(call.arguments, sort_keys=True, separators=(',', ':'), ensure_ascii=False)}"


def _call_text(call: ToolCall) -> str:
    return json.dumps({"name": call.name, "arguments": call.arguments}, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def repeated_calls(calls: tuple[ToolCall, ...]) -> list[tuple[ToolCall, list[int]]]:
    """Each call made more than once (same name, same arguments as canonical JSON) with
    its positions, in order of first appearance. Calls with unobserved arguments are left out."""
    positions: dict[str, list[int]] = {}
    first: dict[str, ToolCall] = {}
    for index, call in enumerate(calls):
        if call.arguments is None:
            continue
        key = _call_text(call)
        positions.setdefault(key, []).append(index)
        first.setdefault(key, call)
    return [(first[key], where) for key, where in positions.items() if len(where) > 1]


def shown_call(call: ToolCall) -> str:
    """A call as a message shows it: canonical, one line, at most 200 characters (agent text)."""
    return one_line(canonical_call(call), SHOWN_CALL_CHARS)


def describe_repeats(repeats: list[tuple[ToolCall, list[int]]]) -> str:
    """``lookup {"q":"A-1"} at calls 0, 2`` for each repeated call (call positions count
    from 0); the first few calls and positions, with how many more."""
    parts = []
    for call, where in repeats[:SHOWN_REPEATS]:
        positions = ", ".join(map(str, where[:SHOWN_POSITIONS]))
        more = f" and {len(where) - SHOWN_POSITIONS} more" if len(where) > SHOWN_POSITIONS else ""
        parts.append(f"{shown_call(call)} at calls {positions}{more}")
    if len(repeats) > SHOWN_REPEATS:
        parts.append(f"{len(repeats) - SHOWN_REPEATS} more calls repeated")
    return "; ".join(parts)


def rule_for(rules: Sequence[ToolResultRule], call: ToolCall) -> ToolResultRule | None:
    """The first rule matching ``call`` by name and argument subset, else the default."""
    for rule in rules:
        if rule.name is None or rule.name != call.name:
            continue
        if rule.arguments is None or (call.arguments is not None and json_subset(dict(rule.arguments), call.arguments)):
            return rule
    return next((rule for rule in rules if rule.name is None), None)


def answer(scenario: Scenario, call: ToolCall, index: int) -> Answer | None:
    """The scripted answer to the attempt's call number ``index``; None: no rule matches it."""
    if scenario.tool_rules is not None:
        rule = rule_for(scenario.tool_rules, call)
        if rule is None:
            return None
        if rule.error is not None:
            return Answer(json.dumps({"error": rule.error}), ScriptedResult(index, call.name, error=rule.error))
        return Answer(_text(rule.content), ScriptedResult(index, call.name, content=rule.content))
    return _from_mapping(scenario.tool_results, call, index)


def _from_mapping(results: Mapping[str, JSON], call: ToolCall, index: int) -> Answer:
    name = call.name
    if name not in results:
        error = f"no scripted result for tool {name!r}"
        return Answer(json.dumps({"error": error}), ScriptedResult(index, name, error=error))
    result = results[name]
    if isinstance(result, dict) and "error" in result:
        return Answer(json.dumps(result), ScriptedResult(index, name, error=str(result["error"])))
    return Answer(_text(result), ScriptedResult(index, name, content=result))


def _text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value)


def unmatched_reason(call: ToolCall, turn: int) -> str:
    return (
        f"no tool_results rule matches the call {shown_call(call)} at turn {turn}: add a rule for it, or a {{default: ...}} rule"
    )
