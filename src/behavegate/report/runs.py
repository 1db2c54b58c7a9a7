"""The stored runs of a project (``.behavegate/runs/<run-id>/``), listed for ``behavegate view``.

Each run directory is read and checked as ``replay`` checks it (``checked_run``: regular
files within their limits, canonical, sealed, verdicts re-judged), so what the viewer shows
is what the run recorded. A directory that cannot be used is listed as unreadable with the
first reason, never raised. Run ids are the directory names found here: a page names a run
only by one of them, so no path is ever built from what a request says.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from behavegate.frozen import Frozen
from behavegate.limits import VIEW_RUNS_LISTED
from behavegate.report.layout import EVENTS, RESULTS, STATE, SUMMARY

STATUSES = ("pass", "fail", "incomplete")


class RunEntry(Frozen):
    """One run directory as the list shows it; ``problem`` set: it could not be used."""

    id: str
    status: str  # pass, fail, incomplete, or "unreadable"
    started_at: str | None = None
    contract: str | None = None
    mode: str | None = None
    scenarios: Mapping[str, int] | None = None  # per status
    checks: Mapping[str, int] | None = None  # assertions per status, over attempts
    problem: str | None = None

    @property
    def readable(self) -> bool:
        return self.problem is None


class RunListing(Frozen):
    entries: tuple[RunEntry, ...]
    not_listed: int = 0  # older run directories past VIEW_RUNS_LISTED
    problem: str | None = None  # the runs folder itself could not be read

    def entry(self, run_id: str) -> RunEntry | None:
        """The listed run named exactly ``run_id``; None for anything else (``../x`` included)."""
        return next((entry for entry in self.entries if entry.id == run_id), None)


def entry_of(run_id: str, report: Mapping[str, Any] | None, problem: str | None) -> RunEntry:
    """A run's row, from its checked report (or why it has none)."""
    if report is None:
        return RunEntry(id=run_id, status="unreadable", problem=problem or "not a valid run directory")
    ours = report.get("behavegate") or {}
    summary = report["summary"]
    return RunEntry(
        id=run_id,
        status=str(report["status"]),
        started_at=str(report["harness"].get("started_at") or "") or None,
        contract=str(ours.get("contract_path") or report["contract"]["path"]),
        mode=str(report.get("mode") or ""),
        scenarios={status: int(summary.get(f"{_past(status)}_scenarios", 0)) for status in STATUSES},
        checks={status: int(summary.get(f"{_past(status)}_assertions", 0)) for status in STATUSES},
    )


def _newest_first(entry: RunEntry) -> tuple[str, str]:
    """A run id begins with the second it started; runs started within one second are
    told apart by their recorded start time (the id's random tail would order them at random)."""
    return entry.id[:16], entry.started_at or ""


def _past(status: str) -> str:
    return {"pass": "passed", "fail": "failed"}.get(status, status)


def signature(run_dir: Path) -> tuple[tuple[int, int], ...] | None:
    """The four files' (mtime, size): a run re-checked only when one changed; None if one is missing."""
    try:
        stats = [os.stat(run_dir / name, follow_symlinks=False) for name in (EVENTS, STATE, SUMMARY, RESULTS)]
    except OSError:
        return None
    return tuple((s.st_mtime_ns, s.st_size) for s in stats)


class RunReader:
    """Reads a runs folder, checking each run once while its files stay unchanged (the I/O edge)."""

    def __init__(self, runs_dir: Path) -> None:
        self.runs_dir = runs_dir
        self._checked: dict[str, tuple[Any, RunEntry, Mapping[str, Any] | None]] = {}

    def listing(self) -> RunListing:
        try:
            if self.runs_dir.is_symlink():
                return RunListing((), problem="the runs folder is a link (not followed)")
            with os.scandir(self.runs_dir) as found:
                names = sorted((e.name for e in found if e.is_dir(follow_symlinks=False) or e.is_symlink()), reverse=True)
        except OSError as exc:
            return RunListing((), problem=f"cannot read the runs folder: {exc.strerror or type(exc).__name__}")
        shown = names[:VIEW_RUNS_LISTED]  # the newest: an id begins with the second its run started
        entries = sorted((self._entry(name) for name in shown), key=_newest_first, reverse=True)
        return RunListing(tuple(entries), not_listed=len(names) - len(shown))

    def report(self, run_id: str) -> Mapping[str, Any] | None:
        """The checked report of a listed, readable run (call after ``listing``)."""
        held = self._checked.get(run_id)
        return None if held is None else held[2]

    def _entry(self, name: str) -> RunEntry:
        from behavegate.report.replay import checked_run

        run_dir = self.runs_dir / name
        if run_dir.is_symlink():
            return entry_of(name, None, "a link, not followed")
        stamp = signature(run_dir)
        held = self._checked.get(name)
        if held is not None and stamp is not None and held[0] == stamp:
            return held[1]
        problem: str | None
        try:
            report, issues = checked_run(run_dir)
        except (OSError, ValueError, RecursionError, MemoryError) as exc:  # whatever the folder holds: a row, not a traceback
            report, problem = None, f"cannot be read: {type(exc).__name__}"
        else:
            problem = None if report is not None else (f"{issues[0].code}: {issues[0].message}" if issues else None)
        entry = entry_of(name, report, problem)
        self._checked[name] = (stamp, entry, report)
        return entry
