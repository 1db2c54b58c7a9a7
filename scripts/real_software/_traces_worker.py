"""Runs one trace source inside the traces venv: `python _traces_worker.py SOURCE OUT_DIR`.

Writes the source's trace file(s) into OUT_DIR and prints its truth (JSON) on stdout: what the
plans made the model answer and what the tools logged when they ran. Never reads a trace back.
One source a process: the instrumentors patch the client libraries globally.
"""

from __future__ import annotations

import asyncio
import importlib.metadata
import json
import os
import random
import sys
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _traces_llm import MODEL, PLANS, STARTED, SYSTEM, TOOL_SCHEMAS, Loopback, Plan, ScriptedModel, ToolLog

# 2026-03-02T09:15:00Z; every span and event time is BASE + n milliseconds, n counting clock reads.
BASE_NS = 1_772_442_900_000_000_000
SCENARIO_ATTRIBUTE = "behavegate.scenario.id"


class _Clock:
    """The SDK's clock, replaced: span and event times follow the order of events, not the machine."""

    def __init__(self) -> None:
        self.now = BASE_NS

    def __call__(self) -> int:
        self.now += 1_000_000
        return self.now


def _setup(seed: int, path: Path, layout: str = "document") -> tuple[Any, Any]:
    """The app's TracerProvider, writing ``path`` with a real exporter.

    layout "lines": SimpleSpanProcessor + FileSpanExporter, one OTLP JSON document a span, a line each.
    layout "document": FileSpanExporter behind a BatchSpanProcessor that only flushes at shutdown,
    so the whole run is one OTLP JSON document (one line, read as otlp-json).
    layout "console": ConsoleSpanExporter, one indented span object after the other.
    """
    import opentelemetry.sdk.trace as sdk_trace
    from opentelemetry import trace
    from opentelemetry.exporter.otlp.json.file import FileSpanExporter
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor, ConsoleSpanExporter, SimpleSpanProcessor
    from opentelemetry.sdk.trace.id_generator import IdGenerator

    class SeededIds(IdGenerator):
        def __init__(self) -> None:
            self._random = random.Random(seed)

        def generate_span_id(self) -> int:
            return self._random.getrandbits(64)

        def generate_trace_id(self) -> int:
            return self._random.getrandbits(128)

    sdk_trace.time_ns = _Clock()  # type: ignore[attr-defined]
    # service.instance.id is a random UUID unless set: fixed, for the same bytes on every run.
    attributes = {"service.name": "support-agent", "service.version": "1.0.0", "service.instance.id": "agent-1"}
    provider = TracerProvider(resource=Resource.create(attributes), id_generator=SeededIds())
    if layout == "lines":
        provider.add_span_processor(SimpleSpanProcessor(FileSpanExporter(path)))
    elif layout == "document":
        exporter = FileSpanExporter(path)
        processor = BatchSpanProcessor(
            exporter, max_queue_size=100_000, max_export_batch_size=100_000, schedule_delay_millis=3_600_000
        )
        provider.add_span_processor(processor)
    else:
        stream = path.open("w", encoding="utf-8")
        provider.add_span_processor(SimpleSpanProcessor(ConsoleSpanExporter(out=stream)))
    trace.set_tracer_provider(provider)
    return provider, trace.get_tracer("support-agent")


def _versions(*names: str) -> dict[str, str]:
    return {name: importlib.metadata.version(name) for name in names}


@dataclass
class Run:
    """The truth of one agent run (one trace)."""

    plan: Plan
    log: ToolLog
    answer: str
    streamed: bool = False
    bound_by: str = "prompt"

    def truth(self) -> dict[str, Any]:
        steps = self.plan.steps
        return {
            "scenario": self.plan.scenario,
            "prompt": self.plan.prompt,
            "bound_by": self.bound_by,
            "streamed": self.streamed,
            "tool_calls": self.log.entries,
            "model_steps": len(steps),
            "requested": [[c.name for c in s.calls] for s in steps],
            "answer": self.answer,
            "usage": [{"input": s.prompt_tokens, "output": s.completion_tokens} for s in steps],
            "input_tokens": sum(s.prompt_tokens for s in steps),
            "output_tokens": sum(s.completion_tokens for s in steps),
        }


