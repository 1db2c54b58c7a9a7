"""Which tools a trace's agent called: tool spans (executed) joined to the calls the model
steps requested, in order, with the calls one step asked for together grouped; and why the
calls cannot be judged when they cannot (unknown is never zero)."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

from behavegate.evidence.traces.messages import ModelReading, Requested
from behavegate.evidence.traces.record import TraceCall
from behavegate.evidence.traces.spans import Span
from behavegate.evidence.traces.tool_spans import ToolReading, read_tool
from behavegate.frozen import replace
from behavegate.limits import TRACE_MAX_CALLS

_LATE = float("inf")
TOOL_NAME = re.compile(r"[A-Za-z0-9_-]{1,64}")  # the live adapter's rule (evidence/chat.py)
_UNEXPLAINED_GROUPS = 1_000_000  # group numbers for overlapping calls no model step requested
CALLS_NOT_READ = (
    "calls not known: model step {span} ended asking for tools (finish_reason tool_calls), but the calls it asked "
    "for are in no attribute behavegate reads and no tool span shows what ran"
)
NO_TOOL_EVIDENCE = (
    "the trace has no tool spans and its model steps' outputs were not recorded (content capture off?), "
    "so which tools were called cannot be told"
)


def trace_calls(models: Sequence[Span], readings: Sequence[ModelReading], tools: Sequence[Span]) -> tuple[TraceCall, ...]:
    requested: list[tuple[int, int, Requested]] = [
        (step, position, call) for step, reading in enumerate(readings) for position, call in enumerate(reading.requested)
    ]
    by_id: dict[str, list[int]] = {}
    for index, (_, _, call) in enumerate(requested):
        if call.call_id:
            by_id.setdefault(call.call_id, []).append(index)
    names = _RequestIndex(requested, models)
    history = {key: value for reading in readings for key, value in reading.history.items()}
    claimed = names.claimed
    ordered: list[tuple[tuple[float, float, float], TraceCall, Span | None]] = []
    for tool in tools:
        found = read_tool(tool)
        if found.call_id:  # ids may be reused by later turns: the latest request of that name before the tool
            same = [i for i in by_id.get(found.call_id, ()) if requested[i][2].name == found.name and names.before(i, tool)]
            match = next((i for i in reversed(same) if i not in claimed), None)
        else:
            match = names.first(found, tool)
        origin = requested[match] if match is not None else None
        if match is not None:
            claimed.add(match)
        arguments = found.arguments
        if arguments is None and origin is not None:
            arguments = origin[2].arguments
        call_id = found.call_id or (origin[2].call_id if origin else None)
        if arguments is None and call_id is not None:
            arguments = history.get(call_id)
        start = tool.start_ns if tool.start_ns is not None else _LATE
        key = (start, origin[0], origin[1]) if origin else (start, _LATE, len(ordered))
        # Calls the model asked for in one turn share its step. A call no step explains
        # (content capture off) is grouped only with calls it ran at the same time as.
        group = origin[0] if origin else None
        ordered.append(
            (key, TraceCall(found.name, call_id, arguments, found.result, found.error, True, group, tool.start_ns), tool)
        )
    for index, (step, position, call) in enumerate(requested):
        if index in claimed:
            continue
        span = models[step]
        when = span.end_ns if span.end_ns is not None else span.start_ns
        key = (when if when is not None else _LATE, step, position)
        ordered.append((key, TraceCall(call.name, call.call_id, call.arguments, None, None, False, step, when), None))
    ordered.sort(key=lambda item: item[0])
    return _group_overlapping([(call, span) for _, call, span in ordered])


class _RequestIndex:
    """Requested calls by name (and by name and arguments), in request order, for matching
    tool spans that carry no call id: each lookup skips what was claimed, so matching a
    trace's calls is linear, not quadratic."""

    def __init__(self, requested: Sequence[tuple[int, int, Requested]], models: Sequence[Span]) -> None:
        self.requested, self.models = requested, models
        self.claimed: set[int] = set()
        self.lists: dict[Any, list[int]] = {}
        self.heads: dict[Any, int] = {}
        for index, (_, _, call) in enumerate(requested):
            self.lists.setdefault(call.name, []).append(index)
            if call.arguments is not None:
                self.lists.setdefault((call.name, _key(call.arguments)), []).append(index)

    def before(self, index: int, tool: Span) -> bool:
        began = self.models[self.requested[index][0]].start_ns
        return began is None or tool.start_ns is None or began <= tool.start_ns

    def _head(self, key: Any) -> int | None:
        found, position = self.lists.get(key, []), self.heads.get(key, 0)
        while position < len(found) and found[position] in self.claimed:
            position += 1
        self.heads[key] = position
        return found[position] if position < len(found) else None

    def first(self, found: ToolReading, tool: Span) -> int | None:
        """The first unclaimed request of the name from a step begun before the tool: with the
        same arguments if there is one. (Steps are in start order, so only the head can be.)"""
        keys = ([(found.name, _key(found.arguments))] if found.arguments is not None else []) + [found.name]
        for key in keys:
            head = self._head(key)
            if head is not None and self.before(head, tool):
                return head
        return None


