"""``--summary``: the Markdown job summary.

Untrusted text (agent output, tool arguments, fixture errors) only ever
appears inside code spans, one line, cut to a few hundred characters: no HTML,
no images, no links can form. The whole summary stays under GitHub's 1 MiB
step-summary limit whatever the suite size; what is left out is counted.
"""

from __future__ import annotations

import json
import re
from typing import Any

from jinja2 import Environment, PackageLoader, StrictUndefined

from behavegate.limits import LOOPS_SHOWN, SUMMARY_ITEM_CHARS, SUMMARY_MAX_BYTES
from behavegate.model import ScenarioResult
from behavegate.render.table import attempts_not_sent, failure_note, listed_results, pass_rate
from behavegate.report.judged import judge_note
from behavegate.report.result import Report
from behavegate.report.retries import RETRIES_SHOWN, retried_attempts
from behavegate.text import one_line

ICONS = {"pass": "✅", "fail": "❌", "incomplete": "⚠️"}
_BACKTICKS = re.compile(r"`+")


def code(value: Any, table: bool = False, limit: int = SUMMARY_ITEM_CHARS) -> str:
    """A code span that shows ``value`` literally, whatever it contains."""
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, sort_keys=True)
    text = one_line(text, limit)
    if table:
        text = text.replace("|", "\\|")
    fence = "`" * (max((len(run) for run in _BACKTICKS.findall(text)), default=0) + 1)
    if text.startswith("`") or text.endswith("`") or not text.strip():
        text = f" {text} "
    return f"{fence}{text}{fence}"


def _environment() -> Environment:
    env = Environment(
        loader=PackageLoader("behavegate.render", "templates"),
        autoescape=False,  # Markdown, not HTML: every untrusted value goes through code()
        undefined=StrictUndefined,
        keep_trailing_newline=True,
        trim_blocks=False,
    )
    env.globals.update(code=code, icon=lambda status: ICONS.get(str(status), "❔"))
    return env


def render(report: Report, limit: int = SUMMARY_MAX_BYTES) -> str:
    env = _environment()
    row_template = env.get_template("summary_row.md.j2")
    detail_template = env.get_template("summary_detail.md.j2")
    results = report.results

    def where(result: ScenarioResult, assertion: str | None = None) -> str:
        location = report.location(result.scenario, assertion)
        if location.file != report.contract_path:
            return f"{location.file}:{location.line}" if location.line else location.file
        return str(location.line or "")

    # Budget: header and notes first, then the baseline comparison, rows, details, until the limit.
    budget = limit - 4_000
    loops = report.derived.all_loops
    budget -= 600 * min(len(loops), LOOPS_SHOWN)  # each at most an id and a 300-character reason
    retried = retried_attempts(report)
    budget -= 400 * min(len(retried), RETRIES_SHOWN)  # each an id and at most five reasons
    baseline = _baseline(env, report, budget // 2)
    budget -= len(baseline.encode())
    rows: list[str] = []
    listed = listed_results(report)
    for result in listed:
        counts = report.check_counts(result)
        row = row_template.render(
            id=result.scenario.id,
            status=result.status,
            passed=counts["pass"],
            failed=counts["fail"],
            incomplete=counts["incomplete"],
            line=where(result),
            repeated=report.repeated,
            rate=pass_rate(result.reliability, attempts_not_sent(result)) if result.reliability else "",
        ).rstrip("\n")
        cost = len(row.encode()) + 1
        if cost > budget:
            break
        budget -= cost
        rows.append(row)
    details: list[str] = []
    troubled = sorted((r for r in results if r.status != "pass"), key=lambda r: 0 if r.status == "fail" else 1)
    for result in troubled:
        shown = [
            {**verdict.as_dict(), "line": where(result, verdict.assertion), "note": failure_note(report, result, verdict)}
            for verdict in result.verdicts
            if verdict.status != "pass"
        ]
        detail = detail_template.render(id=result.scenario.id, status=result.status, line=where(result), assertions=shown)
        cost = len(detail.encode()) + 1
        if cost > budget:
            break
        budget -= cost
        details.append(detail)
    totals = report.total_check_counts()
    scenarios = report.scenario_counts()
    return env.get_template("summary.md.j2").render(
        status=report.status,
        gate_status=report.gate_status,
        baseline=baseline,
        mode=report.mode,
        trust=report.provenance.get("trust"),
        evidence_digest=report.evidence_digest,
        scenario_count=len(results),
        scenarios=scenarios,
        checks=totals,
        check_count=sum(totals.values()),
        contract_path=report.contract_path,
        skipped=len(report.skipped or ()),
        rows=rows,
        rows_cut=len(listed) - len(rows),
        passing_unlisted=len(results) - len(listed),
        details=details,
        details_cut=len(troubled) - len(details),
        repeated=report.repeated,
        gates=report.gates,
        issues=report.issues,
        latency=report.latency(),
        usage=None if report.derived.usage is None else report.derived.usage.line(),
        loops=loops[:LOOPS_SHOWN],
        loops_cut=max(0, len(loops) - LOOPS_SHOWN),
        retried=[attempt.line() for attempt in retried[:RETRIES_SHOWN]],
        retried_cut=max(0, len(retried) - RETRIES_SHOWN),
        evidence_note=report.evidence_note,
        notes=report.notes,
        judge_note=judge_note(report),
    )


def _baseline(env: Environment, report: Report, budget: int) -> str:
    """The comparison with the baseline (and the ``--fail-on`` gate): what the summary leads with."""
    from behavegate.render import regressions

    if report.baseline is None and report.fail_on == "incomplete":
        return ""
    comparison = report.baseline
    sections = []
    icons = {"regressions": "❌", "unresolved": "⚠️", "improvements": "✅", "changes": "🔄"}
    for key, heading, findings in regressions.sections(comparison) if comparison else ():
        rows = []
        for finding in findings[: regressions.SHOWN_PER_LIST]:
            location = report.finding_location(finding)
            line = location.line if location.file == report.contract_path else f"{location.file}:{location.line or ''}"
            row = {
                "icon": icons[key],
                "label": finding.label,
                "subject": finding.subject,
                "message": finding.message,
                "line": line or "",
                "gating": finding.gating,
            }
            cost = len(json.dumps(row, ensure_ascii=False).encode()) + 40
            if cost > budget:
                break
            budget -= cost
            rows.append(row)
        sections.append({"key": key, "heading": heading, "count": len(findings), "rows": rows, "cut": len(findings) - len(rows)})
    return env.get_template("summary_baseline.md.j2").render(
        gate=regressions.gate_line(report),
        gate_status=report.gate_status,
        comparison=comparison,
        regressions=comparison.gating_regressions if comparison else 0,
        sections=sections,
        source=regressions.source_line(comparison) if comparison else "",
    )
