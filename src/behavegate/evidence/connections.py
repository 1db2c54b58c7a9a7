"""Connections to an endpoint, below HTTP: a socket's bytes as they arrive (an asyncio
Protocol: no private buffer read, no ``select``), TCP or TLS connect, and :class:`Spares`,
connections opened ahead of need. evidence/h11_transport.py speaks HTTP/1.1 over them."""

from __future__ import annotations

import asyncio
import functools
import ssl
import time
from collections import deque

_BUFFERED = 256 * 1024  # unread bytes past which the socket is paused


@functools.lru_cache(maxsize=1)
def default_tls() -> ssl.SSLContext:
    """A verified context on certifi's store (as httpx verifies, without the environment's
    SSL_CERT_FILE), built once: loading the store costs more than a request."""
    import certifi  # only an https endpoint needs it

    context = ssl.create_default_context(cafile=certifi.where())
    context.set_alpn_protocols(["http/1.1"])
    return context


class Wire(asyncio.Protocol):
    """A socket's bytes as they arrive (public asyncio API only: no private buffer read)."""

    def __init__(self) -> None:
        self.chunks: deque[bytes] = deque()
        self.buffered = 0
        self.eof = False
        self.lost: Exception | None = None
        self.transport: asyncio.Transport | None = None
        self.opened = time.monotonic()  # when the connection was made: bytes before a request are nobody's answer
        self._reading: asyncio.Future[None] | None = None
        self._writing: asyncio.Future[None] | None = None
        self._paused = False

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport
        self.opened = time.monotonic()

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

    def close(self) -> None:
        if self.transport is not None:
            self.transport.close()


Key = tuple[str, str, int]  # scheme, host, port


async def connect(key: Key, tls: ssl.SSLContext | None) -> Wire:
    """A new connection (TLS for https: ``tls``, else default_tls()); OSError when it cannot be made."""
    scheme, host, port = key
    context = (tls or default_tls()) if scheme == "https" else None
    loop = asyncio.get_running_loop()
    _, wire = await loop.create_connection(Wire, host, port, ssl=context, server_hostname=host if context else None)
    return wire


class Spares:
    """Connections opened ahead of need for the transports that share this (evidence/live.py:
    one transport an attempt). A spare has carried no request, so it holds nobody's answer;
    it goes to one transport and never comes back. Opening the next one while attempts wait
    for their answers takes the connect off their path: a connection a request cost a bare
    client 0.65 s more on 1,000 requests of 50 ms at concurrency 32 here (docs/performance.md)."""

    def __init__(self, size: int, tls: ssl.SSLContext | None = None) -> None:
        self._size = max(size, 0)
        self._tls = tls
        self._ready: dict[Key, list[asyncio.Task[Wire]]] = {}

    def take(self, key: Key) -> Wire | None:
        """A spare already open and still quiet, if there is one."""
        ready = self._ready.get(key, [])
        for task in [task for task in ready if task.done()]:
            ready.remove(task)
            if task.cancelled() or task.exception() is not None:
                continue  # it could not connect: the transport opens its own, and reports that
            wire = task.result()
            if wire.quiet():
                return wire
            wire.close()  # closed by the server while idle, or bytes nobody asked for
        return None

    def refill(self, key: Key) -> None:
        """One more opened in the background, up to ``size`` ready or on their way."""
        ready = self._ready.setdefault(key, [])
        if len(ready) < self._size:
            ready.append(asyncio.get_running_loop().create_task(connect(key, self._tls)))

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
