"""The spans of one trace as one attempt's evidence (a :class:`Trace`).

Rules (docs/traces.md states them for users):

* spans are classified model / tool / agent / workflow (``messages.classify``);
  a trace without a model, tool or agent span is not GenAI and is ignored;
* tool calls: every tool span (executed), joined to the model's requested call
  by call id, else by name in request order; requested calls no tool span
  executed are kept as ``executed: false``. Arguments come from the tool span,
  else from the requested call, else from the history by call id;
* order: start time, ties by the model's request order; calls one model step
  requested share a ``group`` (parallel calls);
* final answer: the outermost agent or workflow span's output (or a root span's
  ``gen_ai.completion``), else the last model output text;
* the file order and the parent links are never relied on: orphans are kept.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

from behavegate.errors import Problem, TraceError
from behavegate.evidence.traces.calls import calls_gap, trace_calls
from behavegate.evidence.traces.flattened import UnreadableText
from behavegate.evidence.traces.messages import (
    ModelReading,
    classify,
    mcp_tool_call,
    parse_json,
    read_messages,
    read_model,
)
from behavegate.evidence.traces.record import AgentSpan, ModelStep, Trace
from behavegate.evidence.traces.spans import Span
from behavegate.evidence.traces.tool_spans import read_output, read_tool
from behavegate.limits import TRACE_MAX_TEXT

_LATE = float("inf")
CONVERSATION = "gen_ai.conversation.id"
NO_STATUS = "tool span {span} records no status (an Assay row has none), so a failed call would look like a success"
MCP_CLIENT_OK = (
    "MCP client span {span} records the tools/call request, not the tool's result: a tool that answered with an "
    "error result (isError) leaves it OK, so a failed call would look like a success"
)
NO_ANSWER_CONTENT = "the model steps' output was not recorded (content capture off?)"
NO_ANSWER_RECORDED = "no agent, workflow or model span recorded an answer"
ANSWER_ELSEWHERE = (
    "{kind} span {span} has a parent span ({parent}) that is not in the files, and no agent or workflow span "
    "here recorded the run's answer: it would be on the spans not seen (an export cut short, or another process)"
)


class Link(NamedTuple):
    """Every span's place in its trace, GenAI or not (for nesting, orphans and duration)."""

    parent: str | None
    start_ns: int | None
    end_ns: int | None


class TraceSpans(NamedTuple):
    trace_id: str
    file: str
    order: int
    spans: Sequence[Span]  # spans with GenAI (or binding) attributes, in read order
    links: Mapping[str, Link]  # span id -> link, for every span of the trace


def _when(span: Span) -> tuple[float, float, str]:
    return (
        span.start_ns if span.start_ns is not None else _LATE,
        span.end_ns if span.end_ns is not None else _LATE,
        span.span_id,
    )


def normalize(trace: TraceSpans, attribute: str) -> Trace | None:
    """The trace as evidence, or None when it has no GenAI content."""
    try:
        return _normalize(trace, attribute)
    except UnreadableText as bad:
        raise TraceError([Problem(f"trace {trace.trace_id}: {bad}", trace.file)]) from None


