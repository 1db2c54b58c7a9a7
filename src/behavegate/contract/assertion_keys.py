"""The assertions an expectation requests, by contract key: ``tools.required``
with two entries requests ``tools.required[0]`` and ``tools.required[1]``.

This is the contract's vocabulary of checks. The reader counts assertions with
it (the 250 / 5,000 caps, "expect must request something"); the judge's
registry (``judge/assertions.py``) pairs every key here with the function that
judges it, and a test keeps the two tables' keys equal.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from behavegate.model import Expectation

Requested = Callable[[Expectation], list[tuple[str, Any]]]


def _each(key: str, values: tuple[Any, ...]) -> list[tuple[str, Any]]:
    return [(f"{key}[{index}]", (index, value)) for index, value in enumerate(values)]


def _once(key: str, value: Any) -> list[tuple[str, Any]]:
    return [] if value is None else [(key, value)]


# In report order: version 1 first, then version 2.
REQUESTS: dict[str, Requested] = {
    "response.contains": lambda e: _each("response.contains", e.contains),
    "response.excludes": lambda e: _each("response.excludes", e.excludes),
    "tools.required": lambda e: _each("tools.required", e.required),
    "tools.allowed": lambda e: _once("tools.allowed", e.allowed),
    "tools.forbidden": lambda e: _each("tools.forbidden", e.forbidden),
    "tools.exact_sequence": lambda e: _once("tools.exact_sequence", e.exact_sequence),
    "tools.max_calls": lambda e: _once("tools.max_calls", e.max_calls),
    "refusal": lambda e: _once("refusal", e.refusal),
    "sources.required": lambda e: _each("sources.required", e.sources),
    "response.icontains": lambda e: _each("response.icontains", e.icontains),
    "response.matches": lambda e: _each("response.matches", e.matches),
    "response.not_matches": lambda e: _each("response.not_matches", e.not_matches),
    "tools.min_calls": lambda e: _once("tools.min_calls", e.min_calls),
    "tools.calls": lambda e: [(f"tools.calls.{c.name}", c) for c in e.calls],
    "tools.sequence": lambda e: _once("tools.sequence", e.sequence),
    "tools.set": lambda e: _once("tools.set", e.tool_set),
    "tools.arguments_valid": lambda e: _once("tools.arguments_valid", e.arguments_valid),
    "tools.known_only": lambda e: _once("tools.known_only", e.known_only),
    "tools.no_errors": lambda e: _once("tools.no_errors", e.no_errors),
    "steps.max": lambda e: _once("steps.max", e.max_steps),
    "latency.max_ms": lambda e: _once("latency.max_ms", e.max_latency_ms),
    "usage.max_total_tokens": lambda e: _once("usage.max_total_tokens", e.max_total_tokens),
    "safety.pii": lambda e: _each("safety.pii", e.pii),
    "safety.injection": lambda e: _once("safety.injection", e.injection),
    "response.uses_tool_result": lambda e: _each("response.uses_tool_result", e.uses_tool_result),
    "tools.no_repeat": lambda e: _once("tools.no_repeat", e.no_repeat),
    "turns.max": lambda e: _once("turns.max", e.max_model_turns),
    "response.judge": lambda e: _once("response.judge", e.judge),
}  # fmt: skip


def assertion_count(expect: Expectation) -> int:
    """How many assertions ``expect`` requests; kept on the (immutable) expectation, as the
    reader's cap and the shard partition both ask for every scenario's."""
    counted: int | None = expect.__dict__.get("_assertion_count")
    if counted is None:
        counted = sum(len(requested(expect)) for requested in REQUESTS.values())
        object.__setattr__(expect, "_assertion_count", counted)
    return counted


def requests_any(expect: Expectation) -> bool:
    """Does ``expect`` ask for anything? (Stops at the first key that does.)"""
    return any(requested(expect) for requested in REQUESTS.values())
