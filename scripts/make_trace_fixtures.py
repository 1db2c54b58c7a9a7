"""Trace fixtures written by the real OpenTelemetry Python SDK and its exporters.

What it makes, in tests/fixtures/traces/:

  otlp_genai_latest.json         OTLP/JSON, one document as an OTLP/HTTP JSON body (json-common's encoder,
                                 hex ids, integer enums). GenAI latest (1.37+): invoke_agent root, parallel
                                 tool calls, a failing tool retried; plus a plain HTTP trace from a second
                                 resource that must be ignored.
  otlp_genai_latest_pretty.json  The same encoder, indented. GenAI latest with structured attribute values
                                 (messages/arguments as arrayValue/kvlistValue, which SDK 1.45 writes for
                                 dicts and lists of dicts); bound only by gen_ai.conversation.id.
  otlp_file_exporter.jsonl       JSON Lines as opentelemetry-exporter-otlp-json-file's FileSpanExporter
                                 writes them behind a BatchSpanProcessor (5 spans a line, end order, so a
                                 trace spans lines and a line holds several traces). Two attempts of one
                                 scenario, the 1.28-1.36 per-message events dialect, content capture off,
                                 and an orphan tool span whose parent is in another process.
  console_exporter.log           ConsoleSpanExporter output (concatenated indented JSON objects) with the
                                 application's log lines between the spans. GenAI <=1.27 (content events,
                                 prompt/completion tokens, no tool spans) under an HTTP server root,
                                 bound by nothing but its first user message; plus a health-check trace.
  proto3_openinference.json      google.protobuf.json_format.MessageToJson of the OTLP proto encoder's
                                 request, as is (base64 ids, enum names). OpenInference.
  proto3_openllmetry_snake.json  The same with preserving_proto_field_name=True (snake_case keys).
                                 OpenLLMetry/Traceloop.
  expected.json                  The ground truth for each file, written from the run plans below (what
                                 this script decided to emit), never by reading the files back; only the
                                 order of the traces is taken from where each trace id first occurs in
                                 the written text, since that order is the exporter's layout.

And in tests/fixtures/trace_matrix/:

  FORMAT__DIALECT.EXT            One small file for every format (otlp-json, otlp-jsonl, console, proto3-json)
                                 x dialect (genai-latest, genai-1.28-1.36, genai-1.27, openinference,
                                 openllmetry), each the same run (cancel_run): two calls requested together
                                 whose second starts first, a failing call, its retry, the answer.
  otlp-jsonl__genai-latest-root-not-exported.jsonl
                                 The same run whose invoke_agent span never ended (the process died): the
                                 SDK never exports it, so every other span's parent is missing.
  assay__assay.jsonl             The SDK's spans of that run as Assay's flat rows (no status: Assay has none).
  facts.json                     For every file of both folders, the four facts a contract judges (tool
                                 names in order, failed calls, steps, final answer) from the run plans,
                                 and which of them the dialect or trace cannot show (NOT_SHOWN).
                                 scripts/score_trace_facts.py scores `traces inspect` against it.

The GenAI attribute names are checked against opentelemetry-semantic-conventions' constants on every run.

Every run is simulated through the SDK's TracerProvider with a seeded IdGenerator and explicit start,
end and event times, so the bytes are the same on every run (with the same SDK and exporter versions).

Regenerate:    .venv/bin/python scripts/make_trace_fixtures.py
Check (CI):    .venv/bin/python scripts/make_trace_fixtures.py --check   (exit 1 if a committed file differs)
"""

from __future__ import annotations

import argparse
import datetime as dt
import io
import json
import os
import random
import sys
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "tests" / "fixtures" / "traces"
MS = 1_000_000
# 2026-03-02T09:15:00.123456789Z: the nanoseconds show which formats keep them (the console exporter does not).
BASE = int(dt.datetime(2026, 3, 2, 9, 15, tzinfo=dt.UTC).timestamp()) * 1_000_000_000 + 123_456_789

RULES = (
    "One entry per fixture file; traces in order of first appearance in the file. "
    "trace_id: 32-char lowercase hex. genai: false for traces with no GenAI/OpenInference/Traceloop span (ignore them). "
    "scenario: the behavegate.scenario.id attribute of the root span, else null. "
    "conversation_id: gen_ai.conversation.id, else null. "
    "first_user_message: the text of the first user message the first model step was sent, else null (content not captured). "
    "tool_calls: every tool call, in execution order: by tool span start time, ties broken by the order in which the model "
    "requested them; a call the model requested but no tool span shows ('executed': false, tools ran uninstrumented) "
    "is placed at the end of the model step that requested it. name: gen_ai.tool.name > tool.name > traceloop.entity.name. "
    "call_id: the span's gen_ai.tool.call.id (or tool.id), else the id of the call the model requested in the preceding "
    "model step with the same name and arguments, else null. arguments: a JSON object, from the span "
    "(gen_ai.tool.call.arguments as a JSON string or a kvlist, input.value, Traceloop kwargs) or, where the span has none, "
    "from the requested call with the same id; null when content was not captured. "
    "error: the tool span's error.type, else its status description when the status is ERROR, else null. "
    "parallel_groups: for each model step that requested two or more calls, the indices into tool_calls of those calls "
    "(with content capture off, tool spans under one parent that ran at the same time). "
    "model_steps: the number of model (chat/LLM) spans; steps = model_steps + len(tool_calls). "
    "final_answer: the root agent/workflow span's output (gen_ai.output.messages text, OpenInference output.value, "
    "Traceloop traceloop.entity.output decoded from JSON); else the last model output text; else null. "
    "finish_reasons: the finish reason each model step recorded, in order (OpenInference records none). "
    "input_tokens/output_tokens: the sums over model spans (gen_ai.usage.input_tokens or prompt_tokens, "
    "llm.token_count.prompt/completion); null when no model span has them."
)

SYSTEM_PROMPT = "You are a concise assistant. Use the tools; never guess order or booking data."


# --------------------------------------------------------------------------------------------------
# What a run is: model steps, the calls each requested, and when everything happened.


@dataclass
class Call:
    name: str
    call_id: str | None
    arguments: dict[str, Any]
    result: Any = None
    error: tuple[str, str] | None = None  # (exception type, fully qualified, e.g. "agent.tools.SeatError"; message)
    delay_ms: int = 4  # from the end of the model step that requested it
    duration_ms: int = 60
    start: int = 0
    end: int = 0


@dataclass
class Turn:
    calls: list[Call] = field(default_factory=list)
    text: str | None = None
    input_tokens: int = 0
    output_tokens: int = 0
    duration_ms: int = 400
    start: int = 0
    end: int = 0

    @property
    def finish_reason(self) -> str:
        return "tool_calls" if self.calls else "stop"


@dataclass
class Run:
    key: str
    dialect: str
    start_ms: int
    user: str = ""
    turns: list[Turn] = field(default_factory=list)
    answer: str | None = None  # the root agent/workflow span's output; None when the root carries none
    scenario: str | None = None
    conversation_id: str | None = None
    agent: str = "support_agent"
    model: str = "gpt-4o-mini"
    content: bool = True
    orphan: Call | None = None
    start: int = 0
    end: int = 0
    root: SpanPlan | None = None  # the span whose trace id is this run's


def layout(run: Run) -> None:
    """Decide every time stamp of a run."""
    t = BASE + run.start_ms * MS
    run.start = t
    if run.orphan is not None:
        run.orphan.start = t
        run.orphan.end = t + run.orphan.duration_ms * MS
        run.end = run.orphan.end
        return
    t += 2 * MS
    for turn in run.turns:
        turn.start = t
        turn.end = t + turn.duration_ms * MS
        last = turn.end
        for call in turn.calls:
            call.start = turn.end + call.delay_ms * MS
            call.end = call.start + call.duration_ms * MS
            last = max(last, call.end)
        t = last + 3 * MS
    run.end = t + 2 * MS


# --------------------------------------------------------------------------------------------------
# Span plans: what each span will carry; the emitter hands them to the SDK in time order.


