"""``agent.mcp`` (version 2): the tools a live run serves over MCP (evidence/mcp_server.py).
Problems go to the collector with their YAML path and line."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from behavegate.contract import rules as f

# Where the server listens is the choice of the person running (--mcp-listen), never the contract's.
MCP_KEYS = ("serve",)
_WHERE = "agent.mcp"


def serve(c: f.Collector, agent: dict[str, Any], line_of: Callable[[Any, Any], int | None]) -> bool | None:
    """``agent.mcp: {serve: true}`` of the agent block ``agent``; None when it has a problem."""
    block = c.take(f.mapping, agent["mcp"], _WHERE, line_of(agent, "mcp"), required=True)
    if block is None:
        return None
    for key in block:
        if key not in MCP_KEYS:
            c.problems.append(f.unknown_key(f"{_WHERE}.{key}", key, MCP_KEYS, line_of(block, key)))
    if "serve" not in block:
        c.add(f"{_WHERE}.serve is required", f"{_WHERE}.serve", line_of(agent, "mcp"))
        return None
    value = c.take(f.boolean, block["serve"], f"{_WHERE}.serve", line_of(block, "serve"))
    return value if isinstance(value, bool) else None
