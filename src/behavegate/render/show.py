"""``behavegate show``: what the agent said and called in a stored run, per
scenario and attempt, beside the verdicts.

Input is a run's ``behavior-results.json`` that ``replay`` has validated (see
``report.replay.checked_run``). Every text the agent wrote is untrusted: in the
table it is cut to a limit with a marker, its control characters are shown as
escapes (``text.visible``/``one_line``), and the console neutralises the rest.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from behavegate import indented_json
from behavegate.model import TOOL_SIDE, TOOL_SOURCE_MCP
from behavegate.text import one_line, visible

DEFAULT_MAX_CHARS = 2000
MARKS = {"pass": "PASS", "fail": "FAIL", "incomplete": "INCOMPLETE"}


def attempts(scenario: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Every attempt of a scenario; a version-1 scenario is its one attempt."""
    if isinstance(scenario.get("attempts"), list):
        return [dict(attempt) for attempt in scenario["attempts"]]
    return [
        {"attempt": 1, "status": scenario["status"], "assertions": scenario["assertions"], "observation": scenario["observation"]}
    ]


def view(report: Mapping[str, Any], run_dir: str, scenario_ids: list[str]) -> dict[str, Any]:
    """The JSON document ``--format json`` prints: the run, and the chosen
    scenarios' attempts with their observations and assertions, untrimmed."""
    extra = report.get("behavegate", {})
    where = extra.get("scenarios", {})
    return {
        "run_dir": run_dir,
        "run_id": report["harness"]["run_id"],
        "status": report["status"],
        "mode": report["mode"],
        "trust": report["provenance"].get("trust"),
        "contract": {"path": extra.get("contract_path", report["contract"]["path"]), "version": report["contract"]["version"]},
        "scenarios": [
            {
                "id": s["id"],
                "status": s["status"],
                "file": where.get(s["id"], {}).get("file", extra.get("contract_path")),
                "line": where.get(s["id"], {}).get("line"),
                "assertion_lines": where.get(s["id"], {}).get("assertion_lines", {}),
                "reliability": s.get("reliability"),
                "attempts": attempts(s),
            }
            for s in report["scenarios"]
            if s["id"] in scenario_ids
        ],
    }


def render_json(document: Mapping[str, Any]) -> str:
    return indented_json.dumps(document, sort_keys=True, ensure_ascii=False)


def render_table(document: Mapping[str, Any], max_chars: int = DEFAULT_MAX_CHARS) -> str:
    contract = document["contract"]
    out = [
        f"Run {one_line(document['run_dir'])}: {document['status']} ({document['mode']}, evidence {document['trust']})",
        f"Contract: {one_line(str(contract['path']))} (version {contract['version']})",
    ]
    for scenario in document["scenarios"]:
        where = f" [{one_line(str(scenario['file']))}:{scenario['line']}]" if scenario.get("line") else ""
        rate = scenario.get("reliability")
        rate_text = f" ({rate['passed']}/{rate['runs']} attempts passed)" if rate else ""
        out += ["", f"{one_line(scenario['id'])}: {scenario['status']}{where}{rate_text}"]
        many = len(scenario["attempts"]) > 1
        for attempt in scenario["attempts"]:
            indent = "    " if many else "  "
            if many:
                out.append(f"  attempt {attempt['attempt']}: {attempt['status']}")
            out += [indent + line for line in _observation(attempt["observation"], max_chars)]
            for a in attempt["assertions"]:
                line = scenario.get("assertion_lines", {}).get(a["assertion"])
                at = f" [line {line}]" if line else ""
                out.append(f"{indent}{MARKS.get(a['status'], '?')} {one_line(a['assertion'])}{at}: {one_line(a['message'])}")
                if a["status"] != "pass":
                    expected, observed = _json(a["expected"], 200), _json(a["observed"], 200)
                    out.append(f"{indent}     expected {expected}, observed {observed}")
    return "\n".join(out)


