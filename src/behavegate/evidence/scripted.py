"""Scripted tool results: what behavegate answers a tool call with (tools are never run).

Two forms (version 2): the mapping ``{tool_name: result}`` (one result per name; a
call to an unscripted tool gets an error result and the conversation goes on), and
the rule list ``[{name, arguments?, content | error}, ..., {default: ...}]``: the
first rule whose name equals the call's and whose ``arguments`` are a JSON subset of
the call's answers it, else the default; no match and no default stops the attempt
(incomplete, naming the call). A rule may answer with a sequence (``results``: its first
call, second call, ..., then its ``content``/``error`` or the last again), fill its result
from the call's arguments and the scenario's ``state`` (tool_templates.py), and write that
state (``set``). The state and each rule's use count are the attempt's :class:`ScriptState`,
passed in and returned: pure functions, deterministic.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from behavegate.contract.subset import json_subset
from behavegate.contract.tool_templates import Unresolved, render
from behavegate.conversation import ScriptedResult, ToolResultRule
from behavegate.frozen import Frozen, field
from behavegate.limits import SHOWN_CALL_CHARS, SHOWN_POSITIONS, SHOWN_REPEATS, TOOL_RESULT_MAX_DEPTH
from behavegate.model import JSON, Scenario, ToolCall
from behavegate.text import one_line


class ScriptState(Frozen):
    """What an attempt's scripted tools remember: calls answered per rule (by its index in the
    rule list) and the scenario's key-value store as written so far."""

    uses: Mapping[int, int] = field(default_factory=dict)
    store: Mapping[str, Any] = field(default_factory=dict)


def start(scenario: Scenario) -> ScriptState:
    """The state an attempt begins with: no rule used, the store as the scenario declares it."""
    return ScriptState({}, json.loads(json.dumps(dict(scenario.state))))


class Answer(Frozen):
    """The tool message's content, the record kept as evidence, and the state after the call."""

    content: str
    record: ScriptedResult
    state: ScriptState = field(default_factory=ScriptState)


class Unanswerable(Frozen):
    """A call whose rule's result names a placeholder with no value (the attempt stops)."""

    reason: str


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


def rule_index(rules: Sequence[ToolResultRule], call: ToolCall) -> int | None:
    """The index of the first rule matching ``call`` by name and argument subset, else the default's."""
    for position, rule in enumerate(rules):
        if rule.name is None or rule.name != call.name:
            continue
        if rule.arguments is None or (call.arguments is not None and json_subset(dict(rule.arguments), call.arguments)):
            return position
    return next((position for position, rule in enumerate(rules) if rule.name is None), None)


def rule_for(rules: Sequence[ToolResultRule], call: ToolCall) -> ToolResultRule | None:
    """The first rule matching ``call`` by name and argument subset, else the default."""
    position = rule_index(rules, call)
    return None if position is None else rules[position]


def answer(scenario: Scenario, call: ToolCall, index: int, state: ScriptState | None = None) -> Answer | Unanswerable | None:
    """The scripted answer to the attempt's call number ``index`` given what the attempt's
    tools remember (``state``; None: a fresh attempt); None: no rule matches it."""
    state = state if state is not None else start(scenario)
    if scenario.tool_rules is None:
        return _from_mapping(scenario.tool_results, call, index, state)
    position = rule_index(scenario.tool_rules, call)
    if position is None:
        return None
    rule = scenario.tool_rules[position]
    uses = state.uses.get(position, 0)
    reply = rule.reply(uses)
    arguments = call.arguments if call.arguments is not None else {}
    try:
        # Filled from the state as it was before this call; then the call's writes.
        content = render(reply.content, arguments, state.store)
        error = None if reply.error is None else str(render(reply.error, arguments, state.store))
        written = {key: render(value, arguments, state.store) for key, value in (rule.set or {}).items()}
    except Unresolved as missing:
        return Unanswerable(
            f"the tool_results rule for the call {shown_call(call)} names {one_line(missing.text, 80)}, "
            "which has no value (a placeholder is never filled with nothing)"
        )
    # A value written into itself (set: {cart: ["{{state.cart}}", ...]}) nests one level deeper each
    # call; past the bound its record could not be read back (an observation file nests 32 deep at most).
    if any(deeper_than(value, TOOL_RESULT_MAX_DEPTH) for value in (content, *written.values())):
        return Unanswerable(
            f"the tool_results rule for the call {shown_call(call)} would answer or store a value that nests "
            f"deeper than {TOOL_RESULT_MAX_DEPTH} levels (does a set write a state key into itself?)"
        )
    after = ScriptState({**state.uses, position: uses + 1}, {**state.store, **written})
    if error is not None:
        return Answer(json.dumps({"error": error}), ScriptedResult(index, call.name, error=error), after)
    return Answer(_text(content), ScriptedResult(index, call.name, content=content), after)


def deeper_than(value: Any, most: int) -> bool:
    """Does ``value`` hold a list or object more than ``most`` levels down?"""
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict | list):
            if depth >= most:
                return True
            stack.extend((child, depth + 1) for child in (item.values() if isinstance(item, dict) else item))
    return False


def _from_mapping(results: Mapping[str, JSON], call: ToolCall, index: int, state: ScriptState) -> Answer:
    name = call.name
    if name not in results:
        error = f"no scripted result for tool {name!r}"
        return Answer(json.dumps({"error": error}), ScriptedResult(index, name, error=error), state)
    result = results[name]
    if isinstance(result, dict) and "error" in result:
        return Answer(json.dumps(result), ScriptedResult(index, name, error=str(result["error"])), state)
    return Answer(_text(result), ScriptedResult(index, name, content=result), state)


def _text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value)


def unmatched_reason(call: ToolCall, turn: int) -> str:
    return (
        f"no tool_results rule matches the call {shown_call(call)} at turn {turn}: add a rule for it, or a {{default: ...}} rule"
    )
