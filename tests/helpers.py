"""Building contracts and reports in memory, with fixed paths and clock."""

from __future__ import annotations

import json
import re
import textwrap
import time
from collections.abc import Callable, Mapping, Sequence
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
from behavegate.render import json as json_renderer
from behavegate.report.baseline import compare
from behavegate.report.baseline_file import parse_baseline
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


# --- a baseline comparison with one of each kind of change (test_baseline and the views) --------

BASELINE_CONTRACT = """\
version: 2
defaults: {runs: 8, min_pass_rate: 0.5}
agent:
  tools:
    - {name: lookup_order, description: Fetch an order, parameters: {type: object}}
    - {name: issue_refund, description: Pay money back, parameters: {type: object}}
scenarios:
  - id: greets
    prompt: Say hello.
    expect:
      response: {icontains: [hello]}
  - id: looks-up
    prompt: Where is order A-1?
    expect:
      tools:
        required: [{name: lookup_order}]
        forbidden: [issue_refund]
  - id: policy
    runs: 1
    min_pass_rate: 1
    prompt: How long do I have?
    expect:
      response: {contains: ["30 days"]}
"""


def attempt(scenario: str, *, ok: bool = True, calls: tuple[str, ...] = (), error: str | None = None) -> dict[str, Any]:
    responses = {"greets": ("Hello!", "Hi."), "looks-up": ("On its way.", "On its way."), "policy": ("30 days.", "14 days.")}
    entry: dict[str, Any] = {
        "id": scenario,
        "response": responses[scenario][0 if ok else 1],
        "finish_reason": "stop",
        "response_complete": True,
        "tool_calls_complete": True,
        "tool_calls": [{"name": c} for c in calls],
    }
    if error:
        entry = {"id": scenario, "error": error}
    return entry


def evidence(
    greets: int = 8, looks_up: int = 8, policy: bool = True, *, incomplete: int = 0, drop: tuple[str, ...] = ()
) -> dict[str, Any]:
    """Observations: ``greets`` of 8 attempts say hello; ``looks_up`` of 8 look the order up
    (the others refund it); ``incomplete`` of the greets attempts failed to answer."""
    scenarios = [attempt("greets", ok=i < greets) for i in range(8 - incomplete)]
    scenarios += [attempt("greets", error="timeout") for _ in range(incomplete)]
    scenarios += [attempt("looks-up", calls=("lookup_order",) if i < looks_up else ("issue_refund",)) for i in range(8)]
    scenarios.append(attempt("policy", ok=policy))
    return {"version": 2, "scenarios": [s for s in scenarios if s["id"] not in drop]}


def baseline_of(main_report: Report) -> Any:
    return parse_baseline(json_renderer.render(main_report), "main.json")


def gated(
    main_evidence: dict[str, Any],
    pr_evidence: dict[str, Any],
    *,
    fail_on: str = "regression",
    contract: str = BASELINE_CONTRACT,
    pr_contract: str | None = None,
) -> Report:
    current = report(pr_contract or contract, pr_evidence)
    return current.gated(compare(baseline_of(report(contract, main_evidence)), current), fail_on)


RETIRED = """\
  - id: retired
    runs: 1
    min_pass_rate: 1
    prompt: Old question.
    expect:
      response: {contains: [old]}
"""


def showcase() -> Report:
    """A pull request against main with one of each: a significant drop, a drop within
    sampling error with a changed tool sequence, a fix and a removed scenario."""
    main_evidence = evidence(greets=8, looks_up=7, policy=False)
    main_evidence["scenarios"].append(
        {
            "id": "retired",
            "response": "old",
            "finish_reason": "stop",
            "response_complete": True,
            "tool_calls_complete": True,
            "tool_calls": [],
        }
    )
    return gated(
        main_evidence,
        evidence(greets=2, looks_up=3, policy=True),
        contract=BASELINE_CONTRACT + RETIRED,
        pr_contract=BASELINE_CONTRACT,
    )


# --- large and version-2 reports for the renderers ----------------------------------------------


