"""Argument subsets and the distinct-call assignment of tools.required."""

from __future__ import annotations

import itertools
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from behavegate.judge.matching import assign_calls, call_matches, json_subset
from behavegate.model import RequiredCall, ToolCall


def test_objects_match_partially_and_arrays_fully() -> None:
    assert json_subset({"a": 1}, {"a": 1, "b": 2})
    assert not json_subset({"a": [1]}, {"a": [1, 2]})
    assert json_subset([{"a": 1}], [{"a": 1, "z": 0}])
    assert not json_subset([1, 2], [2, 1])


def test_numbers_compare_by_value_but_never_as_booleans() -> None:
    assert json_subset(1, 1.0) and json_subset(2.0, 2)
    assert not json_subset(1, True) and not json_subset(True, 1) and not json_subset(1.0, True)
    assert not json_subset(10000000000000001, 10000000000000000)
    assert not json_subset(1, "1")


def test_null_matches_only_a_present_null() -> None:
    assert json_subset({"a": None}, {"a": None})
    assert not json_subset({"a": None}, {})
    assert not json_subset(None, 0)


def test_strings_are_not_normalised() -> None:
    assert not json_subset("12A", " 12A")


def test_requirement_with_arguments_needs_observed_arguments() -> None:
    assert not call_matches(RequiredCall("t", {}), ToolCall("t", None))
    assert call_matches(RequiredCall("t", {}), ToolCall("t", {"x": 1}))
    assert call_matches(RequiredCall("t"), ToolCall("t", None))


def test_augmenting_paths_beat_first_fit() -> None:
    required = [RequiredCall("t"), RequiredCall("t", {"seat": "12A"})]
    calls = [ToolCall("t", {"seat": "12A"}), ToolCall("t", {"seat": "30C"})]
    assert assign_calls(required, calls) == {0: 1, 1: 0}


def test_duplicate_requirements_need_distinct_calls() -> None:
    assert assign_calls([RequiredCall("t"), RequiredCall("t")], [ToolCall("t")]) == {0: 0}


json_leaf = st.one_of(st.none(), st.booleans(), st.integers(-3, 3), st.sampled_from([1.0, 2.5]), st.sampled_from(["a", "b"]))
json_value = st.recursive(
    json_leaf,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from("xyz"), inner, max_size=3),
    max_leaves=8,
)


@given(json_value)
def test_every_value_contains_itself(value: Any) -> None:
    assert json_subset(value, value)


names = st.sampled_from(["a", "b"])
arguments = st.one_of(st.none(), st.fixed_dictionaries({}, optional={"k": st.integers(0, 2)}))
requirements = st.lists(st.builds(RequiredCall, names, arguments), max_size=5)
calls_strategy = st.lists(st.builds(ToolCall, names, arguments), max_size=5)


def brute_force_maximum(required: list[RequiredCall], calls: list[ToolCall]) -> int:
    best = 0
    for size in range(min(len(required), len(calls)), 0, -1):
        for chosen in itertools.combinations(range(len(required)), size):
            for targets in itertools.permutations(range(len(calls)), size):
                if all(call_matches(required[r], calls[c]) for r, c in zip(chosen, targets, strict=True)):
                    return size
    return best


@settings(max_examples=300)
@given(requirements, calls_strategy)
def test_assignment_is_a_maximum_matching_of_distinct_matching_calls(required: list[RequiredCall], calls: list[ToolCall]) -> None:
    assignment = assign_calls(required, calls)
    assert len(set(assignment.values())) == len(assignment)
    assert all(call_matches(required[r], calls[c]) for r, c in assignment.items())
    assert len(assignment) == brute_force_maximum(required, calls)


# --- trajectories with calls requested together (trace evidence) ---------------------------------

NAMES = st.sampled_from(["a", "b", "c"])


def _plain_exact(reference: list[RequiredCall], calls: list[ToolCall]) -> bool:
    return len(reference) == len(calls) and all(call_matches(r, c) for r, c in zip(reference, calls, strict=True))


def _plain_in_order(reference: list[RequiredCall], calls: list[ToolCall]) -> bool:
    position = 0
    for call in calls:
        if position < len(reference) and call_matches(reference[position], call):
            position += 1
    return position == len(reference)


@given(st.lists(NAMES, max_size=5), st.lists(NAMES, max_size=5))
def test_without_groups_sequences_keep_their_strict_order(reference: list[str], observed: list[str]) -> None:
    from behavegate.judge import trajectory

    wanted, calls = [RequiredCall(n) for n in reference], [ToolCall(n) for n in observed]
    assert trajectory.exact(wanted, calls) == _plain_exact(wanted, calls)
    assert trajectory.in_order(wanted, calls) == _plain_in_order(wanted, calls)


@given(st.lists(NAMES, min_size=1, max_size=6), st.data())
def test_a_group_matches_in_any_of_its_orders_and_only_those(observed: list[str], data: st.DataObject) -> None:
    from behavegate.judge import trajectory

    calls = [ToolCall(n, group=0) for n in observed]  # one model turn asked for all of them
    order = data.draw(st.permutations(observed))
    assert trajectory.exact([RequiredCall(n) for n in order], calls)
    assert trajectory.in_order([RequiredCall(n) for n in order[:-1]], calls)
    assert not trajectory.exact([RequiredCall(n) for n in [*order[:-1], "z"]], calls)


def test_order_still_counts_between_turns() -> None:
    from behavegate.judge import trajectory

    calls = [ToolCall("a", group=0), ToolCall("b", group=0), ToolCall("c", group=1)]
    assert trajectory.exact([RequiredCall("b"), RequiredCall("a"), RequiredCall("c")], calls)
    assert not trajectory.exact([RequiredCall("c"), RequiredCall("a"), RequiredCall("b")], calls)
    assert trajectory.in_order([RequiredCall("b"), RequiredCall("c")], calls)
    assert not trajectory.in_order([RequiredCall("c"), RequiredCall("a")], calls)
