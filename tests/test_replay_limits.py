"""Replay limits scale with the run: an honest large run replays valid, a tampered one never does."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from behavegate.cli import main
from behavegate.limits import V2_MAX_REPORT_BYTES
from behavegate.report.artifacts import CEILING, RunLimits, run_limits, write_run
from behavegate.report.layout import EVENTS, RESULTS, STATE, SUMMARY
from behavegate.report.replay import validate_run


def _honest_run(root: Path, scenarios: int, runs: int, capsys: pytest.CaptureFixture[str]) -> Path:
    lines = ["version: 2", "agent: {model: m}", f"defaults: {{runs: {runs}}}", "scenarios:"]
    lines += [
        f"  - {{id: s{i}, prompt: p, expect: {{response: {{contains: [works]}}, refusal: false}}}}" for i in range(scenarios)
    ]
    attempts = [
        {"id": f"s{i}", "response": "it works", "response_complete": True, "refusal": False}
        for i in range(scenarios)
        for _ in range(runs)
    ]
    (root / "contract.yml").write_text("\n".join(lines) + "\n")
    (root / "obs.json").write_text(json.dumps({"version": 2, "scenarios": attempts}))
    code = main(["test", "contract.yml", "--observations", "obs.json", "--max-scenarios", "1000", "--format", "json"])
    report = json.loads(capsys.readouterr().out)
    assert code == 0, report
    return root / str(report["behavegate"]["run_dir"])


@pytest.mark.parametrize(("scenarios", "runs"), [(100, 8), pytest.param(1000, 1, marks=pytest.mark.slow)])
def test_an_honest_large_run_replays_valid_and_any_tampering_is_invalid(
    scenarios: int, runs: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    run_dir = _honest_run(tmp_path, scenarios, runs, capsys)
    assert main(["replay", str(run_dir)]) == 0, capsys.readouterr().out
    for name in (EVENTS, STATE, SUMMARY, RESULTS):
        original = (run_dir / name).read_bytes()
        (run_dir / name).write_bytes(original[: len(original) // 2])  # truncated
        assert main(["replay", str(run_dir)]) == 1, name
        (run_dir / name).write_bytes(original + b" ")  # an extra byte
        assert main(["replay", str(run_dir)]) == 1, name
        (run_dir / name).write_bytes(original)
    assert main(["replay", str(run_dir)]) == 0


def test_counts_inflated_in_summary_raise_no_limit_past_the_ceiling_and_are_invalid(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    run_dir = _honest_run(tmp_path, 3, 2, capsys)
    summary = json.loads((run_dir / SUMMARY).read_text())
    assert run_limits({**summary, "phase_count": 10**9, "decision_count": 10**9}, 10**12) == CEILING
    summary["phase_count"] = 1000
    (run_dir / SUMMARY).write_text(json.dumps(summary, indent=2, sort_keys=True) + "\n")
    assert "artifact_digest_mismatch" in {i.code for i in validate_run(run_dir)}


def test_a_small_run_padded_past_its_declared_limit_is_refused_before_parsing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    run_dir = _honest_run(tmp_path, 2, 1, capsys)
    limits = run_limits(json.loads((run_dir / SUMMARY).read_text()), (run_dir / RESULTS).stat().st_size)
    (run_dir / EVENTS).write_bytes(b"[" + b"0," * (limits.max_bytes(EVENTS) // 2) + b"0]\n")
    issues = validate_run(run_dir)
    assert [(i.code, i.message) for i in issues] == [("artifact_too_large", f"{EVENTS} exceeds {limits.max_bytes(EVENTS)} bytes")]


def test_extra_values_beyond_what_a_canonical_file_holds_are_invalid(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    run_dir = _honest_run(tmp_path, 2, 1, capsys)
    size = (run_dir / STATE).stat().st_size
    (run_dir / STATE).write_text("[" + "0," * (size // 2) + "0]\n")  # same order of size, dense values
    assert [i.code for i in validate_run(run_dir)] == ["artifact_invalid_json"]


def test_the_report_limit_is_the_report_writers_own_cap() -> None:
    # A run directory may hold a version-2 suite's report: the ceiling is version 2's cap.
    assert CEILING.max_bytes(RESULTS) == V2_MAX_REPORT_BYTES
    assert RunLimits(0, 0, 0).max_bytes(RESULTS) == V2_MAX_REPORT_BYTES


def test_the_writer_refuses_a_run_it_could_not_replay(tmp_path: Path) -> None:
    summary = json.dumps({"phase_count": 1, "decision_count": 1}) + "\n"
    limit = run_limits(json.loads(summary), 2).max_bytes(STATE)
    files = {SUMMARY: summary, RESULTS: "{}", EVENTS: "{}\n", STATE: " " * (limit + 1)}
    with pytest.raises(OSError, match=r"exceed their replay limits: state\.json"):
        write_run(tmp_path, "run", files)
    assert not (tmp_path / ".behavegate").exists()
