"""One row per check (contract/checks.py): the reader's keys and counts, the judge's registry,
the JSON Schema's ``expect`` and the docs' tables are made from the rows, and every table
still keyed by the contract key or the report's kind stays equal to them, so adding a check
cannot leave a view behind."""

from __future__ import annotations

import inspect
from pathlib import Path

import pytest

from behavegate.contract.assertion_keys import REQUESTS
from behavegate.contract.checks import CHECKS, EACH, NAMED, ONCE, Check, added_keys
from behavegate.contract.json_schema import build
from behavegate.contract.load import load_contract
from behavegate.errors import ContractError
from behavegate.judge import assertions
from behavegate.judge.assertions import REGISTRY
from behavegate.render.annotations import SEVERITY


def test_every_contract_key_the_reader_counts_has_a_judge_and_no_other() -> None:
    assert list(REQUESTS) == [entry.key for entry in REGISTRY] == [check.key for check in CHECKS]


def test_every_row_names_the_function_that_judges_it_in_one_step() -> None:
    """A row's ``judge`` is "module.function": src/behavegate/judge/<module>.py defines it."""
    judge_dir = Path(assertions.__file__).parent
    for check, entry in zip(CHECKS, REGISTRY, strict=True):
        module, _, function = check.judge.partition(".")
        source = (judge_dir / f"{module}.py").read_text(encoding="utf-8")
        assert f"\ndef {function}(" in source, check.key
        assert (entry.judge.__module__, entry.judge.__name__) == (f"behavegate.judge.{module}", function)
        assert inspect.getsourcefile(entry.judge) == str(judge_dir / f"{module}.py")


def test_rows_are_well_formed_and_version_1_comes_first_in_skylos_order() -> None:
    assert len({check.key for check in CHECKS}) == len({check.kind for check in CHECKS}) == len(CHECKS)
    assert all(check.counts in (EACH, ONCE, NAMED) and check.version in (1, 2) for check in CHECKS)
    versions = [check.version for check in CHECKS]
    assert versions == sorted(versions)
    assert [check.key for check in CHECKS if check.version == 1] == [
        "response.contains",
        "response.excludes",
        "tools.required",
        "tools.allowed",
        "tools.forbidden",
        "tools.exact_sequence",
        "tools.max_calls",
        "refusal",
        "sources.required",
    ]


def test_the_schema_of_expect_holds_exactly_the_rows_keys_of_each_version() -> None:
    for version in (1, 2):
        expect = build(version)["properties"]["scenarios"]["items"]["properties"]["expect"]
        found = set()
        for head, schema in expect["properties"].items():
            inner = schema.get("properties") if schema.get("type") == ["object", "null"] else None
            found |= {f"{head}.{name}" for name in inner} if inner is not None else {head}
        rows = {key for c in CHECKS if c.version <= version for key in (c.key, *(e.key for e in c.extras))}
        assert found == rows, version


@pytest.mark.parametrize("check", [c for c in CHECKS if c.version == 2], ids=lambda c: c.key)
def test_a_version_1_contract_refuses_every_version_2_check(tmp_path: Path, check: Check) -> None:
    """Skylos compatibility: a version-2 key is an unknown key in a version-1 contract."""
    head, *rest = check.path
    where = f"{head}: {{{rest[0]}: 1}}" if rest else f"{head}: 1"
    path = tmp_path / "contract.yml"
    path.write_text(
        f"version: 1\nagent: {{model: m}}\nscenarios:\n  - id: s\n    prompt: p\n    expect: {{{where}}}\n",
        encoding="utf-8",
    )
    with pytest.raises(ContractError, match="Unknown behavior contract key"):
        load_contract(path, tmp_path)


def test_the_reader_accepts_where_the_rows_put_each_key() -> None:
    assert added_keys("expect", 1) == ("response", "tools", "refusal", "sources")
    assert added_keys("safety", 2) == ("pii", "pii_regions", "injection")
    assert added_keys("sources", 2) == ()


def test_every_assertion_kind_has_an_annotation_rank() -> None:
    kinds = {entry.kind for entry in REGISTRY}
    assert set(SEVERITY) == kinds, f"unranked: {sorted(kinds - set(SEVERITY))}; stale: {sorted(set(SEVERITY) - kinds)}"


def test_safety_kinds_outrank_everything_else() -> None:
    safety = max(SEVERITY[kind] for kind in SEVERITY if kind.startswith("safety_"))
    assert all(rank > safety for kind, rank in SEVERITY.items() if not kind.startswith("safety_"))


def test_the_assertion_count_is_what_the_requests_list_for_every_example_contract() -> None:
    from behavegate.contract.assertion_keys import assertion_count, requests_any
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
