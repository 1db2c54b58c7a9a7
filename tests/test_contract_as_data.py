"""The contract as data (contract/as_data.py), which shard reports carry so a merge
need not load the YAML again: it decodes to the very contract that was loaded, for
every contract the project ships or tests, and is refused when it does not fit."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
from helpers import EXAMPLE

from behavegate.contract.as_data import _text, contract_data, contract_from_data
from behavegate.contract.load import load_contract
from behavegate.errors import BehavegateError
from behavegate.model import Contract

TESTS = Path(__file__).resolve().parent
RICH = TESTS / "fixtures" / "rich-contract"
CONTRACTS = sorted(
    [*(TESTS / "conformance" / "cases").glob("*/contract.yml"), *EXAMPLE.parent.glob("**/*.yml"), RICH / "contract.yml"]
)


def loaded(path: Path) -> Contract | None:
    try:
        return load_contract(path, path.parent)
    except BehavegateError:
        return None  # a case of a contract error: nothing to carry


def same(back: Contract | None, contract: Contract) -> bool:
    """Equal, and equal as text, which also holds the fields equality leaves out (lines, digests)."""
    return back is not None and back == contract and _text((back,)) == _text((contract,))


def test_every_shipped_and_tested_contract_decodes_to_the_contract_loaded() -> None:
    decoded = 0
    for path in CONTRACTS:
        contract = loaded(path)
        if contract is None:
            continue
        data = contract_data(contract, range(len(contract.scenarios)))
        assert data is not None, path
        assert same(contract_from_data([data], contract.path, contract.project_root), contract), path
        decoded += 1
    assert decoded > 300


def test_a_contract_using_every_key_and_an_include_decodes_from_its_parts_in_any_order() -> None:
    contract = loaded(RICH / "contract.yml")
    assert contract is not None and len(contract.scenarios) > 3 and set(contract.included) == {"lib.yml"}
    count = len(contract.scenarios)
    parts = [contract_data(contract, range(start, count, 3)) for start in (2, 0, 1)]
    assert all(part is not None for part in parts)
    assert same(contract_from_data(parts, contract.path, contract.project_root), contract)


@pytest.fixture
def rich(tmp_path: Path) -> tuple[Contract, dict[str, Any]]:
    for name in ("contract.yml", "lib.yml"):
        (tmp_path / name).write_text((RICH / name).read_text())
    contract = loaded(tmp_path / "contract.yml")
    assert contract is not None
    data = contract_data(contract, range(len(contract.scenarios)))
    assert data is not None
    return contract, data


def test_data_is_refused_once_the_contract_or_an_included_file_changed(rich: tuple[Contract, dict[str, Any]]) -> None:
    contract, data = rich
    assert same(contract_from_data([data], contract.path, contract.project_root), contract)
    library = contract.path.parent / "lib.yml"
    library.write_text(library.read_text() + "# edited\n")
    assert contract_from_data([data], contract.path, contract.project_root) is None
    library.unlink()
    assert contract_from_data([data], contract.path, contract.project_root) is None, "an include gone is a change too"
    contract.path.write_text(contract.path.read_text() + "# edited\n")
    assert contract_from_data([data], contract.path, contract.project_root) is None


def test_data_that_is_not_whole_or_not_consistent_is_refused(rich: tuple[Contract, dict[str, Any]]) -> None:
    contract, data = rich
    count = len(contract.scenarios)
    head = contract_data(contract, range(0, count - 1))
    assert head is not None
    tail = contract_data(contract, [count - 1])
    assert tail is not None
    assert same(contract_from_data([head, tail], contract.path, contract.project_root), contract)
    other = dict(tail, scenarios=[[count - 2, tail["scenarios"][0][1]]])
    hostile: list[object] = [
        [head],  # a scenario missing
        [head, other],  # one position twice, with different scenarios
        [head, dict(tail, count=count + 1)],
        [head, dict(tail, contract={**data["contract"], "version": 1})],
        [head, dict(tail, format=2)],
        [head, dict(tail, scenarios=[["0", {}]])],
        [head, dict(tail, scenarios=[[count - 1, {"id": 5}]])],
        [head, None],
        [head, "text"],
        [],
    ]
    for parts in hostile:
        assert contract_from_data(parts, contract.path, contract.project_root) is None, parts  # type: ignore[arg-type]


def test_data_nested_too_deep_to_compare_is_refused_not_a_traceback(rich: tuple[Contract, dict[str, Any]]) -> None:
    contract, data = rich

    def deep() -> Any:
        value: Any = "x"
        for _ in range(5_000):
            value = {"model": value}
        return value

    parts = [dict(data, contract={**data["contract"], "agent": deep()}) for _ in range(2)]  # equal, not the same
    assert contract_from_data(parts, contract.path, contract.project_root) is None


def _scenario_edit(key: str, value: Any) -> Any:
    def edit(data: dict[str, Any]) -> None:
        data["scenarios"][0][1][key] = value

    return edit


def _gates_edit(key: str, value: Any) -> Any:
    def edit(data: dict[str, Any]) -> None:
        data["contract"]["gates"] = {**data["contract"].get("gates", {}), key: value}

    return edit


@pytest.mark.parametrize(
    "edit",
    [
        _scenario_edit("runs", 10**12),  # the merge's partition would list every attempt: memory without end
        _scenario_edit("runs", 0),
        _scenario_edit("runs", -3),
        _scenario_edit("max_turns", 10**9),
        _scenario_edit("max_turns", 0),
        _scenario_edit("sequential", {"false_fail": 0}),  # ZeroDivisionError in the sequential design
        _scenario_edit("sequential", {"false_fail": 1, "missed_drop": 1, "margin": 1}),  # math domain error
        _scenario_edit("sequential", {"margin": -0.5}),
        _scenario_edit("min_pass_rate", 2.0),
        _scenario_edit("min_pass_rate", -0.5),
        _scenario_edit("gate", "nonsense"),
        _scenario_edit("id", "../../etc/passwd"),
        _scenario_edit("id", "x" * 97),
        _scenario_edit("tags", ["ok", "x\n::error::pwned"]),  # tags name gates and rows: the loader's ids
        _gates_edit("threshold_mode", "bogus"),
        _gates_edit("formula", "bogus"),
        _gates_edit("min_pass_rate", 7),
        _gates_edit("min_score", -1),
        _gates_edit("latency_p95_ms", -5),
        lambda data: data["contract"].__setitem__("version", 3),
        lambda data: data["scenarios"].append([len(data["scenarios"]), {**data["scenarios"][0][1]}]),  # an id twice
    ],
)
def test_data_no_contract_could_load_to_is_refused(rich: tuple[Contract, dict[str, Any]], edit: Any) -> None:
    """The loader bounds what a merge computes with (runs, turns, rates, the sequential
    design's error rates, ids, gate modes); data outside those bounds is no contract a
    shard loaded, so the merge loads the YAML instead of computing with it (never a
    traceback, never unbounded memory)."""
    contract, data = rich
    edited = copy.deepcopy(data)
    edit(edited)
    if len(edited["scenarios"]) > len(data["scenarios"]):
        edited["count"] += 1
    assert contract_from_data([edited], contract.path, contract.project_root) is None
