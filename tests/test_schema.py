"""The shipped JSON Schema agrees with the contract reader."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml
from helpers import EXAMPLE, ROOT
from hypothesis import given, settings
from hypothesis import strategies as st

from behavegate.contract.json_schema import render, schema
from behavegate.contract.load import parse_contract_text
from behavegate.contract.starter import STARTER_CONTRACT, STARTER_CONTRACT_V2
from behavegate.errors import ContractError
from behavegate.limits import MAX_RUN_SCENARIOS, MAX_RUNS, MAX_TIMEOUT_SECONDS, MAX_TOOLS, MAX_TURNS

REPO = Path(__file__).resolve().parents[1]
VALIDATOR = jsonschema.Draft202012Validator(schema())


def test_shipped_schema_files_are_current() -> None:
    for path in (REPO / "src" / "behavegate" / "contract" / "contract.schema.json", REPO / "docs" / "contract.schema.json"):
        assert path.read_text() == render(), f"{path} is stale: run `python -m behavegate.contract.json_schema`"


@pytest.mark.parametrize(
    "text",
    [
        (EXAMPLE / "contract.yml").read_text(),
        (EXAMPLE / "contract-v2.yml").read_text(),
        STARTER_CONTRACT,
        STARTER_CONTRACT_V2.replace("include: [builtin:injection]", ""),
        (REPO / "examples" / "golden-queries" / "queries.yml").read_text(),
    ],
    ids=["refund-v1", "refund-v2", "starter-v1", "starter-v2", "golden-queries"],
)
def test_valid_contracts_validate(text: str) -> None:
    parse_contract_text(text, ROOT / "c.yml", ROOT)
    VALIDATOR.validate(yaml.safe_load(text))


@pytest.mark.parametrize(
    "patch",
    [
        {"colour": "red"},
        {"version": 3},
        {"scenarios": []},
        {"agent": {"model": "m", "parameters": {"model": "x"}}},
    ],
)
def test_invalid_contracts_are_refused_by_both(patch: dict[str, Any]) -> None:
    document = {"version": 2, "agent": {"model": "m"}, "scenarios": [{"id": "s", "prompt": "p", "expect": {"refusal": False}}]}
    document.update(patch)
    with pytest.raises(ContractError):
        parse_contract_text(yaml.safe_dump(document), ROOT / "c.yml", ROOT)
    assert not VALIDATOR.is_valid(document)


@pytest.mark.parametrize(
    "document",
    [
        {"queries": []},
        {"queries": [{"expected_tools": []}]},
        {"queries": [{"query": "q", "colour": "red"}]},
        {"version": 1, "queries": [{"query": "q"}]},
        {"queries": [{"query": "q"}], "scenarios": [{"id": "s", "prompt": "p", "expect": {}}]},
    ],
    ids=["no-queries", "no-query-text", "unknown-key", "version-1", "both-kinds"],
)
def test_invalid_golden_query_files_are_refused_by_both(document: dict[str, Any]) -> None:
    with pytest.raises(ContractError):
        parse_contract_text(yaml.safe_dump(document), ROOT / "q.yml", ROOT)
    assert not VALIDATOR.is_valid(document)


def test_the_schema_names_no_placeholder_domain() -> None:
    assert "behavegate.dev" not in render()


keys = st.sampled_from(["prompt", "runs", "min_pass_rate", "tags", "expect", "colour", "gate", "max_turns"])
values = st.one_of(
    st.integers(-1, 120),
    st.floats(-1, 2, allow_nan=False),
    st.text(max_size=5),
    st.booleans(),
    st.none(),
    st.sampled_from(["rate", "lower_bound", ["x"], {"refusal": True}]),
)


@settings(max_examples=300, deadline=None)
@given(st.sampled_from([1, 2]), st.dictionaries(keys, values, max_size=4))
def test_whatever_the_reader_accepts_the_schema_accepts(version: int, extra: dict[str, Any]) -> None:
    scenario = {"id": "s", "prompt": "p", "expect": {"refusal": False}, **extra}
    document = {"version": version, "agent": {"model": "m"}, "scenarios": [scenario]}
    text = json.dumps(document)
    try:
        parse_contract_text(text, ROOT / "c.yml", ROOT)
    except ContractError:
        return
    # Judge the value the reader read: YAML 1.1 reads the JSON number 1e-12 as the
    # string "1e-12" (a float needs a dot), so the Python dict is not what was read.
    read = yaml.safe_load(text)
    assert VALIDATOR.is_valid(read), list(VALIDATOR.iter_errors(read))[:1]


def test_a_yaml_1_1_string_that_looks_like_a_number_is_judged_as_read() -> None:
    document = {"version": 1, "agent": {"model": "m"}, "scenarios": [{"id": "s", "prompt": 1e-12, "expect": {"refusal": False}}]}
    text = json.dumps(document)
    parsed = parse_contract_text(text, ROOT / "c.yml", ROOT)
    assert parsed.scenarios[0].prompt == "1e-12"
    assert VALIDATOR.is_valid(yaml.safe_load(text))


def test_the_pii_vocabulary_is_what_the_safety_scorers_implement() -> None:
    from behavegate.contract.checks import PII_DETECTORS
    from behavegate.judge.safety import DETECTORS

    assert tuple(DETECTORS) == PII_DETECTORS


def test_the_threshold_mode_flag_offers_what_the_reader_accepts() -> None:
    import argparse

    from behavegate.cli import build_parser
    from behavegate.contract.v2 import THRESHOLD_MODES

    commands = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    flag = next(a for a in commands.choices["test"]._actions if "--threshold-mode" in a.option_strings)
    assert tuple(flag.choices or ()) == THRESHOLD_MODES


def _sized(
    version: int, scenarios: int = 1, runs: int = 1, turns: int = 1, timeout: float = 30, tools: int = 1
) -> dict[str, Any]:
    declared = [{"name": f"t{i}", "description": "d", "parameters": {"type": "object"}} for i in range(tools)]
    scenario: dict[str, Any] = {"id": "s0", "prompt": "p", "expect": {"refusal": False}}
    if version == 2:
        scenario.update(runs=runs, max_turns=turns)
    return {
        "version": version,
        "agent": {"model": "m", "timeout_seconds": timeout, "tools": declared},
        "scenarios": [{**scenario, "id": f"s{i}"} for i in range(scenarios)],
    }


@pytest.mark.parametrize(
    ("version", "size"),
    [
        (2, {"scenarios": MAX_RUN_SCENARIOS + 1}),  # the editor refused 1,001 scenarios the loader reads
        (2, {"runs": MAX_RUNS}),
        (2, {"runs": MAX_RUNS + 1}),
        (2, {"turns": MAX_TURNS}),
        (2, {"turns": MAX_TURNS + 1}),
        (2, {"timeout": MAX_TIMEOUT_SECONDS}),
        (2, {"timeout": MAX_TIMEOUT_SECONDS + 0.5}),
        (1, {"tools": MAX_TOOLS}),
        (1, {"tools": MAX_TOOLS + 1}),
    ],
)
def test_the_loader_and_the_editor_schema_accept_and_refuse_the_same_sizes(version: int, size: dict[str, Any]) -> None:
    document = _sized(version, **size)
    try:
        parse_contract_text(json.dumps(document), ROOT / "c.yml", ROOT)
        loaded = True
    except ContractError:
        loaded = False
    assert VALIDATOR.is_valid(document) == loaded, size
