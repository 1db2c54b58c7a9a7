"""Building contracts and reports in memory, with fixed paths and clock."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from behavegate.commands.offline import run_offline
from behavegate.commands.options import RunOptions
from behavegate.contract.load import parse_contract_text
from behavegate.evidence.observation_file import parse_observation_text
from behavegate.model import Contract, ObservationSet
from behavegate.report.build import RunFacts

ROOT = Path("/project")
EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "refund-agent"
FACTS = RunFacts(
    run_id="20260101T000000Z-00000000",
    started_at="2026-01-01T00:00:00.000000Z",
    ended_at="2026-01-01T00:00:00.001000Z",
    duration_ms=1,
    max_scenarios=25,
    max_seconds=300.0,
)


def contract(text: str) -> Contract:
    return parse_contract_text(text, ROOT / "contract.yml", ROOT)


def observations(value: Any, attempts: bool = False) -> ObservationSet:
    text = value if isinstance(value, str) else json.dumps(value)
    return parse_observation_text(text, ROOT / "observations.json", attempts=attempts)


def report(contract_text: str, observation_value: Any) -> dict[str, Any]:
    parsed = contract(contract_text)
    evidence = observations(observation_value, attempts=parsed.version >= 2)
    return run_offline(parsed, evidence, RunOptions(), FACTS, display_path="contract.yml")


def example_report(which: str) -> dict[str, Any]:
    return report((EXAMPLE / "contract.yml").read_text(), (EXAMPLE / f"observations-{which}.json").read_text())
