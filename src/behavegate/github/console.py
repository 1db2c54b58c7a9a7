"""The one output boundary: every byte behavegate writes to stdout or stderr.

The Actions runner executes a log line as a workflow command when, after
``TrimStart()``, it starts with ``::``, and it runs the legacy ``##[cmd]``
form found *anywhere* in a line. Log viewers and Python also split lines on
more than LF. So whatever its origin (agent text, contract text, file keys,
error messages, exception texts, argparse's usage errors, warnings), text
reaches the console only through :class:`Console`, which

* shows every line separator but LF (CR, VT, FF, FS/GS/RS, NEL, U+2028/2029)
  as an escape, so LF is the only way a line ends;
* prefixes ``| `` to any line that would start with ``::`` after whitespace;
* writes ``##[`` as ``##\\[`` wherever it occurs;
* and, inside GitHub Actions, wraps untrusted text in
  ``::stop-commands::<random token>`` … ``::<token>::`` as well.

JSON documents keep their meaning: the same characters are written as JSON
escapes (``\\u0023`` for ``#``, ``\\u2028`` …), which every JSON reader decodes
back. Our own workflow commands (annotations, ``add-mask``) go through
:meth:`Console.commands`, which checks each is one well-formed command line.

A test fails if any other module calls ``print`` or touches ``sys.stdout`` /
``sys.stderr``.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import re
import sys
from collections.abc import Iterable, Iterator, Mapping
from typing import Any, NoReturn, TextIO

from behavegate.text import LEGACY_COMMAND, SEPARATOR, neutralize, neutralize_json, workflow_escaped


def in_actions(environ: Mapping[str, str] | None = None) -> bool:
    return (environ if environ is not None else os.environ).get("GITHUB_ACTIONS") == "true"


def _token() -> str:
    """A random hex token (os.urandom: the source ``secrets`` uses, without its import)."""
    return os.urandom(16).hex()


_OUR_COMMAND = re.compile(r"::(error|warning|notice|add-mask|group|endgroup)( [^:\n]*)?::[^\n]*")


class Console:
    """stdout and stderr behind the one boundary (streams default to the process's)."""

    def __init__(
        self, stdout: TextIO | None = None, stderr: TextIO | None = None, environ: Mapping[str, str] | None = None
    ) -> None:
        self._stdout = stdout if stdout is not None else sys.stdout
        self._stderr = stderr if stderr is not None else (sys.stderr or _nowhere())  # None: descriptor 2 was closed
        self._actions = in_actions(environ)

    @property
    def interactive(self) -> bool:
        """A person at a terminal (not CI): live progress lines are welcome."""
        try:
            return self._stderr.isatty() and os.environ.get("CI", "").lower() not in {"true", "1"}
        except (AttributeError, ValueError):
            return False

    def out(self, text: str) -> None:
        """Untrusted text on stdout."""
        self._untrusted(self._stdout, text)

    def err(self, text: str) -> None:
        """Untrusted text on stderr."""
        self._untrusted(self._stderr, text)

    def json(self, text: str | Iterable[str]) -> None:
        """A JSON document on stdout, inert and still the same JSON. In pieces (a large
        report), each piece is neutralized on its own: none splits a JSON string, and
        what neutralize_json changes only occurs inside one."""
        if isinstance(text, str):
            self._write(self._stdout, neutralize_json(text).rstrip("\n") + "\n")
            return
        for piece in text:
            self._write(self._stdout, neutralize_json(piece), flush=False)
        self._write(self._stdout, "\n")

    def status_line(self, text: str) -> None:
        """An interactive progress line that redraws itself (terminals only)."""
        self._write(self._stderr, "\r\x1b[2K" + neutralize(text).replace("\n", " "))

    def end_status_line(self) -> None:
        self._write(self._stderr, "\n")

    def mask(self, secret: str) -> None:
        """``::add-mask::`` for a secret: the runner hides exactly the data it unescapes,
        so the value is escaped only as it unescapes (``%``, CR, LF), never neutralised:
        a neutralised copy would mask some other string and leave the secret shown."""
        self._write(self._stdout, f"::add-mask::{workflow_escaped(secret)}\n")

    def commands(self, lines: Iterable[str], *, stderr: bool = False) -> None:
        """Our own workflow commands, each already escaped (see render.annotations).
        ``stderr``: when stdout carries a JSON document; the runner reads workflow
        commands from both streams."""
        text = "\n".join(line for line in lines if line)
        if not text:
            return
        for line in text.split("\n"):
            if SEPARATOR.search(line) or LEGACY_COMMAND in line or not _OUR_COMMAND.fullmatch(line):
                raise ValueError(f"not one of behavegate's workflow commands: {neutralize(line)[:200]!r}")
        self._write(self._stderr if stderr else self._stdout, text + "\n")

    @contextlib.contextmanager
    def capturing_library_output(self) -> Iterator[None]:
        """Route what libraries would print on their own (warnings, logging's
        last-resort handler, uncaught thread exceptions) through this boundary.

        ``logging`` and ``threading`` are patched only when already imported (an
        offline run never needs them; importing them costs every run). A command that
        brings them in (live mode, with httpx) enters this again around that work."""
        import warnings

        console = self
        logging: Any = sys.modules.get("logging")
        threading: Any = sys.modules.get("threading")

        def show_warning(message: Warning | str, category: type[Warning], *_: object, **__: object) -> None:
            console.err(f"behavegate: warning: {category.__name__}: {message}")

        saved_warning = warnings.showwarning
        warnings.showwarning = show_warning
        saved_last_resort = saved_excepthook = None
        if logging is not None:
            handler = logging.Handler(logging.WARNING)
            handler.emit = lambda record: console.err(f"behavegate: {record.levelname.lower()}: {record.getMessage()}")
            saved_last_resort = logging.lastResort
            logging.lastResort = handler
        if threading is not None:

            def thread_exception(info: Any) -> None:
                console.err(f"behavegate: internal error in a thread: {info.exc_type.__name__}: {info.exc_value}")

            saved_excepthook = threading.excepthook
            threading.excepthook = thread_exception
        try:
            yield
        finally:
            warnings.showwarning = saved_warning
            if logging is not None:
                logging.lastResort = saved_last_resort
            if threading is not None:
                threading.excepthook = saved_excepthook

    def _untrusted(self, stream: TextIO, text: str) -> None:
        body = neutralize(text)
        if not body.endswith("\n"):
            body += "\n"
        if self._actions:
            token = _token()
            body = f"::stop-commands::{token}\n{body}::{token}::\n"
        self._write(stream, body)

    def _write(self, stream: TextIO, text: str, *, flush: bool = True) -> None:
        try:
            try:
                stream.write(text)
            except UnicodeEncodeError:
                # A console that cannot encode a character (a lone surrogate, or a
                # non-UTF-8 locale) still gets every line, with escapes.
                stream.write(text.encode("ascii", "backslashreplace").decode("ascii"))
            if flush:
                stream.flush()
        except (OSError, ValueError):
            if stream is not self._stderr:
                raise
            # A stderr nobody reads (a closed pipe or descriptor): the run, its report and its
            # exit status go on without the diagnostics, never failed by them.
            self._stderr = _nowhere(stream)


def _nowhere(gone: TextIO | None = None) -> TextIO:
    """A stream that takes text and keeps none. The process's own stderr is pointed there
    too, so the interpreter's last flush of what the pipe refused succeeds at exit."""
    if gone is not None and gone is sys.__stderr__:
        with contextlib.suppress(OSError):
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, 2)
            os.close(devnull)
    return open(os.devnull, "w", encoding="utf-8")  # lives as long as the console


class ParserExit(Exception):
    """argparse wanted to exit (help, version, a usage error): the exit code."""

    def __init__(self, code: int, message: str = "") -> None:
        super().__init__(code)
        self.code = code
        self.message = message  # a usage error's own words, without the usage lines


class ArgumentParser(argparse.ArgumentParser):
    """argparse, with its help and usage errors written through the output boundary
    (a usage error repeats the offending value, which may be anything)."""

    def __init__(self, *args: Any, console: Console | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.console = console or Console()

    def _print_message(self, message: str, file: Any = None) -> None:
        if message:
            self.console.out(message)

    def exit(self, status: int = 0, message: str | None = None) -> NoReturn:
        if message:
            self.console.err(message)
        raise ParserExit(status)

    def error(self, message: str) -> NoReturn:
        self.console.err(f"{self.format_usage()}{self.prog}: error: {message}")
        raise ParserExit(2, message)  # a usage error: the run could not be judged
