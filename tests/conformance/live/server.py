#!/usr/bin/env python3
"""A canned OpenAI-compatible chat-completions server for live-mode conformance.

stdlib only.  It binds 127.0.0.1 on a free port and answers every POST with the
canned reply registered for the request's prompt: the content of the *last*
``user`` message in the JSON body (stripped).  Replies come from a
``responses.json`` mapping ``prompt -> reply``; the key ``"*"`` is the fallback.
A prompt without a reply gets HTTP 404 ``{"error": "no canned reply"}``.

A reply is an object; every key is optional:

``status``          HTTP status (default 200); ``reason`` its phrase.
``headers``         extra headers, ``{name: value}`` or ``[[name, value], ...]``;
                    they are sent as given (a lying ``Content-Length`` included).
``content_type``    default ``application/json``; ``null`` sends no Content-Type.
``json``            body = ``json.dumps(value)`` (any JSON value).
``body``            body = this string encoded as UTF-8 (invalid JSON, NaN, ...).
``body_b64``        body = these bytes (BOM, invalid UTF-8, ...).
``pad``             prepend this many ASCII spaces to the body (JSON stays valid).
``pad_to``          prepend ASCII spaces until the body is exactly this many bytes.
``echo_auth``       replace ``{auth_token}`` in the body with the request's bearer token.
``gzip``            gzip the body and send ``Content-Encoding: gzip``.
``content_length``  send this Content-Length instead of the real one (int or str).
``chunked``         send ``Transfer-Encoding: chunked`` instead of Content-Length.
``delay``           seconds to wait before sending anything.
``trickle``         ``{"chunk": bytes, "interval": seconds}``: send the body in
                    pieces with a pause before each.
``close``           close the connection without any response.
``truncate``        send only the first N bytes of the body, then close.

Every connection is closed after its response (``Connection: close``).  Each
request is logged as ``{"method", "path", "headers": [[name, value], ...],
"body": <parsed JSON or None>, "raw": <text if not JSON>}``.

Module use::

    url, stop, requests_log = start(responses)   # url = http://127.0.0.1:PORT
    ...
    stop()

Script use: ``python server.py responses.json`` prints the base URL and serves
until killed.  ``dead_port()`` returns a port with nothing listening on it.
"""

from __future__ import annotations

import base64
import contextlib
import gzip as gzip_module
import json
import socket
import socketserver
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

CHAT_PATH = "/v1/chat/completions"
MAX_REQUEST_BYTES = 16 * 1024 * 1024
_REASONS = {
    200: "OK",
    201: "Created",
    204: "No Content",
    301: "Moved Permanently",
    302: "Found",
    304: "Not Modified",
    307: "Temporary Redirect",
    400: "Bad Request",
    404: "Not Found",
    429: "Too Many Requests",
    500: "Internal Server Error",
    503: "Service Unavailable",
}


class _Server(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True
    block_on_close = False

    def __init__(self, responses: dict[str, Any]) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.responses = responses
        self.log: list[dict[str, Any]] = []
        self.log_lock = threading.Lock()
        self.stopping = threading.Event()


class _Closed(Exception):
    pass


class _Handler(socketserver.BaseRequestHandler):
    server: _Server

    def handle(self) -> None:
        sock: socket.socket = self.request
        sock.settimeout(30)
        try:
            request = _read_request(sock)
        except (_Closed, OSError, ValueError):
            return
        with self.server.log_lock:
            self.server.log.append(request)
        reply = _pick_reply(self.server.responses, request)
        try:
            _send_reply(sock, reply, request, self.server.stopping)
        except OSError:
            pass  # the client gave up (deadline, size limit): expected
        finally:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)


def _read_request(sock: socket.socket) -> dict[str, Any]:
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(65536)
        if not chunk:
            raise _Closed
        data += chunk
        if len(data) > MAX_REQUEST_BYTES:
            raise ValueError("request head too large")
    head, _, rest = data.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    method, path, _version = lines[0].split(" ", 2)
    headers = []
    for line in lines[1:]:
        name, _, value = line.partition(":")
        headers.append([name.strip(), value.strip()])
    lookup = {name.lower(): value for name, value in headers}
    if "chunked" in lookup.get("transfer-encoding", "").lower():
        body = _read_chunked(sock, rest)
    else:
        length = int(lookup.get("content-length", "0") or 0)
        if length > MAX_REQUEST_BYTES:
            raise ValueError("request body too large")
        body = rest
        while len(body) < length:
            chunk = sock.recv(65536)
            if not chunk:
                raise _Closed
            body += chunk
        body = body[:length]
    entry: dict[str, Any] = {"method": method, "path": path, "headers": headers, "body": None}
    try:
        entry["body"] = json.loads(body.decode("utf-8"))
    except ValueError:
        entry["raw"] = body.decode("utf-8", errors="replace")
    return entry


