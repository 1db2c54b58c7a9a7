"""``agent.tools_from: {mcp: URL}`` (version 2): the agent's tools read from an MCP server's
``tools/list`` before the run, so ``tools.arguments_valid`` and ``tools.known_only`` check the
schemas the agent is really given.

The server is called only as the agent's endpoint would be (evidence/trust.py, same flags: a
loopback URL in the contract needs --allow-contract-endpoint, a service host --allow-host, a
remote one --tools-mcp URL --allow-remote over HTTPS), with the official ``mcp`` SDK's client,
within a time bound. What it lists is untrusted: each tool goes through the contract loader's
own checks for ``agent.tools`` (names, schemas, their references and patterns), and the
scenarios' ``available_tools`` must name listed tools. Every failure is a configuration error
naming the URL, before any other request."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from behavegate.errors import ContractError, RunError
from behavegate.evidence.trust import Role
from behavegate.frozen import replace
from behavegate.limits import MAX_TOOLS, V2_MAX_INPUT_BYTES
from behavegate.model import Contract, ToolDefinition
from behavegate.text import one_line

if TYPE_CHECKING:
    from behavegate.commands.invocation import LiveAccess
    from behavegate.commands.request import TestRequest

TOOLS_FROM = Role(
    "MCP tool server",
    "agent.tools_from",
    "--tools-mcp",
    "--allow-contract-endpoint",
    "--allow-remote",
    "agent.tools_from",
)
LIST_SECONDS = 30.0  # the whole listing, every page
_DUMMY = {"id": "listed", "prompt": "listed", "expect": {"response": {"contains": ["listed"]}}}


def with_listed_tools(contract: Contract, request: TestRequest, live: LiveAccess) -> Contract:
    """``contract`` with ``agent.tools`` read from its ``agent.tools_from`` server (unchanged
    without one). Raises RunError, naming the URL, when the server is not allowed, cannot be
    reached or lists tools the loader refuses."""
    url = contract.agent.tools_from_mcp
    if contract.version < 2 or url is None:
        return contract
    from behavegate.evidence.trust import choose_endpoint, pin_allowed_host, system_resolver

    endpoint = choose_endpoint(
        url,
        None,
        override=live.tools_mcp,
        allow_remote=request.allow_remote,
        allow_contract_endpoint=request.allow_contract_endpoint,
        authenticated=False,
        allow_hosts=list(live.allow_hosts),
        role=TOOLS_FROM,
        needs_model=False,
    )
    endpoint = pin_allowed_host(endpoint, system_resolver)
    shown = one_line(endpoint.url, 300)
    try:
        listed = asyncio.run(_listed(endpoint.connect_url or endpoint.url, endpoint.host_header))
    except Exception as error:  # the SDK's, httpx's, anyio's or a timeout: one configuration error, never a traceback
        raise RunError(f"agent.tools_from.mcp: could not list the tools of {shown}: {_reason(error)}") from None
    tools = _checked(listed, shown)
    offered = {tool.name for tool in tools}
    for scenario in contract.scenarios:
        missing = sorted(set(scenario.available_tools or ()) - offered)
        if missing:
            raise RunError(
                f"scenario {one_line(scenario.id, 200)!r}: available_tools names tools {shown} does not list: "
                f"{one_line(', '.join(missing), 500)}"
            )
    return replace(contract, agent=replace(contract.agent, tools=tools))


async def _listed(connect_url: str, host_header: str | None) -> list[dict[str, Any]]:
    """Every page of ``tools/list`` as ``agent.tools`` entries (at most MAX_TOOLS + 1)."""
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    from behavegate.evidence.mcp_client import bounded_client

    # No proxy settings read (trust_env); for an allow-listed host, its pinned address is dialled.
    headers = {"Host": host_header} if host_header else {}
    async with (
        bounded_client(LIST_SECONDS, headers, V2_MAX_INPUT_BYTES) as http,  # as much as a contract file
        asyncio.timeout(LIST_SECONDS),
        Client(streamable_http_client(connect_url, http_client=http)) as client,
    ):
        tools: list[dict[str, Any]] = []
        cursor: str | None = None
        while len(tools) <= MAX_TOOLS:
            page = await client.list_tools(cursor=cursor)
            tools += [
                {"name": t.name, "description": t.description or t.title or t.name, "parameters": t.input_schema}
                for t in page.tools
            ]
            cursor = page.next_cursor
            if not cursor:
                break
        return tools


def _checked(listed: list[dict[str, Any]], shown: str) -> tuple[ToolDefinition, ...]:
    """The listed tools through the contract loader's checks for ``agent.tools``."""
    from behavegate.contract.load import parse_contract_text

    if not listed:
        raise RunError(f"agent.tools_from.mcp: {shown} lists no tools")
    text = json.dumps({"version": 2, "agent": {"tools": listed}, "scenarios": [_DUMMY]})
    try:
        return parse_contract_text(text, Path("tools_from.json"), Path(".")).agent.tools
    except ContractError as refused:
        problems = "; ".join(one_line(problem.located(), 300) for problem in refused.problems[:5])
        raise RunError(f"agent.tools_from.mcp: the tools {shown} lists are refused: {problems}") from None


def _reason(error: BaseException) -> str:
    """The first real cause, one line: task groups wrap it, a timeout has no text."""
    while isinstance(error, BaseExceptionGroup) and error.exceptions:
        error = error.exceptions[0]
    if isinstance(error, TimeoutError):
        return f"no answer within {LIST_SECONDS:g} s"
    return one_line(f"{type(error).__name__}: {error}" if str(error) else type(error).__name__, 500)