def _normalize(trace: TraceSpans, attribute: str) -> Trace | None:
    kinds = {span.span_id: classify(span) for span in trace.spans}
    if not any(kind in ("model", "tool", "agent") for kind in kinds.values()):
        return None
    models = sorted((s for s in trace.spans if kinds[s.span_id] == "model"), key=_when)
    tools = sorted((s for s in trace.spans if kinds[s.span_id] == "tool"), key=_when)
    # An MCP client's tools/call span and the server's execute_tool span under it are one call: the server's says more.
    served: dict[str | None, set[str]] = {}
    for span in tools:
        if not mcp_client(span):
            served.setdefault(span.parent_id, set()).add(read_tool(span).name)
    disagree = next(
        (
            _disagreement(s, served[s.span_id])
            for s in tools
            if mcp_client(s) and s.span_id in served and read_tool(s).name not in served[s.span_id]
        ),
        None,
    )  # the client called one tool and the server says it ran another: which one ran is not known
    tools = [s for s in tools if not (mcp_client(s) and s.span_id in served)]
    readings = [read_model(span) for span in models]
    calls = trace_calls(models, readings, tools)
    steps = tuple(_step(span, r) for span, r in zip(models, readings, strict=True))
    answer, source, reason, unseen = _final_answer(trace, kinds, models, readings)
    return Trace(
        trace_id=trace.trace_id,
        file=trace.file,
        order=trace.order,
        calls=calls,
        calls_gap=disagree or calls_gap(models, tools, readings, calls),
        steps=steps,
        agents=_agents(trace, kinds),
        final_answer=answer if answer is None or len(answer) <= TRACE_MAX_TEXT else answer[:TRACE_MAX_TEXT],
        answer_gap=None
        if answer is None or len(answer) <= TRACE_MAX_TEXT
        else (f"the final answer has {len(answer):,} characters, more than the {TRACE_MAX_TEXT:,} behavegate judges"),
        answer_from=source,
        finish_reason=reason,
        total_tokens=_total_tokens(trace, kinds, readings),
        duration_ms=_duration_ms(trace.links),
        spans=len(trace.links),
        orphans=sum(1 for link in trace.links.values() if link.parent is not None and link.parent not in trace.links),
        scenario_values=_values(trace.spans, attribute),
        conversation_ids=_values(trace.spans, CONVERSATION),
        first_user_message=_first_user(trace, kinds, readings),
        errors_gap=_errors_gap(tools),
        answer_unseen=unseen,
    )


def _disagreement(client: Span, names: set[str]) -> str:
    ran = ", ".join(repr(name) for name in sorted(names))
    return (
        f"MCP client span {client.span_id} called {read_tool(client).name!r} but the server's span under it ran {ran}: "
        "which tool ran is not known"
    )


def mcp_client(span: Span) -> bool:
    """An MCP client's ``tools/call`` span (no ``gen_ai.operation.name``: not the server's execution)."""
    return mcp_tool_call(span) and "gen_ai.operation.name" not in span.attributes


def _errors_gap(tools: Sequence[Span]) -> str | None:
    """Why the tool calls' outcomes are not all known: a span with no status and no ``error.type``,
    or an MCP client span that succeeded (a tool's error result, ``isError``, leaves the call OK)."""
    blind = next((t for t in tools if not t.status_recorded and "error.type" not in t.attributes), None)
    if blind is not None:
        return NO_STATUS.format(span=blind.span_id)
    client = next((t for t in tools if mcp_client(t) and not t.error and "error.type" not in t.attributes), None)
    return None if client is None else MCP_CLIENT_OK.format(span=client.span_id)


def _step(span: Span, r: ModelReading) -> ModelStep:
    return ModelStep(
        span.span_id,
        r.model,
        r.text,
        r.finish_reasons,
        len(r.requested),
        r.captured,
        r.input_tokens,
        r.output_tokens,
        r.total_tokens,
    )


# --- the answer, usage, nesting, binding values ---------------------------------------------------


def _ancestors(links: Mapping[str, Link], counted: set[str] | None = None) -> dict[str, int]:
    """Each span's number of ancestors in the trace (only those in ``counted``, when given),
    in time linear in the spans: each parent chain is walked once (cycles cut)."""
    memo: dict[str, int] = {}
    for start in links:
        path: list[str] = []
        on_path: set[str] = set()
        node: str | None = start
        while node is not None and node in links and node not in memo and node not in on_path:
            path.append(node)
            on_path.add(node)
            node = links[node].parent
        depth = memo[node] + (counted is None or node in counted) if node is not None and node in memo else 0
        for span_id in reversed(path):
            memo[span_id] = depth
            depth += counted is None or span_id in counted
    return memo


