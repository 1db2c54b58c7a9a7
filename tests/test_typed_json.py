"""Our own JSON formats are read by their schema: msgspec decodes a valid document, and
a refused one is walked against the same types for every problem, worded by us. The
walk and msgspec must agree on what is valid, whatever the document holds."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Annotated, Any, Literal

import msgspec
import pytest
from helpers import SHARD_CONTRACT as CONTRACT
from helpers import SHARD_OBSERVATIONS as OBSERVATIONS
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from msgspec import Meta

from behavegate import typed_json
from behavegate.cli import main
from behavegate.report import baseline_file, shard_schema


class Inner(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    name: Annotated[str, Meta(min_length=1, max_length=5)]
    count: Annotated[int, Meta(ge=0, le=9)] | None


class Outer(msgspec.Struct, frozen=True):
    status: Annotated[Literal["pass", "fail"], Meta(description="pass or fail")]
    digest: Annotated[str, Meta(pattern="^[0-9a-f]{4}$", description="4 hex digits")]
    items: Annotated[list[Inner], Meta(max_length=3)]
    pair: tuple[str, int] = ("", 0)
    rate: Annotated[float, Meta(ge=0)] = 0.0
    either: str | int = ""


def problems(raw: Any, limit: int = 20) -> list[str]:
    return [p.text for p in typed_json.problems(raw, Outer, limit)]


def test_a_valid_document_decodes_to_its_types() -> None:
    text = '{"status": "pass", "digest": "0a1b", "items": [{"name": "a", "count": null}], "pair": ["x", 1], "rate": 2}'
    decoded = typed_json.decode(text, Outer)
    assert decoded.items == [Inner("a", None)] and decoded.pair == ("x", 1) and decoded.rate == 2.0


def test_every_problem_is_listed_with_its_json_path_in_our_words() -> None:
    raw = {
        "status": "won",
        "digest": "xyz",
        "items": [{"name": "", "count": 10, "extra": 1}, {}],
        "pair": ["x"],
        "rate": -1,
        "either": True,
    }
    assert problems(raw) == [
        "status must be pass or fail, got 'won'",
        "digest must be 4 hex digits, got 'xyz'",
        "items[0].name must be a non-empty string of at most 5 characters, got ''",
        "items[0].count must be a whole number from 0 to 9 or null, got 10",
        "items[0].extra is unknown here (the keys are count, name)",
        "items[1].name is missing",
        "items[1].count is missing",
        "pair must be a list of 2 items, got 1 items",
        "rate must be a non-negative number, got -1",
        "either must be a string or a whole number, got true",
    ]


def test_the_problems_are_capped_and_lengths_checked_before_items() -> None:
    assert len(problems({"items": [{}] * 3}, limit=4)) == 4
    assert problems({"status": "pass", "digest": "0000", "items": [{}] * 4}) == ["items must have at most 3 entries, got 4"]
    assert problems([]) == ["must be a JSON object, got a list"]


def test_a_bool_is_never_a_number_and_an_int_is_a_float() -> None:
    base = {"status": "pass", "digest": "0000", "items": []}
    assert problems({**base, "items": [{"name": "a", "count": True}]}) == [
        "items[0].count must be a whole number from 0 to 9 or null, got true"
    ]
    assert problems({**base, "rate": 3}) == [] and problems({**base, "rate": False})


def test_text_that_is_not_json_or_not_finite_is_not_json() -> None:
    for text in ("{", '{"rate": 1e400}', '{"rate": NaN}'):
        with pytest.raises(typed_json.NotJSON):
            typed_json.decode(text, Outer)
    with pytest.raises(typed_json.Refused) as refused:
        typed_json.decode('{"status": 1}', Outer)
    assert refused.value.raw == {"status": 1} and len(refused.value.problems) == 3


# --- the walk and msgspec agree, on the real formats -------------------------------------


@pytest.fixture(scope="module")
def documents(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """A real baseline (a v2 JSON report) and a real v2 shard report, as behavegate writes them."""
    folder = tmp_path_factory.mktemp("formats")
    (folder / "contract.yml").write_text(CONTRACT)
    (folder / "obs.json").write_text(json.dumps(OBSERVATIONS))
    cwd = Path.cwd()
    try:
        import os

        os.chdir(folder)
        main(["test", "contract.yml", "--observations", "obs.json", "--report", "report.json"])
        main(["test", "contract.yml", "--observations", "obs.json", "--shard", "1/2", "--report", "shard.json"])
    finally:
        os.chdir(cwd)
    return {name: json.loads((folder / f"{name}.json").read_text()) for name in ("report", "shard")}


FORMATS: dict[str, Any] = {"report": baseline_file._Report, "shard": shard_schema.ReportV2}
VALUES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-3, 3),
    st.floats(-2, 2, allow_nan=False),
    st.sampled_from(["", "x", "pass", "0" * 64]),
    st.just([]),
    st.just({}),
    st.just([["alpha", 1]]),
)


def _nodes(value: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    found = [path]
    if isinstance(value, dict):
        for key, item in value.items():
            found.extend(_nodes(item, (*path, key)))
    elif isinstance(value, list):
        for index, item in enumerate(value[:3]):
            found.extend(_nodes(item, (*path, index)))
    return found


@settings(max_examples=150, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data(), name=st.sampled_from(sorted(FORMATS)))
def test_the_walk_finds_a_problem_exactly_when_msgspec_refuses(documents: dict[str, Any], data: Any, name: str) -> None:
    document = copy.deepcopy(documents[name])
    for _ in range(data.draw(st.integers(1, 3))):
        path = data.draw(st.sampled_from(_nodes(document)[1:]))
        parent = document
        for step in path[:-1]:
            parent = parent[step]
        if isinstance(parent, dict) and data.draw(st.booleans()):
            del parent[path[-1]]
        else:
            parent[path[-1]] = data.draw(VALUES)
    schema: Any = FORMATS[name]
    try:
        msgspec.json.decode(json.dumps(document), type=schema)
        accepted = True
    except msgspec.ValidationError:
        accepted = False
    assert accepted == (not list(typed_json.problems(document, schema))), list(typed_json.problems(document, schema))


def test_the_real_documents_are_valid(documents: dict[str, Any]) -> None:
    for name, schema in FORMATS.items():
        assert not list(typed_json.problems(documents[name], schema))
        typed_json.decode(json.dumps(documents[name]), schema)
