"""The support tools behind an MCP server (the mcp SDK's MCPServer), for the MCP sources: over stdio as a
subprocess (`python _traces_mcp_server.py`, the log file named by TRACES_TOOL_LOG), or built in-process
with `build(log)` and served over streamable HTTP.

Each call is appended to the log file as the tool itself saw it (the truth).
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


def build(log_path: Path) -> MCPServer:
    server = MCPServer("support-tools")

    def run(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        log = ToolLog()
        try:
            return log.run(name, arguments)
        finally:
            with log_path.open("a", encoding="utf-8") as file:
                file.write(json.dumps(log.entries[0]) + "\n")

    @server.tool()
    def lookup_order(order_id: str) -> dict[str, Any]:
        """Look an order up by its number."""
        return run("lookup_order", {"order_id": order_id})

    @server.tool()
    def issue_refund(order_id: str, amount: float) -> dict[str, Any]:
        """Pay an order's amount back."""
        return run("issue_refund", {"order_id": order_id, "amount": amount})

    @server.tool()
    def escalate_to_human(order_id: str, reason: str) -> dict[str, Any]:
        """Hand the conversation to a human colleague."""
        return run("escalate_to_human", {"order_id": order_id, "reason": reason})

    return server


if __name__ == "__main__":
    build(Path(os.environ["TRACES_TOOL_LOG"])).run("stdio")
