"""Building contracts and reports in memory, with fixed paths and clock."""

from __future__ import annotations

import contextlib
import json
import socket
import ssl
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from behavegate.commands.offline import run_offline
from behavegate.commands.options import RunOptions
from behavegate.contract.load import parse_contract_text
from behavegate.evidence.observation_file import parse_observation_text
from behavegate.frozen import replace
from behavegate.model import Contract, Expectation, ObservationSet, RunFacts, Scenario, Status, Timing
from behavegate.report.build import rejudged
from behavegate.report.result import Report

ROOT = Path("/project")
EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "refund-agent"
FACTS = RunFacts(
    run_id="20260101T000000Z-00000000",
    started_at="2026-01-01T00:00:00.000000Z",
    ended_at="2026-01-01T00:00:00.001000Z",
    duration_ms=1,
    max_scenarios=25,
    max_seconds=300.0,
)


def contract(text: str) -> Contract:
    return parse_contract_text(text, ROOT / "contract.yml", ROOT)


def observations(value: Any, attempts: bool = False) -> ObservationSet:
    text = value if isinstance(value, str) else json.dumps(value)
    return parse_observation_text(text, ROOT / "observations.json", attempts=attempts)


def report(contract_text: str, observation_value: Any) -> Report:
    parsed = contract(contract_text)
    evidence = observations(observation_value, attempts=parsed.version >= 2)
    return run_offline(parsed, evidence, RunOptions(), FACTS, display_path="contract.yml")


def example_report(which: str) -> Report:
    return report((EXAMPLE / "contract.yml").read_text(), (EXAMPLE / f"observations-{which}.json").read_text())


def edit_result(report: Report, index: int, status: Status | None = None, **verdict_changes: dict[str, Any]) -> Report:
    """A copy of ``report`` with scenario ``index`` changed: its status, and
    ``verdict_changes`` mapping a verdict position (as text) to field changes."""
    results = list(report.results)
    result = results[index]
    verdicts = list(result.verdicts)
    for position, changes in verdict_changes.items():
        verdicts[int(position.removeprefix("v"))] = replace(verdicts[int(position.removeprefix("v"))], **changes)
    results[index] = replace(result, verdicts=tuple(verdicts), status=status or result.status)
    return rejudged(report, replace(report.evaluation, results=tuple(results)))


def with_extras(report: Report) -> Report:
    """As a command leaves it: a scenario left out by the selection, and timings."""
    skipped = Scenario("not-selected", "p", Expectation(), line=99)
    return replace(report, skipped=(skipped,), timings=(Timing("", "", 250),) * len(report.results))


def send_json(handler: BaseHTTPRequestHandler, value: Any, status: int = 200) -> None:
    """Answer a loopback test server's request with ``value`` as JSON (bytes pass as they are)."""
    body = value if isinstance(value, bytes) else json.dumps(value).encode()
    handler.send_response(status)
    handler.send_header("Content-Type", "application/json")
    handler.send_header("Content-Length", str(len(body)))
    handler.end_headers()
    handler.wfile.write(body)


class QuietHandler(BaseHTTPRequestHandler):
    """A loopback test server's handler that keeps the test log clean."""

    def log_message(self, *args: Any) -> None:
        pass


@contextmanager
def loopback(handler: type[BaseHTTPRequestHandler], path: str = "/v1/chat/completions") -> Iterator[str]:
    """A real HTTP server on 127.0.0.1 for the test's duration; yields its URL."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    # shutdown() waits for the loop's next poll: at the default 0.5 s that was most of a short test.
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}{path}"
    finally:
        server.shutdown()
        server.server_close()


# Runs the CLI and records its own peak RSS. VmHWM is the peak of this process's
# memory map only: ru_maxrss is not, since Linux carries the parent's peak across
# fork and exec (a child of a grown pytest process would report pytest's size).
PEAK_RSS_SCRIPT = """
import sys
from behavegate.cli import main
code = main(sys.argv[2:])
with open("/proc/self/status") as status:
    peak = next(line.split()[1] for line in status if line.startswith("VmHWM:"))
