"""Our own JSON formats (run records, shard reports, baselines) are decoded by msgspec; a
refused document lists every problem by its JSON path, in our words, from jsonschema over
the same types. msgspec decides what is valid, and the listing finds a problem exactly
when msgspec refuses, whatever the document holds."""

from __future__ import annotations

import copy
import json
import os
import time
from pathlib import Path
from typing import Annotated, Any, Literal

import msgspec
import pytest
from helpers import SHARD_CONTRACT as CONTRACT
from helpers import SHARD_OBSERVATIONS as OBSERVATIONS
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from msgspec import Meta

from behavegate import json_formats
from behavegate.cli import main
from behavegate.report import baseline_file, run_schema, shard_schema


class Inner(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    name: Annotated[str, Meta(min_length=1, max_length=5)]
    count: Annotated[int, Meta(ge=0, le=9)] | None


class Outer(msgspec.Struct, frozen=True):
    """A docstring is not a description: it never words a problem."""

    status: Annotated[Literal["pass", "fail"], Meta(description="pass or fail")]
    digest: Annotated[str, Meta(pattern="^[0-9a-f]{4}$", description="4 hex digits")]
    items: Annotated[list[Inner], Meta(max_length=3)]
    pair: tuple[str, int] = ("", 0)
    rate: Annotated[float, Meta(ge=0)] = 0.0
    either: str | int = ""
    version: Literal[1, 2] = 1


class Cat(msgspec.Struct, frozen=True, tag_field="kind", tag="cat"):
    lives: int


class Dog(msgspec.Struct, frozen=True, tag_field="kind", tag="dog"):
    good: bool


VALID = {"status": "pass", "digest": "0000", "items": []}


def problems(raw: Any, schema: Any = Outer, limit: int = 20) -> list[str]:
    return [p.text for p in json_formats.problems(raw, schema, limit)]


def test_a_valid_document_decodes_to_its_types() -> None:
    text = '{"status": "pass", "digest": "0a1b", "items": [{"name": "a", "count": null}], "pair": ["x", 1], "rate": 2}'
    decoded = json_formats.decode(text, Outer)
    assert decoded.items == [Inner("a", None)] and decoded.pair == ("x", 1) and decoded.rate == 2.0
    assert problems({**VALID, "rate": 3}) == []


def test_every_problem_is_listed_by_its_json_path_in_our_words_sorted_by_path() -> None:
    raw = {
        "status": "won",
        "digest": "xyz",
        "items": [{"name": "", "count": 10, "extra": 1}, {}],
        "pair": ["x"],
        "rate": -1,
        "either": True,
    }
    assert problems(raw) == [
        "digest must be 4 hex digits, got 'xyz'",
        "either must be a string or a whole number, got true",
        "items[0].count must be a whole number from 0 to 9 or null, got 10",
        "items[0].extra is unknown here (the keys are count, name)",
        "items[0].name must be a non-empty string of at most 5 characters, got ''",
        "items[1].count is missing",
        "items[1].name is missing",
        "pair must be a list of 2 items, got 1 items",
        "rate must be a non-negative number, got -1",
        "status must be pass or fail, got 'won'",
    ]
    assert [p.path for p in json_formats.problems(raw, Outer)][:2] == ["digest", "either"]


def test_a_wrong_container_says_what_it_must_be_and_a_docstring_never_words_it() -> None:
    assert problems([]) == ["must be a JSON object, got a list"]
    assert problems({**VALID, "items": 5, "pair": [1, 2, 3], "either": None}) == [
        "either must be a string or a whole number, got null",
        "items must be a list, got 5",
        "pair must be a list of 2 items, got 3 items",
    ]
    assert problems({**VALID, "items": [7]}) == ["items[0] must be a JSON object, got 7"]


def test_the_problems_are_capped_and_a_list_too_long_hides_its_items() -> None:
    assert len(problems({"items": [{}] * 3}, limit=4)) == 4
    assert problems({**VALID, "items": [{}] * 4}) == ["items must have at most 3 entries, got 4"]


def test_a_bool_is_never_a_number_and_a_whole_number_has_no_fraction() -> None:
    """msgspec's strictness, which JSON Schema alone lacks (its integer and enum take 1.0)."""
    assert problems({**VALID, "items": [{"name": "a", "count": True}]}) == [
        "items[0].count must be a whole number from 0 to 9 or null, got true"
    ]
    assert problems({**VALID, "rate": False}) == ["rate must be a non-negative number, got false"]
    assert problems({**VALID, "items": [{"name": "a", "count": 1.0}]}) == [
        "items[0].count must be a whole number from 0 to 9 or null, got 1.0"
    ]
    assert problems({**VALID, "version": 1.0}) == ["version must be 1 or 2, got 1.0"]
    assert problems({**VALID, "version": True}) == ["version must be 1 or 2, got true"]


def test_a_tagged_object_is_checked_against_the_struct_its_tag_names() -> None:
    animals = list[Cat | Dog]
    assert problems([{"kind": "dog", "good": 1}, {"kind": "cat"}], animals) == [
        "[0].good must be true or false, got 1",
        "[1].lives is missing",
    ]
    assert problems([{"kind": "bird"}, {"lives": 9}, "cat"], animals) == [
        "[0].kind must be cat or dog, got 'bird'",
        "[1].kind is missing",
        "[2] must be a JSON object, got 'cat'",
    ]


def test_untrusted_keys_and_values_are_shown_inert_and_short() -> None:
    (found,) = problems({**VALID, "items": [{"name": "a", "count": 1, "\n::error::x" + "k" * 500: 1}]})
    assert "\n" not in found and "\\n::error::x" in found and len(found) < 300
    (found,) = problems({**VALID, "status": "\u202e" + "s" * 500})
    assert "\u202e" not in found and len(found) < 200


def test_a_refusal_the_schema_cannot_word_is_still_a_problem_never_nothing() -> None:
    # msgspec reads JSON keys as integers here; JSON Schema has no way to say so
    assert problems({"a": "x"}, dict[int, str]) == ["is not valid as this format"]


def test_text_that_is_not_json_or_not_finite_is_not_json() -> None:
    for text in ("{", '{"rate": 1e400}', '{"rate": NaN}', '"\\ud800"'):
        with pytest.raises(json_formats.NotJSON):
            json_formats.decode(text, Outer)
    with pytest.raises(json_formats.Refused) as refused:
        json_formats.decode('{"status": 1}', Outer)
    assert refused.value.raw == {"status": 1} and [p.path for p in refused.value.problems] == ["digest", "items", "status"]


def test_a_document_with_a_million_problems_is_listed_in_bounded_time() -> None:
    started = time.perf_counter()
    listed = problems([{"kind": "cat", "lives": "nine"}] * 200_000, list[Cat | Dog])
    assert len(listed) == 20 and listed[0] == "[0].lives must be a whole number, got 'nine'"
    assert time.perf_counter() - started < 30


def test_each_format_is_compiled_once() -> None:
    json_formats.problems([], Outer)
    compiled = json_formats._VALIDATORS[Outer]
    json_formats.problems({}, Outer)
    assert json_formats._VALIDATORS[Outer] is compiled


def test_a_key_no_utf8_text_can_carry_is_a_problem_never_a_crash() -> None:
    assert problems({**VALID, "\ud800": 1}) == ["holds an unpaired surrogate escape, which no UTF-8 text can carry"]
    assert problems({**VALID, "items": [{"name": "a", "count": 1, "\ud800": 1}]}) == [
        "items[0].\\ud800 is unknown here (the keys are count, name)"
    ]


# --- msgspec and the listing agree, on the real formats -------------------------------------


@pytest.fixture(scope="module")
def documents(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """A real baseline (a v2 JSON report), a real v2 shard report and the run record of the
    first (its report, state and an event), as behavegate writes them."""
    folder = tmp_path_factory.mktemp("formats")
    (folder / "contract.yml").write_text(CONTRACT)
    (folder / "obs.json").write_text(json.dumps(OBSERVATIONS))
    cwd = Path.cwd()
    try:
        os.chdir(folder)
        main(["test", "contract.yml", "--observations", "obs.json", "--report", "report.json"])
        main(["test", "contract.yml", "--observations", "obs.json", "--shard", "1/2", "--report", "shard.json"])
    finally:
        os.chdir(cwd)
    found = {name: json.loads((folder / f"{name}.json").read_text()) for name in ("report", "shard")}
    run = folder / found["report"]["behavegate"]["run_dir"]
    events = [json.loads(line) for line in (run / "events.jsonl").read_text().splitlines()]
    return {
        **found,
        "run report": json.loads((run / "behavior-results.json").read_text()),
        "run state": json.loads((run / "state.json").read_text()),
        "run event": next(e for e in events if e["event"] == "run_completed"),
    }


FORMATS: dict[str, Any] = {
    "report": baseline_file._Report,
    "shard": shard_schema.ReportV2,
    "run report": run_schema.Report,
    "run state": run_schema.State,
    "run event": run_schema.AnyEvent,
}
VALUES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-3, 3),
    st.floats(-2, 2, allow_nan=False),
    st.sampled_from([1.0, 0.0, "", "x", "pass", "run_started", "0" * 64]),
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


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data(), name=st.sampled_from(sorted(FORMATS)))
def test_problems_are_listed_exactly_when_msgspec_refuses(documents: dict[str, Any], data: Any, name: str) -> None:
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
    listed = json_formats.problems(document, schema)
    assert accepted == (not listed), listed
    assert all(p.text != "is not valid as this format" for p in listed), listed  # every refusal is worded
    if not accepted:
        with pytest.raises(json_formats.Refused) as refused:
            json_formats.decode(json.dumps(document), schema)
        assert refused.value.problems == listed


def test_the_real_documents_are_valid(documents: dict[str, Any]) -> None:
    for name, schema in FORMATS.items():
        assert json_formats.problems(documents[name], schema) == ()
        json_formats.decode(json.dumps(documents[name]), schema)