def huge_report(scenarios: int) -> Report:
    base = with_extras(example_report("regressed"))
    template = base.results[2]
    verdicts = tuple(replace(v, message="x" * 5_000 + " ::error::" + "`" * 7) for v in template.verdicts)
    results = tuple(
        replace(template, scenario=replace(template.scenario, id=f"scenario-{index:05d}"), verdicts=verdicts)
        for index in range(scenarios)
    )
    return replace(rejudged(base, replace(base.evaluation, results=results)), timings=None)


def golden_queries_report() -> Report:
    folder = EXAMPLE.parent / "golden-queries"
    return report((folder / "queries.yml").read_text(), (folder / "observations.json").read_text())


# --- forged workflow commands and what the runner would execute ---------------------------------

SEPARATORS = ["\r", "\n", "\r\n", "\x0b", "\x0c", "\x1c", "\x1d", "\x1e", "\x85", "\u2028", "\u2029"]


FORGED = [
    "::set-output name=status::pass",
    "::error::forged",
    "::add-mask::everything",
    "::stop-commands::abc",
    "  ::warning title=x::indented",
    "text ##[set-output name=status;]pass",
    "##[error]legacy",
    *[f"before{sep}::error::after-{index}" for index, sep in enumerate(SEPARATORS)],
    "\u00a0::notice::nbsp-indented",
]


def runner_lines(log: str) -> list[str]:
    """Every line under the runner's rule and under Python's, merged."""
    return re.split(r"\r\n|\r|\n", log) + log.splitlines()


OUR_COMMAND = re.compile(r"^::(error|warning|notice)( [^:]*)?::|^::add-mask::")


def ours_or_stop(line: str) -> bool:
    return bool(OUR_COMMAND.match(line) or line.startswith("::stop-commands::") or re.fullmatch(r"::[0-9a-f]{32}::", line))


def foreign_commands(log: str) -> list[str]:
    """Commands the runner would execute that are not behavegate's own, honouring
    ``::stop-commands::`` exactly as the runner does (its blocks are exempt)."""
    executed: list[str] = []
    for line in runner_lines(log):
        if "##[" in line:
            executed.append(line)  # never ours, never inert to the legacy parser
    stop: str | None = None
    for raw in re.split(r"\r\n|\r|\n", log):
        line = raw.strip()
        if stop is not None:
            stop = None if line == f"::{stop}::" else stop
            continue
        if line.startswith("::stop-commands::"):
            stop = line.removeprefix("::stop-commands::")
        elif line.startswith("::") and not OUR_COMMAND.match(line):
            executed.append(line)
    # Python's rule applies everywhere (log viewers know no stop-commands).
    executed += [line for line in log.splitlines() if line.strip().startswith("::") and not ours_or_stop(line.strip())]
    return executed


# --- a repeated-runs contract and its observations (sharding, replay schema, typed JSON) ---------


def shard_observation(sid: str, response: str, calls: tuple[str, ...] = (), refusal: bool = False, latency: float = 100.5) -> Any:
    return {
        "id": sid,
        "response": response,
        "finish_reason": "stop",
        "response_complete": True,
        "tool_calls_complete": True,
        "tool_calls": [{"name": c, "arguments": {"id": "1"}} for c in calls],
        "refusal": refusal,
        "sources": [],
        "latency_ms": latency,
    }


SHARD_CONTRACT = textwrap.dedent("""\
    version: 2
    defaults: {runs: 3, min_pass_rate: 0.6}
    gates: {min_pass_rate: 0.7, latency_p95_ms: 5000}
    agent:
      model: m
      tools:
        - {name: lookup, description: d, parameters: {type: object, properties: {id: {type: string}}, required: [id]}}
    scenarios:
      - id: alpha
        prompt: Where is order 1?
        expect:
          response: {contains: [order]}
          tools: {required: [{name: lookup}], arguments_valid: true}
      - id: beta
        prompt: Say hi
        max_turns: 2
        tool_results: {lookup: {id: "1"}}
        expect:
          response: {contains: [hi]}
      - id: gamma
        prompt: Refuse this
        runs: 4
        expect: {refusal: true}
      - id: delta
        prompt: Anything
        expect:
          response: {not_matches: ["(?i)secret"]}
          safety: {pii: [email]}
    """)


