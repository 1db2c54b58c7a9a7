"""``--junit``: one <testsuite> per contract, one <testcase> per scenario.

The testcase carries the scenario's aggregate verdict: violated → <failure>,
incomplete → <error>, left out by --scenario → <skipped>; ``file``/``line``
point at the scenario in the contract. Every element gets a message and a
positive ``time`` (junit-xml drops a failure without a message and omits a zero
time, which some readers parse as NaN). Control characters and ANSI escapes are
made visible first: junit-xml would delete them silently.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from junit_xml import TestCase, TestSuite, to_xml_report_string  # type: ignore[import-untyped]

from behavegate.text import visible

MIN_TIME = 0.001
MAX_MESSAGE = 4_000
MAX_OUTPUT = 64_000


def _value(value: Any) -> str:
    return visible(json.dumps(value, ensure_ascii=False, sort_keys=True))


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 20] + f" … ({len(text) - limit + 20} more)"


def _assertion_line(a: Mapping[str, Any], at: Mapping[str, int]) -> str:
    where = f" (line {at[a['assertion']]})" if a.get("assertion") in at else ""
    return (
        f"{a['assertion']}{where}: {visible(str(a['message']))} — "
        f"expected {_value(a.get('expected'))}, observed {_value(a.get('observed'))}"
    )


def _detail(scenario: Mapping[str, Any], at: Mapping[str, int]) -> str:
    """Per-assertion detail; for repeated scenarios, the pass rate and every attempt."""
    reliability = scenario.get("reliability")
    if not reliability:
        return "\n".join(f"[{a['status']}] {_assertion_line(a, at)}" for a in scenario.get("assertions", []))
    from behavegate.render.table import pass_rate

    lines = [f"pass rate {pass_rate(reliability)} (needs {reliability['min_pass_rate']:.0%}, gate {reliability['gate']})"]
    for attempt in scenario.get("attempts", []):
        lines.append(f"attempt {attempt['attempt']}: {attempt['status']}")
        lines.extend(f"  [{a['status']}] {_assertion_line(a, at)}" for a in attempt["assertions"] if a["status"] != "pass")
    return "\n".join(lines)


def render(report: Mapping[str, Any]) -> str:
    extra = report.get("behavegate", {})
    path = str(extra.get("contract_path", "contract"))
    lines = extra.get("scenarios", {})
    seconds = extra.get("seconds", {})
    cases: list[TestCase] = []
    for scenario in report.get("scenarios", []):
        scenario_id = str(scenario["id"])
        info = lines.get(scenario_id, {})
        at = info.get("assertion_lines", {})
        assertions = scenario.get("assertions", [])
        case = TestCase(
            name=scenario_id,
            classname=path,
            elapsed_sec=max(float(seconds.get(scenario_id, 0.0)), MIN_TIME),
            file=path,
            line=info.get("line"),
            stdout=_cut(_detail(scenario, at), MAX_OUTPUT),
        )
        failed = [a for a in assertions if a["status"] == "fail"]
        incomplete = [a for a in assertions if a["status"] == "incomplete"]
        if scenario["status"] == "fail":
            message = "; ".join(_assertion_line(a, at) for a in failed)
            case.add_failure_info(message=_cut(message, MAX_MESSAGE), output=message, failure_type="behavior_violated")
        elif scenario["status"] == "incomplete":
            message = "; ".join(_assertion_line(a, at) for a in incomplete)
            case.add_error_info(message=_cut(message, MAX_MESSAGE), output=message, error_type="evidence_incomplete")
        cases.append(case)
    for skipped in extra.get("skipped", []):
        case = TestCase(name=str(skipped["id"]), classname=path, elapsed_sec=MIN_TIME, file=path, line=skipped.get("line"))
        case.add_skipped_info(message="not selected by --scenario")
        cases.append(case)
    suite = TestSuite(
        name=path,
        test_cases=cases,
        file=path,
        timestamp=report.get("harness", {}).get("started_at"),
        properties={
            "behavegate.status": report.get("status"),
            "behavegate.mode": report.get("mode"),
            "behavegate.contract_digest": report.get("contract", {}).get("digest"),
            "behavegate.evidence_digest": report.get("evidence_digest"),
            "behavegate.evidence_trust": report.get("provenance", {}).get("trust"),
            **{f"behavegate.gate.{g['gate']}": f"{g['status']}: {g['message']}" for g in report.get("gates", [])},
            **{f"behavegate.latency_ms.{k}": v for k, v in (extra.get("latency_ms") or {}).items()},
        },
    )
    return str(to_xml_report_string([suite], prettyprint=True, encoding="utf-8"))
