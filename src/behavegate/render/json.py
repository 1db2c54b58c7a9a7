"""``--format json``: the report exactly as skylos renders it (indent 2, sorted keys)."""

from __future__ import annotations

from behavegate import indented_json
from behavegate.report.result import Report


def render(report: Report) -> str:
    return indented_json.dumps(report.to_json(), sort_keys=True)
