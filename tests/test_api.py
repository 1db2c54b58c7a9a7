"""The Python API: the command line's verdicts from Python, and an in-process agent
held to live mode's budgets (a callable that raises, hangs, loops or floods ends as
an incomplete attempt; the run goes on)."""

from __future__ import annotations

import asyncio
import importlib
import json
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from helpers import EXAMPLE

import behavegate
from behavegate import api
from behavegate.api import BehavegateError, Call, Reply, evaluate, load_contract, run_callable, run_live
from behavegate.cli import main

sys.path.insert(0, str(EXAMPLE))
_example: Any = importlib.import_module("in_process_agent")
answer, answer_regressed = _example.answer, _example.answer_regressed

V2 = """version: 2
agent:
  model: m
  timeout_seconds: {timeout}
  tools:
    - {{name: lookup_order, description: d, parameters: {{type: object}}}}
scenarios:
{scenarios}
"""


def v2(tmp_path: Path, scenarios: str, timeout: float = 30) -> api.Contract:
    (tmp_path / "contract.yml").write_text(V2.format(timeout=timeout, scenarios=scenarios))
    return load_contract(tmp_path / "contract.yml", root=tmp_path)


def simple(ids: list[str]) -> str:
    return "\n".join(f"  - id: {i}\n    prompt: {i}\n    expect: {{response: {{contains: [ok]}}}}" for i in ids)


def test_all_names_exactly_the_public_names_of_the_module() -> None:
    # (pytest's assertion rewriting adds "@"-names to the modules of a pytest plugin's package)
    public = {name for name in vars(api) if not name.startswith(("_", "@"))}
    assert public == set(api.__all__)
    assert sorted(api.__all__) == api.__all__


def test_the_package_ships_its_type_information() -> None:
    assert (Path(behavegate.__file__).parent / "py.typed").exists()


def test_the_example_in_process_agent_passes_and_its_regression_fails_like_the_live_one() -> None:
    contract = load_contract(EXAMPLE / "contract.yml")
    good, bad = run_callable(contract, answer), run_callable(contract, answer_regressed)
    assert good.status == "pass" and good.provenance["kind"] == "in_process_callable"
    assert bad.status == "fail"
    assert [r.scenario.id for r in bad.results if r.status == "fail"] == ["refund-needs-a-human"]
    failed = [v.assertion for v in bad.results[2].verdicts if v.status == "fail"]
    assert failed == ["tools.required[0]", "tools.forbidden[0]"]


