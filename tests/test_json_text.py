"""The report's JSON text, digest and size come from parts encoded once, and equal
what encoding the whole document would give."""

from __future__ import annotations

import hashlib
import json
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from behavegate.report.json_text import SCENARIOS, chunks, encode, size_within

# Text a report can hold: no lone surrogates (every reader refuses them; UTF-8 cannot carry them).
TEXT = st.text(st.characters(exclude_categories=["Cs"]))
SCALARS = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | TEXT
VALUES = st.recursive(
    SCALARS, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(TEXT, inner, max_size=4), max_leaves=10
)
KEYS = st.text(st.characters(exclude_categories=["Cs"]), max_size=8).filter(lambda key: key != SCENARIOS)
ENTRY_KEYS = st.sampled_from(["id", "assertions", "observation", "attempts", "status", "é\x7f"])


@st.composite
def scenario_lists(draw: st.DrawFn) -> list[dict[str, Any]]:
    """Scenario entries whose attempt holds the very objects the scenario shows, as a report's do."""
    scenarios = draw(st.lists(st.dictionaries(ENTRY_KEYS, VALUES, max_size=3), max_size=3))
    for entry in scenarios:
        shared = draw(st.lists(st.dictionaries(KEYS, VALUES, max_size=2), max_size=2))
        entry["assertions"] = shared
        if draw(st.booleans()):
            entry["attempts"] = [{"assertions": shared, "attempt": 1, "observation": entry.get("observation")}]
    return scenarios


@given(st.dictionaries(KEYS, VALUES, max_size=5), scenario_lists(), st.dictionaries(KEYS, VALUES, max_size=3), st.data())
def test_the_pieces_make_what_json_dumps_writes_and_the_digest_is_the_whole_documents(
    evidence: dict[str, Any], scenarios: list[dict[str, Any]], rest: dict[str, Any], data: st.DataObject
) -> None:
    rest = {key: value for key, value in rest.items() if key not in evidence}
    absent = data.draw(st.lists(KEYS.filter(lambda key: key not in evidence), max_size=2))
    encoded = encode(evidence, scenarios, [*evidence, *absent])
    document = {**evidence, SCENARIOS: scenarios, **rest}
    assert "".join(chunks(encoded, rest)) == json.dumps(document, indent=2, sort_keys=True)
    covered = {**{key: None for key in absent}, **evidence, SCENARIOS: scenarios}
    canonical = json.dumps(covered, allow_nan=False, ensure_ascii=False, separators=(",", ":"), sort_keys=True)
    assert encoded.digest == hashlib.sha256(canonical.encode()).hexdigest()
    left_out = data.draw(st.sampled_from(sorted(document)))
    without = "".join(chunks(encoded, rest, leave_out=left_out))
    assert without == json.dumps({k: v for k, v in document.items() if k != left_out}, indent=2, sort_keys=True)
    for limit in (len(without), len(without) + 1, len(without) + 2):
        assert size_within(encoded, rest, leave_out=left_out, limit=limit) == (len(without) + 1 <= limit)


def test_astral_and_control_characters_are_escaped_as_the_standard_library_does() -> None:
    evidence = {"é\x7f": ["\U0001f600", "\x00\n\u2028"], "b": {"c": "\x7f"}}
    scenarios = [{"id": "\U0001f600", "assertions": []}]
    document = {**evidence, SCENARIOS: scenarios}
    assert "".join(chunks(encode(evidence, scenarios, evidence), {})) == json.dumps(document, indent=2, sort_keys=True)
