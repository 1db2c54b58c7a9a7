"""``--html``: the run as one self-contained HTML file a reviewer looks at.

One file, nothing fetched: the CSS and the small filter script are inline and
allowed by their SHA-256 in a Content Security Policy that allows nothing else
(no network, no other script, no inline style attribute, no form, no base URL).
The charts are inline SVG drawn from numbers. Every text comes from the typed
Report through a jinja2 template with autoescape on, so agent text (answers,
tool arguments, messages) can never become markup or script, and the only
script is the static one (no text lands in it). Every value the template
prints passes one boundary, :func:`inert`: control, bidi and line-separator
characters are shown as escapes, whichever field carries them (a contract
path, a run id). The view model below decides what is shown (failing
scenarios first, text cut to a size, an overall budget for agent text); the
template only lays it out.
"""

from __future__ import annotations

import base64
import hashlib
import json
from collections.abc import Iterable, Sequence
from typing import Any

from jinja2 import Environment, PackageLoader, StrictUndefined, select_autoescape

from behavegate.cost import attempt_tokens
from behavegate.limits import HTML_AGENT_TEXT_BUDGET, HTML_TEXT_CHARS, HTML_TOOL_CALLS, HTML_VALUE_CHARS, LOOPS_SHOWN
from behavegate.model import TOOL_SIDE, TOOL_SOURCE_MCP, Observation, ScenarioResult, Status
from behavegate.render import regressions
from behavegate.render.table import attempts_not_sent, pass_rate, sequential_note
from behavegate.report.comparison import Finding
from behavegate.report.judged import judge_note
from behavegate.report.result import Report
from behavegate.report.standing import standing
from behavegate.text import visible

ORDER: dict[str, int] = {"fail": 0, "incomplete": 1, "pass": 2}
OPEN_AT_MOST = 25  # failing scenarios opened on load; past this, all start collapsed
STRIP_CELL, STRIP_GAP = 9, 2
BAR_WIDTH = 160


def clip(text: str, limit: int) -> str:
    """``text`` with control characters visible, cut to ``limit`` with the count left out."""
    text = visible(text.replace("\r\n", "\n")).encode("utf-8", "replace").decode("utf-8")
    if len(text) <= limit:
        return text
    return f"{text[:limit]}… ({len(text) - limit:,} more characters; the JSON report has them all)"


def value_text(value: Any, limit: int = HTML_VALUE_CHARS) -> str:
    """An expected or observed value: text as it is, anything else as JSON."""
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, sort_keys=True, indent=2)
    return clip(text, limit)


class Budget:
    """Agent text (answers, tool arguments) and the assertion texts that can quote it, shown
    over the whole report: a 5,000-scenario run stays a file a browser opens."""

    def __init__(self, chars: int) -> None:
        self.left = chars
        self.withheld = 0

    def take(self, text: str, limit: int) -> str | None:
        shown = clip(text, limit)
        if len(shown) > self.left:
            self.withheld += 1
            return None
        self.left -= len(shown)
        return shown

    def show(self, text: str, limit: int) -> str:
        """As :meth:`take`, with a note in place of a text the budget no longer allows."""
        shown = self.take(text, limit)
        return (
            shown
            if shown is not None
            else f"(left out: the HTML report's size budget; {len(text):,} characters in the JSON report)"
        )


def _where(report: Report, result: ScenarioResult, assertion: str | None = None) -> str:
    location = report.location(result.scenario, assertion)
    return f"{location.file}:{location.line}" if location.line else location.file


def _strip(statuses: Sequence[str]) -> dict[str, Any]:
    """The attempt strip: one cell per attempt, coloured (and titled) by its status."""
    cells = [
        {"x": i * (STRIP_CELL + STRIP_GAP), "status": status, "title": f"attempt {i + 1}: {status}"}
        for i, status in enumerate(statuses)
    ]
    width = max(1, len(statuses) * (STRIP_CELL + STRIP_GAP) - STRIP_GAP)
    counts = {status: sum(1 for s in statuses if s == status) for status in ("pass", "fail", "incomplete")}
    return {"cells": cells, "width": width, "height": STRIP_CELL + 4, "cell": STRIP_CELL, "counts": counts}


