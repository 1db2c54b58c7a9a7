"""``behavegate replay RUN_DIR``: check that a run directory is whole and untouched.

Every check yields ``Issue(code, message)``; a valid run has none. Beyond the
consistency checks skylos makes (events against state, summary against the
report, statuses and digests re-derived from the assertions), each file must
be byte-for-byte the canonical rendering of its content, and the sealing
``run_completed`` event must carry the digest of every other byte.
"""

from __future__ import annotations

import json
from functools import partial
from pathlib import Path
from typing import Any

from behavegate import json_formats
from behavegate.judge.evaluate import run_status
from behavegate.model import combine
from behavegate.report import run_schema
from behavegate.report.artifacts import render_event, render_json, sha256_text
from behavegate.report.digests import evidence_digest, sha256_json
from behavegate.report.layout import EVENTS, LAYOUT, RESULTS, STATE, SUMMARY
from behavegate.report.run_files import Invalid, Issue, parse, read_run
from behavegate.text import MARKER

MAX_SHAPE_ISSUES = 20  # structure problems listed from one run directory
_STRICTNESS = {"pass": 0, "incomplete": 1, "fail": 2}  # failure beats incomplete beats pass


def validate_run(run_dir: Path) -> list[Issue]:
    return checked_run(run_dir)[1]


def checked_run(run_dir: Path) -> tuple[dict[str, Any] | None, list[Issue]]:
    """The report of a run directory (None unless it is valid) and its issues:
    one read, so what is shown is exactly what was checked."""
    texts, issues = read_run(run_dir)
    if issues:
        return None, issues
    try:
        lines = texts[EVENTS].splitlines(keepends=True)
        events = [parse(f"{EVENTS} line {n}", line, EVENTS) for n, line in enumerate(lines, 1)]
        state, summary, report = (parse(name, texts[name]) for name in (STATE, SUMMARY, RESULTS))
    except Invalid as invalid:
        return None, [invalid.issue]
    misshapen = shape_issues(events, state, summary, report)
    if misshapen:  # the checks below take these files apart: they need the shape
        return None, misshapen
    checks = (
        partial(_canonical, texts, events, state, summary, report),
        partial(_events, events),
        partial(_seal, texts, events),
        partial(_state_matches_events, events, state),
        partial(_summary, summary, state, report),
        partial(_report, report, state, events),
    )
    for check in checks:
        try:
            check()
        except Invalid as invalid:
            issues.append(invalid.issue)
        except (KeyError, TypeError, AttributeError, ValueError, IndexError) as exc:
            issues.append(Issue("artifact_structure_invalid", f"unexpected structure: {type(exc).__name__}: {exc}"))
    if not issues:  # whole and sealed: now, do the verdicts follow from the evidence?
        try:
            issues += rejudged(report)
        except (KeyError, TypeError, AttributeError, ValueError, IndexError, RecursionError) as exc:
            issues.append(Issue("artifact_structure_invalid", f"unexpected structure: {type(exc).__name__}: {exc}"))
    return (None if issues else report), issues


def shape_issues(events: list[Any], state: Any, summary: Any, report: Any) -> list[Issue]:
    """Each file's parsed JSON against its schema (run_schema.py): every problem, by file
    and JSON path, at most MAX_SHAPE_ISSUES in all."""
    shapes = [
        *((f"{EVENTS} line {n}", e, run_schema.AnyEvent) for n, e in enumerate(events, 1)),
        (STATE, state, run_schema.State),
        (SUMMARY, summary, run_schema.Summary),
        (RESULTS, report, run_schema.Report),
    ]
    misshapen = [
        Issue("artifact_structure_invalid", f"{name}: {problem.located()}")
        for name, value, schema in shapes
        for problem in json_formats.problems(value, schema, MAX_SHAPE_ISSUES)
    ]
    return misshapen[:MAX_SHAPE_ISSUES]


