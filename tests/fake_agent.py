"""The one fake agent the tests talk to: a real server on 127.0.0.1 (an ephemeral port) that
answers each request as the test configures it and records every request it got.

Two modes of the same fake:

* :class:`FakeAgent`, HTTP: ``answer(request)`` returns a :class:`Reply` (Chat Completions JSON,
  an SSE stream, a Responses API or agent.http body, any status, headers, a delay, or no answer
  at all) or any JSON value (200, as JSON). The stdlib server frames the answers.
* :class:`RawServer`, raw sockets: for hostile cases that need exact bytes on kept-alive
  connections; h11 reads each request, the test writes whatever bytes it likes back.
"""

from __future__ import annotations

import contextlib
import json
import socket
import ssl
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any

import h11

CHAT_PATH = "/v1/chat/completions"


@dataclass(frozen=True)
class Request:
    """One request as the fake received it. ``index``: its position among all the requests this
    fake received (0-based, whatever the connection); ``length``: the body's declared length
    (the body itself is empty when the fake was told not to keep bodies)."""

    index: int
    method: str
    path: str
    headers: tuple[tuple[str, str], ...]
    body: bytes
    length: int = 0

    def header(self, name: str, default: str = "") -> str:
        return next((value for key, value in self.headers if key.lower() == name.lower()), default)

    @property
    def head(self) -> str:
        """The headers as one text, one ``Name: value`` a line (to search for a secret in)."""
        return "".join(f"{key}: {value}\n" for key, value in self.headers)

    def json(self) -> Any:
        return json.loads(self.body)

    @property
    def prompt(self) -> str:
        """The last message's content (Chat Completions)."""
        content: str = self.json()["messages"][-1]["content"]
        return content


@dataclass(frozen=True)
class Reply:
    """What the fake answers. Without ``length`` the body is not announced and ends when the
    connection closes (as a streaming agent may do); ``silent`` closes the connection without
    an answer; ``delay_s`` holds the answer back."""

    body: bytes = b""
    status: int = 200
    headers: tuple[tuple[str, str], ...] = (("Content-Type", "application/json"),)
    length: bool = True
    delay_s: float = 0.0
    silent: bool = False


def json_reply(
    value: Any, status: int = 200, headers: Mapping[str, str] | None = None, content_type: str | None = "application/json"
) -> Reply:
    """``value`` as JSON (bytes pass as they are), with ``headers`` after the Content-Type."""
    body = value if isinstance(value, bytes) else json.dumps(value).encode()
    typed = (("Content-Type", content_type),) if content_type else ()
    return Reply(body, status, typed + tuple((headers or {}).items()))


def sse_reply(body: bytes | str, length: bool = True) -> Reply:
    """A text/event-stream answer; without ``length`` it ends when the connection closes."""
    data = body.encode() if isinstance(body, str) else body
    return Reply(data, headers=(("Content-Type", "text/event-stream"),), length=length)


def empty_reply(status: int, **headers: str) -> Reply:
    """A status with an empty body (``Retry_After`` names the header Retry-After)."""
    return Reply(
        b"", status, (*((key.replace("_", "-"), value) for key, value in headers.items()), ("Content-Length", "0")), length=False
    )


SILENT = Reply(silent=True)

Answer = Callable[[Request], Any]


class _Server(ThreadingHTTPServer):
    request_queue_size = 64  # many clients connect at once in the concurrency tests; the default 5 drops some
    daemon_threads = True


