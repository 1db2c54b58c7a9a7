"""``--summary``: the Markdown job summary.

Untrusted text (agent output, tool arguments, fixture errors) only ever
appears inside code spans, one line, cut to a few hundred characters: no HTML,
no images, no links can form. The whole summary stays under GitHub's 1 MiB
step-summary limit whatever the suite size; what is left out is counted.
"""

from __future__ import annotations

import itertools
import json
import re
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from jinja2 import Environment, PackageLoader, StrictUndefined, Template

from behavegate.limits import LOOPS_SHOWN, SUMMARY_ITEM_CHARS, SUMMARY_MAX_BYTES, TABLE_ROWS_LISTED
from behavegate.model import ScenarioResult
from behavegate.render.table import attempts_not_sent, failure_note, listed_results, pass_rate
from behavegate.report.judged import judge_note
from behavegate.report.result import Report
from behavegate.report.retries import RETRIES_SHOWN, RetriedAttempt, retried_attempts
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
    listed = listed_results(report)
    troubled = sorted((r for r in results if r.status != "pass"), key=lambda r: 0 if r.status == "fail" else 1)
    loops = report.derived.all_loops
    retried = retried_attempts(report)
    totals = report.total_check_counts()
    return _page(
        env,
        limit,
        lambda budget: _baseline(env, report, budget),
        (row(row_template, report, result, report.repeated) for result in listed),
        len(listed),
        (detail(detail_template, report, result) for result in troubled),
        len(troubled),
        (loops[:LOOPS_SHOWN], len(loops)),
        (retried[:RETRIES_SHOWN], len(retried)),
        status=report.status,
        gate_status=report.gate_status,
        mode=report.mode,
        trust=report.provenance.get("trust"),
        evidence_digest=report.evidence_digest,
        scenario_count=len(results),
        scenarios=report.scenario_counts(),
        checks=totals,
        check_count=sum(totals.values()),
        contract_path=report.contract_path,
        skipped=len(report.skipped or ()),
        passing_unlisted=len(results) - len(listed),
        repeated=report.repeated,
        gates=report.gates,
        issues=report.issues,
        latency=report.latency(),
        usage=None if report.derived.usage is None else report.derived.usage.line(),
        evidence_note=report.evidence_note,
        notes=report.notes,
        judge_note=judge_note(report),
    )


def _where(report: Report, result: ScenarioResult, assertion: str | None = None) -> str:
    location = report.location(result.scenario, assertion)
    if location.file != report.contract_path:
        return f"{location.file}:{location.line}" if location.line else location.file
    return str(location.line or "")


def row(template: Template, report: Report, result: ScenarioResult, repeated: bool) -> str:
    """A scenario's row of the table (``repeated``: the run's, with its pass-rate column)."""
    counts = report.check_counts(result)
    return template.render(
        id=result.scenario.id,
        status=result.status,
        passed=counts["pass"],
        failed=counts["fail"],
        incomplete=counts["incomplete"],
        line=_where(report, result),
        repeated=repeated,
        rate=pass_rate(result.reliability, attempts_not_sent(result)) if result.reliability else "",
    ).rstrip("\n")


def detail(template: Template, report: Report, result: ScenarioResult) -> str:
    """What went wrong in a scenario that did not pass."""
    shown = [
        {**verdict.as_dict(), "line": _where(report, result, verdict.assertion), "note": failure_note(report, result, verdict)}
        for verdict in result.verdicts
        if verdict.status != "pass"
    ]
    return template.render(id=result.scenario.id, status=result.status, line=_where(report, result), assertions=shown)


