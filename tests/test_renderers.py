"""Golden files for every renderer, on the refund-agent example."""

from __future__ import annotations

import pytest
from conftest import Golden
from helpers import edit_result, example_report

from behavegate.render import json as json_renderer
from behavegate.render import table as table_renderer


@pytest.mark.parametrize("which", ["good", "regressed"])
def test_json_report_matches_golden(which: str, golden: Golden) -> None:
    golden.check(f"report-{which}.json", json_renderer.render(example_report(which)) + "\n")


@pytest.mark.parametrize("which", ["good", "regressed"])
def test_table_matches_golden(which: str, golden: Golden) -> None:
    golden.check(f"table-{which}.txt", table_renderer.render(example_report(which)) + "\n")


def test_table_shows_failed_assertions_with_contract_lines() -> None:
    text = table_renderer.render(example_report("regressed"))
    assert "FAIL tools.forbidden[0] [contract.yml:" in text
    assert "forbidden tool 'issue_refund' was called" in text


def test_table_keeps_control_characters_inert() -> None:
    report = edit_result(example_report("regressed"), 0, "fail", v0={"status": "fail", "message": "bad\x1b[31m\r::error::x"})
    text = table_renderer.render(report)
    assert "\x1b" not in text and "\r" not in text
