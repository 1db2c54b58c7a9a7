"""evidence/h11_transport.py, the transport (h11 on asyncio), against real loopback servers that send
exactly the bytes each test scripts: framing, keep-alive and every malformed answer."""

from __future__ import annotations

import asyncio
import contextlib
import socket
import time
from collections.abc import Callable, Iterator

import pytest
from fake_agent import RawServer

from behavegate.evidence import http_model
from behavegate.evidence.connections import Spares
from behavegate.evidence.h11_transport import H11Transport

Reply = Callable[[int], bytes]
"""The bytes to send for the n-th request (0-based) a server receives, whatever connection it came on."""


class Scripted(RawServer):
    """Answers the n-th request (0-based, whatever its connection) with the script's bytes;
    ``b""`` closes the connection instead, and ``close_after`` closes it after each answer."""

    def __init__(self, reply: Reply, close_after: bool = False, idle_s: float | None = None) -> None:
        self.reply = reply
        self.close_after = close_after
        super().__init__(idle_s=idle_s)

    def answer(self, connection: socket.socket, body: bytes) -> bool:
        answer = self.reply(len(self.requests) - 1)
        if not answer:
            return False
        connection.sendall(answer)
        return not self.close_after


@contextlib.contextmanager
def scripted(reply: Reply, close_after: bool = False) -> Iterator[Scripted]:
    server = Scripted(reply, close_after)
    try:
        yield server
    finally:
        server.close()


def post(url: str, body: bytes, headers: list[tuple[bytes, bytes]] | None = None) -> http_model.Request:
    return http_model.Request("POST", http_model.parse_url(url), content=body, headers=headers or [])


async def read_all(response: http_model.Response) -> bytes:
    return b"".join([part async for part in response.aiter_raw()])


def ask(url: str, times: int = 1, body: bytes = b'{"q": 1}') -> list[tuple[int, bytes]]:
    """``times`` requests in a row on one transport: each answer's status and body."""

    async def main() -> list[tuple[int, bytes]]:
        answers = []
        async with H11Transport(1) as transport:
            for _ in range(times):
                request = post(url, body, [(b"Content-Type", b"application/json")])
                response = await transport.handle_async_request(request)
                try:
                    answers.append((response.status_code, b"".join([part async for part in response.aiter_raw()])))
                finally:
                    await response.aclose()
        return answers

    return asyncio.run(asyncio.wait_for(main(), 10))


def ok(body: bytes, *headers: bytes) -> bytes:
    return b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n%s\r\n%s" % (len(body), b"".join(h + b"\r\n" for h in headers), body)


def test_a_kept_alive_connection_carries_every_request_and_the_request_is_sent_whole() -> None:
    with scripted(lambda n: ok(b'{"n": %d}' % n)) as server:
        assert ask(server.url, 3) == [(200, b'{"n": 0}'), (200, b'{"n": 1}'), (200, b'{"n": 2}')]
    assert server.connections == 1
    head, _, body = server.requests[0].partition(b"\r\n\r\n")
    lines = head.split(b"\r\n")
    assert lines[0] == b"POST /v1/chat/completions HTTP/1.1" and body == b'{"q": 1}'
    assert {b"content-length: 8", b"content-type: application/json"} <= {line.lower() for line in lines[1:]}


def test_a_chunked_body_is_joined_and_its_trailers_are_skipped() -> None:
    chunked = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n6;ext=1\r\n world\r\n0\r\nX-Trailer: t\r\n\r\n"
    with scripted(lambda n: chunked) as server:
        assert ask(server.url, 2) == [(200, b"hello world")] * 2
    assert server.connections == 1


def test_a_body_ended_by_closing_is_read_to_the_end_and_its_connection_is_not_reused() -> None:
    with scripted(lambda n: b"HTTP/1.1 200 OK\r\n\r\nuntil close", close_after=True) as server:
        assert ask(server.url, 2) == [(200, b"until close")] * 2
    assert server.connections == 2


