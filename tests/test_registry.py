"""One registry of assertions: every table keyed by the contract key or the
report's kind stays equal to it, so adding a check cannot leave a view behind."""

from __future__ import annotations

from behavegate.contract.assertion_keys import REQUESTS
from behavegate.judge.assertions import REGISTRY
from behavegate.render.annotations import SEVERITY


def test_every_contract_key_the_reader_counts_has_a_judge_and_no_other() -> None:
    assert list(REQUESTS) == [entry.key for entry in REGISTRY]


def test_every_assertion_kind_has_an_annotation_rank() -> None:
    kinds = {entry.kind for entry in REGISTRY}
    assert set(SEVERITY) == kinds, f"unranked: {sorted(kinds - set(SEVERITY))}; stale: {sorted(set(SEVERITY) - kinds)}"


def test_safety_kinds_outrank_everything_else() -> None:
    safety = max(SEVERITY[kind] for kind in SEVERITY if kind.startswith("safety_"))
    assert all(rank > safety for kind, rank in SEVERITY.items() if not kind.startswith("safety_"))


def test_the_assertion_count_is_what_the_requests_list_for_every_example_contract() -> None:
    from pathlib import Path

    from behavegate.contract.assertion_keys import assertion_count, requests_any
    from behavegate.contract.load import load_contract
    from behavegate.judge.assertions import requested_assertions

    root = Path(__file__).resolve().parents[1]
    contracts = [p for p in root.glob("examples/**/*.yml") if "scenarios:" in p.read_text(encoding="utf-8")]
    assert len(contracts) >= 3
    for path in contracts:
        for scenario in load_contract(path, root).scenarios:
            listed = sum(len(requested(scenario.expect)) for requested in REQUESTS.values())
            assert assertion_count(scenario.expect) == listed, f"{path}: {scenario.id}"
            assert requests_any(scenario.expect) == (listed > 0)
            every = [(e.key, a, spec) for e in REGISTRY for a, spec in e.requested(scenario.expect)]
            assert [(e.key, a, spec) for e, a, spec in requested_assertions(scenario.expect)] == every
