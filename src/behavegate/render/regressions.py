"""The baseline comparison in words, shared by every view that leads with it
(table, summary, JUnit, annotations): the gate line, the source line, each
finding. Every text here comes from the one Comparison the Report holds; finding
messages can carry tool names the agent chose, so each view shows them inert.
"""

from __future__ import annotations

from behavegate.report.comparison import Comparison, Finding
from behavegate.report.result import Report
from behavegate.text import one_line

SHOWN_PER_LIST = 50  # findings of one kind in the table (the JSON report lists them all)
MARKS = {"regressions": "REGRESSION", "unresolved": "UNRESOLVED", "improvements": "IMPROVED", "changes": "CHANGED"}


def plural(count: int, word: str) -> str:
    return f"{count} {word}{'' if count == 1 else 's'}"


def sections(comparison: Comparison) -> list[tuple[str, str, tuple[Finding, ...]]]:
    """(key, heading, findings) in the order every view shows them: regressions first."""
    return [
        ("regressions", "Regressions against the baseline", comparison.regressions),
        ("unresolved", "Could not compare (missing evidence where the baseline passed)", comparison.unresolved),
        ("improvements", "Improvements", comparison.improvements),
        ("changes", "Other changes (not gating)", comparison.changes),
    ]


def gate_line(report: Report) -> str | None:
    """What ``--fail-on`` made of the run, when it is not the default."""
    comparison, status = report.baseline, report.status
    if report.gates_on_regressions and comparison is not None:
        if comparison.status == "fail":
            why = plural(comparison.gating_regressions, "regression") + " against the baseline"
        elif comparison.status == "incomplete":
            why = "missing evidence could hide a regression against the baseline"
        else:
            why = "no regression against the baseline"
        if status != "pass" and comparison.status == "pass":
            why += f" (run status {status}: what fails failed in the baseline too, or is not gating)"
        return f"Gate --fail-on regression: {comparison.status}: {why}"
    if report.fail_on == "fail" and status == "incomplete":
        return "Gate --fail-on fail: pass: the evidence is incomplete, and only violations fail the run"
    if report.fail_on == "never" and status != "pass":
        return f"Gate --fail-on never: pass: the run is {status}, reported and not failed"
    return None


def source_line(comparison: Comparison) -> str:
    source = comparison.source
    when = f", run {source.run_id}" if source.run_id else ""
    reach = (
        f"p <= {comparison.threshold:.2g} over {plural(comparison.tests, 'comparison')} that could reach it"
        if comparison.tests
        else "no comparison could reach it"
    )
    tests = f"pass rates: one-sided Fisher exact, family-wise alpha {comparison.alpha:g} ({reach})"
    return (
        f"Baseline {one_line(source.path, 300)} (status {source.status}{when}; {comparison.contract_note}): "
        f"{plural(comparison.compared, 'scenario')} compared, {comparison.still_failing} failing in both; {tests}"
        f"{blind_note(comparison)}"
    )


def blind_note(comparison: Comparison) -> str:
    """What the chosen runs cannot see: repeated scenarios that gate only on a total break."""
    blind = comparison.total_break_only
    if not blind:
        return ""
    sizes = sorted({f"{before} vs {now}" for _, before, now in blind})
    named = ", ".join(one_line(scenario, 80) for scenario, _, _ in blind[:3]) + (
        f" and {len(blind) - 3} more" if len(blind) > 3 else ""
    )
    return (
        f"; {plural(len(blind), 'repeated scenario')} ({named}; {', '.join(sizes[:3])} attempts) can show no "
        f"significant drop short of a total break (every attempt passed, every attempt fails): "
        f"runs: {comparison.partial_drop_runs} or more on both sides lets a partial drop gate"
    )


def finding_text(finding: Finding) -> str:
    """``subject: label: message``, one line, with "not gating" where a floor absorbed it."""
    absorbed = "" if finding.gating else " (within the suite pass-rate floor: not gating)"
    return one_line(f"{finding.subject}: {finding.label}: {finding.message}{absorbed}", 1000)


def where(report: Report, finding: Finding) -> str:
    location = report.finding_location(finding)
    return f"{location.file}:{location.line}" if location.line else location.file


def table_block(report: Report) -> list[str]:
    """The lines the table leads with: the gate, then every kind of finding."""
    comparison = report.baseline
    lines = []
    gate = gate_line(report)
    if gate:
        lines.append(gate)
    if comparison is None:
        return lines
    for key, heading, findings in sections(comparison):
        if not findings and key != "regressions":
            continue
        lines.append(f"{heading}: {len(findings)}")
        for finding in findings[:SHOWN_PER_LIST]:
            lines.append(f"  {MARKS[key]} {finding_text(finding)} [{where(report, finding)}]")
        if len(findings) > SHOWN_PER_LIST:
            lines.append(f"  … {len(findings) - SHOWN_PER_LIST} more in the JSON report")
    lines.append(source_line(comparison))
    return lines
