"""Small blocks of the JSON view's ``behavegate`` keys (kept out of report/result.py)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # annotations only: see report/result.py
    from behavegate.report.comparison import Comparison


def gate_block(extra: dict[str, Any], baseline: Comparison | None, fail_on: str, gate_status: str) -> None:
    """``--fail-on`` and the baseline comparison, when either was asked for."""
    if baseline is not None or fail_on != "incomplete":
        extra["fail_on"] = fail_on
        extra["gate_status"] = gate_status
        extra["baseline"] = None if baseline is None else baseline.as_dict()