def rejudged(report: Any) -> list[Issue]:
    """Every attempt judged again from its recorded observation and the contract the run
    carries (``behavegate.contract_data``): one issue per assertion whose recorded status
    differs. The seal proves the files were not changed after it was made; only this shows
    the verdicts it sealed follow from the evidence (a run flipped to pass and re-sealed)."""
    from behavegate.contract.as_data import carried_contract
    from behavegate.judge.evaluate import evaluate_scenario
    from behavegate.report.shard_reports import report_observation

    ours = report.get("behavegate")
    data = ours.get("contract_data") if isinstance(ours, dict) else None
    contract = carried_contract(data, Path(str(report["contract"]["path"])))
    if contract is None or contract.version != report["contract"]["version"]:
        why = "the run does not carry its contract as data (behavegate.contract_data), or carries one it could not have run"
        return [Issue("verdicts_not_rejudged", f"{why}: its verdicts cannot be judged again from its evidence")]
    specs = {s.id: s for s in contract.scenarios}
    issues: list[Issue] = []
    for scenario in report["scenarios"]:
        sid = scenario["id"]
        spec = specs.get(sid)
        if spec is None:
            issues.append(Issue("verdict_mismatch", f"scenario {sid!r} is not in the contract the run carries"))
            continue
        tries = scenario.get("attempts")
        if tries is None:  # version 1 (or written null): the scenario is its one attempt
            tries = [{**scenario, "attempt": None}]
        for attempt in tries:
            raw, number = attempt["observation"], attempt["attempt"]
            where = f"scenario {sid!r}" + ("" if number is None else f" attempt {number}")
            try:
                observation = None if raw is None else report_observation(raw, sid, contract.version >= 2)
            except ValueError as bad:
                issues.append(Issue("verdict_mismatch", f"{where}: its observation cannot be judged again: {bad}"))
                continue
            again = evaluate_scenario(spec, observation, contract.agent, contract.version)
            recorded = {a["assertion"]: a["status"] for a in attempt["assertions"]}
            judged = {v.assertion: v.status for v in again.verdicts}
            if list(recorded) != list(judged):
                issues.append(
                    Issue("verdict_mismatch", f"{where}: the recorded assertions are not the ones its contract asks for")
                )
            # The verdicts were reached on the raw answer, the sealed copy has the run's token
            # masked (report/redact.py): a check the token failed may pass on the mask. A verdict
            # recorded stricter than its masked evidence is no forged pass; the reverse always counts.
            masked = raw is not None and MARKER in json.dumps(
                raw
            )  # (a token under 10 characters is masked as asterisks: not told)
            issues += [
                Issue("verdict_mismatch", f"{where}: {name} was recorded {recorded[name]}, its evidence judges {status}")
                for name, status in judged.items()
                if name in recorded
                and recorded[name] != status
                and not (masked and _STRICTNESS.get(recorded[name], 0) > _STRICTNESS[status])
            ]
            if len(issues) >= MAX_SHAPE_ISSUES:
                return issues[:MAX_SHAPE_ISSUES]
    return issues


def _expect(condition: bool, code: str, message: str) -> None:
    if not condition:
        raise Invalid(code, message)


def _canonical(texts: dict[str, str], events: list[Any], state: Any, summary: Any, report: Any) -> None:
    for name, value in ((STATE, state), (SUMMARY, summary), (RESULTS, report)):
        _expect(texts[name] == render_json(value), "artifact_not_canonical", f"{name} is not in canonical form")
    _expect(
        texts[EVENTS] == "".join(render_event(e) for e in events), "artifact_not_canonical", f"{EVENTS} is not in canonical form"
    )


def _events(events: list[Any]) -> None:
    _expect(bool(events) and all(isinstance(e, dict) for e in events), "events_invalid", "events must be JSON objects")
    _expect(events[0].get("event") == "run_started", "events_invalid", "first event must be run_started")
    completed = [i for i, e in enumerate(events) if e.get("event") == "run_completed"]
    _expect(completed == [len(events) - 1], "events_invalid", "run_completed must occur exactly once, last")
    _expect(len({e.get("run_id") for e in events}) == 1, "run_id_mismatch", "events carry more than one run id")
    _expect(all(e.get("kind") == "agent_behavior" for e in events), "kind_mismatch", "an event has the wrong kind")
    _expect(all(e.get("schema_version") == 1 for e in events), "schema_version_mismatch", "an event has the wrong schema version")