def test_evaluate_gives_the_command_lines_verdicts_on_an_observation_file(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(EXAMPLE.parents[1])  # the command line's project: the current directory
    contract = load_contract(EXAMPLE / "contract.yml")
    report = evaluate(contract, EXAMPLE / "observations-regressed.json")
    code = main(
        [
            "test",
            str(EXAMPLE / "contract.yml"),
            "--observations",
            str(EXAMPLE / "observations-regressed.json"),
            "--format",
            "json",
            "--no-artifacts",
        ]
    )
    cli = json.loads(capsys.readouterr().out)
    assert code == 1 and report.status == cli["status"] == "fail"
    assert [(r.scenario.id, r.status) for r in report.results] == [(s["id"], s["status"]) for s in cli["scenarios"]]
    assert report.to_json()["scenarios"] == cli["scenarios"]


def test_evaluate_takes_observations_by_scenario_id_as_attempts(tmp_path: Path) -> None:
    contract = v2(tmp_path, simple(["a"]))
    ok, bad = (
        api.Observation("a", response="ok", response_complete=True),
        api.Observation("a", response="no", response_complete=True),
    )
    report = evaluate(contract, {"a": [ok, bad]}, runs=2)
    assert [a.status for a in report.results[0].attempts] == ["pass", "fail"]
    assert report.provenance["kind"] == "python_observations"


def test_a_callable_that_raises_leaves_that_attempt_incomplete_with_its_type_and_message(tmp_path: Path) -> None:
    contract = v2(tmp_path, simple(["boom", "fine"]))

    def agent(messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> str:
        if messages[-1]["content"] == "boom":
            raise KeyError("secret\nline")
        return "ok"

    report = run_callable(contract, agent)
    boom, fine = report.results
    assert boom.status == "incomplete" and fine.status == "pass"
    assert boom.observation is not None and boom.observation.error == "agent callable raised KeyError: " + repr("secret\nline")
    assert "Traceback" not in json.dumps(report.to_json())


def test_a_hanging_sync_callable_ends_as_an_incomplete_attempt_at_its_timeout(tmp_path: Path) -> None:
    contract = v2(tmp_path, simple(["hang", "fine"]), timeout=0.5)

    release, hung_to_the_end = threading.Event(), threading.Event()

    def agent(messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> str:
        if messages[-1]["content"] == "hang" and not release.wait(60):
            hung_to_the_end.set()
        return "ok"

    try:
        report = run_callable(contract, agent)
        assert not hung_to_the_end.is_set()  # the run did not wait for the agent: an order, not seconds
    finally:
        release.set()
    hang, fine = report.results
    assert hang.status == "incomplete" and fine.status == "pass"
    assert hang.observation is not None and "did not return before its deadline" in str(hang.observation.error)


def test_an_async_callable_that_blocks_its_event_loop_still_ends_the_attempt(tmp_path: Path) -> None:
    contract = v2(tmp_path, simple(["spin"]), timeout=0.5)

    release, blocked_to_the_end = threading.Event(), threading.Event()

    async def agent(messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> str:
        await asyncio.sleep(0)
        if not release.wait(30):  # blocks whatever loop runs it
            blocked_to_the_end.set()
        return "ok"

    try:
        report = run_callable(contract, agent)
        assert not blocked_to_the_end.is_set() and report.results[0].status == "incomplete"
    finally:
        release.set()


def test_an_async_callable_answers_like_a_sync_one(tmp_path: Path) -> None:
    contract = v2(tmp_path, simple(["a", "b"]))

    async def agent(messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> Reply:
        await asyncio.sleep(0.01)
        return Reply("ok", total_tokens=7)

    report = run_callable(contract, agent, runs=2)
    assert report.status == "pass"
    assert {a.observation.total_tokens for r in report.results for a in r.attempts if a.observation} == {7}


def test_a_callable_that_keeps_calling_tools_stops_at_max_turns_and_sees_the_scripted_results(tmp_path: Path) -> None:
    scenario = """  - id: loop
    prompt: where is A-1?
    tool_results: {lookup_order: {status: shipped}}
    max_turns: 3
    expect: {tools: {max_calls: 10}}"""
    contract = v2(tmp_path, scenario)
    seen: list[list[dict[str, Any]]] = []

    def agent(messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> Reply:
        seen.append(messages)
        return Reply(None, [Call("lookup_order", {"order_id": "A-1"})], finish_reason="tool_calls")

    report = run_callable(contract, agent)
    assert len(seen) == 3
    assert seen[1][-1] == {"role": "tool", "tool_call_id": "call_0", "content": '{"status": "shipped"}'}
    observation = report.results[0].observation
    assert observation is not None and observation.tool_calls is not None and len(observation.tool_calls) == 3


def test_a_huge_reply_is_incomplete_like_a_huge_http_body(tmp_path: Path) -> None:
    contract = v2(tmp_path, simple(["big"]))
    report = run_callable(contract, lambda messages, tools: "ok" * 2_000_000)
    assert report.results[0].status == "incomplete"
    assert (
        report.results[0].observation is not None
        and report.results[0].observation.error == "agent endpoint response is too large"
    )


def test_an_unreadable_reply_is_incomplete_and_named(tmp_path: Path) -> None:
    contract = v2(tmp_path, simple(["a", "b"]))
    report = run_callable(
        contract,
        lambda messages, tools: (
            object() if messages[-1]["content"] == "a" else Reply("ok", [{"name": "x", "arguments": {1j: 2}}])
        ),
    )
    errors = [r.observation.error for r in report.results if r.observation]
    assert errors[0] == "agent callable returned object: expected a Reply, a str or a chat completion dict"
    assert str(errors[1]).startswith("agent callable reply is not JSON: TypeError")


def test_the_run_budget_covers_every_attempt_of_an_in_process_run(tmp_path: Path) -> None:
    contract = v2(tmp_path, simple(["a", "b", "c", "d"]))

    def slow(messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> str:
        time.sleep(0.4)
        return "ok"

    report = run_callable(contract, slow, concurrency=1, max_seconds=1)
    statuses = [r.status for r in report.results]
    assert statuses[:2] == ["pass", "pass"] and "incomplete" in statuses[2:]
    assert any("not sent: the run's time budget" in str(r.observation.error) for r in report.results if r.observation)


def test_run_live_calls_nothing_the_person_running_it_did_not_allow() -> None:
    contract = load_contract(EXAMPLE / "contract.yml")
    with pytest.raises(BehavegateError, match="allow-contract-endpoint"):
        run_live(contract)
    with pytest.raises(BehavegateError):
        run_live(contract, endpoint="http://example.com/v1/chat/completions")


def test_options_are_checked_as_the_command_line_checks_them(tmp_path: Path) -> None:
    contract = v2(tmp_path, simple(["a"]))
    with pytest.raises(BehavegateError, match="--concurrency must be between"):
        run_callable(contract, lambda m, t: "ok", concurrency=0)
    with pytest.raises(BehavegateError, match=r"unknown scenario ids: \['zz'\]"):
        run_callable(contract, lambda m, t: "ok", scenarios=["zz"])
    with pytest.raises(BehavegateError, match="agent must be callable"):
        run_callable(contract, "not an agent")  # type: ignore[arg-type]
