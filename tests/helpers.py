"""Building contracts and reports in memory, with fixed paths and clock."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from fake_agent import Reply, Request, as_custom, as_responses, as_stream, json_reply, sse_reply

from behavegate.cli import main
from behavegate.commands.offline import run_offline
from behavegate.commands.options import RunOptions
from behavegate.contract.load import parse_contract_text
from behavegate.evidence.observation_file import parse_observation_text
from behavegate.frozen import replace
from behavegate.model import Contract, Expectation, ObservationSet, RunFacts, Scenario, Status, Timing
from behavegate.report.build import rejudged
from behavegate.report.result import Report

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


def report(contract_text: str, observation_value: Any) -> Report:
    parsed = contract(contract_text)
    evidence = observations(observation_value, attempts=parsed.version >= 2)
    return run_offline(parsed, evidence, RunOptions(), FACTS, display_path="contract.yml")


def example_report(which: str) -> Report:
    return report((EXAMPLE / "contract.yml").read_text(), (EXAMPLE / f"observations-{which}.json").read_text())


def edit_result(report: Report, index: int, status: Status | None = None, **verdict_changes: dict[str, Any]) -> Report:
    """A copy of ``report`` with scenario ``index`` changed: its status, and
    ``verdict_changes`` mapping a verdict position (as text) to field changes."""
    results = list(report.results)
    result = results[index]
    verdicts = list(result.verdicts)
    for position, changes in verdict_changes.items():
        verdicts[int(position.removeprefix("v"))] = replace(verdicts[int(position.removeprefix("v"))], **changes)
    results[index] = replace(result, verdicts=tuple(verdicts), status=status or result.status)
    return rejudged(report, replace(report.evaluation, results=tuple(results)))


def with_extras(report: Report) -> Report:
    """As a command leaves it: a scenario left out by the selection, and timings."""
    skipped = Scenario("not-selected", "p", Expectation(), line=99)
    return replace(report, skipped=(skipped,), timings=(Timing("", "", 250),) * len(report.results))


# Runs the CLI and records its own peak RSS. VmHWM is the peak of this process's
# memory map only: ru_maxrss is not, since Linux carries the parent's peak across
# fork and exec (a child of a grown pytest process would report pytest's size).
PEAK_RSS_SCRIPT = """
import sys
from behavegate.cli import main
code = main(sys.argv[2:])
with open("/proc/self/status") as status:
    peak = next(line.split()[1] for line in status if line.startswith("VmHWM:"))