def _bar(result: ScenarioResult) -> dict[str, Any] | None:
    """The pass rate, its Wilson 95% interval and the threshold, as x positions on one bar."""
    reliability = result.reliability
    if reliability is None:
        return None
    low, high = reliability.interval

    def x(rate: float) -> float:
        return round(min(1.0, max(0.0, rate)) * BAR_WIDTH, 2)

    return {
        "width": BAR_WIDTH,
        "low": x(low),
        "span": max(1.0, round(x(high) - x(low), 2)),
        "rate": x(reliability.pass_rate),
        "threshold": x(reliability.min_pass_rate),
        "text": pass_rate(reliability, attempts_not_sent(result)),
        "title": (
            (
                f"pass rate {reliability.pass_rate:.0%}, 95% interval {low:.0%}-{high:.0%}, "
                if reliability.passed + reliability.failed
                else "pass rate unknown: no attempt judged, "
            )
            + f"threshold {reliability.min_pass_rate:.0%}"
            + (" (gated on the interval's lower end)" if reliability.gate == "lower_bound" else "")
        ),
        "gate": reliability.gate,
        "threshold_text": f"{reliability.min_pass_rate:.0%}",
        "sequential": sequential_note(reliability),
    }


def _calls(observation: Observation, budget: Budget) -> tuple[list[dict[str, Any]], int] | None:
    if observation.tool_calls is None:
        return None
    calls = []
    errors = observation.tool_errors or ()
    for index, call in enumerate(observation.tool_calls[:HTML_TOOL_CALLS]):
        arguments = None if call.arguments is None else budget.take(value_text(dict(call.arguments), 10**9), HTML_VALUE_CHARS)
        error = errors[index] if index < len(errors) else None
        calls.append(
            {
                "name": clip(call.name, 200),
                "arguments": arguments,
                "unobserved": call.arguments is None,
                "error": None if error is None else clip(error, 500),
            }
        )
    return calls, max(0, len(observation.tool_calls) - HTML_TOOL_CALLS)


def _agent(observation: Observation | None, budget: Budget, limit: int = HTML_TEXT_CHARS) -> dict[str, Any] | None:
    """What the agent said and called in one attempt, cut to size."""
    if observation is None:
        return None
    response = None if observation.response is None else budget.take(observation.response, limit)
    facts = []
    if observation.finish_reason is not None:
        facts.append(f"finish_reason {clip(observation.finish_reason, 100)}")
    if observation.refusal is not None:
        facts.append(f"refusal {str(observation.refusal).lower()}")
    if observation.latency_ms is not None:
        facts.append(f"{observation.latency_ms:.0f} ms")
    tokens = attempt_tokens(observation)
    if tokens is not None:
        facts.append(f"{tokens} tokens")
    if observation.steps is not None:
        facts.append(f"{observation.steps} steps")
    calls = _calls(observation, budget)
    return {
        "turns": _user_turns(observation, budget, limit),
        "stopped": None
        if (went := observation.conversation) is None or went.tool_budget_exceeded is None
        else clip(went.tool_budget_exceeded.reason(), 500),
        "observed": observation.response is not None,
        "response": response,
        "withheld": observation.response is not None and response is None,
        "length": len(observation.response or ""),
        "calls": None if calls is None else calls[0],
        "tool_side": TOOL_SIDE if observation.tool_source == TOOL_SOURCE_MCP else None,
        "calls_cut": 0 if calls is None else calls[1],
        "sources": None if observation.sources is None else [clip(s, 300) for s in observation.sources[:50]],
        "error": None if observation.error is None else clip(observation.error, 1000),
        "facts": " · ".join(facts),
    }


def _user_turns(observation: Observation, budget: Budget, limit: int) -> list[dict[str, Any]]:
    """A conversation with scripted user turns, turn by turn: what the user said, the calls the
    agent made answering it (with what behavegate answered) and its answer, cut to size."""
    went = observation.conversation
    if went is None or not went.user_turns:
        return []
    calls = observation.tool_calls or ()
    results = {r.call: r for r in went.results}
    turns = []
    for turn in went.user_turns[:HTML_TOOL_CALLS]:
        made = []
        for index in range(turn.first_call, min(turn.end_call, len(calls), turn.first_call + HTML_TOOL_CALLS)):
            call, result = calls[index], results.get(index)
            answer = None if result is None else result.error if result.error is not None else value_text(result.content, 10**9)
            made.append(
                {
                    "name": clip(call.name, 200),
                    "arguments": None if call.arguments is None else budget.take(value_text(dict(call.arguments), 10**9), 500),
                    "result": None if answer is None else budget.take(answer, 500),
                    "failed": result is not None and result.error is not None,
                }
            )
        turns.append(
            {
                "user": budget.take(turn.user, limit),
                "response": None if turn.response is None else budget.take(turn.response, limit),
                "calls": made,
                "facts": ("user simulated by an LLM (non-deterministic) · " if turn.simulated else "")
                + f"{turn.model_turns} model request{'s' if turn.model_turns != 1 else ''}"
                + ("" if turn.finish_reason is None else f" · finish_reason {clip(turn.finish_reason, 100)}"),
            }
        )
    return turns


