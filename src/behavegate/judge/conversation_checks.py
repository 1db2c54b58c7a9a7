"""Checks of a conversation: the answer uses a scripted tool result (grounding, no judge
needed), no identical call twice, and how many model turns it took."""

from __future__ import annotations

import json
import re
from decimal import Decimal, InvalidOperation
from typing import Any

from behavegate import finite_json
from behavegate.contract.v2_conversation import field_steps
from behavegate.conversation import ScriptedResult, ToolField
from behavegate.evidence.scripted import describe_repeats, repeated_calls
from behavegate.judge.evidence import Evidence, checked, incomplete
from behavegate.judge.measure_checks import _measure
from behavegate.judge.tool_checks import _calls
from behavegate.model import Verdict

_MISSING = object()


def field_value(content: Any, path: str) -> Any:
    """The value at ``path`` in a scripted result (a string holding JSON is read as JSON);
    ``_MISSING`` when the path does not lead anywhere."""
    value = content
    if isinstance(value, str):
        try:
            value = finite_json.loads(value)  # a NaN read here would reach the verdict's evidence
        except (ValueError, RecursionError):
            return _MISSING
    for step in field_steps(path):
        if isinstance(value, dict) and isinstance(step, str) and step in value:
            value = value[step]
        elif (
            isinstance(value, list) and (isinstance(step, int) or (step.isascii() and step.isdigit())) and int(step) < len(value)
        ):
            value = value[int(step)]
        else:
            return _MISSING
    return value


def _as_text(value: Any) -> str | None:
    """How a scalar is named in messages; None for objects, lists and null."""
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return json.dumps(value)
    return None


def _empty(value: Any) -> bool:
    return (isinstance(value, str) and not value.strip()) or (isinstance(value, dict | list) and not value)


# A run of digits, dots and commas (one pass, no backtracking: only character classes).
_NUMBER_RUN = re.compile(r"\d[\d.,]*")
_PLAIN = re.compile(r"\d+(?:\.\d+)?")
_GROUPED = re.compile(r"\d{1,3}(?:,\d{3})+(?:\.\d+)?")


def _numbers(text: str) -> set[Decimal]:
    """The whole numbers written in ``text``: a run of digits not joined to a letter, digit or
    underscore on either side, "1,000" read as 1000, "1,2,3" as a list, "1.2.3" as none, a
    minus sign just before it (not after a word: "ORD-7", "5-10") making it negative."""
    found: set[Decimal] = set()
    for match in _NUMBER_RUN.finditer(text):
        start, run = match.start(), match.group().rstrip(".,")
        end = start + len(run)
        before, after = text[start - 1 : start], text[end : end + 1]
        if (before and (before.isalnum() or before in "_.")) or (after and (after.isalnum() or after == "_")):
            continue
        negative = before in ("-", "\u2212") and not (start > 1 and (text[start - 2].isalnum() or text[start - 2] == "_"))
        if _PLAIN.fullmatch(run) or _GROUPED.fullmatch(run):
            pieces = [run.replace(",", "")]
        else:  # a list such as "1,2,3" (a version such as "1.2.3" is no number)
            pieces = [piece for piece in run.split(",") if _PLAIN.fullmatch(piece)] if "," in run else []
        for piece in pieces:
            found.add(-Decimal(piece) if negative else Decimal(piece))
    return found


def appears_in(value: str | bool | int | float, answer: str, numbers: set[Decimal] | None = None) -> bool:
    """Whether ``answer`` says ``value``: a string as written (case-sensitive substring), a
    boolean as the word true or false in any case, a number as a whole number of the same
    value (10.5 as "10.5" or "10.50", 1000 also as "1,000"; 1 is not found in "2021")."""
    if isinstance(value, str):
        return value in answer
    if isinstance(value, bool):
        return re.search(rf"(?<!\w){'true' if value else 'false'}(?!\w)", answer, re.IGNORECASE) is not None
    try:
        wanted = Decimal(json.dumps(value))
    except InvalidOperation:  # not reachable for JSON numbers; kept inert
        return False
    return wanted in (numbers if numbers is not None else _numbers(answer))


