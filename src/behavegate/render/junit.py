"""``--junit``: one <testsuite> per contract, one <testcase> per scenario and
one per suite gate.

JUnit readers colour a run by its failures, so the testcases say what decided
the run: a scenario that fails the run → <failure>, one that leaves it
incomplete → <error>, one left out by the selection → <skipped>. Under a suite
floor the gates decide (report/standing.py): a failed scenario is a <failure> when a
gate that counts it failed too (the floor, or its tag's ``by_tag`` gate), and
<skipped> with "failed; the suite floor decides the run..." when those gates
passed: a <failure> there would turn a passing run's check red. Never a plain
pass. Version 1 has no floor. ``file``/``line`` point where the scenario is written (through
includes). Every element gets a message and a positive ``time`` (junit-xml
drops a failure without a message and omits a zero time, which some readers
parse as NaN). Control characters and ANSI escapes are made visible first:
junit-xml would delete them silently.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from junit_xml import TestCase, TestSuite, to_xml_report_string  # type: ignore[import-untyped]

from behavegate.limits import JUNIT_MAX_MESSAGE, JUNIT_MAX_OUTPUT, LOOPS_SHOWN
from behavegate.model import ScenarioResult, Verdict
from behavegate.render.regressions import finding_text, source_line
from behavegate.render.table import attempts_not_sent, failure_note, pass_rate, sequential_note
from behavegate.report.comparison import Finding
from behavegate.report.judged import judge_note
from behavegate.report.result import Report
from behavegate.report.standing import standing
from behavegate.text import visible

MIN_TIME = 0.001


def _value(value: Any) -> str:
    return visible(json.dumps(value, ensure_ascii=False, sort_keys=True))


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 20] + f" … ({len(text) - limit + 20} more)"


def _assertion_line(report: Report, result: ScenarioResult, verdict: Verdict, *, noted: bool = True) -> str:
    """``noted``: with what the representative attempt called or said (render.excerpt), for its own verdicts."""
    line = report.location(result.scenario, verdict.assertion).line
    where = f" (line {line})" if line else ""
    note = failure_note(report, result, verdict) if noted else None
    return (
        f"{verdict.assertion}{where}: {visible(verdict.message)} — "
        f"expected {_value(verdict.expected)}, observed {_value(verdict.observed)}" + (f"; {visible(note)}" if note else "")
    )


def _detail(report: Report, result: ScenarioResult) -> str:
    """Per-assertion detail; for repeated scenarios, the pass rate and every attempt."""
    reliability = result.reliability
    lines = []
    if (note := standing(report, result)) is not None:
        lines.append(f"scenario {note}")
    loops = report.derived.loops_of(result)  # a note on any verdict: a passing scenario can loop
    lines.extend(f"possible loop in attempt {loop.attempt}: {visible(loop.why)}" for loop in loops[:LOOPS_SHOWN])
    if len(loops) > LOOPS_SHOWN:
        lines.append(f"{len(loops) - LOOPS_SHOWN} more attempts ran out of max_turns; the JSON report has them all")
    if reliability is None:
        lines.extend(f"[{v.status}] {_assertion_line(report, result, v)}" for v in result.verdicts)
        return "\n".join(lines)
    lines.append(
        f"pass rate {pass_rate(reliability, attempts_not_sent(result))} (needs {reliability.min_pass_rate:.0%}, gate {reliability.gate})"
    )
    if (note := sequential_note(reliability)) is not None:
        lines.append(note)
    for attempt in result.attempts:
        lines.append(f"attempt {attempt.index + 1}: {attempt.status}")
        lines.extend(
            f"  [{v.status}] {_assertion_line(report, result, v, noted=False)}" for v in attempt.verdicts if v.status != "pass"
        )
    return "\n".join(lines)


def render(report: Report) -> str:
    return str(to_xml_report_string(suites(report), prettyprint=True, encoding="utf-8"))


def suites(report: Report) -> list[TestSuite]:
    """The run's <testsuite> elements: the baseline comparison's, when there is one, then the contract's."""
    path = report.contract_path
    cases = [case(report, index, result) for index, result in enumerate(report.results)]
    for gate in report.gates:
        gate_case = TestCase(
            name=f"gate {gate.gate}",
            classname=path,
            elapsed_sec=MIN_TIME,
            file=path,
            line=report.gate_location(gate).line or 1,
            stdout=f"{gate.status}: {visible(gate.message)}",
        )
        if gate.status == "fail":
            gate_case.add_failure_info(message=visible(gate.message), failure_type="gate_failed")
        elif gate.status == "incomplete":
            gate_case.add_error_info(message=visible(gate.message), error_type="gate_incomplete")
        cases.append(gate_case)
    for skipped in report.skipped or ():
        where = report.location(skipped)
        skipped_case = TestCase(name=skipped.id, classname=path, elapsed_sec=MIN_TIME, file=where.file, line=where.line)
        skipped_case.add_skipped_info(message="not selected by --scenario or --tag")
        cases.append(skipped_case)
    suite = TestSuite(name=path, test_cases=cases, file=path, timestamp=report.facts.started_at, properties=properties(report))
    return [suite] if report.baseline is None else [_baseline_suite(report), suite]


