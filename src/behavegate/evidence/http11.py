"""A small HTTP/1.1 transport for httpx, on asyncio streams, for plain-http endpoints.

Why: httpx's own transport (httpcore on anyio, with h11) spent about 2 ms of CPU a
request here, more than everything else an attempt does; a CI job's agent is a service
container on plain http, asked thousands of times. This speaks what an agent endpoint
needs and no more: one request at a time on a connection, keep-alive, a body framed by
Content-Length, chunked or the connection's end; anything else is a protocol error.
The exchange's deadline, byte cap, decompression and refusal of redirects stay in
evidence/transport.py, which reads the response exactly as it reads httpx's own.
Failures are httpx's exceptions (ConnectError, ReadError, WriteError,
RemoteProtocolError), so a failure is named the same whichever transport met it.
"""

from __future__ import annotations

import asyncio
import re
import select
from collections.abc import AsyncIterator, Callable

import httpx

MAX_HEAD = 64 * 1024  # status line and headers, as h11 allows
MAX_HEADERS = 100
_READ = 64 * 1024
_TOKEN = re.compile(rb"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")
_NO_BODY = frozenset({204, 304})


class _Connection:
    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader = reader
        self.writer = writer

    def expired(self) -> bool:
        """Closed by the server while idle (or with bytes nobody asked for): never reused.
        The socket itself is asked, as httpcore does: asyncio's view of it changes only
        when the loop has run since, and a worker takes its next attempt without yielding,
        so a close already in the kernel would be found by the next request instead."""
        if self.writer.is_closing() or self.reader.at_eof() or bool(getattr(self.reader, "_buffer", b"")):
            return True
        sock = self.writer.get_extra_info("socket")
        if sock is None:
            return False
        try:
            readable, _, _ = select.select([sock.fileno()], [], [], 0)
        except (OSError, ValueError):
            return True
        return bool(readable)  # idle, anything to read is an end or bytes nobody asked for

    def close(self) -> None:
        self.writer.close()


class Http11Transport(httpx.AsyncBaseTransport):
    """Up to ``connections`` idle connections are kept for reuse, per host and port."""

    def __init__(self, connections: int) -> None:
        self._keep = max(connections, 1)
        self._idle: dict[tuple[str, int], list[_Connection]] = {}

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        url = request.url
        if url.scheme != "http":
            raise httpx.UnsupportedProtocol(f"this transport speaks plain http, not {url.scheme}", request=request)
        key = (url.host, url.port or 80)
        idle = self._take(key)
        if idle is not None:
            try:
                return await self._ask(idle, key, request, reused=True)
            except _Stale as stale:
                # The server closed the kept-alive connection before it answered a byte (it
                # closes after each answer without saying so): sent again once, on a new one.
                try:
                    return await self._ask(await _open(key, request), key, request, reused=False)
                except httpx.StreamConsumed:  # a body that cannot be sent twice
                    raise stale.error from None
        return await self._ask(await _open(key, request), key, request, reused=False)

    async def _ask(self, connection: _Connection, key: tuple[str, int], request: httpx.Request, reused: bool) -> httpx.Response:
        try:
            await _send(connection, request)
            status, reason, headers, version = await _read_head(connection.reader, request)
            framing = _framing(status, headers, request)
            reusable = _keeps_alive(version, headers) and framing[0] != "close"
        except (httpx.WriteError, httpx.ReadError, httpx.RemoteProtocolError) as exc:
            connection.close()
            if reused and _unanswered(exc, connection):
                raise _Stale(exc) from None
            raise
        except BaseException:
            connection.close()
            raise
        body = _Body(connection, framing, reusable, lambda: self._give(key, connection), request)
        extensions = {"http_version": version, "reason_phrase": reason}
        return httpx.Response(status, headers=headers, stream=body, extensions=extensions, request=request)

    def _take(self, key: tuple[str, int]) -> _Connection | None:
        idle = self._idle.get(key, [])
        while idle:
            connection = idle.pop()
            if not connection.expired():
                return connection
            connection.close()
        return None

    def _give(self, key: tuple[str, int], connection: _Connection) -> None:
        idle = self._idle.setdefault(key, [])
        if len(idle) < self._keep and not connection.expired():
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


