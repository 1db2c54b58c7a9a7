"""What an agent's own MCP client does, for tests of the tool side (agent.mcp): list the tools
on the URL it was given and call them, over the official ``mcp`` SDK's client."""

from __future__ import annotations

import asyncio
import logging
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import uvicorn
from fake_agent import Answer, Request
from mcp import Client
from mcp.server.mcpserver import MCPServer

Calls = list[tuple[str, dict[str, Any]]]  # the tools an agent calls, with their arguments

TOOLS = """  tools:
    - name: lookup_order
      description: Look an order up.
      parameters: {type: object, properties: {order_id: {type: string}}, required: [order_id]}
    - {name: issue_refund, description: Refund an order., parameters: {type: object}}
    - {name: escalate_to_human, description: Hand over to a person., parameters: {type: object}}
"""
HTTP_AGENT = f"""version: 2
agent:
  mcp: {{serve: true}}
  http:
    request: {{input: "{{{{prompt}}}}", mcp: "{{{{mcp_url}}}}"}}
    response: {{content: output, complete: true}}
{TOOLS}"""
REFUND = (
    HTTP_AGENT
    + """scenarios:
  - id: refund
    prompt: Refund order A-1.
    tool_results:
      - {name: lookup_order, arguments: {order_id: A-1}, content: {status: shipped}}
      - {default: {content: {ok: true}}}
    expect:
      response: {contains: [shipped], uses_tool_result: [{tool: lookup_order, field: status}]}
      tools:
        required: [{name: lookup_order, arguments: {order_id: A-1}}]
        forbidden: [issue_refund]
        arguments_valid: true
        no_errors: true
"""
)


def run_tools(url: str, calls: Calls) -> list[str]:
    """Lists the tools, calls each of ``calls`` in order, returns the result texts."""

    async def session() -> list[str]:
        async with Client(url) as client:
            listed = await client.list_tools()
            assert {tool.name for tool in listed.tools} >= {name for name, _ in calls}
            texts = []
            for name, arguments in calls:
                result = await client.call_tool(name, arguments)
                texts.append("".join(getattr(part, "text", "") for part in result.content))
            return texts

    return asyncio.run(session())


@contextmanager
def mcp_served(server: MCPServer) -> Iterator[str]:
    """A real MCP server written with the official SDK (``MCPServer``, FastMCP's name in mcp 2)
    served over Streamable HTTP on 127.0.0.1 for the test's duration; yields its URL."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    app = server.streamable_http_app(json_response=True, stateless_http=True)
    web = uvicorn.Server(uvicorn.Config(app, log_config=None, log_level=logging.CRITICAL, lifespan="on"))
    thread = threading.Thread(target=web.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    while not web.started:
        time.sleep(0.01)
    try:
        yield f"http://127.0.0.1:{sock.getsockname()[1]}/mcp"
    finally:
        web.should_exit = True
        thread.join(10)
        sock.close()


def runs_over_mcp(calls: Calls) -> Answer:
    """An agent service that runs its tools over MCP and answers text only: the URL comes in
    the body (``{{mcp_url}}``) or the ``X-Behavegate-MCP-URL`` header."""

    def answer(request: Request) -> dict[str, Any]:
        texts = run_tools(request.json().get("mcp") or request.header("X-Behavegate-MCP-URL"), calls)
        return {"output": f"Order A-1: {' '.join(texts)}"}

    return answer


FIXED = """version: 2
agent:
  mcp: {serve: true, url: fixed}
  http:
    request: {input: "{{prompt}}"}
    response: {content: output, complete: true}
  tools:
    - {name: lookup_order, description: Look an order up., parameters: {type: object, properties: {order_id: {type: string}}}}
defaults: {runs: 3}
scenarios:
  - id: a-1
    prompt: A-1
    tool_results: {lookup_order: {status: shipped}}
    expect: {tools: {required: [{name: lookup_order, arguments: {order_id: A-1}}], max_calls: 1}}
  - id: b-2
    prompt: B-2
    tool_results: {lookup_order: {status: lost}}
    expect: {tools: {required: [{name: lookup_order, arguments: {order_id: B-2}}], max_calls: 1}}
"""


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port
