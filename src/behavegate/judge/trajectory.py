"""Trajectory matching for ``tools.sequence`` (LangChain agentevals semantics).

A reference call matches an observed call when the names are equal and the
reference's arguments (if any) are a JSON subset of the observed ones.

* ``exact``: same length, position by position;
* ``in_order``: the reference is an ordered subsequence of the calls (gaps allowed);
* ``unordered``: the same calls in any order (a perfect one-to-one matching);
* ``subset``: every observed call is matched by its own reference call;
* ``superset``: every reference call is matched by its own observed call.
"""

from __future__ import annotations

from collections.abc import Sequence

from behavegate.judge.matching import assign_calls, call_matches
from behavegate.model import RequiredCall, ToolCall


def matches(mode: str, reference: Sequence[RequiredCall], calls: Sequence[ToolCall]) -> bool:
    if mode == "exact":
        return len(reference) == len(calls) and all(call_matches(r, c) for r, c in zip(reference, calls, strict=True))
    if mode == "in_order":
        position = 0
        for call in calls:
            if position < len(reference) and call_matches(reference[position], call):
                position += 1
        return position == len(reference)
    matched = len(assign_calls(reference, calls))
    if mode == "unordered":
        return matched == len(reference) == len(calls)
    if mode == "subset":
        return matched == len(calls)
    if mode == "superset":
        return matched == len(reference)
    raise ValueError(f"unknown sequence mode {mode!r}")
