"""A trace as behavegate understood it: the type between the spans of one trace
and the attempt it becomes (``normalize`` makes it, ``bind`` and ``traces
inspect`` read it)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from behavegate.frozen import Frozen

NOT_SHOWN = "not shown by this"
NO_TOOL_SPANS = (
    "no tool spans, only the calls the model requested (the tools ran uninstrumented), so no call's outcome was recorded"
)


class TraceCall(Frozen):
    """A tool call: executed (a tool span), or requested by the model and never executed."""

    name: str
    call_id: str | None
    arguments: Mapping[str, Any] | None  # None: not recorded (content capture off) or not a JSON object
    result: str | None
    error: str | None  # status ERROR or error.type; None when it succeeded or was not executed
    executed: bool
    group: int | None  # the model step that requested it: calls sharing it were requested together
    start_ns: int | None = None

    def as_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "call_id": self.call_id,
            "arguments": None if self.arguments is None else dict(self.arguments),
            "error": self.error,
            "executed": self.executed,
            "group": self.group,
            "result": self.result,
        }


class ModelStep(Frozen):
    """One model (LLM) span."""

    span_id: str
    model: str | None
    text: str | None
    finish_reasons: tuple[str, ...]
    requested: int  # tool calls it asked for
    captured: bool  # its output content was recorded
    input_tokens: int | None
    output_tokens: int | None
    total_tokens: int | None


class AgentSpan(Frozen):
    name: str
    depth: int  # agent spans above it (0: the outermost agent)
    span_id: str


class Trace(Frozen):
    """One trace with GenAI content, normalized."""

    trace_id: str
    file: str  # where its first span was read (as shown to people)
    order: int  # first appearance over every file of the run
    calls: tuple[TraceCall, ...]
    calls_gap: str | None  # why the tool calls cannot be told apart from "none" (then ``calls`` is unusable)
    steps: tuple[ModelStep, ...]
    agents: tuple[AgentSpan, ...]
    final_answer: str | None
    answer_gap: str | None  # why the answer cannot be judged although there is one (too long)
    answer_from: str | None  # agent | workflow | root | model
    finish_reason: str | None  # of the step that gave the answer
    total_tokens: int | None
    duration_ms: float | None
    spans: int
    orphans: int  # spans whose parent is not in the trace (kept all the same)
    scenario_values: tuple[str, ...]  # the binding attribute's values, as found
    conversation_ids: tuple[str, ...]
    first_user_message: str | None
    errors_gap: str | None = None  # why whether a tool call failed was not recorded (Assay rows have no status)
    answer_unseen: str | None = None  # why there is no final answer (then ``final_answer`` is None)

    @property
    def step_count(self) -> int | None:
        """Model steps plus tool calls (executed or requested); None when the calls cannot be told."""
        return None if self.calls_gap else len(self.steps) + len(self.calls)

    @property
    def parallel_groups(self) -> list[list[int]]:
        """Indices (in ``calls``) of calls requested together, for groups of two or more."""
        groups: dict[int, list[int]] = {}
        for index, call in enumerate(self.calls):
            if call.group is not None:
                groups.setdefault(call.group, []).append(index)
        return [members for members in groups.values() if len(members) > 1]

    @property
    def errors(self) -> list[dict[str, Any]]:
        return [{"call_index": i, "name": c.name, "error": c.error} for i, c in enumerate(self.calls) if c.error]

    def facts(self) -> dict[str, Any]:
        """The four facts a contract judges on (tool calls in order, failed calls, steps, final answer),
        each with its value, or under ``not_shown`` why this trace cannot show it. Nothing is guessed:
        these are exactly what the attempt made of this trace holds."""
        hidden: dict[str, str] = {}
        if self.calls_gap:
            hidden["tool_calls"] = hidden["steps"] = f"{NOT_SHOWN} trace: {self.calls_gap}"
        executed = any(c.executed for c in self.calls)
        if self.calls_gap:
            hidden["tool_errors"] = f"{NOT_SHOWN} trace: {self.calls_gap}"
        elif self.calls and not executed:
            hidden["tool_errors"] = f"{NOT_SHOWN} dialect: {NO_TOOL_SPANS}"
        elif self.errors_gap and not self.errors:
            hidden["tool_errors"] = f"{NOT_SHOWN} dialect: {self.errors_gap}"
        if self.final_answer is None:
            hidden["final_answer"] = f"{NOT_SHOWN} trace: {self.answer_unseen or 'no answer was recorded'}"
        elif self.answer_gap:
            hidden["final_answer"] = f"{NOT_SHOWN} trace in full: {self.answer_gap}"
        values = {
            "tool_calls": [c.name for c in self.calls],
            "tool_errors": len(self.errors),
            "steps": self.step_count,
            "final_answer": self.final_answer,
        }
        return {**{k: None if k in hidden else v for k, v in values.items()}, "not_shown": hidden}

    def usage(self) -> dict[str, int | None]:
        def total(values: list[int | None]) -> int | None:
            return None if not values or any(v is None for v in values) else sum(v for v in values if v is not None)

        return {
            "input_tokens": total([s.input_tokens for s in self.steps]),
            "output_tokens": total([s.output_tokens for s in self.steps]),
            "total_tokens": self.total_tokens,
        }
