"""Contract version 2 end to end: reading, offline attempts, live repeated runs,
scripted tool results, request parameters and the missing-tool-calls statement."""

from __future__ import annotations

import json
import shutil
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fake_agent import FakeAgent, Request, json_reply
from helpers import EXAMPLE, ROOT, spy_on_timeouts

from behavegate.cli import main
from behavegate.contract.load import parse_contract_text
from behavegate.errors import ContractError
from behavegate.judge.user_regex import search_all
from behavegate.limits import REGEX_BUDGET_MS


def load(text: str) -> Any:
    return parse_contract_text(text, ROOT / "contract.yml", ROOT)


V2_HEAD = textwrap.dedent("""\
    version: 2
    agent:
      model: m
      tools:
        - {name: a, description: d, parameters: {type: object, properties: {x: {type: integer}}, required: [x]}}
    """)  # 5 lines: a scenario list after it starts at line 7


def test_version_1_never_accepts_version_2_keys() -> None:
    with pytest.raises(ContractError, match=r"Unknown behavior contract key: scenarios\[0\]\.runs"):
        load(
            textwrap.dedent("""\
                version: 1
                agent: {}
                scenarios:
                  - id: s
                    prompt: p
                    runs: 3
                    expect: {refusal: false}
                """)
        )


@pytest.mark.parametrize(
    ("scenario", "message", "line"),
    [
        (
            """\
            - id: s                       # line 7
              prompt: p
              expect:
                response:
                  matches: ['(unclosed']  # line 11
            """,
            "is not a valid regular expression",
            11,
        ),
        (
            """\
            - id: s
              prompt: p
              runs: 0                     # line 9
              expect: {refusal: false}
            """,
            "runs must be between 1 and 100",
            9,
        ),
        (
            """\
            - id: s
              prompt: p
              min_pass_rate: 1.5          # line 9
              expect: {refusal: false}
            """,
            "must be between 0 and 1",
            9,
        ),
        (
            """\
            - id: s
              prompt: p
              messages: [{role: user, content: hi}]  # line 9
              expect: {refusal: false}
            """,
            "prompt or messages, not both",
            9,
        ),
        (
            """\
            - id: s
              prompt: p
              expect:
                tools:
                  sequence: {mode: sideways, calls: [a]}  # line 11
            """,
            "must be one of",
            11,
        ),
        (
            """\
            - id: s
              prompt: p
              expect:
                tools:
                  calls: {a: {min: 3, max: 1}}  # line 11
            """,
            "min cannot exceed max",
            11,
        ),
        (
            """\
            - id: s
              prompt: p
              expect:
                safety: {pii: [passport]}  # line 10
            """,
            "must be one of",
            10,
        ),
        (
            """\
            - id: s
              prompt: p
              expect:
                tools: {set: [zzz]}
            """,
            "unavailable to the scenario",
            None,
        ),
    ],
)
def test_version_2_problems_name_path_and_line(scenario: str, message: str, line: int | None) -> None:
    text = V2_HEAD + "scenarios:\n" + textwrap.dedent(scenario)
    with pytest.raises(ContractError) as error:
        load(text)
    problem = next(p for p in error.value.problems if message in p.text)
    if line is not None:
        assert problem.line == line
        assert text.splitlines()[line - 1].endswith(f"# line {line}")  # the marked line, counted by the test


def test_agent_parameters_cannot_override_the_request() -> None:
    with pytest.raises(ContractError, match=r"agent.parameters cannot set \['model', 'stream'\]"):
        load(
            textwrap.dedent("""\
                version: 2
                agent:
                  model: m
                  parameters: {temperature: 0, model: x, stream: true}
                scenarios:
                  - {id: s, prompt: p, expect: {refusal: false}}
                """)
        )


