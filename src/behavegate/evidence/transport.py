"""One HTTP exchange with the agent under test (the network edge).

One monotonic deadline covers connect, headers and the whole body, so a server
that trickles bytes cannot hold a run past ``timeout_seconds``. The body is
capped at 2 MiB (or less: what is left of the attempt's budget) *while it
streams*, counted twice: the bytes as they came off the socket (chunk framing and
compressed bytes included) and as decoded here with a bounded output, so neither a
large body, a compression bomb nor an endless stream of empty gzip members can grow
memory or time. Reading gives the event loop a turn every few milliseconds. A request body in several
pieces is streamed in writes of up to 64 KiB, never joined whole (one write a piece
cost more than the rest of a loopback request). An event stream is read up to
``[DONE]``, and what follows it only for a moment (the body's end, so the connection
carries the next request). Redirects are never followed; proxies and netrc are never read.
"""

from __future__ import annotations

import asyncio
import functools
import time
import zlib
from collections.abc import AsyncIterable, AsyncIterator, Awaitable, Callable
from datetime import UTC, datetime
from typing import Any, TypeVar

from behavegate import __version__
from behavegate.evidence import http_model
from behavegate.evidence.chat import EndpointError, parse_body
from behavegate.evidence.chat_stream import Assembly, is_event_stream
from behavegate.evidence.connections import Spares
from behavegate.evidence.h11_transport import NO_RESPONSE, H11Transport, ResponseBody, UnsolicitedResponse
from behavegate.evidence.trust import Credentials, Endpoint
from behavegate.frozen import Frozen, not_shown
from behavegate.limits import MAX_RESPONSE_BYTES, RESPONSE_MAX_PIECES

DEADLINE_MESSAGE = "agent endpoint exceeded request deadline"
TOO_LARGE_MESSAGE = "agent endpoint response is too large"
_CHUNK = 64 * 1024
_DRAIN_SECONDS = 0.02
_DECODE = 1024  # compressed bytes decoded at once: a gzip member's end copies the rest of what was given
_SLICE = 0.002  # seconds of decoding and assembly before the event loop gets a turn
T = TypeVar("T")


class ResponseTooLarge(EndpointError):
    """The body passed the cap; ``observed`` is how many bytes it was known to have."""

    def __init__(self, observed: int) -> None:
        super().__init__(TOO_LARGE_MESSAGE)
        self.observed = observed


