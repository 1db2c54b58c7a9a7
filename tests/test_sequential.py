"""Sequential attempts (a truncated SPRT): the error rates it states, the attempts it
saves, offline consumption in file order, live scheduling against a loopback agent,
and the evidence-required rule."""

from __future__ import annotations

import json
import math
import random
import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from fake_agent import FakeAgent, Request
from helpers import contract

from behavegate.cli import main
from behavegate.errors import ContractError
from behavegate.judge import aggregate, sequential
from behavegate.model import SequentialSpec, Status

TRIALS = 3000


def _simulate(p: float, threshold: float, cap: int, seed: int) -> tuple[float, float]:
    d = sequential.design(threshold, SequentialSpec(), cap)
    rng = random.Random(seed)
    fails = used = 0
    for _ in range(TRIALS):
        statuses: list[Status] = []
        while True:
            statuses.append("pass" if rng.random() < p else "fail")
            decision = sequential.decide(statuses, d)
            if decision.by == "boundary" or len(statuses) >= cap:
                break
        fails += decision.status == "fail"
        used += decision.used
    return fails / TRIALS, used / TRIALS


def _fixed_attempts(good: float, bad: float, false_fail: float, missed: float) -> int:
    def below(n: int, p: float, k: int) -> float:
        return sum(math.comb(n, i) * p**i * (1 - p) ** (n - i) for i in range(k))

    return next(
        n for n in range(1, 200) if any(below(n, good, k) <= false_fail and 1 - below(n, bad, k) <= missed for k in range(n + 1))
    )


def test_simulation_meets_the_stated_error_rates_at_half_the_fixed_attempts() -> None:
    """95% and 70% agents against min_pass_rate 0.85, runs 40 (bench/bench_sequential.py prints the table)."""
    good_fails, good_mean = _simulate(0.95, 0.85, 40, seed=1)
    bad_fails, bad_mean = _simulate(0.70, 0.85, 40, seed=2)
    error = 2 * math.sqrt(0.01 * 0.99 / TRIALS)
    assert good_fails <= 0.01 + error
    assert bad_fails >= 0.90 - 2 * math.sqrt(0.1 * 0.9 / TRIALS)
    fixed = _fixed_attempts(0.95, 0.75, 0.01, 0.10)  # the fixed design with the same stated error rates
    assert fixed == 35
    assert max(good_mean, bad_mean) <= fixed / 2
    # the exact operating characteristics the report states agree with the simulation
    d = sequential.design(0.85, SequentialSpec(), 40)
    assert sequential.operating(d, 0.95)[0] == pytest.approx(good_fails, abs=3 * error)
    assert sequential.operating(d, 0.95)[1] == pytest.approx(good_mean, abs=0.5)


def test_incomplete_attempts_move_neither_count() -> None:
    d = sequential.design(0.85, SequentialSpec(), 40)
    clean = sequential.decide(["pass"] * 10, d)
    pairs: list[Status] = ["pass", "incomplete"]
    noisy = sequential.decide(["incomplete", *(pairs * 10)], d)
    assert (clean.status, clean.used, clean.by) == ("pass", 10, "boundary")
    assert (noisy.status, noisy.passes, noisy.failures, noisy.used) == ("pass", 10, 0, 20)
    assert sequential.decide(["incomplete"] * 40, d).status == "incomplete"
    # undecided at the cap: the fixed rule (34 of 40 needed)
    cap = sequential.decide(["pass", "pass", "pass", "pass", "fail"] * 8, d)
    assert cap.by in {"cap", "boundary"} and cap.used <= 40


def test_a_scenario_never_observed_is_incomplete_whatever_its_threshold(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "c.yml").write_text(
        textwrap.dedent("""\
        version: 2
        gates: {min_pass_rate: 0}
        agent: {model: m}
        scenarios:
          - {id: seen, prompt: p, min_pass_rate: 0, expect: {response: {contains: [x]}}}
          - {id: unseen, prompt: p, min_pass_rate: 0, runs: 3, expect: {response: {contains: [x]}}}
        """)
    )
    (tmp_path / "o.json").write_text(json.dumps({"version": 2, "scenarios": [_obs("seen", "y")]}))
    code = main(["test", "c.yml", "--observations", "o.json", "--format", "json", "--no-artifacts"])
    report = json.loads(capsys.readouterr().out)
    assert code == 0  # the floor decides the run; seen was observed (and failed, at a 0 threshold)
    assert [s["status"] for s in report["scenarios"]] == ["pass", "incomplete"]
    (tmp_path / "o.json").write_text(json.dumps({"version": 2, "scenarios": []}))
    code = main(["test", "c.yml", "--observations", "o.json", "--scenario", "unseen", "--no-artifacts"])
    assert code == 2
    assert "no attempt was observed" in capsys.readouterr().out