def test_defaults_apply_unless_a_scenario_overrides_them() -> None:
    contract = load(
        V2_HEAD
        + textwrap.dedent("""\
            defaults: {runs: 4, min_pass_rate: 0.5}
            scenarios:
              - {id: a, prompt: p, expect: {refusal: false}}
              - {id: b, prompt: p, runs: 2, expect: {refusal: false}}
            """)
    )
    assert [(s.runs, s.min_pass_rate) for s in contract.scenarios] == [(4, 0.5), (2, 0.5)]


def write(tmp: Path, contract: str, observations: dict[str, Any] | None = None) -> None:
    (tmp / "contract.yml").write_text(contract)
    if observations is not None:
        (tmp / "obs.json").write_text(json.dumps(observations))


def obs(scenario_id: str, response: str, calls: list[dict[str, Any]] | None = None, **extra: Any) -> dict[str, Any]:
    return {
        "id": scenario_id,
        "response": response,
        "finish_reason": "stop",
        "response_complete": True,
        "tool_calls_complete": True,
        "tool_calls": calls or [],
        **extra,
    }


def run_json(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, dict[str, Any]]:
    code = main(["test", *args, "--format", "json", "--no-artifacts"])
    return code, json.loads(capsys.readouterr().out)


def test_offline_attempts_give_a_pass_rate_with_an_interval(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    attempts = [obs("s", "yes it works"), obs("s", "no"), obs("s", "yes"), obs("s", "yes!")]
    contract = textwrap.dedent("""\
        version: 2
        agent: {model: m}
        scenarios:
          - id: s
            prompt: p
            runs: 4
            min_pass_rate: 0.75
            expect: {response: {icontains: ['YES']}}
        """)
    write(tmp_path, contract, {"version": 2, "scenarios": attempts})
    code, report = run_json(["contract.yml", "--observations", "obs.json"], capsys)
    scenario = report["scenarios"][0]
    assert code == 0 and scenario["status"] == "pass"
    assert scenario["reliability"]["passed"] == 3 and scenario["reliability"]["flaky"] is True
    assert [a["status"] for a in scenario["attempts"]] == ["pass", "fail", "pass", "pass"]
    low, high = scenario["reliability"]["interval"]
    assert 0.3 < low < 0.75 < high <= 1
    code, report = run_json(["contract.yml", "--observations", "obs.json", "--runs", "6"], capsys)
    assert code == 2 and report["scenarios"][0]["status"] == "incomplete"  # two attempts never observed


def test_v2_observations_carry_latency_usage_steps_and_tool_errors(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    contract = V2_HEAD + textwrap.dedent("""\
        gates: {latency_p95_ms: 300}
        scenarios:
          - id: s
            prompt: p
            expect:
              latency: {max_ms: 500}
              usage: {max_total_tokens: 100}
              steps: {max: 2}
              tools: {no_errors: true, arguments_valid: true}
        """)
    write(
        tmp_path,
        contract,
        {
            "version": 2,
            "scenarios": [
                obs(
                    "s",
                    "ok",
                    [{"name": "a", "arguments": {"x": "not an int"}}],
                    latency_ms=450,
                    total_tokens=120,
                    steps=3,
                    tool_errors=["timeout"],
                )
            ],
        },
    )
    code, report = run_json(["contract.yml", "--observations", "obs.json"], capsys)
    verdicts = {a["assertion"]: a for a in report["scenarios"][0]["assertions"]}
    assert code == 1
    assert verdicts["latency.max_ms"]["status"] == "pass"
    assert verdicts["usage.max_total_tokens"]["message"] == "expected total tokens at most 100, observed 120"
    assert verdicts["steps.max"]["status"] == "fail"
    assert verdicts["tools.no_errors"]["observed"] == {"failed": [{"call_index": 0, "error": "timeout"}]}
    assert "x: 'not an int' is not of type 'integer'" in verdicts["tools.arguments_valid"]["message"]
    assert report["gates"] == [
        {
            "gate": "latency_p95_ms",
            "status": "fail",
            "message": "expected latency p95 at most 300 ms, observed 450 ms over 1 attempts",
            "expected": 300.0,
            "observed": {"attempts": 1, "p95": 450},
        }
    ]


@pytest.mark.parametrize(
    ("usage", "code", "status", "observed"),
    [
        pytest.param({}, 2, "incomplete", None, id="no usage: not observed"),
        pytest.param({"input_tokens": 600, "output_tokens": 300}, 1, "fail", 900, id="input + output, no total: their sum"),
        pytest.param({"total_tokens": 700, "input_tokens": 600, "output_tokens": 300}, 0, "pass", 700, id="the total first"),
    ],
)
def test_the_tokens_judged_are_the_total_else_input_plus_output(
    usage: dict[str, int],
    code: int,
    status: str,
    observed: int | None,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.chdir(tmp_path)
    contract = textwrap.dedent("""\
        version: 2
        agent: {model: m}
        scenarios:
          - {id: s, prompt: p, expect: {usage: {max_total_tokens: 800}}}
        """)
    write(tmp_path, contract, {"version": 2, "scenarios": [{**obs("s", "ok"), **usage}]})
    exit_code, report = run_json(["contract.yml", "--observations", "obs.json"], capsys)
    verdict = report["scenarios"][0]["assertions"][0]
    assert (exit_code, verdict["status"], verdict["observed"]) == (code, status, observed)
    if status == "incomplete":
        assert verdict["message"] == "the endpoint reported no token usage"


def test_golden_queries_filter_by_category_and_gate_on_accuracy(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(EXAMPLE.parents[1])
    args = ["examples/golden-queries/queries.yml", "--observations", "examples/golden-queries/observations.json"]
    code, report = run_json(args, capsys)
    assert code == 0 and report["gates"][0]["status"] == "pass"  # 3 of 4 reach the 75% floor
    assert [s["id"] for s in report["scenarios"]][:2] == ["query-001", "query-002"]
    code, report = run_json([*args, "--tag", "policy"], capsys)
    assert code == 1 and [s["id"] for s in report["scenarios"]] == ["query-002", "refund-escalation"]
    code, report = run_json([*args, "--min-pass-rate", "1"], capsys)
    assert code == 1


GOLDEN_WITHOUT_TOOLS = """\
agent: {model: m}
queries:
  - query: "What is the capital of France?"
    expected_tools: []
  - query: "Where is my order?"
    expected_tools: [lookup_order]
"""


def test_golden_queries_expecting_tools_need_agent_tools_declared() -> None:
    """Only agent.tools is sent: a file that expects tool calls without declaring any
    is refused at its expected_tools line, naming both ways out."""
    with pytest.raises(ContractError) as caught:
        parse_contract_text(GOLDEN_WITHOUT_TOOLS, ROOT / "q.yml", ROOT)
    problem = caught.value.problems[0]
    assert problem.path == "queries[1].expected_tools" and problem.line == 6
    assert "agent.tools is not declared" in problem.text and "`tools: []`" in problem.text
    own = parse_contract_text(GOLDEN_WITHOUT_TOOLS.replace("{model: m}", "{model: m, tools: []}"), ROOT / "q.yml", ROOT)
    assert own.agent.tools == ()
    declared = GOLDEN_WITHOUT_TOOLS.replace(
        "{model: m}", "{model: m, tools: [{name: lookup_order, description: d, parameters: {type: object}}]}"
    )
    assert [t.name for t in parse_contract_text(declared, ROOT / "q.yml", ROOT).agent.tools] == ["lookup_order"]
    no_tools_expected = GOLDEN_WITHOUT_TOOLS.replace("[lookup_order]", "[]")
    assert len(parse_contract_text(no_tools_expected, ROOT / "q.yml", ROOT).scenarios) == 2


# --- live -----------------------------------------------------------------------------------


def scripted_answer(request: Request) -> dict[str, Any]:
    """Calls ``lookup`` first, answers from the tool result once it gets one; omits
    ``tool_calls`` when it calls no tool (as llama.cpp's server does)."""
    body = request.json()
    tool_messages = [m for m in body["messages"] if m["role"] == "tool"]
    message: dict[str, Any]
    if "plain" in body["messages"][-1]["content"]:
        message = {"role": "assistant", "content": "just text"}
        finish = "stop"
    elif not tool_messages:
        message = {
            "role": "assistant",
            "content": "",
            "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "lookup", "arguments": '{"q": "A-1"}'}}],
        }
        finish = "tool_calls"
    else:
        message = {"role": "assistant", "content": f"result was {tool_messages[-1]['content']}", "tool_calls": []}
        finish = "stop"
    return {"choices": [{"message": message, "finish_reason": finish}], "usage": {"total_tokens": 42}}


@pytest.fixture
def scripted_agent() -> Iterator[FakeAgent]:
    # No Content-Type, as the hand-written server this replaces sent none.
    with FakeAgent(lambda request: json_reply(scripted_answer(request), content_type=None)) as agent:
        yield agent


@pytest.fixture
def scripted(scripted_agent: FakeAgent) -> str:
    return scripted_agent.url


MULTI = """version: 2
agent:
  model: m
  parameters: {temperature: 0, seed: 7}
  missing_tool_calls: {missing}
  tools:
    - {name: lookup, description: d, parameters: {type: object}}
scenarios:
  - id: multi
    prompt: find A-1
    max_turns: 3
    tool_results: {lookup: {status: shipped}}
    expect:
      tools: {sequence: {mode: exact, calls: [{name: lookup, arguments: {q: A-1}}]}}
      response: {contains: [shipped]}
      steps: {max: 3}
      usage: {max_total_tokens: 100}
  - id: plain
    prompt: plain answer please
    expect:
      tools: {max_calls: 0}
"""


def test_scripted_tool_results_continue_the_conversation(
    scripted_agent: FakeAgent, scripted: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    write(tmp_path, MULTI.replace("{missing}", "none"))
    code, report = run_json(["contract.yml", "--endpoint", scripted], capsys)
    assert code == 0, json.dumps(report["scenarios"], indent=1)
    multi = report["scenarios"][0]
    assert multi["observation"]["steps"] == 3 and multi["observation"]["tool_errors"] == [None]
    second = next(b for b in scripted_agent.bodies if any(m["role"] == "tool" for m in b["messages"]))
    assert second["messages"][-1] == {"role": "tool", "tool_call_id": "c1", "content": '{"status": "shipped"}'}
    assert all(b["temperature"] == 0 and b["seed"] == 7 and b["stream"] is False for b in scripted_agent.bodies)
    assert report["behavegate"]["tool_calls_key"] == "none"


def test_without_the_statement_an_omitted_tool_calls_key_proves_nothing(
    scripted: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    write(tmp_path, MULTI.replace("{missing}", "unobserved"))
    code, report = run_json(["contract.yml", "--endpoint", scripted, "--scenario", "plain"], capsys)
    assert code == 2 and report["scenarios"][0]["status"] == "incomplete"


def test_repeated_live_runs_give_the_same_verdict(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    sys.path.insert(0, str(EXAMPLE))
    import agent  # type: ignore[import-not-found]

    server, url = agent.serve(0)
    try:
        shutil.copy(EXAMPLE / "contract-v2.yml", tmp_path / "contract.yml")
        monkeypatch.chdir(tmp_path)
        verdicts = []
        for _ in range(3):
            code, report = run_json(["contract.yml", "--endpoint", url, "--runs", "8", "--concurrency", "8"], capsys)
            verdicts.append((code, [(s["id"], s["status"], s["reliability"]["passed"]) for s in report["scenarios"]]))
        assert verdicts[0][0] == 0 and all(v == verdicts[0] for v in verdicts)
        assert all(passed == 8 for _, _, passed in verdicts[0][1])
    finally:
        server.shutdown()
        sys.path.remove(str(EXAMPLE))


def test_recorded_live_attempts_replay_offline_to_identical_verdicts(
    scripted: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    write(tmp_path, MULTI.replace("{missing}", "none").replace("max_turns: 3", "max_turns: 3\n    runs: 3"))
    code, live = run_json(["contract.yml", "--endpoint", scripted, "--save-observations", "recorded.json"], capsys)
    recorded = json.loads((tmp_path / "recorded.json").read_text())
    assert recorded["version"] == 2 and len(recorded["scenarios"]) == 4  # 3 attempts + 1
    replay_code, offline = run_json(["contract.yml", "--observations", "recorded.json"], capsys)

    def verdicts(report: dict[str, Any]) -> list[Any]:
        return [
            (s["id"], s["status"], [(a["status"], [x["status"] for x in a["assertions"]]) for a in s.get("attempts", [])])
            for s in report["scenarios"]
        ]

    assert replay_code == code and verdicts(offline) == verdicts(live)
    assert (
        offline["scenarios"][0]["attempts"][0]["observation"]["response"]
        == live["scenarios"][0]["attempts"][0]["observation"]["response"]
    )


# --- user regexes: a time budget per attempt ---------------------------------------------

NEAR_MISS = "a" * 30 + "b"


def test_a_catastrophic_regex_is_incomplete_and_the_run_goes_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    contract = textwrap.dedent("""\
        version: 2
        agent: {model: m}
        scenarios:
          - {id: slow, prompt: p, expect: {response: {matches: ['(a|a)+$'], not_matches: ['b$']}}}
          - {id: fine, prompt: p, expect: {response: {matches: ['^a+b$'], not_matches: ['c']}}}
          - {id: wrong, prompt: p, expect: {response: {matches: ['^b']}}}
        """)
    write(
        tmp_path, contract, {"version": 2, "scenarios": [obs("slow", NEAR_MISS), obs("fine", NEAR_MISS), obs("wrong", NEAR_MISS)]}
    )
    code, report = run_json(["contract.yml", "--observations", "obs.json"], capsys)  # `re` would need minutes
    slow, fine, wrong = report["scenarios"]
    assert code == 1 and [slow["status"], fine["status"], wrong["status"]] == ["incomplete", "pass", "fail"]
    timed_out, not_run = slow["assertions"]
    assert (
        timed_out["status"] == "incomplete" and timed_out["message"] == f"regex exceeded its time budget of {REGEX_BUDGET_MS} ms"
    )
    assert not_run["status"] == "incomplete" and "budget" in not_run["message"]  # the budget is shared by the attempt


@pytest.mark.parametrize("pattern", [r"(a+)+$", r"(a|a)+$", r"(a|aa)+$", r"((a+)+)+c", r"(\w+\s?)+$b", r"^(a+)+\1c"])
def test_a_backtracking_pattern_is_decided_or_incomplete_within_its_budget(pattern: str, monkeypatch: pytest.MonkeyPatch) -> None:
    import regex

    timeouts = spy_on_timeouts(monkeypatch, regex)
    (result,) = search_all([pattern], NEAR_MISS, budget_ms=100)
    assert result.match_at is None  # none of these matches: a finished search says so, an unfinished one is incomplete
    assert len(timeouts) == 1 and 0 < timeouts[0] <= 0.1  # the engine is held to the budget: no clock read here


def test_patterns_share_one_budget_the_engine_is_held_to(monkeypatch: pytest.MonkeyPatch) -> None:
    import regex

    timeouts = spy_on_timeouts(monkeypatch, regex)
    search_all(["a", "b", "c"], NEAR_MISS, budget_ms=100)
    assert len(timeouts) == 3 and 0.1 >= timeouts[0] > timeouts[1] > timeouts[2] > 0  # what is left of one deadline


def test_patterns_are_checked_by_the_engine_that_runs_them() -> None:
    from behavegate.contract.rules import Bad
    from behavegate.contract.v2_values import pattern

    assert pattern(r"(?<=a+)b", "p") == r"(?<=a+)b"  # regex accepts variable-width lookbehind
    with pytest.raises(Bad):
        pattern("(unclosed", "p")