def _finding(report: Report, finding: Finding, key: str) -> dict[str, Any]:
    location = report.finding_location(finding)
    return {
        "key": key,
        "label": finding.label,
        "subject": clip(finding.subject, 300),
        "message": clip(finding.message, 1000),
        "where": f"{location.file}:{location.line}" if location.line else location.file,
        "gating": finding.gating,
        "before": finding.before.text() if finding.before else None,
        "after": finding.after.text() if finding.after else None,
    }


def _scenario(
    report: Report, index: int, result: ScenarioResult, budget: Budget, findings: dict[str, list[dict[str, Any]]]
) -> dict[str, Any]:
    statuses = [attempt.status for attempt in result.attempts] or [result.status]
    troubled = [
        {
            "assertion": clip(v.assertion, 300),
            "kind": v.kind,
            "status": v.status,
            "message": budget.show(v.message, 2000),
            "expected": budget.show(value_text(v.expected, 10**9), HTML_VALUE_CHARS),
            "observed": budget.show(value_text(v.observed, 10**9), HTML_VALUE_CHARS),
            "where": _where(report, result, v.assertion),
        }
        for v in result.verdicts
        if v.status != "pass"
    ]
    loops = report.derived.loops_of(result)  # a note, whatever the verdict: a passing scenario can loop
    looping = {loop.attempt: budget.show(loop.why, 600) for loop in loops[:LOOPS_SHOWN]}
    attempts = []
    if len(result.attempts) > 1:
        for attempt in result.attempts:
            failing = [f"{v.assertion}: {v.message}" for v in attempt.verdicts if v.status != "pass"]
            attempts.append(
                {
                    "number": attempt.index + 1,
                    "status": attempt.status,
                    "problems": [clip(text, 300) for text in failing[:5]],
                    "more": max(0, len(failing) - 5),
                    "agent": _agent(report.derived.shown(result, attempt), budget, 600),
                    "scores": _scores(attempt.scores),
                    "loop": looping.get(attempt.index + 1),
                }
            )
    counts = report.check_counts(result)
    return {
        "anchor": f"s{index}",
        "id": clip(result.scenario.id, 300),
        "status": result.status,
        "standing": standing(report, result),  # never "pass" for a failed scenario
        "tags": (tags := [clip(tag, 100) for tag in result.scenario.tags]),
        "tags_json": json.dumps(tags),  # the same texts as the tag filter's options, so they match
        "where": _where(report, result),
        "strip": _strip(statuses),
        "bar": _bar(result),
        "checks": {"pass": counts["pass"], "fail": counts["fail"], "incomplete": counts["incomplete"]},
        "troubled": troubled,
        "loops": [{"attempt": number, "why": why} for number, why in looping.items()],
        "loops_cut": len(loops) - len(looping),
        "attempt_count": len(result.attempts),
        "agent": _agent(report.derived.shown(result), budget),
        "attempts": attempts,
        "scores": _scores(result.reliability.scores if result.reliability else None),
        "findings": findings.get(result.scenario.id, []),
        "seconds": report.seconds(index) if report.timings is not None else None,
    }


def _scores(scores: Any) -> list[dict[str, Any]] | None:
    if not scores:
        return None
    return [
        {"metric": metric, "value": float(value)} for metric, value in scores.items() if metric not in ("attempts", "scenarios")
    ]


