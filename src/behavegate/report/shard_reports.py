"""Shard reports read back for ``behavegate merge``: untrusted JSON, shape-checked.

A shard report is the JSON report of ``behavegate test --shard K/N`` (or, when
the shard could not run, its error report). Only what the merge uses is read,
and every part of it is checked for its type and shape; the first problem ends
the read, named by file and JSON path. Each attempt the shard owns comes back
as it was judged (its verdicts and its observation, as the report shows them):
the merge aggregates them, it does not judge them again (see docs/sharding.md).
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from typing import Any, NoReturn

from behavegate import finite_json
from behavegate.conversation import Conversation, ScriptedResult
from behavegate.errors import Problem, ShardError
from behavegate.evidence.shard import Pair
from behavegate.frozen import field, frozen
from behavegate.judged import JudgeEvidence
from behavegate.limits import MAX_SHARDS, REPORT_MAX_NESTING
from behavegate.model import SPLIT_USAGE, Observation, Status, ToolCall, Verdict, combine
from behavegate.text import one_line

STATUSES = ("pass", "fail", "incomplete")
VERDICT_KEYS = ("assertion", "kind", "status", "message", "expected", "observed")
_VERDICT_KEYS = frozenset(VERDICT_KEYS)
OBSERVATION_KEYS = ("id", "response", "response_complete", "finish_reason", "tool_calls", "tool_calls_complete",
                    "refusal", "sources", "error")  # fmt: skip
V2_KEYS = ("latency_ms", "total_tokens", "steps", "tool_errors")
_V1_OBSERVATION, _V2_OBSERVATION = frozenset(OBSERVATION_KEYS), frozenset(OBSERVATION_KEYS + V2_KEYS)
_CALL = frozenset(("name", "arguments"))
# The evidence a shard can have gathered, and the trust each is labelled with.
EVIDENCE = {"observation_file": "unverified_fixture", "trace_file": "recorded_trace", "runtime_endpoint": "runtime_observed"}
_HEX64 = re.compile(r"[0-9a-f]{64}")
ERROR_CHARS = 2_000  # of a shard's error, as the merged run shows it
PLAN_KEYS = ("scenarios", "tags", "runs", "min_pass_rate", "threshold_mode", "max_scenarios", "max_seconds", "attempts",
             "gate_tags", "suite_tags", "max_assertions")  # fmt: skip


@frozen
class Judged:
    """One attempt as its shard judged it."""

    status: Status
    verdicts: tuple[Verdict, ...]
    observation: Observation | None


@frozen
class ShardReport:
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
        raise ShardError([Problem(f"shard report {self.shown}: {where} {what}", self.shown)])

    def key(self, value: Any, key: str, where: str) -> Any:
        if not isinstance(value, dict):
            self.bad(where or "the document", "must be a JSON object")
        if key not in value:
            self.bad(f"{where}.{key}" if where else key, "is missing")
        return value[key]

    def text(self, value: Any, where: str, *, optional: bool = False) -> Any:
        if not (isinstance(value, str) or (optional and value is None)):
            self.bad(where, "must be a string" + (" or null" if optional else ""))
        return value

    def integer(self, value: Any, where: str, low: int = 0, *, optional: bool = False) -> Any:
        if optional and value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, int) or value < low:
            self.bad(where, f"must be an integer of at least {low}" + (" or null" if optional else ""))
        return value

    def number(self, value: Any, where: str, *, optional: bool = False) -> Any:
        if optional and value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value) or value < 0:
            self.bad(where, "must be a non-negative number" + (" or null" if optional else ""))
        return value

    def flag(self, value: Any, where: str) -> bool | None:
        if value is not None and not isinstance(value, bool):
            self.bad(where, "must be true, false or null")
        return value

    def listing(self, value: Any, where: str, *, optional: bool = False) -> Any:
        if not (isinstance(value, list) or (optional and value is None)):
            self.bad(where, "must be a list" + (" or null" if optional else ""))
        return value

    def digest(self, value: Any, where: str, *, optional: bool = False) -> Any:
        if not ((optional and value is None) or (isinstance(value, str) and _HEX64.fullmatch(value))):
            self.bad(where, "must be a SHA-256 digest (64 hex digits)" + (" or null" if optional else ""))
        return value

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

    def exact(self, value: Any, keys: tuple[str, ...], where: str) -> dict[str, Any]:
        if not isinstance(value, dict):
            self.bad(where, "must be a JSON object")
        if set(value) != set(keys):
            odd = sorted(set(value) ^ set(keys))
            self.bad(where, f"must hold exactly the keys {list(keys)} (differs in {odd})")
        return value


def parse_shard_report(text: str, shown: str, sha256: str) -> ShardReport:
    """A shard report's text (read by the caller under the file rules) to its typed parts."""
    r = _Reader(shown)
    try:
        raw = finite_json.loads_document(text)
    except (ValueError, RecursionError) as exc:
        r.bad("the document", f"is not JSON: {exc}")
    if not isinstance(raw, dict) or raw.get("kind") != "agent_behavior" or raw.get("schema_version") != 1:
        r.bad("the document", "is not a behavegate report (kind agent_behavior, schema_version 1)")
    ours = r.key(raw, "behavegate", "")
    if not isinstance(ours, dict) or "shard" not in ours:
        r.bad("behavegate.shard", "is missing: not a shard report (write one with behavegate test --shard K/N --report FILE)")
    block = ours["shard"]
    count = r.integer(r.key(block, "count", "behavegate.shard"), "behavegate.shard.count", 1)
    index = r.integer(r.key(block, "index", "behavegate.shard"), "behavegate.shard.index", 1)
    if count > MAX_SHARDS or index > count:
        r.bad("behavegate.shard", f"must have 1 <= index <= count <= {MAX_SHARDS}, got {index}/{count}")
    if "error" in raw:
        return ShardReport(shown, sha256, index, count, failed=one_line(r.text(raw["error"], "error"), ERROR_CHARS))
    contract = r.key(raw, "contract", "")
    version = r.integer(r.key(contract, "version", "contract"), "contract.version", 1)
    digest = r.digest(r.key(contract, "digest", "contract"), "contract.digest")
    if r.key(block, "contract_digest", "behavegate.shard") != digest:
        r.bad("behavegate.shard.contract_digest", "differs from contract.digest")
    pairs = _pairs(r, r.listing(r.key(block, "pairs", "behavegate.shard"), "behavegate.shard.pairs"))
    mode = r.key(raw, "mode", "")
    if mode not in ("offline", "live"):
        r.bad("mode", "must be offline or live")
    provenance = r.key(raw, "provenance", "")
    kind = r.key(provenance, "kind", "provenance")
    if kind not in EVIDENCE or r.key(provenance, "trust", "provenance") != EVIDENCE[kind]:
        r.bad("provenance", f"must be one of {sorted(EVIDENCE)} with its trust label")
    r.shallow(provenance, "provenance")
    seconds = r.key(ours, "seconds", "behavegate") if "seconds" in ours else {}
    if not isinstance(seconds, dict):
        r.bad("behavegate.seconds", "must be a JSON object")
    return ShardReport(
        path=shown,
        sha256=sha256,
        index=index,
        count=count,
        version=r.text(r.key(ours, "version", "behavegate"), "behavegate.version"),
        contract_version=version,
        contract_digest=digest,
        contract_path=r.text(r.key(ours, "contract_path", "behavegate"), "behavegate.contract_path"),
        partition_digest=r.digest(r.key(block, "partition_digest", "behavegate.shard"), "behavegate.shard.partition_digest"),
        pairs=pairs,
        plan=_plan(r, r.key(block, "plan", "behavegate.shard")),
        mode=mode,
        provenance=provenance,
        evidence_digest=r.digest(r.key(raw, "evidence_digest", ""), "evidence_digest", optional=True),
        attempts=_attempts(r, r.listing(r.key(raw, "scenarios", ""), "scenarios"), pairs, version >= 2),
        seconds={str(k): float(r.number(v, f"behavegate.seconds.{k}")) for k, v in seconds.items()},
        contract_data=block.get("contract_data"),
        included=_included(r, block.get("included", {})),
    )