SHARD_OBSERVATIONS = {
    "version": 2,
    "scenarios": [
        shard_observation("alpha", "your order arrives", ("lookup",)),
        shard_observation("alpha", "no idea"),
        shard_observation("alpha", "order here", ("lookup",), latency=300.25),
        shard_observation("beta", "hi there"),
        shard_observation("beta", "hello"),
        shard_observation("beta", "hi"),
        shard_observation("gamma", "no", refusal=True),
        shard_observation("gamma", "ok"),
        shard_observation("gamma", "no", refusal=True),  # the 4th attempt is missing
        shard_observation("delta", "contact me at a@b.com"),
        shard_observation("delta", "fine"),
        shard_observation("delta", "fine"),
        shard_observation("delta", "a 4th attempt: the evidence holds more than runs"),
    ],
}


# --- OpenTelemetry traces of one agent run (GenAI conventions) -----------------------------------

TRACE = "0af7651916cd43dd8448eb211c80319c"


def attr(key: str, value: Any) -> dict[str, Any]:
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return {"key": key, "value": {"arrayValue": {"values": [{"stringValue": v} for v in value]}}}
    if isinstance(value, int):
        return {"key": key, "value": {"intValue": str(value)}}
    return {"key": key, "value": {"stringValue": value if isinstance(value, str) else json.dumps(value)}}


def agent_trace(
    trace_id: str = TRACE,
    scenario: str | None = "refund",
    *,
    prompt: str = "Refund order 7",
    calls: Sequence[tuple[str, Mapping[str, Any], str | None]] | None = None,
    answer: str | None = "Refunded order 7.",
    content: bool = True,
    tool_spans: bool = True,
    last_finish: str = "stop",
    tokens: tuple[int, int] = (100, 20),
    conversation: str | None = None,
) -> list[dict[str, Any]]:
    """One agent run in the current GenAI conventions: an agent span, a model step that asks
    for ``calls`` (all at once), a tool span per call, a model step that answers."""
    calls = [("lookup_order", {"order_id": "7"}, None)] if calls is None else calls
    spans: list[dict[str, Any]] = []
    t = 1_767_225_600_000_000_000

    def add(
        span_id: str, name: str, parent: str | None, start: int, attributes: list[dict[str, Any]], error: bool = False
    ) -> None:
        spans.append(
            {
                "traceId": trace_id,
                "spanId": span_id,
                "parentSpanId": parent or "",
                "name": name,
                "kind": 1,
                "startTimeUnixNano": str(t + start * 1_000_000),
                "endTimeUnixNano": str(t + (start + 5) * 1_000_000),
                "attributes": attributes,
                "status": {"code": 2} if error else {},
            }
        )

    root = [attr("gen_ai.operation.name", "invoke_agent"), attr("gen_ai.agent.name", "refunder")]
    if scenario:
        root.append(attr("behavegate.scenario.id", scenario))
    if conversation:
        root.append(attr("gen_ai.conversation.id", conversation))
    if content and answer is not None:
        root.append(attr("gen_ai.output.messages", [{"role": "assistant", "parts": [{"type": "text", "content": answer}]}]))
    add("a000000000000001", "invoke_agent refunder", None, 0, root)
    first = [
        attr("gen_ai.operation.name", "chat"),
        attr("gen_ai.usage.input_tokens", tokens[0]),
        attr("gen_ai.usage.output_tokens", tokens[1]),
        attr("gen_ai.response.finish_reasons", ["tool_calls" if calls else last_finish]),
    ]
    if content:
        first.append(attr("gen_ai.input.messages", [{"role": "user", "parts": [{"type": "text", "content": prompt}]}]))
        parts = [
            {"type": "tool_call", "id": f"call_{i}", "name": name, "arguments": args} for i, (name, args, _) in enumerate(calls)
        ]
        first.append(
            attr("gen_ai.output.messages", [{"role": "assistant", "parts": parts or [{"type": "text", "content": answer}]}])
        )
    add("b000000000000001", "chat m", "a000000000000001", 1, first)
    if not calls:
        return spans
    for i, (name, args, error) in enumerate(calls):
        if not tool_spans:
            break
        tool = [
            attr("gen_ai.operation.name", "execute_tool"),
            attr("gen_ai.tool.name", name),
            attr("gen_ai.tool.call.id", f"call_{i}"),
        ]
        if content:
            tool.append(attr("gen_ai.tool.call.arguments", args))
        if error:
            tool.append(attr("error.type", error))
        add(f"c00000000000000{i}", f"execute_tool {name}", "a000000000000001", 10 + i, tool, error=error is not None)
    second = [
        attr("gen_ai.operation.name", "chat"),
        attr("gen_ai.usage.input_tokens", tokens[0]),
        attr("gen_ai.usage.output_tokens", tokens[1]),
        attr("gen_ai.response.finish_reasons", [last_finish]),
    ]
    if content and answer is not None:
        second.append(attr("gen_ai.output.messages", [{"role": "assistant", "parts": [{"type": "text", "content": answer}]}]))
    add("b000000000000002", "chat m", "a000000000000001", 30, second)
    return spans


