"""``behavegate traces inspect FILE...``: read trace files exactly as ``test
--traces`` reads them and show what was understood, without judging anything."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from behavegate.errors import BehavegateError, ExitCode
from behavegate.github.console import Console

if TYPE_CHECKING:
    from behavegate.commands.invocation import TracesCommand


def run(command: TracesCommand, console: Console) -> int:
    from behavegate.commands.test import display_path, error_text
    from behavegate.evidence.traces.load import read_traces, trace_paths
    from behavegate.files import runner_dirs
    from behavegate.render import traces as renderer

    if command.action != "inspect":
        console.err("behavegate traces: name an action: behavegate traces inspect FILE")
        return ExitCode.INCOMPLETE
    root = Path.cwd().resolve()
    try:
        paths = trace_paths(command.files, root, runner_dirs(os.environ))
        found = read_traces(
            paths, fmt=command.trace_format, attribute=command.trace_attribute, shown=lambda p: display_path(p, root)
        )
    except (BehavegateError, OSError) as exc:
        console.err(error_text(exc))
        return ExitCode.INCOMPLETE
    if command.format == "json":
        console.json(renderer.render_json(found))
    else:
        console.out(renderer.render_table(found))
    return ExitCode.PASS
