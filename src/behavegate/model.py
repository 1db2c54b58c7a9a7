"""The data model, one frozen type per pipeline stage: Contract (what should happen) →
Observation (what did happen) → Verdict (one assertion judged) → ScenarioResult → Evaluation."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from behavegate.conversation import Conversation, ToolField, ToolResultRule
from behavegate.conversation import Retry as Retry  # re-exported: a record of the exchange
from behavegate.cost import Pricing as Pricing  # re-exported: agent.pricing
from behavegate.frozen import Frozen, field, fields, not_compared
from behavegate.gating import GateResult as GateResult  # a model type: the judged gate
from behavegate.http_mapping import HttpMapping
from behavegate.judged import JudgeEvidence, JudgeSpec, JudgeTarget
from behavegate.oxy_file import OxyFile

Status = Literal["pass", "fail", "incomplete"]
TOOL_SOURCE_MCP = "mcp"  # Observation.tool_source: calls seen where they landed, on behavegate's MCP server
TOOL_SIDE = "seen by behavegate's MCP server"  # how every view marks those calls (tool-side evidence)
SPLIT_USAGE = ("input_tokens", "output_tokens")  # Observation's, written only when reported
JSON = Any


# --- contract -----------------------------------------------------------------


class ToolDefinition(Frozen):
    """A tool the agent declares: name, description, JSON Schema of its parameters."""

    name: str
    description: str
    parameters: Mapping[str, JSON]


class AgentTarget(Frozen):
    """The agent under test and how to reach it."""

    endpoint: str | None = None
    model: str | None = None
    timeout_seconds: float = 30.0
    capabilities: tuple[str, ...] = ()
    tools: tuple[ToolDefinition, ...] = ()
    # version 2
    parameters: Mapping[str, JSON] = field(default_factory=dict)  # extra request-body keys
    missing_tool_calls: str = "unobserved"  # or "none": the endpoint omits the key when no tool was called
    stream: bool = False  # ask for a streamed answer (text/event-stream), assembled into the same evidence
    api: str = "chat"  # the wire format: "chat" (Chat Completions) or "responses" (the OpenAI Responses API)
    pricing: Pricing | None = None  # USD per million tokens: the run's cost is shown, --max-cost enforced
    http: HttpMapping | None = None  # a custom JSON agent: its request template and response paths
    serve_mcp: bool = False  # agent.mcp.serve: a live run serves the tools over MCP (evidence/mcp_server.py)
    tools_from_mcp: str | None = None  # agent.tools_from.mcp: tools read from this server's tools/list before a run
    mcp_fixed_url: bool = False  # agent.mcp.url: fixed: one URL for every attempt, so they run one at a time

    def tool_names(self) -> tuple[str, ...]:
        return tuple(tool.name for tool in self.tools)


class NamedCall(Frozen):
    """A tool name with (optionally) its JSON arguments."""

    name: str
    arguments: Mapping[str, JSON] | None = None

    def as_dict(self) -> dict[str, JSON]:
        return {"name": self.name, "arguments": None if self.arguments is None else dict(self.arguments)}


class RequiredCall(NamedCall):
    """A call the contract expects; ``arguments`` is a JSON subset to match."""


class Expectation(Frozen, dict=True):  # dict: room for the checks it asks for (judge/assertions.py)
    """Everything a scenario's ``expect`` asks for (None = not requested)."""

    contains: tuple[str, ...] = ()
    excludes: tuple[str, ...] = ()
    required: tuple[RequiredCall, ...] = ()
    allowed: tuple[str, ...] | None = None
    forbidden: tuple[str, ...] = ()
    exact_sequence: tuple[str, ...] | None = None
    max_calls: int | None = None
    refusal: bool | None = None
    sources: tuple[str, ...] = ()
    # version 2
    icontains: tuple[str, ...] = ()
    matches: tuple[str, ...] = ()
    not_matches: tuple[str, ...] = ()
    min_calls: int | None = None
    calls: tuple[CallCount, ...] = ()
    sequence: TrajectorySpec | None = None
    tool_set: tuple[str, ...] | None = None
    arguments_valid: bool | None = None
    known_only: bool | None = None
    no_errors: bool | None = None
    max_steps: int | None = None
    max_latency_ms: float | None = None
    max_total_tokens: int | None = None
    pii: tuple[str, ...] = ()
    pii_regions: tuple[str, ...] = ()  # phone regions for safety.pii; () = judge.safety.DEFAULT_REGIONS
    injection: bool | None = None
    uses_tool_result: tuple[ToolField, ...] = ()
    no_repeat: bool | None = None
    max_model_turns: int | None = None  # turns.max
    judge: JudgeSpec | None = None  # response.judge: an opt-in LLM judge (judged, non-deterministic)


