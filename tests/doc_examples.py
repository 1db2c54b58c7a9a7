"""The examples of a docs page, by name: ``<!-- example:NAME -->`` before a fenced block."""

from __future__ import annotations

import re
from pathlib import Path

DOCS = Path(__file__).resolve().parents[1] / "docs"
_EXAMPLE = re.compile(r"<!-- example:(?P<name>[a-z0-9-]+) -->\n```\w+\n(?P<body>.*?)```\n", re.S)


def examples(page: str) -> dict[str, str]:
    return {m["name"]: m["body"] for m in _EXAMPLE.finditer((DOCS / page).read_text(encoding="utf-8"))}