def case(report: Report, index: int, result: ScenarioResult) -> TestCase:
    """The <testcase> of ``report.results[index]``."""
    where = report.location(result.scenario)
    made = TestCase(
        name=result.scenario.id,
        classname=report.contract_path,
        elapsed_sec=max(report.seconds(index), MIN_TIME),
        file=where.file,
        line=where.line,
        stdout=_cut(_detail(report, result), JUNIT_MAX_OUTPUT),
    )
    status = report.counted(result)
    if report.gates_on_regressions and status != "pass":
        kind = "behavior_regression" if status == "fail" else "regression_unresolved"
        message = "; ".join(finding_text(f) for f in _gating(report, result.scenario.id, status))
        add = made.add_failure_info if status == "fail" else made.add_error_info
        add(_cut(visible(message), JUNIT_MAX_MESSAGE), visible(message), kind)
    elif report.gates_on_regressions and result.status != "pass":
        # Gating on regressions, a pre-existing failure is known, as pytest reports an xfail: skipped.
        made.add_skipped_info(message=f"{result.status} as in the baseline; not gating (--fail-on regression)")
    elif status != "pass":  # under a floor: a gate that counts it did not pass either
        lines = [_assertion_line(report, result, v) for v in result.verdicts if v.status == result.status]
        message = "; ".join([*filter(None, [standing(report, result)]), *lines])
        add = made.add_failure_info if status == "fail" else made.add_error_info
        add(_cut(message, JUNIT_MAX_MESSAGE), message, "behavior_violated" if status == "fail" else "evidence_incomplete")
    elif result.status != "pass":
        # Absorbed by a floor that passed: not a <failure>, which would turn the check red on a
        # passing run, and not a pass either; JUnit's skipped, as pytest reports an xfail.
        made.add_skipped_info(message=_cut(f"{standing(report, result)}", JUNIT_MAX_MESSAGE))
    return made


def properties(report: Report) -> dict[str, Any]:
    """The contract suite's <properties>."""
    return suite_properties(
        {
            **head_properties(
                report.status, report.mode, report.contract.digest, report.evidence_digest, report.provenance.get("trust")
            ),
            **{f"behavegate.gate.{g.gate}": f"{g.status}: {g.message}" for g in report.gates},
        },
        report.latency(),
        judge_note(report),
        report.notes,
        {**_usage_properties(report), **_oxy_properties(report)},
    )


def head_properties(status: str, mode: str, contract_digest: str, evidence_digest: str | None, trust: Any) -> dict[str, Any]:
    """The first properties of the contract's suite, whole run or streamed (commands/stream_offline.py)."""
    return {
        "behavegate.status": status,
        "behavegate.mode": mode,
        "behavegate.contract_digest": contract_digest,
        "behavegate.evidence_digest": evidence_digest,
        "behavegate.evidence_trust": trust,
    }


def suite_properties(
    head: dict[str, Any], latency: dict[str, float] | None, judged: str | None, notes: tuple[str, ...], tail: dict[str, Any]
) -> dict[str, Any]:
    """The properties in their order: ``head`` (status to gates), latency, the judge's note, notes, ``tail``
    (usage, an Oxy score); a streamed run gives its totals (commands/stream_offline.py)."""
    return {
        **head,
        **{f"behavegate.latency_ms.{k}": v for k, v in (latency or {}).items()},
        **({"behavegate.judged": judged} if judged else {}),
        **{f"behavegate.note.{index + 1}": visible(note) for index, note in enumerate(notes)},
        **tail,
    }


def _usage_properties(report: Report) -> dict[str, Any]:
    """The run's tokens and cost (report/usage.py), when priced or budgeted."""
    usage = report.derived.usage
    if usage is None:
        return {}
    shown = {f"behavegate.usage.{key}": value for key, value in usage.as_dict().items() if value is not None}
    return {**shown, "behavegate.usage": usage.line()}


def _oxy_properties(report: Report) -> dict[str, Any]:
    """An Oxy test file's score and consistency (render/oxy.py)."""
    from behavegate.render.oxy import scored

    score = scored(report)
    if score is None:
        return {}
    return {
        "behavegate.oxy.score": f"{score.score:.6f}",
        "behavegate.oxy.consistency": f"{score.consistency:.6f}",
        "behavegate.oxy.runs": f"{score.passed}/{score.runs}",
    }


def _gating(report: Report, scenario: str, status: str) -> list[Finding]:
    comparison = report.baseline
    if comparison is None:
        return []
    findings = comparison.regressions if status == "fail" else comparison.unresolved
    return [f for f in findings if f.scenario == scenario and f.gating]


