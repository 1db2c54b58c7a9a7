"""``--format json``: the report exactly as skylos renders it (indent 2, sorted keys)."""

from __future__ import annotations

import json

from behavegate.report.result import Report


def render(report: Report) -> str:
    return json.dumps(report.to_json(), indent=2, sort_keys=True)
