"""Every assertion behavegate judges, in one registry keyed by contract key, made from the
check rows (``contract/checks.py``, where each row names its judge): ``REGISTRY`` holds the
function that judges each key (and the report's kind).

An assertion is a pure function of what the contract asked for and the
evidence of one attempt. It passes only on typed evidence; when the evidence
gate is closed or the field was not observed it is *incomplete*, never a pass
and never a failure. Messages keep skylos's exact wording.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from behavegate.contract.assertion_keys import REQUESTS, Requested, requested_keys
from behavegate.contract.checks import CHECKS
from behavegate.frozen import Frozen
from behavegate.judge import conversation_checks, judged_checks, measure_checks, response_checks, safety_checks, tool_checks
from behavegate.judge.evidence import EMPTY_PATTERNS, Evidence
from behavegate.model import Expectation, Scenario, Verdict

__all__ = ["BY_KEY", "EMPTY_PATTERNS", "REGISTRY", "AssertionType", "Evidence", "requested_assertions", "scenario_assertions"]

Judge = Callable[[str, Any, Evidence], Verdict]


class AssertionType(Frozen):
    key: str  # the contract key, e.g. "tools.required"
    kind: str  # the report's kind, e.g. "tool_required"
    requested: Requested  # (assertion id, spec) for each assertion the contract asks for
    judge: Judge
    # The row's ``seen``: which verdict the calls read settle when the rest are not known.
    seen_decides: Callable[[Any], str | None] = lambda spec: None


def _undecided(spec: Any) -> None:
    return None


# A check row names its judge as "module.function" (the row is the contract's, which cannot
# import the judge): these are the modules it may name.
MODULES = {
    module.__name__.rpartition(".")[2]: module
    for module in (response_checks, tool_checks, measure_checks, safety_checks, conversation_checks, judged_checks)
}


def judge_named(name: str) -> Judge:
    """The function a check row names ("tool_checks.judge_forbidden")."""
    module, _, function = name.partition(".")
    judge: Judge = getattr(MODULES[module], function)
    return judge


# In report order, one per check row (contract/checks.py).
REGISTRY: tuple[AssertionType, ...] = tuple(
    AssertionType(check.key, check.kind, REQUESTS[check.key], judge_named(check.judge), check.seen or _undecided)
    for check in CHECKS
)

BY_KEY: dict[str, AssertionType] = {entry.key: entry for entry in REGISTRY}


def requested_assertions(expect: Expectation) -> tuple[tuple[AssertionType, str, Any], ...]:
    """Every assertion ``expect`` asks for, in report order: (its type, its id, its spec).
    Kept on the (immutable) expectation: every attempt of a scenario asks the same."""
    cached: tuple[tuple[AssertionType, str, Any], ...] | None = expect.__dict__.get("_requested")
    if cached is None:
        cached = tuple((BY_KEY[key], a, spec) for key in requested_keys(expect) for a, spec in BY_KEY[key].requested(expect))
        expect.__dict__["_requested"] = cached
    return cached


def scenario_assertions(scenario: Scenario) -> list[tuple[str, str]]:
    """(assertion id, kind) of every check a scenario asks for, in report order: its own, then
    each scripted user turn's as ``turns[i].<id>`` (what judge/evaluate.py reports)."""
    found = [(a, entry.kind) for entry, a, _ in requested_assertions(scenario.expect)]
    for index, turn in enumerate(scenario.turns):
        if turn.expect is not None:
            found += [(f"turns[{index}].{a}", entry.kind) for entry, a, _ in requested_assertions(turn.expect)]
    return found
