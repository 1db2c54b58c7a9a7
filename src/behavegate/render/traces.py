"""``behavegate traces inspect``: what was understood of each trace, as JSON or
as text for a person debugging their instrumentation. Agent text is shown on
one line, cut, through the output boundary like everything else."""

from __future__ import annotations

import json
from typing import Any

from behavegate import indented_json
from behavegate.evidence.traces.load import TraceSet
from behavegate.evidence.traces.record import ModelStep, Trace
from behavegate.text import one_line


def trace_json(trace: Trace) -> dict[str, Any]:
    return {
        "trace_id": trace.trace_id,
        "file": trace.file,
        "facts": trace.facts(),
        "tool_calls": [call.as_dict() for call in trace.calls],
        "tool_calls_gap": trace.calls_gap,
        "parallel_groups": trace.parallel_groups,
        "steps": trace.step_count,
        "model_steps": [_step_json(step) for step in trace.steps],
        "errors": trace.errors,
        "final_answer": trace.final_answer,
        "answer_from": trace.answer_from,
        "finish_reason": trace.finish_reason,
        "usage": trace.usage(),
        "duration_ms": trace.duration_ms,
        "agents": [{"name": a.name, "depth": a.depth} for a in trace.agents],
        "spans": trace.spans,
        "orphan_spans": trace.orphans,
        "binding": {
            "scenario_attribute": list(trace.scenario_values),
            "conversation_id": list(trace.conversation_ids),
            "first_user_message": trace.first_user_message,
        },
    }


def _step_json(step: ModelStep) -> dict[str, Any]:
    return {
        "model": step.model,
        "finish_reasons": list(step.finish_reasons),
        "requested_calls": step.requested,
        "output_recorded": step.captured,
        "text": step.text,
    }


def render_json(found: TraceSet) -> str:
    data = {
        "files": [
            {"path": f.path, "sha256": f.digest, "format": f.format, "bytes": f.bytes, "spans": f.spans} for f in found.files
        ],
        "traces": [trace_json(trace) for trace in found.traces],
        "ignored_traces": found.ignored,
        "duplicate_spans": found.duplicates,
        "skipped_files": [{"path": path, "reason": why} for path, why in found.skipped],
    }
    return indented_json.dumps(data, ensure_ascii=False)


def _call_line(index: int, trace: Trace, groups: dict[int, list[int]]) -> str:
    call = trace.calls[index]
    arguments = (
        "(arguments not recorded)" if call.arguments is None else json.dumps(call.arguments, ensure_ascii=False, sort_keys=True)
    )
    parts = [f"{index + 1:>3}. {one_line(call.name, 80)}"]
    if call.call_id:
        parts.append(f"[{one_line(call.call_id, 60)}]")
    parts.append(one_line(arguments, 160))
    if not call.executed:
        parts.append("- requested, not executed")
    if call.error:
        parts.append(f"- FAILED: {one_line(call.error, 120)}")
    others = [i + 1 for i in groups.get(index, ()) if i != index]
    if others:
        more = f" and {len(others) - 5} more" if len(others) > 5 else ""
        parts.append(f"(parallel with {', '.join(map(str, others[:5]))}{more})")
    return " ".join(parts)


def _n(count: int, noun: str) -> str:
    return f"{count} {noun}{'' if count == 1 else 's'}"


def render_table(found: TraceSet) -> str:
    lines = []
    for f in found.files:
        lines.append(f"{one_line(f.path, 300)}: {f.format}, {f.spans} spans, sha256 {f.digest[:16]}")
    lines.extend(f"{one_line(path, 300)}: skipped: {one_line(why, 300)}" for path, why in found.skipped)
    lines.append(f"{_n(len(found.traces), 'GenAI trace')}; {_n(found.ignored, 'trace')} without GenAI content ignored")
    if found.duplicates:
        lines.append(f"{_n(found.duplicates, 'span')} read twice and counted once")
    for trace in found.traces:
        lines.append("")
        steps = "unknown" if trace.step_count is None else str(trace.step_count)
        lines.append(f"trace {one_line(trace.trace_id, 80)} ({one_line(trace.file, 120)})")
        lines.append(
            f"  steps: {steps} ({_n(len(trace.steps), 'model step')}, {_n(len(trace.calls), 'tool call')}); "
            f"spans: {trace.spans}, orphans: {trace.orphans}"
        )
        if trace.agents:
            lines.append("  agents: " + ", ".join(f"{'  ' * a.depth}{one_line(a.name, 60)}" for a in trace.agents))
        if trace.calls_gap:
            lines.append(f"  tool calls: unknown: {trace.calls_gap}")
        elif not trace.calls:
            lines.append("  tool calls: none")
        else:
            lines.append("  tool calls:")
            groups = {member: group for group in trace.parallel_groups for member in group}
            lines.extend(f"  {_call_line(i, trace, groups)}" for i in range(len(trace.calls)))
        facts = trace.facts()
        hidden = facts["not_shown"]
        if "tool_errors" in hidden and not trace.calls_gap:
            lines.append(f"  tool errors: {one_line(hidden['tool_errors'], 300)}")
        elif not trace.calls_gap:
            lines.append(f"  tool errors: {facts['tool_errors']}")
        answer = one_line(hidden["final_answer"], 300) if trace.final_answer is None else f'"{one_line(trace.final_answer, 300)}"'
        source = f" (from the {trace.answer_from} span)" if trace.answer_from in ("agent", "workflow", "root") else ""
        lines.append(f"  final answer{source}: {answer}")
        if trace.finish_reason:
            lines.append(f"  finish reason: {one_line(trace.finish_reason, 80)}")
        binding = [
            *(f"scenario attribute {one_line(v, 80)!r}" for v in trace.scenario_values),
            *(f"conversation {one_line(v, 80)!r}" for v in trace.conversation_ids),
        ]
        if trace.first_user_message is not None:
            binding.append(f"first user message {one_line(trace.first_user_message, 120)!r}")
        lines.append(
            "  binds by: "
            + ("; ".join(binding) if binding else "nothing (no scenario attribute, conversation id or user message)")
        )
    return "\n".join(lines)
