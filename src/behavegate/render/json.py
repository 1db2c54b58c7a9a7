"""``--format json``: the report exactly as skylos renders it (indent 2, sorted keys)."""

from __future__ import annotations

from collections.abc import Iterator

from behavegate.report.result import Report


def render(report: Report) -> str:
    return "".join(report.json_chunks())


def pieces(report: Report) -> Iterator[str]:
    """The same text in pieces: a 10,000-scenario report is ~100 MB, written as it is made."""
    return report.json_chunks()