def _obs(scenario_id: str, response: str, **extra: Any) -> dict[str, Any]:
    return {
        "id": scenario_id,
        "response": response,
        "finish_reason": "stop",
        "response_complete": True,
        "tool_calls_complete": True,
        "tool_calls": [],
        **extra,
    }


SEQUENTIAL = """\
version: 2
defaults: {runs: 40, min_pass_rate: 0.85, sequential: true}
agent: {model: m}
scenarios:
  - {id: good, prompt: p, expect: {response: {contains: [ok]}}}
  - {id: bad, prompt: p, expect: {response: {contains: [ok]}}}
"""


def test_offline_attempts_are_consumed_in_file_order_and_the_rest_counted_unused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "c.yml").write_text(SEQUENTIAL)
    good = [_obs("good", "ok") for _ in range(30)]
    good.insert(3, {"id": "good", "error": "connection reset"})  # incomplete: used, counted neither way
    bad = [_obs("bad", "ok" if i % 2 else "no") for i in range(40)]
    (tmp_path / "o.json").write_text(json.dumps({"version": 2, "scenarios": good + bad}))
    code = main(["test", "c.yml", "--observations", "o.json", "--format", "json", "--no-artifacts"])
    report = json.loads(capsys.readouterr().out)
    assert code == 1
    first, second = (s["reliability"] for s in report["scenarios"])
    assert (first["passed"], first["failed"], first["incomplete"], first["runs"], first["unused"]) == (10, 0, 1, 11, 20)
    assert first["sequential"]["used"] == 11 and first["sequential"]["cap"] == 40
    assert first["sequential"]["decided_by"] == "boundary"
    assert len(report["scenarios"][0]["attempts"]) == 11
    assert report["scenarios"][1]["status"] == "fail" and second["runs"] < 40
    assert second["runs"] + second["unused"] == 40
    main(["test", "c.yml", "--observations", "o.json", "--no-artifacts", "--junit", "j.xml", "--summary", "s.md"])
    for shown in (capsys.readouterr().out, (tmp_path / "j.xml").read_text()):
        assert "sequential: 11 of max 40, by boundary" in shown and "0.8719*n + 1.2420" in shown
    assert "sequential: 11 of max 40, by boundary" in (tmp_path / "s.md").read_text()


def test_a_sequential_run_replays_valid(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "c.yml").write_text(SEQUENTIAL)
    rows = [_obs("good", "ok") for _ in range(40)] + [_obs("bad", "no") for _ in range(40)]
    (tmp_path / "o.json").write_text(json.dumps({"version": 2, "scenarios": rows}))
    assert main(["test", "c.yml", "--observations", "o.json", "--format", "json"]) == 1
    run_dir = json.loads(capsys.readouterr().out)["behavegate"]["run_dir"]
    assert main(["replay", run_dir]) == 0


@pytest.mark.parametrize(
    ("value", "problem"),
    [
        ("3", "scenarios[0].sequential must be true, false or a mapping"),
        ("{alpha: 0.1}", "Unknown behavior contract key: scenarios[0].sequential.alpha"),
        ("{false_fail: 0.7}", "scenarios[0].sequential.false_fail must be greater than 0 and less than 0.5"),
    ],
)
def test_malformed_sequential_names_its_path_and_line(value: str, problem: str) -> None:
    text = f"version: 2\nagent: {{model: m}}\nscenarios:\n  - id: s\n    prompt: p\n    sequential: {value}\n    expect: {{refusal: true}}\n"
    with pytest.raises(ContractError) as caught:
        contract(text)
    found = caught.value.problems[0]
    assert found.text.startswith(problem) and found.line == 6