def _tool_message(log: ToolLog, call_id: str, name: str, arguments: str) -> dict[str, Any]:
    try:
        content = json.dumps(log.run(name, json.loads(arguments)))
    except Exception as error:
        content = json.dumps({"error": f"{type(error).__name__}: {error}"})
    return {"role": "tool", "tool_call_id": call_id, "content": content}


def openai_loop(
    client: Any,
    plan: Plan,
    *,
    stream: bool = False,
    tool_span: Callable[[str, str], AbstractContextManager[Any]] | None = None,
) -> tuple[ToolLog, str]:
    """A plain agent loop over the openai client: call the model, run the tools it asks for, repeat."""
    log = ToolLog()
    messages: list[dict[str, Any]] = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": plan.prompt}]
    while True:
        if stream:
            content, calls = _streamed(client, messages)
        else:
            response = client.chat.completions.create(model=MODEL, messages=messages, tools=list(TOOL_SCHEMAS))
            message = response.choices[0].message
            content = message.content or ""
            calls = [(c.id, c.function.name, c.function.arguments) for c in message.tool_calls or []]
        if not calls:
            return log, content
        messages.append(
            {
                "role": "assistant",
                "content": content or None,
                "tool_calls": [{"id": i, "type": "function", "function": {"name": n, "arguments": a}} for i, n, a in calls],
            }
        )
        for call_id, name, arguments in calls:
            with tool_span(name, arguments) if tool_span else nullcontext() as span:
                result = _tool_message(log, call_id, name, arguments)
                if span is not None:
                    _finish_tool_span(span, log, result)
            messages.append(result)


def _finish_tool_span(span: Any, log: ToolLog, result: dict[str, Any]) -> None:
    from opentelemetry.trace import Status, StatusCode

    entry = log.entries[-1]
    span.set_attribute("output.value", result["content"])
    span.set_attribute("output.mime_type", "application/json")
    if entry["failed"]:
        span.set_status(Status(StatusCode.ERROR, entry["error"]))


def _streamed(client: Any, messages: list[dict[str, Any]]) -> tuple[str, list[tuple[str, str, str]]]:
    text: list[str] = []
    calls: dict[int, list[str]] = {}
    chunks = client.chat.completions.create(
        model=MODEL,
        messages=messages,
        tools=list(TOOL_SCHEMAS),
        stream=True,
        stream_options={"include_usage": True},
    )
    for chunk in chunks:
        for choice in chunk.choices:
            if choice.delta.content:
                text.append(choice.delta.content)
            for delta in choice.delta.tool_calls or []:
                slot = calls.setdefault(delta.index, ["", "", ""])
                if delta.id:
                    slot[0] = delta.id
                if delta.function and delta.function.name:
                    slot[1] = delta.function.name
                if delta.function and delta.function.arguments:
                    slot[2] += delta.function.arguments
    return "".join(text), [(a, b, c) for a, b, c in (calls[i] for i in sorted(calls))]


@contextmanager
def _root(tracer: Any, plan: Plan, bind: bool) -> Iterator[Any]:
    """The application's own span around one run (a real app has one: a request, a job)."""
    attributes = {SCENARIO_ATTRIBUTE: plan.scenario} if bind else {}
    with tracer.start_as_current_span("handle support request", attributes=attributes) as span:
        yield span


def _file(source: str, layout: str, bind: list[str], runs: list[Run], what: str) -> dict[str, Any]:
    formats = {"lines": "otlp-jsonl", "document": "otlp-json", "console": "console"}
    return {"source": source, "format": formats[layout], "bind": bind, "what": what, "traces": [r.truth() for r in runs]}


ATTRIBUTE_BIND = ["--trace-attribute", SCENARIO_ATTRIBUTE]
PROMPT_BIND = ["--trace-bind", "prompt"]


def _openai_client(model: ScriptedModel, asynchronous: bool = False) -> Any:
    import openai

    kind = openai.AsyncOpenAI if asynchronous else openai.OpenAI
    return kind(base_url=model.base_url, api_key="sk-scripted", max_retries=0)


# --- a. OpenInference around the openai client ---------------------------------------------------------------


