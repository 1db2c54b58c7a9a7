"""HTTP/1.1 for httpx on asyncio, plain or over TLS, parsed by h11 (the parser httpx's own
transport uses).

Why not httpx's transport: httpcore on anyio spent about 2 ms of CPU a request here, more
than everything else an attempt does; this keeps h11 and drops the layers above it. The
exchange's deadline, byte caps, decompression and refusal of redirects stay in
evidence/transport.py. Failures are httpx's exceptions (ConnectError, ReadError, WriteError,
RemoteProtocolError), so a failure is named the same whichever transport met it.

What it adds to HTTP: HTTP/1.1 has no correlation of its own, so an answer is taken only
from bytes that arrived after its request was written, on a connection that carried
nothing else unread. Bytes before the request, or beyond an answer's end, are an
:class:`UnsolicitedResponse`, and that connection is never used again. A connection is
reused only by the transport that opened it (evidence/live.py gives each attempt its own),
and only after the event loop has had a turn to show it is still quiet; :class:`Spares`
are opened ahead and given, unused, to one transport each.

The event loop is never held long: parsing gives the loop a turn every few milliseconds
however much is already buffered, and a socket whose unread bytes pile up is paused.
"""

from __future__ import annotations

import asyncio
import functools
import ssl
import time
from collections import deque
from collections.abc import AsyncIterator, Callable
from typing import cast

import h11
import httpx

MAX_HEAD = 64 * 1024  # a response head (status line and headers)
MAX_HEADERS = 100
MAX_INFORMATIONAL = 10  # 1xx answers before the final one
NO_RESPONSE = "Server disconnected without sending a response."  # httpcore's words, for the same event
_PIECE = 64 * 1024  # body bytes handed on at once; the head and a small body go in one write
_JOINED = 1024  # tiny pieces joined into one at most: the reader counts them as they come
_BUFFERED = 256 * 1024  # unread bytes past which the socket is paused
_SLICE = 0.002  # seconds of parsing before the event loop gets a turn


class UnsolicitedResponse(httpx.RemoteProtocolError):
    """Bytes no request on the connection asked for: sent before the request, or beyond an answer's end."""


@functools.lru_cache(maxsize=1)
def default_tls() -> ssl.SSLContext:
    """httpx's verified context (certifi), built once: loading the store costs more than a request."""
    context = httpx.create_ssl_context(verify=True, trust_env=False)
    context.set_alpn_protocols(["http/1.1"])
    return context


class _Wire(asyncio.Protocol):
    """A socket's bytes as they arrive (public asyncio API only: no private buffer read)."""

    def __init__(self) -> None:
        self.chunks: deque[bytes] = deque()
        self.buffered = 0
        self.eof = False
        self.lost: Exception | None = None
        self.transport: asyncio.Transport | None = None
        self._reading: asyncio.Future[None] | None = None
        self._writing: asyncio.Future[None] | None = None
        self._paused = False

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport

    def data_received(self, data: bytes) -> None:
        self.chunks.append(data)
        self.buffered += len(data)
        if self.buffered > _BUFFERED and not self._paused and self.transport is not None:
            self._paused = True
            self.transport.pause_reading()
        self._wake()

    def eof_received(self) -> bool:
        self.eof = True
        self._wake()
        return False  # close: nothing is written after the answer

    def connection_lost(self, exc: Exception | None) -> None:
        self.eof = True
        self.lost = exc
        self._wake()
        if self._writing is not None and not self._writing.done():
            self._writing.set_result(None)

    def pause_writing(self) -> None:
        self._writing = asyncio.get_running_loop().create_future()

    def resume_writing(self) -> None:
        if self._writing is not None and not self._writing.done():
            self._writing.set_result(None)
        self._writing = None

    def _wake(self) -> None:
        if self._reading is not None and not self._reading.done():
            self._reading.set_result(None)

    def quiet(self) -> bool:
        return not self.chunks and not self.eof

    def take(self) -> bytes:
        data = self.chunks.popleft()
        self.buffered -= len(data)
        if self._paused and self.buffered <= _BUFFERED // 2 and self.transport is not None:
            self._paused = False
            self.transport.resume_reading()
        return data

    async def read(self) -> bytes:
        """The next bytes, waiting for them; b"" at the end."""
        while not self.chunks and not self.eof:
            self._reading = asyncio.get_running_loop().create_future()
            try:
                await self._reading
            finally:
                self._reading = None
        if self.chunks:
            return self.take()
        if self.lost is not None:
            raise self.lost
        return b""

    async def drain(self) -> None:
        if self.lost is not None or (self.transport is not None and self.transport.is_closing()):
            raise ConnectionResetError("the connection was closed")
        if self._writing is not None:
            await self._writing
            if self.lost is not None:
                raise ConnectionResetError("the connection was closed")