class Retryable(EndpointError):
    """A failure worth asking again (``--retries``): HTTP 429/502/503/504, or the
    connection reset before any answer. ``reason`` is what the evidence records,
    ``retry_after`` the seconds the server asked for (its ``Retry-After``), if any."""

    def __init__(self, message: str, reason: str, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.reason = reason
        self.retry_after = retry_after


RETRY_STATUSES = frozenset({429, 502, 503, 504})


@not_shown("headers")  # they carry the bearer token (Credentials.header): never in a repr
class Exchange(Frozen):
    url: str
    body: tuple[bytes, ...]  # the JSON request body, in pieces (chat.encode_request)
    headers: dict[str, str]
    deadline: float  # on the event loop's clock (time.monotonic)
    limit: int = MAX_RESPONSE_BYTES  # most response bytes to read


Client = http_model.Transport
"""What carries the requests, asked directly (no client layer: redirects are never
followed, cookies, proxies and netrc never read). Tests give one of their own
(tests/helpers.MockTransport: an httpx handler's answers)."""


def new_client(connections: int, spares: Spares | None = None) -> H11Transport:
    """http and https by evidence/h11_transport.py. Its connections carry only its own
    requests: evidence/live.py gives each attempt a client of its own, so no attempt can
    read an answer another attempt's request was sent (``connections`` idle ones are kept
    for the same client's next request: an attempt's next turn; ``spares``: connections
    opened ahead, never used before)."""
    return H11Transport(connections, spares=spares)


def request_headers(authorization: str | None, host_header: str | None, user_agent: str) -> dict[str, str]:
    headers = {
        "Accept": "application/json",
        "Content-Type": "application/json",
        "Accept-Encoding": "gzip, deflate",
        "User-Agent": user_agent,
    }
    if host_header:
        headers["Host"] = host_header
    if authorization:
        headers["Authorization"] = authorization
    return headers


def endpoint_target(endpoint: Endpoint | None, credentials: Credentials | None) -> tuple[str, dict[str, str]]:
    """The URL dialled and the headers sent to a trusted endpoint (the agent's or the judge's)."""
    assert endpoint is not None
    authorization = credentials.header() if credentials else None
    return endpoint.connect_url or endpoint.url, request_headers(authorization, endpoint.host_header, f"behavegate/{__version__}")


async def post(client: Client, exchange: Exchange) -> bytes:
    """POST and return the decoded body, or raise EndpointError with skylos's words."""

    async def read(response: http_model.Response) -> bytes:
        return (await _read_bounded(response, exchange.limit))[0]

    return await _exchange(client, exchange, read)


async def post_chat(client: Client, exchange: Exchange, events: bool) -> tuple[Any, int]:
    """POST a Chat Completions request: the parsed response and how many bytes it took.
    ``events`` (version 2): an answer sent as ``text/event-stream`` is read as a stream
    and assembled (evidence/chat_stream.py), inside the same deadline and byte cap;
    otherwise (version 1) the body is JSON, as skylos reads it."""

    async def read(response: http_model.Response) -> tuple[Any, int]:
        if events and is_event_stream(response.headers.get("Content-Type", "")):
            return await _read_events(response, exchange.limit, exchange.deadline)
        body, size = await _read_bounded(response, exchange.limit)
        return parse_body(body), size

    return await _exchange(client, exchange, read)


async def _exchange(client: Client, exchange: Exchange, read: Callable[[http_model.Response], Awaitable[T]]) -> T:
    loop = asyncio.get_running_loop()
    remaining = exchange.deadline - loop.time()
    if remaining <= 0:
        raise EndpointError(DEADLINE_MESSAGE)
    content, headers = _content(exchange)
    phase = "send"
    try:
        async with asyncio.timeout_at(exchange.deadline):
            request = http_model.Request("POST", _url(exchange.url), content=content, headers=headers)
            response = await client.handle_async_request(request)
            try:
                _check_status(response.status_code, response.headers.get("Retry-After"))
                phase = "body"
                return await read(response)
            finally:
                await response.aclose()
    except EndpointError:
        raise
    except UnsolicitedResponse as exc:
        # Never evidence: nothing ties those bytes to this request (HTTP/1.1 has no correlation).
        raise EndpointError(f"unsolicited response: {exc}") from None
    except (TimeoutError, http_model.TimeoutException):
        raise EndpointError(DEADLINE_MESSAGE) from None
    except http_model.HTTPError as exc:
        if loop.time() >= exchange.deadline:
            raise EndpointError(DEADLINE_MESSAGE) from None
        message = f"agent endpoint request failed: {_requests_name(exc, phase)}"
        if phase == "send" and _reset(exc):
            # Closed or reset before any answer (a restart); a malformed answer is the agent's, never retried.
            raise Retryable(message, "connection reset") from None
        raise EndpointError(message) from None
    except (OSError, UnicodeError, zlib.error) as exc:
        if loop.time() >= exchange.deadline:
            raise EndpointError(DEADLINE_MESSAGE) from None
        raise EndpointError(f"agent endpoint response failed: {type(exc).__name__}") from None


def _reset(exc: http_model.HTTPError) -> bool:
    """The connection was reset or closed before a byte of the answer (both transports word it so)."""
    if isinstance(exc, http_model.RemoteProtocolError):
        return str(exc) == NO_RESPONSE
    return isinstance(exc, http_model.ReadError | http_model.WriteError)


@functools.lru_cache(maxsize=16)
def _url(url: str) -> http_model.URL:
    """A run asks one or two URLs thousands of times: read once (evidence/trust.py already refused
    what cannot be read: InvalidURL here is a test's own URL)."""
    return http_model.parse_url(url)


def _content(exchange: Exchange) -> tuple[bytes | AsyncIterable[bytes], list[tuple[bytes, bytes]]]:
    """One piece goes as it is (the version-1 request, unchanged); several are
    streamed with their exact length, so h11 never copies the whole body.
    Header values go as UTF-8 bytes (HTTP carries header bytes; UTF-8 is what other
    clients send for a token such as "é")."""
    headers = [(name.encode("ascii"), value.encode("utf-8")) for name, value in exchange.headers.items()]
    if len(exchange.body) == 1:
        return exchange.body[0], headers
    size = sum(len(piece) for piece in exchange.body)
    return _Pieces(exchange.body), [*headers, (b"Content-Length", str(size).encode("ascii"))]


class _Pieces:
    """The pieces as a body that can be sent again (a stale kept-alive connection, evidence/h11_transport.py):
    a generator cannot be iterated twice, an iterable can."""

    def __init__(self, pieces: tuple[bytes, ...]) -> None:
        self.pieces = pieces

    def __aiter__(self) -> AsyncIterator[bytes]:
        return _stream(self.pieces)


async def _stream(pieces: tuple[bytes, ...]) -> AsyncIterator[bytes]:
    """The pieces in writes of up to 64 KiB: small pieces (a conversation's messages) are
    gathered into one write, a large one is cut; never more than one write is held."""
    gathered: list[bytes] = []
    size = 0
    for piece in pieces:
        if size + len(piece) <= _CHUNK:
            gathered.append(piece)
            size += len(piece)
            continue
        if size:
            yield b"".join(gathered)
        gathered, size = [], 0
        for start in range(0, len(piece), _CHUNK):
            part = piece[start : start + _CHUNK]
            if len(part) < _CHUNK and start + _CHUNK >= len(piece):
                gathered, size = [part], len(part)  # the tail joins the next pieces
            else:
                yield part
    if size:
        yield b"".join(gathered)


def _check_status(status: int, retry_after: str | None = None) -> None:
    if 300 <= status < 400:
        raise EndpointError("agent endpoint redirects are not allowed")
    if status in RETRY_STATUSES:
        raise Retryable(f"agent endpoint returned HTTP {status}", f"HTTP {status}", retry_after_seconds(retry_after))
    if status < 200 or status >= 300:
        raise EndpointError(f"agent endpoint returned HTTP {status}")


def retry_after_seconds(value: str | None, now: datetime | None = None) -> float | None:
    """``Retry-After`` as seconds to wait: delay-seconds or an HTTP date (RFC 9110 §10.2.3);
    None when absent or unreadable (the backoff decides)."""
    if value is None or not value.strip():
        return None
    text = value.strip()
    if text.isascii() and text.isdigit():
        return float(text)
    from email.utils import parsedate_to_datetime  # a date is rare: the email package stays out of start-up

    try:
        when = parsedate_to_datetime(text)
    except (TypeError, ValueError, IndexError):
        return None
    if when.tzinfo is None:
        return None
    return max(0.0, (when - (now or datetime.now(UTC))).total_seconds())


def _requests_name(exc: http_model.HTTPError, phase: str) -> str:
    """The exception class name skylos (on requests) reports for the same failure."""
    if isinstance(exc, http_model.DecodingError):
        return "ContentDecodingError"
    if phase == "body" and isinstance(exc, http_model.RemoteProtocolError | http_model.ReadError):
        return "ChunkedEncodingError"
    if isinstance(exc, http_model.TransportError):
        return "ConnectionError"
    return type(exc).__name__


class _Decoder:
    """gzip/deflate decoding with bounded output; other encodings pass through. gzip is
    read as urllib3 reads it for skylos: every member in turn, and bytes after a whole
    member that are not one dropped; a corrupt stream is a DecodingError."""

    def __init__(self, encoding: str) -> None:
        encoding = encoding.strip().lower()
        self.gzip = encoding == "gzip"
        self.inflater: Any = None
        self.members = 0  # gzip members decoded to their end
        if self.gzip:
            self.inflater = zlib.decompressobj(16 + zlib.MAX_WBITS)
        elif encoding == "deflate":
            self.inflater = zlib.decompressobj()
            self.first = True

    def feed(self, chunk: bytes, room: int) -> bytes:
        """What ``chunk`` decodes to; past ``room`` bytes, more than ``room`` (too large)."""
        if self.inflater is None:
            return b"" if self.members else chunk
        if getattr(self, "first", False):
            self.first = False
            # Some servers send raw deflate without the zlib header.
            if chunk and (chunk[0] & 0x0F) != 8:
                self.inflater = zlib.decompressobj(-zlib.MAX_WBITS)
        out = b""
        while True:
            try:
                piece: bytes = self.inflater.decompress(chunk, room - len(out))
                out += piece
            except zlib.error:
                if self.members:  # bytes after a whole member that are not another: dropped
                    self.inflater = None
                    return out
                raise http_model.DecodingError("the response body is not valid " + ("gzip" if self.gzip else "deflate")) from None
            if self.inflater.unconsumed_tail:
                return out + b"\0"  # more output than room: the body is too large
            if not (self.gzip and self.inflater.eof and self.inflater.unused_data):
                return out
            if len(out) >= room:
                return out + b"\0"
            chunk, self.members = self.inflater.unused_data, self.members + 1
            self.inflater = zlib.decompressobj(16 + zlib.MAX_WBITS)


def _check_length(response: http_model.Response, limit: int) -> None:
    length = response.headers.get("Content-Length")
    if length is not None:
        try:
            declared = int(length)
        except ValueError:
            declared = 0
        if declared > limit:
            raise ResponseTooLarge(declared)


class _Counted:
    """A body read under a cap on its bytes as they came off the socket (the raw bytes,
    chunk framing included when the transport says) and as decoded, with a turn for
    the event loop every few milliseconds however much is already buffered."""

    def __init__(self, response: http_model.Response, limit: int) -> None:
        _check_length(response, limit)
        self.response = response
        self.limit = limit
        self.decoder = _Decoder(response.headers.get("Content-Encoding", ""))
        self.wire = response.stream if isinstance(response.stream, ResponseBody) else None
        self.raw = 0  # bytes before decoding
        self.decoded = 0
        self.resting = time.monotonic() + _SLICE

    @property
    def size(self) -> int:
        """The most the body was known to take: raw or decoded, whichever is more."""
        return max(self.raw if self.wire is None else self.wire.received, self.raw, self.decoded)

    async def pieces(self) -> AsyncIterator[bytes]:
        """The decoded body, piece by piece; ResponseTooLarge past the cap."""
        async for chunk in self.response.aiter_raw():
            self.raw += len(chunk)
            if self.size > self.limit:
                raise ResponseTooLarge(self.size)
            if self.wire is not None and self.wire.pieces > RESPONSE_MAX_PIECES:
                raise EndpointError(f"{TOO_LARGE_MESSAGE}: more than {RESPONSE_MAX_PIECES:,} pieces")
            # Compressed input is decoded a slice at a time: a chunk may hold thousands of gzip members.
            step = _DECODE if self.decoder.inflater is not None else max(len(chunk), 1)
            for start in range(0, len(chunk), step):
                data = self.decoder.feed(
                    chunk[start : start + step] if step < len(chunk) else chunk, self.limit - self.decoded + 1
                )
                self.decoded += len(data)
                if self.decoded > self.limit:
                    raise ResponseTooLarge(self.size)
                if data:
                    yield data
                await self.breathe()

    async def breathe(self) -> None:
        if time.monotonic() >= self.resting:
            await asyncio.sleep(0)
            self.resting = time.monotonic() + _SLICE


async def _read_bounded(response: http_model.Response, limit: int) -> tuple[bytes, int]:
    """The decoded body and the bytes it took (raw or decoded, whichever is more)."""
    counted = _Counted(response, limit)
    body = bytearray()
    async for data in counted.pieces():
        body.extend(data)
    return bytes(body), counted.size


async def _read_events(response: http_model.Response, limit: int, deadline: float) -> tuple[Any, int]:
    """An event stream, fed to the assembly as it arrives: it stops at ``[DONE]`` (a
    server that keeps the connection open after it holds nothing up), and nothing
    but the line being read and the assembled deltas is kept."""
    counted = _Counted(response, limit)
    assembly = Assembly()
    pieces = counted.pieces()
    async for data in pieces:
        if assembly.feed(data):
            size = counted.size  # the answer's bytes: what the drain reads after it is dropped
            await _drain(pieces, deadline)
            return assembly.finish(), size
    return assembly.finish(), counted.size


async def _drain(chunks: AsyncIterator[bytes], deadline: float) -> None:
    """What a server sends after ``[DONE]`` (the body's last chunk, most often at once)
    is read and dropped, for a moment and a few bytes at most, so the connection can
    carry the next request: closing it instead cost a new connection per request."""
    loop = asyncio.get_running_loop()
    until = min(loop.time() + _DRAIN_SECONDS, deadline - _DRAIN_SECONDS)
    if until <= loop.time():
        return
    dropped = 0
    try:
        async with asyncio.timeout_at(until):  # ends before the exchange's deadline: the answer stands
            async for chunk in chunks:
                dropped += len(chunk)
                if dropped > _CHUNK:
                    return
    except UnsolicitedResponse:
        raise  # a second answer after this one: which one was this request's is not known
    except (TimeoutError, http_model.HTTPError, OSError, EndpointError):
        return  # not reusable: the connection is closed with the response
