"""What an agent's own MCP client does, for tests of the tool side (agent.mcp): list the tools
on the URL it was given and call them, over the official ``mcp`` SDK's client."""

from __future__ import annotations

import asyncio
from typing import Any

from mcp import Client

Calls = list[tuple[str, dict[str, Any]]]  # the tools an agent calls, with their arguments


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
