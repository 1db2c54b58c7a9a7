"""``--sarif``: SARIF 2.1.0 for GitHub code scanning.

One result per failed (``error``) or incomplete (``warning``) assertion of a
scenario that did not pass, at the contract file and line that asks for it (a
URI relative to the repository root, as code scanning needs). One rule per
assertion kind, keyed by its contract key (``tools.forbidden``), with help
text; the safety checks (PII, injection, forbidden tools, refusal) are tagged
``security`` with a ``security-severity``, so they land where security
reviewers look. Each result carries a fingerprint of contract, scenario and
assertion (never the line), so code scanning tracks a finding across runs and
edits. A failed or incomplete gate is a result at its line; a possible loop
(version 2) a ``note`` at the scenario's line, whatever the verdict. Agent text
appears only in plain-text messages, cut short, with brackets and backslashes
escaped (§3.11.6), so no embedded link can form.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from pathlib import PurePosixPath
from typing import Any
from urllib.parse import quote

from behavegate.contract.checks import CHECKS
from behavegate.gating import GateKind, GateName
from behavegate.limits import SARIF_MAX_RESULTS, SARIF_MESSAGE_CHARS
from behavegate.report.result import Report
from behavegate.text import one_line

SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
DOCS = "docs/contract.md"
# contract key -> (short description, help): each check's row says it (contract/checks.py).
RULES: dict[str, tuple[str, str]] = {check.key: (check.title, check.help) for check in CHECKS}
# Suite gates (version 2), keyed as the contract writes them; a gate result is at the gate's line.
GATE_RULES: dict[str, tuple[str, str]] = {
    "gates.min_pass_rate": (
        "The suite reaches its pass-rate floor",
        "The mean pass rate of the scenarios (or of each file, threshold_mode: all) must reach gates.min_pass_rate.",
    ),
    "gates.min_score": ("The suite reaches its score floor", "The suite's mean graded scores must reach gates.min_score."),
    "gates.latency_p95_ms": ("Latency p95 within its limit", "The 95th percentile of attempt latency must be within the limit."),
    "gates.by_tag.min_pass_rate": (
        "A category reaches its pass-rate floor",
        "The scenarios carrying the tag (gates.by_tag, --gate-tag) must reach its pass-rate floor.",
    ),
    "gates.by_tag.min_score": (
        "A category reaches its score floor",
        "The scenarios carrying the tag (gates.by_tag) must reach its score floor.",
    ),
    "shards": ("Every shard's report was merged", "A merged run needs each shard's report exactly once."),
}
# Notes, not verdicts: reported whatever the scenario's status, at the scenario's line.
NOTE_RULES: dict[str, tuple[str, str]] = {
    "conversation.possible_loop": (
        "An attempt may be a loop",
        "The agent was still calling tools when the scenario's max_turns ran out, with no final answer; the repeated "
        "identical calls are listed. Not a verdict: raise max_turns if the task needs more turns, or fix the agent.",
    ),
}
# Tags whose gates guard security behaviour: their gate results carry the security tag.
SECURITY_TAGS = frozenset({"safety", "security", "injection", "adversarial", "pii", "secrets"})
# Safety findings: code scanning ranks them by this CVSS-like score (0.1-10).
SECURITY_SEVERITY = {check.key: check.security_severity for check in CHECKS if check.security_severity}


def rule_key(kind: str) -> str:
    """The contract key of an assertion kind (``tool_forbidden`` → ``tools.forbidden``)."""
    from behavegate.judge.assertions import REGISTRY

    for entry in REGISTRY:
        if entry.kind == kind:
            return entry.key
    return kind


def _rule(key: str) -> dict[str, Any]:
    if key in NOTE_RULES:
        short, help_text = NOTE_RULES[key]
        return {
            "id": key,
            "name": key.replace(".", "_"),
            "shortDescription": {"text": short},
            "fullDescription": {"text": help_text},
            "help": {
                "text": f"{help_text} See {DOCS} in behavegate's documentation.",
                "markdown": f"{help_text}\n\nThe contract format: `{DOCS}` (`max_turns`, `tool_results`).",
            },
            "defaultConfiguration": {"level": "note"},
            "properties": {"tags": ["agent-behavior"]},
        }
    short, help_text = {**RULES, **GATE_RULES}.get(key, (f"{key} assertion", f"The contract's {key} assertion."))
    anchor = DOCS
    properties: dict[str, Any] = {"tags": ["agent-behavior"]}
    if key in SECURITY_SEVERITY:
        properties = {"tags": ["security", "agent-behavior"], "security-severity": SECURITY_SEVERITY[key], "precision": "high"}
    return {
        "id": key,
        "name": key.replace(".", "_"),
        "shortDescription": {"text": short},
        "fullDescription": {"text": help_text},
        "help": {
            "text": f"{help_text} A result is an error when the evidence shows the behavior was violated, a warning when "
            f"the evidence was missing or incomplete. See {anchor} in behavegate's documentation.",
            "markdown": f"{help_text}\n\n**error**: the evidence shows the behavior was violated. **warning**: the evidence was "
            f"missing or incomplete, so it could not be judged.\n\nThe contract format: `{anchor}` (`{key}`).",
        },
        "defaultConfiguration": {"level": "error"},
        "properties": properties,
    }


def _uri(path: str) -> tuple[str, bool]:
    """A repository-relative URI reference (percent-encoded), and whether it is relative."""
    posix = PurePosixPath(path)
    if posix.is_absolute():
        return "file://" + quote(str(posix), safe="/"), False
    return quote(str(posix), safe="/"), True


def _value(value: Any) -> str:
    return one_line(value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, sort_keys=True), 300)


def plain_message(text: str, limit: int = SARIF_MESSAGE_CHARS) -> dict[str, str]:
    """A plain-text SARIF message. SARIF 2.1.0 §3.11.6 reads ``[text](target)`` in one as an
    embedded link, so agent text could place a link of its choosing: literal ``[`` and ``]``
    are escaped as ``\\[`` and ``\\]``, and ``\\`` as ``\\\\`` (so an escape stays unambiguous).
    Cut to ``limit`` characters, never inside an escape."""
    out: list[str] = []
    size = 0
    for char in text:
        piece = "\\" + char if char in "\\[]" else char
        if size + len(piece) > limit:
            break
        out.append(piece)
        size += len(piece)
    return {"text": "".join(out)}


def fingerprint(contract: str, scenario: str, assertion: str) -> str:
    return hashlib.sha256(json.dumps([contract, scenario, assertion]).encode()).hexdigest()[:32]


def results(report: Report) -> list[dict[str, Any]]:
    """The run's findings, failures first, each at its assertion's contract line."""
    found: list[dict[str, Any]] = []
    for result in report.results:
        if result.status == "pass":
            continue
        for verdict in result.verdicts:
            if verdict.status == "pass":
                continue
            key = rule_key(verdict.kind)
            location = report.location(result.scenario, verdict.assertion)
            physical = _physical(location.file, location.line)
            attempts = ""
            if len(result.attempts) > 1:
                same = [v for a in result.attempts for v in a.verdicts if v.assertion == verdict.assertion]
                bad = sum(1 for v in same if v.status == verdict.status)
                attempts = f" ({verdict.status} in {bad} of {len(same)} attempts)"
            word = "failed" if verdict.status == "fail" else "incomplete"
            text = (
                f"Scenario {one_line(result.scenario.id, 200)}: {one_line(verdict.assertion, 200)} {word}{attempts}: "
                f"{one_line(verdict.message, 1000)}. Expected {_value(verdict.expected)}, observed {_value(verdict.observed)}."
            )
            found.append(
                {
                    "ruleId": key,
                    "level": "error" if verdict.status == "fail" else "warning",
                    "message": plain_message(text),
                    "locations": [{"physicalLocation": physical}],
                    "partialFingerprints": {
                        "behavegate/v1": fingerprint(report.contract_path, result.scenario.id, verdict.assertion)
                    },
                    "properties": {
                        "scenario": result.scenario.id,
                        "assertion": verdict.assertion,
                        "scenarioStatus": result.status,
                        "contract": report.contract_path,
                        **_judged(verdict.observed),
                    },
                }
            )
    found.extend(_gate_results(report))
    found.extend(_loop_results(report))
    found.sort(key=lambda item: LEVELS.index(item["level"]))
    return found


LEVELS = ("error", "warning", "note")


def _physical(path: str, line: int | None) -> dict[str, Any]:
    uri, relative = _uri(path)
    physical: dict[str, Any] = {"artifactLocation": {"uri": uri, **({"uriBaseId": "%SRCROOT%"} if relative else {})}}
    if line:
        physical["region"] = {"startLine": line}
    return physical


def _loop_results(report: Report) -> list[dict[str, Any]]:
    """A note per scenario with possible loops, whatever its verdict (a scenario whose
    checks pass can still have looped), at the scenario's line."""
    from behavegate.report.loops import loops_line

    found = []
    for result in report.results:
        loops = report.derived.loops_of(result)
        if not loops:
            continue
        location = report.location(result.scenario)
        text = f"Scenario {one_line(result.scenario.id, 200)}: {one_line(loops_line(loops, len(result.attempts)), 1000)}."
        found.append(
            {
                "ruleId": "conversation.possible_loop",
                "level": "note",
                "message": plain_message(text),
                "locations": [{"physicalLocation": _physical(location.file, location.line)}],
                "partialFingerprints": {"behavegate/v1": fingerprint(report.contract_path, result.scenario.id, "possible loop")},
                "properties": {
                    "scenario": result.scenario.id,
                    "attempts": [loop.attempt for loop in loops],
                    "scenarioStatus": result.status,
                    "contract": report.contract_path,
                },
            }
        )
    return found


