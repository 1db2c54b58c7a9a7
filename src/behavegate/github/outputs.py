"""Everything a run hands to CI besides the console: the JSON report, JUnit,
the job summary (``$GITHUB_STEP_SUMMARY``), annotations (through the console
boundary) and step outputs (``$GITHUB_OUTPUT``), all rendered from the one Report."""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from behavegate.errors import Problem
from behavegate.github.console import Console
from behavegate.report.result import Report


def _token() -> str:
    """A random hex token (os.urandom: the same source ``secrets`` uses, without its import cost)."""
    return os.urandom(16).hex()


def output_block(values: Mapping[str, str]) -> str:
    """``$GITHUB_OUTPUT`` text: ``name=value`` lines, heredocs for multi-line values
    with a random delimiter that appears nowhere in the value."""
    parts = []
    for name, value in values.items():
        if "\n" not in value and "\r" not in value:
            parts.append(f"{name}={value}\n")
            continue
        delimiter = f"ghadelimiter_{_token()}"
        while delimiter in value:
            delimiter = f"ghadelimiter_{_token()}"
        parts.append(f"{name}<<{delimiter}\n{value}\n{delimiter}\n")
    return "".join(parts)


def append_file(path: str | Path, text: str) -> None:
    with open(path, "a", encoding="utf-8", newline="") as handle:
        handle.write(text)


def write_plain(path: str, text: str) -> None:
    with open(path, "w", encoding="utf-8", newline="") as handle:
        handle.write(text if text.endswith("\n") else text + "\n")


def deliver_ci(args: Any, report: Report, written: dict[str, str], console: Console) -> None:
    """JUnit, summary, annotations and step outputs of a judged run, each when asked for."""
    if args.report:
        from behavegate.render import json as json_renderer

        write_plain(args.report, json_renderer.render(report))
        written["report"] = args.report
    if args.junit:
        from behavegate.render import junit

        write_plain(args.junit, junit.render(report))
        written["junit"] = args.junit
    if args.summary:
        from behavegate.render import summary

        write_plain(args.summary, summary.render(report))
        written["summary"] = args.summary
    if args.annotations:
        from behavegate.render import annotations

        console.commands(annotations.render(report).split("\n"))
    if args.github_output:
        counts = report.scenario_counts()
        values = {
            "status": report.status,
            "passed": str(counts["pass"]),
            "failed": str(counts["fail"]),
            "incomplete": str(counts["incomplete"]),
            "report": written.get("report", ""),
            "junit": written.get("junit", ""),
            "summary": written.get("summary", ""),
            "run-dir": report.run_dir or "",
        }
        append_file(args.github_output, output_block(values))


def deliver_ci_error(
    args: Any, payload: dict[str, Any], contract_path: str, problems: Sequence[Problem], console: Console
) -> None:
    """A run that could not be judged: the error report, the summary, an annotation
    on each contract line at fault, and status=incomplete."""
    from behavegate.render.annotations import command
    from behavegate.render.summary import code

    message = str(payload["error"])
    try:
        if args.report:
            write_plain(args.report, json.dumps(payload, indent=2, sort_keys=True))
        if args.summary:
            write_plain(args.summary, f"## ⚠️ behavegate: the run could not be judged\n\n{code(message, limit=2000)}\n")
        if args.annotations:
            lines = [
                command("error", p.located(), file=contract_path, line=p.line, title="behavegate: invalid contract")
                for p in problems
            ]
            console.commands(lines or [command("error", message, title="behavegate: run incomplete")])
        if args.github_output:
            values = {"status": "incomplete", "passed": "0", "failed": "0", "incomplete": "0", "report": args.report or "",
                      "junit": "", "summary": args.summary or "", "run-dir": ""}  # fmt: skip
            append_file(args.github_output, output_block(values))
    except OSError:
        pass  # the error itself has been reported already
