"""Shard reports read back for ``behavegate merge``: untrusted JSON, shape-checked.

A shard report is the JSON report of ``behavegate test --shard K/N`` (or, when
the shard could not run, its error report). Only what the merge uses is read,
decoded by its schema (shard_schema.py); every problem is named by file and JSON
path, then the checks across keys are made here. Each attempt the shard owns comes back
as it was judged (its verdicts and its observation, as the report shows them):
the merge aggregates them, it does not judge them again (see docs/sharding.md).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, NoReturn

import msgspec

from behavegate import json_formats
from behavegate.conversation import BudgetStop, Conversation, Retry, ScriptedResult, Simulator, UserTurn
from behavegate.errors import Problem, ShardError
from behavegate.evidence.shard import Pair
from behavegate.frozen import Frozen, field
from behavegate.judged import JudgeEvidence
from behavegate.limits import BASELINE_MAX_PROBLEMS, MAX_SHARDS, REPORT_MAX_NESTING
from behavegate.model import Observation, Status, ToolCall, Verdict, combine
from behavegate.report import shard_schema as schema
from behavegate.text import one_line

# The evidence a shard can have gathered, and the trust each is labelled with.
EVIDENCE = {"observation_file": "unverified_fixture", "trace_file": "recorded_trace", "runtime_endpoint": "runtime_observed"}
ERROR_CHARS = 2_000  # of a shard's error, as the merged run shows it


class Judged(Frozen):
    """One attempt as its shard judged it."""

    status: Status
    verdicts: tuple[Verdict, ...]
    observation: Observation | None


class ShardReport(Frozen):
    path: str  # as shown to people
    sha256: str
    index: int
    count: int
    failed: str | None = None  # an error report: why the shard could not run (nothing else is read)
    version: str = ""  # the behavegate that wrote it
    contract_version: int = 0
    contract_digest: str = ""
    contract_path: str = ""  # as the shard showed it: relative to the workspace or its project root
    partition_digest: str = ""
    pairs: tuple[Pair, ...] = ()
    plan: Mapping[str, Any] = field(default_factory=dict)
    mode: str = ""
    provenance: Mapping[str, Any] = field(default_factory=dict)
    evidence_digest: str | None = None
    attempts: Mapping[Pair, Judged] = field(default_factory=dict)
    seconds: Mapping[str, float] = field(default_factory=dict)
    contract_data: Any = None  # behavegate.shard.contract_data, checked where it is used (contract/as_data.py)
    included: Mapping[str, str] = field(default_factory=dict)  # behavegate.shard.included: file name -> SHA-256


class _Reader:
    def __init__(self, shown: str) -> None:
        self.shown = shown

    def bad(self, where: str, what: str) -> NoReturn:
        self.refuse([Problem(f"{where} {what}", where)])

    def refuse(self, problems: list[Problem] | tuple[Problem, ...]) -> NoReturn:
        raise ShardError([Problem(f"shard report {self.shown}: {p.text}", self.shown) for p in problems])

    def decode(self, text: str, shape: type[json_formats.T]) -> json_formats.T:
        try:
            return json_formats.decode(text, shape, BASELINE_MAX_PROBLEMS)
        except json_formats.NotJSON as exc:
            self.bad("the document", f"is not JSON: {exc}")
        except json_formats.Refused as refused:
            raw = refused.raw
            if not isinstance(raw, dict) or raw.get("kind") != "agent_behavior" or raw.get("schema_version") != 1:
                self.bad("the document", "is not a behavegate report (kind agent_behavior, schema_version 1)")
            ours = raw.get("behavegate")
            if not isinstance(ours, dict) or "shard" not in ours:
                self.bad(
                    "behavegate.shard",
                    "is missing: not a shard report (write one with behavegate test --shard K/N --report FILE)",
                )
            self.refuse(refused.problems)

    def shallow(self, value: Any, where: str) -> Any:
        """A JSON value nested at most REPORT_MAX_NESTING deep (every view can render it)."""
        if not isinstance(value, dict | list):  # most are: a verdict's expected and observed
            return value
        for item in value.values() if type(value) is dict else value:
            if isinstance(item, dict | list):
                break
        else:
            return value  # flat (most of the rest)
        stack = [(value, 0)]
        while stack:
            item, depth = stack.pop()
            if depth > REPORT_MAX_NESTING:
                self.bad(where, f"nests deeper than {REPORT_MAX_NESTING} levels")
            if isinstance(item, dict | list):
                stack.extend((child, depth + 1) for child in (item.values() if isinstance(item, dict) else item))
        return value


def parse_shard_report(text: str, shown: str, sha256: str) -> ShardReport:
    """A shard report's text (read by the caller under the file rules) to its typed parts."""
    r = _Reader(shown)
    head = r.decode(text, schema.Head)
    place = head.behavegate.shard
    if place.index > place.count:
        r.bad("behavegate.shard", f"must have 1 <= index <= count <= {MAX_SHARDS}, got {place.index}/{place.count}")
    if head.error is not None:
        return ShardReport(shown, sha256, place.index, place.count, failed=one_line(head.error, ERROR_CHARS))
    v2 = head.contract is not None and head.contract.version >= 2
    raw: schema.ReportV1 | schema.ReportV2 = r.decode(text, schema.ReportV2) if v2 else r.decode(text, schema.ReportV1)
    ours, block = raw.behavegate, raw.behavegate.shard
    if block.contract_digest != raw.contract.digest:
        r.bad("behavegate.shard.contract_digest", "differs from contract.digest")
    pairs = tuple((scenario_id, number - 1) for scenario_id, number in block.pairs)
    if len(set(pairs)) != len(pairs):
        r.bad("behavegate.shard.pairs", "lists an attempt twice")
    kind = raw.provenance.get("kind")
    if not isinstance(kind, str) or kind not in EVIDENCE or raw.provenance.get("trust") != EVIDENCE[kind]:
        r.bad("provenance", f"must be one of {sorted(EVIDENCE)} with its trust label")
    r.shallow(raw.provenance, "provenance")
    return ShardReport(
        path=shown,
        sha256=sha256,
        index=block.index,
        count=block.count,
        version=ours.version,
        contract_version=raw.contract.version,
        contract_digest=raw.contract.digest,
        contract_path=ours.contract_path,
        partition_digest=block.partition_digest,
        pairs=pairs,
        plan=msgspec.structs.asdict(block.plan),
        mode=raw.mode,
        provenance=raw.provenance,
        evidence_digest=raw.evidence_digest,
        attempts=_attempts(r, raw.scenarios, pairs),
        seconds=dict(ours.seconds),
        contract_data=block.contract_data,
        included=dict(block.included),
    )


