"""``--annotations``: workflow commands that put failures on the contract line.

GitHub shows at most 10 error and 10 warning annotations a step and drops the
rest silently, so failures are ranked (harm first) and what does not fit is
counted in one final notice. Every property and message is escaped exactly as
the runner unescapes them. An annotation's level follows the run's verdict: a
scenario failing under a suite floor is a warning when the gates that count it
passed (the floor absorbed it), an error when one of them failed too, and a failed
gate is itself an error.
"""

from __future__ import annotations

import json
from typing import Any

from behavegate.limits import ANNOTATION_MAX_MESSAGE, ANNOTATIONS_PER_LEVEL, LOOPS_SHOWN
from behavegate.render.table import failure_note
from behavegate.report.comparison import REGRESSIONS
from behavegate.report.judged import judge_note
from behavegate.report.result import Report
from behavegate.text import neutralize, one_line, workflow_escaped

# Every assertion kind, ranked: violations that mean harm come first (a leaked
# secret beats a forbidden call beats a missing citation). A test keeps this
# table equal to the assertion registry's kinds.
SEVERITY = {
    kind: rank
    for rank, kind in enumerate(
        (
            "safety_pii",
            "safety_injection",
            "tool_forbidden",
            "tool_known_only",
            "tools_allowed",
            "tool_arguments_valid",
            "response_excludes",
            "response_not_matches",
            "refusal",
            "tool_required",
            "tool_exact_sequence",
            "tool_sequence",
            "tool_set",
            "tool_no_errors",
            "tool_no_repeat",
            "tool_max_calls",
            "tool_call_count",
            "tool_min_calls",
            "steps_max",
            "turns_max",
            "usage_max_total_tokens",
            "latency_max",
            "response_contains",
            "response_icontains",
            "response_matches",
            "response_uses_tool_result",
            "response_judge",
            "source_required",
        )
    )
}


def escape_data(text: str) -> str:
    """As the runner unescapes (``%``, CR, LF); any other line separator and
    ``##[`` made inert as everywhere else on the console."""
    return neutralize(workflow_escaped(text))


def escape_property(text: str) -> str:
    return neutralize(workflow_escaped(text, property_value=True))


def command(name: str, message: str, **properties: Any) -> str:
    props = ",".join(f"{key}={escape_property(str(value))}" for key, value in properties.items() if value is not None)
    return f"::{name}{' ' + props if props else ''}::{escape_data(message)}"


def _short(value: Any) -> str:
    return one_line(json.dumps(value, ensure_ascii=False, sort_keys=True), 400)


Ranked = dict[str, list[tuple[tuple[int, ...], str]]]


def render(report: Report) -> str:
    out = limited(ranked(report))
    if judged := judge_note(report):  # judged checks are named as such on the run, whatever they decided
        note = command("notice", one_line(judged, ANNOTATION_MAX_MESSAGE), title="behavegate judged checks")
        out = f"{out}\n{note}" if out else note
    for note in report.notes:  # said once on the run, not on every check it explains
        notice = command("notice", one_line(note, ANNOTATION_MAX_MESSAGE), file=report.contract_path, title="behavegate note")
        out = f"{out}\n{notice}" if out else notice
    if loops := _loop_notices(report):  # a loop is a note, never a verdict: shown whatever the checks decided
        out = f"{out}\n{loops}" if out else loops
    return out


def _loop_notices(report: Report) -> str:
    """One notice per possible loop at its scenario's line, at most ``LOOPS_SHOWN``, the rest counted."""
    loops = report.derived.all_loops
    scenarios = {r.scenario.id: r.scenario for r in report.results}
    lines = []
    for loop in loops[:LOOPS_SHOWN]:
        where = report.location(scenarios[loop.scenario])
        message = one_line(f"possible loop in attempt {loop.attempt}: {loop.why}", ANNOTATION_MAX_MESSAGE)
        lines.append(
            command("notice", message, file=where.file, line=where.line, title=f"behavegate possible loop: {loop.scenario}")
        )
    if len(loops) > LOOPS_SHOWN:
        more = f"{len(loops) - LOOPS_SHOWN} more attempts ran out of max_turns; the JSON report has them all"
        lines.append(command("notice", more, title="behavegate possible loops"))
    return "\n".join(lines)


