"""What an ``arguments:`` subset in a contract means: the judge matches calls with it
(``tools.required``, ``tools.sequence``) and the live conversation picks a
``tool_results`` rule with it."""

from __future__ import annotations

from typing import Any


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
