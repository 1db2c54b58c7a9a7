"""Reading a run directory's four files for ``behavegate replay``: each a regular file
(never through a link), within the size its run's declared counts allow, strict JSON
with no more values than a canonical file of its length holds. Each file that cannot
be used is an ``Issue``; replay.py checks what is read."""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Any

from behavegate.evidence.chat import EndpointError, strict_json
from behavegate.frozen import Frozen
from behavegate.report.artifacts import CEILING, max_values, run_limits
from behavegate.report.layout import EVENTS, RESULTS, STATE, SUMMARY


class Issue(Frozen):
    code: str
    message: str

    def as_dict(self) -> dict[str, str]:
        return {"code": self.code, "message": self.message}


class Invalid(Exception):
    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.issue = Issue(code, message)


def read_run(run_dir: Path) -> tuple[dict[str, str], list[Issue]]:
    """The four files' text, and an issue for each that cannot be used.

    summary.json is read first, within the ceiling of any run; the counts it
    declares set the other files' limits (see ``artifacts.RunLimits``).
    """
    texts: dict[str, str] = {}
    issues: list[Issue] = []
    summary_text = _read_one(run_dir, SUMMARY, CEILING.max_bytes(SUMMARY), issues)
    report_text = _read_one(run_dir, RESULTS, CEILING.max_bytes(RESULTS), issues)
    summary: Any = None
    if summary_text is not None:
        try:
            summary = parse(SUMMARY, summary_text)
        except Invalid as invalid:
            issues.append(invalid.issue)
    limits = run_limits(summary, len(report_text.encode("utf-8")) if report_text is not None else 0)
    for name, text in ((SUMMARY, summary_text), (RESULTS, report_text)):
        if text is not None and len(text.encode("utf-8")) > limits.max_bytes(name):
            issues.append(Issue("artifact_too_large", f"{name} exceeds {limits.max_bytes(name)} bytes"))
        elif text is not None:
            texts[name] = text
    for name in (EVENTS, STATE):
        text = _read_one(run_dir, name, limits.max_bytes(name), issues)
        if text is not None:
            texts[name] = text
    return {name: texts[name] for name in (EVENTS, STATE, SUMMARY, RESULTS) if name in texts}, issues


def _read_one(run_dir: Path, name: str, limit: int, issues: list[Issue]) -> str | None:
    path = run_dir / name
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        issues.append(Issue("artifact_missing", f"{name} is missing"))
        return None
    except OSError as exc:
        issues.append(Issue("artifact_unreadable", f"{name} cannot be read: {exc.strerror}"))
        return None
    if stat.S_ISLNK(info.st_mode) or not stat.S_ISREG(info.st_mode):
        issues.append(Issue("artifact_not_regular", f"{name} is not a regular file"))
        return None
    if info.st_size > limit:
        issues.append(Issue("artifact_too_large", f"{name} exceeds {limit} bytes"))
        return None
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
        with os.fdopen(fd, "rb") as handle:
            data = handle.read(limit + 1)
        if len(data) > limit:  # grew after lstat
            issues.append(Issue("artifact_too_large", f"{name} exceeds {limit} bytes"))
            return None
        return data.decode("utf-8")
    except (OSError, UnicodeError) as exc:
        issues.append(Issue("artifact_unreadable", f"{name} cannot be read as UTF-8: {exc}"))
        return None


def parse(name: str, text: str, kind: str | None = None) -> Any:
    """Strict JSON with no more values than a canonical file of its length holds."""
    limit = max_values(kind or name, text)
    try:
        return strict_json(text, max_values=limit)
    except (EndpointError, ValueError, RecursionError) as exc:
        raise Invalid("artifact_invalid_json", f"{name} is not valid JSON: {_why(exc)}") from None


def _why(exc: Exception) -> str:
    return str(exc).replace("agent endpoint response", "document")
