"""Argument matching and the distinct-call assignment for ``tools.required``."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from behavegate.model import RequiredCall, ToolCall


def is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def json_subset(expected: Any, observed: Any) -> bool:
    """Does ``observed`` contain ``expected``?

    Objects match partially (extra observed keys are fine), arrays position by
    position with equal length, numbers by value (1 == 1.0, never a bool), and
    everything else by type and value.
    """
    if isinstance(expected, dict):
        return isinstance(observed, dict) and all(
            key in observed and json_subset(value, observed[key]) for key, value in expected.items()
        )
    if isinstance(expected, list):
        return (
            isinstance(observed, list)
            and len(expected) == len(observed)
            and all(json_subset(e, o) for e, o in zip(expected, observed, strict=True))
        )
    if is_number(expected):
        return is_number(observed) and expected == observed
    return type(expected) is type(observed) and expected == observed


def call_matches(required: RequiredCall, call: ToolCall) -> bool:
    if call.name != required.name:
        return False
    if required.arguments is None:
        return True
    return call.arguments is not None and json_subset(required.arguments, call.arguments)


def assign_calls(required: Sequence[RequiredCall], calls: Sequence[ToolCall]) -> dict[int, int]:
    """Give each requirement its own call: requirement index -> call index.

    Maximum bipartite matching by augmenting paths (Kuhn), visiting the most
    constrained requirements first and candidate calls in call order. The
    exact visiting order matters: it decides which requirement is left without
    a call, and therefore whether it fails or is incomplete.
    """
    candidates: list[list[int]] = [
        [index for index, call in enumerate(calls) if call_matches(requirement, call)] for requirement in required
    ]
    owner: dict[int, int] = {}  # call index -> requirement index

    def augment(requirement: int, visited: set[int]) -> bool:
        for call in candidates[requirement]:
            if call in visited:
                continue
            visited.add(call)
            previous = owner.get(call)
            if previous is None or augment(previous, visited):
                owner[call] = requirement
                return True
        return False

    for requirement in sorted(range(len(required)), key=lambda index: len(candidates[index])):
        augment(requirement, set())
    return {requirement: call for call, requirement in owner.items()}


def unclaimed(name: str, calls: Sequence[ToolCall], claimed: Mapping[int, int]) -> list[int]:
    """Indices of calls named ``name`` that no requirement was given."""
    taken = set(claimed.values())
    return [index for index, call in enumerate(calls) if call.name == name and index not in taken]