def _final_answer(
    trace: TraceSpans, kinds: Mapping[str, str | None], models: Sequence[Span], readings: Sequence[ModelReading]
) -> tuple[str | None, str | None, str | None, str | None]:
    """The answer, where it came from, the run's last finish reason, and why there is none."""
    depths = _ancestors(trace.links)
    outer = [
        span
        for span in trace.spans
        if kinds[span.span_id] in ("agent", "workflow")
        or (trace.links[span.span_id].parent not in trace.links and isinstance(span.attributes.get("gen_ai.completion"), str))
    ]
    # Only the outermost spans speak for the run: a sub-agent's output is not the answer.
    top = min((depths.get(span.span_id, 0) for span in outer), default=0)
    candidates = []
    for span in outer:
        output = read_output(span) if depths.get(span.span_id, 0) == top else None
        if output is not None:
            kind = kinds[span.span_id]
            source = kind if kind in ("agent", "workflow") else "root"
            candidates.append(((top, *_when(span)), output, source))
    if candidates:
        _, output, source = min(candidates, key=lambda item: item[0])
        # The run's last word on how it ended: the last model step's finish reason.
        final = max(range(len(readings)), key=lambda i: (models[i].end_ns or -1, i), default=None)
        reason = readings[final].finish_reasons[-1] if final is not None and readings[final].finish_reasons else None
        return output, source, reason, None
    # A model or tool span whose parent was not exported: the run's answer belongs to the spans
    # above it, so the last model text would be a guess at it.
    cut = next(
        (
            span
            for span in sorted(trace.spans, key=_when)
            if kinds[span.span_id] in ("model", "tool") and span.parent_id is not None and span.parent_id not in trace.links
        ),
        None,
    )
    if cut is not None:
        unseen = ANSWER_ELSEWHERE.format(kind=kinds[cut.span_id], span=cut.span_id, parent=cut.parent_id)
        return None, None, None, unseen
    ended = sorted(
        (i for i, r in enumerate(readings) if r.text is not None),
        key=lambda i: (models[i].end_ns if models[i].end_ns is not None else -1, i),
    )
    if not ended:
        blind = bool(readings) and not any(r.captured for r in readings)
        return None, None, None, NO_ANSWER_CONTENT if blind else NO_ANSWER_RECORDED
    last = readings[ended[-1]]
    return last.text, "model", last.finish_reasons[-1] if last.finish_reasons else None, None


def _total_tokens(trace: TraceSpans, kinds: Mapping[str, str | None], readings: Sequence[ModelReading]) -> int | None:
    """The whole conversation's tokens: every model step's, or unknown if one did not say."""
    if readings:
        totals = [r.total_tokens for r in readings]
        return None if any(t is None for t in totals) else sum(t for t in totals if t is not None)
    for span in trace.spans:  # no model span: an agent span may carry the usage
        if kinds[span.span_id] == "agent":
            usage = read_model(span)
            if usage.total_tokens is not None:
                return usage.total_tokens
    return None


def _duration_ms(links: Mapping[str, Link]) -> float | None:
    starts = [link.start_ns for link in links.values() if link.start_ns is not None]
    ends = [link.end_ns for link in links.values() if link.end_ns is not None]
    if not starts or not ends or max(ends) < min(starts):
        return None
    return (max(ends) - min(starts)) / 1_000_000


def _agents(trace: TraceSpans, kinds: Mapping[str, str | None]) -> tuple[AgentSpan, ...]:
    agents = sorted((s for s in trace.spans if kinds[s.span_id] == "agent"), key=_when)
    depths = _ancestors(trace.links, {a.span_id for a in agents})
    found = []
    for span in agents:
        name = span.attributes.get("gen_ai.agent.name") or span.attributes.get("traceloop.entity.name")
        found.append(AgentSpan(name if isinstance(name, str) and name else span.name, depths[span.span_id], span.span_id))
    return tuple(found)


def _values(spans: Sequence[Span], key: str) -> tuple[str, ...]:
    found: dict[str, None] = {}
    for span in spans:
        for where in (span.attributes, span.resource):
            value = where.get(key)
            if value is not None and not isinstance(value, list | dict):
                found[str(value)] = None
    return tuple(found)


def _first_user(trace: TraceSpans, kinds: Mapping[str, str | None], readings: Sequence[ModelReading]) -> str | None:
    for reading in readings:  # in start order
        if reading.first_user is not None:
            return reading.first_user
    for span in sorted(trace.spans, key=_when):
        if kinds[span.span_id] in ("agent", "workflow"):
            found = _input_text(span.attributes)
            if found is not None:
                return found
    return None


def _input_text(attributes: Mapping[str, Any]) -> str | None:
    if "gen_ai.input.messages" in attributes:
        return read_messages(parse_json(attributes["gen_ai.input.messages"]), output=False).first_user
    value = attributes.get("input.value")
    return value if isinstance(value, str) else None
