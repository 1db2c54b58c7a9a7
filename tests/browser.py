"""A real headless browser for the HTML report's tests: Debian's ``chromium``
driven over the DevTools protocol through ``--remote-debugging-pipe`` (the
protocol's JSON messages, NUL-terminated, on file descriptors 3 and 4), so no
port is opened and no third-party client is needed.

``Page`` records what a loaded page did: console messages and uncaught
exceptions, log entries (CSP violations among them), every network request
the page made, and every JavaScript dialog it tried to open (dismissed).
Timeouts here only guard against a hung browser; no test asserts on speed.
"""

from __future__ import annotations

import base64
import contextlib
import fcntl
import json
import os
import select
import shutil
import subprocess
import tempfile
import time
from pathlib import Path
from types import TracebackType
from typing import Any

GUARD_SECONDS = 120.0  # a browser that says nothing for this long is hung, not slow


def chromium() -> str | None:
    """The chromium binary, or None when it is not installed."""
    for name in ("chromium", "chromium-browser"):
        found = shutil.which(name)
        if found:
            return found
    return None


class BrowserError(Exception):
    pass


class Browser:
    """One headless chromium process; ``open(url)`` loads a page in a new tab."""

    def __init__(self, binary: str, width: int = 1280, height: int = 900) -> None:
        self._profile = tempfile.mkdtemp(prefix="behavegate-chromium-")
        to_browser_r, self._to_browser = os.pipe()
        self._from_browser, from_browser_w = os.pipe()
        self._process = subprocess.Popen(
            [
                binary,
                "--headless=new",
                "--remote-debugging-pipe",
                "--no-sandbox",  # CI runs as root, where chromium's sandbox cannot start
                "--disable-gpu",
                "--no-first-run",
                "--no-default-browser-check",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--disable-extensions",
                f"--window-size={width},{height}",
                f"--user-data-dir={self._profile}",
                "about:blank",
            ],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            pass_fds=(3, 4),
            preexec_fn=_fds(to_browser_r, from_browser_w),
        )
        os.close(to_browser_r)
        os.close(from_browser_w)
        self._buffer = b""
        self._next_id = 0
        self.events: list[dict[str, Any]] = []

    # -- the protocol ------------------------------------------------------------

    def send(self, method: str, params: dict[str, Any] | None = None, session: str | None = None) -> dict[str, Any]:
        self._next_id += 1
        message: dict[str, Any] = {"id": self._next_id, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = session
        os.write(self._to_browser, json.dumps(message).encode() + b"\0")
        while True:
            reply = self._read()
            if reply.get("id") == self._next_id:
                if "error" in reply:
                    raise BrowserError(f"{method}: {reply['error']}")
                result: dict[str, Any] = reply.get("result", {})
                return result
            self.events.append(reply)

    def wait_for(self, method: str, session: str) -> dict[str, Any]:
        for index, event in enumerate(self.events):
            if event.get("method") == method and event.get("sessionId") == session:
                return self.events.pop(index)
        while True:
            event = self._read()
            if event.get("method") == method and event.get("sessionId") == session:
                return event
            self.events.append(event)

    def _read(self) -> dict[str, Any]:
        while b"\0" not in self._buffer:
            ready, _, _ = select.select([self._from_browser], [], [], GUARD_SECONDS)
            if not ready:
                raise BrowserError(f"chromium said nothing for {GUARD_SECONDS:.0f} s")
            chunk = os.read(self._from_browser, 1 << 20)
            if not chunk:
                raise BrowserError("chromium closed the DevTools pipe")
            self._buffer += chunk
        message, self._buffer = self._buffer.split(b"\0", 1)
        parsed: dict[str, Any] = json.loads(message)
        return parsed

    # -- pages -------------------------------------------------------------------

    def open(self, url: str) -> Page:
        target = self.send("Target.createTarget", {"url": "about:blank"})["targetId"]
        session = self.send("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        for domain in ("Page", "Runtime", "Log", "Network"):
            self.send(f"{domain}.enable", session=session)
        self.send("Page.navigate", {"url": url}, session=session)
        self.wait_for("Page.loadEventFired", session)
        page = Page(self, session, url)
        page.settle()
        return page

    def close(self) -> None:
        with contextlib.suppress(BrowserError, OSError):
            self.send("Browser.close")
        try:
            self._process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait()
        for fd in (self._to_browser, self._from_browser):
            with contextlib.suppress(OSError):
                os.close(fd)
        shutil.rmtree(self._profile, ignore_errors=True)

    def __enter__(self) -> Browser:
        return self

    def __exit__(self, kind: type[BaseException] | None, value: BaseException | None, trace: TracebackType | None) -> None:
        self.close()


def _fds(read_end: int, write_end: int) -> Any:
    """In the child: the command pipe's read end as fd 3, the answer pipe's write end as fd 4."""

    def place() -> None:
        high_read, high_write = fcntl.fcntl(read_end, fcntl.F_DUPFD, 10), fcntl.fcntl(write_end, fcntl.F_DUPFD, 10)
        os.dup2(high_read, 3)  # the browser reads commands on fd 3
        os.dup2(high_write, 4)  # and writes its answers and events on fd 4

    return place


class Page:
    """A loaded tab and what it did."""

    def __init__(self, browser: Browser, session: str, url: str) -> None:
        self.browser, self.session, self.url = browser, session, url

    def settle(self) -> None:
        """Let the page run its scripts, then dismiss any dialog it opened (recorded as an event)."""
        self.evaluate("new Promise(done => setTimeout(done, 200))", wait=True)
        for event in self.events("Page.javascriptDialogOpening"):
            del event
            self.browser.send("Page.handleJavaScriptDialog", {"accept": False}, session=self.session)

    def events(self, method: str) -> list[dict[str, Any]]:
        return [e for e in self.browser.events if e.get("method") == method and e.get("sessionId") == self.session]

    def evaluate(self, expression: str, wait: bool = False) -> Any:
        result = self.browser.send(
            "Runtime.evaluate", {"expression": expression, "returnByValue": True, "awaitPromise": wait}, session=self.session
        )
        if "exceptionDetails" in result:
            raise BrowserError(f"{expression}: {result['exceptionDetails']}")
        return result["result"].get("value")

    def console_errors(self) -> list[str]:
        found = [
            " ".join(str(arg.get("value", arg.get("description", ""))) for arg in e["params"].get("args", []))
            for e in self.events("Runtime.consoleAPICalled")
            if e["params"].get("type") in ("error", "assert", "warning")
        ]
        found += [str(e["params"]["exceptionDetails"]) for e in self.events("Runtime.exceptionThrown")]
        found += [
            f"{e['params']['entry'].get('source')}: {e['params']['entry'].get('text')}"
            for e in self.events("Log.entryAdded")
            if e["params"]["entry"].get("level") in ("error", "warning")
        ]
        return found

    def requests(self) -> list[str]:
        """Every URL the page requested besides the page itself."""
        urls = [str(e["params"]["request"]["url"]) for e in self.events("Network.requestWillBeSent")]
        return [url for url in urls if url != self.url]

    def dialogs(self) -> list[str]:
        return [str(e["params"].get("message")) for e in self.events("Page.javascriptDialogOpening")]

    def click(self, selector: str) -> None:
        self.evaluate(f"document.querySelector({json.dumps(selector)}).click()")

    def screenshot(self, path: Path, full_page: bool = False) -> None:
        params: dict[str, Any] = {"format": "png"}
        if full_page:
            size = self.evaluate("[document.documentElement.scrollWidth, document.documentElement.scrollHeight]")
            params.update(captureBeyondViewport=True, clip={"x": 0, "y": 0, "width": size[0], "height": size[1], "scale": 1})
        data = self.browser.send("Page.captureScreenshot", params, session=self.session)["data"]
        path.write_bytes(base64.b64decode(data))

    def emulate_dark(self, dark: bool) -> None:
        self.browser.send(
            "Emulation.setEmulatedMedia",
            {"features": [{"name": "prefers-color-scheme", "value": "dark" if dark else "light"}]},
            session=self.session,
        )
        time.sleep(0)  # the next evaluate waits for the style recalculation