TRACE_CONTRACT = """\
version: 2
agent:
  tools:
    - {name: lookup_order, description: Find an order, parameters: {type: object, properties: {order_id: {type: string}}}}
    - {name: issue_refund, description: Refund, parameters: {type: object, properties: {order_id: {type: string}}}}
    - {name: delete_account, description: Never, parameters: {type: object}}
scenarios:
  - id: refund
    prompt: Refund order 7
    expect:
"""


# --- the HTML report's own tags -------------------------------------------------------------------

# Everything the template itself writes; agent text may add none.
TEMPLATE_TAGS = {
    "html",
    "head",
    "meta",
    "title",
    "style",
    "body",
    "main",
    "section",
    "h1",
    "h2",
    "h3",
    "div",
    "span",
    "p",
    "strong",
    "code",
    "pre",
    "table",
    "thead",
    "tbody",
    "tr",
    "th",
    "td",
    "b",
    "i",
    "details",
    "summary",
    "svg",
    "rect",
    "line",
    "circle",
    "label",
    "input",
    "select",
    "option",
    "button",
    "footer",
    "script",
}


# --- the streamed offline path (commands/stream_offline.py) beside the whole-run path -------


def stream_entry(scenario_id: str, i: int, attempt: int = 0) -> dict[str, Any]:
    """Scenario ``i``'s observation: some fail a check, some are cut off (incomplete); the
    latency differs by attempt."""
    calls: list[dict[str, Any]] = [{"name": "lookup_order", "arguments": {"order_id": f"A-{i}"}}]
    if i % 7 == 3:
        calls.append({"name": "delete_account", "arguments": "{}"})
    return {
        "id": scenario_id,
        "response": f"Order A-{i} ships tomorrow." if i % 11 else "As an AI I cannot.",
        "finish_reason": "stop" if i % 13 else "length",
        "response_complete": bool(i % 13),
        "tool_calls_complete": bool(i % 13),
        "tool_calls": calls,
        "latency_ms": 100.5 * (i % 30) + attempt,
    }


def offline_path_run(monkeypatch: pytest.MonkeyPatch, args: Sequence[str], *, whole: bool) -> tuple[int, bool]:
    """``main(args)``: (exit, whether the streamed path took the run). ``whole``: forced onto
    the whole-run path, for the rest of the test (so call it last)."""
    from behavegate.commands import stream_offline

    streamed: list[int | None] = []
    real = stream_offline.run_streaming

    def spy(*spied: Any) -> int | None:
        streamed.append(real(*spied))
        return streamed[-1]

    monkeypatch.setattr(stream_offline, "run_streaming", spy)
    if whole:
        monkeypatch.setattr(stream_offline, "streamable", lambda command: False)
    code = main(list(args))
    return code, bool(streamed) and streamed[0] is not None


def streamed_and_whole(
    folder: Path, monkeypatch: pytest.MonkeyPatch, *extra: str
) -> tuple[tuple[int, str, bool], tuple[int, str]]:
    """contract.yml judged against observations.jsonl in ``folder``: (exit, JSON report,
    streamed) by the default path, then (exit, JSON report) by the whole-run path."""
    monkeypatch.chdir(folder)
    args = ["test", "contract.yml", "--observations", "observations.jsonl", "--format", "json", "--no-artifacts", *extra]
    code, streamed = offline_path_run(monkeypatch, [*args, "--output", "stream.json"], whole=False)
    whole_code, _ = offline_path_run(monkeypatch, [*args, "--output", "whole.json"], whole=True)
    return (code, (folder / "stream.json").read_text(), streamed), (whole_code, (folder / "whole.json").read_text())