def _page(
    env: Environment,
    limit: int,
    baseline_of: Callable[[int], str],
    rows: Iterable[str],
    listed: int,
    details: Iterable[str],
    troubled: int,
    loops: tuple[Sequence[Any], int],
    retried: tuple[Sequence[RetriedAttempt], int],
    **page: Any,
) -> str:
    """The summary: ``rows`` (of ``listed``) and ``details`` (of ``troubled``: failures first) in
    order until the size budget is spent; ``loops``/``retried``: the first few shown, and how many."""
    # Budget: header and notes first, then the baseline comparison, rows, details, until the limit.
    budget = limit - 4_000
    budget -= 600 * min(loops[1], LOOPS_SHOWN)  # each at most an id and a 300-character reason
    budget -= 400 * min(retried[1], RETRIES_SHOWN)  # each an id and at most five reasons
    baseline = baseline_of(budget // 2)
    budget -= len(baseline.encode())
    kept_rows, budget = _within(rows, budget)
    kept_details, budget = _within(details, budget)
    return env.get_template("summary.md.j2").render(
        baseline=baseline,
        rows=kept_rows,
        rows_cut=listed - len(kept_rows),
        details=kept_details,
        details_cut=troubled - len(kept_details),
        loops=loops[0][:LOOPS_SHOWN],
        loops_cut=max(0, loops[1] - LOOPS_SHOWN),
        retried=[attempt.line() for attempt in retried[0][:RETRIES_SHOWN]],
        retried_cut=max(0, retried[1] - RETRIES_SHOWN),
        **page,
    )


def _within(texts: Iterable[str], budget: int) -> tuple[list[str], int]:
    """The leading ``texts`` that fit ``budget`` (each with its newline), and what is left."""
    kept = []
    for text in texts:
        cost = len(text.encode()) + 1
        if cost > budget:
            break
        budget -= cost
        kept.append(text)
    return kept, budget


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


class _Kept:
    """Items in order, kept while what is kept costs at most ``limit`` bytes; all counted."""

    def __init__(self, limit: int) -> None:
        self.items: list[Any] = []
        self.count = 0
        self._cost = 0
        self._limit = limit

    def add(self, make: Callable[[], Any], cost: Callable[[Any], int]) -> None:
        self.count += 1
        if self._cost <= self._limit:  # past it, no budget reaches this far: counted, never rendered
            item = make()
            self.items.append(item)
            self._cost += cost(item)


def _row_cost(rows: tuple[str, str]) -> int:
    return max(len(text.encode()) + 1 for text in rows)


def _detail_cost(text: str) -> int:
    return len(text.encode()) + 1


class SummaryParts:
    """``--summary`` of a run judged a part at a time (commands/stream_offline.py), as
    :func:`render` writes it. The summary needs the whole run at once: its table lists every
    scenario of a small run but only those that did not pass past TABLE_ROWS_LISTED, its
    details put every failure before the incomplete scenarios, and whether it has a pass-rate
    column is known at the run's end. So it keeps, rendered, only what could still fit the
    size limit (rows in both forms, failures' and incomplete scenarios' details, each list
    until it alone passes the limit) and counts the rest: a few times SUMMARY_MAX_BYTES at
    most, however many rows."""

    def __init__(self, limit: int = SUMMARY_MAX_BYTES) -> None:
        self._limit = limit
        self._env = _environment()
        self._row = self._env.get_template("summary_row.md.j2")
        self._detail = self._env.get_template("summary_detail.md.j2")
        self._every: _Kept | None = _Kept(limit)  # every row, while the run is small enough to list them all
        self._troubled_rows = _Kept(limit)
        self._details = {"fail": _Kept(limit), "incomplete": _Kept(limit)}
        self._loops: list[Any] = []
        self._loop_count = 0
        self._retried: list[RetriedAttempt] = []
        self._retried_count = 0
        self.scenarios: Counter[str] = Counter()
        self.checks: Counter[str] = Counter()
        self.repeated = False

    def add(self, report: Report) -> None:
        loops, retried = report.derived.all_loops, retried_attempts(report)
        self._loops += loops[: LOOPS_SHOWN - len(self._loops)]
        self._loop_count += len(loops)
        self._retried += retried[: RETRIES_SHOWN - len(self._retried)]
        self._retried_count += len(retried)
        self.repeated = self.repeated or report.repeated
        for result in report.results:
            self.scenarios[result.status] += 1
            self.checks.update(report.check_counts(result))

            def both(result: ScenarioResult = result) -> tuple[str, str]:
                return row(self._row, report, result, False), row(self._row, report, result, True)

            if self._every is not None:
                self._every.add(both, _row_cost)
                if self._every.count > TABLE_ROWS_LISTED:
                    self._every = None
            if result.status != "pass":

                def why(result: ScenarioResult = result) -> str:
                    return detail(self._detail, report, result)

                self._troubled_rows.add(both, _row_cost)
                self._details[result.status].add(why, _detail_cost)

    def render(self, *, fail_on: str, **page: Any) -> str:
        """The summary; ``page``: the run's totals as :func:`render` reads them from a Report
        (status, gate_status, mode, trust, evidence_digest, contract_path, latency, ...)."""
        from types import SimpleNamespace

        listed = self._every if self._every is not None else self._troubled_rows
        pick = 1 if self.repeated else 0
        fails, incomplete = self._details["fail"], self._details["incomplete"]
        # What _baseline reads of a Report that has no baseline: the --fail-on gate's line.
        gated = SimpleNamespace(baseline=None, fail_on=fail_on, status=page["status"], gates_on_regressions=False)
        gated.gate_status = page["gate_status"]
        count = sum(self.scenarios.values())
        return _page(
            self._env,
            self._limit,
            lambda budget: _baseline(self._env, gated, budget),  # type: ignore[arg-type]
            (texts[pick] for texts in listed.items),
            listed.count,
            itertools.chain(fails.items, incomplete.items),
            fails.count + incomplete.count,
            (self._loops, self._loop_count),
            (self._retried, self._retried_count),
            scenario_count=count,
            scenarios=self.scenarios,
            checks=self.checks,
            check_count=sum(self.checks.values()),
            skipped=0,
            passing_unlisted=count - listed.count,
            repeated=self.repeated,
            gates=(),
            issues=(),
            **page,
        )
