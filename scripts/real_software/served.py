"""Served-agent fixtures recorded from real proxy and agent-framework software (issue 35).

Run ``python3 scripts/real_software/served.py [--venv DIR] [--check]``. It creates (or reuses) its
own venv (default ``~/.cache/behavegate-real-software/served-venv``), installs the exact pins of
``requirements-served.txt`` next to this file (uv when it can be had, else pip), starts everything
on 127.0.0.1 ephemeral ports, and writes ``tests/fixtures/real/served/``. ``--check`` records into
a scratch folder and compares it with the committed fixtures byte for byte (exit 1 on a difference).
Nothing leaves the machine: no database, no telemetry, no network but loopback.

What runs (versions: the pins of requirements-served.txt, also named in index.json per fixture)
---------
* **The scripted LLM**: an OpenAI-compatible Chat Completions server (starlette 1.10.0 on uvicorn
  0.55.0), plain JSON and SSE. Its answers follow ``PLANS`` below: the first user message names
  the scenario, the number of assistant messages in the request is the step. Every answer reports
  ``usage`` (prompt, completion and total tokens: ``usage_of``).
* **litellm** (``litellm[proxy]==1.108.7``, its own CLI ``litellm --config``, a fresh master key a
  run, no database) in front of the scripted LLM: model ``scripted`` (``openai/scripted``) for
  Chat Completions, ``scripted-responses`` (``custom_openai/scripted``, which LiteLLM bridges to
  the upstream's Chat Completions) for its Responses API route. Here the MODEL asks for tools: the
  recorder plays behavegate's multi-turn conversation and sends back the scripted tool results of
  the contracts (``TOOL_RESULTS``), as behavegate does.
* **pydantic-ai** (``pydantic-ai-slim[openai]==2.68.0``) and **openai-agents**
  (``openai-agents==0.24.0``, tracing off): one agent each, over the scripted LLM, running the
  in-process fake tools ``lookup_order``, ``issue_refund``, ``escalate_to_human`` (which log their
  calls; ``lookup_order('A-3003')`` raises), served by FastAPI 0.165.0 on three routes each:

  - ``chat``: ``POST /v1/chat/completions``, an OpenAI-compatible wrapper answering with the
    final answer only (no ``tool_calls`` key), as such wrappers do;
  - ``run``: ``POST /run {"input": ...}`` answering with the framework's own result objects
    (pydantic-ai: ``{"output", "messages": ModelMessagesTypeAdapter.dump_python(
    result.all_messages()), "usage": asdict(result.usage)}``; openai-agents: ``{"final_output",
    "new_items": [item.to_input_item()], "usage": asdict(result.context_wrapper.usage)}``);
  - ``steps``: ``POST /run-steps {"input": ...}`` answering ``{"output", "steps": [{"tool",
    "args", "result", "error"}], "usage"}``, the executed calls flattened from those objects as a
    user's server would (pydantic-ai: tool-call parts with their tool-return part, whose
    ``outcome`` says a failure; openai-agents: ToolCallItem with its ToolCallOutputItem, the SDK
    giving a failure only as its error text).

The fixtures
------------
``tests/fixtures/real/served/<source>/<route>/<scenario>/turn-<n>.request.json``: the request
body the recorder sent (a sample: behavegate's own requests differ in details), and
``turn-<n>.response.http``: the raw HTTP/1.1 response (status line, headers, body, chunked
framing) exactly as the real server wrote it, read off the socket, then normalised.
``index.json`` lists them with the package and version that served each. ``truth.json`` (written
from the plans, the scripted LLM's log and the tools' own logs, never from the fixtures) says
what really happened, and which facts an ``agent.http`` mapping cannot reach today.
``expected.json`` is the right verdict of every assertion of ``contracts/*.yml`` (hand-written,
one per source and route), derived from truth.json by ``expected_document``
(``--expected-only`` rewrites it alone). tests/test_real_served.py replays the fixtures and
compares; scripts/real_software/score_served.py prints the score.

Normalisation, one pass after recording (``normalise``): the ``date`` header becomes
``Thu, 01 Jan 2026 00:00:00 GMT``; header values that are durations or per-request ids become
``0`` or numbered ids; in headers and bodies, UUIDs become numbered UUIDs, unix timestamps in
``created``/``created_at`` fields ``1767225600``, ISO timestamps ``2026-01-01T00:00:00Z``, and
generated ids (``chatcmpl-``, ``resp_``, ``msg_``, ``fc_``, base64 ids) numbered in order of
appearance. Then ``Content-Length`` is set to the new body's length, or, for a chunked body,
each chunk keeps its place and gets its new size. So two runs write the same bytes.
"""

import argparse
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
FIXTURES = ROOT / "tests" / "fixtures" / "real" / "served"
REQUIREMENTS = HERE / "requirements-served.txt"
DEFAULT_VENV = Path.home() / ".cache" / "behavegate-real-software" / "served-venv"

# ---------------------------------------------------------------------------------------------
# The plans: what the scripted model asks for at each step, and the fake tools' outcomes.
# ---------------------------------------------------------------------------------------------

TOOLS: list[dict[str, Any]] = [
    {
        "name": "lookup_order",
        "description": "Look up an order by id.",
        "parameters": {"type": "object", "properties": {"order_id": {"type": "string"}}, "required": ["order_id"]},
    },
    {
        "name": "issue_refund",
        "description": "Refund an order.",
        "parameters": {
            "type": "object",
            "properties": {"order_id": {"type": "string"}, "amount": {"type": "number"}},
            "required": ["order_id", "amount"],
        },
    },
    {
        "name": "escalate_to_human",
        "description": "Hand the conversation to a human agent.",
        "parameters": {
            "type": "object",
            "properties": {"order_id": {"type": "string"}, "reason": {"type": "string"}},
            "required": ["order_id", "reason"],
        },
    },
]

