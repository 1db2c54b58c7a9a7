"""``--format json``: the report exactly as skylos renders it (indent 2, sorted keys)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any


def render(report: Mapping[str, Any]) -> str:
    return json.dumps(report, indent=2, sort_keys=True)