def ranked(report: Report) -> Ranked:
    """Every annotation of a run by level, each with its rank (harm first)."""
    found: Ranked = {"error": [], "warning": []}
    merged = _baseline(report, found)
    for order, result in enumerate(report.results):
        counts = report.counted(result) != "pass"
        for verdict in result.verdicts:
            if verdict.status == "pass" or (result.scenario.id, verdict.assertion) in merged:
                continue
            where = report.location(result.scenario, verdict.assertion)
            note = failure_note(report, result, verdict)
            message = one_line(
                f"{verdict.message} — expected {_short(verdict.expected)}, observed {_short(verdict.observed)}"
                + (f"; {note}" if note else ""),
                ANNOTATION_MAX_MESSAGE,
            )
            level = "error" if verdict.status == "fail" and counts else "warning"
            judged = " (judged, non-deterministic)" if verdict.kind == "response_judge" else ""
            title = f"behavegate {verdict.status}{judged}: {result.scenario.id} {verdict.assertion}"
            rank = (SEVERITY[verdict.kind], order, len(found[level]))
            found[level].append((rank, command(level, message, file=where.file, line=where.line, title=title)))
    for gate in report.gates:
        if gate.status != "pass":
            level = "error" if gate.status == "fail" else "warning"
            text = command(
                level,
                one_line(gate.message, ANNOTATION_MAX_MESSAGE),
                file=report.contract_path,
                line=report.gate_location(gate).line or 1,
                title=f"behavegate gate {gate.gate}",
            )
            found[level].insert(0, ((-1, 0, 0), text))
    for issue in report.issues:
        found["error"].insert(
            0,
            (
                (-2, 0, 0),
                command("error", one_line(issue.message, ANNOTATION_MAX_MESSAGE), title=f"behavegate run issue {issue.code}"),
            ),
        )
    return found


def limited(found: Ranked) -> str:
    """At most ``ANNOTATIONS_PER_LEVEL`` a level, the rest counted in one notice."""
    out: list[str] = []
    left = 0
    for level in ("error", "warning"):
        ranked = [text for _, text in sorted(found[level])]
        out.extend(ranked[:ANNOTATIONS_PER_LEVEL])
        left += max(len(ranked) - ANNOTATIONS_PER_LEVEL, 0)
    if left:
        out.append(
            command(
                "notice", f"{left} more failing or incomplete assertions are in the job summary and reports", title="behavegate"
            )
        )
    return "\n".join(out)


def _baseline(report: Report, found: Ranked) -> set[tuple[str, str | None]]:
    """Regressions against the baseline first, each on its assertion's line with the
    failure it is (merged: one annotation per check); unresolved comparisons and
    removed safety scenarios as warnings. An annotation is an error when its finding
    decides the run. Returns the (scenario, assertion) keys already annotated."""
    comparison = report.baseline
    if comparison is None:
        return set()
    results = {result.scenario.id: result for result in report.results}
    merged: set[tuple[str, str | None]] = set()
    removed = [f for f in comparison.changes if f.kind == "removed_safety_scenario"]
    for order, finding in enumerate((*comparison.regressions, *comparison.unresolved, *removed)):
        result = results.get(finding.scenario)
        verdicts = [v for v in (result.verdicts if result else ()) if v.assertion == finding.assertion and v.status != "pass"]
        message = f"{finding.label}: {finding.message}"
        if verdicts:
            verdict = verdicts[0]
            message += f" — {verdict.message} — expected {_short(verdict.expected)}, observed {_short(verdict.observed)}"
            merged.add((finding.scenario, finding.assertion))
        if report.gates_on_regressions:
            decides = finding.gating and finding.kind in REGRESSIONS
        else:
            decides = bool(verdicts) and verdicts[0].status == "fail" and result is not None and report.counted(result) == "fail"
        level = "error" if decides else "warning"
        where = report.finding_location(finding)
        title = f"behavegate {'regression' if finding.kind in REGRESSIONS else finding.label}: {finding.subject}"
        text = command(level, one_line(message, ANNOTATION_MAX_MESSAGE), file=where.file, line=where.line, title=title)
        harm = SEVERITY[verdicts[0].kind] if verdicts else len(SEVERITY)
        found[level].append(((-3, harm, order), text))
    return merged
