"""The schema of a shard report, as ``behavegate merge`` reads it (json_formats.py decodes
by it): every key the merge uses, with its type and bounds. Where the report is read as
written by ``Observation.as_dict``/``as_dict_v2`` or a verdict, the keys are exact
(``forbid_unknown_fields``): anything else was not written by behavegate. Checks across
keys (pairs against scenarios, a status against its assertions) are shard_reports.py's.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

import msgspec
from msgspec import UNSET, Meta, UnsetType

from behavegate.limits import MAX_SHARDS

Digest = Annotated[str, Meta(pattern="^[0-9a-f]{64}$", description="a SHA-256 digest (64 hex digits)")]
StatusName = Annotated[Literal["pass", "fail", "incomplete"], Meta(description="pass, fail or incomplete")]
Whole = Annotated[int, Meta(ge=0)]
Positive = Annotated[int, Meta(ge=1)]
NonNegative = Annotated[float, Meta(ge=0)]
Pair = Annotated[tuple[str, Positive], Meta(description="[scenario id, attempt number]")]
GateTag = Annotated[tuple[str, Annotated[float, Meta(ge=0, le=1)]], Meta(description="[tag, rate between 0 and 1]")]


class Exact(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    pass


class Open(msgspec.Struct, frozen=True):
    pass


# --- what says which document this is --------------------------------------------------


class Place(Open, frozen=True):
    count: Annotated[int, Meta(ge=1, le=MAX_SHARDS)]
    index: Positive


class HeadOurs(Open, frozen=True):
    shard: Place


class HeadContract(Open, frozen=True):
    version: Positive


class Head(Open, frozen=True):
    """Read first: a shard's error report has only this."""

    behavegate: HeadOurs
    error: str | None = None
    contract: HeadContract | None = None


# --- the judged attempts -------------------------------------------------------------


class Verdict(Exact, frozen=True):
    assertion: str
    kind: str
    status: StatusName
    message: str
    expected: Any
    observed: Any


class Call(Exact, frozen=True):
    name: str
    arguments: dict[str, Any] | None


class Mark(Exact, frozen=True):
    call_id: str | None
    executed: bool | None
    group: Whole | None


class Trace(Exact, frozen=True):
    trace_id: str
    calls: list[Mark]


class Result(Exact, frozen=True):
    call: Whole
    name: str
    content: Any = UNSET
    error: str | UnsetType = UNSET


class BudgetStop(Exact, frozen=True):
    key: str
    limit: Whole
    observed: Positive
    turn: Positive


class UserTurn(Exact, frozen=True):
    user: str
    calls: tuple[Whole, Whole]
    response: str | None
    finish_reason: str | None
    response_complete: bool | None
    refusal: bool | None
    sources: list[str] | None
    model_turns: Positive
    simulated: bool = False


class Simulator(Exact, frozen=True):
    model: str
    replies: list[str]
    ended: str


class Conversation(Exact, frozen=True):
    turns: Positive
    max_turns: Positive
    possible_loop: bool | None
    results: list[Result]
    tool_budget_exceeded: BudgetStop | None = None
    user_turns: list[UserTurn] = []
    simulator: Simulator | None = None


class RetryRecord(Exact, frozen=True):
    turn: Whole
    reason: str
    waited_ms: Whole


class ObservationV1(Exact, frozen=True):
    id: str
    response: str | None
    response_complete: bool | None
    finish_reason: str | None
    tool_calls: list[Call] | None
    tool_calls_complete: bool | None
    refusal: bool | None
    sources: list[str] | None
    error: str | None


class ObservationV2(ObservationV1, frozen=True):
    latency_ms: NonNegative | None
    total_tokens: Whole | None
    steps: Whole | None
    tool_errors: list[str | None] | None
    input_tokens: Whole | None = None
    output_tokens: Whole | None = None
    trace: Trace | None = None
    conversation: Conversation | None = None
    judge: Any = UNSET  # read as an observation file's judge votes are (observation_file.judge_evidence)
    retries: list[RetryRecord] = []
    response_gap: str | None = None
    tool_gap: str | None = None
    tool_source: Literal["mcp"] | None = None


class ScenarioV1(Open, frozen=True):
    id: str
    status: StatusName
    assertions: list[Verdict]
    observation: ObservationV1 | None


class AttemptV2(Open, frozen=True):
    attempt: Positive
    status: StatusName
    assertions: list[Verdict]
    observation: ObservationV2 | None


class ScenarioV2(Open, frozen=True):
    id: str
    attempts: list[AttemptV2]


# --- the run ---------------------------------------------------------------------------


class Plan(Exact, frozen=True):
    """What every shard of one run records the same (commands/shard_run.py ``plan``)."""

    scenarios: list[str] | None
    tags: list[str]
    runs: Positive | None
    min_pass_rate: NonNegative | None
    threshold_mode: Literal["average", "all"] | None
    max_scenarios: Positive
    max_seconds: NonNegative
    attempts: dict[str, Positive]
    gate_tags: list[GateTag]
    suite_tags: list[str]
    max_assertions: Positive | None


class Shard(Open, frozen=True):
    count: Annotated[int, Meta(ge=1, le=MAX_SHARDS)]
    index: Positive
    contract_digest: Any
    pairs: list[Pair]
    partition_digest: Digest
    plan: Plan
    contract_data: Any = None  # checked where it is used (contract/as_data.py)
    included: dict[str, Digest] = {}


class Ours(Open, frozen=True):
    shard: Shard
    version: str
    contract_path: str
    seconds: dict[str, NonNegative] = {}


class Contract(Open, frozen=True):
    version: Positive
    digest: Digest


class _Report(Open, frozen=True):
    behavegate: Ours
    contract: Contract
    mode: Literal["offline", "live"]
    provenance: dict[str, Any]
    evidence_digest: Digest | None


class ReportV1(_Report, frozen=True):
    scenarios: list[ScenarioV1]


class ReportV2(_Report, frozen=True):
    scenarios: list[ScenarioV2]