def _answers(text: str) -> Callable[[Request], dict[str, Any]]:
    return lambda request: {"choices": [{"message": {"content": text, "tool_calls": None}, "finish_reason": "stop"}]}


@pytest.mark.parametrize(("text", "status", "expected_used"), [("ok", "pass", 10), ("no", "fail", 3)])
def test_live_attempts_stop_when_the_evidence_decides(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    text: str,
    status: str,
    expected_used: int,
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "c.yml").write_text(SEQUENTIAL.replace("  - {id: bad, prompt: p, expect: {response: {contains: [ok]}}}\n", ""))
    with FakeAgent(_answers(text)) as agent:
        code = main(["test", "c.yml", "--endpoint", agent.url, "--format", "json", "--no-artifacts", "--concurrency", "4"])
    report = json.loads(capsys.readouterr().out)
    reliability = report["scenarios"][0]["reliability"]
    assert report["scenarios"][0]["status"] == status and code == (0 if status == "pass" else 1)
    assert reliability["runs"] == expected_used == reliability["sequential"]["used"]
    # never an attempt the decision did not use, however the responses interleave
    assert len(agent.requests) == expected_used
    assert reliability["runs"] + reliability["unused"] == len(agent.requests)


def test_the_fixed_rule_is_unchanged_without_sequential() -> None:
    outcomes: list[Status] = ["pass"] * 7
    assert aggregate.scenario_status([*outcomes, "fail"], 8, 0.75) == "pass"


def test_an_undecided_scenario_with_attempts_missing_is_incomplete_in_every_view(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Two passes of a `runs: 5` sequential scenario decide nothing: the three missing
    attempts are incomplete where they stand, and every view says so (review finding)."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "c.yml").write_text(
        "version: 2\nagent: {model: m}\nscenarios:\n  - id: seq\n    runs: 5\n    min_pass_rate: 0.8\n"
        "    sequential: true\n    prompt: hi\n    expect: {response: {contains: [hello]}}\n"
    )
    row = {"id": "seq", "response": "hello", "finish_reason": "stop", "response_complete": True, "tool_calls_complete": True}
    (tmp_path / "o.json").write_text(json.dumps({"version": 2, "scenarios": [row, row]}))
    code = main(
        [
            "test",
            "c.yml",
            "--observations",
            "o.json",
            "--no-artifacts",
            "--format",
            "json",
            "--junit",
            "j.xml",
            "--sarif",
            "r.sarif",
            "--summary",
            "s.md",
        ]
    )
    report = json.loads(capsys.readouterr().out)
    reliability = report["scenarios"][0]["reliability"]
    assert code == 2 and report["scenarios"][0]["status"] == "incomplete"
    assert (reliability["passed"], reliability["incomplete"], reliability["runs"]) == (2, 3, 5)
    assert reliability["sequential"]["used"] == 2 and reliability["sequential"]["decided_by"] == "evidence"
    assert "<error" in (tmp_path / "j.xml").read_text()
    sarif = json.loads((tmp_path / "r.sarif").read_text())
    assert [r["level"] for r in sarif["runs"][0]["results"]] == ["warning"]
    assert "scenario observation is missing" in (tmp_path / "s.md").read_text()
    main(["test", "c.yml", "--observations", "o.json", "--no-artifacts"])
    assert "undecided after 2 observed of max 5" in capsys.readouterr().out


def test_the_design_line_names_the_rates_it_was_designed_for_not_rounded_to_100(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # At min_pass_rate 1.0 the good rate is kept at 99.9% (a 100% agent never fails): the
    # line must say 99.9%, not "false fail 1.00% at 100%".
    monkeypatch.chdir(tmp_path)
    (tmp_path / "c.yml").write_text(SEQUENTIAL.replace("min_pass_rate: 0.85", "min_pass_rate: 1.0"))
    good = [_obs("good", "ok") for _ in range(40)] + [_obs("bad", "ok") for _ in range(40)]
    (tmp_path / "o.json").write_text(json.dumps({"version": 2, "scenarios": good}))
    main(["test", "c.yml", "--observations", "o.json", "--no-artifacts"])
    shown = capsys.readouterr().out
    assert "at 99.9%, missed drop" in shown and "at 100%" not in shown
    assert "at 90%;" in shown  # whole percentages stay whole