def judge_uses_tool_result(assertion: str, spec: tuple[int, ToolField], ev: Evidence) -> Verdict:
    """The final answer contains the field's value from every result returned for the tool
    (distinct values; error results carry none)."""
    wanted = spec[1]
    kind, expected, where = "response_uses_tool_result", wanted.as_dict(), f"{wanted.tool}.{wanted.field}"
    obs = ev.observation
    if ev.response_gap or obs is None or obs.response is None:
        return incomplete(assertion, kind, ev.response_gap or "final response was not observed", expected)
    if obs.conversation is None:
        return incomplete(assertion, kind, "the tool results returned in this attempt were not recorded", expected)
    results: list[ScriptedResult] = [r for r in obs.conversation.results if r.name == wanted.tool]
    if not results:
        return incomplete(assertion, kind, f"tool {wanted.tool!r} was never called, so no result of it can be used", expected)
    answered = [r for r in results if r.error is None]
    if not answered:
        return incomplete(assertion, kind, f"every result returned for {wanted.tool!r} was an error", expected)
    values: list[Any] = []
    for result in answered:
        value = field_value(result.content, wanted.field)
        if value is _MISSING:
            return incomplete(
                assertion,
                kind,
                f"field {wanted.field!r} is missing from the result returned for call {result.call}",
                expected,
                {"call_index": result.call},
            )
        if _empty(value):
            return incomplete(
                assertion, kind, f"the value of {where} is empty: nothing to look for", expected, {"call_index": result.call}
            )
        if _as_text(value) is None:
            return incomplete(
                assertion,
                kind,
                f"{where} is {type(value).__name__ if value is not None else 'null'}, not a value "
                "an answer can contain; point field at a string, number or boolean",
                expected,
                {"call_index": result.call},
            )
        if not any(value == seen and type(value) is type(seen) for seen in values):
            values.append(value)
    numbers = _numbers(obs.response) if any(isinstance(v, int | float) and not isinstance(v, bool) for v in values) else None
    missing = [value for value in values if not appears_in(value, obs.response, numbers)]
    shown = " and ".join(repr(v) if isinstance(v, str) else json.dumps(v) for v in (missing or values))
    return checked(
        assertion,
        kind,
        not missing,
        f"the answer contains {shown} from {where}",
        f"expected the answer to contain {shown} from {where}, observed an answer of {len(obs.response)} characters without it",
        {**expected, "values": values},
        {"missing": missing},
    )


def judge_no_repeat(assertion: str, wanted: bool, ev: Evidence) -> Verdict:
    kind = "tool_no_repeat"
    calls = _calls(assertion, kind, wanted, ev)
    if isinstance(calls, Verdict):
        return calls
    repeats = repeated_calls(calls)
    observed = {
        "call_count": len(calls),
        "repeated": [{"call": call.as_dict(), "call_indices": where} for call, where in repeats[:20]],
    }
    if not repeats and wanted:
        unseen = [c.name for c in calls if c.arguments is None]
        clash = sorted({name for name in unseen if sum(c.name == name for c in calls) > 1})
        if clash:
            return incomplete(
                assertion,
                kind,
                f"arguments of calls to {clash} were not observed, so repeats cannot be ruled out",
                wanted,
                observed,
            )
    return checked(
        assertion,
        kind,
        not repeats or not wanted,
        f"no identical call was made twice ({len(calls)} calls)",
        f"expected no identical tool call twice, observed {describe_repeats(repeats)}",
        wanted,
        observed,
    )


def judge_turns(assertion: str, limit: int, ev: Evidence) -> Verdict:
    conversation = ev.observation.conversation if ev.observation else None
    turns = conversation.turns if conversation else None
    return _measure(assertion, "turns_max", limit, turns, "model turns were not recorded for this attempt", "model turns", ev)