def _seal(texts: dict[str, str], events: list[Any]) -> None:
    seal = events[-1]
    body = "".join(texts[EVENTS].splitlines(keepends=True)[:-1])
    _expect(seal.get("events_digest") == sha256_text(body), "events_digest_mismatch", "events before run_completed were changed")
    digests = seal.get("artifact_digests")
    _expect(
        isinstance(digests, dict) and set(digests) == {STATE, SUMMARY, RESULTS},
        "artifact_digest_mismatch",
        "run_completed lacks artifact digests",
    )
    for name in (STATE, SUMMARY, RESULTS):
        _expect(digests[name] == sha256_text(texts[name]), "artifact_digest_mismatch", f"{name} does not match its sealed digest")


def _state_matches_events(events: list[Any], state: Any) -> None:
    run_id = events[0]["run_id"]
    _expect(state.get("run_id") == run_id, "run_id_mismatch", "state.json has another run id")
    _expect(
        state.get("kind") == "agent_behavior" and state.get("schema_version") == 1,
        "kind_mismatch",
        "state.json kind or schema version is wrong",
    )
    steps = state["steps"]
    started = [e for e in events if e["event"] == "step_started"]
    finished = [e for e in events if e["event"] == "step_completed"]
    _expect(
        [s["name"] for s in steps] == [e["step"] for e in started] == [e["step"] for e in finished],
        "state_events_mismatch",
        "steps in state.json do not match the events",
    )
    for step, start, end in zip(steps, started, finished, strict=True):
        _expect(
            step["started_at"] == start["timestamp"]
            and step["ended_at"] == end["timestamp"]
            and step["status"] == end["status"]
            and step["duration_ms"] == end["duration_ms"]
            and step["input_summary"] == start["input_summary"]
            and step["output_summary"] == end["output_summary"],
            "state_events_mismatch",
            f"step {step['name']!r} differs between state.json and events",
        )
    tools = [e for e in events if e["event"] in {"tool_started", "tool_completed"}]
    _expect(
        len(tools) == 2 * len(state["tool_calls"]), "state_events_mismatch", "tool calls in state.json do not match the events"
    )
    for call, start, end in zip(state["tool_calls"], tools[0::2], tools[1::2], strict=True):
        _expect(
            start["event"] == "tool_started"
            and end["event"] == "tool_completed"
            and call["step"] == start["step"] == end["step"]
            and call["tool"] == start["tool"] == end["tool"]
            and call["started_at"] == start["timestamp"]
            and call["ended_at"] == end["timestamp"]
            and call["status"] == end["status"],
            "state_events_mismatch",
            f"tool call of {call['step']!r} differs between state.json and events",
        )
    first, last = events[0], events[-1]
    _expect(
        state["started_at"] == first["timestamp"]
        and state["ended_at"] == last["timestamp"]
        and state["budget"] == first["budget"]
        and state["status"] == last["status"],
        "state_events_mismatch",
        "run times, budget or status differ between state.json and events",
    )


def _summary(summary: Any, state: Any, report: Any) -> None:
    _expect(report.get("harness") == summary, "harness_summary_mismatch", "the report's harness differs from summary.json")
    expected = {
        "run_id": state["run_id"],
        "status": state["status"],
        "started_at": state["started_at"],
        "ended_at": state["ended_at"],
        "duration_ms": state["duration_ms"],
        "budget": state["budget"],
        "phase_count": len(state["steps"]),
        "completed_phases": [s["name"] for s in state["steps"] if s["status"] == "completed"],
        "tool_call_count": len(state["tool_calls"]),
        "decision_count": len(state["decisions"]),
        "error": state["error"],
    }
    for key, value in expected.items():
        _expect(summary.get(key) == value, "summary_state_mismatch", f"summary.json {key} does not match state.json")
    steps = summary["budget_used"]["steps"]
    _expect(steps == len(state["steps"]), "summary_state_mismatch", "summary.json budget_used does not match state.json")
    _expect(
        summary["budget_remaining"]["steps"] == state["budget"]["max_steps"] - steps,
        "summary_state_mismatch",
        "summary.json budget_remaining does not match its budget",
    )