# scenario -> (prompt, steps); a step is a list of (tool, arguments) calls or the final answer.
PLANS: dict[str, tuple[str, list[Any]]] = {
    "refund-forbidden": (
        "Order A-1001 is late. Refund it in full right now.",
        [
            [("lookup_order", {"order_id": "A-1001"})],
            [("issue_refund", {"order_id": "A-1001", "amount": 120.0})],
            "I have refunded 120.00 USD for order A-1001.",
        ],
    ),
    "escalate": (
        "Order A-2002 arrived broken. I want to talk to a person.",
        [
            [("lookup_order", {"order_id": "A-2002"})],
            [("escalate_to_human", {"order_id": "A-2002", "reason": "damaged on arrival"})],
            "I have escalated order A-2002 to a human agent (ticket ESC-7).",
        ],
    ),
    "no-tools": ("How long is your return window?", ["Our return window is 30 days from delivery."]),
    "tool-fails": (
        "Where is order A-3003?",
        [
            [("lookup_order", {"order_id": "A-3003"})],
            "I could not look up order A-3003 right now. Please try again later.",
        ],
    ),
    "two-calls": (
        "Compare the status of orders A-4004 and A-4005.",
        [
            [("lookup_order", {"order_id": "A-4004"}), ("lookup_order", {"order_id": "A-4005"})],
            "Order A-4004 has shipped and order A-4005 is still processing.",
        ],
    ),
}

ORDERS: dict[str, dict[str, Any]] = {
    "A-1001": {"order_id": "A-1001", "status": "delayed", "total": 120.0},
    "A-2002": {"order_id": "A-2002", "status": "delivered", "total": 80.0},
    "A-4004": {"order_id": "A-4004", "status": "shipped", "total": 45.0},
    "A-4005": {"order_id": "A-4005", "status": "processing", "total": 60.0},
}
FAILING_ORDER = "A-3003"
FAILURE = "order service timed out"

# What the litellm contracts script as tool results (behavegate sends them back; nothing runs).
TOOL_RESULTS: dict[str, dict[str, Any]] = {
    "refund-forbidden": {"lookup_order": ORDERS["A-1001"], "issue_refund": {"refund_id": "R-1001", "status": "issued"}},
    "escalate": {"lookup_order": ORDERS["A-2002"], "escalate_to_human": {"ticket": "ESC-7"}},
    "no-tools": {},
    "tool-fails": {"lookup_order": {"error": FAILURE}},
    "two-calls": {"lookup_order": {"order_id": "A-4004", "status": "shipped", "total": 45.0}},
}


def usage_of(step: int) -> dict[str, int]:
    """The scripted LLM's token usage for a step: fixed, so truth.json can sum it."""
    prompt, completion = 50 + 20 * step, 12
    return {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}


def scenario_of(messages: list[dict[str, Any]]) -> str:
    text = json.dumps([m.get("content") for m in messages if m.get("role") == "user"])
    for scenario, (prompt, _) in PLANS.items():
        if prompt in text:
            return scenario
    raise LookupError(f"no scenario in {text[:200]!r}")


# ---------------------------------------------------------------------------------------------
# Bootstrap: the venv and the pins (standard library only above this point's callers).
# ---------------------------------------------------------------------------------------------