def _baseline_suite(report: Report) -> TestSuite:
    """The first suite: one testcase per regression (a failure when it gates the run,
    else skipped, as the scenarios that decide the run carry the failures) and per
    unresolved comparison, and one that passes with the rest of the comparison."""
    comparison = report.baseline
    assert comparison is not None
    gating = report.gates_on_regressions
    cases = []
    for finding in (*comparison.regressions, *comparison.unresolved):
        where = report.finding_location(finding)
        text = visible(finding_text(finding))
        regression = finding.kind != "unresolved"
        case = TestCase(
            name=f"{'regression' if regression else 'unresolved'}: {finding.subject}",
            classname="behavegate.baseline",
            elapsed_sec=MIN_TIME,
            file=where.file,
            line=where.line,
            stdout=text,
        )
        if not (gating and finding.gating):
            case.add_skipped_info(message=_cut(f"not gating (--fail-on {report.fail_on}): {text}", JUNIT_MAX_MESSAGE))
        elif regression:
            case.add_failure_info(message=_cut(text, JUNIT_MAX_MESSAGE), output=text, failure_type="behavior_regression")
        else:
            case.add_error_info(message=_cut(text, JUNIT_MAX_MESSAGE), output=text, error_type="regression_unresolved")
        cases.append(case)
    others = [visible(finding_text(f)) for f in (*comparison.improvements, *comparison.changes)]
    stdout = "\n".join([visible(source_line(comparison)), *others])
    cases.append(
        TestCase(
            name="baseline comparison",
            classname="behavegate.baseline",
            elapsed_sec=MIN_TIME,
            file=report.contract_path,
            line=1,
            stdout=_cut(stdout, JUNIT_MAX_OUTPUT),
        )
    )
    return TestSuite(
        name=f"behavegate baseline: {visible(comparison.source.path)}",
        test_cases=cases,
        file=report.contract_path,
        timestamp=report.facts.started_at,
        properties={
            "behavegate.baseline.report": visible(comparison.source.path),
            "behavegate.baseline.status": comparison.status,
            "behavegate.baseline.regressions": str(len(comparison.regressions)),
            "behavegate.baseline.unresolved": str(len(comparison.unresolved)),
            "behavegate.baseline.contract": comparison.contract_note,
            "behavegate.fail_on": report.fail_on,
        },
    )


_COUNTED = re.compile(r' (disabled|errors|failures|skipped|tests|time)="[^"]*"')


class JunitParts:
    """``--junit`` of a run judged a part at a time (commands/stream_offline.py): each part's
    <testcase> elements rendered and spooled to ``spool`` as they come, and counted; then the
    document the whole-run path writes, byte for byte. The counts sit in the opening tags, so
    the head is rendered last (with no testcase) and the spooled cases copied in after it."""

    def __init__(self, spool: Path) -> None:
        self._spool = spool
        self._out = spool.open("w", encoding="utf-8", newline="")
        self.counts = {"disabled": 0, "errors": 0, "failures": 0, "skipped": 0, "tests": 0}
        self.time: float = 0  # summed case by case, in order, as junit-xml sums them

    def add(self, report: Report) -> None:
        cases = [case(report, index, result) for index, result in enumerate(report.results)]
        for made in cases:
            self.counts["disabled"] += not made.is_enabled
            self.counts["errors"] += bool(made.is_error())
            self.counts["failures"] += bool(made.is_failure())
            self.counts["skipped"] += bool(made.is_skipped())
            self.counts["tests"] += 1
            if made.elapsed_sec:
                self.time += made.elapsed_sec
        text = str(
            to_xml_report_string([TestSuite(name=report.contract_path, test_cases=cases)], prettyprint=True, encoding="utf-8")
        )
        lines = text.split("\n")  # the declaration, <testsuites>, <testsuite>, the cases, </testsuite>, </testsuites>, ""
        self._out.write("\n".join(lines[3:-3]) + "\n")

    def pieces(self, path: str, timestamp: str, shown: dict[str, Any]) -> Iterator[str]:
        """The document (but its last newline, which the writer adds) for a suite named
        ``path`` with the properties ``shown`` (:func:`suite_properties`)."""
        self._out.close()
        head = TestSuite(name=path, test_cases=[], file=path, timestamp=timestamp, properties=shown)
        skeleton = str(to_xml_report_string([head], prettyprint=True, encoding="utf-8"))
        top, close, tail = skeleton.rpartition("\t</testsuite>\n")
        lines = top.split("\n", 3)
        totals = {**{key: str(value) for key, value in self.counts.items()}, "time": str(self.time)}
        lines[2] = _COUNTED.sub(lambda m: f' {m[1]}="{totals[m[1]]}"', lines[2], count=6)
        totals["time"] = str(0 + float(totals["time"]))  # the <testsuites> sum: of each suite's text, as a float
        lines[1] = _COUNTED.sub(lambda m: f' {m[1]}="{totals[m[1]]}"', lines[1], count=5)
        yield "\n".join(lines)
        with self._spool.open(encoding="utf-8", newline="") as cases:
            while chunk := cases.read(1 << 20):
                yield chunk
        yield close + tail.removesuffix("\n")