def _included(r: _Reader, value: Any) -> dict[str, str]:
    if not isinstance(value, dict):
        r.bad("behavegate.shard.included", "must be a JSON object")
    for name, digest in value.items():
        r.digest(digest, f"behavegate.shard.included.{name}")
    return value


def _pairs(r: _Reader, items: list[Any]) -> tuple[Pair, ...]:
    pairs: list[Pair] = []
    for position, item in enumerate(items):
        where = f"behavegate.shard.pairs[{position}]"
        if not (isinstance(item, list) and len(item) == 2):
            r.bad(where, "must be [scenario id, attempt number]")
        pairs.append((r.text(item[0], f"{where}[0]"), r.integer(item[1], f"{where}[1]", 1) - 1))
    if len(set(pairs)) != len(pairs):
        r.bad("behavegate.shard.pairs", "lists an attempt twice")
    return tuple(pairs)


def _plan(r: _Reader, value: Any) -> dict[str, Any]:
    where = "behavegate.shard.plan"
    plan = r.exact(value, PLAN_KEYS, where)
    for item in r.listing(plan["scenarios"], f"{where}.scenarios", optional=True) or ():
        r.text(item, f"{where}.scenarios[]")
    for item in r.listing(plan["tags"], f"{where}.tags"):
        r.text(item, f"{where}.tags[]")
    r.integer(plan["runs"], f"{where}.runs", 1, optional=True)
    r.number(plan["min_pass_rate"], f"{where}.min_pass_rate", optional=True)
    if plan["threshold_mode"] not in (None, "average", "all"):
        r.bad(f"{where}.threshold_mode", "must be average, all or null")
    r.integer(plan["max_scenarios"], f"{where}.max_scenarios", 1)
    r.number(plan["max_seconds"], f"{where}.max_seconds")
    if not isinstance(plan["attempts"], dict):
        r.bad(f"{where}.attempts", "must be a JSON object")
    for key, count in plan["attempts"].items():
        r.integer(count, f"{where}.attempts.{key}", 1)
    for i, item in enumerate(r.listing(plan["gate_tags"], f"{where}.gate_tags")):
        if not (isinstance(item, list) and len(item) == 2) or r.number(item[1], f"{where}.gate_tags[{i}][1]") > 1:
            r.bad(f"{where}.gate_tags[{i}]", "must be [tag, rate between 0 and 1]")
        r.text(item[0], f"{where}.gate_tags[{i}][0]")
    for item in r.listing(plan["suite_tags"], f"{where}.suite_tags"):
        r.text(item, f"{where}.suite_tags[]")
    r.integer(plan["max_assertions"], f"{where}.max_assertions", 1, optional=True)
    return plan


