"""Every view of a suite run (several contracts), each a composition of the
per-contract renders: a contract's part of a suite view is exactly its own
single-run view. Nothing here judges or re-derives a verdict."""

from __future__ import annotations

from behavegate import indented_json
from behavegate.limits import SUMMARY_MAX_BYTES
from behavegate.report.suite import SuiteRun
from behavegate.text import one_line


def table(suite: SuiteRun, detail: str = "normal") -> str:
    """Each contract's table under a line naming its file, then one overall line;
    ``detail`` as a single run's (``--quiet``/``--verbose``)."""
    from behavegate.render import table as single

    out: list[str] = []
    for report in suite.reports:
        out.extend([f"=== Contract: {one_line(report.contract_path)} ===", single.render(report, detail), ""])
    scenarios, checks = suite.scenario_counts(), suite.total_check_counts()
    status = suite.status + (f" (gate: {suite.gate_status})" if suite.gate_status != suite.status else "")
    out.extend(f"Suite gate {gate.gate}: {gate.status}: {one_line(gate.message)}" for gate in suite.gates)
    out.append(
        f"Agent behavior suite: {status} | Contracts: {len(suite.reports)} | Scenarios: {suite.scenario_total()} "
        f"(pass {scenarios['pass']}, fail {scenarios['fail']}, incomplete {scenarios['incomplete']}) | "
        f"Assertions: {sum(checks.values())} | Pass: {checks['pass']} | Fail: {checks['fail']} | Incomplete: {checks['incomplete']}"
    )
    return "\n".join(out)


def report_json(suite: SuiteRun) -> str:
    """``--format json`` and ``--report``: each contract's report exactly as a single run writes it."""
    return indented_json.dumps(suite.to_json(), sort_keys=True)


def junit(suite: SuiteRun) -> str:
    """One <testsuites> holding every contract's <testsuite> elements, in order."""
    from junit_xml import to_xml_report_string  # type: ignore[import-untyped]

    from behavegate.render.junit import suites

    return str(to_xml_report_string([s for report in suite.reports for s in suites(report)], prettyprint=True, encoding="utf-8"))


def summary(suite: SuiteRun, limit: int = SUMMARY_MAX_BYTES) -> str:
    """An overall heading and table, then each contract's summary with an equal share
    of the size limit; contracts that no longer fit are counted in a closing note."""
    from behavegate.render.summary import ICONS, code

    scenarios, checks = suite.scenario_counts(), suite.total_check_counts()
    status = suite.status + (f" (gate: {suite.gate_status})" if suite.gate_status != suite.status else "")
    count = len(suite.reports)
    head = "\n".join(
        [
            f"# {ICONS.get(suite.gate_status, '❔')} behavegate suite: {status} — {count} contracts, "
            f"{suite.scenario_total()} scenarios, {sum(checks.values())} assertions",
            "",
            "| contract | status | scenarios | ✅ passed | ❌ failed | ⚠️ incomplete |",
            "|---|---|---:|---:|---:|---:|",
            *(
                f"| {code(r.contract_path, table=True)} | {ICONS.get(r.gate_status, '❔')} {r.status} | {len(r.results)} | "
                f"{r.scenario_counts()['pass']} | {r.scenario_counts()['fail']} | {r.scenario_counts()['incomplete']} |"
                for r in suite.reports
            ),
            f"| **all** | {status} | {suite.scenario_total()} | {scenarios['pass']} | {scenarios['fail']} | {scenarios['incomplete']} |",
            "",
            "",
        ]
    )
    return head + _parts(suite, limit - len(head.encode()) - 400)


def _parts(suite: SuiteRun, budget: int) -> str:
    from behavegate.render import summary as single
    from behavegate.render.summary import code

    parts: list[str] = []
    for index, report in enumerate(suite.reports):
        share = budget // (len(suite.reports) - index)
        heading = f"---\n\n### Contract {code(report.contract_path)}\n\n"
        part = heading + single.render(report, limit=share - len(heading.encode()))
        if share < 8_000 or len(part.encode()) > share:
            left = len(suite.reports) - index
            parts.append(
                f"> ⚠️ {left} contract summar{'y' if left == 1 else 'ies'} left out: the summary stays under 1 MiB; "
                "see the JSON report and JUnit for every contract.\n"
            )
            break
        budget -= len(part.encode())
        parts.append(part)
    return "".join(parts)


def annotation_commands(suite: SuiteRun) -> str:
    """Every contract's annotations ranked together, still at most 10 a level a step."""
    from behavegate.render.annotations import Ranked, limited, ranked

    found: Ranked = {"error": [], "warning": []}
    for index, report in enumerate(suite.reports):
        for level, entries in ranked(report).items():
            found[level].extend(((*rank[:1], index, *rank[1:]), text) for rank, text in entries)
    return limited(found)


def html(suite: SuiteRun) -> str:
    """One page: each contract's verdict and gates, then every scenario of every contract."""
    from behavegate.render.html import page, view

    return page([view(report) for report in suite.reports], f"behavegate suite: {suite.gate_status}", suite.gate_status)


def sarif(suite: SuiteRun) -> str:
    """One SARIF run holding every contract's findings."""
    from behavegate.render.sarif import render_reports

    return render_reports(suite.reports)