def _key(arguments: Mapping[str, Any]) -> str:
    return json.dumps(arguments, sort_keys=True, default=str)


def _group_overlapping(calls: list[tuple[TraceCall, Span | None]]) -> tuple[TraceCall, ...]:
    """Executed calls no model step explains, running at once under one parent, are a group too."""
    result = [call for call, _ in calls]
    next_group = _UNEXPLAINED_GROUPS
    for index in range(1, len(calls)):
        a, b = calls[index - 1][1], calls[index][1]
        before, call = result[index - 1], result[index]
        explained = call.group is not None or (before.group is not None and before.group < _UNEXPLAINED_GROUPS)
        if explained or a is None or b is None or a.parent_id != b.parent_id:
            continue
        if a.end_ns is None or b.start_ns is None or b.start_ns >= a.end_ns:
            continue
        if before.group is None:  # the two ran at once: start a group, or join the one before
            before = result[index - 1] = replace(before, group=next_group)
            next_group += 1
        result[index] = replace(call, group=before.group)
    return tuple(result)


def _unread_request(models: Sequence[Span], readings: Sequence[ModelReading], tools: Sequence[Span]) -> str | None:
    """The first model step that ended asking for tools (finish reason ``tool_calls``) whose
    calls could not be read, with no tool span after it to show what ran; None if none."""
    for index, (span, reading) in enumerate(zip(models, readings, strict=True)):
        if not reading.captured or "tool_calls" not in reading.finish_reasons or reading.requested:
            continue  # content capture off is said as such (NO_TOOL_EVIDENCE)
        after = span.end_ns if span.end_ns is not None else span.start_ns
        following = models[index + 1].start_ns if index + 1 < len(models) else None
        ran = any(
            (after is None or tool.start_ns is None or tool.start_ns >= after)
            and (following is None or tool.start_ns is None or tool.start_ns <= following)
            for tool in tools
        )
        if not ran:
            return span.span_id
    return None


def calls_gap(
    models: Sequence[Span], tools: Sequence[Span], readings: Sequence[ModelReading], calls: Sequence[TraceCall]
) -> str | None:
    if len(calls) > TRACE_MAX_CALLS:
        return f"the trace has {len(calls)} tool calls, more than the {TRACE_MAX_CALLS} behavegate judges"
    odd = next((i for i, call in enumerate(calls) if not TOOL_NAME.fullmatch(call.name)), None)
    if odd is not None:  # as the live adapter: a name no contract can list is no evidence of which tool ran
        return f"tool call {odd} has a name behavegate cannot judge ({calls[odd].name!r}): tool names are 1-64 letters, digits, '_' or '-'"
    unread = _unread_request(models, readings, tools)
    if unread is not None:  # unknown is never zero: a step that asked for tools we cannot read
        return CALLS_NOT_READ.format(span=unread)
    if tools:
        return None
    if readings and all(r.captured for r in readings):
        return None  # the model's requested calls are the evidence (executed: false)
    if readings and all(r.finish_reasons and "tool_calls" not in r.finish_reasons for r in readings):
        return None  # every step says it ended without asking for a tool
    return NO_TOOL_EVIDENCE