def source_openinference(out: Path, name: str) -> dict[str, Any]:
    """The agent traced with OpenInference's own tracer (AGENT and TOOL spans, session.id on every span)."""
    from openinference.instrumentation import OITracer, TraceConfig, using_session
    from openinference.instrumentation.openai import OpenAIInstrumentor

    provider, _ = _setup(11, out / name, layout="lines")
    OpenAIInstrumentor().instrument(tracer_provider=provider)
    oi = OITracer(provider.get_tracer("support-agent"), config=TraceConfig())

    def tool_span(tool: str, arguments: str) -> AbstractContextManager[Any]:
        return oi.start_as_current_span(tool, openinference_span_kind="tool", attributes={"input.value": arguments})

    runs = []
    with ScriptedModel() as model:
        client = _openai_client(model)
        for plan in PLANS:
            agent_span = oi.start_as_current_span(
                "support-agent", openinference_span_kind="agent", attributes={"input.value": plan.prompt}
            )
            with using_session(plan.scenario), agent_span as agent:
                log, answer = openai_loop(client, plan, tool_span=tool_span)
                agent.set_attribute("output.value", answer)
            runs.append(Run(plan, log, answer, bound_by="session.id"))
    provider.shutdown()
    what = "OpenInference: openai instrumentor LLM spans, AGENT and TOOL spans from OITracer, session.id = scenario"
    return {
        "file": _file("openinference-openai", "lines", ["--trace-attribute", "session.id"], runs, what),
        "versions": _versions("openinference-instrumentation-openai", "openinference-instrumentation", "openai"),
    }


def source_openinference_stream(out: Path, name: str) -> dict[str, Any]:
    """Streamed (stream=True), only the instrumentor's LLM spans under the app's span, bound by prompt."""
    from openinference.instrumentation.openai import OpenAIInstrumentor

    provider, tracer = _setup(12, out / name, layout="document")
    OpenAIInstrumentor().instrument(tracer_provider=provider)
    runs = []
    with ScriptedModel() as model:
        client = _openai_client(model)
        for plan in PLANS:
            with _root(tracer, plan, bind=False):
                log, answer = openai_loop(client, plan, stream=True)
            runs.append(Run(plan, log, answer, streamed=True))
    provider.shutdown()
    what = "OpenInference: openai instrumentor LLM spans of streamed calls, tools uninstrumented, bound by prompt"
    return {
        "file": _file("openinference-openai-stream", "document", PROMPT_BIND, runs, what),
        "versions": _versions("openinference-instrumentation-openai", "openinference-instrumentation", "openai"),
    }


def responses_loop(client: Any, plan: Plan) -> tuple[ToolLog, str]:
    """The agent loop over the Responses API, streamed: the answer is whatever the deltas spelled."""
    log = ToolLog()
    tools = [{"type": "function", **schema["function"]} for schema in TOOL_SCHEMAS]
    items: list[dict[str, Any]] = [{"role": "user", "content": plan.prompt}]
    while True:
        text: list[str] = []
        final: Any = None
        events = client.responses.create(model=MODEL, instructions=SYSTEM, input=items, tools=tools, stream=True)
        for event in events:
            if event.type == "response.output_text.delta":
                text.append(event.delta)
            elif event.type == "response.completed":
                final = event.response
        calls = [o for o in final.output if o.type == "function_call"]
        if not calls:
            return log, "".join(text).strip()
        for call in calls:
            items.append({"type": "function_call", "call_id": call.call_id, "name": call.name, "arguments": call.arguments})
            result = _tool_message(log, call.call_id, call.name, call.arguments)
            items.append({"type": "function_call_output", "call_id": call.call_id, "output": result["content"]})


def source_openinference_responses(out: Path, name: str) -> dict[str, Any]:
    """The Responses API, streamed, under the openai instrumentor; tools uninstrumented; bound by prompt."""
    from openinference.instrumentation.openai import OpenAIInstrumentor

    provider, tracer = _setup(13, out / name, layout="document")
    OpenAIInstrumentor().instrument(tracer_provider=provider)
    runs = []
    with ScriptedModel() as model:
        client = _openai_client(model)
        for plan in PLANS:
            with _root(tracer, plan, bind=False):
                log, answer = responses_loop(client, plan)
            runs.append(Run(plan, log, answer, streamed=True))
    provider.shutdown()
    what = "OpenInference: openai instrumentor on streamed Responses API calls, tools uninstrumented, bound by prompt"
    return {
        "file": _file("openinference-openai-responses-stream", "document", PROMPT_BIND, runs, what),
        "versions": _versions("openinference-instrumentation-openai", "openinference-instrumentation", "openai"),
    }