@dataclass
class SpanPlan:
    name: str
    start: int
    end: int
    scope: tuple[str, str, str | None]  # instrumentation scope: name, version, schema url
    kind: str = "INTERNAL"
    attributes: dict[str, Any] = field(default_factory=dict)
    events: list[tuple[str, dict[str, Any], int]] = field(default_factory=list)
    error: tuple[str, str] | None = None  # exception type and message: an exception event and status ERROR
    error_type_attribute: bool = True
    status_ok: bool = False
    never_ends: bool = False  # the process died first: the SDK never exports it
    parent: SpanPlan | None = None
    remote_parent: bool = False
    resource: str = "agent"
    log: str | None = None  # an application log line written when the span starts (console fixture)
    logs: list[tuple[int, str]] = field(default_factory=list)  # more log lines, at their times
    span: Any = None  # the SDK span, once started

    @property
    def depth(self) -> int:
        return 0 if self.parent is None else self.parent.depth + 1


APP = ("support_agent", "0.4.2", None)
OPENAI_V2 = ("opentelemetry.instrumentation.openai_v2", "2.2b0", "https://opentelemetry.io/schemas/1.37.0")
OPENAI_OLD = ("opentelemetry.instrumentation.openai_v2", "2.0b0", "https://opentelemetry.io/schemas/1.28.0")
OPENAI_127 = ("opentelemetry.instrumentation.openai", "0.48b0", "https://opentelemetry.io/schemas/1.26.0")
FASTAPI = ("opentelemetry.instrumentation.fastapi", "0.48b0", "https://opentelemetry.io/schemas/1.11.0")
OPENINFERENCE = ("openinference.instrumentation.openai", "0.1.30", None)
TRACELOOP = ("traceloop.tracer", "0.46.2", None)
OPENLLMETRY = ("opentelemetry.instrumentation.openai.v1", "0.46.2", None)


def stacktrace(error: tuple[str, str], function: str) -> str:
    return (
        "Traceback (most recent call last):\n"
        f'  File "/srv/agent/tools.py", line 57, in {function}\n'
        f"    return client.invoke({function!r}, **arguments)\n"
        f"{error[0]}: {error[1]}\n"
    )


def binding(run: Run, attributes: dict[str, Any]) -> None:
    if run.scenario is not None:
        attributes["behavegate.scenario.id"] = run.scenario
    if run.conversation_id is not None:
        attributes["gen_ai.conversation.id"] = run.conversation_id


def text_part(text: str) -> dict[str, Any]:
    return {"type": "text", "content": text}


def result_text(call: Call) -> str:
    if call.error is not None:
        return f"error: {call.error[1]}"
    return call.result if isinstance(call.result, str) else json.dumps(call.result)


# ---- GenAI semconv 1.37+ (gen_ai.input.messages / output.messages, execute_tool with arguments)


