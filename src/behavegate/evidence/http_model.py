"""The requests and answers evidence/h11_transport.py carries, and how an exchange fails.

Why not httpx's models: a live run imported httpx only for these containers (h11 parses
every byte), and ``import httpx`` took about 40 ms before the first request, a fifth of a
run's fixed cost (issue 41), most of it urllib.request, email and http.cookiejar, which
httpx imports for features a run never uses. The names follow httpx's (``ConnectError``,
``RemoteProtocolError``, ``handle_async_request``...), so a failure reads the same as before.

The URL is read once, by the standard library's ``urlsplit``, and that reading is both what
evidence/trust.py allows and what is dialled: two parsers could disagree about the host.
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterable, AsyncIterator, Iterable
from typing import Any, Protocol
from urllib.parse import quote, urlsplit

from behavegate.frozen import Frozen

DEFAULT_PORTS = {"http": 80, "https": 443}


class HTTPError(Exception):
    """An exchange that failed; ``request`` is the request it failed on, when known."""

    def __init__(self, message: str, *, request: Request | None = None) -> None:
        super().__init__(message)
        self.request = request


class TransportError(HTTPError):
    """The connection failed: nothing the server said can be read as an answer."""


class TimeoutException(TransportError):
    pass


class NetworkError(TransportError):
    pass


class ConnectError(NetworkError):
    pass


class ReadError(NetworkError):
    pass


class WriteError(NetworkError):
    pass


class ProtocolError(TransportError):
    pass


class LocalProtocolError(ProtocolError):
    """The request could not be written as HTTP/1.1 (h11 refused it)."""


class RemoteProtocolError(ProtocolError):
    """The server's bytes are not an HTTP/1.1 answer to the request."""


class UnsupportedProtocol(TransportError):
    pass


class DecodingError(HTTPError):
    """The body does not decode by its Content-Encoding."""


class StreamConsumed(HTTPError):
    """A request body that can be read only once was asked for again."""


class InvalidURL(ValueError):
    pass


# --- the URL -------------------------------------------------------------------------------

_ESCAPE = re.compile(r"%[0-9A-Fa-f]{2}")
_HOST = re.compile(r"[A-Za-z0-9._~-]+")
_PATH_SAFE = "!$&'()*+,;=:/[]@"  # what httpx leaves unescaped in a path (RFC 3986 sub-delims, ":/[]@")
_QUERY_SAFE = _PATH_SAFE + "?"


def _quoted(text: str, safe: str) -> str:
    """``text`` with what may not stand in a request target percent-encoded; an escape already
    there (``%2F``) is kept, a lone ``%`` is encoded."""
    out: list[str] = []
    at = 0
    for escape in _ESCAPE.finditer(text):
        out.append(quote(text[at : escape.start()], safe=safe))
        out.append(escape.group())
        at = escape.end()
    out.append(quote(text[at:], safe=safe))
    return "".join(out)