def view(report: Report) -> dict[str, Any]:
    """Everything one report's part of the page shows, computed from the Report only."""
    budget = Budget(HTML_AGENT_TEXT_BUDGET)
    comparison = report.baseline
    by_scenario: dict[str, list[dict[str, Any]]] = {}
    sections = []
    if comparison is not None:
        for key, heading, found in regressions.sections(comparison):
            rows = [_finding(report, finding, key) for finding in found]
            for row, finding in zip(rows, found, strict=True):
                if finding.scenario:
                    by_scenario.setdefault(finding.scenario, []).append(row)
            sections.append(
                {
                    "key": key,
                    "heading": heading,
                    "rows": rows[: regressions.SHOWN_PER_LIST],
                    "cut": max(0, len(rows) - regressions.SHOWN_PER_LIST),
                }
            )
    ordered = sorted(enumerate(report.results), key=lambda item: (ORDER.get(item[1].status, 3), item[0]))
    scenarios = [_scenario(report, index, result, budget, by_scenario) for index, result in ordered]
    troubled = sum(1 for s in scenarios if s["status"] != "pass")
    for scenario in scenarios:
        scenario["open"] = scenario["status"] != "pass" and troubled <= OPEN_AT_MOST
    scores = report.derived.scores
    counts, checks = report.scenario_counts(), report.total_check_counts()
    return {
        "contract_path": report.contract_path,
        "status": report.status,
        "gate_status": report.gate_status,
        "mode": report.mode,
        "trust": str(report.provenance.get("trust") or ""),
        "digest": (report.evidence_digest or "none")[:16],
        "run_id": report.facts.run_id,
        "started_at": report.facts.started_at,
        "version": report.version,
        "counts": {status: counts[status] for status in ("pass", "fail", "incomplete")},
        "checks": {status: checks[status] for status in ("pass", "fail", "incomplete")},
        "check_total": sum(checks.values()),
        "skipped": len(report.skipped or ()),
        "gates": [{"gate": clip(g.gate, 200), "status": g.status, "message": clip(g.message, 2000)} for g in report.gates],
        "issues": [{"code": clip(i.code, 200), "message": clip(i.message, 2000)} for i in report.issues],
        "latency": report.latency(),
        "usage": None if report.derived.usage is None else report.derived.usage.line(),
        "evidence_note": None if report.evidence_note is None else clip(report.evidence_note, 2000),
        "notes": [clip(note, 2000) for note in report.notes],
        "judge_note": None if (judged := judge_note(report)) is None else clip(judged, 2000),
        "gate_line": regressions.gate_line(report),
        "baseline": None
        if comparison is None
        else {"sections": sections, "source": clip(regressions.source_line(comparison), 2000), "status": comparison.status},
        "suite_scores": None if scores is None else _scores(scores["suite"]),
        "tag_scores": None
        if scores is None
        else [
            {"tag": clip(tag, 100), "scores": {m["metric"]: m["value"] for m in _scores(value) or ()}}
            for tag, value in scores["tags"].items()
        ],
        "scenarios": scenarios,
        "withheld": budget.withheld,
        "floor_decides": report.floor_decides,
    }


def inert(value: Any) -> Any:
    """What the template prints: text with control, bidi and line-separator characters as
    escapes (then autoescaped); the page's own CSS and script (``|safe``) as they are."""
    if not isinstance(value, str) or hasattr(value, "__html__"):  # markup the template marked |safe
        return value
    return visible(value).encode("utf-8", "replace").decode("utf-8")  # a lone surrogate as "?"


def _environment() -> Environment:
    return Environment(
        loader=PackageLoader("behavegate.render", "templates"),
        autoescape=select_autoescape(enabled_extensions=("html", "html.j2"), default_for_string=True, default=True),
        undefined=StrictUndefined,
        keep_trailing_newline=True,
        finalize=inert,
    )


def _digest(text: str) -> str:
    return "sha256-" + base64.b64encode(hashlib.sha256(text.encode()).digest()).decode()


def page(views: Iterable[dict[str, Any]], title: str, status: Status) -> str:
    """The HTML document for one report's view, or several (a suite of contracts)."""
    env = _environment()
    loader = env.loader
    assert loader is not None
    css = loader.get_source(env, "html_report.css")[0]
    script = loader.get_source(env, "html_report.js")[0]
    shown = list(views)
    tags = sorted({tag for v in shown for s in v["scenarios"] for tag in s["tags"]})
    policy = (
        f"default-src 'none'; style-src '{_digest(css)}'; script-src '{_digest(script)}'; base-uri 'none'; form-action 'none'"
    )
    return env.get_template("html_report.html.j2").render(
        title=title,
        status=status,
        views=shown,
        css=css,
        script=script,
        policy=policy,
        tags=tags,
        total=sum(len(v["scenarios"]) for v in shown),
    )


def render(report: Report) -> str:
    return page([view(report)], f"behavegate: {report.gate_status} — {report.contract_path}", report.gate_status)
