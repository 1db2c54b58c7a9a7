"""The files behavegate writes for CI: step outputs (``$GITHUB_OUTPUT``) and
appends to runner-provided files. The console is :mod:`behavegate.console`."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path


def _token() -> str:
    """A random hex token (os.urandom: the same source ``secrets`` uses, without its import cost)."""
    return os.urandom(16).hex()


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


def append_file(path: str | Path, text: str) -> None:
    with open(path, "a", encoding="utf-8", newline="") as handle:
        handle.write(text)
