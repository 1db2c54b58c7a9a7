"""The report's digests (skylos's, byte for byte), its counts and run summary,
and its size limit: pure functions of the JSON view."""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Iterable, Mapping
from typing import Any

from behavegate.canonical_json import canonical_bytes
from behavegate.limits import MAX_REPORT_BYTES, V2_MAX_REPORT_BYTES
from behavegate.model import Contract, Evaluation, RunFacts, Verdict

EVIDENCE_KEYS = (
    "schema_version",
    "kind",
    "status",
    "mode",
    "contract",
    "summary",
    "coverage",
    "scenarios",
    "provenance",
    "artifacts",
)


def sha256_json(value: Any) -> str:
    return hashlib.sha256(canonical_bytes(value)).hexdigest()


def selected_digest(observations: Mapping[str, Mapping[str, Any]], scenario_ids: Iterable[str]) -> str:
    """The digest of the observations (as the report shows them) of the selected scenarios."""
    chosen = [observations[i] for i in sorted(scenario_ids) if i in observations]
    return sha256_json({"version": 1, "scenarios": chosen})


def evidence_digest(report: Mapping[str, Any]) -> str:
    # Version-2 suite gates are evidence too; version-1 reports have none, so
    # their digest stays exactly skylos's.
    keys = EVIDENCE_KEYS + (("gates",) if "gates" in report else ())
    return sha256_json({key: report.get(key) for key in keys})


def count_statuses(verdicts: Iterable[Verdict]) -> tuple[dict[str, int], dict[str, Any]]:
    """(assertion totals for the summary, the coverage block)."""
    return count_pairs(Counter((verdict.kind, verdict.status) for verdict in verdicts))  # counted in C


def count_pairs(pairs: Mapping[tuple[str, str], int]) -> tuple[dict[str, int], dict[str, Any]]:
    """:func:`count_statuses` from verdicts counted by (kind, status): a streamed run counts as it goes."""
    by_kind: dict[str, Counter[str]] = {}
    totals: Counter[str] = Counter()
    for (kind, status), count in pairs.items():
        by_kind.setdefault(kind, Counter())[status] += count
        totals[status] += count
    requested = sum(totals.values())
    summary = {
        "assertion_count": requested,
        "passed_assertions": totals["pass"],
        "failed_assertions": totals["fail"],
        "incomplete_assertions": totals["incomplete"],
    }
    coverage = {
        "requested": requested,
        "completed": totals["pass"] + totals["fail"],
        "incomplete": totals["incomplete"],
        "by_assertion": {
            kind: {
                "requested": sum(counts.values()),
                "passed": counts["pass"],
                "failed": counts["fail"],
                "incomplete": counts["incomplete"],
            }
            for kind, counts in sorted(by_kind.items())
        },
    }
    return summary, coverage


def harness_block(
    contract: Contract, evaluation: Evaluation, facts: RunFacts, paths: Mapping[str, str] | None = None, status: str = "pass"
) -> dict[str, Any]:
    """skylos's run summary (``harness``), kept so its consumers find it."""
    steps = len(evaluation.results)
    seconds = round(facts.duration_ms / 1000, 3)
    failed = status != "pass"
    return {
        "schema_version": 1,
        "run_id": facts.run_id,
        "kind": "agent_behavior",
        "project_root": str(contract.project_root),
        "status": "failed" if failed else "completed",
        "started_at": facts.started_at,
        "ended_at": facts.ended_at,
        "duration_ms": facts.duration_ms,
        "budget": {
            "max_steps": facts.max_scenarios,
            "max_findings": None,
            "max_llm_calls": None,
            "max_seconds": facts.max_seconds,
            "max_fixes": None,
        },
        "budget_used": {"steps": steps, "findings": 0, "llm_calls": 0, "seconds": seconds, "fixes": 0},
        "budget_remaining": {
            "steps": facts.max_scenarios - steps,
            "findings": None,
            "llm_calls": None,
            "seconds": round(max(facts.max_seconds - seconds, 0.0), 3),
            "fixes": None,
        },
        "phase_count": steps,
        "completed_phases": [f"scenario:{r.scenario.id}" for r in evaluation.results],
        "failed_phase": None,
        "tool_call_count": facts.tool_call_count,
        "decision_count": sum(len(r.verdicts) for r in evaluation.results),
        "trace_path": (paths or {}).get("trace_path"),
        "state_path": (paths or {}).get("state_path"),
        "summary_path": (paths or {}).get("summary_path"),
        "error": f"agent behavior evaluation {status}" if failed else None,
    }


def report_cap(version: int) -> int:
    """The JSON report's size limit: skylos's for version 1, a suite's for version 2."""
    return V2_MAX_REPORT_BYTES if version >= 2 else MAX_REPORT_BYTES