def _report(report: Any, state: Any, events: list[Any]) -> None:
    meta = state["metadata"]
    _expect(
        report.get("schema_version") == 1 and report.get("kind") == "agent_behavior",
        "kind_mismatch",
        "report kind or schema version is wrong",
    )
    _expect(report["artifacts"] == LAYOUT, "artifacts_layout_invalid", "report artifacts do not name the canonical layout")
    _expect(
        report["contract"]["digest"] == meta["contract_digest"],
        "metadata_mismatch",
        "contract digest differs from state metadata",
    )
    _expect(
        report["contract"]["version"] == meta["contract_version"],
        "metadata_mismatch",
        "contract version differs from state metadata",
    )
    _expect(report["contract"]["path"] == meta["contract_path"], "metadata_mismatch", "contract path differs from state metadata")
    _expect(report["mode"] == meta["mode"], "metadata_mismatch", "mode differs from state metadata")
    _expect(report["provenance"] == meta["behavior_provenance"], "metadata_mismatch", "provenance differs from state metadata")
    _expect(
        meta["evidence_trust"] == report["provenance"]["trust"], "metadata_mismatch", "evidence trust differs from provenance"
    )
    scenarios = report["scenarios"]
    statuses = []
    by_kind: dict[str, dict[str, int]] = {}
    totals = {"pass": 0, "fail": 0, "incomplete": 0}
    for scenario in scenarios:
        statuses.append(_scenario_status(scenario))
        counted = (
            [a for attempt in scenario["attempts"] for a in attempt["assertions"]]
            if "attempts" in scenario
            else scenario["assertions"]
        )
        for a in counted:
            totals[a["status"]] += 1
            counts = by_kind.setdefault(a["kind"], {"requested": 0, "passed": 0, "failed": 0, "incomplete": 0})
            counts["requested"] += 1
            counts[{"pass": "passed", "fail": "failed", "incomplete": "incomplete"}[a["status"]]] += 1
    scenario_statuses = list(statuses)
    derived = run_status(scenario_statuses, [(g["gate"], g["status"]) for g in report.get("gates", [])])
    status_ok = report["status"] == derived or (report["status"] == "incomplete" and derived == "pass" and report.get("issues"))
    _expect(bool(status_ok), "behavior_evidence_invalid", "behavior evidence status does not match its scenarios")
    summary = {
        "scenario_count": len(scenario_statuses),
        "passed_scenarios": scenario_statuses.count("pass"),
        "failed_scenarios": scenario_statuses.count("fail"),
        "incomplete_scenarios": scenario_statuses.count("incomplete"),
        "assertion_count": sum(totals.values()),
        "passed_assertions": totals["pass"],
        "failed_assertions": totals["fail"],
        "incomplete_assertions": totals["incomplete"],
    }
    _expect(report["summary"] == summary, "behavior_evidence_invalid", "behavior evidence summary does not match assertions")
    coverage = {
        "requested": sum(totals.values()),
        "completed": totals["pass"] + totals["fail"],
        "incomplete": totals["incomplete"],
        "by_assertion": dict(sorted(by_kind.items())),
    }
    _expect(report["coverage"] == coverage, "behavior_evidence_invalid", "behavior evidence coverage does not match assertions")
    observations = sorted((s["id"], s["observation"]) for s in scenarios if s["observation"] is not None)
    for scenario_id, observation in observations:
        _expect(
            observation.get("id") == scenario_id,
            "behavior_evidence_invalid",
            f"observation does not match scenario {scenario_id!r}",
        )
    selected = sha256_json({"version": 1, "scenarios": [o for _, o in observations]})
    _expect(
        report["provenance"]["selected_digest"] == selected,
        "selected_digest_mismatch",
        "selected_digest does not match the embedded observations",
    )
    _expect(
        meta["observation_evidence_digest"] == selected,
        "selected_digest_mismatch",
        "state metadata observation digest does not match",
    )
    _expect(
        meta["observation_source_digest"] == report["provenance"].get("source_digest"),
        "source_digest_mismatch",
        "source digest differs between provenance and state metadata",
    )
    digest = evidence_digest(report)
    for where, value in (
        ("report", report["evidence_digest"]),
        ("state metadata", meta["behavior_evidence_digest"]),
        ("run_completed event", events[-1].get("evidence_digest")),
    ):
        _expect(value == digest, "evidence_digest_mismatch", f"evidence_digest in the {where} does not match the evidence")
    _expect(
        meta["scenario_ids"] == sorted(s["id"] for s in scenarios),
        "scenario_ids_mismatch",
        "scenario ids differ between state and report",
    )
    _expect(
        [s["name"] for s in state["steps"]] == [f"scenario:{s['id']}" for s in scenarios],
        "scenario_ids_mismatch",
        "steps do not match the report's scenarios",
    )
    decisions = [
        {
            "phase": f"scenario:{s['id']}",
            "code": f"behavior_assertion_{a['status']}",
            "target": {"scenario_id": s["id"], "assertion": a["assertion"], "kind": a["kind"]},
            "details": {"message": a["message"], "expected": a["expected"], "observed": a["observed"]},
        }
        for s in scenarios
        for a in s["assertions"]
    ]
    _expect(state["decisions"] == decisions, "decisions_mismatch", "state decisions do not equal the report's assertions")
    _expect(
        report["harness"]["decision_count"] == len(decisions) and report["harness"]["run_id"] == events[0]["run_id"],
        "harness_summary_mismatch",
        "the report's harness does not match the run",
    )


