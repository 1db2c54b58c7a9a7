"""The support tools behind an MCP server (the mcp SDK's MCPServer over stdio), for the MCP sources.

Each call is appended to the file named by TRACES_TOOL_LOG as the tool itself saw it (the truth).
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _traces_llm import ToolLog
from mcp.server.mcpserver import MCPServer

server = MCPServer("support-tools")
LOG = Path(os.environ["TRACES_TOOL_LOG"])


def _run(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    log = ToolLog()
    try:
        return log.run(name, arguments)
    finally:
        with LOG.open("a", encoding="utf-8") as file:
            file.write(json.dumps(log.entries[0]) + "\n")


@server.tool()
def lookup_order(order_id: str) -> dict[str, Any]:
    """Look an order up by its number."""
    return _run("lookup_order", {"order_id": order_id})


@server.tool()
def issue_refund(order_id: str, amount: float) -> dict[str, Any]:
    """Pay an order's amount back."""
    return _run("issue_refund", {"order_id": order_id, "amount": amount})


@server.tool()
def escalate_to_human(order_id: str, reason: str) -> dict[str, Any]:
    """Hand the conversation to a human colleague."""
    return _run("escalate_to_human", {"order_id": order_id, "reason": reason})


if __name__ == "__main__":
    server.run("stdio")
