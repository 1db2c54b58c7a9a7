"""Numbers from outside (usage counts, latencies, trace times, prices, budgets) before any
arithmetic: how large they may be, and how a message shows one that is too large.

Python integers have no ceiling, but a float does (about 1.8e308: ``int * float`` past it
raises ``OverflowError``) and so does ``str(int)`` (4,300 digits: ``ValueError``), so a
count written by an agent, a trace exporter or a hand-edited file is checked here first
and a message never prints thousands of digits."""

from __future__ import annotations

import math
import sys

from behavegate.limits import MAX_EVIDENCE_QUANTITY

SHOWN_DIGITS = 24  # longer numbers are shown as "a 4,000-digit number"
_STR_DIGITS = sys.get_int_max_str_digits() or 4_300  # what int() and str() convert (0: unlimited)


def decimal_digits(value: int) -> int:
    """How many decimal digits ``abs(value)`` has, without ``str`` (which refuses past 4,300)."""
    magnitude = abs(value)
    if magnitude < 10:
        return 1
    estimate = int(magnitude.bit_length() * math.log10(2))  # exact or one short
    return estimate + 1 if magnitude >= 10**estimate else estimate


def shown(value: int | float | str) -> str:
    """A number as a message shows it: as written when short, "a 4,000-digit number" when not
    (``str`` is the number's text as written, e.g. a JSON literal not converted yet)."""
    if isinstance(value, float):
        return f"{value:g}"
    if isinstance(value, str):
        digits = sum(char.isdigit() for char in value)
        return value if len(value) <= SHOWN_DIGITS else f"a {digits:,}-digit number"
    count = decimal_digits(value)
    return str(value) if count <= SHOWN_DIGITS else f"a {count:,}-digit number"  # as written: skylos's words print it so


def in_range(value: int | float) -> bool:
    """Within ±MAX_EVIDENCE_QUANTITY (and finite): sums and products over a run stay finite floats."""
    if isinstance(value, float):
        return math.isfinite(value) and abs(value) <= MAX_EVIDENCE_QUANTITY
    return abs(value) <= MAX_EVIDENCE_QUANTITY


def quantity(value: object) -> int | None:
    """A non-negative count as reported (tokens, steps), or None: not an integer, negative
    or beyond MAX_EVIDENCE_QUANTITY is no count (unknown, never zero)."""
    if isinstance(value, bool) or not isinstance(value, int):
        return None
    return value if 0 <= value <= MAX_EVIDENCE_QUANTITY else None


def integer_text(text: str) -> int:
    """``int(text)`` for a JSON integer literal, refusing what ``int`` cannot convert with a
    short message (a ``parse_int`` hook: the file's own reader turns it into its error)."""
    if len(text.lstrip("-")) > _STR_DIGITS:
        raise ValueError(f"{shown(text)} is too long for an integer")
    return int(text)