def test_an_http_1_0_answer_never_keeps_the_connection() -> None:
    """h11's rule (RFC 9112 leaves HTTP/1.0 keep-alive optional): even ``Connection: keep-alive`` is not trusted."""
    for answer in (
        b"HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\nok",
        b"HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nContent-Length: 2\r\n\r\nok",
    ):
        with scripted(lambda n, answer=answer: answer) as server:  # type: ignore[misc]
            assert ask(server.url, 2) == [(200, b"ok")] * 2
        assert server.connections == 2


def test_informational_answers_are_skipped_and_204_has_no_body() -> None:
    with scripted(lambda n: b"HTTP/1.1 100 Continue\r\n\r\n" + ok(b"{}")) as server:
        assert ask(server.url) == [(200, b"{}")]
    with scripted(lambda n: b"HTTP/1.1 204 No Content\r\n\r\n") as server:
        assert ask(server.url, 2) == [(204, b"")] * 2
    assert server.connections == 1


def test_a_connection_the_server_closed_while_idle_is_not_reused() -> None:
    with scripted(lambda n: ok(b"{}"), close_after=True) as server:  # it says nothing of closing, and closes

        async def main() -> list[int]:
            statuses = []
            async with H11Transport(1) as transport:
                for _ in range(2):
                    response = await transport.handle_async_request(post(server.url, b"{}"))
                    await read_all(response)
                    await response.aclose()
                    statuses.append(response.status_code)
                    await asyncio.sleep(0.2)  # the server's close arrives while the connection is idle
            return statuses

        assert asyncio.run(asyncio.wait_for(main(), 10)) == [200, 200]
    assert server.connections == 2


def test_a_large_request_body_arrives_whole() -> None:
    body = b'{"x": "' + b"a" * 200_000 + b'"}'
    with scripted(lambda n: ok(b"{}")) as server:
        assert ask(server.url, 2, body) == [(200, b"{}")] * 2
    assert [request.partition(b"\r\n\r\n")[2] for request in server.requests] == [body, body]


# The reasons are h11's words (the hand-written parser had its own; skylos's error names,
# which the evidence records, are the class names and did not change).
MALFORMED = {
    b"HTTP/2 200 OK\r\n\r\n": ("malformed response status line", "illegal status line"),
    b"HTTP/1.1 2000 OK\r\n\r\n": ("malformed response status line", "illegal status line"),
    b"HTTP/1.1 200 OK\r\nno colon here\r\n\r\n": ("malformed response header", "illegal header line"),
    b"HTTP/1.1 200 OK\r\nbad name: x\r\n\r\n": ("malformed response header", "illegal header line"),
    b"HTTP/1.1 200 OK\r\n" + b"X-A: 1\r\n" * 101 + b"\r\n": ("too many response headers", "too many response headers"),
    b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\nabc": (
        "malformed Content-Length",
        "conflicting Content-Length",
    ),
    b"HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n": ("malformed Content-Length", "bad Content-Length"),
    b"HTTP/1.1 101 Switching Protocols\r\n\r\n": (
        "the server switched protocols",
        "_SWITCH_UPGRADE event without a pending proposal",
    ),
    b"HTTP/1.1 200 OK\r\nContent-Len": ("incomplete response head", "peer unexpectedly closed connection"),
    b"HTTP/1.1 200 OK\r\nX-Big: " + b"a" * 70_000 + b"\r\n\r\n": ("response head is too large", "response head is too large"),
    b"HTTP/1.1 200 OK\r\n" + (b"X-Many: " + b"a" * 1000 + b"\r\n") * 70 + b"\r\n": (
        "response head is too large",
        "response head is too large|Receive buffer too long",
    ),
    b"HTTP/1.1 200 OK\r\nX-A: a\rb\r\n\r\n": ("malformed response header", "illegal header line"),
    b"\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}": ("an empty line before the status line", "no response line received"),
}


