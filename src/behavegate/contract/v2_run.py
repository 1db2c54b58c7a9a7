"""Version-2 keys about how a scenario is run and gated: ``sequential`` (a
scenario's or ``defaults``') and ``gates.by_tag``. Each check returns the
model value or raises ``Bad`` with the YAML path and line."""

from __future__ import annotations

from typing import Any

from behavegate.contract import rules as f
from behavegate.model import SequentialSpec, TagGate

SEQUENTIAL_KEYS = ("false_fail", "missed_drop", "margin")
TAG_GATE_KEYS = ("min_pass_rate", "min_score")


def error_rate(value: Any, path: str, line: int | None = None) -> float:
    number = f.number(value, path, line)
    if not 0 < number < 0.5:
        raise f.Bad(f"{path} must be greater than 0 and less than 0.5", path, line)
    return number


def _rate(value: Any, path: str, line: int | None) -> float:
    number = f.number(value, path, line)
    if not 0 <= number <= 1:
        raise f.Bad(f"{path} must be between 0 and 1", path, line)
    return number + 0.0  # -0.0 is 0.0: no view prints "-0.0%"


def sequential(value: Any, path: str, line: int | None, key_lines: Any = None) -> SequentialSpec | bool:
    """``sequential: true`` (the default design), ``false``, or a mapping of
    ``false_fail``, ``missed_drop`` and ``margin``. ``key_lines(raw, key)``: the
    line of a key in the mapping."""
    if isinstance(value, bool):
        return SequentialSpec() if value else False
    if not isinstance(value, dict):
        raise f.Bad(f"{path} must be true, false or a mapping of {list(SEQUENTIAL_KEYS)}", path, line)
    for key in value:
        if key not in SEQUENTIAL_KEYS:
            where = f"{path}.{key}"
            raise f.Bad.of(f.unknown_key(where, key, SEQUENTIAL_KEYS, key_lines(value, key) if key_lines else line))
    found = {}
    for key in SEQUENTIAL_KEYS:
        if key in value:
            found[key] = error_rate(value[key], f"{path}.{key}", key_lines(value, key) if key_lines else line)
    return SequentialSpec(**found)


def tag_gates(value: Any, path: str, line: int | None, key_lines: Any) -> tuple[TagGate, ...]:
    """``by_tag: {TAG: {min_pass_rate, min_score}}``."""
    block = f.mapping(value, path, line, required=True)
    found = []
    for tag, spec in block.items():
        where, at = f"{path}.{tag}", key_lines(block, tag) or line
        f.safe_id(tag, where, at)
        rules = f.mapping(spec, where, at, required=True)
        for key in rules:
            if key not in TAG_GATE_KEYS:
                raise f.Bad.of(f.unknown_key(f"{where}.{key}", key, TAG_GATE_KEYS, key_lines(rules, key) or at))
        if not rules:
            raise f.Bad(f"{where} needs min_pass_rate or min_score", where, at)
        limits = {key: _rate(rules[key], f"{where}.{key}", key_lines(rules, key) or at) for key in rules}
        found.append(TagGate(tag, **limits))
    return tuple(found)


def gate_tag_option(value: str) -> TagGate:
    """``--gate-tag TAG=RATE``: raises ValueError with the problem."""
    tag, sep, rate = value.partition("=")
    if not sep or not tag.strip():
        raise ValueError(f"--gate-tag takes TAG=RATE, got {value!r}")
    try:
        f.safe_id(tag.strip(), "--gate-tag TAG")
        number = _rate(float(rate), "--gate-tag RATE", None)
    except f.Bad as bad:
        raise ValueError(bad.problem.text) from None
    except ValueError:
        raise ValueError(f"--gate-tag RATE must be a number between 0 and 1, got {rate!r}") from None
    return TagGate(tag.strip(), min_pass_rate=number)
