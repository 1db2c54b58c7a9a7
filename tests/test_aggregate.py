"""Repeated runs: the aggregation rule, Wilson intervals and trajectory modes,
checked against brute-force references for every input."""

from __future__ import annotations

import itertools
import math
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from behavegate.judge import aggregate, trajectory
from behavegate.judge.matching import call_matches
from behavegate.model import RequiredCall, ToolCall

statuses = st.lists(st.sampled_from(["pass", "fail", "incomplete"]), min_size=1, max_size=30)
rates = st.sampled_from([0.0, 0.1, 0.25, 0.5, 0.7, 0.75, 0.8, 0.9, 0.95, 1.0]) | st.floats(0, 1)


@settings(max_examples=500)
@given(statuses, rates)
def test_never_pass_below_the_threshold_never_fail_while_it_is_reachable(outcomes: list[Any], rate: float) -> None:
    n = len(outcomes)
    p, i = outcomes.count("pass"), outcomes.count("incomplete")
    k = math.ceil(rate * n - 1e-9)
    verdict = aggregate.scenario_status(outcomes, n, rate)
    if verdict == "pass":
        assert p >= k
    if verdict == "fail":
        assert p + i < k  # even if every incomplete attempt had passed
    if verdict == "incomplete":  # or nothing was observed: evidence is required
        assert p < k <= p + i or p + outcomes.count("fail") == 0


@given(statuses)
def test_one_run_at_full_rate_is_the_version_1_rule(outcomes: list[Any]) -> None:
    single = outcomes[:1]
    assert aggregate.scenario_status(single, 1, 1.0) == single[0]


def test_a_scenario_never_observed_is_incomplete_whatever_its_threshold() -> None:
    assert aggregate.scenario_status([], 3, 0.0) == "incomplete"
    assert aggregate.scenario_status(["incomplete"] * 3, 3, 0.0) == "incomplete"
    assert aggregate.scenario_status(["fail"], 3, 0.0) == "pass"  # observed: the threshold decides


def test_missing_attempts_count_as_incomplete() -> None:
    assert aggregate.scenario_status(["pass", "pass"], 4, 0.75) == "incomplete"
    assert aggregate.scenario_status(["fail", "fail"], 4, 0.75) == "fail"


@given(st.integers(0, 200), st.integers(1, 200))
def test_wilson_interval_contains_the_rate_and_stays_in_bounds(p: int, n: int) -> None:
    p = min(p, n)
    low, high = aggregate.wilson(p, n)
    assert 0 <= low <= p / n <= high <= 1


def test_wilson_matches_known_values() -> None:
    low, high = aggregate.wilson(8, 8)
    assert round(low, 3) == 0.676 and high == 1.0
    low, high = aggregate.wilson(5, 10)
    assert (round(low, 3), round(high, 3)) == (0.237, 0.763)


def test_lower_bound_gate_needs_more_evidence_than_the_raw_rate() -> None:
    assert aggregate.scenario_status(["pass"] * 8, 8, 0.8, "rate") == "pass"
    assert aggregate.scenario_status(["pass"] * 8, 8, 0.8, "lower_bound") == "fail"
    assert aggregate.scenario_status(["pass"] * 40, 40, 0.9, "lower_bound") == "pass"


@settings(max_examples=300)
@given(statuses, rates, st.sampled_from(["rate", "lower_bound"]))
def test_more_passes_never_make_a_verdict_worse(outcomes: list[Any], rate: float, gate: str) -> None:
    order = {"fail": 0, "incomplete": 1, "pass": 2}
    before = aggregate.scenario_status(outcomes, len(outcomes), rate, gate)
    if "fail" in outcomes:
        better = list(outcomes)
        better[better.index("fail")] = "pass"
        assert order[aggregate.scenario_status(better, len(better), rate, gate)] >= order[before]


# --- trajectory modes against brute force ----------------------------------------------------

names = st.sampled_from(["a", "b", "c"])
args = st.one_of(st.none(), st.fixed_dictionaries({}, optional={"k": st.integers(0, 1)}))
references = st.lists(st.builds(RequiredCall, names, args), max_size=4)
observed = st.lists(st.builds(ToolCall, names, st.fixed_dictionaries({}, optional={"k": st.integers(0, 1)})), max_size=4)


def brute(mode: str, ref: list[RequiredCall], calls: list[ToolCall]) -> bool:
    def injective(left: list[Any], right: list[Any], match: Any) -> bool:
        """Can every item of ``left`` get its own matching item of ``right``?"""
        return any(
            all(match(left[i], right[j]) for i, j in enumerate(choice))
            for choice in itertools.permutations(range(len(right)), len(left))
        )

    if mode == "exact":
        return len(ref) == len(calls) and all(call_matches(r, c) for r, c in zip(ref, calls, strict=True))
    if mode == "in_order":
        return any(
            all(call_matches(r, calls[j]) for r, j in zip(ref, positions, strict=True))
            for positions in itertools.combinations(range(len(calls)), len(ref))
        )
    if mode == "unordered":
        return len(ref) == len(calls) and injective(ref, calls, call_matches)
    if mode == "superset":
        return injective(ref, calls, call_matches)
    if mode == "subset":
        return injective(calls, ref, lambda c, r: call_matches(r, c))
    raise AssertionError(mode)


@settings(max_examples=400)
@given(st.sampled_from(["exact", "in_order", "unordered", "subset", "superset"]), references, observed)
def test_every_sequence_mode_agrees_with_brute_force(mode: str, ref: list[RequiredCall], calls: list[ToolCall]) -> None:
    assert trajectory.matches(mode, ref, calls) == brute(mode, ref, calls)