def _attempts(r: _Reader, scenarios: list[Any], pairs: tuple[Pair, ...], v2: bool) -> dict[Pair, Judged]:
    """Every owned attempt, found where the report shows it."""
    by_id: dict[str, tuple[int, dict[str, Any]]] = {}
    for position, item in enumerate(scenarios):
        scenario_id = r.text(r.key(item, "id", f"scenarios[{position}]"), f"scenarios[{position}].id")
        by_id.setdefault(scenario_id, (position, item))
    found: dict[Pair, Judged] = {}
    for scenario_id, attempt in pairs:
        if scenario_id not in by_id:
            r.bad("scenarios", f"has no entry for scenario {scenario_id!r}, which behavegate.shard.pairs lists")
        position, item = by_id[scenario_id]
        where = f"scenarios[{position}]"
        entry = item
        if v2:
            tries = r.listing(r.key(item, "attempts", where), f"{where}.attempts")
            where = f"{where}.attempts[{attempt}]"
            if attempt >= len(tries) or not isinstance(tries[attempt], dict) or tries[attempt].get("attempt") != attempt + 1:
                r.bad(where, f"must be attempt {attempt + 1}, which behavegate.shard.pairs lists")
            entry = tries[attempt]
        found[(scenario_id, attempt)] = _judged(r, entry, where, scenario_id, v2)
    return found


