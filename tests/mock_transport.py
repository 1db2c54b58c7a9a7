"""``MockTransport(handler)``: httpx's MockTransport on behavegate's own transport interface
(evidence/http_model.Transport), so a unit test writes its agent as httpx handlers do: an
``httpx.Request`` in, an ``httpx.Response`` (or an httpx exception) out. The answer's body
is handed on as the handler's response streams it, unread, so byte caps, decoding and
deadlines meet it as they would meet a socket's."""

from __future__ import annotations

import inspect
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import httpx

from behavegate.evidence import http_model

Handler = Callable[[httpx.Request], httpx.Response | Awaitable[httpx.Response]]


def ours(error: httpx.HTTPError) -> http_model.HTTPError:
    """The same failure as the transport would raise it (the classes share httpx's names)."""
    kind = getattr(http_model, type(error).__name__, None)
    if not (isinstance(kind, type) and issubclass(kind, http_model.HTTPError)):
        kind = http_model.TransportError if isinstance(error, httpx.TransportError) else http_model.HTTPError
    return kind(str(error))


class _Body:
    def __init__(self, response: httpx.Response) -> None:
        self.response = response

    async def __aiter__(self) -> AsyncIterator[bytes]:
        try:
            stream = self.response.stream  # the handler's, unread (``content=`` and ``json=`` bodies too)
            assert isinstance(stream, httpx.AsyncByteStream)
            async for chunk in stream:
                yield chunk
        except httpx.HTTPError as error:
            raise ours(error) from None

    async def aclose(self) -> None:
        stream = self.response.stream
        if isinstance(stream, httpx.AsyncByteStream):
            await stream.aclose()


class MockTransport:
    def __init__(self, handler: Handler) -> None:
        self.handler = handler

    async def handle_async_request(self, request: http_model.Request) -> http_model.Response:
        body = b"".join([piece async for piece in request.stream])
        asked = httpx.Request(request.method.decode(), request.url.text, headers=request.headers.raw, content=body)
        try:
            answer: Any = self.handler(asked)
            if inspect.isawaitable(answer):
                answer = await answer
        except httpx.HTTPError as error:
            raise ours(error) from None
        assert isinstance(answer, httpx.Response)
        return http_model.Response(answer.status_code, headers=answer.headers.raw, stream=_Body(answer))

    async def aclose(self) -> None:
        return None

    async def __aenter__(self) -> MockTransport:
        return self

    async def __aexit__(self, *_: object) -> None:
        await self.aclose()
