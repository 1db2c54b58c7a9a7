"""Argument matching and the distinct-call assignment for ``tools.required``."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from behavegate.contract.subset import is_number, json_subset
from behavegate.model import RequiredCall, ToolCall

__all__ = ["assign_calls", "call_matches", "is_number", "json_subset", "unclaimed"]


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