class FakeAgent:
    """A loopback HTTP server answering every request (any method, any path) with ``answer``.
    ``path`` completes :attr:`url`; ``keep_alive`` speaks HTTP/1.1 (kept-alive connections)
    instead of closing after each answer; ``keep_bodies=False`` reads request bodies in pieces
    and drops them (a fake that must not grow with what it is sent)."""

    def __init__(self, answer: Answer, path: str = CHAT_PATH, keep_alive: bool = False, keep_bodies: bool = True) -> None:
        self.answer = answer
        self.requests: list[Request] = []
        self.lock = threading.Lock()
        self._received = 0
        self._keep_bodies = keep_bodies
        self._server = _Server(("127.0.0.1", 0), self._handler(keep_alive))
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}{path}"

    def __enter__(self) -> FakeAgent:
        # shutdown() waits for the loop's next poll: at the default 0.5 s that was most of a short test.
        threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None) -> None:
        self._server.shutdown()
        self._server.server_close()

    @property
    def bodies(self) -> list[Any]:
        """Every request's body, as JSON."""
        return [request.json() for request in self.requests]

    @property
    def prompts(self) -> list[str]:
        return [request.prompt for request in self.requests]

    def _receive(self, handler: BaseHTTPRequestHandler) -> Request:
        length = int(handler.headers.get("Content-Length") or 0)
        if self._keep_bodies:
            body = handler.rfile.read(length)
        else:
            body, left = b"", length
            while left:
                left -= len(handler.rfile.read(min(left, 1 << 20)))
        with self.lock:
            request = Request(self._received, handler.command, handler.path, tuple(handler.headers.items()), body, length)
            self.requests.append(request)
            self._received += 1
        return request

    def _handler(self, keep_alive: bool) -> type[BaseHTTPRequestHandler]:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1" if keep_alive else "HTTP/1.0"

            def log_message(self, *args: Any) -> None:
                pass  # keeps the test log clean

            def handle_one_request(self) -> None:
                # Every method goes to answer (the stdlib would look for a do_<METHOD> each).
                self.raw_requestline = self.rfile.readline(65537)
                if not self.raw_requestline or not self.parse_request():
                    self.close_connection = True
                    return
                fake._write(self, fake.answer(fake._receive(self)))

        return Handler

    @staticmethod
    def _write(handler: BaseHTTPRequestHandler, answer: Any) -> None:
        reply = answer if isinstance(answer, Reply) else json_reply(answer)
        time.sleep(reply.delay_s)
        if reply.silent:
            handler.close_connection = True
            return
        handler.send_response(reply.status)
        for key, value in reply.headers:
            handler.send_header(key, value)
        if reply.length:
            handler.send_header("Content-Length", str(len(reply.body)))
        else:
            handler.close_connection = True
        handler.end_headers()
        handler.wfile.write(reply.body)
        handler.wfile.flush()


@contextlib.contextmanager
def serve(answer: Answer, path: str = CHAT_PATH, **options: Any) -> Iterator[str]:
    """A :class:`FakeAgent` for the ``with`` block; yields its URL."""
    with FakeAgent(answer, path, **options) as agent:
        yield agent.url


@contextlib.contextmanager
def host(handler: type[BaseHTTPRequestHandler], path: str = CHAT_PATH) -> Iterator[str]:
    """Serves a handler class written elsewhere (the docs' example servers, run as written) on
    the fake's loopback server, its log kept quiet; yields its URL."""

    class Quiet(handler):  # type: ignore[valid-type,misc]
        def log_message(self, *args: Any) -> None:
            pass

    server = _Server(("127.0.0.1", 0), Quiet)
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}{path}"
    finally:
        server.shutdown()
        server.server_close()


RawAnswer = Callable[[socket.socket, bytes], bool]


