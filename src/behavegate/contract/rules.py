"""Scalar and shape rules shared by the contract and observation readers.

Each check either returns the cleaned value or raises ``Bad`` with one
skylos-worded problem. ``Collector.take`` records the problem and lets the
reader go on, so a user sees every problem at once while the first one stays
the one skylos reports.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Iterable, Iterator
from typing import Any, ParamSpec, TypeVar

from behavegate.errors import Problem
from behavegate.limits import INPUT_MAX_DEPTH, INPUT_MAX_TEXT, INPUT_MAX_VALUES
from behavegate.magnitude import in_range, shown

_SAFE_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,95}")
_TOOL_NAME = re.compile(r"[A-Za-z0-9_-]{1,64}")

T = TypeVar("T")
P = ParamSpec("P")


class Bad(Exception):
    def __init__(self, text: str, path: str = "", line: int | None = None, human: str = "") -> None:
        super().__init__(text)
        self.problem = Problem(text, path, line, human)

    @classmethod
    def of(cls, problem: Problem) -> Bad:
        return cls(problem.text, problem.path, problem.line, problem.human)


class Collector:
    def __init__(self) -> None:
        self.problems: list[Problem] = []

    def take(self, check: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> T | None:
        try:
            return check(*args, **kwargs)
        except Bad as bad:
            self.problems.append(bad.problem)
            return None

    def add(self, text: str, path: str = "", line: int | None = None) -> None:
        self.problems.append(Problem(text, path, line))

    def mark(self) -> int:
        return len(self.problems)

    def clean_since(self, mark: int) -> bool:
        return len(self.problems) == mark


def check_shape(value: Any, label: str, max_values: int = INPUT_MAX_VALUES) -> None:
    """Depth, value count and string length limits, walked as skylos walks them
    (``max_values``: skylos's cap, or version 2's for files of a version-2 run)."""
    count = 0
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if depth > INPUT_MAX_DEPTH:
            raise Bad(f"{label} nesting exceeds {INPUT_MAX_DEPTH}")
        count += 1
        if count > max_values:
            raise Bad(f"{label} exceeds {max_values} values")
        if isinstance(item, str):
            if len(item) > INPUT_MAX_TEXT:
                raise Bad(f"{label} contains an oversized string")
        elif isinstance(item, dict):
            children: list[tuple[Any, int]] = []
            for key, child in item.items():
                children.append((key, depth + 1))
                children.append((child, depth + 1))
            stack.extend(reversed(children))
        elif isinstance(item, list):
            # skylos walks lists as (index, value) pairs: indexes count as values
            pairs: list[tuple[Any, int]] = []
            for index, child in enumerate(item):
                pairs.append((index, depth + 1))
                pairs.append((child, depth + 1))
            stack.extend(reversed(pairs))


def surely_within(text: str, max_values: int, *, depth: int = 0, values: int = 0) -> bool:
    """True when the JSON value ``text`` decodes to is certainly within :func:`check_shape`'s
    limits, judged from the text alone (False: walk it). Every value, key and list index takes
    at least a character of its text, no string decodes longer than it is written, and nothing
    nests deeper than its brackets. ``depth``/``values``: what a wrapper around it adds."""
    return (
        len(text) + values <= max_values
        and len(text) <= INPUT_MAX_TEXT
        and text.count("[") + text.count("{") + depth <= INPUT_MAX_DEPTH
    )


def values_at_most(text: str) -> int:
    """At most the values (keys, values, list indexes) :func:`check_shape` counts in the JSON
    value ``text``, from its text alone: each container's members are at most its commas plus
    one, each member two values (a key or an index, and its value), the value itself one more.
    A comma or bracket inside a string only makes it larger (within 10% for observation entries)."""
    return 1 + 2 * (text.count(",") + text.count("[") + text.count("{"))


def mapping(value: Any, path: str, line: int | None = None, *, required: bool = False) -> dict[str, Any]:
    if value is None and not required:
        return {}
    if not isinstance(value, dict):
        raise Bad(f"{path} must be a mapping", path, line)
    if not all(isinstance(key, str) for key in value):
        raise Bad(f"{path} keys must be strings", path, line)
    return value


def json_mapping(value: Any, path: str, line: int | None = None) -> dict[str, Any]:
    raw = mapping(value, path, line, required=True)
    try:
        json.dumps(raw, allow_nan=False)
    except (TypeError, ValueError, RecursionError):
        raise Bad(f"{path} must contain JSON values", path, line) from None
    return dict(raw)


def listing(value: Any, path: str, line: int | None = None, *, required: bool = False) -> list[Any]:
    if value is None and not required:
        return []
    if not isinstance(value, list):
        raise Bad(f"{path} must be a list", path, line)
    return value


def text(value: Any, path: str, line: int | None = None) -> str:
    if not isinstance(value, str) or not value.strip():
        raise Bad(f"{path} must be a non-empty string", path, line)
    if len(value) > INPUT_MAX_TEXT:
        raise Bad(f"{path} exceeds {INPUT_MAX_TEXT} characters", path, line)
    return value.strip()


def optional_text(value: Any, path: str, line: int | None = None) -> str | None:
    return None if value is None else text(value, path, line)


def required_text(raw: dict[str, Any], key: str, path: str, line: int | None = None) -> str:
    if key not in raw:
        raise Bad(f"{path} is required", path, line)
    return text(raw[key], path, line)


def safe_id(value: Any, path: str, line: int | None = None) -> str:
    identifier = text(value, path, line)
    if not _SAFE_ID.fullmatch(identifier):
        raise Bad(f"{path} must use 1-96 letters, numbers, dots, underscores, or hyphens", path, line)
    return identifier


def tool_name(value: Any, path: str, line: int | None = None) -> str:
    name = text(value, path, line)
    if not _TOOL_NAME.fullmatch(name):
        raise Bad(f"{path} must use 1-64 letters, numbers, underscores, or hyphens", path, line)
    return name


def integer(value: Any, path: str, line: int | None = None) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise Bad(f"{path} must be an integer", path, line)
    return value


def number(value: Any, path: str, line: int | None = None) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise Bad(f"{path} must be a number", path, line)
    if isinstance(value, int) and not in_range(value):  # float() of it may overflow: checked as an integer
        raise Bad(f"{path} must be finite (got {shown(value)})", path, line)
    if not math.isfinite(value):
        raise Bad(f"{path} must be finite", path, line)
    return float(value)


def boolean(value: Any, path: str, line: int | None = None) -> bool:
    if not isinstance(value, bool):
        raise Bad(f"{path} must be true or false", path, line)
    return value


def did_you_mean(word: str, allowed: Iterable[str]) -> str:
    """ " (did you mean X?)" when one allowed key is close to ``word`` (difflib), else ""."""
    import difflib  # here: only a contract with an unknown key needs it

    close = difflib.get_close_matches(word, [str(key) for key in allowed], n=1, cutoff=0.6)
    return f" (did you mean {close[0]}?)" if close else ""


def unknown_key(where: str, key: Any, allowed: Iterable[str], line: int | None = None) -> Problem:
    """An unknown key at ``where`` in skylos's words; a person also reads the allowed key it is
    closest to, among the keys allowed at that place."""
    text = f"Unknown behavior contract key: {where}"
    hint = did_you_mean(str(key), allowed)
    return Problem(text, where, line, text + hint if hint else "")


def unknown_keys(raw: dict[str, Any], allowed: Iterable[str], prefix: str) -> list[str]:
    """Paths of keys not in ``allowed`` (in document order)."""
    known = set(allowed)
    return [f"{prefix}.{key}" if prefix else str(key) for key in raw if key not in known]


def unknown_record_keys(c: Collector, raw: dict[str, Any], allowed: Iterable[str], prefix: str) -> None:
    """An evidence record's unknown keys (skylos words observation-file keys as contract keys)."""
    allowed = tuple(allowed)
    for key in raw:
        if key not in allowed:
            c.problems.append(unknown_key(f"{prefix}.{key}" if prefix else str(key), key, allowed))


def records(c: Collector, items: Iterable[Any], path: str, allowed: Iterable[str]) -> Iterator[tuple[str, dict[str, Any]]]:
    """Each item of an evidence list that is a mapping, as ``(its path, it)``, its unknown keys
    reported; an item that is not a mapping is reported and skipped."""
    for index, item in enumerate(items):
        item_path = f"{path}[{index}]"
        record = c.take(mapping, item, item_path, required=True)
        if record is not None:
            unknown_record_keys(c, record, allowed, item_path)
            yield item_path, record


def duplicates(values: Iterable[str]) -> list[str]:
    seen: set[str] = set()
    repeated: set[str] = set()
    for value in values:
        if value in seen:
            repeated.add(value)
        seen.add(value)
    return sorted(repeated)
