"""``behavegate traces inspect FILE...``: read trace files exactly as ``test
--traces`` reads them and show what was understood, without judging anything."""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from behavegate.errors import BehavegateError, ExitCode
from behavegate.github.console import Console


def run(args: argparse.Namespace, console: Console) -> int:
    from behavegate.commands.test import display_path, error_text
    from behavegate.evidence.traces.load import read_traces, trace_paths
    from behavegate.files import runner_dirs
    from behavegate.render import traces as renderer

    if args.traces_command != "inspect":
        console.err("behavegate traces: name an action: behavegate traces inspect FILE")
        return ExitCode.INCOMPLETE
    root = Path.cwd().resolve()
    try:
        paths = trace_paths(args.files, root, runner_dirs(os.environ))
        found = read_traces(paths, fmt=args.trace_format, attribute=args.trace_attribute, shown=lambda p: display_path(p, root))
    except (BehavegateError, OSError) as exc:
        console.err(error_text(exc))
        return ExitCode.INCOMPLETE
    if args.format == "json":
        console.json(renderer.render_json(found))
    else:
        console.out(renderer.render_table(found))
    return ExitCode.PASS