class RawServer:
    """The fake in raw-socket mode, for tests that need exact bytes on kept-alive connections:
    it reads each request and hands its body to :meth:`answer` (by default ``respond``), which writes to the socket and returns False to close the connection. Counts the
    connections it accepted and keeps every request's bytes as read. :meth:`greet` writes on
    accept, before any request (nothing, as a server should). With ``tls`` (a server context)
    it speaks https; with ``idle_s`` it closes a connection that asked nothing for that long."""

    def __init__(
        self, respond: RawAnswer | None = None, *, tls: ssl.SSLContext | None = None, idle_s: float | None = None
    ) -> None:
        self.respond = respond
        self.tls = tls
        self.idle_s = idle_s
        self.requests: list[bytes] = []
        self.connections = 0
        self.listener = socket.socket()
        self.listener.bind(("127.0.0.1", 0))
        self.listener.listen(16)
        scheme = "https" if tls else "http"
        self.url = f"{scheme}://127.0.0.1:{self.listener.getsockname()[1]}{CHAT_PATH}"
        threading.Thread(target=self._accept, daemon=True).start()

    def __enter__(self) -> RawServer:
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None) -> None:
        self.close()

    def answer(self, connection: socket.socket, body: bytes) -> bool:
        assert self.respond is not None, "a RawServer needs respond or an answer()"
        return self.respond(connection, body)

    def greet(self, connection: socket.socket) -> None:
        """What the server writes on accept, before reading any request."""

    def close(self) -> None:
        self.listener.close()

    def _accept(self) -> None:
        while True:
            try:
                connection, _ = self.listener.accept()
            except OSError:
                return
            self.connections += 1
            threading.Thread(target=self._serve, args=(connection,), daemon=True).start()

    def _serve(self, connection: socket.socket) -> None:
        pending = b""
        with contextlib.ExitStack() as stack, contextlib.suppress(OSError, h11.RemoteProtocolError):
            stack.enter_context(connection)
            if self.idle_s is not None:
                connection.settimeout(self.idle_s)
            if self.tls is not None:
                # Each write goes at once: TLS 1.3 session tickets would otherwise hold a small
                # answer back (Nagle) until the client's delayed ACK, 40 ms on.
                connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                connection = stack.enter_context(self.tls.wrap_socket(connection, server_side=True))
            self.greet(connection)
            while True:
                # A fresh h11 state per request: the answer's bytes are the test's, not h11's.
                reader = h11.Connection(h11.SERVER)
                if pending:
                    reader.receive_data(pending)  # b"" would tell h11 the connection closed
                read, body = pending, b""
                while (event := reader.next_event()) is not h11.PAUSED and not isinstance(event, h11.EndOfMessage):
                    if event is h11.NEED_DATA:
                        chunk = connection.recv(65536)
                        if not chunk:
                            return
                        read += chunk
                        reader.receive_data(chunk)
                    elif isinstance(event, h11.Data):
                        body += event.data
                    elif isinstance(event, h11.ConnectionClosed):
                        return
                pending = reader.trailing_data[0]
                self.requests.append(read[: len(read) - len(pending)])
                if not self.answer(connection, body):
                    return


def raw_agent(handle: Callable[[socket.socket, bytes], None]) -> RawServer:
    """A raw-socket fake that hands each request's socket and body to ``handle``, then closes."""

    def once(connection: socket.socket, body: bytes) -> bool:
        with contextlib.suppress(OSError):
            handle(connection, body)
        return False

    return RawServer(once)


# --- one answer in every shape the live adapters read ------------------------------------------


def event(value: Any) -> bytes:
    """One server-sent event carrying ``value`` as JSON."""
    return b"data: " + json.dumps(value).encode() + b"\n\n"


def delta(value: dict[str, Any], finish_reason: str | None = None) -> bytes:
    """One Chat Completions stream chunk."""
    return event({"object": "chat.completion.chunk", "choices": [{"index": 0, "delta": value, "finish_reason": finish_reason}]})


DONE = b"data: [DONE]\n\n"


def as_stream(reply: dict[str, Any]) -> bytes:
    """A Chat Completions answer as an OpenAI-style stream: content a few characters a chunk,
    each tool call's arguments three characters a chunk, usage last."""
    choice = reply["choices"][0]
    message = choice["message"]
    chunks = [delta({"role": "assistant"})]
    text = message.get("content") or ""
    chunks += [delta({"content": text[i : i + 3]}) for i in range(0, len(text), 3)]
    for index, call in enumerate(message.get("tool_calls") or ()):
        head = {
            "index": index,
            "id": call["id"],
            "type": "function",
            "function": {"name": call["function"]["name"], "arguments": ""},
        }
        chunks.append(delta({"tool_calls": [head]}))
        arguments = call["function"]["arguments"]
        chunks += [
            delta({"tool_calls": [{"index": index, "function": {"arguments": arguments[i : i + 3]}}]})
            for i in range(0, len(arguments), 3)
        ]
    chunks.append(delta({}, choice["finish_reason"]))
    if "usage" in reply:
        chunks.append(event({"choices": [], "usage": reply["usage"]}))
    return b"".join([*chunks, DONE])