NO_RESPONSE = "Server disconnected without sending a response."


def _unanswered(exc: httpx.TransportError, connection: _Connection) -> bool:
    """Failed before a byte of the answer arrived: the request never reached a live server."""
    if isinstance(exc, httpx.RemoteProtocolError):
        return str(exc) == NO_RESPONSE
    return isinstance(exc, httpx.WriteError) or not getattr(connection.reader, "_buffer", b"")


async def _open(key: tuple[str, int], request: httpx.Request) -> _Connection:
    try:
        reader, writer = await asyncio.open_connection(key[0], key[1], limit=MAX_HEAD)
    except OSError as exc:
        raise httpx.ConnectError(str(exc) or type(exc).__name__, request=request) from None
    return _Connection(reader, writer)


async def _send(connection: _Connection, request: httpx.Request) -> None:
    """The head and a small body go in one write (two writes cost a syscall each on
    every request); a larger body follows in the pieces the stream gives."""
    target = request.url.raw_path or b"/"
    lines = [b"%s %s HTTP/1.1" % (request.method.encode("ascii"), target)]
    lines += [b"%s: %s" % (name, value) for name, value in request.headers.raw]
    chunked = request.headers.get("Transfer-Encoding", "").lower() == "chunked"
    writer = connection.writer
    pending: bytes | None = b"\r\n".join(lines) + b"\r\n\r\n"
    try:
        stream = request.stream
        assert isinstance(stream, httpx.AsyncByteStream)  # an AsyncClient's request
        async for part in stream:
            if not part:
                continue
            data = b"%x\r\n%s\r\n" % (len(part), part) if chunked else part
            if pending is not None:
                if len(pending) + len(data) <= _READ:
                    data = pending + data
                else:
                    writer.write(pending)
                pending = None
            writer.write(data)
            await writer.drain()  # at once unless the socket's buffer is full: memory stays bounded
        tail = (pending or b"") + (b"0\r\n\r\n" if chunked else b"")
        if tail:
            writer.write(tail)
        await writer.drain()
    except OSError as exc:
        raise httpx.WriteError(str(exc) or type(exc).__name__, request=request) from None


async def _read_head(reader: asyncio.StreamReader, request: httpx.Request) -> tuple[int, bytes, list[tuple[bytes, bytes]], bytes]:
    """The final response's status, reason, headers and version (1xx answers skipped)."""
    while True:
        status_line, *header_lines = await _head_lines(reader, request)
        version, _, rest = status_line.partition(b" ")
        code, _, reason = rest.partition(b" ")
        if version not in (b"HTTP/1.1", b"HTTP/1.0") or len(code) != 3 or not code.isdigit():
            raise httpx.RemoteProtocolError("malformed response status line", request=request)
        headers: list[tuple[bytes, bytes]] = []
        for line in header_lines:
            if line[:1] in (b" ", b"\t") and headers:  # obs-fold: the value goes on, joined by a space (RFC 9112 §5.2)
                headers[-1] = (headers[-1][0], headers[-1][1] + b" " + line.strip(b" \t"))
                continue
            name, colon, value = line.partition(b":")
            if not colon or not _TOKEN.fullmatch(name) or b"\r" in value:
                raise httpx.RemoteProtocolError("malformed response header", request=request)
            headers.append((name, value.strip(b" \t")))
        status = int(code)
        if status == 101 or status >= 200:
            if status == 101:
                raise httpx.RemoteProtocolError("the server switched protocols", request=request)
            return status, reason, headers, version


