"""``--format json``: the report exactly as skylos renders it (indent 2, sorted keys)."""

from __future__ import annotations

from behavegate.report.result import Report


def render(report: Report) -> str:
    return report.json_text()