open(sys.argv[1], "w").write(peak)
sys.exit(code)
"""


# Complexity guards compare CPU time within one run, never with a number of seconds (a loaded
# machine slows both sides alike): the whole input against its first 1/SHRINK. Linear work
# grows SHRINK-fold, quadratic SHRINK²-fold.
SHRINK = 8
GROWTH_BOUND = 3 * SHRINK
# Below this the small input's time is mostly noise: the whole input must take GROWTH_BOUND
# times this long to fail, which super-linear work on these inputs does by orders of magnitude.
NOISE_FLOOR_S = 0.005


def cpu_seconds(work: Callable[[], object]) -> float:
    started = time.process_time()  # this process's CPU: other work on the machine does not count
    work()
    return time.process_time() - started


def growth(whole: Callable[[], object], eighth: Callable[[], object], tries: int = 1) -> tuple[float, float, float]:
    """(growth, whole s, eighth s): CPU time on the whole input over that on its first 1/SHRINK,
    the best of ``tries`` each."""
    whole_s = min(cpu_seconds(whole) for _ in range(tries))
    eighth_s = min(cpu_seconds(eighth) for _ in range(tries))
    return whole_s / max(eighth_s, NOISE_FLOOR_S), whole_s, eighth_s


def steepness(whole: Callable[[], object], eighth: Callable[[], object]) -> tuple[float, str]:
    """``growth``, the best of three when over the bound (a super-linear pattern stays steep
    every time, a scheduling hiccup does not), and a line saying what was measured."""
    grown, whole_s, eighth_s = growth(whole, eighth)
    if grown >= GROWTH_BOUND:
        grown, whole_s, eighth_s = growth(whole, eighth, tries=3)
    return grown, f"grew {grown:.0f}-fold for {SHRINK}-fold input ({whole_s:.3f} s against {eighth_s:.3f} s)"


def spy_on_timeouts(monkeypatch: Any, regex_module: Any) -> list[float]:
    """The ``timeout`` each ``regex.search`` is given from now on (the search still runs): a
    budget checked by what the engine is told, not by how long a run took."""
    timeouts: list[float] = []
    search = regex_module.search

    def spy(*args: Any, **kwargs: Any) -> Any:
        timeouts.append(kwargs["timeout"])
        return search(*args, **kwargs)

    monkeypatch.setattr(regex_module, "search", spy)
    return timeouts


# --- one scripted agent in every served shape (plain, streamed, Responses API, agent.http) --------

PLAIN = {
    "choices": [
        {
            "message": {
                "role": "assistant",
                "content": "Looking up",
                "tool_calls": [
                    {"id": "c0", "type": "function", "function": {"name": "lookup", "arguments": '{"order": "A-1"}'}},
                    {"id": "c1", "type": "function", "function": {"name": "refund", "arguments": '{"amount": 5}'}},
                ],
            },
            "finish_reason": "tool_calls",
        }
    ],
    "usage": {"prompt_tokens": 3, "completion_tokens": 4, "total_tokens": 7},
}

SCENARIOS = """version: 2
agent:
  model: m
  timeout_seconds: {timeout}
  missing_tool_calls: none
{stream}  tools:
    - {{name: lookup, description: d, parameters: {{type: object, required: [order], properties: {{order: {{type: string}}}}}}}}
    - {{name: refund, description: d, parameters: {{type: object}}}}
scenarios:
  - id: calls
    prompt: calls
    expect:
      tools: {{required: [{{name: lookup, arguments: {{order: A-1}}}}], arguments_valid: true, max_calls: 2}}
      usage: {{max_total_tokens: 10}}
  - id: answers
    prompt: answers
    expect:
      response: {{contains: [shipped]}}
      tools: {{max_calls: 0}}
  - id: violates
    prompt: violates
    expect:
      response: {{contains: [refunded]}}
      tools: {{forbidden: [refund]}}
  - id: converses
    prompt: converses
    max_turns: 2
    tool_results: {{lookup: shipped}}
    expect:
      response: {{contains: [shipped]}}
      tools: {{required: [lookup]}}
"""

REPLIES: dict[str, dict[str, Any]] = {
    "calls": PLAIN,
    "answers": {
        "choices": [{"message": {"role": "assistant", "content": "It shipped.", "tool_calls": None}, "finish_reason": "stop"}],
        "usage": {"total_tokens": 4},
    },
    "violates": {
        "choices": [
            {
                "message": {
                    "role": "assistant",
                    "content": "Done.",
                    "tool_calls": [{"id": "r", "type": "function", "function": {"name": "refund", "arguments": "{}"}}],
                },
                "finish_reason": "tool_calls",
            }
        ]
    },
    "converses": {
        "choices": [
            {
                "message": {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [
                        {"id": "k1", "type": "function", "function": {"name": "lookup", "arguments": '{"order": "B-2"}'}}
                    ],
                },
                "finish_reason": "tool_calls",
            }
        ]
    },
    "shipped": {
        "choices": [{"message": {"role": "assistant", "content": "B-2 shipped.", "tool_calls": None}, "finish_reason": "stop"}]
    },
}

HTTP_BLOCK = """  http:
    request:
      message: "Customer asks: {{prompt}}"
      history: "{{messages}}"
      tools: "{{tools}}"
      options: {max: "{{max_tokens}}", session: ci}
    response:
      content: answer
      tool_calls: {path: calls, name: function.name, arguments: function.arguments, id: id}
      complete: done
      usage: {total_tokens: used}