def gate_rule(gate: str) -> str:
    """``tag[safety].min_score`` -> ``gates.by_tag.min_score``; ``min_pass_rate[a.yml]`` -> ``gates.min_pass_rate``."""
    name = GateName.parse(gate)
    if name.kind is GateKind.TAG:
        return f"gates.by_tag.{name.key}"
    return "shards" if name.kind is GateKind.SHARDS else "gates." + gate.split("[", 1)[0]


def _gate_results(report: Report) -> list[dict[str, Any]]:
    """A failed (error) or incomplete (warning) gate at the line that asks for it: a
    run a gate fails is never empty in code scanning."""
    found = []
    for gate in report.gates:
        if gate.status == "pass":
            continue
        location = report.gate_location(gate)
        physical = _physical(location.file, location.line)
        word = "failed" if gate.status == "fail" else "incomplete"
        tag = gate.name.subject if gate.name.kind is GateKind.TAG else None
        found.append(
            {
                "ruleId": gate_rule(gate.gate),
                "level": "error" if gate.status == "fail" else "warning",
                "message": plain_message(f"Gate {one_line(gate.gate, 200)} {word}: {one_line(gate.message, 1000)}."),
                "locations": [{"physicalLocation": physical}],
                "partialFingerprints": {"behavegate/v1": fingerprint(report.contract_path, "", "gate " + gate.gate)},
                "properties": {
                    "gate": gate.gate,
                    "contract": report.contract_path,
                    **({"tags": ["security"]} if tag in SECURITY_TAGS else {}),
                },
            }
        )
    return found


