"""Bad input never escapes as a traceback: only behavegate's own errors."""

from __future__ import annotations

import json
from typing import Any

import yaml
from helpers import ROOT
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from behavegate.contract.load import parse_contract_text
from behavegate.errors import ValidationError
from behavegate.evidence.observation_file import parse_observation_text

SETTINGS = settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])

keys = st.sampled_from(
    ["version", "agent", "scenarios", "id", "prompt", "expect", "tools", "response", "contains", "required", "name",
     "arguments", "allowed", "forbidden", "exact_sequence", "max_calls", "refusal", "sources", "endpoint", "model",
     "timeout_seconds", "capabilities", "parameters", "description", "available_tools", "tool_calls", "finish_reason",
     "response_complete", "tool_calls_complete", "error", "x"]
)  # fmt: skip
scalars = st.one_of(
    st.none(), st.booleans(), st.integers(-5, 300), st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=8), st.sampled_from(["stop", "length", "tool_calls", "t", "s1", "yes", "NO", "012", "12:30"]),
)  # fmt: skip
documents = st.recursive(
    scalars, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(keys, inner, max_size=6), max_leaves=40
)


def _contract(text: str) -> None:
    try:
        parse_contract_text(text, ROOT / "contract.yml", ROOT)
    except ValidationError as error:
        assert error.problems and all(p.text for p in error.problems)


def _observations(text: str) -> None:
    try:
        parse_observation_text(text, ROOT / "observations.json")
    except ValidationError as error:
        assert error.problems and all(p.text for p in error.problems)


@SETTINGS
@given(st.text(max_size=300))
def test_contract_reader_survives_arbitrary_text(text: str) -> None:
    _contract(text)


@SETTINGS
@given(documents)
def test_contract_reader_survives_arbitrary_structures(document: Any) -> None:
    _contract(yaml.safe_dump(document))
    _contract(yaml.safe_dump({"version": 1, "agent": {}, "scenarios": [document]}))
    _contract(yaml.safe_dump({"version": 1, "agent": {}, "scenarios": [{"id": "s", "prompt": "p", "expect": document}]}))


@SETTINGS
@given(st.text(max_size=300))
def test_observation_reader_survives_arbitrary_text(text: str) -> None:
    _observations(text)


@SETTINGS
@given(documents)
def test_observation_reader_survives_arbitrary_structures(document: Any) -> None:
    _observations(json.dumps(document))
    _observations(json.dumps({"version": 1, "scenarios": [document]}))
    _observations(json.dumps({"version": 1, "scenarios": [{"id": "s", "tool_calls": [document], "sources": document}]}))


def test_deep_nesting_is_an_error_not_a_crash() -> None:
    _contract("[" * 5000 + "]" * 5000)
    _observations("[" * 100000 + "]" * 100000)