@pytest.mark.parametrize("answer", MALFORMED, ids=[case for case, _ in MALFORMED.values()])
def test_a_malformed_answer_is_a_protocol_error_with_its_reason(answer: bytes) -> None:
    with (
        scripted(lambda n: answer, close_after=True) as server,
        pytest.raises(http_model.RemoteProtocolError, match=MALFORMED[answer][1]),
    ):
        ask(server.url)


BROKEN_BODIES = {
    b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nshort": (
        "short",
        "peer closed connection without sending complete message body",
    ),
    b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n": ("malformed chunk size line", "illegal chunk header"),
    b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhelloXX": ("malformed chunked body", "malformed chunk footer"),
    b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhel": ("incomplete chunked body", "incomplete chunked read"),
}


@pytest.mark.parametrize("answer", BROKEN_BODIES, ids=[case for case, _ in BROKEN_BODIES.values()])
def test_a_body_cut_short_or_misframed_is_a_protocol_error(answer: bytes) -> None:
    with scripted(lambda n: answer, close_after=True) as server:

        async def main() -> None:
            async with H11Transport(1) as transport:
                response = await transport.handle_async_request(post(server.url, b"{}"))
                try:
                    async for _ in response.aiter_raw():
                        pass
                finally:
                    await response.aclose()

        with pytest.raises(http_model.RemoteProtocolError, match=BROKEN_BODIES[answer][1]):
            asyncio.run(asyncio.wait_for(main(), 10))


def test_a_refused_connection_is_a_connect_error_and_only_http_and_https_are_spoken() -> None:
    with socket.socket() as unused:
        unused.bind(("127.0.0.1", 0))
        port = unused.getsockname()[1]
    for scheme in ("http", "https"):
        with pytest.raises(http_model.ConnectError):
            ask(f"{scheme}://127.0.0.1:{port}/")
    with pytest.raises(http_model.InvalidURL):
        ask("ftp://127.0.0.1:1/")  # refused as it is read
    ftp = http_model.URL("ftp://127.0.0.1:1/", "ftp", "127.0.0.1", 1, b"/")
    with pytest.raises(http_model.UnsupportedProtocol):
        asyncio.run(H11Transport(0).handle_async_request(http_model.Request("POST", ftp, content=b"{}")))


def test_a_server_that_closes_after_each_answer_unannounced_is_asked_on_a_new_connection_each_time() -> None:
    """Asked again at once, its close may not have been seen yet: a request on the stale
    connection that gets no byte back is sent once more, on a new connection."""
    with scripted(lambda n: ok(b'{"n": %d}' % n), close_after=True) as server:
        assert ask(server.url, 20) == [(200, b'{"n": %d}' % n) for n in range(20)]
    assert server.connections == 20 and len(server.requests) == 20  # each request reached the server once


def test_a_body_in_pieces_is_sent_again_whole_on_the_new_connection() -> None:
    from behavegate.evidence.transport import Exchange, post

    pieces = (b'{"messages": [', b'{"role": "user", "content": "hi"}', b"]}")
    with scripted(lambda n: ok(b"{}"), close_after=True) as server:

        async def main() -> list[bytes]:
            async with H11Transport(1) as transport:
                deadline = asyncio.get_running_loop().time() + 10
                return [await post(transport, Exchange(server.url, pieces, {}, deadline)) for _ in range(10)]

        assert asyncio.run(main()) == [b"{}"] * 10
    assert [request.partition(b"\r\n\r\n")[2] for request in server.requests] == [b"".join(pieces)] * 10


def test_a_malformed_answer_on_a_reused_connection_is_not_sent_again() -> None:
    answers = {0: ok(b"{}"), 1: b"HTTP/1.1 2OO OK\r\n\r\n"}
    with (
        scripted(answers.__getitem__) as server,
        pytest.raises(http_model.RemoteProtocolError, match="illegal status line"),
    ):
        ask(server.url, 2)
    assert len(server.requests) == 2


LENIENT = {
    "bare LF line ends": b"HTTP/1.1 200 OK\nContent-Type: application/json\nContent-Length: 2\n\n{}",
    "bare LF and CRLF mixed": b"HTTP/1.1 200 OK\r\nContent-Length: 2\n\r\n{}",
    "a folded header value": b"HTTP/1.1 200 OK\r\nX-Folded: a\r\n b\r\nContent-Length: 2\r\n\r\n{}",
}


