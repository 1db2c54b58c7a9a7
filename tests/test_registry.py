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
