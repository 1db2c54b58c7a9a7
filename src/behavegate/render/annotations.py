"""``--annotations``: workflow commands that put failures on the contract line.

GitHub shows at most 10 error and 10 warning annotations a step and drops the
rest silently, so failures are ranked (safety-relevant kinds first) and what
does not fit is counted in one final notice. Every property and message is
escaped exactly as the runner unescapes them.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from behavegate.github.console import neutralize
from behavegate.text import one_line

MAX_PER_LEVEL = 10
MAX_MESSAGE = 4_000  # the runner cuts messages at 4,096 characters
# Violations that mean harm come first: a forbidden call beats a missing citation.
SEVERITY = {
    "tool_forbidden": 0,
    "tools_allowed": 1,
    "response_excludes": 2,
    "refusal": 3,
    "tool_required": 4,
    "tool_exact_sequence": 5,
    "tool_max_calls": 6,
    "response_contains": 7,
    "source_required": 8,
}


def escape_data(text: str) -> str:
    """As the runner unescapes (``%``, CR, LF); any other line separator and
    ``##[`` made inert as everywhere else on the console."""
    return neutralize(text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A"))


def escape_property(text: str) -> str:
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def command(name: str, message: str, **properties: Any) -> str:
    props = ",".join(f"{key}={escape_property(str(value))}" for key, value in properties.items() if value is not None)
    return f"::{name}{' ' + props if props else ''}::{escape_data(message)}"


def _short(value: Any) -> str:
    return one_line(json.dumps(value, ensure_ascii=False, sort_keys=True), 400)


def render(report: Mapping[str, Any]) -> str:
    extra = report.get("behavegate", {})
    path = str(extra.get("contract_path", "contract"))
    lines = extra.get("scenarios", {})
    found: dict[str, list[tuple[tuple[int, int, int], str]]] = {"fail": [], "incomplete": []}
    for order, scenario in enumerate(report.get("scenarios", [])):
        info = lines.get(scenario["id"], {})
        for a in scenario["assertions"]:
            if a["status"] not in found:
                continue
            line = info.get("assertion_lines", {}).get(a["assertion"]) or info.get("line")
            message = one_line(
                f"{a['message']} — expected {_short(a.get('expected'))}, observed {_short(a.get('observed'))}", MAX_MESSAGE
            )
            level = "error" if a["status"] == "fail" else "warning"
            title = f"behavegate {a['status']}: {scenario['id']} {a['assertion']}"
            rank = (SEVERITY.get(str(a.get("kind")), 99), order, len(found[a["status"]]))
            found[a["status"]].append((rank, command(level, message, file=path, line=line, title=title)))
    for gate in report.get("gates", []):
        if gate["status"] in found:
            level = "error" if gate["status"] == "fail" else "warning"
            found[gate["status"]].insert(0, ((-1, 0, 0), command(level, one_line(str(gate["message"]), MAX_MESSAGE),
                                                                  file=path, line=1, title=f"behavegate gate {gate['gate']}")))  # fmt: skip
    out: list[str] = []
    left = 0
    for status in ("fail", "incomplete"):
        ranked = [text for _, text in sorted(found[status])]
        out.extend(ranked[:MAX_PER_LEVEL])
        left += max(len(ranked) - MAX_PER_LEVEL, 0)
    if left:
        out.append(command("notice", f"{left} more failing or incomplete assertions are in the job summary and reports",
                           title="behavegate"))  # fmt: skip
    return "\n".join(out)