# --- b. OpenLLMetry (traceloop) --------------------------------------------------------------------------------


def source_openllmetry(out: Path, name: str) -> dict[str, Any]:
    """Traceloop's openai instrumentor (content on, its default), console exporter, scenario attribute."""
    from opentelemetry.instrumentation.openai import OpenAIInstrumentor

    provider, tracer = _setup(21, out / name, layout="console")
    OpenAIInstrumentor().instrument(tracer_provider=provider)
    runs = []
    with ScriptedModel() as model:
        client = _openai_client(model)
        for plan in PLANS:
            with _root(tracer, plan, bind=True):
                log, answer = openai_loop(client, plan)
            runs.append(Run(plan, log, answer, bound_by=SCENARIO_ATTRIBUTE))
    provider.shutdown()
    what = "OpenLLMetry: traceloop openai instrumentor LLM spans, tools uninstrumented, ConsoleSpanExporter"
    return {
        "file": _file("openllmetry-openai", "console", ATTRIBUTE_BIND, runs, what),
        "versions": _versions("opentelemetry-instrumentation-openai", "opentelemetry-semantic-conventions-ai", "openai"),
    }


# --- c. OTel's own openai-v2 ------------------------------------------------------------------------------------


def _openai_v2(out: Path, name: str, content: bool) -> dict[str, Any]:
    if content:
        os.environ["OTEL_SEMCONV_STABILITY_OPT_IN"] = "gen_ai_latest_experimental"
        os.environ["OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"] = "span_only"
    from opentelemetry.instrumentation.openai_v2 import OpenAIInstrumentor

    provider, tracer = _setup(31 if content else 32, out / name, layout="lines" if content else "document")
    OpenAIInstrumentor().instrument(tracer_provider=provider)
    runs = []
    with ScriptedModel() as model:
        client = _openai_client(model)
        for plan in PLANS:
            with _root(tracer, plan, bind=True):
                log, answer = openai_loop(client, plan)
            runs.append(Run(plan, log, answer, bound_by=SCENARIO_ATTRIBUTE))
    provider.shutdown()
    if content:
        what = "openai-v2, latest experimental conventions, content span_only; tools uninstrumented"
    else:
        what = "openai-v2, default (1.30) conventions, content capture off; tools uninstrumented"
    return {
        "file": _file(
            "openai-v2" + ("" if content else "-no-content"), "lines" if content else "document", ATTRIBUTE_BIND, runs, what
        ),
        "versions": _versions("opentelemetry-instrumentation-openai-v2", "opentelemetry-util-genai", "openai"),
    }


def source_openai_v2(out: Path, name: str) -> dict[str, Any]:
    return _openai_v2(out, name, content=True)


def source_openai_v2_no_content(out: Path, name: str) -> dict[str, Any]:
    return _openai_v2(out, name, content=False)


# --- d. pydantic-ai's own GenAI spans -------------------------------------------------------------------------


def source_pydantic_ai(out: Path, name: str) -> dict[str, Any]:
    """A pydantic-ai Agent with real tools and instrument=True, nothing else; bound by the prompt."""
    from pydantic_ai import Agent, ModelRetry
    from pydantic_ai.models.openai import OpenAIChatModel
    from pydantic_ai.providers.openai import OpenAIProvider

    provider, _ = _setup(41, out / name, layout="document")
    current: list[ToolLog] = []

    def run_tool(tool: str, **arguments: Any) -> dict[str, Any]:
        try:
            return current[-1].run(tool, arguments)
        except Exception as error:
            # pydantic-ai's way for a tool to fail without ending the run: the model is told and goes on.
            raise ModelRetry(f"{type(error).__name__}: {error}") from error

    runs = []
    with ScriptedModel() as model:
        chat = OpenAIChatModel(MODEL, provider=OpenAIProvider(base_url=model.base_url, api_key="sk-scripted"))
        # The tools are coroutines: pydantic-ai runs a sync tool in a worker thread, and two calls of one step
        # at once would then log (and read the clock) in whichever order the threads ran.
        Agent.instrument_all(True)  # pydantic-ai 2.x: what `Agent(instrument=True)` was, for every agent
        agent = Agent(chat, instructions=SYSTEM, name="support-agent")

        @agent.tool_plain
        async def lookup_order(order_id: str) -> dict[str, Any]:
            """Look an order up by its number."""
            return run_tool("lookup_order", order_id=order_id)

        @agent.tool_plain
        async def issue_refund(order_id: str, amount: float) -> dict[str, Any]:
            """Pay an order's amount back."""
            return run_tool("issue_refund", order_id=order_id, amount=amount)

        @agent.tool_plain
        async def escalate_to_human(order_id: str, reason: str) -> dict[str, Any]:
            """Hand the conversation to a human colleague."""
            return run_tool("escalate_to_human", order_id=order_id, reason=reason)

        for plan in PLANS:
            current.append(ToolLog())
            result = agent.run_sync(plan.prompt)
            runs.append(Run(plan, current[-1], str(result.output)))
    provider.shutdown()
    what = "pydantic-ai Agent(instrument=True): its invoke_agent, chat and execute_tool spans; bound by prompt"
    return {
        "file": _file("pydantic-ai", "document", PROMPT_BIND, runs, what),
        "versions": _versions("pydantic-ai-slim", "openai"),
    }