@pytest.mark.parametrize("answer", LENIENT.values(), ids=list(LENIENT))
def test_heads_that_h11_reads_for_https_are_read_the_same_here(answer: bytes) -> None:
    with scripted(lambda n: answer) as server:
        assert ask(server.url, 2) == [(200, b"{}")] * 2
    assert server.connections == 1


def test_a_folded_value_is_joined_by_a_space() -> None:
    async def main(url: str) -> str | None:
        async with H11Transport(1) as transport:
            response = await transport.handle_async_request(post(url, b"{}"))
            await response.aclose()
            folded: str | None = response.headers.get("X-Folded")
            return folded

    with scripted(lambda n: LENIENT["a folded header value"]) as server:
        assert asyncio.run(main(server.url)) == "a b"


class IdleTimeout(Scripted):
    """Closes a connection that has not asked anything for 0.1 s (as servers with a keep-alive timeout do)."""

    def __init__(self, reply: Reply, close_after: bool = False) -> None:
        super().__init__(reply, close_after, idle_s=0.1)


def test_a_spare_the_server_closed_while_idle_is_not_used_and_each_transport_gets_its_own_connection() -> None:
    async def main(url: str) -> list[int]:
        spares = Spares(1)
        statuses = []
        try:
            for _ in range(3):
                async with H11Transport(1, spares=spares) as transport:
                    response = await transport.handle_async_request(post(url, b"{}"))
                    await read_all(response)
                    await response.aclose()
                    statuses.append(response.status_code)
                await asyncio.sleep(0.3)  # the spare opened meanwhile is closed by the server
        finally:
            await spares.aclose()
        return statuses

    with scripted(lambda n: ok(b"{}")) as server:
        assert asyncio.run(asyncio.wait_for(main(server.url), 10)) == [200] * 3
    assert len(server.requests) == 3 and server.connections >= 3


def test_a_spare_carries_one_request_and_never_comes_back() -> None:
    async def main(url: str) -> None:
        spares = Spares(2)
        try:
            for _ in range(4):
                async with H11Transport(1, spares=spares) as transport:
                    response = await transport.handle_async_request(post(url, b"{}"))
                    await read_all(response)
                    await response.aclose()
                await asyncio.sleep(0.01)
        finally:
            await spares.aclose()

    ports: list[int] = []

    class Peers(Scripted):
        def answer(self, connection: socket.socket, body: bytes) -> bool:
            ports.append(connection.getpeername()[1])
            return super().answer(connection, body)

    server = Peers(lambda n: ok(b"{}"))
    try:
        asyncio.run(asyncio.wait_for(main(server.url), 10))
    finally:
        server.close()
    assert len(ports) == len(set(ports)) == 4  # each transport's request on a connection of its own


def test_bytes_that_arrive_while_a_connection_is_idle_are_never_taken_as_the_next_answer() -> None:
    """An answer sent before the request (here 50 ms after the last answer): the connection
    is dropped with those bytes unread, and the next request goes on a new one."""

    class Early(Scripted):
        def answer(self, connection: socket.socket, body: bytes) -> bool:
            connection.sendall(ok(b'{"n": %d}' % (len(self.requests) - 1)))
            time.sleep(0.05)
            connection.sendall(ok(b'{"early": true}'))
            return True

    async def main(url: str) -> list[bytes]:
        bodies = []
        async with H11Transport(1) as transport:
            for _ in range(2):
                response = await transport.handle_async_request(post(url, b"{}"))
                bodies.append(await read_all(response))
                await response.aclose()
                await asyncio.sleep(0.2)
        return bodies

    server = Early(lambda n: b"")
    try:
        assert asyncio.run(asyncio.wait_for(main(server.url), 10)) == [b'{"n": 0}', b'{"n": 1}']
    finally:
        server.close()
    assert server.connections == 2
