"""The four facts a contract judges on a trace (tool calls in order, failed calls, steps, final
answer) are what `traces inspect` says for every recorded fixture, format and dialect, or it
says the file cannot show them; and a contract judges each file as those facts say."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from behavegate.cli import main

ROOT = Path(__file__).resolve().parents[1]
MATRIX = ROOT / "tests" / "fixtures" / "trace_matrix"
FACTS: dict[str, Any] = json.loads((MATRIX / "facts.json").read_text(encoding="utf-8"))
MATRIX_FILES = sorted(name for name in FACTS if name.startswith("trace_matrix/"))
PROMPT = "Cancel order 7731 and refund it to my card."  # every matrix file's run


def _scorer() -> ModuleType:
    spec = importlib.util.spec_from_file_location("score_trace_facts", ROOT / "scripts" / "score_trace_facts.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def _inspect(capsys: pytest.CaptureFixture[str]) -> Any:
    def inspect(path: Path) -> dict[str, Any]:
        capsys.readouterr()
        assert main(["traces", "inspect", "--format", "json", str(path.relative_to(ROOT))]) == 0
        data: dict[str, Any] = json.loads(capsys.readouterr().out)
        return data

    return inspect


def test_every_fact_of_every_fixture_is_right_or_said_to_be_not_shown(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(ROOT)
    scorer = _scorer()
    rows = scorer.score(_inspect(capsys))
    right, total = sum(r["right"] for r in rows), sum(r["total"] for r in rows)
    assert {r["file"]: r["wrong"] for r in rows if r["wrong"]} == {}
    assert right == total and right >= scorer.THRESHOLD * total
    by_format: dict[str, list[int]] = {}
    for row in rows:
        counts = by_format.setdefault(row["format"], [0, 0])
        counts[0] += row["right"]
        counts[1] += row["total"]
    assert all(r >= scorer.THRESHOLD * t for r, t in by_format.values()), by_format
    page = (ROOT / "docs" / "traces.md").read_text(encoding="utf-8")
    assert scorer.markdown(rows) in page, "docs/traces.md: paste the table scripts/score_trace_facts.py prints"


def test_the_matrix_has_every_format_and_dialect_and_each_not_shown_fact() -> None:
    formats = {FACTS[name]["format"] for name in MATRIX_FILES}
    assert formats == {"otlp-json", "otlp-jsonl", "console", "proto3-json", "assay"}
    pairs = {(FACTS[name]["format"], FACTS[name]["traces"][0]["dialect"]) for name in MATRIX_FILES}
    for fmt in ("otlp-json", "otlp-jsonl", "console", "proto3-json"):
        for dialect in ("genai-latest", "genai-1.28-1.36", "genai-1.27", "openinference", "openllmetry"):
            assert (fmt, dialect) in pairs
    on_disk = {f"trace_matrix/{p.name}" for p in MATRIX.iterdir() if p.name != "facts.json"}
    assert on_disk == set(MATRIX_FILES)
    assert {name for name in FACTS if name.startswith("traces/")} == {
        f"traces/{p.name}" for p in (MATRIX.parent / "traces").iterdir() if p.name != "expected.json"
    }
    hidden = {fact for name in FACTS if not name.startswith("_") for t in FACTS[name]["traces"] for fact in t["not_shown"]}
    assert hidden == {"tool_errors", "final_answer"}
    assert sum(1 for name in FACTS if not name.startswith("_")) >= 12


def test_a_guess_is_scored_wrong() -> None:
    scorer = _scorer()
    truth = {"tool_calls": ["a", "b"], "parallel": [[0, 1]], "tool_errors": 1, "steps": 3, "final_answer": "x"}
    shown = {"tool_calls": ["b", "a"], "tool_errors": 1, "steps": 3, "final_answer": "x", "not_shown": {}}
    assert all(scorer.fact_right(f, {**truth, "not_shown": []}, shown) for f in scorer.NAMES)
    # The dialect cannot show the errors: a count there is a guess, "not shown" is right.
    assert not scorer.fact_right("tool_errors", {**truth, "not_shown": ["tool_errors"]}, shown)
    said = {**shown, "tool_errors": None, "not_shown": {"tool_errors": "not shown by this dialect: no status"}}
    assert scorer.fact_right("tool_errors", {**truth, "not_shown": ["tool_errors"]}, said)
    # Saying "not shown" for a fact the file shows is wrong too, and so is another order outside a group.
    assert not scorer.fact_right("tool_errors", {**truth, "not_shown": []}, said)
    assert not scorer.fact_right("tool_calls", {**truth, "parallel": [], "not_shown": []}, shown)


def _contract(truth: dict[str, Any]) -> str:
    names = sorted(set(truth["tool_calls"]))
    tools = "".join(f"    - {{name: {n}, description: x, parameters: {{type: object}}}}\n" for n in names)
    calls = ", ".join(f"{{name: {n}}}" for n in truth["tool_calls"])
    return (
        f"version: 2\nagent:\n  tools:\n{tools}scenarios:\n  - id: cancel-order\n    prompt: {PROMPT}\n    expect:\n"
        f"      tools:\n        sequence: {{mode: exact, calls: [{calls}]}}\n        no_errors: true\n"
        f"      steps: {{max: {truth['steps']}}}\n      response: {{contains: [{json.dumps(truth['final_answer'])}]}}\n"
    )


@pytest.mark.parametrize("name", MATRIX_FILES)
def test_a_contract_judges_each_matrix_file_as_its_facts_say(
    name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    truth = FACTS[name]["traces"][0]
    (tmp_path / "contract.yml").write_text(_contract(truth), encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    trace = ROOT / "tests" / "fixtures" / name
    (tmp_path / trace.name).write_bytes(trace.read_bytes())
    # Bound by the prompt: the trace whose agent span was never exported lost its scenario attribute with it.
    main(["test", "contract.yml", "--traces", trace.name, "--trace-bind", "prompt", "--report", "report.json", "--no-artifacts"])
    capsys.readouterr()
    report = json.loads((tmp_path / "report.json").read_text(encoding="utf-8"))
    got = {a["assertion"]: a["status"] for a in report["scenarios"][0]["assertions"]}
    errors = "incomplete" if "tool_errors" in truth["not_shown"] else ("fail" if truth["tool_errors"] else "pass")
    answer = "incomplete" if "final_answer" in truth["not_shown"] else "pass"
    want = {"tools.sequence": "pass", "tools.no_errors": errors, "steps.max": "pass", "response.contains[0]": answer}
    assert got == want
