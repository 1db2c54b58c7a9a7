"""The refund agent's recorded traces (examples/refund-agent/traces/) are what the real OpenTelemetry SDK
writes, and they judge as the example's observation files do, except where a trace cannot carry the
evidence: it records no refusal flag and no cited sources, so `refusal` and `sources.required` are
incomplete from traces (the evidence rule), while a trace does record the latency the observation
files leave out (version 2: `latency.max_ms` and the `latency_p95_ms` gate)."""

from __future__ import annotations

import importlib.util
import json
import shutil
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from behavegate.cli import main

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "refund-agent"

# Assertions a trace cannot settle or settles where the observation files cannot: (scenario, assertion).
UNCARRIED = {("refund-window", "sources.required[0]"), ("delete-data-refused", "refusal")}
LATENCY = ("order-status", "latency.max_ms")

P, F, I = "pass", "fail", "incomplete"  # noqa: E741
SCENARIOS_V1 = ["order-status", "refund-window", "refund-needs-a-human", "prompt-injection-in-order-note", "delete-data-refused"]
# evidence -> (exit code, scenario statuses in SCENARIOS_V1 order)
EXPECTED_V1 = {
    ("good", "observations"): (0, [P, P, P, P, P]),
    ("good", "traces"): (2, [P, I, P, P, I]),
    ("regressed", "observations"): (1, [P, F, F, F, P]),
    ("regressed", "traces"): (1, [P, I, F, F, I]),
}
SCENARIOS_V2 = SCENARIOS_V1[:4]
# evidence -> (exit code, scenario statuses in SCENARIOS_V2 order, gates min_pass_rate and latency_p95_ms)
EXPECTED_V2 = {
    ("good", "observations"): (2, [I, P, P, P], [I, I]),
    ("good", "traces"): (2, [P, I, P, P], [I, P]),
    ("regressed", "observations"): (1, [I, F, F, F], [F, I]),
    ("regressed", "traces"): (1, [P, I, F, F], [F, P]),
}


def _recorder() -> ModuleType:
    spec = importlib.util.spec_from_file_location("refund_agent_record_traces", EXAMPLE / "record_traces.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def test_committed_traces_are_what_the_sdk_writes() -> None:
    pytest.importorskip("opentelemetry.sdk.trace", reason="the OpenTelemetry SDK is not installed (pip install -e '.[test]')")
    pytest.importorskip("opentelemetry.exporter.otlp.json.file", reason="opentelemetry-exporter-otlp-json-file is not installed")
    problems = _recorder().check()
    assert problems == [], "regenerate with .venv/bin/python examples/refund-agent/record_traces.py"


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The example in a project of its own, with version-2 copies of the observation files (below)."""
    for name in ("contract.yml", "contract-v2.yml", "observations-good.json", "observations-regressed.json"):
        shutil.copy(EXAMPLE / name, tmp_path / name)
    shutil.copytree(EXAMPLE / "traces", tmp_path / "traces")
    for evidence in ("good", "regressed"):
        # contract-v2.yml has no delete-data-refused: an observation file naming it is refused (see the last test).
        data = json.loads((EXAMPLE / f"observations-{evidence}.json").read_text(encoding="utf-8"))
        data["scenarios"] = [s for s in data["scenarios"] if s["id"] != "delete-data-refused"]
        (tmp_path / f"observations-v2-{evidence}.json").write_text(json.dumps(data), encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def judge(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, dict[str, Any]]:
    code = main(["test", *argv, "--no-artifacts", "--format", "json"])
    return code, json.loads(capsys.readouterr().out)


def assertions(report: dict[str, Any]) -> dict[tuple[str, str], dict[str, Any]]:
    return {(s["id"], a["assertion"]): a for s in report["scenarios"] for a in s["assertions"]}


def compare(observed: dict[str, Any], traced: dict[str, Any], *, latency: bool) -> None:
    """Assertion by assertion: the same verdict, except the documented differences."""
    seen, traces = assertions(observed), assertions(traced)
    assert seen.keys() == traces.keys()
    for key, a in seen.items():
        t = traces[key]
        if key in UNCARRIED:
            assert a["status"] in (P, F) and t["status"] == I, key
            assert "not observed" in t["message"], (key, t["message"])
        elif latency and key == LATENCY:
            assert a["status"] == I and "latency was not observed" in a["message"], (key, a["message"])
            assert t["status"] == P, (key, t["message"])
        else:
            assert (a["status"], a["observed"]) == (t["status"], t["observed"]), key


@pytest.mark.parametrize("evidence", ["good", "regressed"])
def test_version_1_traces_judge_as_the_observations_do(project: Path, evidence: str, capsys: pytest.CaptureFixture[str]) -> None:
    code_o, observed = judge(["contract.yml", "--observations", f"observations-{evidence}.json"], capsys)
    code_t, traced = judge(["contract.yml", "--traces", f"traces/{evidence}.jsonl"], capsys)
    compare(observed, traced, latency=False)
    for source, code, report in (("observations", code_o, observed), ("traces", code_t, traced)):
        statuses = [s["status"] for s in report["scenarios"]]
        assert ([s["id"] for s in report["scenarios"]], code, statuses) == (SCENARIOS_V1, *EXPECTED_V1[evidence, source])
    assert traced["provenance"]["traces"]["bound"] == 5 and traced["provenance"]["unbound_traces"]["count"] == 0


@pytest.mark.parametrize("evidence", ["good", "regressed"])
def test_version_2_traces_judge_as_the_observations_do(project: Path, evidence: str, capsys: pytest.CaptureFixture[str]) -> None:
    # One attempt per scenario in either file: judge one run each (the contract asks for 3 or 8).
    code_o, observed = judge(["contract-v2.yml", "--observations", f"observations-v2-{evidence}.json", "--runs", "1"], capsys)
    code_t, traced = judge(["contract-v2.yml", "--traces", f"traces/{evidence}.jsonl", "--runs", "1"], capsys)
    compare(observed, traced, latency=True)
    for source, code, report in (("observations", code_o, observed), ("traces", code_t, traced)):
        statuses = [s["status"] for s in report["scenarios"]]
        gates = [g["status"] for g in report["gates"]]
        assert [g["gate"] for g in report["gates"]] == ["min_pass_rate", "latency_p95_ms"]
        assert ([s["id"] for s in report["scenarios"]], code, statuses, gates) == (SCENARIOS_V2, *EXPECTED_V2[evidence, source])
    # The trace of the scenario version 2 dropped is listed, not judged and not dropped silently.
    unbound = traced["provenance"]["unbound_traces"]
    assert unbound["count"] == 1 and "'delete-data-refused', which the contract does not have" in unbound["shown"][0]["reason"]


def test_traces_bind_by_prompt_as_by_attribute(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code_a, by_attribute = judge(["contract.yml", "--traces", "traces/regressed.jsonl"], capsys)
    code_p, by_prompt = judge(["contract.yml", "--traces", "traces/regressed.jsonl", "--trace-bind", "prompt"], capsys)
    assert code_a == code_p == 1
    assert assertions(by_attribute) == assertions(by_prompt)


def test_version_2_refuses_an_observation_file_naming_a_scenario_it_lacks(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["test", "contract-v2.yml", "--observations", "observations-good.json", "--no-artifacts"])
    assert code == 2
    assert "observations contain scenarios not defined by the contract: ['delete-data-refused']" in capsys.readouterr().err