def source_openai_agents(out: Path, name: str) -> dict[str, Any]:
    """The OpenAI Agents SDK (chat completions model, three function tools) traced by
    openinference-instrumentation-openai-agents; bound by the prompt."""
    from agents import Agent, OpenAIChatCompletionsModel, RunConfig, Runner, function_tool, set_trace_processors
    from openinference.instrumentation.openai_agents import OpenAIAgentsInstrumentor

    provider, _ = _setup(71, out / name, layout="document")
    set_trace_processors([])  # the SDK's default processor exports to OpenAI's backend: none here
    OpenAIAgentsInstrumentor().instrument(tracer_provider=provider)
    current: list[ToolLog] = []

    # Coroutines, as for pydantic-ai: a sync tool would run in a thread, two of one step in either order.
    @function_tool
    async def lookup_order(order_id: str) -> dict[str, Any]:
        """Look an order up by its number."""
        return current[-1].run("lookup_order", {"order_id": order_id})

    @function_tool
    async def issue_refund(order_id: str, amount: float) -> dict[str, Any]:
        """Pay an order's amount back."""
        return current[-1].run("issue_refund", {"order_id": order_id, "amount": amount})

    @function_tool
    async def escalate_to_human(order_id: str, reason: str) -> dict[str, Any]:
        """Hand the conversation to a human colleague."""
        return current[-1].run("escalate_to_human", {"order_id": order_id, "reason": reason})

    runs = []
    with ScriptedModel() as model:
        chat = OpenAIChatCompletionsModel(model=MODEL, openai_client=_openai_client(model, asynchronous=True))
        agent = Agent(
            name="support-agent", instructions=SYSTEM, model=chat, tools=[lookup_order, issue_refund, escalate_to_human]
        )
        for plan in PLANS:
            current.append(ToolLog())
            # group_id is the SDK's conversation id; this instrumentor version records it nowhere: bound by prompt.
            result = Runner.run_sync(agent, plan.prompt, run_config=RunConfig(group_id=plan.scenario))
            runs.append(Run(plan, current[-1], str(result.final_output)))
    provider.shutdown()
    what = "OpenAI Agents SDK traced by openinference-instrumentation-openai-agents (AGENT, LLM, TOOL spans)"
    return {
        "file": _file("openai-agents-openinference", "document", PROMPT_BIND, runs, what),
        "versions": _versions("openai-agents", "openinference-instrumentation-openai-agents", "openai"),
    }


# --- e. LiteLLM's own OTel callback ----------------------------------------------------------------------------