def as_custom(reply: dict[str, Any]) -> dict[str, Any]:
    """A Chat Completions answer as a custom (agent.http) agent gives it: its own keys, arguments as objects."""
    choice = reply["choices"][0]
    chat = choice["message"]
    calls = [
        {"id": c["id"], "function": {"name": c["function"]["name"], "arguments": json.loads(c["function"]["arguments"])}}
        for c in chat.get("tool_calls") or ()
    ]
    custom: dict[str, Any] = {
        "answer": chat.get("content"),
        "calls": calls,
        "done": choice["finish_reason"] in {"stop", "tool_calls"},
    }
    if "usage" in reply:
        custom["used"] = reply["usage"]["total_tokens"]
    return custom


def response_message(*parts: dict[str, Any]) -> dict[str, Any]:
    """A Responses API message item."""
    return {"type": "message", "role": "assistant", "content": list(parts)}


def output_text(value: str) -> dict[str, Any]:
    return {"type": "output_text", "text": value, "annotations": []}


def function_call(name: str, arguments: str, call_id: str = "c1") -> dict[str, Any]:
    return {"type": "function_call", "name": name, "arguments": arguments, "call_id": call_id}


def as_responses(reply: dict[str, Any]) -> dict[str, Any]:
    """A Chat Completions answer as the Responses API gives it: calls as function_call items,
    the text as a message item, finish reason as status."""
    chat = reply["choices"][0]["message"]
    output: list[dict[str, Any]] = [{"type": "reasoning", "id": "rs", "summary": []}]
    output += [function_call(c["function"]["name"], c["function"]["arguments"], c["id"]) for c in chat.get("tool_calls") or ()]
    if chat.get("content"):
        output.append(response_message(output_text(chat["content"])))
    raw: dict[str, Any] = {"id": "resp", "object": "response", "status": "completed", "output": output}
    if "usage" in reply:
        raw["usage"] = {"input_tokens": 1, "output_tokens": 1, **reply["usage"]}
    return raw


# --- a scripted LLM judge (response.judge) or user simulator -------------------------------


def chat(content: Any, finish_reason: str = "stop", **message: Any) -> dict[str, Any]:
    return {"choices": [{"message": {"role": "assistant", "content": content, **message}, "finish_reason": finish_reason}]}


def answer_in(question_text: str) -> str:
    """The agent's answer as the judge receives it: the JSON string between the markers."""
    inner = question_text.split(">\n", 1)[1].rsplit("\n</answer-", 1)[0]
    value = json.loads(inner)
    assert isinstance(value, str)
    return value


class Judge:
    """Replies from ``script`` in turn (a callable gets the agent's answer); keeps the requests' bodies."""

    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        self.script: list[Any] = []
        self.requests: list[dict[str, Any]] = []
        self.release = threading.Event()

    def __call__(self, request: Request) -> Reply:
        body = request.json()
        self.requests.append(body)
        step = self.script[(len(self.requests) - 1) % len(self.script)] if self.script else "fair"
        if step == "fair":
            passed = "Paris" in answer_in(body["messages"][-1]["content"])
            step = json.dumps({"verdict": "pass" if passed else "fail", "reason": "compared with Paris"})
        if step == "slow":  # a fair reply, held back
            self.release.wait(0.4)
            step = json.dumps({"verdict": "pass", "reason": "slowly compared"})
        if step == "hang":
            self.release.wait(10)
            return SILENT
        if isinstance(step, int):
            return json_reply({"error": "busy"}, status=step)
        return json_reply(step if isinstance(step, dict) else chat(step))


JUDGE = Judge()
