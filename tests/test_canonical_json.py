"""Canonical JSON text is the standard library's, byte for byte (the evidence digests are
skylos's), though msgspec writes most of it; and no reader of evidence lets in the
non-finite numbers msgspec would write differently."""

from __future__ import annotations

import json
import math
from typing import Any

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from behavegate.canonical_json import canonical_bytes, canonical_text
from behavegate.errors import BaselineError, ShardError
from behavegate.evidence.chat import strict_json
from behavegate.evidence.traces.messages import parse_json
from behavegate.judge.conversation_checks import _MISSING, field_value
from behavegate.judge.judged_checks import read_vote
from behavegate.judged import JudgeVote
from behavegate.report.baseline_file import parse_baseline
from behavegate.report.shard_reports import parse_shard_report


def standard(value: Any) -> str:
    return json.dumps(value, allow_nan=False, ensure_ascii=False, separators=(",", ":"), sort_keys=True)


TEXT = st.text(st.characters(exclude_categories=["Cs"]))
FLOATS = st.floats(allow_nan=False, allow_infinity=False) | st.sampled_from([1e16, 1e-05, -2.5e-07, 1e22, 5e-324, 1e15])
VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.integers(min_value=2**63, max_value=2**80) | FLOATS | TEXT,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(TEXT, inner, max_size=4),
    max_leaves=12,
)


@given(VALUES)
@example({"b": [1e16, 1e-05], "a": "2e5 0.00001", "\U0001f600": 1, "\uffff": 2, "é": "\x00\x7f\u2028"})
@example([1.2345678901234568e20, -0.0, 0.0001, 123456789012345680000.0, 10**30])
@example({"trace_id": "4bf92f3577b34da6a3ce929d0e0e4736", "digest": "0e5d7f", "ratio:1e5": "[2e3", "x": [5e-05, 1e-7]})
def test_canonical_text_is_what_the_standard_library_writes(value: Any) -> None:
    assert canonical_text(value) == standard(value)
    assert canonical_bytes(value) == standard(value).encode("utf-8")


def test_values_msgspec_refuses_are_the_standard_librarys_to_decide() -> None:
    assert canonical_text({1: "a", 2: "b"}) == standard({1: "a", 2: "b"})  # numbers as keys
    assert canonical_text(["\ud800"]) == standard(["\ud800"])  # a lone surrogate (no reader lets one in)
    with pytest.raises(TypeError):
        canonical_text({"a": 1, 2: 3})  # keys that cannot be sorted: raises as before


NON_FINITE = ["NaN", "Infinity", "-Infinity", "1e400", "-1e999"]


@pytest.mark.parametrize("number", NON_FINITE)
def test_an_agents_reply_with_a_non_finite_number_is_not_json(number: str) -> None:
    with pytest.raises(ValueError):
        strict_json(f'{{"arguments": {{"x": {number}}}}}')


@pytest.mark.parametrize("number", NON_FINITE)
def test_json_text_in_a_trace_attribute_with_a_non_finite_number_is_not_json(number: str) -> None:
    assert parse_json(f'{{"x": {number}}}') is None


@pytest.mark.parametrize("number", NON_FINITE)
def test_a_judges_vote_reads_as_before_whatever_number_sits_in_a_key_it_does_not_keep(number: str) -> None:
    reply = f'{{"verdict": "pass", "reason": "ok", "confidence": {number}}}'  # only verdict and reason are kept
    assert read_vote(JudgeVote(question=(), reply=reply)) == ("pass", "ok")


@pytest.mark.parametrize("number", NON_FINITE)
def test_a_scripted_tool_result_with_a_non_finite_number_has_no_such_field(number: str) -> None:
    assert field_value(f'{{"eta": {number}, "id": 7}}', "eta") is _MISSING
    assert field_value('{"eta": 1.5e300}', "eta") == 1.5e300


@pytest.mark.parametrize("number", NON_FINITE)
def test_a_shard_or_baseline_report_with_a_non_finite_number_is_refused(number: str) -> None:
    text = f'{{"kind": "agent_behavior", "schema_version": 1, "status": "pass", "summary": {{"x": {number}}}}}'
    with pytest.raises(ShardError, match="is not JSON"):
        parse_shard_report(text, "shard.json", "0" * 64)
    with pytest.raises(BaselineError, match="is not JSON"):
        parse_baseline(text, "baseline.json")


def test_finite_numbers_read_as_before() -> None:
    value = strict_json('{"a": 1.5, "b": -2e-7, "c": 1e308, "d": 12345678901234567890}')
    assert value == {"a": 1.5, "b": -2e-7, "c": 1e308, "d": 12345678901234567890}
    assert all(math.isfinite(v) for v in value.values())


def test_a_shard_report_that_is_not_json_says_where() -> None:
    with pytest.raises(ShardError, match="line 1 column"):
        parse_shard_report('{"kind": "agent_behavior", "schema_version": 1', "shard.json", "0" * 64)
    with pytest.raises(ShardError, match="surrogate"):
        parse_shard_report('{"kind": "\\ud800"}', "shard.json", "0" * 64)
