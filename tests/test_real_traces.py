"""behavegate's verdicts on traces that REAL instrumentation packages wrote (tests/fixtures/real/traces/,
made by scripts/real_software/traces.py: OpenInference, OpenLLMetry, openai-v2, pydantic-ai, LiteLLM's
callback, the mcp SDK) equal the right ones in expected.json, derived from what the agent really did.

One test per (file, scenario), so each failure names itself. The ones today's readers get wrong are
xfail(strict=True) with what is not read: the suite stays green, and each turns red once it is fixed
(then drop it from KNOWN_WRONG). Reads only committed files; the judging runs in-process.
"""

from __future__ import annotations

import contextlib
import functools
import importlib.util
import io
import json
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from behavegate.cli import main

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "tests" / "fixtures" / "real" / "traces"
EXPECTED: dict[str, Any] = json.loads((FIXTURES / "expected.json").read_text(encoding="utf-8"))
TRUTH: dict[str, Any] = json.loads((FIXTURES / "truth.json").read_text(encoding="utf-8"))["files"]

# (file, scenario) -> what today's readers do not read: nothing now. A reader that regresses fails its
# case; a dialect found wrong again goes here with the reason, as a strict xfail.
KNOWN_WRONG: dict[tuple[str, str], str] = {}


def _score() -> ModuleType:
    path = ROOT / "scripts" / "real_software" / "score.py"
    spec = importlib.util.spec_from_file_location("real_software_score", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


SCORE = _score()


@functools.cache
def _verdicts(file: str) -> dict[str, dict[str, str]]:
    """scenario -> assertion -> status, judging the file once per test process."""
    out = io.StringIO()
    with contextlib.chdir(ROOT), contextlib.redirect_stdout(out):
        main([*SCORE.judge_args(file, EXPECTED[file]), "--no-artifacts"])
    verdicts: dict[str, dict[str, str]] = SCORE.verdicts(json.loads(out.getvalue()))
    return verdicts


def _cases() -> list[Any]:
    cases = []
    for file, entry in EXPECTED.items():
        for scenario in entry["scenarios"]:
            reason = KNOWN_WRONG.get((file, scenario))
            marks = [pytest.mark.xfail(strict=True, reason=reason)] if reason else []
            cases.append(pytest.param(file, scenario, id=f"{file}::{scenario}", marks=marks))
    return cases


@pytest.mark.parametrize(("file", "scenario"), _cases())
def test_real_trace_verdicts_are_the_right_ones(file: str, scenario: str) -> None:
    right = EXPECTED[file]["scenarios"][scenario]
    got = _verdicts(file)
    mismatches = SCORE.compare(file, {"scenarios": {scenario: right}}, got)
    lines = [
        f"{'FALSE PASS ' if m.false_pass else 'MISSED FAIL ' if m.missed_fail else ''}{m.assertion}: expected {m.expected}, got {m.got}"
        for m in mismatches
    ]
    assert not lines, f"{file} {scenario}:\n" + "\n".join(lines)
    assert sorted(got.get(scenario, {})) == sorted(right), "the contract's assertions are the ones expected.json lists"


def test_expected_and_truth_cover_every_trace_file_and_only_those() -> None:
    files = {p.name for p in FIXTURES.iterdir()} - {"contract.yml", "expected.json", "truth.json"}
    assert set(EXPECTED) == set(TRUTH) == files
    for file, truth in TRUTH.items():
        scenarios = [t["scenario"] for t in truth["traces"]]
        assert scenarios == list(EXPECTED[file]["scenarios"]) or sorted(scenarios) == sorted(EXPECTED[file]["scenarios"])
        assert truth["versions"], f"{file}: which packages wrote it"


def test_every_incomplete_verdict_says_why() -> None:
    for file, entry in EXPECTED.items():
        for scenario, assertions in entry["scenarios"].items():
            for assertion, right in assertions.items():
                assert (right["verdict"] == "incomplete") == bool(right.get("why")), (file, scenario, assertion)


def test_the_known_wrong_are_real_cases() -> None:
    cases = {(f, s) for f, e in EXPECTED.items() for s in e["scenarios"]}
    assert set(KNOWN_WRONG) <= cases