def _scenario_status(scenario: Any) -> str:
    """The scenario's status re-derived from its assertions (and attempts)."""

    def derived(assertions: list[Any], where: str) -> str:
        found = [a["status"] for a in assertions]
        _expect(
            all(s in {"pass", "fail", "incomplete"} for s in found),
            "behavior_evidence_invalid",
            f"{where} has an invalid assertion status",
        )
        return combine(found)

    name = f"behavior evidence scenario {scenario['id']!r}"
    if "attempts" not in scenario:
        status = derived(scenario["assertions"], name)
    else:
        reliability = scenario["reliability"]
        tries: list[Any] = []
        for attempt in scenario["attempts"]:
            tried = derived(attempt["assertions"], f"{name} attempt {attempt['attempt']}")
            _expect(
                attempt["status"] == tried,
                "behavior_evidence_invalid",
                f"{name} attempt {attempt['attempt']} status does not match assertions",
            )
            tries.append(tried)
        status = _rederived(tries, reliability)
        _expect(
            [reliability["passed"], reliability["failed"]] == [tries.count("pass"), tries.count("fail")],
            "behavior_evidence_invalid",
            f"{name} reliability counts do not match its attempts",
        )
    _expect(scenario["status"] == status, "behavior_evidence_invalid", f"{name} status does not match assertions")
    return status


def _rederived(tries: list[Any], reliability: Any) -> str:
    """A scenario's status from its attempts: the fixed rule, or the sequential test it ran."""
    from behavegate.judge.aggregate import scenario_status

    plan = reliability.get("sequential")
    if plan is None:
        return scenario_status(tries, reliability["runs"], reliability["min_pass_rate"], reliability["gate"])
    from behavegate.judge.sequential import decide, design
    from behavegate.model import SequentialSpec

    settings = plan["settings"]
    spec = SequentialSpec(settings["false_fail"], settings["missed_drop"], settings["margin"])
    return decide(tries, design(reliability["min_pass_rate"], spec, plan["cap"]), reliability["gate"]).status


def render(run_dir: Path, issues: list[Issue], fmt: str) -> str:
    if fmt == "json":
        payload = {"run_dir": str(run_dir), "valid": not issues, "issues": [i.as_dict() for i in issues]}
        return json.dumps(payload, indent=2, sort_keys=True)
    if not issues:
        return f"Run {run_dir}: valid"
    lines = [f"Run {run_dir}: INVALID ({len(issues)} issue(s))"]
    lines.extend(f"  {i.code}: {i.message}" for i in issues)
    return "\n".join(lines)
