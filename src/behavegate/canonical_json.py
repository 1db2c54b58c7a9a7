"""Canonical JSON text: ``json.dumps(value, allow_nan=False, ensure_ascii=False,
separators=(",", ":"), sort_keys=True)``, byte for byte, mostly at msgspec's speed.

Why: the evidence digests (skylos's bytes) and the JSON report are this text, and a
10,000-scenario report is ~100 MB of it. The standard library's C encoder, sorting
every mapping's keys, was most of building a report (bench/bench_scale.py,
bench/bench_merge.py); msgspec writes the same text about 8x faster.

msgspec writes the same strings, integers, literals and key order, but not the same
floats where ``repr`` uses an exponent (``1e+16``, ``1e-05``): msgspec writes ``1e16``
and ``0.00001``. Such a float is a number token with an ``e`` or starting ``0.0000``, and
any text holding one (or a string that merely looks like one, after a ``:``, ``,`` or
``[``) is written again by the standard library. A quick test finds the texts that might
(a digit before an ``e``, or ``0.0000``: hex ids and digests have the first) and a
pattern over number tokens decides. So is any value msgspec refuses (a non-string key,
a lone surrogate) and the standard library decides, raising as it always did.
NaN and infinities, which msgspec would write as ``null`` where the standard library
raises, do not get here: the readers of evidence refuse them (agents' and judges'
replies, JSON text in trace attributes and scripted tool results, shard and baseline
reports through
``finite_json``; observation files in skylos's words), and nothing computed is
unbounded. tests/test_canonical_json.py pins those readers.
"""

from __future__ import annotations

import json
import re
from typing import Any

import msgspec

_STANDARD = json.JSONEncoder(allow_nan=False, ensure_ascii=False, separators=(",", ":"), sort_keys=True)
_FAST = msgspec.json.Encoder(order="sorted")
_DIGITS_AS_ZERO = bytes.maketrans(b"123456789", b"000000000")
# A number token (compact JSON: after the start, ":", "," or "[") that msgspec writes
# unlike ``repr``: with an exponent, or as 0.0000... where repr has one.
_REPR_DIFFERS = re.compile(rb"(?:^|[:,\[])-?(?:[0-9]+(?:\.[0-9]+)?[eE]|0\.0000)")


def canonical_text(value: Any) -> str:
    """``value`` as canonical JSON text (see the module's docstring)."""
    data = _fast(value)
    return _STANDARD.encode(value) if data is None else data.decode("utf-8")


def canonical_bytes(value: Any) -> bytes:
    """:func:`canonical_text` as UTF-8."""
    data = _fast(value)
    return _STANDARD.encode(value).encode("utf-8") if data is None else data


def _fast(value: Any) -> bytes | None:
    """msgspec's text, or None where the standard library's may differ."""
    try:
        data = _FAST.encode(value)
    except (TypeError, ValueError, OverflowError, UnicodeError):
        return None
    if (b"0.0000" in data or b"0e" in data.translate(_DIGITS_AS_ZERO)) and _REPR_DIFFERS.search(data):
        return None
    return data
