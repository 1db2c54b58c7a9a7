"""The fast indented encoder writes exactly what json.dumps(indent=2) writes."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from behavegate.indented_json import _indent_tokens, dumps

SCALARS = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True) | st.text()
VALUES = st.recursive(
    SCALARS, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4), max_leaves=40
)


@given(VALUES, st.booleans(), st.booleans())
def test_it_writes_what_the_standard_library_writes(value: Any, sort_keys: bool, ensure_ascii: bool) -> None:
    assert dumps(value, sort_keys=sort_keys, ensure_ascii=ensure_ascii) == json.dumps(
        value, indent=2, sort_keys=sort_keys, ensure_ascii=ensure_ascii
    )


def test_deep_nesting_and_tricky_strings() -> None:
    value: Any = {'a "{[,]}" \\': ["}", "{", [], {}, [[[[{"k": [1, 2.5, None, True]}]]]], '\\"', "é\u2028"]}
    for _ in range(80):
        value = [value, {"x": 1}] if isinstance(value, dict) else {"y": value}
    for ascii_only in (True, False):
        assert dumps(value, sort_keys=True, ensure_ascii=ascii_only) == json.dumps(
            value, indent=2, sort_keys=True, ensure_ascii=ascii_only
        )


@given(VALUES, st.booleans())
def test_the_fallback_for_nan_and_infinity_writes_what_the_standard_library_writes(value: Any, sort_keys: bool) -> None:
    compact = json.dumps([value, float("nan"), {"k:": float("-inf")}], sort_keys=sort_keys, separators=(",", ":"))
    assert _indent_tokens(compact) == json.dumps([value, float("nan"), {"k:": float("-inf")}], indent=2, sort_keys=sort_keys)


def test_text_holding_nan_is_indented_too() -> None:
    value = {"a": [float("nan"), {"b: c": float("inf")}], "d": []}
    assert dumps(value, sort_keys=True) == json.dumps(value, indent=2, sort_keys=True)