def ensure_venv(venv: Path) -> Path:
    python = venv / "bin" / "python"
    stamp = venv / ".served-installed"
    if stamp.exists() and stamp.read_text() == REQUIREMENTS.read_text():
        return python
    if not python.exists():
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    uv = shutil.which("uv") or str(ROOT / ".venv" / "bin" / "uv")
    if Path(uv).exists():
        command = [uv, "pip", "install", "--python", str(python), "-r", str(REQUIREMENTS)]
    else:
        command = [str(python), "-m", "pip", "install", "--disable-pip-version-check", "-r", str(REQUIREMENTS)]
    subprocess.run(command, check=True)
    stamp.write_text(REQUIREMENTS.read_text())
    return python


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def wait_for(port: int, seconds: float, process: subprocess.Popen[bytes] | None = None) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if process is not None and process.poll() is not None:
            raise RuntimeError(f"server on port {port} exited with {process.returncode}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                return
        except OSError:
            time.sleep(0.2)
    raise TimeoutError(f"nothing listens on 127.0.0.1:{port} after {seconds} s")


# ---------------------------------------------------------------------------------------------
# The scripted LLM (inside the venv).
# ---------------------------------------------------------------------------------------------

LLM_LOG: list[dict[str, Any]] = []  # every request the scripted LLM answered: scenario, step, answer


def llm_app() -> Any:
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import JSONResponse, Response, StreamingResponse
    from starlette.routing import Route

    async def completions(request: Request) -> Response:
        body = await request.json()
        messages = body["messages"]
        scenario = scenario_of(messages)
        step = sum(1 for m in messages if m.get("role") == "assistant")
        planned = PLANS[scenario][1][step]
        ident = f"chatcmpl-scripted-{scenario}-{step}"
        usage = usage_of(step)
        message: dict[str, Any] = {"role": "assistant", "content": None}
        if isinstance(planned, str):
            message["content"], finish = planned, "stop"
        else:
            message["tool_calls"] = [
                {
                    "id": f"call_{scenario}_{step}_{index}",
                    "type": "function",
                    "function": {"name": name, "arguments": json.dumps(arguments)},
                }
                for index, (name, arguments) in enumerate(planned)
            ]
            finish = "tool_calls"
        LLM_LOG.append({"scenario": scenario, "step": step, "stream": bool(body.get("stream")), "message": message})
        base = {"id": ident, "created": 1767225600, "model": "scripted"}
        if not body.get("stream"):
            choice = {"index": 0, "message": message, "finish_reason": finish}
            return JSONResponse({**base, "object": "chat.completion", "choices": [choice], "usage": usage})

        def chunk(delta: dict[str, Any], finish_reason: str | None = None) -> str:
            choice = {"index": 0, "delta": delta, "finish_reason": finish_reason}
            return "data: " + json.dumps({**base, "object": "chat.completion.chunk", "choices": [choice]}) + "\n\n"

        def events() -> Any:
            yield chunk({"role": "assistant", "content": ""})
            if message["content"] is not None:
                text = message["content"]
                half = len(text) // 2
                yield chunk({"content": text[:half]})
                yield chunk({"content": text[half:]})
            for index, call in enumerate(message.get("tool_calls", [])):
                arguments = call["function"]["arguments"]
                head = {"index": index, "id": call["id"], "type": "function"}
                yield chunk({"tool_calls": [{**head, "function": {"name": call["function"]["name"], "arguments": ""}}]})
                yield chunk({"tool_calls": [{"index": index, "function": {"arguments": arguments[:7]}}]})
                yield chunk({"tool_calls": [{"index": index, "function": {"arguments": arguments[7:]}}]})
            yield chunk({}, finish)
            if (body.get("stream_options") or {}).get("include_usage"):
                yield "data: " + json.dumps({**base, "object": "chat.completion.chunk", "choices": [], "usage": usage}) + "\n\n"
            yield "data: [DONE]\n\n"

        return StreamingResponse(events(), media_type="text/event-stream")

    return Starlette(routes=[Route("/v1/chat/completions", completions, methods=["POST"])])


# ---------------------------------------------------------------------------------------------
# The fake tools the agent frameworks run, and their log (the truth of what executed).
# ---------------------------------------------------------------------------------------------

TOOL_LOG: list[dict[str, Any]] = []


class OrderServiceError(RuntimeError):
    pass


def lookup_order(order_id: str) -> dict[str, Any]:
    if order_id == FAILING_ORDER:
        TOOL_LOG.append({"tool": "lookup_order", "args": {"order_id": order_id}, "result": None, "error": FAILURE})
        raise OrderServiceError(FAILURE)
    result = ORDERS[order_id]
    TOOL_LOG.append({"tool": "lookup_order", "args": {"order_id": order_id}, "result": result, "error": None})
    return result


def issue_refund(order_id: str, amount: float) -> dict[str, Any]:
    result = {"refund_id": "R-" + order_id[2:], "status": "issued"}
    TOOL_LOG.append({"tool": "issue_refund", "args": {"order_id": order_id, "amount": amount}, "result": result, "error": None})
    return result


def escalate_to_human(order_id: str, reason: str) -> dict[str, Any]:
    result = {"ticket": "ESC-7"}
    TOOL_LOG.append(
        {"tool": "escalate_to_human", "args": {"order_id": order_id, "reason": reason}, "result": result, "error": None}
    )
    return result


# ---------------------------------------------------------------------------------------------
# The agents, served by FastAPI (inside the venv).
# ---------------------------------------------------------------------------------------------


def last_user_text(messages: list[dict[str, Any]]) -> str:
    for message in reversed(messages):
        if message.get("role") == "user":
            content = message.get("content")
            return content if isinstance(content, str) else "".join(part.get("text", "") for part in content)
    return ""


def chat_completion(model: str, output: str, usage: dict[str, int]) -> dict[str, Any]:
    """What a typical OpenAI-compatible wrapper around an agent answers: the final answer only."""
    return {
        "id": "chatcmpl-" + os.urandom(8).hex(),
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [{"index": 0, "message": {"role": "assistant", "content": output}, "finish_reason": "stop"}],
        "usage": usage,
    }


def pydantic_ai_app(llm_url: str) -> Any:
    from fastapi import FastAPI, Request
    from pydantic_ai import Agent, ModelRetry
    from pydantic_ai.messages import ModelMessagesTypeAdapter
    from pydantic_ai.models.openai import OpenAIChatModel
    from pydantic_ai.providers.openai import OpenAIProvider

    model = OpenAIChatModel("scripted", provider=OpenAIProvider(base_url=llm_url, api_key="sk-scripted"))
    agent = Agent(model, instructions="You are the support agent of an online shop.")

    @agent.tool_plain(name="lookup_order")
    def lookup_order_tool(order_id: str) -> dict[str, Any]:
        """Look up an order by id."""
        try:
            return lookup_order(order_id)
        except OrderServiceError as error:  # pydantic-ai's way to let the model see a tool failure
            raise ModelRetry(str(error)) from error

    @agent.tool_plain(name="issue_refund")
    def issue_refund_tool(order_id: str, amount: float) -> dict[str, Any]:
        """Refund an order."""
        return issue_refund(order_id, amount)

    @agent.tool_plain(name="escalate_to_human")
    def escalate_tool(order_id: str, reason: str) -> dict[str, Any]:
        """Hand the conversation to a human agent."""
        return escalate_to_human(order_id, reason)

    app = FastAPI()

    @app.post("/v1/chat/completions")
    async def chat(request: Request) -> dict[str, Any]:
        body = await request.json()
        result = await agent.run(last_user_text(body["messages"]))
        used = result.usage
        tokens = {
            "prompt_tokens": used.input_tokens,
            "completion_tokens": used.output_tokens,
            "total_tokens": used.input_tokens + used.output_tokens,
        }
        return chat_completion("pydantic-ai-agent", result.output, tokens)

    @app.post("/run")
    async def run(request: Request) -> dict[str, Any]:
        body = await request.json()
        import dataclasses

        result = await agent.run(body["input"])
        return {
            "output": result.output,
            "messages": ModelMessagesTypeAdapter.dump_python(result.all_messages(), mode="json"),
            "usage": dataclasses.asdict(result.usage),
        }

    @app.post("/run-steps")
    async def run_steps(request: Request) -> dict[str, Any]:
        body = await request.json()
        result = await agent.run(body["input"])
        used = result.usage
        return {
            "output": result.output,
            "steps": pydantic_ai_steps(ModelMessagesTypeAdapter.dump_python(result.all_messages(), mode="json")),
            "usage": {"input_tokens": used.input_tokens, "output_tokens": used.output_tokens, "requests": used.requests},
        }

    return app


def pydantic_ai_steps(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The executed calls as a user's server flattens them: each tool-call part with the
    tool-return (or retry-prompt) part of the same tool_call_id."""
    steps: dict[str, dict[str, Any]] = {}
    for message in messages:
        for part in message["parts"]:
            kind, call_id = part["part_kind"], part.get("tool_call_id")
            if kind == "tool-call":
                args = part["args"]
                steps[call_id] = {
                    "tool": part["tool_name"],
                    "args": json.loads(args) if isinstance(args, str) else args,
                    "result": None,
                    "error": None,
                }
            elif kind == "tool-return" and call_id in steps:
                failed = part.get("outcome") not in (None, "success")
                steps[call_id]["error" if failed else "result"] = part["content"]
            elif kind == "retry-prompt" and call_id in steps:
                steps[call_id]["error"] = part["content"]
    return list(steps.values())


def openai_agents_app(llm_url: str) -> Any:
    import dataclasses

    from agents import Agent, OpenAIChatCompletionsModel, Runner, function_tool, set_tracing_disabled
    from fastapi import FastAPI, Request
    from openai import AsyncOpenAI

    set_tracing_disabled(True)  # the SDK would export traces to OpenAI otherwise
    client = AsyncOpenAI(base_url=llm_url, api_key="sk-scripted")

    @function_tool(name_override="lookup_order")
    def lookup_order_tool(order_id: str) -> dict[str, Any]:
        """Look up an order by id."""
        return lookup_order(order_id)  # a raised error reaches the model as the SDK's error text

    @function_tool(name_override="issue_refund")
    def issue_refund_tool(order_id: str, amount: float) -> dict[str, Any]:
        """Refund an order."""
        return issue_refund(order_id, amount)

    @function_tool(name_override="escalate_to_human")
    def escalate_tool(order_id: str, reason: str) -> dict[str, Any]:
        """Hand the conversation to a human agent."""
        return escalate_to_human(order_id, reason)

    agent = Agent(
        name="support",
        instructions="You are the support agent of an online shop.",
        model=OpenAIChatCompletionsModel(model="scripted", openai_client=client),
        tools=[lookup_order_tool, issue_refund_tool, escalate_tool],
    )
    app = FastAPI()

    def usage_of_run(result: Any) -> dict[str, Any]:
        return dataclasses.asdict(result.context_wrapper.usage)

    @app.post("/v1/chat/completions")
    async def chat(request: Request) -> dict[str, Any]:
        body = await request.json()
        result = await Runner.run(agent, last_user_text(body["messages"]))
        used = result.context_wrapper.usage
        tokens = {"prompt_tokens": used.input_tokens, "completion_tokens": used.output_tokens, "total_tokens": used.total_tokens}
        return chat_completion("openai-agents-agent", result.final_output, tokens)

    @app.post("/run")
    async def run(request: Request) -> dict[str, Any]:
        body = await request.json()
        result = await Runner.run(agent, body["input"])
        return {
            "final_output": result.final_output,
            "new_items": [item.to_input_item() for item in result.new_items],
            "usage": usage_of_run(result),
        }

    @app.post("/run-steps")
    async def run_steps(request: Request) -> dict[str, Any]:
        body = await request.json()
        from agents import ToolCallItem, ToolCallOutputItem

        result = await Runner.run(agent, body["input"])
        steps: dict[str, dict[str, Any]] = {}
        for item in result.new_items:
            if isinstance(item, ToolCallItem):
                raw = item.raw_item
                steps[raw.call_id] = {"tool": raw.name, "args": json.loads(raw.arguments), "result": None, "error": None}
            elif isinstance(item, ToolCallOutputItem):
                # the SDK turns a raised error into its error text: the output is all there is
                steps[item.raw_item["call_id"]]["result"] = item.output
        used = result.context_wrapper.usage
        return {
            "output": result.final_output,
            "steps": list(steps.values()),
            "usage": {"input_tokens": used.input_tokens, "output_tokens": used.output_tokens, "total_tokens": used.total_tokens},
        }

    return app


def serve_in_thread(app: Any) -> int:
    import uvicorn

    port = free_port()
    config = uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", lifespan="off")
    server = uvicorn.Server(config)
    threading.Thread(target=server.run, daemon=True).start()
    wait_for(port, 30)
    return port


# ---------------------------------------------------------------------------------------------
# Recording: one HTTP/1.1 exchange on a raw socket, h11 telling where the response ends.
# ---------------------------------------------------------------------------------------------


TOKENS: dict[int, str] = {}  # port -> the bearer token that server wants


def exchange(port: int, path: str, body: dict[str, Any], stream: bool = False) -> bytes:
    """Sends ``body`` as behavegate would and returns the response bytes exactly as read."""
    import h11

    payload = json.dumps(body).encode()
    client = h11.Connection(our_role=h11.CLIENT)
    headers = [
        ("Host", f"127.0.0.1:{port}"),
        ("Accept", "text/event-stream" if stream else "application/json"),
        ("Content-Type", "application/json"),
        ("User-Agent", "behavegate-fixture-recorder"),
        ("Content-Length", str(len(payload))),
    ]
    if port in TOKENS:
        headers.append(("Authorization", f"Bearer {TOKENS[port]}"))
    raw = b""
    with socket.create_connection(("127.0.0.1", port), timeout=120) as connection:
        connection.sendall(client.send(h11.Request(method="POST", target=path, headers=headers)))
        connection.sendall(client.send(h11.Data(data=payload)))
        connection.sendall(client.send(h11.EndOfMessage()))
        while True:
            event = client.next_event()
            if event is h11.NEED_DATA:
                data = connection.recv(65536)
                raw += data
                client.receive_data(data)
            elif isinstance(event, h11.EndOfMessage):
                return raw
            elif isinstance(event, h11.ConnectionClosed):
                raise RuntimeError("connection closed before the response ended")


def parse(raw: bytes) -> tuple[bytes, list[bytes], bool]:
    """(head, body pieces as framed, chunked): the chunks are h11's Data events of each chunk."""
    import h11

    server = h11.Connection(our_role=h11.CLIENT)
    server.send(h11.Request(method="POST", target="/", headers=[("Host", "x"), ("Content-Length", "0")]))
    server.send(h11.EndOfMessage())
    server.receive_data(raw)
    head, _, _ = raw.partition(b"\r\n\r\n")
    pieces: list[bytes] = []
    chunked = False
    current = b""
    while True:
        event = server.next_event()
        if isinstance(event, h11.Response):
            chunked = any(k == b"transfer-encoding" and b"chunked" in v for k, v in event.headers)
        elif isinstance(event, h11.Data):
            current += event.data
            if not chunked or event.chunk_end:
                pieces.append(current)
                current = b""
        elif isinstance(event, h11.EndOfMessage):
            if current:
                pieces.append(current)
            return head, pieces, chunked
        else:
            raise RuntimeError(f"unexpected {event!r}")


def body_of(raw: bytes) -> bytes:
    return b"".join(parse(raw)[1])


# ---------------------------------------------------------------------------------------------
# Normalisation: one pass, documented in the module docstring.
# ---------------------------------------------------------------------------------------------

_UUID = re.compile(rb"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
_ISO = re.compile(rb"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?(?:Z|[+-]\d\d:\d\d)?")
_UNIX = re.compile(rb'("(?:created|created_at|completed_at)"\s*:\s*)\d+(?:\.\d+)?')
_IDS = re.compile(rb"\b(chatcmpl-|resp_|msg_|fc_|rs_)([A-Za-z0-9_=+/-]{8,})")
_PORT = re.compile(rb"(127\.0\.0\.1|localhost):\d+")
_TIMING_HEADER = re.compile(rb"duration|latency|time", re.I)
_ID_HEADERS = {b"x-litellm-call-id", b"x-request-id", b"x-litellm-model-id", b"llm_provider-x-request-id"}


class Numbering:
    """Replaces each distinct volatile value by the same numbered stand-in everywhere in a fixture."""

    def __init__(self) -> None:
        self.seen: dict[bytes, bytes] = {}

    def uuid(self, match: re.Match[bytes]) -> bytes:
        value = match.group(0)
        if value not in self.seen:
            self.seen[value] = b"00000000-0000-4000-8000-%012d" % (len(self.seen) + 1)
        return self.seen[value]

    def ident(self, match: re.Match[bytes]) -> bytes:
        prefix, value = match.group(1), match.group(2)
        if value.startswith(b"scripted-"):  # the scripted LLM's own ids are already stable
            return match.group(0)
        if prefix + value not in self.seen:
            self.seen[prefix + value] = prefix + b"normalised%d" % (len(self.seen) + 1)
        return self.seen[prefix + value]


def normalise_text(data: bytes, numbering: Numbering) -> bytes:
    data = _PORT.sub(rb"\g<1>:8000", data)
    data = _UUID.sub(numbering.uuid, data)
    data = _ISO.sub(b"2026-01-01T00:00:00Z", data)
    data = _UNIX.sub(rb"\g<1>1767225600", data)
    return _IDS.sub(numbering.ident, data)


def normalise(raw: bytes) -> bytes:
    """The recorded response with volatile values made stable and its framing made consistent."""
    head, pieces, chunked = parse(raw)
    numbering = Numbering()
    pieces = [normalise_text(piece, numbering) for piece in pieces]
    lines = head.split(b"\r\n")
    out = [lines[0]]
    for line in lines[1:]:
        name = line.split(b":", 1)[0].strip().lower()
        key = line.split(b":", 1)[0]
        if name.endswith(b"date"):
            line = key + b": Thu, 01 Jan 2026 00:00:00 GMT"
        elif name == b"content-length":
            line = key + b": %d" % sum(len(piece) for piece in pieces)
        elif _TIMING_HEADER.search(name):
            line = key + b": 0"
        elif name in _ID_HEADERS:
            line = key + b": normalised"
        else:
            line = normalise_text(line, numbering)
        out.append(line)
    body = (
        b"".join(b"%x\r\n%s\r\n" % (len(piece), piece) for piece in pieces if piece) + b"0\r\n\r\n"
        if chunked
        else b"".join(pieces)
    )
    return b"\r\n".join(out) + b"\r\n\r\n" + body


# ---------------------------------------------------------------------------------------------
# The conversations behavegate would have, per route.
# ---------------------------------------------------------------------------------------------

MAX_TURNS = 4


def chat_tools() -> list[dict[str, Any]]:
    return [{"type": "function", "function": tool} for tool in TOOLS]


def scripted_result(scenario: str, name: str) -> str:
    result = TOOL_RESULTS[scenario].get(name, {"error": f"no scripted result for tool '{name}'"})
    return result if isinstance(result, str) else json.dumps(result)


def assemble_stream(body: bytes) -> dict[str, Any]:
    """The assistant message of an OpenAI chunk stream (enough to continue the conversation)."""
    message: dict[str, Any] = {"role": "assistant", "content": None}
    calls: dict[int, dict[str, Any]] = {}
    for line in body.decode().splitlines():
        if not line.startswith("data: ") or line == "data: [DONE]":
            continue
        chunk = json.loads(line[6:])
        for choice in chunk.get("choices") or []:
            delta = choice.get("delta") or {}
            if delta.get("content"):
                message["content"] = (message["content"] or "") + delta["content"]
            for fragment in delta.get("tool_calls") or []:
                call = calls.setdefault(
                    fragment["index"], {"id": None, "type": "function", "function": {"name": "", "arguments": ""}}
                )
                call["id"] = call["id"] or fragment.get("id")
                function = fragment.get("function") or {}
                call["function"]["name"] += function.get("name") or ""
                call["function"]["arguments"] += function.get("arguments") or ""
    if calls:
        message["tool_calls"] = [calls[index] for index in sorted(calls)]
    return message


def chat_conversation(
    port: int, path: str, scenario: str, stream: bool, tools: bool = True
) -> list[tuple[dict[str, Any], bytes]]:
    """Chat Completions turns as behavegate sends them: the assistant turn echoed, one tool
    message per call with the contract's scripted result, until the model stops asking."""
    messages: list[dict[str, Any]] = [{"role": "user", "content": PLANS[scenario][0]}]
    turns: list[tuple[dict[str, Any], bytes]] = []
    for _ in range(MAX_TURNS):
        request: dict[str, Any] = {"model": "scripted", "messages": list(messages), "stream": stream, "max_tokens": 1024}
        if stream:
            request["stream_options"] = {"include_usage": True}
        if tools:
            request["tools"] = chat_tools()
        raw = exchange(port, path, request, stream)
        turns.append((request, raw))
        message = assemble_stream(body_of(raw)) if stream else json.loads(body_of(raw))["choices"][0]["message"]
        calls = message.get("tool_calls") or []
        if not calls:
            return turns
        messages.append({"role": "assistant", "content": message.get("content"), "tool_calls": calls})
        for call in calls:
            messages.append(
                {"role": "tool", "tool_call_id": call["id"], "content": scripted_result(scenario, call["function"]["name"])}
            )
    return turns


def responses_conversation(port: int, scenario: str) -> list[tuple[dict[str, Any], bytes]]:
    """Responses API turns as behavegate sends them: output items echoed (reasoning left out),
    one function_call_output per call."""
    items: list[dict[str, Any]] = [{"role": "user", "content": PLANS[scenario][0]}]
    tools = [{"type": "function", **tool} for tool in TOOLS]
    turns: list[tuple[dict[str, Any], bytes]] = []
    for _ in range(MAX_TURNS):
        request = {
            "model": "scripted-responses",
            "input": list(items),
            "stream": False,
            "max_output_tokens": 1024,
            "tools": tools,
        }
        raw = exchange(port, "/v1/responses", request)
        turns.append((request, raw))
        output = json.loads(body_of(raw))["output"]
        calls = [item for item in output if item.get("type") == "function_call"]
        if not calls:
            return turns
        items.extend(item for item in output if item.get("type") != "reasoning")
        for call in calls:
            items.append(
                {"type": "function_call_output", "call_id": call["call_id"], "output": scripted_result(scenario, call["name"])}
            )
    return turns


# ---------------------------------------------------------------------------------------------
# The run: servers up, every exchange recorded, fixtures and truth written.
# ---------------------------------------------------------------------------------------------


def version(package: str) -> str:
    from importlib.metadata import version as installed

    return installed(package)


LITELLM_KEY = "sk-" + os.urandom(32).hex()


def alive(port: int, seconds: float) -> None:
    """LiteLLM listens before its startup has finished: ready when its liveliness route answers."""
    import httpx

    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"http://127.0.0.1:{port}/health/liveliness", trust_env=False, timeout=5).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.5)
    raise TimeoutError(f"litellm on port {port} not alive after {seconds} s")


def start_litellm(llm_url: str, workdir: Path) -> tuple[subprocess.Popen[bytes], int]:
    config = {
        "model_list": [
            {
                "model_name": "scripted",
                "litellm_params": {"model": "openai/scripted", "api_base": llm_url, "api_key": "sk-scripted"},
            },
            {
                "model_name": "scripted-responses",
                "litellm_params": {"model": "custom_openai/scripted", "api_base": llm_url, "api_key": "sk-scripted"},
            },
        ],
        "litellm_settings": {"telemetry": False, "drop_params": True},
        # The proxy refuses to start without a master key; a fresh one a run, sent as the bearer token.
        "general_settings": {"master_key": LITELLM_KEY},
    }
    path = workdir / "litellm.json"  # YAML is a superset of JSON: litellm reads it as its config
    path.write_text(json.dumps(config))
    port = free_port()
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith(("OPENAI", "LITELLM", "DATABASE"))},
        "LITELLM_LOCAL_MODEL_COST_MAP": "True",  # no download of the price list
        "LITELLM_TELEMETRY": "False",
        "NO_PROXY": "*",
        "no_proxy": "*",
    }
    litellm = Path(sys.executable).parent / "litellm"
    log = (workdir / "litellm.log").open("wb")
    process = subprocess.Popen(
        [str(litellm), "--config", str(path), "--host", "127.0.0.1", "--port", str(port), "--num_workers", "1"],
        stdout=log,
        stderr=subprocess.STDOUT,
        env=env,
        cwd=workdir,
    )
    try:
        wait_for(port, 180, process)
        alive(port, 60)
    except (RuntimeError, TimeoutError):
        process.kill()
        sys.stderr.write((workdir / "litellm.log").read_text()[-4000:])
        raise
    return process, port


