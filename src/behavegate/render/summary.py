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

from behavegate.limits import SUMMARY_ITEM_CHARS, SUMMARY_MAX_BYTES
from behavegate.model import ScenarioResult
from behavegate.render.table import failure_note, pass_rate
from behavegate.report.result import Report
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

    # Budget: header and notes first, then rows, then details, until the limit.
    budget = limit - 4_000
    rows: list[str] = []
    for result in results:
        counts = report.check_counts(result)
        row = row_template.render(
            id=result.scenario.id, status=result.status, passed=counts["pass"], failed=counts["fail"],
            incomplete=counts["incomplete"], line=where(result), repeated=report.repeated,
            rate=pass_rate(result.reliability) if result.reliability else "",
        ).rstrip("\n")  # fmt: skip
        cost = len(row.encode()) + 1
        if cost > budget:
            break
        budget -= cost
        rows.append(row)
    details: list[str] = []
    troubled = sorted((r for r in results if r.status != "pass"), key=lambda r: 0 if r.status == "fail" else 1)
    for result in troubled:
        shown = [
            {**verdict.as_dict(), "line": where(result, verdict.assertion), "note": failure_note(result, verdict)}
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
        rows_cut=len(results) - len(rows),
        details=details,
        details_cut=len(troubled) - len(details),
        repeated=report.repeated,
        gates=report.gates,
        issues=report.issues,
        latency=report.latency(),
        evidence_note=report.evidence_note,
    )
