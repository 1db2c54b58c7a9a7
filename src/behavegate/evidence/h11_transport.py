"""HTTP/1.1 on asyncio, plain or over TLS, parsed by h11 (the parser httpx's own
transport uses).

Why not httpx's transport: httpcore on anyio spent about 2 ms of CPU a request here, more
than everything else an attempt does; this keeps h11 and drops the layers above it. The
exchange's deadline, byte caps, decompression and refusal of redirects stay in
evidence/transport.py. Requests, answers and failures are evidence/http_model.py's (ConnectError,
ReadError, WriteError, RemoteProtocolError, named as httpx names them).

What it adds to HTTP: HTTP/1.1 has no correlation of its own, so an answer is taken only
from bytes that arrived after its request was written, on a connection that carried
nothing else unread. Bytes before the request, or beyond an answer's end, are an
:class:`UnsolicitedResponse`, and that connection is never used again. A connection is
reused only by the transport that opened it (evidence/live.py gives each attempt its own),
and only after the event loop has had a turn to show it is still quiet; spares
(evidence/connections.py) are opened ahead and given, unused, to one transport each.

The event loop is never held long: parsing gives the loop a turn every few milliseconds
however much is already buffered (and connections.Wire pauses a socket whose unread bytes
pile up).
"""

from __future__ import annotations

import asyncio
import ssl
import time
from collections.abc import AsyncIterator, Callable
from typing import cast

import h11

from behavegate.evidence import http_model
from behavegate.evidence.connections import Key, Spares, Wire, connect
from behavegate.limits import FIRST_REQUEST_SETTLE

MAX_HEAD = 64 * 1024  # a response head (status line and headers)
MAX_HEADERS = 100
MAX_INFORMATIONAL = 10  # 1xx answers before the final one
NO_RESPONSE = "Server disconnected without sending a response."  # httpcore's words, for the same event
_PIECE = 64 * 1024  # body bytes handed on at once; the head and a small body go in one write
_JOINED = 1024  # tiny pieces joined into one at most: the reader counts them as they come
_SLICE = 0.002  # seconds of parsing before the event loop gets a turn


class UnsolicitedResponse(http_model.RemoteProtocolError):
    """Bytes no request on the connection asked for: sent before the request, or beyond an answer's end."""


class _Connection:
    def __init__(self, wire: Wire) -> None:
        self.wire = wire
        self.h11 = h11.Connection(h11.CLIENT, max_incomplete_event_size=MAX_HEAD)
        self.asked = 0  # requests written on it
        self.received = 0  # bytes read since the current request was written
        self.head_end = 0  # of those, the bytes up to the end of the answer's head
        self.resting = time.monotonic() + _SLICE

    def parse(self, request: http_model.Request) -> h11.Event | type[h11.NEED_DATA] | type[h11.PAUSED]:
        """The next event from the bytes at hand; NEED_DATA when none are."""
        while True:
            try:
                event = self.h11.next_event()
            except h11.RemoteProtocolError as exc:
                raise http_model.RemoteProtocolError(str(exc), request=request) from None
            if event is not h11.NEED_DATA or not self.wire.chunks:
                return event
            self._feed(self.wire.take())

    async def event(self, request: http_model.Request) -> h11.Event | type[h11.PAUSED]:
        """The next event of the answer, waiting for bytes if need be."""
        while True:
            event = self.parse(request)
            if event is not h11.NEED_DATA:
                await self.breathe()
                return cast(h11.Event | type[h11.PAUSED], event)
            try:
                data = await self.wire.read()
            except OSError as exc:
                raise http_model.ReadError(str(exc) or type(exc).__name__, request=request) from None
            self.resting = time.monotonic() + _SLICE  # the loop ran while we waited
            if not data and not self.received:
                raise http_model.RemoteProtocolError(NO_RESPONSE, request=request)
            self._feed(data)

    async def breathe(self) -> None:
        """A turn for the event loop once parsing has held it _SLICE seconds."""
        if time.monotonic() >= self.resting:
            await asyncio.sleep(0)
            self.resting = time.monotonic() + _SLICE

    def _feed(self, data: bytes) -> None:
        self.received += len(data)
        self.h11.receive_data(data)

    def surplus(self) -> bool:
        """Bytes already here beyond the answer just read."""
        return bool(self.h11.trailing_data[0]) or bool(self.wire.chunks)

    def close(self) -> None:
        self.wire.close()