def _read_chunked(sock: socket.socket, data: bytes) -> bytes:
    body = b""
    while True:
        while b"\r\n" not in data:
            chunk = sock.recv(65536)
            if not chunk:
                raise _Closed
            data += chunk
        size_line, _, data = data.partition(b"\r\n")
        size = int(size_line.split(b";")[0], 16)
        while len(data) < size + 2:
            chunk = sock.recv(65536)
            if not chunk:
                raise _Closed
            data += chunk
        if size == 0:
            return body
        body += data[:size]
        data = data[size + 2 :]
        if len(body) > MAX_REQUEST_BYTES:
            raise ValueError("request body too large")


def prompt_of(body: Any) -> str | None:
    """The stripped content of the last user message, or None."""
    if not isinstance(body, dict) or not isinstance(body.get("messages"), list):
        return None
    for message in reversed(body["messages"]):
        if isinstance(message, dict) and message.get("role") == "user":
            content = message.get("content")
            return content.strip() if isinstance(content, str) else None
    return None


def bearer_token(request: dict[str, Any]) -> str:
    for name, value in request["headers"]:
        if name.lower() == "authorization" and value.startswith("Bearer "):
            return str(value[len("Bearer ") :])
    return ""


def _pick_reply(responses: dict[str, Any], request: dict[str, Any]) -> dict[str, Any]:
    prompt = prompt_of(request["body"])
    if prompt is not None and prompt in responses:
        return dict(responses[prompt])
    if "*" in responses:
        return dict(responses["*"])
    return {"status": 404, "json": {"error": "no canned reply", "prompt": prompt}}


def reply_body(reply: dict[str, Any], request: dict[str, Any] | None = None) -> bytes:
    if "json" in reply:
        body = json.dumps(reply["json"]).encode("utf-8")
    elif "body" in reply:
        body = str(reply["body"]).encode("utf-8")
    elif "body_b64" in reply:
        body = base64.b64decode(reply["body_b64"])
    else:
        body = b""
    if reply.get("echo_auth") and request is not None:
        body = body.replace(b"{auth_token}", bearer_token(request).encode("utf-8"))
    if reply.get("pad"):
        body = b" " * int(reply["pad"]) + body
    if reply.get("pad_to"):
        body = b" " * max(0, int(reply["pad_to"]) - len(body)) + body
    if reply.get("gzip"):
        body = gzip_module.compress(body, mtime=0)
    return body


def _send_reply(sock: socket.socket, reply: dict[str, Any], request: dict[str, Any], stopping: threading.Event) -> None:
    if reply.get("delay") and stopping.wait(float(reply["delay"])):
        return
    if reply.get("close"):
        return
    status = int(reply.get("status", 200))
    reason = reply.get("reason", _REASONS.get(status, "Status"))
    body = reply_body(reply, request)
    extra = reply.get("headers") or {}
    extra_items = list(extra.items()) if isinstance(extra, dict) else [tuple(item) for item in extra]
    extra_names = {str(name).lower() for name, _ in extra_items}
    head = [f"HTTP/1.1 {status} {reason}"]
    content_type = reply.get("content_type", "application/json")
    if content_type is not None and "content-type" not in extra_names:
        head.append(f"Content-Type: {content_type}")
    if reply.get("gzip"):
        head.append("Content-Encoding: gzip")
    chunked = bool(reply.get("chunked"))
    if chunked:
        head.append("Transfer-Encoding: chunked")
    elif "content-length" not in extra_names:
        length = reply.get("content_length", len(body))
        if status not in (204, 304) or "content_length" in reply:
            head.append(f"Content-Length: {length}")
    head.append("Connection: close")
    head += [f"{name}: {value}" for name, value in extra_items]
    sock.sendall(("\r\n".join(head) + "\r\n\r\n").encode("latin-1"))
    if "truncate" in reply:
        body = body[: int(reply["truncate"])]
    trickle = reply.get("trickle")
    piece = int(trickle["chunk"]) if trickle else 64 * 1024
    interval = float(trickle["interval"]) if trickle else 0.0
    for start in range(0, len(body), piece):
        if interval and stopping.wait(interval):
            return
        part = body[start : start + piece]
        if chunked:
            part = f"{len(part):x}\r\n".encode("ascii") + part + b"\r\n"
        sock.sendall(part)
    if chunked:
        sock.sendall(b"0\r\n\r\n")


def start(responses: dict[str, Any]) -> tuple[str, Callable[[], None], list[dict[str, Any]]]:
    """Serve ``responses`` on 127.0.0.1; return (base URL, stop, request log)."""
    server = _Server(responses)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    port = server.server_address[1]

    def stop() -> None:
        server.stopping.set()
        server.shutdown()
        server.server_close()
        thread.join(5)

    return f"http://127.0.0.1:{port}", stop, server.log


def dead_port() -> int:
    """A loopback port with (almost certainly) nothing listening on it."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def load_responses(path: str | Path) -> dict[str, Any]:
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    if not isinstance(data, dict):
        raise SystemExit(f"{path}: must be a JSON object (prompt -> reply)")
    return data


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print("usage: server.py responses.json", file=sys.stderr)
        return 2
    url, stop, _log = start(load_responses(argv[0]))
    print(url + CHAT_PATH, flush=True)
    try:
        threading.Event().wait()
    except KeyboardInterrupt:
        pass
    finally:
        stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