def _attempts(
    r: _Reader, scenarios: Sequence[schema.ScenarioV1 | schema.ScenarioV2], pairs: tuple[Pair, ...]
) -> dict[Pair, Judged]:
    """Every owned attempt, found where the report shows it."""
    by_id: dict[str, tuple[int, schema.ScenarioV1 | schema.ScenarioV2]] = {}
    for position, scenario in enumerate(scenarios):
        by_id.setdefault(scenario.id, (position, scenario))
    found: dict[Pair, Judged] = {}
    for scenario_id, attempt in pairs:
        if scenario_id not in by_id:
            r.bad("scenarios", f"has no entry for scenario {scenario_id!r}, which behavegate.shard.pairs lists")
        position, item = by_id[scenario_id]
        where = f"scenarios[{position}]"
        entry: schema.ScenarioV1 | schema.AttemptV2
        if isinstance(item, schema.ScenarioV2):
            where = f"{where}.attempts[{attempt}]"
            if attempt >= len(item.attempts) or item.attempts[attempt].attempt != attempt + 1:
                r.bad(where, f"must be attempt {attempt + 1}, which behavegate.shard.pairs lists")
            entry = item.attempts[attempt]
        else:
            entry = item
        found[(scenario_id, attempt)] = _judged(r, entry, where, scenario_id)
    return found


def _judged(r: _Reader, entry: schema.ScenarioV1 | schema.AttemptV2, where: str, scenario_id: str) -> Judged:
    verdicts = tuple(_verdict(r, item, f"{where}.assertions[{i}]") for i, item in enumerate(entry.assertions))
    if combine(v.status for v in verdicts) != entry.status:
        r.bad(f"{where}.status", "does not follow from its assertions")
    raw = entry.observation
    observation = None if raw is None else _observation(r, raw, f"{where}.observation", scenario_id)
    return Judged(entry.status, verdicts, observation)


def _verdict(r: _Reader, value: schema.Verdict, where: str) -> Verdict:
    expected, observed = value.expected, value.observed
    if type(expected) is dict or type(expected) is list:
        r.shallow(expected, f"{where}.expected")
    if type(observed) is dict or type(observed) is list:
        r.shallow(observed, f"{where}.observed")
    return Verdict(value.assertion, value.kind, value.status, value.message, expected, observed)


