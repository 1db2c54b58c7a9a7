"""The schema of a run directory's four files, as ``behavegate replay`` reads them
(json_formats.py checks each file by it before replay.py compares them).

It holds what replay's checks take apart: the lists they walk, the keys they index and
the values they compute with. Values replay only compares are ``Any`` here: a
changed value is found by the comparisons (and the seal), a missing or mistyped
container here, named by its JSON path, instead of by a KeyError.
"""

from __future__ import annotations

from typing import Any

import msgspec


class Open(msgspec.Struct, frozen=True):
    pass


# --- events.jsonl: one event a line, told apart by "event" ------------------------------


class Event(Open, frozen=True, tag_field="event"):
    run_id: str
    kind: Any
    schema_version: Any
    timestamp: Any


class RunStarted(Event, frozen=True, tag="run_started"):
    budget: Any


class StepStarted(Event, frozen=True, tag="step_started"):
    step: str
    input_summary: Any


class StepCompleted(Event, frozen=True, tag="step_completed"):
    step: str
    status: Any
    duration_ms: Any
    output_summary: Any


class ToolStarted(Event, frozen=True, tag="tool_started"):
    step: str
    tool: Any


class ToolCompleted(Event, frozen=True, tag="tool_completed"):
    step: str
    tool: Any
    status: Any


class RunCompleted(Event, frozen=True, tag="run_completed"):
    status: Any
    evidence_digest: Any = None
    events_digest: Any = None
    artifact_digests: Any = None


AnyEvent = RunStarted | StepStarted | StepCompleted | ToolStarted | ToolCompleted | RunCompleted


# --- state.json -----------------------------------------------------------------------


class Step(Open, frozen=True):
    name: str
    started_at: Any
    ended_at: Any
    status: Any
    duration_ms: Any
    input_summary: Any
    output_summary: Any


class ToolCall(Open, frozen=True):
    step: Any
    tool: Any
    started_at: Any
    ended_at: Any
    status: Any


class Budget(Open, frozen=True):
    max_steps: int


class Metadata(Open, frozen=True):
    contract_digest: Any
    contract_version: Any
    contract_path: Any
    mode: Any
    behavior_provenance: Any
    evidence_trust: Any
    observation_evidence_digest: Any
    observation_source_digest: Any
    behavior_evidence_digest: Any
    scenario_ids: Any


class State(Open, frozen=True):
    steps: list[Step]
    tool_calls: list[ToolCall]
    decisions: list[Any]
    budget: Budget
    metadata: Metadata
    run_id: Any
    started_at: Any
    ended_at: Any
    duration_ms: Any
    status: Any
    error: Any


# --- summary.json ---------------------------------------------------------------------


class Used(Open, frozen=True):
    steps: int


class Remaining(Open, frozen=True):
    steps: Any


class Summary(Open, frozen=True):
    budget_used: Used
    budget_remaining: Remaining


# --- behavior-results.json ------------------------------------------------------------


class Assertion(Open, frozen=True):
    assertion: str  # replay's re-judging keys the recorded statuses by it
    kind: str
    status: str
    message: Any
    expected: Any
    observed: Any


class Attempt(Open, frozen=True):
    attempt: Any
    status: Any
    assertions: list[Assertion]


class SequentialSettings(Open, frozen=True):
    false_fail: float
    missed_drop: float
    margin: float


class Sequential(Open, frozen=True):
    settings: SequentialSettings
    cap: int


class Reliability(Open, frozen=True):
    runs: int
    passed: Any
    failed: Any
    min_pass_rate: float
    gate: str
    sequential: Sequential | None = None


class Scenario(Open, frozen=True):
    id: str
    status: Any
    assertions: list[Assertion]
    observation: dict[str, Any] | None
    attempts: list[Attempt] | None = None
    reliability: Reliability | None = None


class Gate(Open, frozen=True):
    gate: str
    status: str


class Contract(Open, frozen=True):
    digest: Any
    version: Any
    path: Any


class Provenance(Open, frozen=True):
    trust: Any
    selected_digest: Any


class Harness(Open, frozen=True):
    decision_count: Any
    run_id: Any


class Report(Open, frozen=True):
    artifacts: Any
    contract: Contract
    mode: Any
    provenance: Provenance
    scenarios: list[Scenario]
    status: Any
    summary: Any
    coverage: Any
    evidence_digest: Any
    harness: Harness
    gates: list[Gate] = []