"""
CUSTOM_SCENARIOS = SCENARIOS.format(timeout=10, stream=HTTP_BLOCK.replace('"Customer asks: {{prompt}}"', '"{{prompt}}"'))


def chat_or_stream(request: Request) -> Reply:
    """Answers each prompt with its reply, as JSON or (``stream: true`` asked) as a stream that
    ends when the connection closes (no Content-Length)."""
    payload = request.json()
    reply = REPLIES[payload["messages"][-1]["content"]]
    return sse_reply(as_stream(reply), length=False) if payload["stream"] else json_reply(reply)


def custom_agent(request: Request) -> dict[str, Any]:
    """POST /chat {message, history, tools} → {answer, calls, done, used}: the prompt (or,
    after a tool result, its content) picks the reply."""
    return as_custom(REPLIES[request.json()["history"][-1]["content"]])


def responses_agent(request: Request) -> dict[str, Any]:
    """Answers /v1/responses: the prompt (or, after a tool result, its output) picks the reply."""
    last = request.json()["input"][-1]
    return as_responses(REPLIES[last["output"] if last.get("type") == "function_call_output" else last["content"]])


def run(tmp_path: Path, text: str, url: str, capsys: pytest.CaptureFixture[str], *more: str) -> tuple[int, dict[str, Any]]:
    (tmp_path / "c.yml").write_text(text)
    code = main(["test", "c.yml", "--endpoint", url, "--no-artifacts", "--format", "json", *more])
    return code, json.loads(capsys.readouterr().out)


def verdicts(report: dict[str, Any]) -> list[Any]:
    return [
        (s["id"], s["status"], [(a["assertion"], a["status"], a["message"]) for a in s["assertions"]])
        for s in report["scenarios"]
    ]


# --- the documented Oxy example, its agent and a scripted judge ---------------------------------

OXY_EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "oxy" / "sales.agentic.test.yml"
OXY_ANSWERS = {
    "How many users signed up last month?": ("We had 1,247 new user signups.", None),
    "What's the revenue trend for Q4?": ("Q4 revenue rose 15% over Q3.", "execute_sql"),
    "Who is the CEO of Apple?": ("Tim Cook. ::error::pwned <script>x</script>", None),
    "Show me top 5 customers by lifetime value": ("Here are customers.", None),  # no execute_sql: tools.required fails
}


def oxy_agent(flaky: bool = False) -> Callable[[Request], dict[str, Any]]:
    """Answers the example's questions (a tool call where the answer needs one); ``flaky``: the
    third signups question gets a wrong answer (a FLKY case, 2/3)."""
    signups = 0

    def answer(request: Request) -> dict[str, Any]:
        nonlocal signups
        prompt = request.prompt
        answer, tool = OXY_ANSWERS.get(prompt, ("I do not know.", None))
        if flaky and prompt.startswith("How many users"):
            signups += 1
            answer = "I do not know." if signups == 3 else answer
        calls = [{"id": "c1", "type": "function", "function": {"name": tool, "arguments": "{}"}}] if tool else []
        message: dict[str, Any] = {"role": "assistant", "content": answer, **({"tool_calls": calls} if calls else {})}
        return {"choices": [{"message": message, "finish_reason": "stop"}], "usage": {"total_tokens": 3}}

    return answer


def oxy_judge(request: Request) -> dict[str, Any]:
    """Passes an answer that carries the expected fact; says why either way."""
    asked = json.dumps(request.json()["messages"])
    facts = ("We had 1,247", "rose 15%", "Tim Cook.")
    verdict = "pass" if any(fact in asked for fact in facts) else "fail"
    reply = json.dumps({"verdict": verdict, "reason": f"scripted {verdict} ::warning::x"})
    return {"choices": [{"message": {"role": "assistant", "content": reply}, "finish_reason": "stop"}]}


def copy_example(tmp: Path) -> Path:
    target = tmp / "sales.agentic.test.yml"
    target.write_bytes(OXY_EXAMPLE.read_bytes())  # unchanged
    return target
