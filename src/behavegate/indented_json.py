"""``json.dumps(value, indent=2)``, byte for byte, at the C encoder's speed.

Why: with ``indent`` the standard library falls back to its pure-Python encoder
(generators, one call per value). For a version-2 suite of 10,000 scenarios the JSON
report and the run directory are millions of values, and that encoder was most of the
run (bench/bench_scale.py: about 10× slower than this). Here the C encoder writes the
text compactly and only whitespace is put back: every string, number and literal is
the standard library's own. msgspec's formatter (C) puts it back; it reads only JSON,
so text holding ``NaN``/``Infinity`` (which the standard library writes) goes through
the tokenizer below instead. tests/test_indented_json.py holds all three equal.
"""

from __future__ import annotations

import json
import re
from typing import Any

import msgspec

# Runs of strings and scalars, empty containers, and the structural characters
# that get a line break (or, for ":", a space).
_TOKEN = re.compile(r'(?:"(?:[^"\\]|\\.)*"|[^"\[\]{},:])+|[\[{][\]}]|[\[\]{},:]')
_INDENTS = ["\n" + "  " * depth for depth in range(64)]


def dumps(value: Any, *, sort_keys: bool = False, ensure_ascii: bool = True) -> str:
    """What ``json.dumps(value, indent=2, sort_keys=..., ensure_ascii=...)`` returns."""
    return indent(json.dumps(value, sort_keys=sort_keys, ensure_ascii=ensure_ascii, separators=(",", ":")))


def indent(compact: str) -> str:
    """Compact JSON text (the standard library's) as ``indent=2`` writes it."""
    try:
        return msgspec.json.format(compact, indent=2)
    except msgspec.DecodeError:  # NaN or Infinity: not JSON, but the standard library writes them
        return _indent_tokens(compact)


def _indent_tokens(compact: str) -> str:
    out: list[str] = []
    append = out.append
    indents = _INDENTS
    depth = 0
    for token in _TOKEN.findall(compact):
        first = token[0]
        if first == "{" or first == "[":
            if len(token) == 2:  # {} or []
                append(token)
                continue
            depth += 1
            if depth >= len(indents):
                indents = [*indents, *("\n" + "  " * d for d in range(len(indents), depth + 64))]
            append(token)
            append(indents[depth])
        elif first == "}" or first == "]":
            depth -= 1
            append(indents[depth])
            append(token)
        elif first == ",":
            append(",")
            append(indents[depth])
        elif first == ":":
            append(": ")
        else:
            append(token)
    return "".join(out)
