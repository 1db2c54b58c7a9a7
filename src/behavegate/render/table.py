"""``--format table``: a plain table readable in a terminal and in a CI log.

The Passed/Failed/Incomplete columns count assertion checks: one per assertion
per attempt, so a row's numbers add up to the footer's. A repeated scenario
also shows its pass rate over attempts.
"""

from __future__ import annotations

import json
import re
from typing import Any

from behavegate.cost import NOT_SENT
from behavegate.limits import LOOPS_SHOWN, TABLE_ROWS_LISTED
from behavegate.model import Reliability, ScenarioResult, Verdict
from behavegate.render.excerpt import evidence_note
from behavegate.report.judged import judge_note
from behavegate.report.result import Report
from behavegate.report.retries import RETRIES_SHOWN, retried_attempts
from behavegate.text import one_line

_COLUMNS = ("Scenario", "Status", "Passed", "Failed", "Incomplete", "Details")
_COLUMNS_V2 = ("Scenario", "Status", "Passed", "Failed", "Incomplete", "Pass rate", "Details")


def attempts_not_sent(result: ScenarioResult) -> int:
    """Attempts a run budget kept from being sent (their reason begins "not sent: ")."""
    return sum(1 for a in result.attempts if a.observation is not None and (a.observation.error or "").startswith(NOT_SENT))


def pass_rate(reliability: Reliability, not_sent: int = 0) -> str:
    """``7/8 88% [53-98%]`` with ``flaky`` when some attempts passed and some failed, and how
    many were not sent. With no attempt judged the rate is unknown, never ``0/1 0%``."""
    low, high = reliability.interval
    judged = reliability.passed + reliability.failed
    if judged == 0:
        text = "not sent" if not_sent >= reliability.runs else "unknown"
        text += f": 0 of {reliability.runs} judged"
        text += f", {not_sent} not sent" if 0 < not_sent < reliability.runs else ""
    else:
        text = f"{reliability.passed}/{reliability.runs} {reliability.pass_rate:.0%} [{low * 100:.0f}-{high * 100:.0f}%]"
        text += " flaky" if reliability.flaky else ""
        text += f" ({not_sent} not sent)" if not_sent else ""
    plan = reliability.sequential
    if plan is not None:  # sequential: attempts used of the cap, and what decided
        if plan["decided_by"] == "evidence":  # undecided, and the attempts after the observed ones missing
            text += f" (sequential: undecided after {plan['used']} observed of max {plan['cap']})"
        else:
            text += f" (sequential: {plan['used']} of max {plan['cap']}, by {plan['decided_by']})"
    return text


def sequential_note(reliability: Reliability) -> str | None:
    """A sequential scenario's decision boundary and design, in one line."""
    plan = reliability.sequential
    if plan is None:
        return None
    bound, design = plan["boundary"], plan["design"]
    return (
        f"sequential: pass when passes ≥ {bound['pass_when_passes_at_least']}, fail when passes ≤ "
        f"{bound['fail_when_passes_at_most']} (n = attempts judged pass or fail); design: false fail "
        f"{design['false_fail']:.2%} at {_percent(design['good_rate'])}, missed drop {design['missed_drop']:.2%} at "
        f"{_percent(design['drop_rate'])}; {reliability.unused} observed attempt(s) unused"
    )


def _percent(rate: float) -> str:
    """95% or 99.9%: the rate a design was made for, never rounded up to 100% (at min_pass_rate
    1.0 the good rate is 99.9%, and a 100% agent never fails)."""
    return f"{rate:.1%}".replace(".0%", "%")


def troubles(result: ScenarioResult) -> list[Verdict]:
    """The verdicts to show for a scenario: its failures, else its incompletes."""
    failed = [v for v in result.verdicts if v.status == "fail"]
    return failed or [v for v in result.verdicts if v.status == "incomplete"]


def failure_note(report: Report, result: ScenarioResult, verdict: Verdict) -> str | None:
    """What the agent said or called, where that is what failed (see render.excerpt)."""
    if verdict.status != "fail" or result.observation is None:
        return None
    shown = report.derived.shown(result)
    assert shown is not None
    turn = _TURN.match(verdict.assertion)
    if turn is not None:  # a user turn's check: what the agent said and called in that turn
        from behavegate.judge.user_turns import turn as turn_of

        shown = turn_of(result.scenario, shown, int(turn.group(1)))
        if shown is None or shown.error is not None:
            return None
    # The version-1 shape, and where the calls were seen (agent.mcp), so the note says whose calls they are.
    return evidence_note(verdict.kind, verdict.expected, verdict.observed, {**shown.as_dict(), "tool_source": shown.tool_source})


_TURN = re.compile(r"turns\[(\d+)\]\.")


def _value(value: Any) -> str:
    return one_line(json.dumps(value, ensure_ascii=False, sort_keys=True), 200)


def scenario_problems(report: Report, result: ScenarioResult) -> list[str]:
    """A scenario that did not pass: each failed or incomplete assertion, where the contract
    asks for it, expected vs observed, and what the agent said or called."""
    out = [f"{one_line(result.scenario.id)} ({result.status}):"]
    for verdict in result.verdicts:
        if verdict.status == "pass":
            continue
        mark = "FAIL" if verdict.status == "fail" else "INCOMPLETE"
        where = report.location(result.scenario, verdict.assertion)
        at = f"{where.file}:{where.line}" if where.line else where.file
        out.append(f"  {mark} {verdict.assertion} [{at}]: {one_line(verdict.message)}")
        out.append(f"       expected {_value(verdict.expected)}, observed {_value(verdict.observed)}")
        note = failure_note(report, result, verdict)
        if note:
            out.append(f"       {note}")
    return out


