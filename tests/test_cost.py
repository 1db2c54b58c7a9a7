"""The run's spend: --max-total-tokens and --max-cost stop scheduling, what is left is
incomplete (never pass), and the tokens and cost are shown in every view when priced."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from fake_agent import Request, serve
from helpers import contract, report

from behavegate.cli import main
from behavegate.commands.request import TestRequest, resolve
from behavegate.cost import attempt_cost, attempt_tokens
from behavegate.errors import UsageError
from behavegate.model import Observation, Pricing

PRICED = """
version: 2
agent:
  model: m
  pricing: {input_per_mtok: 3, output_per_mtok: 15}
scenarios:
  - id: greets
    prompt: say hello
    runs: 5
    expect: {response: {contains: [hello]}}
"""
V1 = """
version: 1
agent: {model: m}
scenarios:
  - id: greets
    prompt: say hello
    expect: {response: {contains: [hello]}}
"""


def _reply(usage: dict[str, int] | None) -> dict[str, Any]:
    body: dict[str, Any] = {"choices": [{"message": {"content": "hello"}, "finish_reason": "stop"}]}
    if usage is not None:
        body["usage"] = usage
    return body


class Counting:
    """Answers hello, reporting 1,000 prompt and 500 completion tokens a request; counts the requests."""

    def __init__(self) -> None:
        self.requests = 0
        self.usage: dict[str, int] | None = {"prompt_tokens": 1000, "completion_tokens": 500, "total_tokens": 1500}

    def __call__(self, request: Request) -> dict[str, Any]:
        self.requests += 1
        return _reply(self.usage)


COUNTING = Counting()


@pytest.fixture
def agent(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "c.yml").write_text(PRICED)
    COUNTING.requests = 0
    COUNTING.usage = {"prompt_tokens": 1000, "completion_tokens": 500, "total_tokens": 1500}
    with serve(COUNTING) as url:
        yield url


def _run(url: str, capsys: pytest.CaptureFixture[str], *more: str) -> tuple[int, dict[str, Any], str]:
    flags = ["--endpoint", url, "--no-artifacts", "--concurrency", "1", *more]
    code = main(["test", "c.yml", *flags, "--format", "json"])
    data = json.loads(capsys.readouterr().out)
    COUNTING.requests = 0
    main(["test", "c.yml", *flags, "--summary", "summary.md", "--junit", "junit.xml"])
    return code, data, capsys.readouterr().out


# --- the rule --------------------------------------------------------------------------------


def test_an_attempt_is_priced_on_its_input_and_output_tokens_else_its_total_as_output() -> None:
    price = Pricing(input_per_mtok=3, output_per_mtok=15)
    split = Observation("s", total_tokens=1500, input_tokens=1000, output_tokens=500)
    assert attempt_cost(price, split) == pytest.approx(0.0105) and attempt_tokens(split) == 1500
    assert attempt_cost(price, Observation("s", total_tokens=1000)) == pytest.approx(0.015)
    assert attempt_tokens(Observation("s", input_tokens=2, output_tokens=3)) == 5
    assert attempt_cost(price, Observation("s")) is None and attempt_tokens(Observation("s")) is None


# --- options -----------------------------------------------------------------------------------


def test_max_cost_needs_a_version_2_contract_that_prices_tokens() -> None:
    with pytest.raises(UsageError, match="version 2"):
        resolve(TestRequest(max_cost=2.0), contract(V1), offline=False)
    unpriced = contract(PRICED.replace("  pricing: {input_per_mtok: 3, output_per_mtok: 15}\n", ""))
    with pytest.raises(UsageError, match=r"agent\.pricing"):
        resolve(TestRequest(max_cost=2.0), unpriced, offline=False)
    assert resolve(TestRequest(max_cost=2.0), contract(PRICED), offline=False).max_cost == 2.0


@pytest.mark.parametrize(
    ("request_", "message"),
    [
        (TestRequest(max_cost=0.0), "--max-cost must be between"),
        (TestRequest(max_cost=float("nan")), "--max-cost must be a finite number"),
        (TestRequest(max_total_tokens=0), "--max-total-tokens must be between"),
        (TestRequest(max_total_tokens=True), "--max-total-tokens must be an integer"),
    ],
)
def test_spend_budgets_out_of_range_are_refused(request_: TestRequest, message: str) -> None:
    with pytest.raises(UsageError, match=message):
        resolve(request_, contract(PRICED), offline=False)


def test_spend_budgets_are_live_options() -> None:
    with pytest.raises(UsageError, match="live endpoint options"):
        resolve(TestRequest(max_total_tokens=10), contract(PRICED), offline=True)


def test_max_total_tokens_works_for_a_version_1_contract_and_unset_changes_nothing() -> None:
    assert resolve(TestRequest(max_total_tokens=10), contract(V1), offline=False).max_total_tokens == 10
    assert resolve(TestRequest(), contract(V1), offline=False).max_total_tokens is None


@pytest.mark.parametrize(
    ("pricing", "problem"),
    [
        ("{input_per_mtok: 3}", "agent.pricing.output_per_mtok is required"),
        ("{input_per_mtok: -1, output_per_mtok: 1}", "agent.pricing.input_per_mtok must be between 0"),
        ("{input_per_mtok: 1, output_per_mtok: 1, currency: EUR}", "currency"),
    ],
)
def test_bad_pricing_is_a_contract_error_naming_its_path(pricing: str, problem: str) -> None:
    from behavegate.errors import ContractError

    with pytest.raises(ContractError) as raised:
        contract(PRICED.replace("{input_per_mtok: 3, output_per_mtok: 15}", pricing))
    assert problem in str(raised.value) or any(problem in str(p) for p in getattr(raised.value, "problems", ()))


def test_pricing_is_a_version_2_key() -> None:
    from behavegate.errors import ContractError

    with pytest.raises(ContractError):
        contract(V1.replace("agent: {model: m}", "agent: {model: m, pricing: {input_per_mtok: 1, output_per_mtok: 1}}"))


# --- through the command line ------------------------------------------------------------------


def test_the_token_budget_stops_scheduling_and_the_rest_is_incomplete_with_the_reason(
    agent: str, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    code, data, table = _run(agent, capsys, "--max-total-tokens", "3000")
    assert code == 2 and COUNTING.requests == 2  # 1,500 + 1,500 reached the budget: three attempts never sent
    attempts = data["scenarios"][0]["attempts"]
    assert [a["status"] for a in attempts] == ["pass", "pass", "incomplete", "incomplete", "incomplete"]
    reason = attempts[2]["observation"]["error"]
    assert reason.startswith("not sent: the run's token budget (--max-total-tokens 3,000) was spent (3,000 tokens reported)")
    usage = data["behavegate"]["usage"]
    assert usage["total_tokens"] == 3000 and usage["input_tokens"] == 2000 and usage["output_tokens"] == 1000
    assert usage["cost_usd"] == pytest.approx(0.021) and usage["not_sent"] == 3 and usage["unreported"] == 0
    assert data["provenance"]["request_limits"]["max_total_tokens"] == 3000
    line = "Usage: cost $0.0210; 3,000 tokens (2,000 in, 1,000 out); budget --max-total-tokens 3,000; 3 attempts not sent"
    assert line in table
    assert line in (tmp_path / "summary.md").read_text()
    assert "2/5 40% [12-77%] (3 not sent)" in table  # what was judged, and what never was
    junit = (tmp_path / "junit.xml").read_text()
    assert 'name="behavegate.usage.cost_usd" value="0.021"' in junit


def test_the_cost_budget_stops_scheduling(agent: str, capsys: pytest.CaptureFixture[str]) -> None:
    code, data, _ = _run(agent, capsys, "--max-cost", "0.03")
    attempts = data["scenarios"][0]["attempts"]
    assert code == 2 and [a["status"] for a in attempts].count("pass") == 3  # $0.0105 each: the third passes $0.03
    assert "the run's cost budget (--max-cost 0.03) was spent ($0.0315 reported)" in attempts[3]["observation"]["error"]


def test_a_priced_run_without_a_budget_shows_its_cost_and_passes(agent: str, capsys: pytest.CaptureFixture[str]) -> None:
    code, data, table = _run(agent, capsys)
    assert code == 0 and data["behavegate"]["usage"]["cost_usd"] == pytest.approx(0.0525)
    assert "Usage: cost $0.0525; 7,500 tokens (5,000 in, 2,500 out)" in table


def test_unreported_usage_is_named_and_the_budget_cannot_count_it(agent: str, capsys: pytest.CaptureFixture[str]) -> None:
    COUNTING.usage = None
    code, data, table = _run(agent, capsys, "--max-total-tokens", "3000")
    assert code == 0 and data["behavegate"]["usage"]["unreported"] == 5  # every attempt sent: nothing to count
    assert "usage not reported by 5 of 5 attempts: not counted, so the budget could not count them" in table


def test_the_cost_output_is_written_for_a_priced_run(agent: str, capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    main(["test", "c.yml", "--endpoint", agent, "--no-artifacts", "--github-output", "out.txt"])
    assert "0.052500" in (tmp_path / "out.txt").read_text()


def test_an_unpriced_report_without_budgets_keeps_its_shape() -> None:
    shown = report(V1, json.dumps({"version": 1, "scenarios": [{"id": "greets", "response": "hello"}]}))
    assert shown.derived.usage is None and "usage" not in shown.to_json()["behavegate"]


@pytest.mark.parametrize(("name", "flag"), [("MAX-TOTAL-TOKENS", "--max-total-tokens"), ("MAX-COST", "--max-cost")])
def test_the_budget_inputs_reach_the_cli_and_empty_means_no_flag(name: str, flag: str) -> None:
    import itertools

    from behavegate.github.action import Inputs, build_argv

    assert (flag, "2") in list(itertools.pairwise(build_argv(Inputs({f"INPUT_{name}": " 2 "}), {})))
    assert flag not in build_argv(Inputs({f"INPUT_{name}": ""}), {}) and flag not in build_argv(Inputs({}), {})


def test_a_suite_shares_the_token_budget_across_its_contracts(
    agent: str, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    (tmp_path / "d.yml").write_text(PRICED.replace("greets", "waves"))
    flags = ["--endpoint", agent, "--no-artifacts", "--concurrency", "1", "--max-total-tokens", "9000"]
    code = main(["test", "c.yml", "d.yml", *flags, "--html", "r.html"])
    table = capsys.readouterr().out
    assert code == 2 and COUNTING.requests == 6  # 5 from the first contract, 1 from the second: 9,000 tokens
    assert "not sent: the run's token budget (--max-total-tokens 9,000) was spent (9,000 tokens reported)" in table
    assert "Usage: cost $0.0105; 1,500 tokens (1,000 in, 500 out)" in (tmp_path / "r.html").read_text()


def test_an_in_process_agent_is_held_to_the_token_budget_too(tmp_path: Path) -> None:
    from behavegate.api import Reply, run_callable

    asked: list[int] = []

    def agent(messages: Any, tools: Any) -> Reply:
        asked.append(1)
        return Reply(answer="hello", total_tokens=400)

    shown = run_callable(contract(PRICED), agent, concurrency=1, max_total_tokens=1000)
    statuses = [a.status for a in shown.results[0].attempts]
    assert len(asked) == 3 and statuses == ["pass", "pass", "pass", "incomplete", "incomplete"]
    usage = shown.derived.usage
    assert usage is not None and usage.total_tokens == 1200 and usage.cost == pytest.approx(0.018)  # total priced as output
    assert shown.provenance["request_limits"]["max_total_tokens"] == 1000


def test_a_version_1_run_is_held_to_the_token_budget(agent: str, capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    two = V1 + V1.split("scenarios:\n")[1].replace("greets", "waves")
    (tmp_path / "c.yml").write_text(two)
    code = main(
        [
            "test",
            "c.yml",
            "--endpoint",
            agent,
            "--no-artifacts",
            "--concurrency",
            "1",
            "--max-total-tokens",
            "1",
            "--format",
            "json",
        ]
    )
    data = json.loads(capsys.readouterr().out)
    assert code == 2 and COUNTING.requests == 1
    assert [s["status"] for s in data["scenarios"]] == ["pass", "incomplete"]
    assert data["scenarios"][1]["observation"]["error"].startswith("not sent: the run's token budget")
    assert "input_tokens" not in data["scenarios"][0]["observation"]  # version 1's observation keeps skylos's keys
    assert data["behavegate"]["usage"]["not_sent"] == 1 and data["behavegate"]["usage"]["cost_usd"] is None


@pytest.mark.parametrize(
    ("not_sent", "shown"),
    [(2, "not sent: 0 of 2 judged"), (1, "unknown: 0 of 2 judged, 1 not sent"), (0, "unknown: 0 of 2 judged")],
)
def test_a_scenario_with_no_attempt_judged_shows_no_pass_rate(not_sent: int, shown: str) -> None:
    """Issue 40: attempts never sent (or never judged) are unknown, never a 0% pass rate."""
    from behavegate.judge.aggregate import reliability
    from behavegate.render.table import pass_rate

    unknown = reliability(["incomplete", "incomplete"], 2, 1.0, "rate")
    assert pass_rate(unknown, not_sent) == shown
    assert "%" not in pass_rate(unknown, not_sent)
