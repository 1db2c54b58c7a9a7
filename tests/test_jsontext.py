"""The fast indented JSON writer equals the standard library's, byte for byte."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from behavegate.report.jsontext import dumps_indented

leaves = st.one_of(
    st.none(), st.booleans(), st.integers(), st.floats(allow_nan=True, allow_infinity=True), st.text(),
)  # fmt: skip
values = st.recursive(
    leaves,
    lambda inner: st.lists(inner, max_size=4) | st.tuples(inner, inner) | st.dictionaries(st.text(max_size=6), inner, max_size=4),
    max_leaves=30,
)


@given(values)
def test_matches_json_dumps(value: Any) -> None:
    assert dumps_indented(value) == json.dumps(value, indent=2, sort_keys=True, default=str)


def test_non_string_keys_and_unknown_types_follow_json() -> None:
    value = {1: "a", 2: True, 3: [], 4: {}}
    assert dumps_indented(value) == json.dumps(value, indent=2, sort_keys=True, default=str)
    odd = {"when": object.__new__(type("Stamp", (), {"__str__": lambda self: "2026"}))}
    assert dumps_indented(odd) == json.dumps(odd, indent=2, sort_keys=True, default=str)