class _Connection:
    def __init__(self, wire: _Wire) -> None:
        self.wire = wire
        self.h11 = h11.Connection(h11.CLIENT, max_incomplete_event_size=MAX_HEAD)
        self.received = 0  # bytes read since the current request was written
        self.head_end = 0  # of those, the bytes up to the end of the answer's head
        self.resting = time.monotonic() + _SLICE

    def parse(self, request: httpx.Request) -> h11.Event | type[h11.NEED_DATA] | type[h11.PAUSED]:
        """The next event from the bytes at hand; NEED_DATA when none are."""
        while True:
            try:
                event = self.h11.next_event()
            except h11.RemoteProtocolError as exc:
                raise httpx.RemoteProtocolError(str(exc), request=request) from None
            if event is not h11.NEED_DATA or not self.wire.chunks:
                return event
            self._feed(self.wire.take())

    async def event(self, request: httpx.Request) -> h11.Event | type[h11.PAUSED]:
        """The next event of the answer, waiting for bytes if need be."""
        while True:
            event = self.parse(request)
            if event is not h11.NEED_DATA:
                await self.breathe()
                return cast(h11.Event | type[h11.PAUSED], event)
            try:
                data = await self.wire.read()
            except OSError as exc:
                raise httpx.ReadError(str(exc) or type(exc).__name__, request=request) from None
            self.resting = time.monotonic() + _SLICE  # the loop ran while we waited
            if not data and not self.received:
                raise httpx.RemoteProtocolError(NO_RESPONSE, request=request)
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
        if self.wire.transport is not None:
            self.wire.transport.close()


Key = tuple[str, str, int]  # scheme, host, port


async def _connect(key: Key, tls: ssl.SSLContext | None) -> _Connection:
    scheme, host, port = key
    context = (tls or default_tls()) if scheme == "https" else None
    loop = asyncio.get_running_loop()
    _, wire = await loop.create_connection(_Wire, host, port, ssl=context, server_hostname=host if context else None)
    return _Connection(wire)


class Spares:
    """Connections opened ahead of need for the transports that share this (evidence/live.py:
    one transport an attempt). A spare has carried no request, so it holds nobody's answer;
    it goes to one transport and never comes back. Opening the next one while attempts wait
    for their answers takes the connect off their path: a connection a request cost a bare
    client 0.65 s more on 1,000 requests of 50 ms at concurrency 32 here (docs/performance.md)."""

    def __init__(self, size: int, tls: ssl.SSLContext | None = None) -> None:
        self._size = max(size, 0)
        self._tls = tls
        self._ready: dict[Key, list[asyncio.Task[_Connection]]] = {}

    def take(self, key: Key) -> _Connection | None:
        """A spare already open and still quiet, if there is one."""
        ready = self._ready.get(key, [])
        for task in [task for task in ready if task.done()]:
            ready.remove(task)
            if task.cancelled() or task.exception() is not None:
                continue  # it could not connect: the transport opens its own, and reports that
            connection = task.result()
            if connection.wire.quiet():
                return connection
            connection.close()  # closed by the server while idle, or bytes nobody asked for
        return None

    def refill(self, key: Key) -> None:
        """One more opened in the background, up to ``size`` ready or on their way."""
        ready = self._ready.setdefault(key, [])
        if len(ready) < self._size:
            ready.append(asyncio.get_running_loop().create_task(_connect(key, self._tls)))

    async def aclose(self) -> None:
        for ready in self._ready.values():
            for task in ready:
                if not task.done():
                    task.cancel()
                elif not task.cancelled() and task.exception() is None:
                    task.result().close()
        tasks = [task for ready in self._ready.values() for task in ready]
        self._ready.clear()
        await asyncio.gather(*tasks, return_exceptions=True)


