"""Outputs written flat or more than once: the indexed ``prefix.N.rest`` attributes
(OpenInference, OpenLLMetry, LiteLLM's callback), and one model output that a span
writes in several ways at once (GenAI messages and the indexed attributes, say)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

_MAX_INDEX_DIGITS = 9


class UnreadableText(Exception):
    """Text in a span that no report can hold (observation files refuse it as well)."""


def group(flat: Mapping[str, Any], prefix: str) -> list[dict[str, Any]]:
    """Flattened ``prefix.N.rest`` keys as a list of ``{rest: value}``, in index order."""
    found: dict[int, dict[str, Any]] = {}
    start = prefix + "."
    for key, value in flat.items():
        if not key.startswith(start):
            continue
        index, _, rest = key[len(start) :].partition(".")
        if not index.isdigit() or not rest:
            continue
        if not index.isascii() or len(index) > _MAX_INDEX_DIGITS:  # '²' is a digit int() refuses; 5,000 digits too
            raise UnreadableText(
                f"attribute {prefix}.{index[:12]}{'…' if len(index) > 12 else ''}: not an index (1-9 ASCII digits)"
            )
        found.setdefault(int(index), {})[rest] = value
    return [found[index] for index in sorted(found)]


def one_output(ways: Sequence[tuple[int, Any]]) -> tuple[list[str], tuple[Any, ...]]:
    """The text and requested calls of outputs (``texts``, ``calls`` with a ``name``), each
    tagged with the way it was written: the longest text one way gives, and each tool's calls
    as many times as the way that lists it most (never the sum: one call, not two)."""
    by_way: dict[int, list[Any]] = {}
    for way, found in ways:
        by_way.setdefault(way, []).append(found)
    texts = max(
        ([t for found in outputs for t in found.texts] for outputs in by_way.values()), key=lambda t: len("".join(t)), default=[]
    )
    requested: list[Any] = []
    for outputs in by_way.values():
        had = Counter(call.name for call in requested)
        seen: Counter[str] = Counter()
        for call in (c for found in outputs for c in found.calls):  # in the order this way lists them
            seen[call.name] += 1
            if seen[call.name] > had[call.name]:
                requested.append(call)
    return texts, tuple(requested)
