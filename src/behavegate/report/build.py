"""Building the typed Report from an evaluation: the one place evidence is
redacted for every view, and where the report's size limit is checked."""

from __future__ import annotations

from typing import Any

from behavegate.errors import RunIncomplete
from behavegate.frozen import replace
from behavegate.limits import REPORT_RESERVE_BYTES
from behavegate.model import Contract, Evaluation, RunFacts, Scenario, Timing
from behavegate.report.derived import derive
from behavegate.report.digests import report_cap
from behavegate.report.redact import mask_flagged, redact_evaluation
from behavegate.report.result import Report


def build_report(
    contract: Contract,
    evaluation: Evaluation,
    *,
    mode: str,
    provenance: dict[str, Any],
    facts: RunFacts,
    contract_display_path: str,
    version: str,
    secrets: tuple[str, ...] = (),
    artifacts: bool = False,
    skipped: tuple[Scenario, ...] | None = None,
    timings: tuple[Timing, ...] | None = None,
    notes: tuple[str, ...] = (),
) -> Report:
    """The typed report. With ``secrets`` (the run's bearer tokens: the agent's, the
    judge's) every observation and verdict it holds is redacted: the verdicts were
    reached on the raw evidence, and no view can show a token. Raises RunError when
    the JSON view would exceed the report size limit."""
    shown = evaluation
    for secret in sorted(secrets, key=len, reverse=True):  # a token holding another is masked whole
        shown = redact_evaluation(shown, secret)
    shown = mask_flagged(shown)
    report = Report(
        contract=contract,
        evaluation=shown,
        derived=derive(contract, shown, provenance),
        mode=mode,
        provenance=provenance,
        facts=facts,
        contract_path=contract_display_path,
        version=version,
        artifacts=artifacts,
        skipped=skipped,
        timings=timings,
        notes=notes,
    )
    # The size limit (skylos's, on its own keys) is checked now, not in some later view;
    # the text measured is the one the JSON views write.
    cap = report_cap(contract.version)
    if not report.within_size_limit(cap - REPORT_RESERVE_BYTES):
        raise RunIncomplete(f"agent behavior evidence exceeds {cap} bytes")
    return report


def rejudged(report: Report, evaluation: Evaluation) -> Report:
    """``report`` with another evaluation, and the view facts derived from it."""
    return replace(report, evaluation=evaluation, derived=derive(report.contract, evaluation, report.provenance))
