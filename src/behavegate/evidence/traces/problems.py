"""What the readers share: the problems of one file, each with its line, and one span
decoded with its failure recorded instead of raised."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ParamSpec

from behavegate.errors import Problem, TraceError
from behavegate.evidence.traces.spans import Keep, Span, SpanShapeError, otlp_resource
from behavegate.limits import TRACE_MAX_PROBLEMS

P = ParamSpec("P")


class Problems:
    """Problems of one file, each with its line; reading goes on until there are too many."""

    def __init__(self, where: str) -> None:
        self.where = where
        self.found: list[Problem] = []

    def add(self, message: str, line: int | None) -> None:
        self.found.append(Problem(message, self.where, line))
        if len(self.found) >= TRACE_MAX_PROBLEMS:
            self.raise_found(more=True)

    def raise_found(self, more: bool = False) -> None:
        if self.found:
            problems = list(self.found)
            if more:
                problems.append(Problem(f"stopped reading after {len(problems)} problems", self.where))
            raise TraceError(problems)


def decode_span(problems: Problems, line: int | None, make: Callable[P, Span], *args: P.args, **kwargs: P.kwargs) -> Span | None:
    try:
        return make(*args, **kwargs)
    except (SpanShapeError, TypeError, ValueError, AttributeError, RecursionError) as exc:
        problems.add(f"unreadable span: {exc or type(exc).__name__}", line)
        return None


def decode_resource(problems: Problems, line: int | None, raw: Any, keep: Keep) -> dict[str, Any]:
    """A resource's attributes; one that cannot be read is a problem of the file, never a crash."""
    try:
        return otlp_resource(raw, keep)
    except (SpanShapeError, TypeError, ValueError, AttributeError, RecursionError) as exc:
        problems.add(f"unreadable resource: {exc or type(exc).__name__}", line)
        return {}