def _observation(obs: Mapping[str, Any] | None, max_chars: int) -> list[str]:
    if obs is None:
        return ["observation: none (this scenario was not observed)"]
    lines: list[str] = []
    if obs.get("error") is not None:
        lines.append(f"error: {one_line(str(obs['error']), max_chars)}")
    lines += _response(obs.get("response"), max_chars)
    completion = (
        f"response complete: {_flag(obs.get('response_complete'))}, tool calls complete: {_flag(obs.get('tool_calls_complete'))}"
    )
    lines.append(f"finish_reason: {_text(obs.get('finish_reason'))} ({completion})")
    calls = obs.get("tool_calls")
    errors = obs.get("tool_errors") or []
    trace = obs.get("trace") if isinstance(obs.get("trace"), Mapping) else None
    details = trace.get("calls") or [] if trace else []
    if trace:
        lines.append(f"trace: {one_line(str(trace.get('trace_id')))}")
    if calls is None:
        lines.append("tool calls: not observed")
    else:
        side = f" ({TOOL_SIDE})" if obs.get("tool_source") == TOOL_SOURCE_MCP else ""
        lines.append(f"tool calls: {len(calls)}{side}")
        for index, call in enumerate(calls):
            arguments = "(arguments not observed)" if call.get("arguments") is None else _json(call["arguments"], max_chars)
            detail = details[index] if index < len(details) and isinstance(details[index], Mapping) else {}
            marks = "".join(
                [
                    f" [{one_line(str(detail['call_id']))}]" if detail.get("call_id") else "",
                    " (requested by the model, not executed)" if detail.get("executed") is False else "",
                ]
            )
            lines.append(f"  {index + 1}. {one_line(str(call.get('name')))}{marks} {arguments}")
            if index < len(errors) and errors[index] is not None:
                lines.append(f"     tool error: {one_line(str(errors[index]), max_chars)}")
    lines.append(f"refusal: {_flag(obs.get('refusal'))}")
    sources = obs.get("sources")
    lines.append("sources: not observed" if sources is None else f"sources: {_json(sources, max_chars)}")
    measured = [f"{key} {obs[key]}" for key in ("latency_ms", "total_tokens", "steps") if obs.get(key) is not None]
    spent, got = obs.get("input_tokens"), obs.get("output_tokens")
    if obs.get("total_tokens") is None and isinstance(spent, int) and isinstance(got, int):  # cost.attempt_tokens's rule
        measured.insert(len(measured) - (obs.get("steps") is not None), f"total_tokens {spent + got} (input + output)")
    if measured:
        lines.append("measured: " + ", ".join(measured))
    return lines + _conversation(obs, max_chars)


def _conversation(obs: Mapping[str, Any], max_chars: int) -> list[str]:
    """A conversation turn by turn (scripted user turns), and a call budget that stopped it."""
    went = obs.get("conversation") if isinstance(obs.get("conversation"), Mapping) else None
    if went is None:
        return []
    lines: list[str] = []
    stop = went.get("tool_budget_exceeded")
    if isinstance(stop, Mapping):
        lines.append(
            f"stopped: tool budget exceeded ({one_line(str(stop.get('key')))}: {stop.get('observed')} calls "
            f"of at most {stop.get('limit')}, at turn {stop.get('turn')}); no further request was sent"
        )
    simulator = went.get("simulator")
    if isinstance(simulator, Mapping):
        lines.append(
            f"simulated user: model {one_line(str(simulator.get('model')))!r}, ended: {one_line(str(simulator.get('ended')), 300)} "
            "(non-deterministic; a replay reuses its recorded messages)"
        )
    turns = went.get("user_turns") or []
    if not turns:
        return lines
    calls, results = obs.get("tool_calls") or [], went.get("results") or []
    answered = {r.get("call"): r for r in results if isinstance(r, Mapping)}
    lines.append(
        f"conversation: {len(turns)} user turns, {went.get('turns')} model requests of max_turns {went.get('max_turns')}"
    )
    for number, turn in enumerate(turns):
        requests = turn.get("model_turns")
        lines.append(f"  turn {number} ({requests} model request{'s' if requests != 1 else ''}):")
        who = "user (simulated by an LLM: non-deterministic)" if turn.get("simulated") else "user"
        lines += _said(who, turn.get("user"), max_chars)
        first, end = (turn.get("calls") or [0, 0])[:2]
        for index in range(first, min(end, len(calls))):
            call = calls[index]
            arguments = "(arguments not observed)" if call.get("arguments") is None else _json(call["arguments"], max_chars)
            lines.append(f"    call {index + 1}. {one_line(str(call.get('name')))} {arguments}")
            result = answered.get(index)
            if result is not None:
                said = f"error {_json(result['error'], 200)}" if "error" in result else _json(result.get("content"), 200)
                lines.append(f"         -> {said}")
        lines += _said("agent", turn.get("response"), max_chars)
        lines.append(f"    finish_reason: {_text(turn.get('finish_reason'))}")
    return lines


def _said(who: str, text: Any, max_chars: int) -> list[str]:
    """One side of a user turn: its text cut to the limit, each line marked (untrusted text)."""
    if not isinstance(text, str):
        return [f"    {who}: not observed"]
    shown = text[:max_chars]
    lines = [f"    {who}:"] + [f"      | {visible(line)}" for line in shown.replace("\r\n", "\n").split("\n")]
    if len(shown) < len(text):
        lines.append(f"      … cut: {len(shown):,} of {len(text):,} characters shown (--max-chars)")
    return lines


def _response(text: Any, max_chars: int) -> list[str]:
    if not isinstance(text, str):
        return ["response: not observed"]
    shown = text[:max_chars]
    lines = [f"response ({len(text)} characters):"]
    lines += [f"  | {visible(line)}" for line in shown.replace("\r\n", "\n").split("\n")]
    if len(shown) < len(text):
        lines.append(f"  … cut: {len(shown):,} of {len(text):,} characters shown (--max-chars)")
    return lines


def _flag(value: Any) -> str:
    return "not observed" if value is None else str(value).lower()


def _text(value: Any) -> str:
    return "not observed" if value is None else one_line(str(value))


def _json(value: Any, max_chars: int) -> str:
    return one_line(json.dumps(value, ensure_ascii=False, sort_keys=True), max_chars)
