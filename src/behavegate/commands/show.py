"""``behavegate show RUN_DIR [SCENARIO]``: what the agent said and called in a run.

The run directory is checked as ``replay`` checks it (regular files within their
limits, canonical, sealed) before anything in it is shown: what is shown is
what the run recorded, never a hand-edited copy.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from behavegate.errors import ExitCode
from behavegate.github.console import Console
from behavegate.text import one_line

if TYPE_CHECKING:
    from behavegate.commands.invocation import ShowCommand

MAX_LISTED = 20


def run(command: ShowCommand, console: Console) -> int:
    from behavegate.render.show import render_json, render_table, view
    from behavegate.report.replay import checked_run

    run_dir = Path(command.run_dir)
    if command.max_chars < 1:
        console.err("behavegate show: --max-chars must be at least 1")
        return ExitCode.INCOMPLETE
    if run_dir.is_symlink() or not run_dir.is_dir():
        console.err(f"behavegate show: not found or not a run directory: {one_line(command.run_dir)}")
        return ExitCode.INCOMPLETE
    report, issues = checked_run(run_dir)
    if report is None:
        console.err(f"behavegate show: {one_line(command.run_dir)} is not a valid run directory ({len(issues)} issue(s)):")
        console.err("\n".join(f"  {issue.code}: {one_line(issue.message)}" for issue in issues[:MAX_LISTED]))
        console.err(f"behavegate show: `behavegate replay {one_line(command.run_dir)}` checks it")
        return ExitCode.INCOMPLETE
    ids = [str(s["id"]) for s in report["scenarios"]]
    if command.scenario is not None and command.scenario not in ids:
        listed = ", ".join(ids[:MAX_LISTED]) + (f" (+{len(ids) - MAX_LISTED} more)" if len(ids) > MAX_LISTED else "")
        console.err(f"behavegate show: no scenario {one_line(command.scenario)!r} in this run; its scenarios: {listed}")
        return ExitCode.INCOMPLETE
    document = view(report, str(command.run_dir), [command.scenario] if command.scenario is not None else ids)
    if command.format == "json":
        console.json(render_json(document))
    else:
        console.out(render_table(document, command.max_chars))
    return ExitCode.PASS
