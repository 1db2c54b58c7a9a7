"""Which scenario each trace is an attempt of, by one explicit rule, and the
attempt (an :class:`Observation`) each bound trace gives.

* ``attribute``: the trace names the scenario id in a span or resource
  attribute (``behavegate.scenario.id`` unless another is named);
* ``conversation``: its ``gen_ai.conversation.id`` is the scenario id;
* ``prompt``: its first user message is exactly the scenario's prompt.

A trace that names two scenarios, or whose prompt is two scenarios' prompt, is
an error: it would be judged as something it may not be. A trace that binds to
nothing is listed in the report, never dropped silently. Several traces of one
scenario are several attempts, in the order they first appear.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from behavegate.errors import Problem, TraceError
from behavegate.evidence.traces.normalize import NO_ANSWER_CONTENT, NO_ANSWER_RECORDED
from behavegate.evidence.traces.record import Trace
from behavegate.frozen import frozen
from behavegate.model import Observation, Scenario, ToolCall

BIND_MODES = ("attribute", "conversation", "prompt")
DEFAULT_ATTRIBUTE = "behavegate.scenario.id"
NO_ANSWER = "the trace records no final answer (no agent or workflow output and no model output text; is content capture off?)"


@frozen
class Binding:
    mode: str = "attribute"
    attribute: str = DEFAULT_ATTRIBUTE

    def describe(self) -> str:
        if self.mode == "attribute":
            return f"attribute {self.attribute}"
        return "gen_ai.conversation.id" if self.mode == "conversation" else "first user message = scenario prompt"


@frozen
class Unbound:
    trace_id: str
    file: str
    reason: str


@frozen
class Bound:
    attempts: Mapping[str, tuple[Trace, ...]]  # scenario id -> its traces, in order
    unbound: tuple[Unbound, ...]
    elsewhere: int  # traces of contract scenarios the run did not select


def scenario_prompt(scenario: Scenario) -> str | None:
    if scenario.prompt:
        return scenario.prompt
    for message in scenario.messages:
        if message.get("role") == "user" and isinstance(message.get("content"), str):
            return str(message["content"])
    return None


def bind(
    traces: Sequence[Trace], scenarios: Sequence[Scenario], selected: set[str], binding: Binding, others: Sequence[Scenario] = ()
) -> Bound:
    """``others``: the scenarios of the suite's other contracts; their traces are
    counted with the unselected ones, not as bound to no scenario."""
    known = {s.id for s in scenarios}
    foreign = {s.id for s in others} - known
    foreign_prompts = {prompt for prompt in map(scenario_prompt, others) if prompt is not None}
    prompts: dict[str, list[str]] = {}
    for scenario in scenarios:
        prompt = scenario_prompt(scenario)
        if prompt is not None:
            prompts.setdefault(prompt, []).append(scenario.id)
    attempts: dict[str, list[Trace]] = {}
    unbound: list[Unbound] = []
    problems: list[Problem] = []
    elsewhere = 0
    for trace in traces:
        if binding.mode == "prompt":
            message = trace.first_user_message
            names = tuple(prompts.get(message, ())) if message is not None else ()
            what = "its first user message is the prompt of"
            missing = (
                "no first user message was recorded" if message is None else "its first user message is no scenario's prompt"
            )
        else:
            names = trace.scenario_values if binding.mode == "attribute" else trace.conversation_ids
            key = binding.attribute if binding.mode == "attribute" else "gen_ai.conversation.id"
            what = f"it has several {key} values:"
            missing = f"it has no {key} attribute"
        if len(names) > 1:
            problems.append(Problem(f"trace {trace.trace_id} cannot be bound: {what} {', '.join(map(repr, names))}", trace.file))
        elif not names and binding.mode == "prompt" and message in foreign_prompts:
            elsewhere += 1
        elif not names:
            unbound.append(Unbound(trace.trace_id, trace.file, missing))
        elif names[0] in foreign:
            elsewhere += 1
        elif names[0] not in known:
            unbound.append(
                Unbound(trace.trace_id, trace.file, f"it names scenario {names[0]!r}, which the contract does not have")
            )
        elif names[0] not in selected:
            elsewhere += 1
        else:
            attempts.setdefault(names[0], []).append(trace)
    if problems:
        raise TraceError(problems)
    return Bound({key: tuple(value) for key, value in attempts.items()}, tuple(unbound), elsewhere)


def observation(trace: Trace, scenario_id: str) -> Observation:
    """One attempt's evidence from one trace (docs/traces.md, "Evidence rules")."""
    calls = tuple(ToolCall(c.name, c.arguments, c.call_id, c.executed, c.group) for c in trace.calls)
    known_calls = trace.calls_gap is None
    executed_any = any(c.executed for c in trace.calls)
    return Observation(
        scenario_id=scenario_id,
        response=trace.final_answer,
        response_complete=True if trace.final_answer is not None else None,
        finish_reason=trace.finish_reason,
        tool_calls=calls if known_calls else None,
        tool_calls_complete=True if known_calls else None,
        refusal=None,
        sources=None,
        latency_ms=trace.duration_ms,
        total_tokens=trace.total_tokens,
        steps=trace.step_count,
        # Only a tool span shows a result: with none, whether calls failed was not observed.
        # Without a status (Assay rows) only a recorded failure is evidence: no failure seen proves nothing.
        tool_errors=tuple(c.error for c in trace.calls)
        if known_calls and (executed_any or not trace.calls) and (trace.errors_gap is None or trace.errors)
        else None,
        trace_id=trace.trace_id,
        response_gap=trace.answer_gap or (None if trace.final_answer is not None else _no_answer(trace)),
        tool_gap=trace.calls_gap,
    )


def _no_answer(trace: Trace) -> str:
    # The generic cases keep the one wording (NO_ANSWER names both); a cut trace says where the answer went.
    generic = trace.answer_unseen in (None, NO_ANSWER_CONTENT, NO_ANSWER_RECORDED)
    return NO_ANSWER if generic or trace.answer_unseen is None else trace.answer_unseen


def unbound_summary(bound: Bound, limit: int = 100) -> dict[str, Any]:
    shown = [{"trace_id": u.trace_id, "file": u.file, "reason": u.reason} for u in bound.unbound[:limit]]
    return {"count": len(bound.unbound), "shown": shown}
