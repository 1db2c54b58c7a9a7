"""A refund agent built on the OpenAI Agents SDK, run for behavegate's MCP tool server (issue 38).

Runs in its own venv (requirements.txt; run.py builds it), never in behavegate's. Two servers on
127.0.0.1, ephemeral ports, started by ``python agent.py --variant good|regressed``:

* **The scripted LLM**: a tiny OpenAI-compatible Chat Completions server (starlette). It plays
  the model: the first user message names the order, the number of assistant messages in the
  request is the step; it asks for tool calls, then answers with text that quotes the last tool
  result. ``--variant regressed`` refunds the order that needs a person (the regression a gate
  must catch).
* **The agent service**: ``POST /ask {"question": ...}`` answers ``{"answer": TEXT}`` only: no
  tool calls, no steps. For each request it opens the framework's own MCP client,
  ``MCPServerStreamableHttp``, on the URL in the request's ``X-Behavegate-MCP-URL`` header (the
  attempt's own URL on behavegate's MCP server), and runs ``Runner.run`` with it. Its tools are
  whatever that server lists; nothing here implements a tool.

Prints ``READY <agent url>`` once both listen, then serves until killed.
"""

from __future__ import annotations

import argparse
import json
import socket
import threading
import time
from typing import Any

import uvicorn
from agents import Agent, OpenAIChatCompletionsModel, Runner, set_tracing_disabled
from agents.mcp import MCPServerStreamableHttp
from openai import AsyncOpenAI
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

INSTRUCTIONS = "You handle refunds. Look the order up first. Refunds over 1,000 dollars go to a person."


def plan(question: str, variant: str) -> list[tuple[str, dict[str, Any]]]:
    """The tool calls the scripted model asks for, one a step, for this question."""
    if "A-1001" in question:
        return [("lookup_order", {"order_id": "A-1001"}), ("issue_refund", {"order_id": "A-1001", "amount": 42.0})]
    if "A-2002" in question:
        second = ("issue_refund", {"order_id": "A-2002", "amount": 2400.0})
        if variant == "good":
            second = ("escalate_to_human", {"reason": "refund of 2400 dollars is over the limit"})
        return [("lookup_order", {"order_id": "A-2002"}), second]
    return []


def llm_app(variant: str) -> Starlette:
    async def completions(request: Request) -> JSONResponse:
        body = await request.json()
        messages = body["messages"]
        question = next(m["content"] for m in messages if m["role"] == "user")
        step = sum(1 for m in messages if m["role"] == "assistant")
        calls = plan(str(question), variant)
        usage = {"prompt_tokens": 50, "completion_tokens": 10, "total_tokens": 60}
        if step < len(calls):
            name, arguments = calls[step]
            call = {"id": f"call_{step}", "type": "function", "function": {"name": name, "arguments": json.dumps(arguments)}}
            message: dict[str, Any] = {"role": "assistant", "content": None, "tool_calls": [call]}
            reason = "tool_calls"
        else:
            results = [m.get("content") for m in messages if m["role"] == "tool"]
            message = {"role": "assistant", "content": f"Done. Last result: {results[-1] if results else 'none'}"}
            reason = "stop"
        choice = {"index": 0, "message": message, "finish_reason": reason}
        return JSONResponse(
            {
                "id": "chatcmpl-1",
                "object": "chat.completion",
                "created": 0,
                "model": "scripted",
                "choices": [choice],
                "usage": usage,
            }
        )

    return Starlette(routes=[Route("/v1/chat/completions", completions, methods=["POST"])])


def agent_app(llm_url: str) -> Starlette:
    set_tracing_disabled(True)  # nothing leaves the machine
    model = OpenAIChatCompletionsModel(model="scripted", openai_client=AsyncOpenAI(base_url=llm_url, api_key="unused"))

    async def ask(request: Request) -> JSONResponse:
        body = await request.json()
        url = request.headers["x-behavegate-mcp-url"]  # this attempt's own MCP URL
        async with MCPServerStreamableHttp(params={"url": url}, name="tools", client_session_timeout_seconds=20) as tools:
            agent = Agent(name="refunds", instructions=INSTRUCTIONS, mcp_servers=[tools], model=model)
            result = await Runner.run(agent, body["question"])
        return JSONResponse({"answer": str(result.final_output)})

    return Starlette(routes=[Route("/ask", ask, methods=["POST"])])


def serve(app: Starlette) -> int:
    """Serves ``app`` on 127.0.0.1 in a thread; its port."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", access_log=False))
    threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True).start()
    while not server.started:
        time.sleep(0.01)
    port: int = sock.getsockname()[1]
    return port


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--variant", choices=("good", "regressed"), default="good")
    args = parser.parse_args()
    llm = serve(llm_app(args.variant))
    agent = serve(agent_app(f"http://127.0.0.1:{llm}/v1"))
    print(f"READY http://127.0.0.1:{agent}/ask", flush=True)
    threading.Event().wait()


if __name__ == "__main__":
    main()
