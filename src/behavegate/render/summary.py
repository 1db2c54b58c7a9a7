"""``--summary``: the Markdown job summary.

Untrusted text (agent output, tool arguments, fixture errors) only ever
appears inside code spans, one line, cut to a few hundred characters: no HTML,
no images, no links can form. The whole summary stays under GitHub's 1 MiB
step-summary limit whatever the suite size; what is left out is counted.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from jinja2 import Environment, PackageLoader, StrictUndefined

from behavegate.text import one_line

LIMIT_BYTES = 1_000_000  # GitHub refuses step summaries over 1 MiB (1,048,576 bytes)
ITEM_CHARS = 300
ICONS = {"pass": "✅", "fail": "❌", "incomplete": "⚠️"}
_BACKTICKS = re.compile(r"`+")


def code(value: Any, table: bool = False, limit: int = ITEM_CHARS) -> str:
    """A code span that shows ``value`` literally, whatever it contains."""
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, sort_keys=True)
    text = one_line(text, limit)
    if table:
        text = text.replace("|", "\\|")
    fence = "`" * (max((len(run) for run in _BACKTICKS.findall(text)), default=0) + 1)
    if text.startswith("`") or text.endswith("`") or not text.strip():
        text = f" {text} "
    return f"{fence}{text}{fence}"


def _environment() -> Environment:
    env = Environment(
        loader=PackageLoader("behavegate.render", "templates"),
        autoescape=False,  # Markdown, not HTML: every untrusted value goes through code()
        undefined=StrictUndefined,
        keep_trailing_newline=True,
        trim_blocks=False,
    )
    env.globals.update(code=code, icon=lambda status: ICONS.get(str(status), "❔"))
    return env


def render(report: Mapping[str, Any], limit: int = LIMIT_BYTES) -> str:
    env = _environment()
    extra = report.get("behavegate", {})
    lines = extra.get("scenarios", {})
    row_template = env.get_template("summary_row.md.j2")
    detail_template = env.get_template("summary_detail.md.j2")
    scenarios = report.get("scenarios", [])
    repeated = any("reliability" in s for s in scenarios)
    from behavegate.render.table import pass_rate

    # Budget: header and notes first, then rows, then details, until the limit.
    budget = limit - 4_000
    rows: list[str] = []
    for scenario in scenarios:
        counts = {s: sum(a["status"] == s for a in scenario["assertions"]) for s in ("pass", "fail", "incomplete")}
        row = row_template.render(
            id=scenario["id"], status=scenario["status"], passed=counts["pass"], failed=counts["fail"],
            incomplete=counts["incomplete"], line=lines.get(scenario["id"], {}).get("line"), repeated=repeated,
            rate=pass_rate(scenario["reliability"]) if scenario.get("reliability") else "",
        ).rstrip("\n")  # fmt: skip
        cost = len(row.encode()) + 1
        if cost > budget:
            break
        budget -= cost
        rows.append(row)
    details: list[str] = []
    troubled = [s for s in scenarios if s["status"] != "pass"]
    troubled.sort(key=lambda s: 0 if s["status"] == "fail" else 1)
    for scenario in troubled:
        at = lines.get(scenario["id"], {}).get("assertion_lines", {})
        shown = [dict(a, line=at.get(a["assertion"])) for a in scenario["assertions"] if a["status"] != "pass"]
        detail = detail_template.render(
            id=scenario["id"], status=scenario["status"], line=lines.get(scenario["id"], {}).get("line"), assertions=shown
        )
        cost = len(detail.encode()) + 1
        if cost > budget:
            break
        budget -= cost
        details.append(detail)
    return env.get_template("summary.md.j2").render(
        report=report,
        summary=report.get("summary", {}),
        contract_path=extra.get("contract_path", "contract"),
        skipped=len(extra.get("skipped", [])),
        rows=rows,
        rows_cut=len(scenarios) - len(rows),
        details=details,
        details_cut=len(troubled) - len(details),
        repeated=repeated,
        gates=report.get("gates", []),
        latency=extra.get("latency_ms"),
    )
