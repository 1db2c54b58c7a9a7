"""Placeholders in scripted tool results (version 2): ``{{arguments.order_id}}`` (a value of
the call's arguments, ``{{arguments}}`` the whole object) and ``{{state.key}}`` (a value of the
scenario's declared key-value store). Pure functions, used by the contract reader (which
placeholders a value holds) and by the conversation (what a result becomes).

Substitution is inert: a placeholder is looked up, never evaluated; the text put in its place
is never read for placeholders again, so an agent's argument holding ``{{state.x}}`` stays
those characters. A string that is exactly one placeholder becomes the value itself (a number
stays a number); inside a longer string a value is its text (a string as it is, anything else
as compact JSON). A placeholder whose path leads nowhere leaves the result unresolved, never
an empty string: the attempt then stops, naming it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

# Any {{...}}: each must be one of the two forms below (the contract reader says which is not).
ANY_PLACEHOLDER = re.compile(r"\{\{(.*?)\}\}")
_FORM = re.compile(r"\s*(arguments|state)((?:\.[^.\[\]{}\s]+|\[\d+\])*)\s*")
_SEGMENT = re.compile(r"([^.\[\]]+)|\[(\d+)\]")


def field_steps(path: str) -> list[str | int]:
    """``items[0].status`` -> ["items", 0, "status"] (a bracketed index is an int; a plain
    segment stays text and indexes a list when it is all digits)."""
    return [key if key else int(index) for key, index in _SEGMENT.findall(path)]


class Unresolved(Exception):
    """A placeholder with nothing at its path (``text``: the placeholder as written)."""

    def __init__(self, text: str) -> None:
        super().__init__(text)
        self.text = text


def parsed(inner: str) -> tuple[str, list[str | int]] | None:
    """``arguments.a[0]`` -> ("arguments", ["a", 0]); None when it is not a placeholder form."""
    match = _FORM.fullmatch(inner)
    if match is None:
        return None
    path = match.group(2).removeprefix(".")
    return match.group(1), field_steps(path) if path else []


def placeholders(value: Any) -> list[str]:
    """The inside of every ``{{...}}`` in a JSON value's strings (keys included), in order."""
    if isinstance(value, str):
        return [match.group(1) for match in ANY_PLACEHOLDER.finditer(value)]
    if isinstance(value, dict):
        return [inner for key, item in value.items() for inner in (*placeholders(key), *placeholders(item))]
    if isinstance(value, list):
        return [inner for item in value for inner in placeholders(item)]
    return []


def _lookup(inner: str, arguments: Any, state: Mapping[str, Any]) -> Any:
    form = parsed(inner)
    if form is None:  # refused at load; never guessed at here
        raise Unresolved("{{" + inner + "}}")
    root, steps = form
    value: Any = arguments if root == "arguments" else dict(state)
    if root == "state" and not steps:
        raise Unresolved("{{" + inner + "}}")
    for step in steps:
        if isinstance(value, dict) and isinstance(step, str) and step in value:
            value = value[step]
        # isdecimal, not isdigit: "²" is a digit int() refuses.
        elif isinstance(value, list) and isinstance(step, int | str) and str(step).isdecimal() and int(step) < len(value):
            value = value[int(step)]
        else:
            raise Unresolved("{{" + inner + "}}")
    return value


def _text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def render(value: Any, arguments: Any, state: Mapping[str, Any]) -> Any:
    """``value`` with every placeholder filled from the call's ``arguments`` and ``state``;
    raises :class:`Unresolved` for one whose path leads nowhere."""
    if isinstance(value, str):
        whole = ANY_PLACEHOLDER.fullmatch(value)
        if whole is not None:
            return json.loads(json.dumps(_lookup(whole.group(1), arguments, state)))  # a copy, never shared
        return ANY_PLACEHOLDER.sub(lambda match: _text(_lookup(match.group(1), arguments, state)), value)
    if isinstance(value, dict):
        return {_text(render(key, arguments, state)): render(item, arguments, state) for key, item in value.items()}
    if isinstance(value, list):
        return [render(item, arguments, state) for item in value]
    return value