def source_litellm(out: Path, name: str) -> dict[str, Any]:
    """litellm.completion with litellm.callbacks = ["otel"], tools run by the app; scenario attribute.

    USE_OTEL_LITELLM_REQUEST_SPAN=true: without it, under an active span LiteLLM writes each call's
    attributes onto that parent span (the app's, overwritten call after call, and after it ended for the
    last call: the logging thread races the app), so the last step is lost. With it, LiteLLM writes its
    own litellm_request span per call. One logging thread, waited for after each call, keeps the span
    order the same on every run; LiteLLM passes its own wall-clock times (normalised by traces.py).
    """
    os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"  # no cost map fetched from the network
    os.environ["USE_OTEL_LITELLM_REQUEST_SPAN"] = "true"
    os.environ["LOGGING_EXECUTOR_MAX_THREADS"] = "1"
    provider, tracer = _setup(51, out / name, layout="document")
    import litellm
    from litellm.litellm_core_utils.thread_pool_executor import executor

    litellm.callbacks = ["otel"]
    runs = []
    with ScriptedModel() as model:

        class Client:
            """The openai_loop's client shape over litellm.completion."""

            class chat:
                class completions:
                    @staticmethod
                    def create(**kwargs: Any) -> Any:
                        kwargs["model"] = "openai/" + kwargs["model"]
                        response = litellm.completion(api_base=model.base_url, api_key="sk-scripted", **kwargs)
                        executor.submit(lambda: None).result()  # the call's logging task ran before this one
                        return response

        for plan in PLANS:
            with _root(tracer, plan, bind=True):
                log, answer = openai_loop(Client, plan)
            runs.append(Run(plan, log, answer, bound_by=SCENARIO_ATTRIBUTE))
    litellm.callbacks = []
    provider.shutdown()
    what = "LiteLLM's own OpenTelemetry callback (callbacks=['otel']) on litellm.completion; tools uninstrumented"
    return {"file": _file("litellm-otel", "document", ATTRIBUTE_BIND, runs, what), "versions": _versions("litellm")}


# --- f. MCP client spans ------------------------------------------------------------------------------------------


async def _mcp_loop(client: Any, plan: Plan, server_log: Path, url: str | None = None) -> tuple[ToolLog, str]:
    """The agent loop with its tools behind an MCP server (mcp SDK): a stdio subprocess, or ``url``."""
    from mcp import ClientSession, StdioServerParameters, stdio_client
    from mcp.client.streamable_http import streamable_http_client

    server = StdioServerParameters(
        command=sys.executable,
        args=[str(Path(__file__).with_name("_traces_mcp_server.py"))],
        env={"TRACES_TOOL_LOG": str(server_log)},
    )
    messages: list[dict[str, Any]] = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": plan.prompt}]
    server_log.write_text("")
    transport = streamable_http_client(url) if url else stdio_client(server)
    async with transport as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        while True:
            response = await client.chat.completions.create(model=MODEL, messages=messages, tools=list(TOOL_SCHEMAS))
            message = response.choices[0].message
            if not message.tool_calls:
                break
            messages.append(message.model_dump(exclude_none=True))
            for call in message.tool_calls:
                result = await session.call_tool(call.function.name, json.loads(call.function.arguments))
                text = "".join(getattr(part, "text", "") for part in result.content)
                messages.append({"role": "tool", "tool_call_id": call.id, "content": text})
    log = ToolLog([json.loads(line) for line in server_log.read_text().splitlines()])
    return log, message.content or ""


def _mcp_sdk(out: Path, name: str, content: bool) -> dict[str, Any]:
    """The mcp SDK's own client spans around each tools/call, with openai-v2 model spans."""
    if content:
        os.environ["OTEL_SEMCONV_STABILITY_OPT_IN"] = "gen_ai_latest_experimental"
        os.environ["OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"] = "span_only"
    from opentelemetry.instrumentation.openai_v2 import OpenAIInstrumentor

    provider, tracer = _setup(61 if content else 62, out / name, layout="document")
    OpenAIInstrumentor().instrument(tracer_provider=provider)
    runs = []

    async def main() -> None:
        client = _openai_client(model, asynchronous=True)
        for plan in PLANS:
            with _root(tracer, plan, bind=True):
                log, answer = await _mcp_loop(client, plan, out / f".{name}.tools")
            (out / f".{name}.tools").unlink()
            runs.append(Run(plan, log, answer, bound_by=SCENARIO_ATTRIBUTE))

    with ScriptedModel() as model:
        asyncio.run(main())
    provider.shutdown()
    what = "the mcp SDK's own client spans (MCP send tools/call NAME) with openai-v2 model spans, " + (
        "content span_only" if content else "no content (so the MCP spans are the only record of the calls)"
    )
    return {
        "file": _file("mcp-sdk" if content else "mcp-sdk-no-content", "document", ATTRIBUTE_BIND, runs, what),
        "versions": _versions("mcp", "opentelemetry-instrumentation-openai-v2", "opentelemetry-util-genai", "openai"),
    }


