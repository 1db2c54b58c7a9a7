"""Everything behavegate writes for CI: step outputs, the step summary, and
stdout/stderr made safe from workflow-command injection.

The Actions runner executes any log line that (after leading whitespace)
starts with ``::`` or the legacy ``##[``; a carriage return also starts a new
line for it. Output derived from agents is therefore written between
``::stop-commands::<random token>`` and ``::<token>::`` when running in
Actions, and no such line ever starts a line of ours anyway.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import TextIO

_COMMAND_LIKE = re.compile(r"^(\s*)(::|##\[)", re.M)


def _token() -> str:
    """A random hex token (os.urandom: the same source ``secrets`` uses, without its import cost)."""
    return os.urandom(16).hex()


def neutralize(text: str) -> str:
    """No line may act as a workflow command: CRs shown, command-like lines prefixed."""
    text = text.replace("\r\n", "\n").replace("\r", "\\r")
    return _COMMAND_LIKE.sub(lambda m: f"{m.group(1)}| {m.group(2)}", text)


def in_actions(environ: Mapping[str, str] | None = None) -> bool:
    return (environ if environ is not None else os.environ).get("GITHUB_ACTIONS") == "true"


def write_untrusted(stream: TextIO, text: str, *, environ: Mapping[str, str] | None = None) -> None:
    """Write text that may contain agent-influenced content."""
    body = neutralize(text)
    if not body.endswith("\n"):
        body += "\n"
    if in_actions(environ):
        token = _token()
        stream.write(f"::stop-commands::{token}\n{body}::{token}::\n")
    else:
        stream.write(body)
    stream.flush()


def write_commands(stream: TextIO, commands: str) -> None:
    """Our own workflow commands (annotations), already escaped."""
    if commands:
        stream.write(commands + "\n")
        stream.flush()


def output_block(values: Mapping[str, str]) -> str:
    """``$GITHUB_OUTPUT`` text: ``name=value`` lines, heredocs for multi-line values
    with a random delimiter that appears nowhere in the value."""
    parts = []
    for name, value in values.items():
        if "\n" not in value and "\r" not in value:
            parts.append(f"{name}={value}\n")
            continue
        delimiter = f"ghadelimiter_{_token()}"
        while delimiter in value:
            delimiter = f"ghadelimiter_{_token()}"
        parts.append(f"{name}<<{delimiter}\n{value}\n{delimiter}\n")
    return "".join(parts)


def append_file(path: str | Path, text: str, root: Path | None = None) -> None:
    """Append to a step-output file through the one writer (``files.write_file``):
    never through a symlink, a regular file only."""
    from .files import place_output, write_file

    cwd = Path.cwd()
    write_file(place_output(path, root or cwd, "--github-output", os.environ, cwd, append=True), text, "--github-output")
