"""``behavegate view [RUNS_DIR]``: a local page over the stored runs: the list, one run,
two runs compared (``/compare?a=RUN&b=RUN``), or with ``--compare A B --html FILE`` the
comparison written as one file.

The server is the standard library's (http.server parses HTTP), bound to a loopback
address only, read-only and GET only; it answers only requests whose Host is a loopback
name (a web page elsewhere cannot reach it by DNS rebinding), each page under the
view's CSP. A run is named only by an id the listing found (report/runs.py).
"""

from __future__ import annotations

import ipaddress
import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import parse_qs, urlsplit

from behavegate.errors import ExitCode
from behavegate.github.console import Console
from behavegate.limits import VIEW_REQUEST_SECONDS
from behavegate.report.runs import RunReader
from behavegate.text import one_line

if TYPE_CHECKING:
    from behavegate.commands.invocation import ViewCommand


def loopback(host: str) -> bool:
    """Whether ``host`` names this machine only: ``localhost`` or a loopback address."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def host_name(header: str) -> str:
    """The name in a Host header, without its port (``[::1]:8080`` is ``::1``)."""
    if header.startswith("["):
        return header[1:].partition("]")[0]
    return header.rsplit(":", 1)[0]


class ViewServer(ThreadingHTTPServer):
    """One thread a connection (a browser keeps idle connections open); the runs are read
    under one lock, so a run is checked once however many pages ask for it."""

    daemon_threads = True

    def __init__(self, runs_dir: Path, host: str = "127.0.0.1", port: int = 0) -> None:
        if not loopback(host):
            raise ValueError(f"--host must be a loopback address (127.0.0.1, ::1 or localhost), not {host!r}")
        if ":" in host.strip("[]"):
            self.address_family = socket.AF_INET6
        self.reader = RunReader(runs_dir)
        self.reading = threading.Lock()
        self.shown_dir = str(runs_dir)
        super().__init__((host.strip("[]"), port), _Handler)

    @property
    def url(self) -> str:
        host, port = str(self.server_address[0]), int(self.server_address[1])
        shown = f"[{host}]" if ":" in host else host
        return f"http://{shown}:{port}/"

    def handle_error(self, request: object, client_address: object) -> None:
        """A broken connection is the client's; nothing to print."""


class _Handler(BaseHTTPRequestHandler):
    server: ViewServer
    timeout = VIEW_REQUEST_SECONDS
    server_version = "behavegate-view"
    sys_version = ""

    def do_GET(self) -> None:
        from behavegate.render import view

        if not loopback(host_name(self.headers.get("Host") or "")):
            self._send(421, view.error_page("not served", "this viewer answers requests to a loopback name only"))
            return
        try:
            status, page = self._page()
        except Exception as exc:  # a page that cannot be made is an error page, never a traceback
            status, page = 500, view.error_page("error", f"this page could not be made: {type(exc).__name__}")
        self._send(status, page)

    def _page(self) -> tuple[int, str]:
        from behavegate.render import view
        from behavegate.report.run_diff import diff_runs

        url = urlsplit(self.path)
        query = parse_qs(url.query, max_num_fields=4)
        reader = self.server.reader
        with self.server.reading:
            listing = reader.listing()
            reports = {entry.id: reader.report(entry.id) for entry in listing.entries}
        if url.path == "/":
            return 200, view.list_page(listing, self.server.shown_dir)
        wanted = {"/run": ("id",), "/compare": ("a", "b")}.get(url.path)
        if wanted is None:
            return 404, view.error_page("not found", "no such page: the runs are at /")
        entries = []
        for key in wanted:
            given = query.get(key, [""])[0]
            entry = listing.entry(given)
            if entry is None:
                return 404, view.error_page("no such run", f"no run {one_line(given, 200)!r} in {self.server.shown_dir}")
            report = reports[entry.id]
            if report is None:
                return 409, view.error_page("unreadable run", f"run {entry.id} cannot be shown: {entry.problem}")
            entries.append((entry, report))
        if url.path == "/run":
            return 200, view.run_page(entries[0][0], entries[0][1])
        (a, a_report), (b, b_report) = entries
        return 200, view.compare_page(diff_runs(a.id, a_report, b.id, b_report), a, b)

    def _send(self, status: int, page: str) -> None:
        from behavegate.render import view

        body = page.encode("utf-8")
        self.send_response(status)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Content-Security-Policy", view.policy(header=True))
        self.send_header("X-Content-Type-Options", "nosniff")
        self.send_header("Referrer-Policy", "no-referrer")
        self.send_header("Cache-Control", "no-store")
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:  # http.server's name
        """Requests are not logged: the console is the user's."""


def write_comparison(runs_dir: Path, a_id: str, b_id: str, out: Path) -> str | None:
    """The static mode: the comparison page written to ``out`` under the one output rule
    (files.place_output: inside the project or the runner's temp, no link on the way), as
    every other file a command writes; the problem, if any."""
    import os

    from behavegate.errors import InputError
    from behavegate.files import check_output, place_output, write_file
    from behavegate.render import view
    from behavegate.report.run_diff import diff_runs

    cwd = Path.cwd()
    try:
        place = place_output(out, cwd, "--html", os.environ, cwd)
        check_output(place, "--html")
    except InputError as exc:
        return exc.human

    reader = RunReader(runs_dir)
    listing = reader.listing()
    sides = []
    for run_id in (a_id, b_id):
        entry = listing.entry(run_id)
        if entry is None:
            return f"no run {one_line(run_id, 200)!r} in {one_line(str(runs_dir))}"
        report = reader.report(entry.id)
        if report is None:
            return f"run {one_line(run_id, 200)} cannot be shown: {one_line(str(entry.problem), 300)}"
        sides.append((entry, report))
    (a, a_report), (b, b_report) = sides
    try:
        write_file(place, view.compare_page(diff_runs(a.id, a_report, b.id, b_report), a, b, served=False), "--html")
    except InputError as exc:
        return exc.human
    return None


def run(command: ViewCommand, console: Console) -> int:
    runs_dir = Path(command.runs_dir)
    if command.compare is not None:
        if command.html is None:
            console.err("behavegate view: --compare A B needs --html FILE (the page is written there)")
            return ExitCode.INCOMPLETE
        problem = write_comparison(runs_dir, *command.compare, Path(command.html))
        if problem is not None:
            console.err(f"behavegate view: {problem}")
            return ExitCode.INCOMPLETE
        console.out(f"Comparison written to {one_line(command.html)}")
        return ExitCode.PASS
    if not loopback(command.host):
        console.err(
            f"behavegate view: --host must be a loopback address (127.0.0.1, ::1 or localhost), not {one_line(command.host)!r}"
        )
        return ExitCode.INCOMPLETE
    try:
        server = ViewServer(runs_dir, command.host, command.port)
    except OSError as exc:
        console.err(f"behavegate view: cannot listen on {one_line(command.host)}:{command.port}: {exc.strerror or exc}")
        return ExitCode.INCOMPLETE
    with server:
        console.out(f"Serving the runs in {one_line(command.runs_dir)} at {server.url} (Ctrl-C stops)")
        try:
            server.serve_forever()
        except KeyboardInterrupt:
            console.out("stopped")
    return ExitCode.PASS
