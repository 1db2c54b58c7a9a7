"""Trajectory matching for ``tools.sequence`` (LangChain agentevals semantics).

A reference call matches an observed call when the names are equal and the
reference's arguments (if any) are a JSON subset of the observed ones.

* ``exact``: same length, position by position;
* ``in_order``: the reference is an ordered subsequence of the calls (gaps allowed);
* ``unordered``: the same calls in any order (a perfect one-to-one matching);
* ``subset``: every observed call is matched by its own reference call;
* ``superset``: every reference call is matched by its own observed call.

Calls one model step requested together (``ToolCall.group``, from trace
evidence) ran in parallel: their order is noise, so ``exact`` and ``in_order``
match them in any order among themselves.
"""

from __future__ import annotations

from collections.abc import Sequence

from behavegate.judge.matching import assign_calls, call_matches
from behavegate.model import RequiredCall, ToolCall


def blocks(calls: Sequence[ToolCall]) -> list[list[ToolCall]]:
    """The calls in runs: each run one call, or consecutive calls of one parallel group."""
    runs: list[list[ToolCall]] = []
    for call in calls:
        if runs and call.group is not None and runs[-1][-1].group == call.group:
            runs[-1].append(call)
        else:
            runs.append([call])
    return runs


def _all_matched(reference: Sequence[RequiredCall], calls: Sequence[ToolCall]) -> bool:
    return len(reference) == len(calls) and len(assign_calls(reference, calls)) == len(calls)


def exact(reference: Sequence[RequiredCall], calls: Sequence[ToolCall]) -> bool:
    if len(reference) != len(calls):
        return False
    position = 0
    for run in blocks(calls):
        if not _all_matched(reference[position : position + len(run)], run):
            return False
        position += len(run)
    return True


def in_order(reference: Sequence[RequiredCall], calls: Sequence[ToolCall]) -> bool:
    position = 0
    for run in blocks(calls):
        if len(run) == 1:
            if position < len(reference) and call_matches(reference[position], run[0]):
                position += 1
            continue
        # A parallel run takes the longest next stretch of the reference it can match in any order
        # (taking more now never leaves less for later runs).
        for size in range(min(len(run), len(reference) - position), 0, -1):
            if len(assign_calls(reference[position : position + size], run)) == size:
                position += size
                break
    return position == len(reference)


def matches(mode: str, reference: Sequence[RequiredCall], calls: Sequence[ToolCall]) -> bool:
    if mode == "exact":
        return exact(reference, calls)
    if mode == "in_order":
        return in_order(reference, calls)
    matched = len(assign_calls(reference, calls))
    if mode == "unordered":
        return matched == len(reference) == len(calls)
    if mode == "subset":
        return matched == len(calls)
    if mode == "superset":
        return matched == len(reference)
    raise ValueError(f"unknown sequence mode {mode!r}")
