"""Regular expressions a contract supplies (``response.matches``, tool-schema
``pattern``), checked before the ``regex`` engine that runs them compiles them.

Compiling is itself an attack surface: the engine unrolls bounded repeats, so
``(?:(?:a{1000}){1000}){3}`` (26 characters) allocates a gigabyte at load time,
before any search budget applies. A pattern whose repeats multiply past
``PATTERN_MAX_EXPANSION`` is refused with its line; searching is then bounded by
the per-attempt time budgets (``judge/user_regex.py``, ``judge/argument_schemas.py``).
"""

from __future__ import annotations

import functools
import re
from typing import Any

from behavegate.limits import PATTERN_MAX_EXPANSION

_BOUND = re.compile(r"\{(\d+)(?:,(\d*))?\}")


@functools.lru_cache(maxsize=1024)  # a golden set's rows repeat their patterns: checked once each (bounded)
def pattern_problem(text: str) -> str | None:
    """Why ``text`` cannot be used as a contract pattern, or None."""
    size = expansion(text)
    if size > PATTERN_MAX_EXPANSION:
        return f"its repeats expand to about {size:,} steps (at most {PATTERN_MAX_EXPANSION:,}); nest fewer counted repeats"
    import regex

    try:
        regex.compile(text)
    except regex.error as exc:
        return str(exc)
    return None


def expansion(text: str) -> int:
    """How far counted repeats multiply: each repeat's larger bound times what it repeats.

    Parsed with the standard library's parser, which reads the syntax both engines
    share; a pattern only ``regex`` reads gets the crude bound, the product of
    every count in it (never smaller than the real one)."""
    try:
        from re import _parser  # type: ignore[attr-defined]

        return _weight(_parser.parse(text), _parser)
    except (re.error, RecursionError, OverflowError, ValueError, TypeError):
        product = 1
        for low, high in _BOUND.findall(text):
            product *= max(int(low or 0), int(high or 0), 1)
            if product > PATTERN_MAX_EXPANSION:
                break
        return product


def _weight(items: Any, parser: Any) -> int:
    total = 0
    constants = parser  # the opcodes live beside the parser (re._constants, re-exported)
    for op, av in items:
        if op in (constants.MAX_REPEAT, constants.MIN_REPEAT, getattr(constants, "POSSESSIVE_REPEAT", None)):
            low, high, sub = av
            bound = low if high == constants.MAXREPEAT else max(low, high)
            total += max(bound, 1) * _weight(sub, parser)
        elif op == constants.SUBPATTERN:
            total += _weight(av[-1], parser)
        elif op == constants.BRANCH:
            total += sum(_weight(branch, parser) for branch in av[1])
        elif op in (constants.ASSERT, constants.ASSERT_NOT):
            total += _weight(av[1], parser)
        elif op == getattr(constants, "ATOMIC_GROUP", None):
            total += _weight(av, parser)
        elif op == constants.GROUPREF_EXISTS:
            total += _weight(av[1], parser) + (_weight(av[2], parser) if av[2] else 0)
        else:
            total += 1
        if total > PATTERN_MAX_EXPANSION:
            return total
    return total
