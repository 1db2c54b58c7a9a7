"""``behavegate replay``: check a run directory's evidence against itself."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from behavegate.errors import ExitCode
from behavegate.github.console import Console

if TYPE_CHECKING:
    from behavegate.commands.invocation import ReplayCommand


def run(command: ReplayCommand, console: Console) -> int:
    from behavegate.report.replay import render, validate_run

    run_dir = Path(command.run_dir)
    if not run_dir.is_dir() or run_dir.is_symlink():
        console.err(f"behavegate replay: {command.run_dir} is not a run directory")
        return ExitCode.INCOMPLETE
    issues = validate_run(run_dir)
    output = render(run_dir, issues, command.format)
    if command.format == "json":
        console.json(output)
    else:
        console.out(output)
    return ExitCode.FAIL if issues else ExitCode.PASS