class H11Transport:
    """Up to ``connections`` idle connections are kept for this transport's own next
    requests, per scheme, host and port (0: none, a connection a request). ``tls``: the
    context for https (default: the verified one, connections.default_tls); ``spares``: where a new connection
    may come from ready-made."""

    def __init__(self, connections: int, tls: ssl.SSLContext | None = None, spares: Spares | None = None) -> None:
        self._keep = max(connections, 0)
        self._tls = tls
        self._spares = spares
        self._idle: dict[Key, list[_Connection]] = {}

    async def handle_async_request(self, request: http_model.Request) -> http_model.Response:
        url = request.url
        if url.scheme not in ("http", "https"):
            raise http_model.UnsupportedProtocol(f"this transport speaks http and https, not {url.scheme}", request=request)
        key = (url.scheme, url.host, url.effective_port)
        idle = await self._take(key)
        if idle is None and self._spares is not None:
            spare = self._spares.take(key)
            idle = None if spare is None else _Connection(spare)
            self._spares.refill(key)
        if idle is not None:
            try:
                return await self._ask(idle, key, request, reused=True)
            except _Stale as stale:
                # The server closed the kept-alive connection before it answered a byte (it
                # closes after each answer without saying so): sent again once, on a new one.
                try:
                    return await self._ask(await self._open(key, request), key, request, reused=False)
                except http_model.StreamConsumed:  # a body that cannot be sent twice
                    raise stale.error from None
        return await self._ask(await self._open(key, request), key, request, reused=False)

    async def _open(self, key: Key, request: http_model.Request) -> _Connection:
        try:
            return _Connection(await connect(key, self._tls))
        except (OSError, ssl.SSLError) as exc:
            raise http_model.ConnectError(str(exc) or type(exc).__name__, request=request) from None

    async def _ask(self, connection: _Connection, key: Key, request: http_model.Request, reused: bool) -> http_model.Response:
        try:
            if not connection.asked:
                # A connection's first request waits until it is FIRST_REQUEST_SETTLE old (spares, opened
                # ahead, already are): an answer its server wrote on accept, before any request, arrives
                # first and is refused, never taken as the answer to the request sent after it.
                young = FIRST_REQUEST_SETTLE - (time.monotonic() - connection.wire.opened)
                await asyncio.sleep(max(young, 0))
                await asyncio.sleep(0)
            connection.asked += 1
            if connection.wire.chunks:  # bytes before the request: nobody's answer (a close is the read's to report)
                raise UnsolicitedResponse("the server sent bytes before the request", request=request)
            connection.received = 0
            await _send(connection, request)
            status, reason, headers, version = await _read_head(connection, request)
        except (http_model.WriteError, http_model.ReadError, http_model.RemoteProtocolError) as exc:
            connection.close()
            if reused and not connection.received and not isinstance(exc, UnsolicitedResponse):
                raise _Stale(exc) from None
            raise
        except BaseException:
            connection.close()
            raise
        body = ResponseBody(connection, lambda: self._give(key, connection), request)
        extensions = {"http_version": version, "reason_phrase": reason}
        return http_model.Response(status, headers=headers, stream=body, extensions=extensions)

    async def _take(self, key: Key) -> _Connection | None:
        idle = self._idle.get(key)
        if not idle:
            return None
        # Two turns of the event loop: bytes or a close already in the kernel reach the
        # connection (the first turn polls the socket, the second runs its callback).
        await asyncio.sleep(0)
        await asyncio.sleep(0)
        while idle:
            connection = idle.pop()
            if connection.wire.quiet():
                return connection
            connection.close()  # closed by the server, or bytes nobody asked for: not taken
        return None

    def _give(self, key: Key, connection: _Connection) -> None:
        idle = self._idle.setdefault(key, [])
        if len(idle) < self._keep and connection.wire.quiet():
            idle.append(connection)
        else:
            connection.close()

    async def __aenter__(self) -> H11Transport:
        return self

    async def __aexit__(self, *_: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        for idle in self._idle.values():
            for connection in idle:
                connection.close()
        self._idle.clear()


class _Stale(Exception):
    def __init__(self, error: http_model.TransportError) -> None:
        self.error = error


async def _send(connection: _Connection, request: http_model.Request) -> None:
    """The head and a small body go in one write (two writes cost a syscall each on
    every request); a larger body follows in the pieces the stream gives."""
    h = connection.h11
    wire = connection.wire
    assert wire.transport is not None
    try:
        head = h11.Request(method=request.method, target=request.url.target, headers=request.headers.raw)
        pending: bytes | None = h.send(head)
        async for part in request.stream:
            if not part:
                continue
            data = h.send(h11.Data(data=part)) or b""
            if pending is not None:
                if len(pending) + len(data) <= _PIECE:
                    data = pending + data
                else:
                    wire.transport.write(pending)
                pending = None
            wire.transport.write(data)
            await wire.drain()  # at once unless the socket's buffer is full: memory stays bounded
        tail = (pending or b"") + (h.send(h11.EndOfMessage()) or b"")
        if tail:
            wire.transport.write(tail)
        await wire.drain()
    except h11.LocalProtocolError as exc:
        raise http_model.LocalProtocolError(str(exc), request=request) from None
    except OSError as exc:
        raise http_model.WriteError(str(exc) or type(exc).__name__, request=request) from None


async def _read_head(connection: _Connection, request: http_model.Request) -> tuple[int, bytes, list[tuple[bytes, bytes]], bytes]:
    """The final response's status, reason, headers and version (1xx answers skipped)."""
    informational = 0
    while True:
        event = await connection.event(request)
        if isinstance(event, h11.InformationalResponse):
            informational += 1
            if informational > MAX_INFORMATIONAL:
                raise http_model.RemoteProtocolError("too many informational responses", request=request)
            continue
        if not isinstance(event, h11.Response):
            raise http_model.RemoteProtocolError(f"unexpected {type(event).__name__} before the response", request=request)
        connection.head_end = connection.received - len(connection.h11.trailing_data[0])
        if connection.head_end > MAX_HEAD * (informational + 1):
            # h11 bounds a head still arriving; one that came whole in a single read is bounded here.
            raise http_model.RemoteProtocolError("response head is too large", request=request)
        if len(event.headers) > MAX_HEADERS:
            raise http_model.RemoteProtocolError("too many response headers", request=request)
        return event.status_code, event.reason, list(event.headers.raw_items()), b"HTTP/" + event.http_version


class ResponseBody:
    """The response body as it arrives, in pieces of up to 64 KiB; ``received`` counts the
    body's bytes as read from the socket (chunk framing included). The
    connection goes back to the pool only when the body was read to its end and nothing
    followed it."""

    def __init__(self, connection: _Connection, give: Callable[[], None], request: http_model.Request) -> None:
        self._connection = connection
        self._give = give
        self._request = request
        self._done = False
        self._closed = False
        self._pieces = 0

    @property
    def received(self) -> int:
        return self._connection.received - self._connection.head_end

    @property
    def pieces(self) -> int:
        """The pieces (h11 Data events: HTTP chunks, or reads) the body came in so far."""
        return self._pieces

    async def __aiter__(self) -> AsyncIterator[bytes]:
        connection = self._connection
        pieces: list[bytes] = []  # tiny chunks are handed on together, once nothing more is at hand
        size = 0
        while True:
            event = connection.parse(self._request)
            if event is h11.NEED_DATA:
                if pieces:
                    yield b"".join(pieces)
                    pieces, size = [], 0
                event = await connection.event(self._request)
            if isinstance(event, h11.Data):
                self._pieces += 1
                pieces.append(event.data)
                size += len(event.data)
                if size >= _PIECE or len(pieces) >= _JOINED:
                    yield b"".join(pieces)
                    pieces, size = [], 0
                await connection.breathe()
                continue
            if pieces:
                yield b"".join(pieces)
                pieces, size = [], 0
            if isinstance(event, h11.EndOfMessage | h11.ConnectionClosed) or event is h11.PAUSED:
                break
            raise http_model.RemoteProtocolError(f"unexpected {type(event).__name__} in the body", request=self._request)
        if connection.surplus():
            connection.close()
            raise UnsolicitedResponse("the server sent more than one answer to one request", request=self._request)
        self._done = True

    async def aclose(self) -> None:
        if self._closed:
            return
        self._closed = True
        h = self._connection.h11
        if self._done and h.our_state is h11.DONE and h.their_state is h11.DONE:
            h.start_next_cycle()
            self._give()
        else:
            self._connection.close()
