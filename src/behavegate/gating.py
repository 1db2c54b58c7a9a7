"""The gate vocabulary, one of each: what ``--fail-on`` may say, what kinds of suite gate
there are (their names in reports are read here, once), and what ``--fail-on`` makes of a
run's status. The model (model.GateResult), the Report and every view use these."""

from __future__ import annotations

import enum
from typing import Any, Literal

from behavegate.frozen import Frozen, fields

Status = Literal["pass", "fail", "incomplete"]


class FailOn(enum.StrEnum):
    """``--fail-on`` (the Action's ``fail-on``): what of a judged run fails it."""

    INCOMPLETE = "incomplete"  # a violation or missing evidence (the default)
    FAIL = "fail"  # violations only
    REGRESSION = "regression"  # only what regressed against the baseline
    NEVER = "never"  # report, never fail (invalid input still exits 2)


class GateKind(enum.StrEnum):
    """What a suite-level gate measures; its name in reports says it (``GateName``)."""

    MIN_PASS_RATE = "min_pass_rate"  # min_pass_rate, min_pass_rate[<file>]
    SCORE = "score"  # an Oxy file's score
    MIN_SCORE = "min_score"  # graded scores' floor
    TAG = "tag"  # tag[<tag>].<min_pass_rate|min_score>
    LATENCY = "latency_p95_ms"
    SHARDS = "shards"  # a merge missing shards


class GateName(Frozen):
    """A gate's name read once: ``tag[safety].min_score`` is kind TAG, subject ``safety``,
    key ``min_score``; ``min_pass_rate[a.yml]`` is kind MIN_PASS_RATE, subject ``a.yml``."""

    kind: GateKind | None  # None: a name this version does not know (kept, never judged by kind)
    subject: str | None = None
    key: str | None = None

    @classmethod
    def parse(cls, name: str) -> GateName:
        head, bracket, rest = name.partition("[")
        subject, key = None, None
        if bracket:
            subject, _, tail = rest.partition("]")
            key = tail[1:] if tail.startswith(".") else None
        try:
            kind: GateKind | None = GateKind(head)
        except ValueError:
            kind = None
        return cls(kind, subject, key)

    @property
    def floor(self) -> bool:
        """A pass-rate floor or an Oxy score: it decides the run instead of every scenario."""
        return self.kind in (GateKind.MIN_PASS_RATE, GateKind.SCORE)


class GateResult(Frozen):
    """A suite-level gate (version 2): accuracy floor, latency percentile."""

    gate: str
    status: Status
    message: str
    expected: Any = None
    observed: Any = None

    @property
    def name(self) -> GateName:
        return GateName.parse(self.gate)

    def as_dict(self) -> dict[str, Any]:
        return {item.name: getattr(self, item.name) for item in fields(self)}


def fail_on_status(status: Status, fail_on: FailOn, regressions: Status | None) -> Status:
    """What ``--fail-on`` makes of a run's status, and so its exit code: the status itself
    (``incomplete``, the default), only its failures (``fail``), only what regressed against
    the baseline (``regression``, given one: ``regressions`` is that comparison's status), or
    nothing (``never``). A run that could not be judged at all never reaches here: it exits 2."""
    if fail_on == FailOn.NEVER:
        return "pass"
    if fail_on == FailOn.REGRESSION and regressions is not None:
        return regressions
    if fail_on == FailOn.FAIL:
        return "fail" if status == "fail" else "pass"
    return status