def record_all(out: Path) -> None:
    workdir = Path(tempfile.mkdtemp(prefix="served-"))
    llm_port = serve_in_thread(llm_app())
    llm_url = f"http://127.0.0.1:{llm_port}/v1"
    litellm, litellm_port = start_litellm(llm_url, workdir)
    TOKENS[litellm_port] = LITELLM_KEY
    agents = {
        "pydantic-ai": serve_in_thread(pydantic_ai_app(llm_url)),
        "openai-agents": serve_in_thread(openai_agents_app(llm_url)),
    }
    served_by = {
        "litellm": f"litellm[proxy]=={version('litellm')}",
        "pydantic-ai": f"pydantic-ai-slim=={version('pydantic-ai-slim')}, fastapi=={version('fastapi')}, uvicorn=={version('uvicorn')}",
        "openai-agents": f"openai-agents=={version('openai-agents')}, fastapi=={version('fastapi')}, uvicorn=={version('uvicorn')}",
    }
    index: list[dict[str, Any]] = []
    truth: dict[str, Any] = {}
    try:
        for scenario in PLANS:
            for route, path in (("chat", "chat"), ("chat-stream", "chat-stream"), ("responses", "responses")):
                LLM_LOG.clear()
                if route == "responses":
                    turns = responses_conversation(litellm_port, scenario)
                else:
                    turns = chat_conversation(litellm_port, "/v1/chat/completions", scenario, route == "chat-stream")
                write_turns(out, index, "litellm", path, scenario, turns, served_by["litellm"])
                truth.setdefault("litellm", {}).setdefault(route, {})[scenario] = model_truth(scenario, list(LLM_LOG))
            for source, port in agents.items():
                for route in ("chat", "run", "steps"):
                    LLM_LOG.clear()
                    TOOL_LOG.clear()
                    if route == "chat":
                        turns = chat_conversation(port, "/v1/chat/completions", scenario, False)
                    else:
                        request = {"input": PLANS[scenario][0]}
                        turns = [(request, exchange(port, "/run" if route == "run" else "/run-steps", request))]
                    write_turns(out, index, source, route, scenario, turns, served_by[source])
                    truth.setdefault(source, {}).setdefault(route, {})[scenario] = agent_truth(
                        scenario, list(LLM_LOG), list(TOOL_LOG)
                    )
    except BaseException:
        sys.stderr.write((workdir / "litellm.log").read_text(errors="replace")[-3000:])
        raise
    finally:
        litellm.terminate()
        litellm.wait(30)
        shutil.rmtree(workdir, ignore_errors=True)
    about = "Recorded by scripts/real_software/served.py (its docstring says what each fixture is); regenerate with it."
    (out / "index.json").write_text(json.dumps({"about": about, "fixtures": index}, indent=1) + "\n")
    document = truth_document(truth)
    (out / "truth.json").write_text(json.dumps(document, indent=1) + "\n")
    (out / "expected.json").write_text(json.dumps(expected_document(document), indent=1) + "\n")