class URL(Frozen):
    """An http(s) URL as a request needs it: where to connect and what to ask for."""

    text: str  # as given
    scheme: str
    host: str  # lower case; an IPv6 address without its brackets
    port: int | None  # None: the scheme's default (written so, or left out)
    target: bytes  # the request target: path (``/`` when empty) and query

    @property
    def netloc(self) -> bytes:
        """The Host header's value: the host, and the port when it is not the scheme's default."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        return (host if self.port is None else f"{host}:{self.port}").encode("ascii")

    @property
    def effective_port(self) -> int:
        return self.port or DEFAULT_PORTS[self.scheme]


def parse_url(text: str) -> URL:
    """The URL, or InvalidURL: only http and https, an ASCII host of letters, digits and
    ``.-_~`` (or an IP address in brackets), a port from 1 to 65535, no user or fragment.
    Anything ``urlsplit`` would read past (``http://[::1]evil.example/``) is refused."""
    if not text.isascii() or not text.isprintable() or " " in text:
        raise InvalidURL("the URL must be printable ASCII without spaces")
    try:
        parts = urlsplit(text)
        port = parts.port
    except ValueError as exc:
        raise InvalidURL(str(exc)) from None
    scheme = parts.scheme.lower()
    if scheme not in DEFAULT_PORTS:
        raise InvalidURL(f"the scheme must be http or https, not {parts.scheme!r}")
    if parts.username is not None or parts.password is not None or "@" in parts.netloc:
        raise InvalidURL("the URL must not contain credentials")
    if parts.fragment or "#" in text:
        raise InvalidURL("the URL must not contain a fragment")
    host = parts.hostname or ""
    netloc = parts.netloc.removesuffix(":")  # ``http://host:/``: an empty port is the default one
    head, colon, tail = netloc.rpartition(":")
    authority = head if colon and tail.isdigit() else netloc
    if authority.startswith("["):
        _check_address(host, authority)
    elif not _HOST.fullmatch(host) or authority.lower() != host:
        raise InvalidURL(f"invalid host: {authority!r}")
    if port is not None and not 1 <= port <= 65_535:
        raise InvalidURL(f"invalid port: {port}")
    target = _quoted(parts.path or "/", _PATH_SAFE)
    if parts.query or text.endswith("?"):
        target += "?" + _quoted(parts.query, _QUERY_SAFE)
    return URL(text, scheme, host, None if port == DEFAULT_PORTS[scheme] else port, target.encode("ascii"))


def _check_address(host: str, authority: str) -> None:
    import ipaddress  # only a bracketed host needs it

    if authority != f"[{host}]" and authority.lower() != f"[{host}]":
        raise InvalidURL(f"invalid host: {authority!r}")
    try:
        ipaddress.ip_address(host.partition("%")[0])
    except ValueError:
        raise InvalidURL(f"invalid IP address in brackets: {authority!r}") from None
    if "%" in host:
        raise InvalidURL(f"a zone in an IPv6 address is not supported: {authority!r}")


# --- requests and answers --------------------------------------------------------------------


class Headers:
    """Header fields in the order they came, names compared without case."""

    __slots__ = ("raw",)

    def __init__(self, raw: Iterable[tuple[bytes, bytes]] = ()) -> None:
        self.raw = list(raw)

    def get(self, name: str, default: Any = None) -> Any:
        wanted = name.lower().encode("latin-1")
        values = [value.decode("latin-1") for key, value in self.raw if key.lower() == wanted]
        return ", ".join(values) if values else default

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and self.get(name) is not None


class Request:
    """A request as the transport writes it: the method, the URL, the header fields in
    order (Host first unless given, Content-Length last for a body in one piece) and
    the body, bytes or pieces that can be read again."""

    __slots__ = ("body", "headers", "method", "url")

    def __init__(
        self, method: str, url: URL, *, headers: Iterable[tuple[bytes, bytes]] = (), content: bytes | AsyncIterable[bytes] = b""
    ) -> None:
        given = list(headers)
        names = {name.lower() for name, _ in given}
        first = [] if b"host" in names else [(b"Host", url.netloc)]
        last = []
        if isinstance(content, bytes) and b"content-length" not in names and b"transfer-encoding" not in names:
            last = [(b"Content-Length", str(len(content)).encode("ascii"))]
        self.method = method.encode("ascii")
        self.url = url
        self.headers = Headers([*first, *given, *last])
        self.body = content

    @property
    def stream(self) -> AsyncIterable[bytes]:
        """The body as pieces; a one-time iterator raises StreamConsumed when asked twice."""
        if isinstance(self.body, bytes):
            return _Once(self.body)
        if isinstance(self.body, AsyncIterator):
            body, self.body = self.body, _Spent(self)
            return body
        return self.body


class _Once:
    def __init__(self, data: bytes) -> None:
        self.data = data

    async def __aiter__(self) -> AsyncIterator[bytes]:
        if self.data:
            yield self.data


class _Spent:
    def __init__(self, request: Request) -> None:
        self.request = request

    def __aiter__(self) -> AsyncIterator[bytes]:
        raise StreamConsumed("the request body was already sent and cannot be sent again", request=self.request)


class Body(Protocol):
    """A response body: pieces as they arrive, and a close that ends the exchange."""

    def __aiter__(self) -> AsyncIterator[bytes]: ...

    async def aclose(self) -> None: ...


class BytesBody:
    """A body already read whole (a replayed answer, evidence/answer_cache.py)."""

    def __init__(self, data: bytes) -> None:
        self.data = data

    async def __aiter__(self) -> AsyncIterator[bytes]:
        if self.data:
            yield self.data

    async def aclose(self) -> None:
        return None


class Response:
    """The final answer's status and header fields, and its body still to be read."""

    __slots__ = ("extensions", "headers", "status_code", "stream")

    def __init__(
        self,
        status_code: int,
        *,
        headers: Iterable[tuple[bytes, bytes]] = (),
        stream: Body,
        extensions: dict[str, Any] | None = None,
    ) -> None:
        self.status_code = status_code
        self.headers = Headers(headers)
        self.stream = stream
        self.extensions = extensions or {}

    def aiter_raw(self) -> AsyncIterator[bytes]:
        return aiter(self.stream)

    async def aclose(self) -> None:
        await self.stream.aclose()


class Transport(Protocol):
    """What carries a request to its answer: evidence/h11_transport.py, a replay
    (evidence/answer_cache.py), or a test's stand-in."""

    async def handle_async_request(self, request: Request) -> Response: ...

    async def aclose(self) -> None: ...
