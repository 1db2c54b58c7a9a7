"""``--format table``: a plain table readable in a terminal and in a CI log."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from behavegate.text import one_line

_COLUMNS = ("Scenario", "Status", "Passed", "Failed", "Incomplete", "Details")
_COLUMNS_V2 = ("Scenario", "Status", "Passed", "Failed", "Incomplete", "Pass rate", "Details")


def pass_rate(reliability: Mapping[str, Any]) -> str:
    """``7/8 88% [53-98%]`` with ``flaky`` when some attempts passed and some failed."""
    low, high = reliability["interval"]
    text = f"{reliability['passed']}/{reliability['runs']} {reliability['pass_rate']:.0%} [{low * 100:.0f}-{high * 100:.0f}%]"
    return text + (" flaky" if reliability.get("flaky") else "")


def _details(assertions: list[Mapping[str, Any]]) -> str:
    failed = [a for a in assertions if a.get("status") == "fail"]
    shown = failed or [a for a in assertions if a.get("status") == "incomplete"]
    return "; ".join(str(a.get("message", "")) for a in shown[:3])


def _value(value: Any) -> str:
    return one_line(json.dumps(value, ensure_ascii=False, sort_keys=True), 200)


def render(report: Mapping[str, Any]) -> str:
    scenarios = report.get("scenarios", [])
    repeated = any("reliability" in s for s in scenarios)
    columns = _COLUMNS_V2 if repeated else _COLUMNS
    rows = []
    for scenario in scenarios:
        assertions = scenario.get("assertions", [])
        counts = [sum(a.get("status") == s for a in assertions) for s in ("pass", "fail", "incomplete")]
        rate = (pass_rate(scenario["reliability"]),) if repeated and scenario.get("reliability") else ("",) * repeated
        rows.append(
            (one_line(str(scenario.get("id", ""))), str(scenario.get("status", "")), *map(str, counts), *rate,
             one_line(_details(assertions), 100))
        )  # fmt: skip
    widths = [max([len(c)] + [len(r[i]) for r in rows]) for i, c in enumerate(columns)]
    right = {2, 3, 4}

    def line(cells: tuple[str, ...]) -> str:
        parts = [cell.rjust(widths[i]) if i in right else cell.ljust(widths[i]) for i, cell in enumerate(cells)]
        return "  ".join(parts).rstrip()

    out = [f"Agent behavior test: {report.get('status', 'incomplete')}", "", line(columns)]
    out.append("  ".join("-" * w for w in widths))
    out.extend(line(row) for row in rows)
    lines = report.get("behavegate", {}).get("scenarios", {})
    path = report.get("behavegate", {}).get("contract_path", "contract")
    problems = [s for s in scenarios if s.get("status") != "pass"]
    if problems:
        out.append("")
    for scenario in problems:
        scenario_id = str(scenario.get("id", ""))
        out.append(f"{one_line(scenario_id)} ({scenario.get('status')}):")
        at = lines.get(scenario_id, {}).get("assertion_lines", {})
        for a in scenario.get("assertions", []):
            if a.get("status") == "pass":
                continue
            mark = "FAIL" if a.get("status") == "fail" else "INCOMPLETE"
            where = f"{path}:{at[a['assertion']]}" if a.get("assertion") in at else path
            out.append(f"  {mark} {a.get('assertion')} [{where}]: {one_line(str(a.get('message', '')))}")
            out.append(f"       expected {_value(a.get('expected'))}, observed {_value(a.get('observed'))}")
    for gate in report.get("gates", []):
        out.append(f"Gate {gate['gate']}: {gate['status']}: {one_line(str(gate['message']))}")
    latency = report.get("behavegate", {}).get("latency_ms")
    if latency:
        out.append(
            f"Latency: p50 {latency['p50']:.0f} ms, p95 {latency['p95']:.0f} ms, max {latency['max']:.0f} ms over {latency['attempts']} attempts"
        )
    summary = report.get("summary", {})
    out.append("")
    out.append(
        f"Scenarios: {summary.get('scenario_count', 0)} | Assertions: {summary.get('assertion_count', 0)} | "
        f"Pass: {summary.get('passed_assertions', 0)} | Fail: {summary.get('failed_assertions', 0)} | "
        f"Incomplete: {summary.get('incomplete_assertions', 0)}"
    )
    run_dir = report.get("behavegate", {}).get("run_dir") or (report.get("artifacts") or {}).get("run_dir")
    if run_dir:
        out.append(f"Run dir: {run_dir}")
    return "\n".join(out)