class CallCount(Frozen):
    """Bounds on how often one tool may be called."""

    name: str
    min: int | None = None
    max: int | None = None


class TrajectorySpec(Frozen):
    """Trajectory matching (LangChain agentevals semantics)."""

    mode: str  # exact | in_order | unordered | subset | superset
    calls: tuple[RequiredCall, ...]


class SequentialSpec(Frozen):
    """A truncated Wald SPRT around ``min_pass_rate``. ``false_fail``: the chance an agent
    ``margin`` above the threshold fails; ``missed_drop``: one ``margin`` below passes."""

    false_fail: float = 0.01
    missed_drop: float = 0.10
    margin: float = 0.10


class ScriptedTurn(Frozen):
    """A scripted user turn (``turns[i]``, version 2): the message sent once the agent has
    answered the turn before, and what must hold of that turn alone (its answer, its calls)."""

    user: str
    expect: Expectation | None = None
    line: int | None = None


class SimulatedUser(Frozen):
    """``simulated_user`` (version 2, opt-in): after the scripted user turns, an LLM (the judge's
    endpoint and model) plays the user from ``persona`` and ``goal`` for up to ``max_turns``
    more messages, or until it says it is done. Non-deterministic, recorded, never re-asked."""

    persona: str
    goal: str
    max_turns: int = 3


@not_compared("assertion_lines")
class Scenario(Frozen):
    """One prompt (or message list) and what must happen."""

    id: str
    prompt: str
    expect: Expectation
    system_prompt: str | None = None
    available_tools: tuple[str, ...] | None = None
    line: int | None = None
    # version 2
    messages: tuple[Mapping[str, JSON], ...] = ()
    tags: tuple[str, ...] = ()
    runs: int = 1
    min_pass_rate: float = 1.0
    gate: str = "rate"  # or "lower_bound": gate on the Wilson interval's lower end
    tool_results: Mapping[str, JSON] = field(default_factory=dict)  # the mapping form: a result per tool name
    tool_rules: tuple[ToolResultRule, ...] | None = None  # the list form (first match wins)
    state: Mapping[str, JSON] = field(default_factory=dict)  # the scripted tools' key-value store, as it starts
    turns: tuple[ScriptedTurn, ...] = ()  # scripted user turns; turns[0] is the prompt
    simulated_user: SimulatedUser | None = None  # an LLM plays the user after the scripted turns
    max_turns: int = 1
    canaries: tuple[str, ...] = ()
    parameters: Mapping[str, JSON] = field(default_factory=dict)  # over agent.parameters
    sequential: SequentialSpec | None = None  # runs is then the most attempts
    source: str = ""  # the include it came from, as written ("" = the contract itself)
    file: str = ""  # the file it is written in, relative to the contract's folder ("" = the contract)
    call: NamedCall | None = None  # agent.api: mcp: the one tool call made on the MCP server under test
    # assertion id (e.g. "tools.required[0]") -> YAML line of what requested it
    assertion_lines: Mapping[str, int] = field(default_factory=dict)


@not_compared("lines")
class Gates(Frozen):
    """Suite-level gates (version 2)."""

    min_pass_rate: float | None = None
    threshold_mode: str = "average"  # or "all": every source file must reach it
    latency_p95_ms: float | None = None
    by_tag: tuple[TagGate, ...] = ()
    min_score: float | None = None  # the suite's mean graded scores (judge/scores.py)
    lines: Mapping[str, int] = field(default_factory=dict)  # gate name -> its line
    formula: str = "scenarios"  # or "runs": passes over every case and run (Oxy's score)


class TagGate(Frozen):
    """A gate on the scenarios that carry one tag (``gates.by_tag``, ``--gate-tag``)."""

    tag: str
    min_pass_rate: float | None = None
    min_score: float | None = None