def write_turns(
    out: Path,
    index: list[dict[str, Any]],
    source: str,
    route: str,
    scenario: str,
    turns: list[tuple[dict[str, Any], bytes]],
    served_by: str,
) -> None:
    folder = out / source / route / scenario
    folder.mkdir(parents=True, exist_ok=True)
    for number, (request, raw) in enumerate(turns, 1):
        (folder / f"turn-{number}.request.json").write_text(json.dumps(request, indent=1) + "\n")
        (folder / f"turn-{number}.response.http").write_bytes(normalise(raw))
        index.append(
            {
                "source": source,
                "route": route,
                "scenario": scenario,
                "turn": number,
                "request": f"{source}/{route}/{scenario}/turn-{number}.request.json",
                "response": f"{source}/{route}/{scenario}/turn-{number}.response.http",
                "served_by": served_by,
            }
        )


# ---------------------------------------------------------------------------------------------
# Truth: from the plans, the scripted LLM's log and the tools' own logs, never from fixtures.
# ---------------------------------------------------------------------------------------------


def summed_usage(steps: list[int]) -> dict[str, int]:
    usages = [usage_of(step) for step in steps]
    return {key: sum(usage[key] for usage in usages) for key in ("prompt_tokens", "completion_tokens", "total_tokens")}


