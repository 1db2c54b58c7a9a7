"""``behavegate replay``: check a run directory's evidence against itself."""

from __future__ import annotations

import argparse
from pathlib import Path

from behavegate.errors import ExitCode
from behavegate.github.console import Console


def run(args: argparse.Namespace, console: Console) -> int:
    from behavegate.report.replay import render, validate_run

    run_dir = Path(args.run_dir)
    if not run_dir.is_dir() or run_dir.is_symlink():
        console.err(f"behavegate replay: {args.run_dir} is not a run directory")
        return ExitCode.INCOMPLETE
    issues = validate_run(run_dir)
    output = render(run_dir, issues, args.format)
    if args.format == "json":
        console.json(output)
    else:
        console.out(output)
    return ExitCode.FAIL if issues else ExitCode.PASS
