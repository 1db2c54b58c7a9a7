"""Which scenario each trace is an attempt of, by one explicit rule, and the
attempt (an :class:`Observation`) each bound trace gives.

* ``attribute``: the trace names the scenario id in a span or resource
  attribute (``behavegate.scenario.id`` unless another is named);
* ``conversation``: its ``gen_ai.conversation.id`` is the scenario id;
* ``prompt``: its first user message is exactly the scenario's prompt;
* ``auto`` (the default): the first of these three that the trace holds: the
  attribute, a conversation id that is a scenario id, else its first user message.
  A trace that two scenarios could claim under the rule it falls to, or that names one
  scenario and asks exactly another one's prompt, is listed as unbound, never a guess
  (an explicit rule makes the first an error and lets the named scenario decide the second).

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
from behavegate.frozen import Frozen
from behavegate.model import Observation, Scenario, ToolCall
from behavegate.text import one_line

BIND_MODES = ("auto", "attribute", "conversation", "prompt")
DEFAULT_ATTRIBUTE = "behavegate.scenario.id"
NO_ANSWER = "the trace records no final answer (no agent or workflow output and no model output text; is content capture off?)"


class Binding(Frozen):
    mode: str = "auto"
    attribute: str = DEFAULT_ATTRIBUTE

    def describe(self) -> str:
        if self.mode == "auto":
            return f"attribute {self.attribute}, else gen_ai.conversation.id, else first user message = scenario prompt"
        if self.mode == "attribute":
            return f"attribute {self.attribute}"
        return "gen_ai.conversation.id" if self.mode == "conversation" else "first user message = scenario prompt"


class Unbound(Frozen):
    trace_id: str
    file: str
    reason: str


class Bound(Frozen):
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
        mode = binding.mode if binding.mode != "auto" else _auto_mode(trace, known | foreign, prompts, foreign_prompts)
        message = trace.first_user_message
        if mode == "prompt":
            names = tuple(prompts.get(message, ())) if message is not None else ()
            what = "its first user message is the prompt of"
            missing = (
                "no first user message was recorded" if message is None else "its first user message is no scenario's prompt"
            )
        else:
            names = trace.scenario_values if mode == "attribute" else trace.conversation_ids
            key = binding.attribute if mode == "attribute" else "gen_ai.conversation.id"
            what = f"it has several {key} values:"
            missing = f"it has no {key} attribute"
        if binding.mode == "auto":
            missing = _nothing_binds(trace, binding.attribute)
        if len(names) > 1 and binding.mode == "auto" and mode == "prompt":  # a prompt two scenarios share: listed, never a guess
            unbound.append(Unbound(trace.trace_id, trace.file, f"{what} {', '.join(map(repr, names))}: it names no one scenario"))
        elif len(names) > 1:
            problems.append(Problem(f"trace {trace.trace_id} cannot be bound: {what} {', '.join(map(repr, names))}", trace.file))
        elif not names and mode == "prompt" and message in foreign_prompts:
            elsewhere += 1
        elif not names:
            unbound.append(Unbound(trace.trace_id, trace.file, missing))
        elif names[0] in foreign:
            elsewhere += 1
        elif names[0] not in known:
            unbound.append(
                Unbound(trace.trace_id, trace.file, f"it names scenario {names[0]!r}, which the contract does not have")
            )
        elif binding.mode == "auto" and mode != "prompt" and message in prompts and names[0] not in prompts[message]:
            # Named one scenario, asked another's prompt: contradictory evidence is listed, never judged.
            others_named = ", ".join(map(repr, prompts[message]))
            reason = f"it names scenario {names[0]!r} but its first user message is the prompt of {others_named}"
            unbound.append(Unbound(trace.trace_id, trace.file, reason))
        elif names[0] not in selected:
            elsewhere += 1
        else:
            attempts.setdefault(names[0], []).append(trace)
    if problems:
        raise TraceError(problems)
    return Bound({key: tuple(value) for key, value in attempts.items()}, tuple(unbound), elsewhere)


def _auto_mode(trace: Trace, ids: set[str], prompts: Mapping[str, list[str]], foreign_prompts: set[str]) -> str:
    """The first rule that applies to the trace: the scenario attribute, then a conversation
    id that is a scenario id, then the first user message when it is a scenario's prompt."""
    if trace.scenario_values:
        return "attribute"
    if any(value in ids for value in trace.conversation_ids):
        return "conversation"
    return "prompt"


def _nothing_binds(trace: Trace, attribute: str) -> str:
    """Why no rule bound the trace, with what it did hold (so the user can pick a rule)."""
    seen = [f"no {attribute} attribute"]
    ids = trace.conversation_ids
    seen.append(f"gen_ai.conversation.id {_listed(ids)} (no scenario id)" if ids else "no gen_ai.conversation.id")
    message = trace.first_user_message
    seen.append("no first user message" if message is None else f"first user message {_quoted(message)} (no scenario's prompt)")
    return "it has " + ", ".join(seen)


def _listed(values: Sequence[str]) -> str:
    return ", ".join(_quoted(value, 60) for value in values[:3]) + (f" and {len(values) - 3} more" if len(values) > 3 else "")


def _quoted(text: str, limit: int = 120) -> str:
    return one_line(text if len(text) <= limit else text[:limit] + "…", 4 * limit)


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