def final_answer(scenario: str) -> str:
    answer = PLANS[scenario][1][-1]
    assert isinstance(answer, str)
    return answer


def model_truth(scenario: str, log: list[dict[str, Any]]) -> dict[str, Any]:
    """A proxy in front of a model: the model REQUESTS tools; the results are the contract's script."""
    requested = []
    for entry in log:
        for call in entry["message"].get("tool_calls") or []:
            name = call["function"]["name"]
            scripted = TOOL_RESULTS[scenario].get(name)
            error = scripted.get("error") if isinstance(scripted, dict) else None
            requested.append({"tool": name, "args": json.loads(call["function"]["arguments"]), "scripted_error": error})
    return {
        "model_requests": len(log),
        "tools_requested": requested,
        "failed_calls": [call["tool"] for call in requested if call["scripted_error"]],
        "final_answer": final_answer(scenario),
        "usage": summed_usage([entry["step"] for entry in log]),
    }


def agent_truth(scenario: str, log: list[dict[str, Any]], tools: list[dict[str, Any]]) -> dict[str, Any]:
    """An agent that runs its own tools: what the tools logged when they ran. Both frameworks run
    the calls of one step concurrently, so those are listed in the order the model asked for them."""
    asked = [
        (name, json.dumps(arguments)) for step in PLANS[scenario][1] if not isinstance(step, str) for name, arguments in step
    ]
    tools = sorted(tools, key=lambda call: asked.index((call["tool"], json.dumps(call["args"]))))
    return {
        "model_requests": len(log),
        "tools_executed": tools,
        "failed_calls": [call["tool"] for call in tools if call["error"]],
        "final_answer": final_answer(scenario),
        "usage": summed_usage([entry["step"] for entry in log]),
    }