def _judged(r: _Reader, entry: Any, where: str, scenario_id: str, v2: bool) -> Judged:
    status = r.key(entry, "status", where)
    if status not in STATUSES:
        r.bad(f"{where}.status", "must be pass, fail or incomplete")
    verdicts = tuple(
        _verdict(r, item, f"{where}.assertions[{i}]")
        for i, item in enumerate(r.listing(r.key(entry, "assertions", where), f"{where}.assertions"))
    )
    if combine(v.status for v in verdicts) != status:
        r.bad(f"{where}.status", "does not follow from its assertions")
    raw = r.key(entry, "observation", where)
    observation = None if raw is None else _observation(r, raw, f"{where}.observation", scenario_id, v2)
    return Judged(status, verdicts, observation)


def _verdict(r: _Reader, value: Any, where: str) -> Verdict:
    # The checks in the order of their messages, each tested before its message is worded
    # (a merge reads tens of thousands of verdicts).
    if type(value) is not dict or value.keys() != _VERDICT_KEYS:
        r.exact(value, VERDICT_KEYS, where)
    assertion, kind, status, message = value["assertion"], value["kind"], value["status"], value["message"]
    if status not in STATUSES:
        r.bad(f"{where}.status", "must be pass, fail or incomplete")
    if type(assertion) is not str or type(kind) is not str or type(message) is not str:
        for key in ("assertion", "kind", "message"):
            r.text(value[key], f"{where}.{key}")
    expected, observed = value["expected"], value["observed"]
    if type(expected) is dict or type(expected) is list:
        r.shallow(expected, f"{where}.expected")
    if type(observed) is dict or type(observed) is list:
        r.shallow(observed, f"{where}.observed")
    return Verdict(assertion, kind, status, message, expected, observed)