def source_mcp_sdk(out: Path, name: str) -> dict[str, Any]:
    return _mcp_sdk(out, name, content=True)


def source_mcp_sdk_no_content(out: Path, name: str) -> dict[str, Any]:
    return _mcp_sdk(out, name, content=False)


def source_mcp_both_sides(out: Path, name: str) -> dict[str, Any]:
    """The MCP server in-process over streamable HTTP on loopback, so the mcp SDK's server spans (it
    continues the client's trace from _meta) land in the file next to its client spans; openai-v2 model
    spans without content."""
    from _traces_mcp_server import build
    from opentelemetry.instrumentation.openai_v2 import OpenAIInstrumentor

    provider, tracer = _setup(63, out / name, layout="document")
    OpenAIInstrumentor().instrument(tracer_provider=provider)
    tool_log = out / f".{name}.tools"
    app = build(tool_log).streamable_http_app()
    runs = []

    async def main() -> None:
        client = _openai_client(model, asynchronous=True)
        for plan in PLANS:
            with _root(tracer, plan, bind=True):
                log, answer = await _mcp_loop(client, plan, tool_log, url=f"http://127.0.0.1:{tools.port}/mcp")
            runs.append(Run(plan, log, answer, bound_by=SCENARIO_ATTRIBUTE))

    with ScriptedModel() as model, Loopback(app, lifespan="on") as tools:
        asyncio.run(main())
    tool_log.unlink()
    provider.shutdown()
    what = "the mcp SDK's client AND server spans (server in-process, streamable HTTP), openai-v2 without content"
    return {
        "file": _file("mcp-sdk-both-sides", "document", ATTRIBUTE_BIND, runs, what),
        "versions": _versions("mcp", "opentelemetry-instrumentation-openai-v2", "opentelemetry-util-genai", "openai"),
        "ports": {tools.port: 8001},
    }


SOURCES: dict[str, tuple[str, Callable[[Path, str], dict[str, Any]]]] = {
    "openinference": ("openinference_openai.jsonl", source_openinference),
    "openinference-stream": ("openinference_openai_stream.json", source_openinference_stream),
    "openinference-responses": ("openinference_openai_responses_stream.json", source_openinference_responses),
    "openllmetry": ("openllmetry_openai_console.log", source_openllmetry),
    "openai-v2": ("openai_v2_content.jsonl", source_openai_v2),
    "openai-v2-no-content": ("openai_v2_no_content.json", source_openai_v2_no_content),
    "pydantic-ai": ("pydantic_ai.json", source_pydantic_ai),
    "openai-agents": ("openai_agents_openinference.json", source_openai_agents),
    "litellm": ("litellm_otel.json", source_litellm),
    "mcp-sdk": ("mcp_sdk_client.json", source_mcp_sdk),
    "mcp-sdk-no-content": ("mcp_sdk_client_no_content.json", source_mcp_sdk_no_content),
    "mcp-sdk-both-sides": ("mcp_sdk_both_sides.json", source_mcp_both_sides),
}


def main() -> None:
    source, out = sys.argv[1], Path(sys.argv[2])
    for key in [k for k in os.environ if k.startswith(("OTEL_", "TRACELOOP_"))]:
        del os.environ[key]
    out.mkdir(parents=True, exist_ok=True)
    name, run = SOURCES[source]
    result = run(out, name)
    (served,) = STARTED
    # The truth is the plans: each scenario's model steps were served once each, in order.
    planned = [{"scenario": p.scenario, "step": i} for p in PLANS for i in range(len(p.steps))]
    if [{"scenario": r["scenario"], "step": r["step"]} for r in served.log.requests] != planned:
        raise SystemExit(f"{source}: the scripted model served {served.log.requests}, not the plans")
    result["file"]["ports"] = {str(served.port): 8000} | {str(p): n for p, n in result.pop("ports", {}).items()}
    result["file"]["versions"] = result.pop("versions") | _versions("opentelemetry-sdk", "opentelemetry-exporter-otlp-json-file")
    json.dump({name: result["file"]}, sys.stdout, indent=1)


if __name__ == "__main__":
    asyncio.set_event_loop_policy(None)
    main()