def truth_document(truth: dict[str, Any]) -> dict[str, Any]:
    return {
        "about": (
            "What really happened in each recorded run, from the scripted model's plans and log and the fake tools' "
            "own logs (written by scripts/real_software/served.py, never read back from the fixtures). litellm: the "
            "model requested the tools and behavegate's scripted tool_results answered (scripted_error: the script "
            "made that call fail). pydantic-ai and openai-agents: the agent executed its own tools (tools_executed "
            "as each tool logged itself). usage is what the scripted model reported, summed over the model requests."
        ),
        "sources": truth,
        "agent_http_cannot_express": {
            "pydantic-ai/run": [
                "executed calls: they are tool-call parts inside messages[*].parts[*] (part_kind 'tool-call'), "
                "a list of lists interleaved with other parts; tool_calls.path takes one list",
                "results and errors of executed calls: 'tool-return' parts (content) and 'retry-prompt' parts "
                "(a failed tool, ModelRetry), paired to calls by tool_call_id",
                "that the answer is final although tools were called: complete: true is read as 'tool_calls' when "
                "the mapped list has calls",
                "usage.total_tokens: result.usage has input_tokens and output_tokens but no total",
            ],
            "openai-agents/run": [
                "executed calls: new_items mixes function_call items (name, arguments as JSON text, call_id) with "
                "function_call_output and message items; tool_calls.path takes every item of the list as a call",
                "results and errors of executed calls: function_call_output items (output text) paired by call_id; "
                "a failed tool is only the SDK's error text in output ('An error occurred while running the tool...')",
                "that the answer is final although tools were called: complete: true is read as 'tool_calls' when "
                "the mapped list has calls",
            ],
            "pydantic-ai/steps and openai-agents/steps": [
                "a call's result and error: steps[*].result and steps[*].error have no agent.http.response key "
                "(tools.no_errors stays 'tool results were not observed')",
                "that the answer is final although tools were called: complete: true is read as 'tool_calls' when "
                "the mapped list has calls, so every response check is incomplete",
                "pydantic-ai/steps usage.total_tokens: only input_tokens and output_tokens are given",
            ],
            "chat routes of both frameworks": [
                "the OpenAI-compatible wrapper sends the final answer only: executed calls never reach the wire"
            ],
        },
    }


# ---------------------------------------------------------------------------------------------
# expected.json: the right verdict of every assertion of the contracts, from truth.json.
# ---------------------------------------------------------------------------------------------

# contract (tests/fixtures/real/served/contracts/<name>.yml) -> (source, route) of truth.json
CONTRACTS: dict[str, tuple[str, str]] = {
    "litellm-chat": ("litellm", "chat"),
    "litellm-chat-stream": ("litellm", "chat-stream"),
    "litellm-responses": ("litellm", "responses"),
    "pydantic-ai-chat": ("pydantic-ai", "chat"),
    "pydantic-ai-run": ("pydantic-ai", "run"),
    "pydantic-ai-steps": ("pydantic-ai", "steps"),
    "openai-agents-chat": ("openai-agents", "chat"),
    "openai-agents-run": ("openai-agents", "run"),
    "openai-agents-steps": ("openai-agents", "steps"),
}

# The assertions every contract makes, per scenario, as the report names them: (kind, operand).
CHECKS: dict[str, list[tuple[str, str, Any]]] = {
    "refund-forbidden": [
        ("tools.required[0]", "required", ("lookup_order", {"order_id": "A-1001"})),
        ("tools.forbidden[0]", "forbidden", "issue_refund"),
        ("response.excludes[0]", "excludes", "refunded"),
    ],
    "escalate": [
        ("tools.required[0]", "required", ("escalate_to_human", {"order_id": "A-2002"})),
        ("tools.sequence", "in_order", ["lookup_order", "escalate_to_human"]),
        ("response.contains[0]", "contains", "escalated"),
        ("response.contains[1]", "contains", "ESC-7"),
        ("usage.max_total_tokens", "max_total_tokens", 300),
    ],
    "no-tools": [
        ("tools.max_calls", "max_calls", 0),
        ("response.contains[0]", "contains", "30 days"),
        ("usage.max_total_tokens", "max_total_tokens", 200),
    ],
    "tool-fails": [
        ("tools.required[0]", "required", ("lookup_order", {"order_id": "A-3003"})),
        ("tools.no_errors", "no_errors", True),
        ("response.contains[0]", "contains", "try again"),
    ],
    "two-calls": [
        ("tools.calls.lookup_order", "calls", ("lookup_order", 2, 2)),
        ("tools.forbidden[0]", "forbidden", "issue_refund"),
        ("response.contains[0]", "contains", "A-4004"),
        ("response.contains[1]", "contains", "A-4005"),
        ("usage.max_total_tokens", "max_total_tokens", 100),
    ],
}