def _observation(r: _Reader, value: Any, where: str, scenario_id: str, v2: bool) -> Observation:
    """The inverse of ``Observation.as_dict`` (version 1) or ``as_dict_v2``."""
    if not isinstance(value, dict):
        r.bad(where, "must be a JSON object or null")
    raw = value
    if value.keys() != (_V2_OBSERVATION if v2 else _V1_OBSERVATION):  # else: the optional keys, or a problem
        keys = OBSERVATION_KEYS + V2_KEYS if v2 else OBSERVATION_KEYS
        optional = tuple(key for key in ("trace", "conversation", "judge", *SPLIT_USAGE) if v2 and key in value)
        raw = r.exact(value, (*keys, *optional), where)
    if raw["id"] != scenario_id:
        r.bad(f"{where}.id", f"must be {scenario_id!r}")
    calls = r.listing(raw["tool_calls"], f"{where}.tool_calls", optional=True)
    trace = raw.get("trace")
    traced = None if trace is None else r.exact(trace, ("trace_id", "calls"), f"{where}.trace")
    marks = [] if traced is None else r.listing(traced["calls"], f"{where}.trace.calls")
    if traced is not None and len(marks) != len(calls or ()):
        r.bad(f"{where}.trace.calls", "must have one entry per tool call")
    tool_calls = None
    if calls is not None:
        tool_calls = tuple(
            _call(r, call, marks[i] if marks else None, f"{where}.tool_calls[{i}]") for i, call in enumerate(calls)
        )
    sources = r.listing(raw["sources"], f"{where}.sources", optional=True)
    for i, source in enumerate(sources or ()):
        r.text(source, f"{where}.sources[{i}]")
    fields: dict[str, Any] = {}
    if v2:
        errors = r.listing(raw["tool_errors"], f"{where}.tool_errors", optional=True)
        for i, error in enumerate(errors or ()):
            r.text(error, f"{where}.tool_errors[{i}]", optional=True)
        fields = {
            "latency_ms": r.number(raw["latency_ms"], f"{where}.latency_ms", optional=True),
            **{key: r.integer(raw.get(key), f"{where}.{key}", optional=True) for key in ("total_tokens", *SPLIT_USAGE)},
            "steps": r.integer(raw["steps"], f"{where}.steps", optional=True),
            "tool_errors": None if errors is None else tuple(errors),
            "trace_id": None if traced is None else r.text(traced["trace_id"], f"{where}.trace.trace_id"),
        }
        if "conversation" in raw:
            fields["conversation"] = _conversation(r, raw["conversation"], f"{where}.conversation", tool_calls or ())
        if "judge" in raw:
            fields["judge"] = _judge(r, raw["judge"], f"{where}.judge")
    return Observation(
        scenario_id=scenario_id,
        response=r.text(raw["response"], f"{where}.response", optional=True),
        response_complete=r.flag(raw["response_complete"], f"{where}.response_complete"),
        finish_reason=r.text(raw["finish_reason"], f"{where}.finish_reason", optional=True),
        tool_calls=tool_calls,
        tool_calls_complete=r.flag(raw["tool_calls_complete"], f"{where}.tool_calls_complete"),
        refusal=r.flag(raw["refusal"], f"{where}.refusal"),
        sources=None if sources is None else tuple(sources),
        error=r.text(raw["error"], f"{where}.error", optional=True),
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


def _conversation(r: _Reader, value: Any, where: str, calls: tuple[ToolCall, ...]) -> Conversation:
    """The inverse of ``Conversation.as_dict``."""
    raw = r.exact(value, ("turns", "max_turns", "possible_loop", "results"), where)
    results = []
    for i, item in enumerate(r.listing(raw["results"], f"{where}.results")):
        at = f"{where}.results[{i}]"
        failed = isinstance(item, dict) and "error" in item
        result = r.exact(item, ("call", "name", "error" if failed else "content"), at)
        call = r.integer(result["call"], f"{at}.call")
        if call >= len(calls) or calls[call].name != r.text(result["name"], f"{at}.name"):
            r.bad(f"{at}.call", "must index a tool call of that name")
        results.append(
            ScriptedResult(call, result["name"], r.shallow(result.get("content"), f"{at}.content"),
                           r.text(result["error"], f"{at}.error") if failed else None)
        )  # fmt: skip
    return Conversation(
        r.integer(raw["turns"], f"{where}.turns", 1),
        r.integer(raw["max_turns"], f"{where}.max_turns", 1),
        tuple(results),
        bool(r.flag(raw["possible_loop"], f"{where}.possible_loop")),
    )


def _call(r: _Reader, value: Any, mark: Any, where: str) -> ToolCall:
    raw = value if type(value) is dict and value.keys() == _CALL else r.exact(value, ("name", "arguments"), where)
    name = raw["name"] if type(raw["name"]) is str else r.text(raw["name"], f"{where}.name")
    if raw["arguments"] is not None and not isinstance(raw["arguments"], dict):
        r.bad(f"{where}.arguments", "must be a JSON object or null")
    r.shallow(raw["arguments"], f"{where}.arguments")
    if mark is None:
        return ToolCall(name, raw["arguments"])
    marked = r.exact(mark, ("call_id", "executed", "group"), where.replace("tool_calls", "trace.calls"))
    return ToolCall(
        name,
        raw["arguments"],
        call_id=r.text(marked["call_id"], f"{where}.call_id", optional=True),
        executed=r.flag(marked["executed"], f"{where}.executed"),
        group=r.integer(marked["group"], f"{where}.group", optional=True),
    )
