"""``--format json``: the report exactly as skylos renders it (indent 2, sorted keys)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from behavegate.report.jsontext import dumps_indented


def render(report: Mapping[str, Any]) -> str:
    return dumps_indented(report)