def _observation(r: _Reader, raw: schema.ObservationV1, where: str, scenario_id: str) -> Observation:
    """The inverse of ``Observation.as_dict`` (version 1) or ``as_dict_v2``."""
    if raw.id != scenario_id:
        r.bad(f"{where}.id", f"must be {scenario_id!r}")
    v2 = raw if isinstance(raw, schema.ObservationV2) else None
    trace = v2.trace if v2 is not None else None
    marks = trace.calls if trace is not None else []
    if trace is not None and len(marks) != len(raw.tool_calls or ()):
        r.bad(f"{where}.trace.calls", "must have one entry per tool call")
    tool_calls = None
    if raw.tool_calls is not None:
        tool_calls = tuple(
            _call(r, call, marks[i] if marks else None, f"{where}.tool_calls[{i}]") for i, call in enumerate(raw.tool_calls)
        )
    fields: dict[str, Any] = {}
    if v2 is not None:
        fields = {
            "latency_ms": v2.latency_ms,
            "total_tokens": v2.total_tokens,
            "input_tokens": v2.input_tokens,
            "output_tokens": v2.output_tokens,
            "steps": v2.steps,
            "tool_errors": None if v2.tool_errors is None else tuple(v2.tool_errors),
            "trace_id": None if trace is None else trace.trace_id,
        }
        if v2.conversation is not None:
            fields["conversation"] = _conversation(r, v2.conversation, f"{where}.conversation", tool_calls or ())
        if v2.judge is not msgspec.UNSET:
            fields["judge"] = _judge(r, v2.judge, f"{where}.judge")
        fields["retries"] = tuple(Retry(retry.turn, retry.reason, retry.waited_ms) for retry in v2.retries)
        fields["response_gap"], fields["tool_gap"] = v2.response_gap, v2.tool_gap
        fields["tool_source"] = v2.tool_source
    return Observation(
        scenario_id=scenario_id,
        response=raw.response,
        response_complete=raw.response_complete,
        finish_reason=raw.finish_reason,
        tool_calls=tool_calls,
        tool_calls_complete=raw.tool_calls_complete,
        refusal=raw.refusal,
        sources=None if raw.sources is None else tuple(raw.sources),
        error=raw.error,
        **fields,
    )


def _judge(r: _Reader, value: Any, where: str) -> JudgeEvidence:
    """The inverse of ``JudgeEvidence.as_dict`` (read as an observation file reads it)."""
    from behavegate.contract.rules import Collector
    from behavegate.evidence.observation_file import judge_evidence

    c = Collector()
    evidence = judge_evidence(c, value, where)
    if c.problems or evidence is None:
        problem = c.problems[0] if c.problems else None
        r.bad(problem.path if problem else where, problem.text if problem else "must be the judge's recorded votes")
    assert evidence is not None
    return evidence


def _conversation(r: _Reader, raw: schema.Conversation, where: str, calls: tuple[ToolCall, ...]) -> Conversation:
    """The inverse of ``Conversation.as_dict``."""
    results = []
    for i, result in enumerate(raw.results):
        at = f"{where}.results[{i}]"
        failed = result.error is not msgspec.UNSET
        if failed == (result.content is not msgspec.UNSET):
            r.bad(at, "must hold exactly one of content and error")
        if result.call >= len(calls) or calls[result.call].name != result.name:
            r.bad(f"{at}.call", "must index a tool call of that name")
        error = result.error if isinstance(result.error, str) else None
        results.append(
            ScriptedResult(result.call, result.name, r.shallow(None if failed else result.content, f"{at}.content"), error)
        )
    stop = raw.tool_budget_exceeded
    went = tuple(
        UserTurn(
            t.user,
            t.calls[0],
            t.calls[1],
            t.response,
            t.finish_reason,
            t.response_complete,
            t.refusal,
            None if t.sources is None else tuple(t.sources),
            t.model_turns,
            t.simulated,
        )
        for t in raw.user_turns
    )
    for i, t in enumerate(went):
        if not t.first_call <= t.end_call <= len(calls):
            r.bad(f"{where}.user_turns[{i}].calls", "must be [first, end] within the tool calls")
    budget = None if stop is None else BudgetStop(stop.key, stop.limit, stop.observed, stop.turn)
    sim = raw.simulator
    simulator = None if sim is None else Simulator(sim.model, tuple(sim.replies), sim.ended)
    return Conversation(raw.turns, raw.max_turns, tuple(results), bool(raw.possible_loop), budget, went, simulator)


def _call(r: _Reader, raw: schema.Call, mark: schema.Mark | None, where: str) -> ToolCall:
    r.shallow(raw.arguments, f"{where}.arguments")
    if mark is None:
        return ToolCall(raw.name, raw.arguments)
    return ToolCall(raw.name, raw.arguments, call_id=mark.call_id, executed=mark.executed, group=mark.group)


def report_observation(raw: Any, scenario_id: str, v2: bool) -> Observation:
    """An observation as a JSON report shows it, back to the model (replay judges it again);
    ValueError names what does not fit."""
    try:
        value = msgspec.convert(raw, schema.ObservationV2 if v2 else schema.ObservationV1)
        return _observation(_Reader("the run"), value, "observation", scenario_id)
    except msgspec.ValidationError as invalid:
        raise ValueError(f"observation: {invalid}") from None
    except ShardError as refused:
        raise ValueError(refused.problems[0].text) from None