def build_genai_latest(run: Run, *, structured: bool = False) -> list[SpanPlan]:
    def enc(value: Any) -> Any:
        return value if structured else json.dumps(value)

    content = run.content
    root = SpanPlan(f"invoke_agent {run.agent}", run.start, run.end, APP)
    root.attributes = {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": run.agent}
    binding(run, root.attributes)
    user = {"role": "user", "parts": [text_part(run.user)]}
    if content:
        root.attributes["gen_ai.input.messages"] = enc([user])
        if run.answer is not None:
            answer = {"role": "assistant", "parts": [text_part(run.answer)], "finish_reason": "stop"}
            root.attributes["gen_ai.output.messages"] = enc([answer])
    run.root = root
    plans = [root]
    history: list[dict[str, Any]] = [user]
    for i, turn in enumerate(run.turns):
        parts = [text_part(turn.text)] if turn.text else []
        parts += [{"type": "tool_call", "id": c.call_id, "name": c.name, "arguments": c.arguments} for c in turn.calls]
        chat = SpanPlan(f"chat {run.model}", turn.start, turn.end, OPENAI_V2, "CLIENT", parent=root)
        chat.attributes = {
            "gen_ai.operation.name": "chat",
            "gen_ai.provider.name": "openai",
            "gen_ai.request.model": run.model,
            "gen_ai.response.model": f"{run.model}-2024-07-18",
            "gen_ai.response.id": f"chatcmpl-{run.key}-{i + 1}",
            "gen_ai.response.finish_reasons": [turn.finish_reason],
            "gen_ai.usage.input_tokens": turn.input_tokens,
            "gen_ai.usage.output_tokens": turn.output_tokens,
        }
        if run.conversation_id is not None:
            chat.attributes["gen_ai.conversation.id"] = run.conversation_id
        if content:
            chat.attributes["gen_ai.system_instructions"] = enc([text_part(SYSTEM_PROMPT)])
            chat.attributes["gen_ai.input.messages"] = enc(history)
            out = {"role": "assistant", "parts": parts, "finish_reason": turn.finish_reason}
            chat.attributes["gen_ai.output.messages"] = enc([out])
        plans.append(chat)
        history = [*history, {"role": "assistant", "parts": parts}]
        for call in turn.calls:
            tool = SpanPlan(f"execute_tool {call.name}", call.start, call.end, APP, parent=root, error=call.error)
            tool.attributes = {
                "gen_ai.operation.name": "execute_tool",
                "gen_ai.tool.name": call.name,
                "gen_ai.tool.call.id": call.call_id,
                "gen_ai.tool.type": "function",
            }
            if content:
                tool.attributes["gen_ai.tool.call.arguments"] = enc(call.arguments)
                if call.error is None:
                    result = call.result if isinstance(call.result, str) else enc(call.result)
                    tool.attributes["gen_ai.tool.call.result"] = result
            plans.append(tool)
            response = call.result if structured and call.error is None else result_text(call)
            history.append({"role": "tool", "parts": [{"type": "tool_call_response", "id": call.call_id, "response": response}]})
    return plans


def build_root_not_exported(run: Run) -> list[SpanPlan]:
    """GenAI latest, but the agent process died before its invoke_agent span ended: the SDK never
    exports an unended span, so every other span's parent is missing from the file."""
    plans = build_genai_latest(run)
    plans[0].never_ends = True
    return plans


def build_orphan(run: Run) -> list[SpanPlan]:
    """One execute_tool span whose parent (the agent, in another process) is not in the file."""
    call = run.orphan
    assert call is not None
    tool = SpanPlan(f"execute_tool {call.name}", call.start, call.end, APP, remote_parent=True)
    tool.attributes = {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": call.name,
        "gen_ai.tool.call.id": call.call_id,
        "gen_ai.tool.type": "function",
        "gen_ai.tool.call.arguments": json.dumps(call.arguments),
        "gen_ai.tool.call.result": result_text(call),
    }
    run.root = tool
    return [tool]


# ---- GenAI semconv 1.28-1.36: per-message events on the chat span, execute_tool without arguments


def openai_tool_calls(calls: list[Call]) -> list[dict[str, Any]]:
    return [
        {"id": c.call_id, "type": "function", "function": {"name": c.name, "arguments": json.dumps(c.arguments)}} for c in calls
    ]


def build_genai_events(run: Run) -> list[SpanPlan]:
    root = SpanPlan(f"invoke_agent {run.agent}", run.start, run.end, APP)
    root.attributes = {"gen_ai.operation.name": "invoke_agent", "gen_ai.system": "openai", "gen_ai.agent.name": run.agent}
    binding(run, root.attributes)
    run.root = root
    plans = [root]
    history: list[tuple[str, dict[str, Any]]] = [
        ("gen_ai.system.message", {"content": SYSTEM_PROMPT}),
        ("gen_ai.user.message", {"content": run.user}),
    ]
    for i, turn in enumerate(run.turns):
        chat = SpanPlan(f"chat {run.model}", turn.start, turn.end, OPENAI_OLD, "CLIENT", parent=root)
        chat.attributes = {
            "gen_ai.operation.name": "chat",
            "gen_ai.system": "openai",
            "gen_ai.request.model": run.model,
            "gen_ai.response.model": f"{run.model}-2024-07-18",
            "gen_ai.response.id": f"chatcmpl-{run.key}-{i + 1}",
            "gen_ai.response.finish_reasons": [turn.finish_reason],
            "gen_ai.usage.input_tokens": turn.input_tokens,
            "gen_ai.usage.output_tokens": turn.output_tokens,
        }
        for name, body in history:
            chat.events.append((name, {"gen_ai.system": "openai", "gen_ai.event.content": json.dumps(body)}, turn.start))
        message: dict[str, Any] = {"content": turn.text} if turn.text else {}
        if turn.calls:
            message["tool_calls"] = openai_tool_calls(turn.calls)
        choice = {"index": 0, "finish_reason": turn.finish_reason, "message": message}
        chat.events.append(("gen_ai.choice", {"gen_ai.system": "openai", "gen_ai.event.content": json.dumps(choice)}, turn.end))
        plans.append(chat)
        history.append(("gen_ai.assistant.message", message))
        for call in turn.calls:
            tool = SpanPlan(f"execute_tool {call.name}", call.start, call.end, APP, parent=root, error=call.error)
            tool.attributes = {
                "gen_ai.operation.name": "execute_tool",
                "gen_ai.tool.name": call.name,
                "gen_ai.tool.call.id": call.call_id,
            }
            plans.append(tool)
            history.append(("gen_ai.tool.message", {"id": call.call_id, "content": result_text(call)}))
    return plans


# ---- GenAI semconv <=1.27: gen_ai.content.prompt/completion events, prompt/completion tokens, no tool spans


def build_genai_127(run: Run) -> list[SpanPlan]:
    root = SpanPlan("POST /ask", run.start, run.end, FASTAPI, "SERVER", log='INFO:     127.0.0.1:53122 - "POST /ask HTTP/1.1"')
    root.attributes = {
        "http.method": "POST",
        "http.route": "/ask",
        "http.target": "/ask",
        "http.scheme": "http",
        "http.status_code": 200,
    }
    binding(run, root.attributes)
    run.root = root
    plans = [root]
    prompt: list[dict[str, Any]] = [{"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": run.user}]
    for i, turn in enumerate(run.turns):
        chat = SpanPlan(f"chat {run.model}", turn.start, turn.end, OPENAI_127, "CLIENT", parent=root)
        chat.log = f"INFO:agent:asking {run.model} (step {i + 1})"
        chat.attributes = {
            "gen_ai.operation.name": "chat",
            "gen_ai.system": "openai",
            "gen_ai.request.model": run.model,
            "gen_ai.request.temperature": 0.2,
            "gen_ai.response.model": f"{run.model}-2024-04-09",
            "gen_ai.response.id": f"chatcmpl-{run.key}-{i + 1}",
            "gen_ai.response.finish_reasons": [turn.finish_reason],
            "gen_ai.usage.prompt_tokens": turn.input_tokens,
            "gen_ai.usage.completion_tokens": turn.output_tokens,
        }
        message: dict[str, Any] = {"role": "assistant", "content": turn.text}
        if turn.calls:
            message["tool_calls"] = openai_tool_calls(turn.calls)
        chat.events = [
            ("gen_ai.content.prompt", {"gen_ai.prompt": json.dumps(prompt)}, turn.start),
            ("gen_ai.content.completion", {"gen_ai.completion": json.dumps([message])}, turn.end),
        ]
        plans.append(chat)
        prompt = [*prompt, message]
        for call in turn.calls:  # the app ran its tools uninstrumented: no spans, only the requested calls
            root.logs.append((call.start, f"INFO:agent:calling tool {call.name} {json.dumps(call.arguments)}"))
            prompt.append({"role": "tool", "tool_call_id": call.call_id, "content": result_text(call)})
    return plans


# ---- OpenInference (Arize/Phoenix)


def build_openinference(run: Run) -> list[SpanPlan]:
    root = SpanPlan(run.agent, run.start, run.end, OPENINFERENCE, status_ok=True)
    root.attributes = {
        "openinference.span.kind": "AGENT",
        "input.value": run.user,
        "input.mime_type": "text/plain",
        "output.value": run.answer,
        "output.mime_type": "text/plain",
    }
    binding(run, root.attributes)
    run.root = root
    plans = [root]
    history: list[dict[str, Any]] = [{"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": run.user}]

    def flatten(prefix: str, message: dict[str, Any], into: dict[str, Any]) -> None:
        into[f"{prefix}.message.role"] = message["role"]
        if message.get("content"):
            into[f"{prefix}.message.content"] = message["content"]
        if "tool_call_id" in message:
            into[f"{prefix}.message.tool_call_id"] = message["tool_call_id"]
        for m, call in enumerate(message.get("tool_calls", [])):
            into[f"{prefix}.message.tool_calls.{m}.tool_call.id"] = call.call_id
            into[f"{prefix}.message.tool_calls.{m}.tool_call.function.name"] = call.name
            into[f"{prefix}.message.tool_calls.{m}.tool_call.function.arguments"] = json.dumps(call.arguments)

    for turn in run.turns:
        llm = SpanPlan("ChatCompletion", turn.start, turn.end, OPENINFERENCE, parent=root, status_ok=True)
        attributes: dict[str, Any] = {
            "openinference.span.kind": "LLM",
            "llm.system": "openai",
            "llm.provider": "openai",
            "llm.model_name": run.model,
            "llm.invocation_parameters": json.dumps({"model": run.model, "temperature": 0}),
        }
        for n, message in enumerate(history):
            flatten(f"llm.input_messages.{n}", message, attributes)
        answer: dict[str, Any] = {"role": "assistant", "content": turn.text, "tool_calls": turn.calls}
        flatten("llm.output_messages.0", answer, attributes)
        attributes["llm.token_count.prompt"] = turn.input_tokens
        attributes["llm.token_count.completion"] = turn.output_tokens
        attributes["llm.token_count.total"] = turn.input_tokens + turn.output_tokens
        llm.attributes = attributes
        plans.append(llm)
        history = [*history, answer]
        for call in turn.calls:
            tool = SpanPlan(
                call.name, call.start, call.end, OPENINFERENCE, parent=root, error=call.error, error_type_attribute=False
            )
            tool.attributes = {
                "openinference.span.kind": "TOOL",
                "tool.name": call.name,
                "input.value": json.dumps(call.arguments),
                "input.mime_type": "application/json",
            }
            if call.error is None:
                tool.attributes["output.value"] = result_text(call)
                tool.attributes["output.mime_type"] = "text/plain"
                tool.status_ok = True
            plans.append(tool)
            history.append({"role": "tool", "tool_call_id": call.call_id, "content": result_text(call)})
    return plans


# ---- OpenLLMetry / Traceloop SDK


def build_traceloop(run: Run, workflow: str) -> list[SpanPlan]:
    root = SpanPlan(f"{workflow}.workflow", run.start, run.end, TRACELOOP)
    root.attributes = {
        "traceloop.span.kind": "workflow",
        "traceloop.entity.name": workflow,
        "traceloop.workflow.name": workflow,
        "traceloop.entity.input": json.dumps({"args": [], "kwargs": {"request": run.user}}),
        "traceloop.entity.output": json.dumps(run.answer),
    }
    binding(run, root.attributes)
    run.root = root
    plans = [root]
    prompt: list[dict[str, Any]] = [{"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": run.user}]
    offered = sorted({c.name for t in run.turns for c in t.calls})
    for turn in run.turns:
        llm = SpanPlan("openai.chat", turn.start, turn.end, OPENLLMETRY, "CLIENT", parent=root)
        a: dict[str, Any] = {
            "llm.request.type": "chat",
            "gen_ai.system": "openai",
            "gen_ai.request.model": run.model,
            "llm.is_streaming": False,
            "traceloop.workflow.name": workflow,
        }
        for n, name in enumerate(offered):
            a[f"llm.request.functions.{n}.name"] = name
        for n, message in enumerate(prompt):
            a[f"gen_ai.prompt.{n}.role"] = message["role"]
            if message.get("content"):
                a[f"gen_ai.prompt.{n}.content"] = message["content"]
            if "tool_call_id" in message:
                a[f"gen_ai.prompt.{n}.tool_call_id"] = message["tool_call_id"]
            for m, call in enumerate(message.get("tool_calls", [])):
                a[f"gen_ai.prompt.{n}.tool_calls.{m}.id"] = call.call_id
                a[f"gen_ai.prompt.{n}.tool_calls.{m}.name"] = call.name
                a[f"gen_ai.prompt.{n}.tool_calls.{m}.arguments"] = json.dumps(call.arguments)
        a["gen_ai.response.model"] = f"{run.model}-2024-07-18"
        a["gen_ai.usage.prompt_tokens"] = turn.input_tokens
        a["gen_ai.usage.completion_tokens"] = turn.output_tokens
        a["llm.usage.total_tokens"] = turn.input_tokens + turn.output_tokens
        a["gen_ai.completion.0.finish_reason"] = turn.finish_reason
        a["gen_ai.completion.0.role"] = "assistant"
        if turn.text:
            a["gen_ai.completion.0.content"] = turn.text
        for m, call in enumerate(turn.calls):
            a[f"gen_ai.completion.0.tool_calls.{m}.id"] = call.call_id
            a[f"gen_ai.completion.0.tool_calls.{m}.name"] = call.name
            a[f"gen_ai.completion.0.tool_calls.{m}.arguments"] = json.dumps(call.arguments)
        llm.attributes = a
        plans.append(llm)
        prompt = [*prompt, {"role": "assistant", "content": turn.text, "tool_calls": turn.calls}]
        for call in turn.calls:
            tool = SpanPlan(
                f"{call.name}.tool", call.start, call.end, TRACELOOP, parent=root, error=call.error, error_type_attribute=False
            )
            tool.attributes = {
                "traceloop.span.kind": "tool",
                "traceloop.entity.name": call.name,
                "traceloop.workflow.name": workflow,
                "traceloop.entity.input": json.dumps({"args": [], "kwargs": call.arguments}),
            }
            if call.error is None:  # the decorator writes the output only when the function returned
                tool.attributes["traceloop.entity.output"] = json.dumps(call.result)
            plans.append(tool)
            prompt.append({"role": "tool", "tool_call_id": call.call_id, "content": result_text(call)})
    return plans


# ---- Plain HTTP (no GenAI content at all): must be ignored


def build_http(run: Run, *, method: str, route: str, db: bool) -> list[SpanPlan]:
    server = SpanPlan(f"{method} {route}", run.start, run.end, FASTAPI, "SERVER", resource="web")
    server.log = f'INFO:     10.0.0.7:40112 - "{method} {route} HTTP/1.1" 200 OK'
    server.attributes = {
        "http.request.method": method,
        "url.path": route,
        "url.scheme": "https",
        "http.route": route,
        "http.response.status_code": 200,
    }
    run.root = server
    plans = [server]
    if db:
        query = SpanPlan(
            "SELECT shop.messages",
            run.start + 3 * MS,
            run.end - 2 * MS,
            ("opentelemetry.instrumentation.sqlalchemy", "0.48b0", None),
            "CLIENT",
            parent=server,
            resource="web",
        )
        query.attributes = {
            "db.system": "postgresql",
            "db.name": "shop",
            "db.statement": "SELECT id, body FROM messages WHERE chat_id = %(id)s",
        }
        plans.append(query)
    return plans


# --------------------------------------------------------------------------------------------------
# The SDK side: a seeded id generator, providers, and an emitter that starts and ends spans in time order.


@contextmanager
def clean_otel_environment() -> Iterator[None]:
    """OTEL_* variables change limits, samplers or disable the SDK: none may reach the fixtures."""
    saved = {k: os.environ.pop(k) for k in list(os.environ) if k.startswith("OTEL_")}
    try:
        yield
    finally:
        os.environ.update(saved)


def make_id_generator(seed: int) -> Any:
    from opentelemetry.sdk.trace.id_generator import IdGenerator

    class SeededIdGenerator(IdGenerator):
        def __init__(self) -> None:
            self.rng = random.Random(seed)

        def generate_span_id(self) -> int:
            return self.rng.getrandbits(64) or 1

        def generate_trace_id(self) -> int:
            return self.rng.getrandbits(128) or 1

    return SeededIdGenerator()


RESOURCES = {
    "agent": {"service.name": "support-agent", "service.version": "0.4.2", "deployment.environment.name": "ci"},
    "web": {"service.name": "web-frontend", "service.version": "2.8.0", "deployment.environment.name": "ci"},
}


def make_provider(resource: str, ids: Any, processors: list[Any]) -> Any:
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.sampling import ALWAYS_ON

    # Resource(...) rather than Resource.create(...): no telemetry.sdk.version or environment in the bytes.
    provider = TracerProvider(resource=Resource(RESOURCES[resource]), id_generator=ids, sampler=ALWAYS_ON)
    for processor in processors:
        provider.add_span_processor(processor)
    return provider


def exception_class(qualified: str) -> type[Exception]:
    """A builtin exception class, or one made with the given module, so the SDK names it as a user's would be."""
    import builtins

    module, _, name = qualified.rpartition(".")
    found = getattr(builtins, name, None) if not module else None
    if isinstance(found, type) and issubclass(found, Exception):
        return found
    return type(name, (Exception,), {"__module__": module})


def emit(plans: list[SpanPlan], providers: dict[str, Any], ids: Any, out: io.StringIO | None = None) -> None:
    """Start and end every planned span in time order (parents start first, children end first).

    With `out`, the application's log lines go there as they happen, between the spans the console exporter writes."""
    from opentelemetry import context, trace
    from opentelemetry.trace import NonRecordingSpan, SpanContext, SpanKind, Status, StatusCode, TraceFlags

    ops: list[tuple[int, int, int, int, SpanPlan, str]] = []
    for seq, plan in enumerate(plans):
        ops.append((plan.start, 2, plan.depth, seq, plan, ""))
        ops.append((plan.end, 0, -plan.depth, seq, plan, ""))
        ops.extend((at, 1, 0, seq, plan, line) for at, line in plan.logs)
    ops.sort(key=lambda op: op[:4])  # stable: a plan's log lines at one time keep their order
    for _, phase, _, _, plan, line in ops:
        if phase == 1:
            if out is not None:
                out.write(line + "\n")
        elif phase == 2:
            if out is not None and plan.log:
                out.write(plan.log + "\n")
            if plan.parent is not None:
                ctx = trace.set_span_in_context(plan.parent.span)
            elif plan.remote_parent:
                remote = SpanContext(ids.generate_trace_id(), ids.generate_span_id(), is_remote=True, trace_flags=TraceFlags(1))
                ctx = trace.set_span_in_context(NonRecordingSpan(remote))
            else:
                ctx = context.Context()
            tracer = providers[plan.resource].get_tracer(plan.scope[0], plan.scope[1], schema_url=plan.scope[2])
            plan.span = tracer.start_span(
                plan.name, context=ctx, kind=SpanKind[plan.kind], attributes=plan.attributes, start_time=plan.start
            )
            for name, attributes, timestamp in plan.events:
                plan.span.add_event(name, attributes, timestamp=timestamp)
        else:
            span = plan.span
            if plan.error is not None:
                etype, message = plan.error
                if out is not None:
                    out.write(f"ERROR:agent.tools:{plan.name} failed: {message}\n")
                exc = exception_class(etype)(message)
                function = plan.attributes.get("gen_ai.tool.name") or plan.attributes.get("tool.name") or plan.name
                span.record_exception(exc, {"exception.stacktrace": stacktrace(plan.error, function)}, timestamp=plan.end - MS)
                if plan.error_type_attribute:
                    span.set_attribute("error.type", etype)
                span.set_status(Status(StatusCode.ERROR, message))
            elif plan.status_ok:
                span.set_status(Status(StatusCode.OK))
            if not plan.never_ends:
                span.end(end_time=plan.end)


# --------------------------------------------------------------------------------------------------
# The runs: what happened, decided here once.


def refund_run() -> Run:
    return Run(
        key="refund",
        dialect="genai-latest",
        start_ms=0,
        user="Order 1042 arrived broken. Please refund it.",
        scenario="refund-order",
        conversation_id="conv-7f3a91",
        agent="refund_agent",
        answer="Refunded 59.90 EUR for order 1042 (refund R-88); it reaches your card in 3-5 days.",
        turns=[
            Turn(
                calls=[
                    Call(
                        "lookup_order",
                        "call_Ka81",
                        {"order_id": "1042"},
                        {"order_id": "1042", "status": "delivered", "total": 59.9},
                        duration_ms=120,
                    ),
                    Call(
                        "get_refund_policy",
                        "call_Ka82",
                        {"category": "kitchen"},
                        "Damaged items: full refund within 30 days.",
                        duration_ms=45,
                    ),
                ],
                input_tokens=412,
                output_tokens=58,
            ),
            Turn(
                calls=[
                    Call(
                        "issue_refund",
                        "call_Kb11",
                        {"order_id": "1042", "amount": 59.9},
                        error=("TimeoutError", "payments API did not answer within 10s"),
                        duration_ms=10_000,
                    )
                ],
                input_tokens=560,
                output_tokens=31,
            ),
            Turn(
                calls=[
                    Call(
                        "issue_refund",
                        "call_Kc21",
                        {"order_id": "1042", "amount": 59.9},
                        {"refund_id": "R-88", "status": "queued"},
                        duration_ms=800,
                    )
                ],
                input_tokens=640,
                output_tokens=29,
            ),
            Turn(
                text="Refunded 59.90 EUR for order 1042 (refund R-88); it reaches your card in 3-5 days.",
                input_tokens=702,
                output_tokens=41,
            ),
        ],
    )


def weather_structured_run() -> Run:
    answer = "Yes: 80% chance of rain in Zürich tomorrow (high 11 °C). Take an umbrella."
    return Run(
        key="umbrella",
        dialect="genai-latest-structured",
        start_ms=60_000,
        user="Do I need an umbrella in Zürich tomorrow?",
        conversation_id="conv-2b41e0",
        agent="weather_agent",
        answer=answer,
        turns=[
            Turn(
                calls=[
                    Call(
                        "get_forecast", "call_W1", {"city": "Zürich", "day": "tomorrow"}, {"rain_probability": 0.8, "high_c": 11}
                    )
                ],
                input_tokens=201,
                output_tokens=22,
            ),
            Turn(text=answer, input_tokens=260, output_tokens=25),
        ],
    )


def flight_run(attempt: int) -> Run:
    search = Call(
        "search_flights",
        f"call_F{attempt}s",
        {"from": "LIS", "to": "OSL", "date": "2026-04-10"},
        {"flights": [{"id": "TP1234", "price": 189}, {"id": "SK822", "price": 214}]},
        duration_ms=900,
    )
    book = Call("book_flight", f"call_F{attempt}b", {"flight_id": "TP1234", "passenger": "A. Silva"}, duration_ms=350)
    if attempt == 1:
        book.error = ("agent.tools.SeatUnavailableError", "no seat left on TP1234")
        answer = "Sorry, I could not book TP1234: no seat was left. Shall I try SK822 for 214 EUR?"
    else:
        book.result = {"booking": "PNR-QX7F2", "flight_id": "TP1234"}
        answer = "Booked TP1234 from Lisbon to Oslo on 10 April for 189 EUR, booking PNR-QX7F2."
    return Run(
        key=f"flight{attempt}",
        dialect="genai-latest",
        start_ms=120_000 + (attempt - 1) * 30_000,
        user="Book the cheapest flight from Lisbon to Oslo on 2026-04-10 for A. Silva.",
        scenario="book-flight",
        agent="travel_agent",
        answer=answer,
        turns=[
            Turn(calls=[search], input_tokens=330, output_tokens=40),
            Turn(calls=[book], input_tokens=455, output_tokens=33),
            Turn(text=answer, input_tokens=520, output_tokens=38),
        ],
    )


def hotel_events_run() -> Run:
    return Run(
        key="hotel",
        dialect="genai-1.28-1.36",
        start_ms=200_000,
        user="Move my hotel booking H-311 to the 14th of April.",
        scenario="hotel-swap",
        agent="travel_agent",
        model="gpt-4o",
        turns=[
            Turn(
                calls=[Call("get_booking", "call_H1", {"booking_id": "H-311"}, {"hotel_id": "hx-9", "date": "2026-04-12"})],
                input_tokens=300,
                output_tokens=25,
            ),
            Turn(
                calls=[
                    Call(
                        "check_availability",
                        "call_H2",
                        {"hotel_id": "hx-9", "date": "2026-04-14"},
                        {"available": True},
                        duration_ms=140,
                    ),
                    Call("get_price", "call_H3", {"hotel_id": "hx-9", "date": "2026-04-14"}, {"eur": 132}, duration_ms=70),
                ],
                input_tokens=380,
                output_tokens=52,
            ),
            Turn(
                calls=[Call("change_booking", "call_H4", {"booking_id": "H-311", "date": "2026-04-14"}, {"status": "changed"})],
                input_tokens=450,
                output_tokens=30,
            ),
            Turn(text="Done: booking H-311 now starts on 14 April, at 132 EUR a night.", input_tokens=490, output_tokens=21),
        ],
    )


def no_content_run() -> Run:
    return Run(
        key="quiet",
        dialect="genai-latest-no-content",
        start_ms=200_900,  # overlaps the hotel run: two requests served at once
        content=False,
        agent="support_agent",
        turns=[
            Turn(
                calls=[
                    Call("get_account", "call_N1", {"account": "hidden"}, duration_ms=30),
                    Call("list_invoices", "call_N2", {"account": "hidden"}, duration_ms=55),
                ],
                input_tokens=150,
                output_tokens=40,
            ),
            Turn(text="(not captured)", input_tokens=290, output_tokens=60),
        ],
    )


def orphan_run() -> Run:
    return Run(
        key="orphan",
        dialect="genai-latest-orphan-tool",
        start_ms=201_300,
        orphan=Call("send_email", "call_M9", {"to": "ops@example.com", "subject": "Daily digest"}, "queued", duration_ms=210),
    )


def tip_run() -> Run:
    return Run(
        key="tip",
        dialect="genai-1.27",
        start_ms=400_000,
        user="What is an 18% tip on a 64.50 USD bill, split between 3 people, in EUR?",
        model="gpt-4-turbo",
        turns=[
            Turn(
                calls=[
                    Call("calculator", "call_T1", {"expression": "64.50 * 1.18 / 3"}, "25.37", delay_ms=2, duration_ms=5),
                    Call(
                        "convert_currency",
                        "call_T2",
                        {"amount": 25.37, "from": "USD", "to": "EUR"},
                        "23.35",
                        delay_ms=2,
                        duration_ms=180,
                    ),
                ],
                input_tokens=180,
                output_tokens=61,
            ),
            Turn(text="Each person pays 25.37 USD (about 23.35 EUR), tip included.", input_tokens=262, output_tokens=24),
        ],
    )


def weather_openinference_run() -> Run:
    answer = "Paris: 14 °C and cloudy. Rome: 19 °C and sunny. I could not get Rome's air quality (service unavailable)."
    return Run(
        key="oi",
        dialect="openinference",
        start_ms=600_000,
        user="Compare the weather in Paris and Rome today, and Rome's air quality.",
        scenario="weather-brief",
        agent="weather_agent",
        answer=answer,
        turns=[
            Turn(
                calls=[
                    # Same tool twice, and Rome's call (requested second) starts first.
                    Call("get_weather", "call_P1", {"city": "Paris"}, "14 °C, cloudy", delay_ms=6, duration_ms=90),
                    Call("get_weather", "call_P2", {"city": "Rome"}, "19 °C, sunny", delay_ms=3, duration_ms=110),
                ],
                input_tokens=240,
                output_tokens=44,
            ),
            Turn(
                calls=[
                    Call(
                        "get_air_quality",
                        "call_P3",
                        {"city": "Rome"},
                        error=("httpx.HTTPStatusError", "air quality service returned 503"),
                        duration_ms=75,
                    )
                ],
                input_tokens=310,
                output_tokens=20,
            ),
            Turn(text=answer, input_tokens=370, output_tokens=39),
        ],
    )


def trip_traceloop_run() -> Run:
    text = "Stay at Casa do Rio (109 EUR/night); Saturday is sunny, Sunday brings showers."
    return Run(
        key="trip",
        dialect="openllmetry",
        start_ms=800_000,
        user="Plan a weekend in Porto: a hotel under 120 EUR a night, and the weather.",
        scenario="plan-trip",
        answer=text + "\n(trip plan TP-5 saved)",  # the workflow returns more than the model said
        turns=[
            Turn(
                calls=[
                    # Requested together, run one after the other by the app.
                    Call(
                        "search_hotels",
                        "call_L1",
                        {"city": "Porto", "max_price": 120},
                        [{"name": "Casa do Rio", "price": 109}],
                        delay_ms=3,
                        duration_ms=200,
                    ),
                    Call(
                        "get_weather",
                        "call_L2",
                        {"city": "Porto", "days": 2},
                        {"sat": "sunny", "sun": "showers"},
                        delay_ms=206,
                        duration_ms=80,
                    ),
                ],
                input_tokens=350,
                output_tokens=70,
            ),
            Turn(text=text, input_tokens=470, output_tokens=35),
        ],
    )


CANCEL_ANSWER = "Order 7731 is cancelled; 42.50 EUR goes back to your Visa ending 4242 (refund RF-19)."


def cancel_run(dialect: str) -> Run:
    """The one story every format x dialect file of the matrix tells: two calls requested together
    (the second starts first), a call that fails, its retry, and the answer."""
    return Run(
        key="cancel",
        dialect=dialect,
        start_ms=1_000_000,
        user="Cancel order 7731 and refund it to my card.",
        scenario="cancel-order",
        agent="orders_agent",
        answer=CANCEL_ANSWER,
        turns=[
            Turn(
                calls=[
                    Call(
                        "get_order",
                        "call_C1",
                        {"order_id": "7731"},
                        {"status": "paid", "total": 42.5},
                        delay_ms=9,
                        duration_ms=80,
                    ),
                    Call("get_payment", "call_C2", {"order_id": "7731"}, {"card": "visa-4242"}, delay_ms=2, duration_ms=40),
                ],
                input_tokens=280,
                output_tokens=46,
            ),
            Turn(
                calls=[
                    Call(
                        "cancel_order",
                        "call_C3",
                        {"order_id": "7731", "refund": True},
                        error=("ConnectionError", "orders service refused the connection"),
                        duration_ms=30,
                    )
                ],
                input_tokens=350,
                output_tokens=24,
            ),
            Turn(
                calls=[
                    Call(
                        "cancel_order",
                        "call_C4",
                        {"order_id": "7731", "refund": True},
                        {"cancelled": True, "refund_id": "RF-19"},
                        duration_ms=150,
                    )
                ],
                input_tokens=390,
                output_tokens=24,
            ),
            Turn(text=CANCEL_ANSWER, input_tokens=430, output_tokens=33),
        ],
    )


def http_run(key: str, start_ms: int) -> Run:
    return Run(key=key, dialect="http", start_ms=start_ms, turns=[Turn(duration_ms=25)])


# --------------------------------------------------------------------------------------------------
# Ground truth, from the runs.


def expected_trace(run: Run) -> dict[str, Any]:
    assert run.root is not None and run.root.span is not None
    trace_id = f"{run.root.span.get_span_context().trace_id:032x}"
    if run.dialect == "http":
        return {"trace_id": trace_id, "genai": False}
    if run.orphan is not None:
        c = run.orphan
        return {
            "trace_id": trace_id,
            "genai": True,
            "dialect": run.dialect,
            "scenario": None,
            "conversation_id": None,
            "first_user_message": None,
            "tool_calls": [{"name": c.name, "call_id": c.call_id, "arguments": c.arguments, "error": None, "executed": True}],
            "parallel_groups": [],
            "model_steps": 0,
            "steps": 1,
            "final_answer": None,
            "finish_reasons": [],
            "input_tokens": None,
            "output_tokens": None,
        }
    executed = run.dialect != "genai-1.27"
    ordered: list[tuple[tuple[int, int, int], int, Call]] = []
    for t, turn in enumerate(run.turns):
        for r, call in enumerate(turn.calls):
            ordered.append(((call.start if executed else turn.end, t, r), t, call))
    ordered.sort(key=lambda item: item[0])
    calls = []
    for _, _, call in ordered:
        error = None
        if call.error is not None:
            error = call.error[1] if run.dialect == "openinference" else call.error[0]
        calls.append(
            {
                "name": call.name,
                "call_id": call.call_id,
                "arguments": call.arguments if run.content else None,
                "error": error,
                "executed": executed,
            }
        )
    groups = []
    for t, turn in enumerate(run.turns):
        if len(turn.calls) >= 2:
            groups.append(sorted(i for i, (_, turn_index, _) in enumerate(ordered) if turn_index == t))
    final = None
    if run.content:
        texts = [turn.text for turn in run.turns if turn.text]
        final = run.answer if run.answer is not None else (texts[-1] if texts else None)
    return {
        "trace_id": trace_id,
        "genai": True,
        "dialect": run.dialect,
        "scenario": run.scenario,
        "conversation_id": run.conversation_id,
        "first_user_message": run.user if run.content else None,
        "tool_calls": calls,
        "parallel_groups": groups,
        "model_steps": len(run.turns),
        "steps": len(run.turns) + len(calls),
        "final_answer": final,
        "finish_reasons": [] if run.dialect == "openinference" else [turn.finish_reason for turn in run.turns],
        "input_tokens": sum(turn.input_tokens for turn in run.turns),
        "output_tokens": sum(turn.output_tokens for turn in run.turns),
    }


def order_of_appearance(text: str, runs: list[Run], id_form: Callable[[int], str]) -> list[Run]:
    """The exporter decides the layout; the order of the traces is where each trace id first occurs."""

    def first(run: Run) -> int:
        assert run.root is not None
        position = text.find(id_form(run.root.span.get_span_context().trace_id))
        assert position >= 0, run.key
        return position

    return sorted(runs, key=first)


def hex_id(trace_id: int) -> str:
    return f"{trace_id:032x}"


def console_id(trace_id: int) -> str:
    return f"0x{trace_id:032x}"


def base64_id(trace_id: int) -> str:
    import base64

    return base64.b64encode(trace_id.to_bytes(16, "big")).decode("ascii")


# --------------------------------------------------------------------------------------------------
# One fixture file each.


def collect(runs: list[Run], plans: list[SpanPlan], seed: int) -> list[Any]:
    """Run the plans through providers whose spans land in one in-memory exporter; the spans in end order."""
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    memory = InMemorySpanExporter()
    ids = make_id_generator(seed)
    providers = {name: make_provider(name, ids, [SimpleSpanProcessor(memory)]) for name in RESOURCES}
    emit(plans, providers, ids)
    for provider in providers.values():
        provider.shutdown()
    return list(memory.get_finished_spans())


def plans_for(run: Run) -> list[SpanPlan]:
    layout(run)
    if run.dialect == "http":
        return (
            build_http(run, method="GET", route="/chat/history", db=True)
            if run.key == "http-history"
            else build_http(run, method="GET", route="/healthz", db=False)
        )
    builders: dict[str, Callable[[Run], list[SpanPlan]]] = {
        "genai-latest": build_genai_latest,
        "genai-latest-no-content": build_genai_latest,
        "genai-latest-structured": lambda r: build_genai_latest(r, structured=True),
        "genai-latest-orphan-tool": build_orphan,
        "genai-1.28-1.36": build_genai_events,
        "genai-1.27": build_genai_127,
        "openinference": build_openinference,
        "openllmetry": lambda r: build_traceloop(r, "plan_trip" if r.key == "trip" else r.agent),
        "genai-latest-root-not-exported": build_root_not_exported,
        "assay": build_genai_latest,
    }
    return builders[run.dialect](run)


def otlp_json(runs: list[Run], seed: int, *, indent: int | None) -> str:
    from opentelemetry.exporter.otlp.json.common.trace_encoder import encode_spans

    plans = [plan for run in runs for plan in plans_for(run)]
    request = encode_spans(collect(runs, plans, seed))
    # The OTLP JSON encoder of opentelemetry-exporter-otlp-json-common: hex ids, integer enums, int64 as strings.
    if indent is None:
        return str(request.to_json())
    return json.dumps(request.to_dict(), indent=indent) + "\n"


def proto3_json(runs: list[Run], seed: int, *, snake_case: bool) -> str:
    from google.protobuf.json_format import MessageToJson
    from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans

    plans = [plan for run in runs for plan in plans_for(run)]
    request = encode_spans(collect(runs, plans, seed))
    # Generic protobuf JSON as is: base64 ids and enum names, which OTLP/JSON forbids but files in the wild have.
    return str(MessageToJson(request, preserving_proto_field_name=snake_case)) + "\n"


def otlp_jsonl(runs: list[Run], seed: int, path: Path) -> None:
    from opentelemetry.exporter.otlp.json.file import FileSpanExporter
    from opentelemetry.sdk.trace.export import BatchSpanProcessor

    plans = [plan for run in runs for plan in plans_for(run)]
    path.unlink(missing_ok=True)  # the exporter appends
    ids = make_id_generator(seed)
    # Batches of 5 spans, never on a timer: the batch boundaries depend only on the order spans end.
    processor = BatchSpanProcessor(FileSpanExporter(path), max_export_batch_size=5, schedule_delay_millis=3_600_000)
    provider = make_provider("agent", ids, [processor])
    emit(plans, {"agent": provider}, ids)
    provider.force_flush()
    provider.shutdown()


def console(runs: list[Run], seed: int) -> str:
    from opentelemetry.sdk.trace.export import ConsoleSpanExporter, SimpleSpanProcessor

    out = io.StringIO()
    out.write("INFO:uvicorn.error:Started server process [4127]\nINFO:uvicorn.error:Application startup complete.\n")
    plans = [plan for run in runs for plan in plans_for(run)]
    ids = make_id_generator(seed)
    exporter = ConsoleSpanExporter(out=out)
    providers = {name: make_provider(name, ids, [SimpleSpanProcessor(exporter)]) for name in RESOURCES}
    emit(plans, providers, ids, out)
    out.write("INFO:agent:answered in 2 model steps\nINFO:uvicorn.error:Shutting down\n")
    return out.getvalue()


def assay_rows(runs: list[Run], seed: int) -> str:
    """The SDK's spans as Assay's ``ingest-otel`` reads them (one flat row a span, start order),
    with the attributes Assay's own example rows use: ``gen_ai.prompt`` / ``gen_ai.completion`` text
    and ``gen_ai.tool.args`` / ``gen_ai.tool.result``. Rows have no status (Assay has none), so the
    failed call is a row like any other, as it is in a real Assay file."""
    plans = [plan for run in runs for plan in plans_for(run)]
    rows = []
    prompted = False
    for span in sorted(collect(runs, plans, seed), key=lambda s: (s.start_time, -s.end_time)):
        a = dict(span.attributes or {})
        op = a.get("gen_ai.operation.name")
        attributes: dict[str, Any] = {"gen_ai.operation.name": op}
        if op == "invoke_agent":
            attributes["gen_ai.agent.name"] = a["gen_ai.agent.name"]
            attributes["behavegate.scenario.id"] = a["behavegate.scenario.id"]
            answer = json.loads(a["gen_ai.output.messages"])[0]["parts"][0]["content"]
            attributes["gen_ai.completion"] = answer
        elif op == "chat":
            attributes["gen_ai.request.model"] = a["gen_ai.request.model"]
            if not prompted:
                attributes["gen_ai.prompt"] = json.loads(a["gen_ai.input.messages"])[0]["parts"][0]["content"]
                prompted = True
            texts = [p["content"] for m in json.loads(a["gen_ai.output.messages"]) for p in m["parts"] if p["type"] == "text"]
            if texts:
                attributes["gen_ai.completion"] = "".join(texts)
        elif op == "execute_tool":
            attributes["gen_ai.tool.name"] = a["gen_ai.tool.name"]
            attributes["gen_ai.tool.args"] = a["gen_ai.tool.call.arguments"]
            if "gen_ai.tool.call.result" in a:
                attributes["gen_ai.tool.result"] = a["gen_ai.tool.call.result"]
        row: dict[str, Any] = {"trace_id": f"{span.context.trace_id:032x}", "span_id": f"{span.context.span_id:016x}"}
        if span.parent is not None:
            row["parent_span_id"] = f"{span.parent.span_id:016x}"
        row.update(name=span.name, startTimeUnixNano=str(span.start_time), endTimeUnixNano=str(span.end_time))
        row["attributes"] = attributes
        rows.append(json.dumps(row, ensure_ascii=False))
    return "\n".join(rows) + "\n"


def write_fixture(path: Path, fmt: str, runs: list[Run], seed: int, *, indent: int | None = None) -> list[Run]:
    """Write one file in its format; the runs in the order the file first shows each trace."""
    if fmt == "otlp-json":
        path.write_text(otlp_json(runs, seed, indent=indent), encoding="utf-8")
    elif fmt == "otlp-jsonl":
        otlp_jsonl(runs, seed, path)
    elif fmt == "console":
        path.write_text(console(runs, seed), encoding="utf-8")
    elif fmt == "assay":
        path.write_text(assay_rows(runs, seed), encoding="utf-8")
    else:
        path.write_text(proto3_json(runs, seed, snake_case="snake" in path.name), encoding="utf-8")
    id_form = {"otlp-json": hex_id, "otlp-jsonl": hex_id, "console": console_id, "proto3-json": base64_id, "assay": hex_id}
    return order_of_appearance(path.read_text(encoding="utf-8"), runs, id_form[fmt])


FILES: dict[str, tuple[str, Callable[[], list[Run]]]] = {
    "otlp_genai_latest.json": ("otlp-json", lambda: [refund_run(), http_run("http-history", 30_000)]),
    "otlp_genai_latest_pretty.json": ("otlp-json", lambda: [weather_structured_run()]),
    "otlp_file_exporter.jsonl": (
        "otlp-jsonl",
        lambda: [flight_run(1), flight_run(2), hotel_events_run(), no_content_run(), orphan_run()],
    ),
    "console_exporter.log": ("console", lambda: [http_run("http-health", 399_000), tip_run()]),
    "proto3_openinference.json": ("proto3-json", lambda: [weather_openinference_run()]),
    "proto3_openllmetry_snake.json": ("proto3-json", lambda: [trip_traceloop_run()]),
}


def check_attribute_names() -> None:
    """The gen_ai.* names written here are the semantic-conventions package's own constants."""
    from opentelemetry.semconv._incubating.attributes import error_attributes as e
    from opentelemetry.semconv._incubating.attributes import gen_ai_attributes as g

    pairs = {
        g.GEN_AI_OPERATION_NAME: "gen_ai.operation.name",
        g.GEN_AI_TOOL_NAME: "gen_ai.tool.name",
        g.GEN_AI_TOOL_CALL_ID: "gen_ai.tool.call.id",
        g.GEN_AI_TOOL_CALL_ARGUMENTS: "gen_ai.tool.call.arguments",
        g.GEN_AI_TOOL_CALL_RESULT: "gen_ai.tool.call.result",
        g.GEN_AI_INPUT_MESSAGES: "gen_ai.input.messages",
        g.GEN_AI_OUTPUT_MESSAGES: "gen_ai.output.messages",
        g.GEN_AI_SYSTEM_INSTRUCTIONS: "gen_ai.system_instructions",
        g.GEN_AI_RESPONSE_FINISH_REASONS: "gen_ai.response.finish_reasons",
        g.GEN_AI_USAGE_INPUT_TOKENS: "gen_ai.usage.input_tokens",
        g.GEN_AI_USAGE_OUTPUT_TOKENS: "gen_ai.usage.output_tokens",
        g.GEN_AI_CONVERSATION_ID: "gen_ai.conversation.id",
        g.GEN_AI_AGENT_NAME: "gen_ai.agent.name",
        g.GEN_AI_PROMPT: "gen_ai.prompt",
        g.GEN_AI_COMPLETION: "gen_ai.completion",
        e.ERROR_TYPE: "error.type",
    }
    try:  # not pinned in [test]: checked where installed (openinference-semantic-conventions 0.1.42 agreed)
        from openinference.semconv.trace import MessageAttributes as M
        from openinference.semconv.trace import SpanAttributes as O
        from openinference.semconv.trace import ToolCallAttributes as C

        pairs |= {O.OPENINFERENCE_SPAN_KIND: "openinference.span.kind", O.TOOL_NAME: "tool.name"}
        pairs |= {O.INPUT_VALUE: "input.value", O.OUTPUT_VALUE: "output.value"}
        pairs |= {O.LLM_INPUT_MESSAGES: "llm.input_messages", O.LLM_OUTPUT_MESSAGES: "llm.output_messages"}
        pairs |= {M.MESSAGE_TOOL_CALLS: "message.tool_calls", C.TOOL_CALL_FUNCTION_NAME: "tool_call.function.name"}
        pairs |= {C.TOOL_CALL_FUNCTION_ARGUMENTS_JSON: "tool_call.function.arguments", C.TOOL_CALL_ID: "tool_call.id"}
    except ImportError:
        pass
    try:  # likewise opentelemetry-semantic-conventions-ai (OpenLLMetry), 0.5.1 agreed
        from opentelemetry.semconv_ai import SpanAttributes as T

        pairs |= {T.TRACELOOP_SPAN_KIND: "traceloop.span.kind", T.TRACELOOP_ENTITY_NAME: "traceloop.entity.name"}
        pairs |= {T.TRACELOOP_ENTITY_INPUT: "traceloop.entity.input", T.TRACELOOP_ENTITY_OUTPUT: "traceloop.entity.output"}
        pairs |= {T.LLM_REQUEST_TYPE: "llm.request.type", T.LLM_PROMPTS: "gen_ai.prompt", T.LLM_COMPLETIONS: "gen_ai.completion"}
    except ImportError:
        pass
    wrong = {mine: theirs for theirs, mine in pairs.items() if theirs != mine}
    assert not wrong, f"attribute names differ from opentelemetry-semantic-conventions: {wrong}"


def generate(directory: Path) -> None:
    check_attribute_names()
    directory.mkdir(parents=True, exist_ok=True)
    expected: dict[str, Any] = {"_rules": RULES}
    with clean_otel_environment():
        for seed, (name, (fmt, make_runs)) in enumerate(FILES.items(), start=1):
            indent = 2 if name == "otlp_genai_latest_pretty.json" else None
            ordered = write_fixture(directory / name, fmt, make_runs(), seed, indent=indent)
            expected[name] = {"format": fmt, "traces": [expected_trace(run) for run in ordered]}
    text = json.dumps(expected, indent=2, ensure_ascii=False) + "\n"
    (directory / "expected.json").write_text(text, encoding="utf-8")


# --------------------------------------------------------------------------------------------------
# The matrix: every format x dialect of docs/traces.md, one small file each, and the facts table
# (tool calls in order, failed calls, steps, final answer) for those and the files above.

MATRIX = ROOT / "tests" / "fixtures" / "trace_matrix"
FORMATS = {"otlp-json": "json", "otlp-jsonl": "jsonl", "console": "log", "proto3-json": "json"}
DIALECTS = ("genai-latest", "genai-1.28-1.36", "genai-1.27", "openinference", "openllmetry")
MATRIX_FILES: dict[str, tuple[str, str]] = {
    **{f"{fmt}__{dialect}.{ext}": (fmt, dialect) for fmt, ext in FORMATS.items() for dialect in DIALECTS},
    "otlp-jsonl__genai-latest-root-not-exported.jsonl": ("otlp-jsonl", "genai-latest-root-not-exported"),
    "assay__assay.jsonl": ("assay", "assay"),
}
NOT_SHOWN = {  # which facts a dialect (or a trace's state) cannot show: traces inspect must say so
    "genai-1.27": ["tool_errors"],  # no tool spans: only the requested calls, never an outcome
    "assay": ["tool_errors"],  # rows have no status: a failed call looks like a success
    "genai-latest-no-content": ["final_answer"],  # content capture off
    "genai-latest-orphan-tool": ["final_answer"],  # the agent that answered is in another process
    "genai-latest-root-not-exported": ["final_answer"],  # the answer was on the span never exported
}
FACT_RULES = (
    "One entry per file (path under tests/fixtures), one per GenAI trace in order of first appearance. "
    "The truth is what the run plan in scripts/make_trace_fixtures.py made happen, never read back from the files. "
    "tool_calls: tool names in execution order; parallel: index groups of calls one model step requested together "
    "(any order among themselves is the same fact, as for the contract's exact sequences); tool_errors: failed calls; "
    "steps: model steps + tool calls; final_answer: the run's answer. not_shown: the facts this dialect or trace "
    "cannot show, where `traces inspect` must say 'not shown' instead of a value (its value here is the truth)."
)


def trace_facts(trace: dict[str, Any]) -> dict[str, Any]:
    return {
        "trace_id": trace["trace_id"],
        "dialect": trace["dialect"],
        "tool_calls": [c["name"] for c in trace["tool_calls"]],
        "parallel": trace["parallel_groups"],
        "tool_errors": sum(1 for c in trace["tool_calls"] if c["error"] is not None),
        "steps": trace["steps"],
        "final_answer": trace["final_answer"],
        "not_shown": NOT_SHOWN.get(trace["dialect"], []),
    }


def generate_matrix(directory: Path) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    facts: dict[str, Any] = {"_rules": FACT_RULES}
    with clean_otel_environment():
        for seed, (name, (fmt, dialect)) in enumerate(MATRIX_FILES.items(), start=101):
            run = cancel_run(dialect)
            ordered = write_fixture(directory / name, fmt, [run], seed)
            truth = expected_trace(ordered[0])
            if dialect in NOT_SHOWN and "final_answer" in NOT_SHOWN[dialect]:
                truth["final_answer"] = run.answer  # the truth, though the file cannot show it
            facts[f"trace_matrix/{name}"] = {"format": fmt, "traces": [trace_facts(truth)]}
    with tempfile.TemporaryDirectory() as tmp:  # the first set's truth, from its own run plans
        generate(Path(tmp))
        expected = json.loads((Path(tmp) / "expected.json").read_text(encoding="utf-8"))
    for name, entry in expected.items():
        if not name.startswith("_"):
            genai = [trace_facts(t) for t in entry["traces"] if t["genai"]]
            facts[f"traces/{name}"] = {"format": entry["format"], "traces": genai}
    text = json.dumps(facts, indent=2, ensure_ascii=False) + "\n"
    (directory / "facts.json").write_text(text, encoding="utf-8")


def compare_fresh(generate_into: Callable[[Path], None], directory: Path, rerun: str) -> list[str]:
    """Regenerate into a temporary directory; the differences from `directory`, one line each
    (shared with examples/refund-agent/record_traces.py)."""
    with tempfile.TemporaryDirectory() as tmp:
        fresh = Path(tmp)
        generate_into(fresh)
        problems = []
        made = {p.name for p in fresh.iterdir()}
        have = {p.name for p in directory.iterdir()} if directory.is_dir() else set()
        problems += [f"{name}: missing (run {rerun})" for name in sorted(made - have)]
        problems += [f"{name}: not made by the generator" for name in sorted(have - made)]
        for name in sorted(made & have):
            if (fresh / name).read_bytes() != (directory / name).read_bytes():
                problems.append(f"{name}: differs from what the SDK writes now (run {rerun})")
        return problems


def check(directory: Path = FIXTURES, matrix: Path = MATRIX) -> list[str]:
    rerun = "scripts/make_trace_fixtures.py"
    return compare_fresh(generate, directory, rerun) + compare_fresh(generate_matrix, matrix, rerun)


def generate_all(directory: Path) -> None:
    generate(directory)
    generate_matrix(MATRIX if directory == FIXTURES else directory.parent / "trace_matrix")


def run_cli(argv: list[str] | None, generate_into: Callable[[Path], None], check_in: Callable[[Path], list[str]],
            default: Path, label: str, description: str | None) -> int:  # fmt: skip
    """Write the files, or with --check exit 1 when the committed ones differ from a fresh run."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--check", action="store_true", help="exit 1 if a committed file differs from a fresh run")
    parser.add_argument("--out", type=Path, default=default, help=f"directory (default: {default.name})")
    args = parser.parse_args(argv)
    if args.check:
        problems = check_in(args.out)
        for problem in problems:
            print(problem, file=sys.stderr)
        print(f"{label}: " + ("differ" if problems else "up to date"))
        return 1 if problems else 0
    generate_into(args.out)
    print(f"wrote {args.out}")
    return 0


def main(argv: list[str] | None = None) -> int:
    return run_cli(argv, generate_all, check, FIXTURES, "trace fixtures", __doc__.splitlines()[0] if __doc__ else None)


if __name__ == "__main__":
    sys.exit(main())