open(sys.argv[1], "w").write(peak)
sys.exit(code)
"""


# Complexity guards compare CPU time within one run, never with a number of seconds (a loaded
# machine slows both sides alike): the whole input against its first 1/SHRINK. Linear work
# grows SHRINK-fold, quadratic SHRINK²-fold.
SHRINK = 8
GROWTH_BOUND = 3 * SHRINK
# Below this the small input's time is mostly noise: the whole input must take GROWTH_BOUND
# times this long to fail, which super-linear work on these inputs does by orders of magnitude.
NOISE_FLOOR_S = 0.005


def cpu_seconds(work: Callable[[], object]) -> float:
    started = time.process_time()  # this process's CPU: other work on the machine does not count
    work()
    return time.process_time() - started


def growth(whole: Callable[[], object], eighth: Callable[[], object], tries: int = 1) -> tuple[float, float, float]:
    """(growth, whole s, eighth s): CPU time on the whole input over that on its first 1/SHRINK,
    the best of ``tries`` each."""
    whole_s = min(cpu_seconds(whole) for _ in range(tries))
    eighth_s = min(cpu_seconds(eighth) for _ in range(tries))
    return whole_s / max(eighth_s, NOISE_FLOOR_S), whole_s, eighth_s


def steepness(whole: Callable[[], object], eighth: Callable[[], object]) -> tuple[float, str]:
    """``growth``, the best of three when over the bound (a super-linear pattern stays steep
    every time, a scheduling hiccup does not), and a line saying what was measured."""
    grown, whole_s, eighth_s = growth(whole, eighth)
    if grown >= GROWTH_BOUND:
        grown, whole_s, eighth_s = growth(whole, eighth, tries=3)
    return grown, f"grew {grown:.0f}-fold for {SHRINK}-fold input ({whole_s:.3f} s against {eighth_s:.3f} s)"


def spy_on_timeouts(monkeypatch: Any, regex_module: Any) -> list[float]:
    """The ``timeout`` each ``regex.search`` is given from now on (the search still runs): a
    budget checked by what the engine is told, not by how long a run took."""
    timeouts: list[float] = []
    search = regex_module.search

    def spy(*args: Any, **kwargs: Any) -> Any:
        timeouts.append(kwargs["timeout"])
        return search(*args, **kwargs)

    monkeypatch.setattr(regex_module, "search", spy)
    return timeouts


class RawServer:
    """A loopback server on raw sockets for tests that need exact bytes on kept-alive
    connections: it reads each request (head and Content-Length body) and hands it to
    :meth:`answer`, which writes to the socket and returns False to close the connection.
    Counts the connections it accepted and keeps every request it read. With ``tls`` (a
    server context) it speaks https."""

    def __init__(self, tls: ssl.SSLContext | None = None) -> None:
        self.requests: list[bytes] = []
        self.connections = 0
        self.tls = tls
        self.listener = socket.socket()
        self.listener.bind(("127.0.0.1", 0))
        self.listener.listen(16)
        scheme = "https" if tls else "http"
        self.url = f"{scheme}://127.0.0.1:{self.listener.getsockname()[1]}/v1/chat/completions"
        threading.Thread(target=self._accept, daemon=True).start()

    def answer(self, connection: socket.socket, body: bytes) -> bool:
        raise NotImplementedError

    def greet(self, connection: socket.socket) -> None:
        """What the server writes on accept, before reading any request (nothing: as a server should)."""

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
        with contextlib.ExitStack() as stack, contextlib.suppress(OSError):
            stack.enter_context(connection)
            if self.tls is not None:
                # Each write goes at once: TLS 1.3 session tickets would otherwise hold a small
                # answer back (Nagle) until the client's delayed ACK, 40 ms on.
                connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                connection = stack.enter_context(self.tls.wrap_socket(connection, server_side=True))
            self.greet(connection)
            while True:
                while b"\r\n\r\n" not in pending:
                    chunk = connection.recv(65536)
                    if not chunk:
                        return
                    pending += chunk
                head, _, pending = pending.partition(b"\r\n\r\n")
                lengths = (int(line.split(b":")[1]) for line in head.split(b"\r\n") if line.lower().startswith(b"content-length"))
                length = next(lengths, 0)
                while len(pending) < length:
                    pending += connection.recv(65536)
                body, pending = pending[:length], pending[length:]
                self.requests.append(head + b"\r\n\r\n" + body)
                if not self.answer(connection, body):
                    return