def render_reports(reports: Sequence[Report]) -> str:
    """One SARIF run holding every report's findings (one report, or a suite's)."""
    found = [item for report in reports for item in results(report)]
    shown = found[:SARIF_MAX_RESULTS]
    keys = sorted({item["ruleId"] for item in shown} | set(RULES))  # gate rules when a gate is reported
    index = {key: position for position, key in enumerate(keys)}
    for item in shown:
        item["ruleIndex"] = index[item["ruleId"]]
    invocation: dict[str, Any] = {"executionSuccessful": True}
    if len(found) > len(shown):
        invocation["toolExecutionNotifications"] = [
            {
                "level": "note",
                "message": {
                    "text": f"{len(found) - len(shown)} more findings not included (at most {SARIF_MAX_RESULTS}); the JSON report has them all."
                },
            }
        ]
    status = _worst([report.gate_status for report in reports])
    run: dict[str, Any] = {
        "tool": {
            "driver": {
                "name": "behavegate",
                "version": reports[0].version if reports else "",
                "rules": [_rule(key) for key in keys],
            }
        },
        "automationDetails": {"id": "behavegate/"},
        "columnKind": "unicodeCodePoints",
        "invocations": [invocation],
        "results": shown,
        "properties": {
            "status": status,
            "contracts": [report.contract_path for report in reports],
            **({"judged": judged} if (judged := [r.derived.judged for r in reports if r.derived.judged]) else {}),
        },
    }
    return json.dumps({"$schema": SCHEMA, "version": "2.1.0", "runs": [run]}, indent=2, ensure_ascii=False, sort_keys=False)


def _judged(observed: Any) -> dict[str, Any]:
    """A judged finding says so (non-deterministic) and names the judge model."""
    if isinstance(observed, dict) and observed.get("judged") is True:
        return {"judged": True, "deterministic": False, "judgeModel": observed.get("judge_model")}
    return {}


def _worst(statuses: Sequence[str]) -> str:
    for status in ("fail", "incomplete"):
        if status in statuses:
            return status
    return "pass"


def render(report: Report) -> str:
    return render_reports([report])