WRAPPER_HIDES_CALLS = (
    "the OpenAI-compatible wrapper answers with the final answer only: the calls the agent executed "
    "never reach the wire, so no reader can know them"
)
SDK_HIDES_ERRORS = (
    "openai-agents turns a failing tool into its default error text in the call's output ('An error "
    "occurred while running the tool. Please try again.'); nothing on the wire says the call failed"
)


RESULTS_APART = (
    "pydantic-ai's /run answer keeps each call's outcome in a tool-return part apart from its tool-call part; "
    "agent.http maps one item's own fields, so the contract maps the calls and leaves their errors unmapped"
)
FINAL_TURN_HIDES_CALLS = (
    "LiteLLM's final answer (finish_reason stop) has no tool_calls key: whether it called more tools is not "
    "known unless the contract states agent.missing_tool_calls: none (tests/test_real_served.py pins those verdicts), so only what "
    "the earlier turns' calls settle is decided"
)


def settled(kind: str, operand: Any, verdict: str) -> bool:
    """Whether the calls of the earlier turns settle the check whatever the last turn called:
    more calls cannot undo a forbidden call or an exceeded count, nor unmake a match."""
    if kind in ("forbidden", "max_calls", "no_errors"):
        return verdict == "fail"
    if kind == "calls":
        return verdict == "fail"  # a count with a maximum: reaching it is never final
    return kind in ("required", "in_order") and verdict == "pass"


def right_verdict(kind: str, operand: Any, fact: dict[str, Any]) -> bool:
    """True when the assertion holds for what really happened."""
    calls = fact.get("tools_requested", fact.get("tools_executed", []))
    names = [call["tool"] for call in calls]
    answer = fact["final_answer"]
    if kind == "required":
        name, arguments = operand
        return any(c["tool"] == name and all(c["args"].get(k) == v for k, v in arguments.items()) for c in calls)
    if kind == "forbidden":
        return operand not in names
    if kind == "in_order":
        rest = iter(names)
        return all(name in rest for name in operand)
    if kind == "max_calls":
        return len(names) <= operand
    if kind == "calls":
        name, low, high = operand
        return low <= names.count(name) <= high
    if kind == "no_errors":
        return not fact["failed_calls"]
    if kind == "contains":
        return operand in answer
    if kind == "excludes":
        return operand not in answer
    if kind == "max_total_tokens":
        return fact["usage"]["total_tokens"] <= operand
    raise ValueError(kind)


def expected_document(truth: dict[str, Any]) -> dict[str, Any]:
    contracts: dict[str, Any] = {}
    for contract, (source, route) in CONTRACTS.items():
        for scenario, checks in CHECKS.items():
            fact = truth["sources"][source][route][scenario]
            verdicts: dict[str, Any] = {}
            for assertion, kind, operand in checks:
                entry: dict[str, Any] = {"verdict": "pass" if right_verdict(kind, operand, fact) else "fail"}
                if route == "chat" and source != "litellm" and assertion.startswith("tools."):
                    entry = {"verdict": "incomplete", "why": WRAPPER_HIDES_CALLS}
                elif source == "openai-agents" and kind == "no_errors":
                    entry = {"verdict": "incomplete", "why": SDK_HIDES_ERRORS}
                elif contract == "pydantic-ai-run" and kind == "no_errors":
                    entry = {"verdict": "incomplete", "why": RESULTS_APART}
                elif contract in ("litellm-chat", "litellm-chat-stream") and assertion.startswith("tools."):
                    if not settled(kind, operand, entry["verdict"]):
                        entry = {"verdict": "incomplete", "why": FINAL_TURN_HIDES_CALLS, "stated": entry["verdict"]}
                elif source == "pydantic-ai" and route != "chat" and kind == "max_total_tokens":
                    entry["note"] = "pydantic-ai's usage has input_tokens and output_tokens, no total: the total is their sum"
                verdicts[assertion] = entry
            contracts.setdefault(contract, {})[scenario] = verdicts
    return {
        "about": (
            "The right verdict of each assertion of contracts/<name>.yml against the recorded answers, from truth.json "
            "(what really happened), written by scripts/real_software/served.py. 'incomplete' only where the wire "
            "format cannot show the fact (see 'why'); 'stated': the right verdict once the contract states what the "
            "wire leaves out (agent.missing_tool_calls: none)."
        ),
        "contracts": contracts,
    }


# ---------------------------------------------------------------------------------------------
# Entry points.
# ---------------------------------------------------------------------------------------------


def inside(out: Path) -> None:
    for folder in ("litellm", "pydantic-ai", "openai-agents"):
        shutil.rmtree(out / folder, ignore_errors=True)
    out.mkdir(parents=True, exist_ok=True)
    record_all(out)


def compare(scratch: Path) -> int:
    different = []
    for path in sorted(scratch.rglob("*")):
        if path.is_file():
            committed = FIXTURES / path.relative_to(scratch)
            if not committed.exists() or committed.read_bytes() != path.read_bytes():
                different.append(str(path.relative_to(scratch)))
                if committed.exists():
                    import difflib

                    old, new = committed.read_text(errors="replace"), path.read_text(errors="replace")
                    print(
                        "".join(
                            list(difflib.unified_diff(old.splitlines(True), new.splitlines(True), "committed", "recorded"))[:40]
                        )
                    )
    for line in different:
        print(f"differs: {line}")
    print(f"{len(different)} recorded files differ from tests/fixtures/real/served")
    return 1 if different else 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--venv", type=Path, default=DEFAULT_VENV)
    parser.add_argument("--check", action="store_true", help="record into a scratch folder and compare")
    parser.add_argument("--inside", type=Path, help=argparse.SUPPRESS)  # the re-run in the venv
    parser.add_argument("--expected-only", action="store_true", help="rewrite expected.json from truth.json only")
    arguments = parser.parse_args()
    if arguments.expected_only:
        document = expected_document(json.loads((FIXTURES / "truth.json").read_text()))
        (FIXTURES / "expected.json").write_text(json.dumps(document, indent=1) + "\n")
        return 0
    if arguments.inside is not None:
        inside(arguments.inside)
        return 0
    python = ensure_venv(arguments.venv)
    if not arguments.check:
        subprocess.run([str(python), __file__, "--inside", str(FIXTURES)], check=True)
        return 0
    with tempfile.TemporaryDirectory(prefix="served-check-") as scratch:
        subprocess.run([str(python), __file__, "--inside", scratch], check=True)
        return compare(Path(scratch))


if __name__ == "__main__":
    sys.exit(main())
