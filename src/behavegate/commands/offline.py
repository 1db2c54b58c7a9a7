"""The offline path: a contract judged against a captured observation file."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from behavegate import __version__
from behavegate.commands.options import RunOptions
from behavegate.evidence.shard import owned_attempts
from behavegate.judge.evaluate import evaluate
from behavegate.model import Contract, Observation, ObservationSet, RunFacts, Scenario, Timing
from behavegate.report.build import build_report
from behavegate.report.result import Report


def run_offline(
    contract: Contract,
    observations: ObservationSet,
    options: RunOptions,
    facts: RunFacts,
    *,
    display_path: str,
    skipped: tuple[Scenario, ...] | None = None,
    timings: tuple[Timing, ...] | None = None,
    provenance: dict[str, Any] | None = None,
    only: frozenset[tuple[str, int]] | None = None,
) -> Report:
    """``provenance``: where the attempts came from when not from an observation file (traces).
    ``only``: judge just these (scenario id, attempt) pairs (a shard's); the others are unobserved."""
    attempts: Mapping[str, Sequence[Observation | None]] | None = None
    if contract.version >= 2:
        attempts = observations.attempts if only is None else owned_attempts(observations.attempts, only)
    evaluation = evaluate(
        contract,
        observations.observations,
        attempts=attempts,
        runs=options.runs,
        gates=contract.gates,  # the run's, set by options.select
    )
    provenance = provenance or {
        "kind": "observation_file",
        "trust": "unverified_fixture",
        "path": str(observations.path),
        "schema_version": observations.version,
        "source_digest": observations.digest,
    }
    return build_report(
        contract,
        evaluation,
        mode="offline",
        provenance=provenance,
        facts=facts,
        contract_display_path=display_path,
        version=__version__,
        artifacts=options.artifacts,
        skipped=skipped,
        timings=timings,
    )
