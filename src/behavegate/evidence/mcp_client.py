"""The HTTP client under the ``mcp`` SDK's client when behavegate calls an MCP server (an
``agent.api: mcp`` target, an ``agent.tools_from`` listing): every byte the server sends is
counted as it arrives, and past the budget the read stops with an error. The SDK reads a whole
answer before behavegate sees it, so a size check after the fact bounds nothing: a hostile
server could send gigabytes within the time bound. A compressed answer is refused (its bytes
on the wire would not bound what it decodes to); behavegate asks for none."""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping

import httpx2


class TooLarge(Exception):
    """The server sent more than the client's byte budget."""


class _Budget:
    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.left = limit

    def spend(self, size: int) -> None:
        self.left -= size
        if self.left < 0:
            raise TooLarge(f"the MCP server sent more than {self.limit:,} bytes")


class _Counted(httpx2.AsyncByteStream):
    def __init__(self, inner: httpx2.AsyncByteStream, budget: _Budget) -> None:
        self.inner = inner
        self.budget = budget

    async def __aiter__(self) -> AsyncIterator[bytes]:
        async for chunk in self.inner:
            self.budget.spend(len(chunk))
            yield chunk

    async def aclose(self) -> None:
        await self.inner.aclose()


class _Bounded(httpx2.AsyncBaseTransport):
    def __init__(self, limit: int) -> None:
        self.inner = httpx2.AsyncHTTPTransport(trust_env=False)
        self.budget = _Budget(limit)

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        response = await self.inner.handle_async_request(request)
        if response.headers.get("content-encoding", "identity").strip().lower() != "identity":
            await response.aclose()
            raise TooLarge("the MCP server sent a compressed answer (behavegate asks for identity)")
        self.budget.spend(sum(len(key) + len(value) for key, value in response.headers.raw))
        assert isinstance(response.stream, httpx2.AsyncByteStream)
        response.stream = _Counted(response.stream, self.budget)
        return response

    async def aclose(self) -> None:
        await self.inner.aclose()


def bounded_client(timeout: float, headers: Mapping[str, str], limit: int) -> httpx2.AsyncClient:
    """An AsyncClient reading at most ``limit`` bytes over its life (every answer, headers
    included), with no proxy or netrc settings from the environment."""
    return httpx2.AsyncClient(
        trust_env=False,
        timeout=timeout,
        headers={**headers, "Accept-Encoding": "identity"},
        transport=_Bounded(limit),
    )
