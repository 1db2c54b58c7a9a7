"""What the agent said or called, shown beside a failed assertion.

A failed response check shows a short escaped excerpt of the response (around
the forbidden text or match when there is one); a failed tool check shows the
tools called. Derived at render time from the attempt's (redacted)
observation, so the verdict's ``observed`` values stay skylos's byte for byte.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from behavegate.model import TOOL_SIDE, TOOL_SOURCE_MCP
from behavegate.text import one_line

EXCERPT_CHARS = 120
MAX_NAMES = 12
MAX_SENT = 3  # calls whose arguments are shown beside a required call's expected ones
ARGUMENT_CHARS = 200
RESPONSE_KINDS = frozenset(
    {
        "response_contains",
        "response_excludes",
        "response_icontains",
        "response_matches",
        "response_not_matches",
        "refusal",
        "response_uses_tool_result",
        "response_judge",
    }
)


def excerpt(text: str, around: int | None = None, limit: int = EXCERPT_CHARS) -> str:
    """At most ``limit`` characters of ``text`` (starting a little before ``around``),
    quoted, on one line with control characters visible and ``…`` where it was cut."""
    start = 0 if around is None else max(0, min(around - limit // 3, len(text) - limit))
    piece = text[start : start + limit]
    head = "…" if start > 0 else ""
    tail = "…" if start + limit < len(text) else ""
    return f'"{head}{one_line(piece, 4 * limit)}{tail}"'


def called(calls: Any) -> str:
    """The names of the tools called, in order: ``lookup_order, issue_refund`` (or ``no tool``)."""
    names = [str(call.get("name")) for call in calls if isinstance(call, Mapping)] if isinstance(calls, list) else []
    if not names:
        return "no tool"
    more = f" (+{len(names) - MAX_NAMES} more)" if len(names) > MAX_NAMES else ""
    return one_line(", ".join(names[:MAX_NAMES]), 1000) + more


def sent_arguments(kind: str, expected: Any, calls: Any) -> str:
    """``; sent lookup_order {"order_id": "B-2"}``: the arguments of the calls a required
    call with expected arguments was compared with, so a mismatch shows both sides."""
    if kind != "tool_required" or not isinstance(expected, Mapping) or expected.get("arguments") is None:
        return ""
    name = expected.get("name")
    same = [call for call in calls if isinstance(call, Mapping) and call.get("name") == name] if isinstance(calls, list) else []
    if not same:
        return ""
    shown = [f"{one_line(str(name), 64)} {_arguments(call.get('arguments'))}" for call in same[:MAX_SENT]]
    more = f" (+{len(same) - MAX_SENT} more)" if len(same) > MAX_SENT else ""
    return "; sent " + ", ".join(shown) + more


def _arguments(value: Any) -> str:
    if value is None:
        return "(arguments not observed)"
    return one_line(json.dumps(value, ensure_ascii=False, sort_keys=True), ARGUMENT_CHARS)


def evidence_note(kind: str, expected: Any, observed: Any, observation: Mapping[str, Any] | None) -> str | None:
    """``response: "…"`` or ``called: a, b`` for a failed assertion of ``kind``,
    from an observation in the report's shape; None when nothing more is known."""
    if observation is None:
        return None
    if kind in RESPONSE_KINDS:
        text = observation.get("response")
        if not isinstance(text, str):
            return None
        around: int | None = None
        if kind == "response_excludes" and isinstance(expected, str) and expected in text:
            around = text.index(expected)
        elif kind == "response_not_matches" and isinstance(observed, Mapping) and isinstance(observed.get("match_at"), int):
            around = observed["match_at"]
        return f"response: {excerpt(text, around)} ({len(text)} characters)"
    if kind.startswith("tool") and observation.get("tool_calls") is not None:
        side = f" ({TOOL_SIDE})" if observation.get("tool_source") == TOOL_SOURCE_MCP else ""
        return f"called{side}: {called(observation['tool_calls'])}{sent_arguments(kind, expected, observation['tool_calls'])}"
    if kind == "source_required" and isinstance(observation.get("sources"), list):
        sources = observation["sources"]
        return f"cited: {one_line(', '.join(map(str, sources)), 300) if sources else 'no source'}"
    return None
