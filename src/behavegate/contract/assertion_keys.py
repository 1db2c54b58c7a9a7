"""The assertions an expectation requests, by contract key: ``tools.required``
with two entries requests ``tools.required[0]`` and ``tools.required[1]``.

Made from the check rows (``contract/checks.py``). The reader counts assertions
with it (the 250 / 5,000 caps, "expect must request something"); the judge's
registry (``judge/assertions.py``) lists what each key requests with it.
"""

from __future__ import annotations

from collections.abc import Callable
from operator import attrgetter
from typing import Any

from behavegate.contract.checks import CHECKS, EACH, NAMED, ONCE
from behavegate.model import Expectation, Scenario

Requested = Callable[[Expectation], list[tuple[str, Any]]]

# In report order: (contract key, Expectation field, how it counts), one per check row.
KEYS: tuple[tuple[str, str, str], ...] = tuple((check.key, check.field, check.counts) for check in CHECKS)


def _requested(key: str, field: str, counts: str) -> Requested:
    get = attrgetter(field)
    if counts == EACH:
        return lambda e: [(f"{key}[{index}]", (index, value)) for index, value in enumerate(get(e))]
    if counts == NAMED:
        return lambda e: [(f"{key}.{call.name}", call) for call in get(e)]
    return lambda e: [] if (value := get(e)) is None else [(key, value)]


REQUESTS: dict[str, Requested] = {key: _requested(key, field, counts) for key, field, counts in KEYS}
_LISTS = attrgetter(*(field for _, field, counts in KEYS if counts != ONCE))
_SINGLES = attrgetter(*(field for _, field, counts in KEYS if counts == ONCE))
_FIELDS = attrgetter(*(field for _, field, _ in KEYS))


def requested_keys(expect: Expectation) -> list[str]:
    """The contract keys ``expect`` requests anything of, in report order."""
    return [
        key
        for (key, _, counts), value in zip(KEYS, _FIELDS(expect), strict=True)
        if (value is not None if counts == ONCE else value)
    ]


def assertion_count(expect: Expectation) -> int:
    """How many assertions ``expect`` requests (what :data:`REQUESTS` would list,
    counted without listing: the reader's cap and the shard partition ask it of every
    scenario)."""
    return sum(map(len, _LISTS(expect))) + sum(value is not None for value in _SINGLES(expect))


def requests_any(expect: Expectation) -> bool:
    """Does ``expect`` ask for anything?"""
    return bool(requested_keys(expect))


def scenario_assertions(scenario: Scenario) -> int:
    """The assertions a scenario requests: its own and each scripted user turn's."""
    turns = sum(assertion_count(turn.expect) for turn in scenario.turns if turn.expect is not None)
    return assertion_count(scenario.expect) + turns