async def _head_lines(reader: asyncio.StreamReader, request: httpx.Request) -> list[bytes]:
    """The head's lines, each ended by CRLF or a bare LF (RFC 9112 §2.2 lets a client take
    either, as h11 does for https), empty lines before the status line skipped."""
    lines: list[bytes] = []
    size = 0
    while True:
        try:
            line = await reader.readuntil(b"\n")
        except asyncio.IncompleteReadError as exc:
            message = NO_RESPONSE if not (exc.partial or lines or size) else "incomplete response head"
            raise httpx.RemoteProtocolError(message, request=request) from None
        except asyncio.LimitOverrunError:
            raise httpx.RemoteProtocolError("response head is too large", request=request) from None
        except OSError as exc:
            raise httpx.ReadError(str(exc) or type(exc).__name__, request=request) from None
        size += len(line)
        if size > MAX_HEAD:
            raise httpx.RemoteProtocolError("response head is too large", request=request)
        line = line[:-2] if line.endswith(b"\r\n") else line[:-1]
        if line:
            if len(lines) > MAX_HEADERS:
                raise httpx.RemoteProtocolError("too many response headers", request=request)
            lines.append(line)
        elif lines:
            return lines


def _values(headers: list[tuple[bytes, bytes]], name: bytes) -> list[bytes]:
    return [value for key, value in headers if key.lower() == name]


def _framing(status: int, headers: list[tuple[bytes, bytes]], request: httpx.Request) -> tuple[str, int]:
    """How the body ends: ("length", n), ("chunked", 0) or ("close", 0)."""
    if status in _NO_BODY:
        return "length", 0
    codings = b",".join(_values(headers, b"transfer-encoding"))
    if codings:
        last = codings.split(b",")[-1].strip().lower()
        return ("chunked", 0) if last == b"chunked" else ("close", 0)
    lengths = {value.strip() for value in _values(headers, b"content-length")}
    if not lengths:
        return "close", 0
    length = lengths.pop()
    if lengths or not length.isdigit() or len(length) > 18:
        raise httpx.RemoteProtocolError("malformed Content-Length", request=request)
    return "length", int(length)


def _keeps_alive(version: bytes, headers: list[tuple[bytes, bytes]]) -> bool:
    tokens = {token.strip().lower() for value in _values(headers, b"connection") for token in value.split(b",")}
    return b"keep-alive" in tokens if version == b"HTTP/1.0" else b"close" not in tokens


class _Body(httpx.AsyncByteStream):
    """The response body as it arrives; the connection goes back to the pool only when
    the body was read to its end."""

    def __init__(
        self, connection: _Connection, framing: tuple[str, int], reusable: bool, give: Callable[[], None], request: httpx.Request
    ) -> None:
        self._connection = connection
        self._framing = framing
        self._reusable = reusable
        self._give = give
        self._request = request
        self._done = False
        self._closed = False

    async def __aiter__(self) -> AsyncIterator[bytes]:
        kind, length = self._framing
        reader = self._connection.reader
        try:
            if kind == "length":
                while length:
                    part = await reader.read(min(length, _READ))
                    if not part:
                        raise httpx.RemoteProtocolError("peer closed connection without sending complete message body")
                    length -= len(part)
                    yield part
            elif kind == "chunked":
                async for part in _chunks(reader):
                    yield part
            else:
                while part := await reader.read(_READ):
                    yield part
        except asyncio.IncompleteReadError:
            raise httpx.RemoteProtocolError("incomplete chunked body", request=self._request) from None
        except asyncio.LimitOverrunError:
            raise httpx.RemoteProtocolError("malformed chunk size line", request=self._request) from None
        except OSError as exc:
            raise httpx.ReadError(str(exc) or type(exc).__name__, request=self._request) from None
        self._done = True

    async def aclose(self) -> None:
        if self._closed:
            return
        self._closed = True
        if self._done and self._reusable:
            self._give()
        else:
            self._connection.close()


async def _chunks(reader: asyncio.StreamReader) -> AsyncIterator[bytes]:
    while True:
        line = await reader.readuntil(b"\r\n")
        size_text = line.split(b";", 1)[0].strip()
        if not size_text or len(size_text) > 16 or not all(c in b"0123456789abcdefABCDEF" for c in size_text):
            raise httpx.RemoteProtocolError("malformed chunk size line")
        size = int(size_text, 16)
        if size == 0:
            while await reader.readuntil(b"\r\n") != b"\r\n":  # trailers, ignored
                pass
            return
        while size:
            part = await reader.readexactly(min(size, _READ))
            size -= len(part)
            yield part
        if await reader.readexactly(2) != b"\r\n":
            raise httpx.RemoteProtocolError("malformed chunked body")
