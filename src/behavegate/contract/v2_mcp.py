"""``agent.mcp`` (version 2): the tools a live run serves over MCP (evidence/mcp_server.py).
Problems go to the collector with their YAML path and line."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from behavegate.contract import rules as f
from behavegate.model import AgentTarget, NamedCall

# Where the server listens is the choice of the person running (--mcp-listen), never the contract's.
MCP_KEYS = ("serve", "url")
MCP_REQUIRED = ("serve",)
# per_attempt: a fresh unguessable URL each attempt (they may run at once); fixed: one URL the
# agent was configured with once (http://ADDR:PORT/mcp), so attempts run one at a time.
MCP_URLS = ("per_attempt", "fixed")
_WHERE = "agent.mcp"


TOOLS_FROM_KEYS = ("mcp",)


def tools_from(c: f.Collector, agent: dict[str, Any], line_of: Callable[[Any, Any], int | None]) -> str | None:
    """``agent.tools_from: {mcp: URL}``: the MCP server whose ``tools/list`` is the agent's tools
    (read by commands/mcp_tools.py before the run, under the endpoint trust rules); the URL, or
    None when it has a problem."""
    where = "agent.tools_from"
    block = c.take(f.mapping, agent["tools_from"], where, line_of(agent, "tools_from"), required=True)
    if block is None:
        return None
    for key in block:
        if key not in TOOLS_FROM_KEYS:
            c.problems.append(f.unknown_key(f"{where}.{key}", key, TOOLS_FROM_KEYS, line_of(block, key)))
    if "tools" in agent:
        c.add(f"{where} and agent.tools cannot both be given: one source of tools", where, line_of(agent, "tools_from"))
    if "mcp" not in block:
        c.add(f"{where}.mcp is required", f"{where}.mcp", line_of(agent, "tools_from"))
        return None
    url = c.take(f.text, block["mcp"], f"{where}.mcp", line_of(block, "mcp"))
    if url is not None and not url.startswith(("http://", "https://")):
        c.add(f"{where}.mcp must be an http:// or https:// URL (Streamable HTTP)", f"{where}.mcp", line_of(block, "mcp"))
        return None
    return url


CALL_KEYS = ("tool", "arguments")


def call(c: f.Collector, raw: dict[str, Any], path: str, line_of: Callable[[Any, Any], int | None]) -> NamedCall | None:
    """A scenario's ``call: {tool, arguments}`` (with ``agent.api: mcp``): the one tool call it
    makes on the MCP server under test; None when it has a problem."""
    where = f"{path}.call"
    block = c.take(f.mapping, raw["call"], where, line_of(raw, "call"), required=True)
    if block is None:
        return None
    for key in block:
        if key not in CALL_KEYS:
            c.problems.append(f.unknown_key(f"{where}.{key}", key, TOOLS_FROM_KEYS, line_of(block, key)))
    if "tool" not in block:
        c.add(f"{where}.tool is required", f"{where}.tool", line_of(raw, "call"))
        return None
    name = c.take(f.tool_name, block["tool"], f"{where}.tool", line_of(block, "tool"))
    arguments = c.take(f.json_mapping, block.get("arguments", {}), f"{where}.arguments", line_of(block, "arguments"))
    return None if name is None or arguments is None else NamedCall(name, arguments)


def extras(c: f.Collector, agent: dict[str, Any], line_of: Callable[[Any, Any], int | None]) -> dict[str, bool] | None:
    """``agent.mcp: {serve: true, url: per_attempt|fixed}`` of the agent block ``agent`` as
    AgentTarget fields; None when it has a problem."""
    block = c.take(f.mapping, agent["mcp"], _WHERE, line_of(agent, "mcp"), required=True)
    if block is None:
        return None
    for key in block:
        if key not in MCP_KEYS:
            c.problems.append(f.unknown_key(f"{_WHERE}.{key}", key, MCP_KEYS, line_of(block, key)))
    url = "per_attempt"
    if "url" in block:
        found = c.take(f.text, block["url"], f"{_WHERE}.url", line_of(block, "url"))
        if found is None:
            return None
        if found not in MCP_URLS:
            c.add(f"{_WHERE}.url must be one of {list(MCP_URLS)}, got {found!r}", f"{_WHERE}.url", line_of(block, "url"))
            return None
        url = found
    if "serve" not in block:
        c.add(f"{_WHERE}.serve is required", f"{_WHERE}.serve", line_of(agent, "mcp"))
        return None
    value = c.take(f.boolean, block["serve"], f"{_WHERE}.serve", line_of(block, "serve"))
    if not isinstance(value, bool):
        return None
    return {"serve_mcp": value, "mcp_fixed_url": value and url == "fixed"}


def scenario_call(
    c: f.Collector, raw: dict[str, Any], path: str, agent: AgentTarget | None, line_of: Callable[[Any, Any], int | None]
) -> NamedCall | None:
    """``call`` (version 2): the scenario's one call when the target is an MCP server
    (``agent.api: mcp``), where it is required; anywhere else it is a contract error."""
    target = agent is not None and agent.api == "mcp"
    if "call" not in raw:
        if target:
            c.add(f"{path}.call is required: with agent.api: mcp each scenario calls one tool", f"{path}.call", None)
        return None
    if agent is not None and not target:
        where = f"{path}.call"
        c.add(f"{where} needs agent.api: mcp (the endpoint is then an MCP server)", where, line_of(raw, "call"))
    return call(c, raw, path, line_of)