class H11Transport(httpx.AsyncBaseTransport):
    """Up to ``connections`` idle connections are kept for this transport's own next
    requests, per scheme, host and port (0: none, a connection a request). ``tls``: the
    context for https (default: httpx's verified one); ``spares``: where a new connection
    may come from ready-made."""

    def __init__(self, connections: int, tls: ssl.SSLContext | None = None, spares: Spares | None = None) -> None:
        self._keep = max(connections, 0)
        self._tls = tls
        self._spares = spares
        self._idle: dict[Key, list[_Connection]] = {}

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        url = request.url
        if url.scheme not in ("http", "https"):
            raise httpx.UnsupportedProtocol(f"this transport speaks http and https, not {url.scheme}", request=request)
        key = (url.scheme, url.host, url.port or (443 if url.scheme == "https" else 80))
        idle = await self._take(key)
        if idle is None and self._spares is not None:
            idle = self._spares.take(key)
            self._spares.refill(key)
        if idle is not None:
            try:
                return await self._ask(idle, key, request, reused=True)
            except _Stale as stale:
                # The server closed the kept-alive connection before it answered a byte (it
                # closes after each answer without saying so): sent again once, on a new one.
                try:
                    return await self._ask(await self._open(key, request), key, request, reused=False)
                except httpx.StreamConsumed:  # a body that cannot be sent twice
                    raise stale.error from None
        return await self._ask(await self._open(key, request), key, request, reused=False)

    async def _open(self, key: Key, request: httpx.Request) -> _Connection:
        try:
            return await _connect(key, self._tls)
        except (OSError, ssl.SSLError) as exc:
            raise httpx.ConnectError(str(exc) or type(exc).__name__, request=request) from None

    async def _ask(self, connection: _Connection, key: Key, request: httpx.Request, reused: bool) -> httpx.Response:
        try:
            if connection.wire.chunks:  # bytes before the request: nobody's answer (a close is the read's to report)
                raise UnsolicitedResponse("the server sent bytes before the request", request=request)
            connection.received = 0
            await _send(connection, request)
            status, reason, headers, version = await _read_head(connection, request)
        except (httpx.WriteError, httpx.ReadError, httpx.RemoteProtocolError) as exc:
            connection.close()
            if reused and not connection.received and not isinstance(exc, UnsolicitedResponse):
                raise _Stale(exc) from None
            raise
        except BaseException:
            connection.close()
            raise
        body = ResponseBody(connection, lambda: self._give(key, connection), request)
        extensions = {"http_version": version, "reason_phrase": reason}
        return httpx.Response(status, headers=headers, stream=body, extensions=extensions, request=request)

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

    async def aclose(self) -> None:
        for idle in self._idle.values():
            for connection in idle:
                connection.close()
        self._idle.clear()


class _Stale(Exception):
    def __init__(self, error: httpx.TransportError) -> None:
        self.error = error


async def _send(connection: _Connection, request: httpx.Request) -> None:
    """The head and a small body go in one write (two writes cost a syscall each on
    every request); a larger body follows in the pieces the stream gives."""
    h = connection.h11
    wire = connection.wire
    assert wire.transport is not None
    try:
        head = h11.Request(method=request.method, target=request.url.raw_path or b"/", headers=request.headers.raw)
        pending: bytes | None = h.send(head)
        stream = request.stream
        assert isinstance(stream, httpx.AsyncByteStream)  # an AsyncClient's request
        async for part in stream:
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
        raise httpx.LocalProtocolError(str(exc), request=request) from None
    except OSError as exc:
        raise httpx.WriteError(str(exc) or type(exc).__name__, request=request) from None


async def _read_head(connection: _Connection, request: httpx.Request) -> tuple[int, bytes, list[tuple[bytes, bytes]], bytes]:
    """The final response's status, reason, headers and version (1xx answers skipped)."""
    informational = 0
    while True:
        event = await connection.event(request)
        if isinstance(event, h11.InformationalResponse):
            informational += 1
            if informational > MAX_INFORMATIONAL:
                raise httpx.RemoteProtocolError("too many informational responses", request=request)
            continue
        if not isinstance(event, h11.Response):
            raise httpx.RemoteProtocolError(f"unexpected {type(event).__name__} before the response", request=request)
        connection.head_end = connection.received - len(connection.h11.trailing_data[0])
        if connection.head_end > MAX_HEAD * (informational + 1):
            # h11 bounds a head still arriving; one that came whole in a single read is bounded here.
            raise httpx.RemoteProtocolError("response head is too large", request=request)
        if len(event.headers) > MAX_HEADERS:
            raise httpx.RemoteProtocolError("too many response headers", request=request)
        return event.status_code, event.reason, list(event.headers.raw_items()), b"HTTP/" + event.http_version


class ResponseBody(httpx.AsyncByteStream):
    """The response body as it arrives, in pieces of up to 64 KiB; ``received`` counts the
    body's bytes as read from the socket (chunk framing included). The
    connection goes back to the pool only when the body was read to its end and nothing
    followed it."""

    def __init__(self, connection: _Connection, give: Callable[[], None], request: httpx.Request) -> None:
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
            raise httpx.RemoteProtocolError(f"unexpected {type(event).__name__} in the body", request=self._request)
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