@not_compared("included")
class Contract(Frozen):
    """A loaded behavior contract."""

    version: int
    path: Path
    project_root: Path
    digest: str
    agent: AgentTarget
    scenarios: tuple[Scenario, ...]
    gates: Gates = field(default_factory=lambda: Gates())
    judge: JudgeTarget = field(default_factory=lambda: JudgeTarget())
    oxy: OxyFile | None = None  # read from an Oxy test file: scored and gated as Oxy does
    # The SHA-256 of each included file's text, by its name as written (``builtin:`` ones are this version's).
    included: Mapping[str, str] = field(default_factory=dict)

    def scenario_ids(self) -> tuple[str, ...]:
        return tuple(scenario.id for scenario in self.scenarios)


# --- evidence -------------------------------------------------------------------


class ToolCall(NamedCall):
    """A call the agent made; ``arguments`` None when they were not observed.

    Trace evidence also knows the call id, whether a tool span executed it (or the
    model only requested it), and which calls one model step requested together."""

    call_id: str | None = None
    executed: bool | None = None
    group: int | None = None


@not_compared("tool_calls_absent", "response_gap", "tool_gap")
class Observation(Frozen):
    """What one attempt of one scenario showed; None means *not observed*."""

    scenario_id: str
    response: str | None = None
    response_complete: bool | None = None
    finish_reason: str | None = None
    tool_calls: tuple[ToolCall, ...] | None = None
    tool_calls_complete: bool | None = None
    refusal: bool | None = None
    sources: tuple[str, ...] | None = None
    error: str | None = None
    # version 2 evidence (None = not observed)
    latency_ms: float | None = None
    total_tokens: int | None = None
    input_tokens: int | None = None  # usage.prompt_tokens, summed over the attempt's requests
    output_tokens: int | None = None  # usage.completion_tokens, summed
    steps: int | None = None
    tool_errors: tuple[str | None, ...] | None = None  # per call: error text, or None when it succeeded
    # The live response left ``message.tool_calls`` out (not malformed): names the cause in
    # the incomplete reason. Not part of the evidence's shape, so not compared or written.
    tool_calls_absent: bool = False
    # Trace evidence: the trace this attempt is, and why its answer or its tool calls
    # cannot be judged (the incomplete reason, in the evidence's own words).
    trace_id: str | None = None
    response_gap: str | None = None
    tool_gap: str | None = None
    conversation: Conversation | None = None  # a conversation that scripted tool results: what it returned
    judge: JudgeEvidence | None = None  # response.judge: the judge's questions and replies (version 2)
    retries: tuple[Retry, ...] = ()  # requests sent again (--retries, version 2), in order
    tool_source: str | None = None  # TOOL_SOURCE_MCP: the calls are those behavegate's MCP server received

    def as_dict(self) -> dict[str, JSON]:
        return {
            "id": self.scenario_id,
            "response": self.response,
            "response_complete": self.response_complete,
            "finish_reason": self.finish_reason,
            "tool_calls": None if self.tool_calls is None else [call.as_dict() for call in self.tool_calls],
            "tool_calls_complete": self.tool_calls_complete,
            "refusal": self.refusal,
            "sources": None if self.sources is None else list(self.sources),
            "error": self.error,
        }

    def as_dict_v2(self) -> dict[str, JSON]:
        data = {
            **self.as_dict(),
            "latency_ms": self.latency_ms,
            "total_tokens": self.total_tokens,
            "steps": self.steps,
            "tool_errors": None if self.tool_errors is None else list(self.tool_errors),
        }
        # Only when reported: reports of endpoints without them keep their shape.
        data.update({key: getattr(self, key) for key in SPLIT_USAGE if getattr(self, key) is not None})
        if self.trace_id is not None:
            data["trace"] = {
                "trace_id": self.trace_id,
                "calls": [{"call_id": c.call_id, "executed": c.executed, "group": c.group} for c in self.tool_calls or ()],
            }
        recorded = {"conversation": self.conversation, "judge": self.judge}  # what the conversation and the judge returned
        data.update({key: value.as_dict() for key, value in recorded.items() if value is not None})
        # Retries and the source's reasons for unusable evidence only when there are some (a replay keeps them).
        rare = {
            "retries": [r.as_dict() for r in self.retries],
            "response_gap": self.response_gap,
            "tool_gap": self.tool_gap,
            "tool_source": self.tool_source,
        }
        return data | {key: value for key, value in rare.items() if value}


