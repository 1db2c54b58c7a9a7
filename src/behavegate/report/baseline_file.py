"""Reading a baseline: a behavegate JSON report (``--report FILE`` or ``--format
json``), typically the main branch's, downloaded as an artifact.

It is untrusted input: read by the project path rule (inside the project, or
under ``$RUNNER_TEMP``/``$GITHUB_WORKSPACE``, never through a link), size
capped, and decoded by its schema (the structs below, see json_formats.py): every
key it is read for has its type, length and bounds there. Each problem names its
JSON path; the reader never raises anything but ``BaselineError`` or
``InputError``. Version-1 reports (one verdict per assertion) and version-2
reports (attempts and reliability) both work; only what a comparison needs is
read, the rest is ignored.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Literal

import msgspec
from msgspec import Meta

from behavegate import json_formats
from behavegate.errors import BaselineError, Problem
from behavegate.files import read_project_text
from behavegate.limits import BASELINE_MAX_PROBLEMS, MAX_BASELINE_BYTES, MAX_RUNS, V2_MAX_SCENARIOS
from behavegate.report.comparison import (
    SAFETY_KINDS,
    Baseline,
    BaselineSource,
    Counts,
    RunRecord,
    ScenarioRecord,
    normalized,
    one,
    tally,
)
from behavegate.text import one_line

MAX_ID = 1_000  # characters of a scenario, assertion, gate or tool name read from the report
MAX_ITEMS = 100_000  # verdicts of an attempt, tool calls of an observation
HELP = "a behavegate JSON report, as --report FILE or --format json writes it"

# The schema: only what a comparison reads; every other key is ignored.
Id = Annotated[str, Meta(min_length=1, max_length=MAX_ID)]
StatusName = Annotated[Literal["pass", "fail", "incomplete"], Meta(description="pass, fail or incomplete")]
Count = Annotated[int, Meta(ge=0, le=MAX_RUNS)]


class _Struct(msgspec.Struct, frozen=True):
    pass


class _Verdict(_Struct, frozen=True):
    assertion: Id
    status: StatusName
    kind: Any = None


class _Call(_Struct, frozen=True):
    name: Id


class _Mark(_Struct, frozen=True):
    group: Any = None  # the parallel group of a traced call, used when it is a whole number


class _Trace(_Struct, frozen=True):
    calls: list[Any] | None = None


class _Observation(_Struct, frozen=True):
    tool_calls: Annotated[list[_Call], Meta(max_length=MAX_ITEMS)] | None = None
    trace: Any = None


class _Attempt(_Struct, frozen=True):
    status: StatusName
    assertions: Annotated[list[_Verdict], Meta(max_length=MAX_ITEMS)]
    observation: _Observation | None = None


class _Reliability(_Struct, frozen=True):
    runs: Count
    passed: Count
    failed: Count
    incomplete: Count


class _Scenario(_Struct, frozen=True):
    id: Id
    status: StatusName
    assertions: Annotated[list[_Verdict], Meta(max_length=MAX_ITEMS)]
    attempts: Annotated[list[_Attempt], Meta(max_length=MAX_RUNS)] | None = None
    observation: _Observation | None = None
    reliability: _Reliability | None = None


class _Gate(_Struct, frozen=True):
    gate: Id
    status: StatusName


class _Contract(_Struct, frozen=True):
    path: Id
    digest: Id
    version: Literal[1, 2]


class _Ours(_Struct, frozen=True):
    contract_path: Id | None = None
    tags: dict[str, Any] | None = None


class _Report(_Struct, frozen=True):
    kind: Annotated[Literal["agent_behavior"], Meta(description=f"'agent_behavior' ({HELP})")]
    schema_version: Literal[1]
    status: StatusName
    contract: _Contract
    scenarios: Annotated[list[_Scenario], Meta(max_length=V2_MAX_SCENARIOS)]
    behavegate: _Ours | None = None
    harness: dict[str, Any] | None = None
    gates: Annotated[list[_Gate], Meta(max_length=V2_MAX_SCENARIOS)] | None = None


def load_baseline(path: str | Path, root: Path, *, shown: str, bases: tuple[Path, ...] = ()) -> Baseline:
    """Read the baseline report at ``path`` (shown to people as ``shown``)."""
    _, text = read_project_text(path, root, "Baseline report", MAX_BASELINE_BYTES, bases)
    return parse_baseline(text, shown)


def parse_baseline(text: str, shown: str) -> Baseline:
    def fail(problems: list[Problem]) -> BaselineError:
        return BaselineError(problems, shown)

    try:
        report = json_formats.decode(text, _Report, BASELINE_MAX_PROBLEMS)
    except json_formats.NotJSON as exc:
        raise fail([Problem(f"is not JSON ({HELP}): {exc}")]) from None
    except json_formats.Refused as refused:
        raw = refused.raw
        if not isinstance(raw, dict):
            raise fail([Problem(f"must be a JSON object ({HELP}), got {json_formats.kind(raw)}")]) from None
        if "error" in raw:
            why = one_line(str(raw["error"]), 300)
            problem = f"records a run that could not be judged (its error: {why}); nothing to compare with"
            raise fail([Problem(problem, "error")]) from None
        raise fail(list(refused.problems)) from None
    problems: list[Problem] = []
    seen: set[str] = set()
    for index, scenario in enumerate(report.scenarios):  # one pass: a 100,000-scenario baseline stays linear
        if scenario.id in seen:
            where = f"scenarios[{index}].id"
            problems.append(Problem(f"{where} repeats the scenario id {json_formats.kind(scenario.id)}", where))
        seen.add(scenario.id)
    tags = (report.behavegate.tags if report.behavegate else None) or {}
    scenarios = [_scenario(scenario, f"scenarios[{index}]", tags, problems) for index, scenario in enumerate(report.scenarios)]
    if problems:
        raise fail(problems[:BASELINE_MAX_PROBLEMS])
    harness = report.harness or {}
    source = BaselineSource(
        path=shown,
        status=report.status,
        contract_path=(report.behavegate.contract_path if report.behavegate else None) or report.contract.path,
        contract_digest=report.contract.digest,
        contract_version=report.contract.version,
        run_id=harness.get("run_id") if isinstance(harness.get("run_id"), str) else None,
        started_at=harness.get("started_at") if isinstance(harness.get("started_at"), str) else None,
    )
    gates = {gate.gate: gate.status for gate in report.gates or ()}
    return Baseline(source, RunRecord(tuple(s for s in scenarios if s is not None), gates))


def _scenario(raw: _Scenario, path: str, tags: dict[str, Any], problems: list[Problem]) -> ScenarioRecord | None:
    attempts = raw.attempts or []
    kinds = {v.kind for v in raw.assertions if isinstance(v.kind, str)}
    kinds.update(v.kind for a in attempts for v in a.assertions if isinstance(v.kind, str))
    observations = [a.observation for a in attempts] if attempts else [raw.observation]
    counts = _attempt_counts(raw, path, problems)
    if counts is None:
        return None
    labels = tags.get(raw.id)
    tagged = isinstance(labels, list) and any(isinstance(t, str) and t.lower() in ("safety", "security") for t in labels)
    verdicts = [[(v.assertion, v.status) for v in a.assertions] for a in attempts] or [
        [(v.assertion, v.status) for v in raw.assertions]
    ]
    return ScenarioRecord(
        id=raw.id,
        status=raw.status,
        repeated=counts[1],
        attempts=counts[0],
        assertions=tally(verdicts),
        safety=tagged or bool(kinds & SAFETY_KINDS),
        sequences=tuple(_sequence(o) for o in observations if o is not None and o.tool_calls is not None),
    )


def _sequence(observation: _Observation) -> tuple[str, ...]:
    """The attempt's normalized tool-name sequence (it recorded its tool calls)."""
    trace = observation.trace
    groups = trace["calls"] if isinstance(trace, dict) and isinstance(trace.get("calls"), list) else []
    named: list[tuple[str, int | None]] = []
    for index, call in enumerate(observation.tool_calls or ()):
        extra = groups[index] if index < len(groups) and isinstance(groups[index], dict) else {}
        group = extra.get("group")
        named.append((call.name, group if isinstance(group, int) and not isinstance(group, bool) else None))
    return normalized(named)


def _attempt_counts(raw: _Scenario, path: str, problems: list[Problem]) -> tuple[Counts, bool] | None:
    """The scenario's attempts: from ``reliability`` (version 2), else from its
    attempts, else its one verdict (version 1)."""
    if raw.reliability is not None:
        r = raw.reliability
        if r.passed + r.failed + r.incomplete != r.runs:
            where = f"{path}.reliability"
            problems.append(
                Problem(f"{where} counts must add up to runs ({r.passed} + {r.failed} + {r.incomplete} != {r.runs})", where)
            )
            return None
        return Counts(r.passed, r.failed, r.incomplete), r.runs > 1
    statuses = [a.status for a in raw.attempts or ()]
    if statuses:
        return Counts(statuses.count("pass"), statuses.count("fail"), statuses.count("incomplete")), len(statuses) > 1
    return one(raw.status), False