def _status(report: Report) -> str:
    if report.contract.oxy is None:
        return report.status
    from behavegate.render import oxy

    return oxy.status(report)


def listed_results(report: Report, *, every: bool = False) -> tuple[ScenarioResult, ...]:
    """The scenarios a table lists a row for: all of them, or past TABLE_ROWS_LISTED only
    those that did not pass (10,000 rows of "pass" would bury the failures in a CI log)."""
    if every or len(report.results) <= TABLE_ROWS_LISTED:
        return report.results
    return tuple(result for result in report.results if result.status != "pass")


def render(report: Report, detail: str = "normal") -> str:
    """``detail``: ``quiet``, ``normal`` or ``verbose`` (``--quiet``/``--verbose``; verbose
    lists every scenario's row, see :func:`listed_results`)."""
    if report.contract.oxy is not None and detail == "quiet":
        from behavegate.render import oxy

        quiet = [f"Agent behavior test: {oxy.status(report)}", *oxy.lines(report, detail)]
        return "\n".join([*quiet, *(f"Gate {g.gate}: {g.status}: {one_line(g.message)}" for g in report.gates)])
    repeated = report.repeated
    columns = _COLUMNS_V2 if repeated else _COLUMNS
    listed = listed_results(report, every=detail == "verbose")
    rows = []
    for result in listed:
        counts = report.check_counts(result)
        rate = (pass_rate(result.reliability, attempts_not_sent(result)) if result.reliability else "",) * repeated
        details = "; ".join(v.message for v in troubles(result)[:3])
        rows.append(
            (
                one_line(result.scenario.id),
                result.status,
                str(counts["pass"]),
                str(counts["fail"]),
                str(counts["incomplete"]),
                *rate,
                one_line(details, 100),
            )
        )
    widths = [max([len(c)] + [len(r[i]) for r in rows]) for i, c in enumerate(columns)]
    right = {2, 3, 4}

    def line(cells: tuple[str, ...]) -> str:
        parts = [cell.rjust(widths[i]) if i in right else cell.ljust(widths[i]) for i, cell in enumerate(cells)]
        return "  ".join(parts).rstrip()

    out = [f"Agent behavior test: {_status(report)}"]
    if report.baseline is not None or report.fail_on != "incomplete":
        from behavegate.render.regressions import table_block

        out.extend(table_block(report))
    out.append("")
    if rows or len(listed) == len(report.results):  # no header over nothing when every row is left out
        out.append(line(columns))
        out.append("  ".join("-" * w for w in widths))
        out.extend(line(row) for row in rows)
    if len(listed) < len(report.results):
        out.append(
            f"({len(report.results) - len(listed)} passing scenarios not listed: --verbose lists every one; "
            "the JSON report, JUnit and HTML hold them all)"
        )
    if repeated:
        out.append("(Passed, Failed, Incomplete: assertion checks over every attempt. Pass rate: attempts that passed.)")
        notes = [(r.scenario.id, sequential_note(r.reliability)) for r in listed if r.reliability is not None]
        out.extend(f"{one_line(name)}: {note}" for name, note in notes if note is not None)
    problems = [r for r in report.results if r.status != "pass"]
    if problems:
        out.append("")
    for result in problems:
        out.extend(scenario_problems(report, result))
    loops = report.derived.all_loops
    for loop in loops[:LOOPS_SHOWN]:
        out.append(f"Possible loop in {one_line(loop.scenario)} attempt {loop.attempt}: {one_line(loop.why, 300)}")
    if len(loops) > LOOPS_SHOWN:
        out.append(f"({len(loops) - LOOPS_SHOWN} more attempts ran out of max_turns; the JSON report has them all)")
    retried = retried_attempts(report)
    out.extend(f"Retried: {one_line(attempt.line(), 300)}" for attempt in retried[:RETRIES_SHOWN])
    if len(retried) > RETRIES_SHOWN:
        out.append(f"({len(retried) - RETRIES_SHOWN} more attempts were retried; the JSON report has them all)")
    if report.contract.oxy is not None:
        from behavegate.render import oxy

        out.extend(oxy.lines(report, detail))
    for gate in report.gates:
        out.append(f"Gate {gate.gate}: {gate.status}: {one_line(gate.message)}")
    for issue in report.issues:
        out.append(f"Run issue {issue.code}: {one_line(issue.message)}")
    out.extend(f"Note: {one_line(note, 1000)}" for note in report.notes)
    if report.evidence_note:
        out.append(one_line(report.evidence_note, 1000))
    if judged := judge_note(report):
        out.append(one_line(judged, 1000))
    latency = report.latency()
    if latency:
        out.append(
            f"Latency: p50 {latency['p50']:.0f} ms, p95 {latency['p95']:.0f} ms, max {latency['max']:.0f} ms over {latency['attempts']:.0f} attempts"
        )
    if (usage := report.derived.usage) is not None:
        out.append(f"Usage: {usage.line()}")
    totals = report.total_check_counts()
    out.append("")
    out.append(
        f"Scenarios: {len(report.results)} | Assertions: {sum(totals.values())} | "
        f"Pass: {totals['pass']} | Fail: {totals['fail']} | Incomplete: {totals['incomplete']}"
    )
    if report.run_dir:
        out.append(f"Run dir: {report.run_dir}")
    return "\n".join(out)