class ObservationSet(Frozen):
    """A loaded observation file (every attempt kept)."""

    path: Path
    digest: str
    observations: Mapping[str, Observation]
    version: int = 1
    attempts: Mapping[str, tuple[Observation, ...]] = field(default_factory=dict)  # every observation per id
    runs: int | None = None  # the --runs the recording was made with (version 2); None: not given


class Timing(Frozen):
    """When one scenario's evidence was gathered (all its attempts)."""

    started_at: str
    ended_at: str
    duration_ms: int


class RunFacts(Frozen):
    """Everything about the run that is not evidence: ids, clock, limits."""

    run_id: str
    started_at: str
    ended_at: str
    duration_ms: int
    max_scenarios: int
    max_seconds: float
    tool_call_count: int = 0


# --- verdicts -------------------------------------------------------------------


class Verdict(Frozen):
    """One assertion judged. ``message`` says expected vs observed in words."""

    assertion: str
    kind: str
    status: Status
    message: str
    expected: JSON = None
    observed: JSON = None

    def as_dict(self) -> dict[str, JSON]:
        # Spelled out, not flat_dict: a 10,000-scenario report makes 100,000 of these.
        return {
            "assertion": self.assertion,
            "kind": self.kind,
            "status": self.status,
            "message": self.message,
            "expected": self.expected,
            "observed": self.observed,
        }


class Attempt(Frozen):
    """One independent try of a scenario (version 2 repeats scenarios)."""

    index: int
    status: Status
    verdicts: tuple[Verdict, ...]
    observation: Observation | None
    scores: Mapping[str, float] | None = None  # graded scores (judge/scores.py); None: none apply


class Reliability(Frozen):
    """How often a repeated scenario passed, and how far that number can be trusted."""

    runs: int
    passed: int
    failed: int
    incomplete: int
    min_pass_rate: float
    gate: str
    pass_rate: float
    interval: tuple[float, float]  # Wilson 95%
    flaky: bool
    # A sequential scenario: how it stopped (attempts used vs cap, the boundary); the counts
    # above cover the attempts used, ``unused`` counts the observed attempts left over.
    sequential: Mapping[str, JSON] | None = None
    unused: int = 0
    scores: Mapping[str, float] | None = None  # the mean of the attempts' graded scores

    def as_dict(self) -> dict[str, JSON]:
        extra: dict[str, JSON] = {}
        if self.sequential is not None:
            extra = {"sequential": dict(self.sequential), "unused": self.unused}
        if self.scores is not None:
            extra["scores"] = dict(self.scores)
        return {
            "runs": self.runs,
            "passed": self.passed,
            "failed": self.failed,
            "incomplete": self.incomplete,
            "min_pass_rate": self.min_pass_rate,
            "gate": self.gate,
            "pass_rate": round(self.pass_rate, 6),
            "interval": [round(self.interval[0], 6), round(self.interval[1], 6)],
            "flaky": self.flaky,
            **extra,
        }


class ScenarioResult(Frozen):
    """A scenario judged: its verdicts, and for version 2 every attempt."""

    scenario: Scenario
    status: Status
    verdicts: tuple[Verdict, ...]  # of the representative attempt
    observation: Observation | None
    attempts: tuple[Attempt, ...] = ()
    reliability: Reliability | None = None


class Evaluation(Frozen):
    """The whole run judged."""

    status: Status
    results: tuple[ScenarioResult, ...]
    gates: tuple[GateResult, ...] = ()


def flat_dict(record: Any) -> dict[str, JSON]:
    """A record's fields by name, values as they are."""
    return {item.name: getattr(record, item.name) for item in fields(record)}


def combine(statuses: Any) -> Status:
    """Failure beats incomplete; incomplete beats pass (and nothing is a pass)."""
    seen = set(statuses)
    if "fail" in seen:
        return "fail"
    if "incomplete" in seen:
        return "incomplete"
    return "pass"
