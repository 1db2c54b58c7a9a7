"""httpx without its command-line tool: ``import httpx`` also imports ``httpx._main``
(click and pygments, then fails on rich, which is not installed, and falls back), about
half of httpx's import time, before a live run sends its first request. The modules
that use httpx import it from here, so whichever comes first imports it lean."""

from __future__ import annotations

import importlib
import sys


def _import_without_cli() -> None:
    if "httpx" in sys.modules or "httpx._main" in sys.modules:
        return
    # None in sys.modules makes ``from ._main import main`` raise ImportError, which httpx's
    # __init__ catches (its fallback ``main`` says the CLI's extras are not installed).
    sys.modules["httpx._main"] = None  # type: ignore[assignment]
    try:
        importlib.import_module("httpx")
    finally:
        if sys.modules.get("httpx._main", 0) is None:
            del sys.modules["httpx._main"]  # a later ``import httpx._main`` works as usual


_import_without_cli()

import httpx as httpx  # noqa: E402  (after the lean import above; re-exported for the modules using httpx)
