"""JSON read from outside (agents' and judges' HTTP replies, JSON text in trace
attributes and scripted tool results, shard and baseline reports; observation files
check it themselves, in skylos's words): what ``json.loads`` reads, but no ``NaN``, no
``Infinity`` and no number too large for a float (``1e400``, which Python reads as
infinity). JSON has no such values, the evidence digests cannot encode them, and
nothing inside behavegate can make one, so every value a report shows is finite
(``canonical_json`` relies on it)."""

from __future__ import annotations

import json
import math
from typing import Any

import msgspec

from behavegate.magnitude import integer_text


def loads(text: str | bytes, **hooks: Any) -> Any:
    """``json.loads(text, **hooks)``; raises ValueError on a non-finite number, and in a
    short message on an integer too long to convert (``int`` refuses past 4,300 digits)."""
    return json.loads(text, parse_constant=_constant, parse_float=_finite, **{"parse_int": integer_text, **hooks})


def loads_document(text: str | bytes) -> Any:
    """:func:`loads` of a whole report (shard, baseline): msgspec reads it, 3x faster
    at tens of MB, and refuses what :func:`loads` refuses and a lone surrogate escape.
    On a refusal the standard library reads it again for its message, which says where."""
    try:
        return msgspec.json.decode(text)
    except msgspec.DecodeError as refused:
        loads(text)  # raises, saying where
        raise ValueError(f"{refused} (an unpaired surrogate escape, which no UTF-8 text can carry?)") from None


def _constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _finite(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"{text[:40]} is too large for a number")
    return value
