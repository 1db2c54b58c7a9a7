"""Graded scores beside the verdicts (version 2): they are reported and can be
gated on (``min_score``), never rounded into a pass.

* Tool selection, against the expected tools (the names in ``tools.required``,
  ``tools.sequence``, ``tools.set`` and ``tools.exact_sequence``): precision =
  expected tools called / distinct tools called, recall = expected tools called /
  expected tools, F1 their harmonic mean. Nothing called and nothing expected is
  1, 1, 1; nothing called with tools expected has precision 0.
* Trajectory similarity, against ``tools.sequence``: the longest common
  subsequence of the called and expected tool names over the longer of the two.

An attempt whose tool calls were not observed has no score (not 0).
"""

from __future__ import annotations

from array import array
from collections.abc import Mapping, Sequence
from typing import Any

from behavegate.model import Expectation, GateResult, Observation, ScenarioResult

METRICS = ("precision", "recall", "f1", "trajectory")
GATED = ("f1", "trajectory")  # what min_score holds each scenario's mean to


def expected_tools(expect: Expectation) -> frozenset[str] | None:
    """The expected tool names; None when the scenario names no expected tools."""
    lists = [
        [c.name for c in expect.required] if expect.required else None,
        [c.name for c in expect.sequence.calls] if expect.sequence is not None else None,
        list(expect.tool_set) if expect.tool_set is not None else None,
        list(expect.exact_sequence) if expect.exact_sequence is not None else None,
    ]
    named = [names for names in lists if names is not None]
    return frozenset(name for names in named for name in names) if named else None


def lcs(a: Sequence[str], b: Sequence[str]) -> int:
    row = [0] * (len(b) + 1)
    for x in a:
        previous = 0
        for j, y in enumerate(b, 1):
            previous, row[j] = row[j], previous + 1 if x == y else max(row[j], row[j - 1])
    return row[-1]


def attempt_scores(expect: Expectation, observation: Observation | None) -> dict[str, float] | None:
    expected = expected_tools(expect)
    if expected is None or observation is None or observation.tool_calls is None or observation.error is not None:
        return None
    names = [call.name for call in observation.tool_calls]
    called = set(names)
    hit = len(called & expected)
    precision = hit / len(called) if called else (1.0 if not expected else 0.0)
    recall = hit / len(expected) if expected else 1.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    scores = {"precision": round(precision, 6), "recall": round(recall, 6), "f1": round(f1, 6)}
    if expect.sequence is not None:
        wanted = [c.name for c in expect.sequence.calls]
        longest = max(len(names), len(wanted))
        scores["trajectory"] = round(lcs(names, wanted) / longest, 6) if longest else 1.0
    return scores


def mean_scores(items: Sequence[Mapping[str, float] | None]) -> dict[str, float] | None:
    """Each metric's mean over the items that have it (None: no item has a score)."""
    found = [item for item in items if item]
    if not found:
        return None
    means = {}
    for metric in METRICS:
        values = [item[metric] for item in found if metric in item]
        if values:
            means[metric] = round(sum(values) / len(values), 6)
    return {**means, "attempts": sum(int(item.get("attempts", 1)) for item in found)}


def group_scores(results: Sequence[ScenarioResult]) -> dict[str, float] | None:
    """A tag's or the suite's scores: the mean of its scenarios' means."""
    found = [r.reliability.scores for r in results if r.reliability is not None and r.reliability.scores]
    means = mean_scores(found)
    if means is not None:
        means["scenarios"] = len(found)
    return means


def score_gate(gate: str, results: Sequence[ScenarioResult], floor: float) -> GateResult:
    means = group_scores(results)
    gated = {metric: means[metric] for metric in GATED if means and metric in means}
    if not gated:
        message = f"no attempt has a score (expected tools and observed tool calls), so {floor:g} cannot be judged"
        return GateResult(gate, "incomplete", message, floor, means)
    low = {metric: value for metric, value in gated.items() if value < floor - 1e-12}
    if low:
        shown = ", ".join(f"{metric} {value:.3f}" for metric, value in low.items())
        return GateResult(gate, "fail", f"expected scores of at least {floor:g}, observed {shown}", floor, means)
    shown = ", ".join(f"{metric} {value:.3f}" for metric, value in gated.items())
    return GateResult(gate, "pass", f"scores {shown} reach {floor:g}", floor, means)


def scores_block(results: Sequence[ScenarioResult]) -> dict[str, Any] | None:
    """The suite's graded scores and each tag's, as the JSON report shows them (None: nothing graded)."""
    suite = group_scores(results)
    if suite is None:
        return None
    groups: dict[str, list[ScenarioResult]] = {}
    for result in results:  # one pass, each group in the results' order
        for tag in dict.fromkeys(result.scenario.tags):
            groups.setdefault(tag, []).append(result)
    by_tag = {tag: group_scores(groups[tag]) for tag in sorted(groups)}
    return {"suite": suite, "tags": {tag: value for tag, value in by_tag.items() if value is not None}}


class ScoreTotals:
    """:func:`scores_block` kept as results come (a streamed run): each group's metric values
    in the results' order (8 bytes a value), summed as ``sum`` sums them at the end."""

    def __init__(self) -> None:
        self._groups: dict[str | None, tuple[dict[str, array[float]], list[int]]] = {}  # None: the suite

    def add(self, result: ScenarioResult) -> None:
        item = result.reliability.scores if result.reliability is not None else None
        if not item:
            return
        for group in (None, *dict.fromkeys(result.scenario.tags)):
            values, counts = self._groups.setdefault(group, ({}, [0, 0]))
            for metric in METRICS:
                if metric in item:
                    values.setdefault(metric, array("d")).append(item[metric])
            counts[0] += int(item.get("attempts", 1))
            counts[1] += 1

    def _means(self, group: str | None) -> dict[str, float]:
        values, (attempts, scenarios) = self._groups[group]
        means = {metric: round(sum(values[metric]) / len(values[metric]), 6) for metric in METRICS if metric in values}
        return {**means, "attempts": attempts, "scenarios": scenarios}

    def block(self) -> dict[str, Any] | None:
        if None not in self._groups:
            return None
        tags = sorted(group for group in self._groups if group is not None)
        return {"suite": self._means(None), "tags": {tag: self._means(tag) for tag in tags}}
