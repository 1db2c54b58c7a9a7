"""The report's JSON text, digest and size come from parts encoded once, and equal
what encoding the whole document would give."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from behavegate.report.digests import sha256_json
from behavegate.report.json_text import canonical_part, digest_of, document_text, scenarios_part, size_without

SCALARS = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text()
VALUES = st.recursive(
    SCALARS, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4), max_leaves=30
)
DOCUMENTS = st.dictionaries(st.text(max_size=8), VALUES, min_size=1, max_size=6)


@given(DOCUMENTS, st.data())
def test_the_text_is_what_json_dumps_writes_with_parts_reused(document: dict[str, Any], data: st.DataObject) -> None:
    encoded = data.draw(st.sets(st.sampled_from(sorted(document))))
    parts = {key: canonical_part(document[key]) for key in encoded}
    assert document_text(document, parts) == json.dumps(document, indent=2, sort_keys=True)


@given(DOCUMENTS, st.lists(st.text(max_size=8), max_size=3))
def test_the_digest_is_that_of_the_whole_mapping(document: dict[str, Any], absent: list[str]) -> None:
    keys = [*document, *(key for key in absent if key not in document)]
    parts = {key: canonical_part(value) for key, value in document.items()}
    assert digest_of(parts, keys) == sha256_json({key: document.get(key) for key in keys})


@given(DOCUMENTS, st.data())
def test_the_size_without_a_key_is_the_length_of_the_text_without_it(document: dict[str, Any], data: st.DataObject) -> None:
    key = data.draw(st.sampled_from(sorted(document)))
    text = json.dumps(document, indent=2, sort_keys=True)
    rest = {k: v for k, v in document.items() if k != key}
    assert size_without(text, document, key) == len(json.dumps(rest, indent=2, sort_keys=True))


def test_astral_and_control_characters_are_escaped_as_the_standard_library_does() -> None:
    document = {"é\x7f": ["\U0001f600", "\x00\n\u2028", "\ud800"], "b": {"c": "\x7f"}}
    parts = {key: canonical_part(value) for key, value in document.items()}
    assert document_text(document, parts) == json.dumps(document, indent=2, sort_keys=True)


@given(st.lists(st.dictionaries(st.sampled_from(["id", "assertions", "observation", "attempts", "status"]), VALUES), max_size=4))
def test_the_scenario_list_encodes_as_a_whole_list_would(scenarios: list[dict[str, Any]]) -> None:
    shared = [{"a": 1}, {"b": [2]}]
    for entry in scenarios:  # the same objects at the scenario and the attempt level, as a report has them
        entry["assertions"] = shared
        entry["attempts"] = [{"assertions": shared, "attempt": 1, "observation": entry.get("observation")}]
    assert scenarios_part(scenarios) == canonical_part(scenarios)
