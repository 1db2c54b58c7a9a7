"""Reading a baseline: a behavegate JSON report (``--report FILE`` or ``--format
json``), typically the main branch's, downloaded as an artifact.

It is untrusted input: read by the project path rule (inside the project, or
under ``$RUNNER_TEMP``/``$GITHUB_WORKSPACE``, never through a link), size
capped, and every key it is read for is shape-checked. Each problem names its
JSON path; the reader never raises anything but ``BaselineError`` or
``InputError``. Version-1 reports (one verdict per assertion) and version-2
reports (attempts and reliability) both work; only what a comparison needs is
read, the rest is ignored.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from behavegate import finite_json
from behavegate.errors import BaselineError, Problem
from behavegate.files import read_project_text
from behavegate.limits import BASELINE_MAX_PROBLEMS, MAX_BASELINE_BYTES, MAX_RUN_SCENARIOS, MAX_RUNS
from behavegate.model import Status
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

STATUSES = ("pass", "fail", "incomplete")
MAX_ID = 1_000  # characters of a scenario, assertion, gate or tool name read from the report
HELP = "a behavegate JSON report, as --report FILE or --format json writes it"


class _TooMany(Exception):
    pass


class _Reader:
    """Shape checks that record a problem (with its JSON path) and go on."""

    def __init__(self) -> None:
        self.problems: list[Problem] = []

    def bad(self, path: str, text: str) -> None:
        self.problems.append(Problem(f"{path} {text}", path))
        if len(self.problems) >= BASELINE_MAX_PROBLEMS:
            raise _TooMany

    def obj(self, value: Any, path: str, *, optional: bool = False) -> dict[str, Any] | None:
        if value is None and optional:
            return None
        if not isinstance(value, dict):
            self.bad(path, f"must be an object, got {_kind(value)}")
            return None
        return value

    def items(self, value: Any, path: str, limit: int, *, optional: bool = False) -> list[Any]:
        if value is None and optional:
            return []
        if not isinstance(value, list):
            self.bad(path, f"must be a list, got {_kind(value)}")
            return []
        if len(value) > limit:
            self.bad(path, f"must have at most {limit} entries, got {len(value)}")
            return []
        return value

    def text(self, value: Any, path: str, *, optional: bool = False) -> str | None:
        if value is None and optional:
            return None
        if not isinstance(value, str) or not value or len(value) > MAX_ID:
            self.bad(path, f"must be a non-empty string of at most {MAX_ID} characters, got {_kind(value)}")
            return None
        return value

    def count(self, value: Any, path: str) -> int | None:
        if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_RUNS:
            self.bad(path, f"must be a whole number from 0 to {MAX_RUNS}, got {_kind(value)}")
            return None
        return value

    def status(self, value: Any, path: str) -> Status | None:
        if value not in STATUSES:
            self.bad(path, f"must be pass, fail or incomplete, got {_kind(value)}")
            return None
        return value  # type: ignore[no-any-return]


def _kind(value: Any) -> str:
    """What was found, shown inert and short (the report is untrusted)."""
    if isinstance(value, str):
        return one_line(repr(value), 60)
    if isinstance(value, bool) or value is None:
        return json.dumps(value)
    if isinstance(value, int | float):
        return one_line(repr(value), 30)
    if isinstance(value, dict):
        return "an object"
    return "a list" if isinstance(value, list) else type(value).__name__


def load_baseline(path: str | Path, root: Path, *, shown: str, bases: tuple[Path, ...] = ()) -> Baseline:
    """Read the baseline report at ``path`` (shown to people as ``shown``)."""
    _, text = read_project_text(path, root, "Baseline report", MAX_BASELINE_BYTES, bases)
    return parse_baseline(text, shown)


def parse_baseline(text: str, shown: str) -> Baseline:
    def fail(problems: list[Problem]) -> BaselineError:
        return BaselineError(problems, shown)

    try:
        raw = finite_json.loads_document(text)
    except (ValueError, RecursionError) as exc:
        raise fail([Problem(f"is not JSON ({HELP}): {one_line(str(exc), 200)}")]) from None
    if not isinstance(raw, dict):
        raise fail([Problem(f"must be a JSON object ({HELP}), got {_kind(raw)}")])
    if "error" in raw:
        why = one_line(str(raw["error"]), 300)
        raise fail([Problem(f"records a run that could not be judged (its error: {why}); nothing to compare with", "error")])
    reader = _Reader()
    try:
        baseline = _read(reader, raw, shown)
    except _TooMany:
        baseline = None
    if reader.problems or baseline is None:
        raise fail(reader.problems)
    return baseline


def _read(r: _Reader, raw: dict[str, Any], shown: str) -> Baseline | None:
    if raw.get("kind") != "agent_behavior":
        r.bad("kind", f"must be 'agent_behavior' ({HELP}), got {_kind(raw.get('kind'))}")
    if raw.get("schema_version") != 1:
        r.bad("schema_version", f"must be 1, got {_kind(raw.get('schema_version'))}")
    status = r.status(raw.get("status"), "status")
    contract = r.obj(raw.get("contract"), "contract") or {}
    contract_path = r.text(contract.get("path"), "contract.path")
    digest = r.text(contract.get("digest"), "contract.digest")
    version = contract.get("version")
    if version not in (1, 2) or isinstance(version, bool):
        r.bad("contract.version", f"must be 1 or 2, got {_kind(version)}")
    ours = r.obj(raw.get("behavegate"), "behavegate", optional=True) or {}
    shown_contract = r.text(ours.get("contract_path"), "behavegate.contract_path", optional=True)
    tags = r.obj(ours.get("tags"), "behavegate.tags", optional=True) or {}
    harness = r.obj(raw.get("harness"), "harness", optional=True) or {}
    scenarios: list[ScenarioRecord] = []
    for index, item in enumerate(r.items(raw.get("scenarios"), "scenarios", MAX_RUN_SCENARIOS)):
        scenario = _scenario(r, item, f"scenarios[{index}]", tags)
        if scenario is not None:
            scenarios.append(scenario)
    seen: set[str] = set()
    for index, scenario in enumerate(scenarios):
        if scenario.id in seen:
            r.bad(f"scenarios[{index}].id", f"repeats the scenario id {_kind(scenario.id)}")
        seen.add(scenario.id)
    gates: dict[str, Status] = {}
    for index, item in enumerate(r.items(raw.get("gates"), "gates", MAX_RUN_SCENARIOS, optional=True)):
        gate = r.obj(item, f"gates[{index}]") or {}
        name, gate_status = (
            r.text(gate.get("gate"), f"gates[{index}].gate"),
            r.status(gate.get("status"), f"gates[{index}].status"),
        )
        if name and gate_status:
            gates[name] = gate_status
    if r.problems or status is None or contract_path is None or digest is None:
        return None
    source = BaselineSource(
        path=shown,
        status=status,
        contract_path=shown_contract or contract_path,
        contract_digest=digest,
        contract_version=version if isinstance(version, int) else 1,
        run_id=harness.get("run_id") if isinstance(harness.get("run_id"), str) else None,
        started_at=harness.get("started_at") if isinstance(harness.get("started_at"), str) else None,
    )
    return Baseline(source, RunRecord(tuple(scenarios), gates))


def _scenario(r: _Reader, item: Any, path: str, tags: dict[str, Any]) -> ScenarioRecord | None:
    raw = r.obj(item, path)
    if raw is None:
        return None
    scenario_id = r.text(raw.get("id"), f"{path}.id")
    status = r.status(raw.get("status"), f"{path}.status")
    kinds: set[str] = set()
    verdicts = _verdicts(r, raw.get("assertions"), f"{path}.assertions", kinds)
    attempts = r.items(raw.get("attempts"), f"{path}.attempts", MAX_RUNS, optional=True)
    attempt_verdicts: list[list[tuple[str, str]]] = []
    attempt_statuses: list[str] = []
    sequences: list[tuple[str, ...]] = []
    for index, attempt in enumerate(attempts):
        where = f"{path}.attempts[{index}]"
        entry = r.obj(attempt, where) or {}
        attempt_statuses.append(r.status(entry.get("status"), f"{where}.status") or "incomplete")
        attempt_verdicts.append(_verdicts(r, entry.get("assertions"), f"{where}.assertions", kinds))
        sequences.extend(_sequence(r, entry.get("observation"), f"{where}.observation"))
    if not attempts:
        sequences.extend(_sequence(r, raw.get("observation"), f"{path}.observation"))
    reliability = r.obj(raw.get("reliability"), f"{path}.reliability", optional=True)
    counts, repeated = _attempt_counts(r, reliability, f"{path}.reliability", attempt_statuses, status)
    if scenario_id is None or status is None or counts is None:
        return None
    labels = tags.get(scenario_id)
    tagged = isinstance(labels, list) and any(isinstance(t, str) and t.lower() in ("safety", "security") for t in labels)
    return ScenarioRecord(
        id=scenario_id,
        status=status,
        repeated=repeated,
        attempts=counts,
        assertions=tally(attempt_verdicts if attempts else [verdicts]),
        safety=tagged or bool(kinds & SAFETY_KINDS),
        sequences=tuple(sequences),
    )


def _verdicts(r: _Reader, value: Any, path: str, kinds: set[str]) -> list[tuple[str, str]]:
    found: list[tuple[str, str]] = []
    for index, item in enumerate(r.items(value, path, 100_000)):
        verdict = r.obj(item, f"{path}[{index}]") or {}
        assertion = r.text(verdict.get("assertion"), f"{path}[{index}].assertion")
        status = r.status(verdict.get("status"), f"{path}[{index}].status")
        kind = verdict.get("kind")
        if isinstance(kind, str):
            kinds.add(kind)
        if assertion and status:
            found.append((assertion, status))
    return found


def _sequence(r: _Reader, value: Any, path: str) -> list[tuple[str, ...]]:
    """The attempt's normalized tool-name sequence, when it recorded its tool calls."""
    observation = r.obj(value, path, optional=True)
    if observation is None or observation.get("tool_calls") is None:
        return []
    calls = r.items(observation.get("tool_calls"), f"{path}.tool_calls", 100_000)
    trace = observation.get("trace")
    groups: list[Any] = []
    if isinstance(trace, dict) and isinstance(trace.get("calls"), list):
        groups = trace["calls"]
    named: list[tuple[str, int | None]] = []
    for index, call in enumerate(calls):
        entry = r.obj(call, f"{path}.tool_calls[{index}]") or {}
        name = r.text(entry.get("name"), f"{path}.tool_calls[{index}].name")
        extra = groups[index] if index < len(groups) and isinstance(groups[index], dict) else {}
        group = extra.get("group")
        named.append((name or "?", group if isinstance(group, int) and not isinstance(group, bool) else None))
    return [normalized(named)]


def _attempt_counts(
    r: _Reader, reliability: dict[str, Any] | None, path: str, statuses: list[str], status: Status | None
) -> tuple[Counts | None, bool]:
    """The scenario's attempts: from ``reliability`` (version 2), else from its
    attempts, else its one verdict (version 1)."""
    if reliability is not None:
        runs, passed, failed, incomplete = (
            r.count(reliability.get(key), f"{path}.{key}") for key in ("runs", "passed", "failed", "incomplete")
        )
        if runs is None or passed is None or failed is None or incomplete is None:
            return None, False
        if passed + failed + incomplete != runs:
            r.bad(path, f"counts must add up to runs ({passed} + {failed} + {incomplete} != {runs})")
            return None, False
        return Counts(passed, failed, incomplete), runs > 1
    if statuses:
        return Counts(statuses.count("pass"), statuses.count("fail"), statuses.count("incomplete")), len(statuses) > 1
    return (one(status), False) if status is not None else (None, False)
