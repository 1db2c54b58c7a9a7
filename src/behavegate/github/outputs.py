"""Everything a run hands to CI besides the console: the JSON report, JUnit,
the job summary (``$GITHUB_STEP_SUMMARY``), annotations (through the console
boundary) and step outputs (``$GITHUB_OUTPUT``), all rendered from the one Report."""

from __future__ import annotations

import contextlib
import itertools
import json
import os
import posixpath
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from behavegate.errors import BehavegateError, InputError, Problem
from behavegate.github.console import Console
from behavegate.github.views import OutputPaths, Views
from behavegate.report.result import Report
from behavegate.report.suite import SuiteRun


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


def write_output(path: str, text: str | Iterable[str], root: Path, label: str, *, append: bool = False) -> None:
    """Every file a run writes for CI goes through ``files.write_file`` under one
    path rule (docs/cli.md): relative to the project root, inside it or under
    ``$RUNNER_TEMP``/``$GITHUB_WORKSPACE``, or exactly the runner's own files
    (appended), never through a symlink."""
    from behavegate.files import place_output, write_file

    if not isinstance(text, str):  # a JSON document in pieces, ending in "}"
        text = itertools.chain(text, ["\n"])
    elif not append and not text.endswith("\n"):
        text += "\n"
    write_file(place_output(path, root, label, os.environ, root, append=append), text, label)


def usd(cost: float | None) -> str:
    """The ``cost`` output: USD to the millionth of a dollar, as a number a later step can compare."""
    return "" if cost is None else f"{cost:.6f}"


def deliver_ci(views: Views, report: Report, written: dict[str, str], console: Console, root: Path) -> None:
    """JSON report, JUnit, summary, annotations and step outputs of a judged run,
    each when asked for. A file refused by the path rule does not stop the
    others; then the run ends incomplete, naming every refused path."""
    write_files(views.paths, lambda flag: _render_file(flag, report), written, root)
    if views.annotations:
        from behavegate.render import annotations

        console.commands(annotations.render(report).split("\n"), stderr=views.json_on_stdout)
    if views.paths.github_output:
        counts = report.scenario_counts()
        # A shard's report holds part of the evidence: no status or counts to gate on.
        shown = ("", "", "") if report.shard else (str(counts["pass"]), str(counts["fail"]), str(counts["incomplete"]))
        values = {
            "status": "shard" if report.shard else report.status,
            "passed": shown[0],
            "failed": shown[1],
            "incomplete": shown[2],
            "report": written.get("report", ""),
            "junit": written.get("junit", ""),
            "summary": written.get("summary", ""),
            "html": written.get("html", ""),
            "sarif": written.get("sarif", ""),
            "run-dir": report.run_dir or "",
            # --baseline: regressions found (whether or not they gate); empty without a baseline
            "regressions": "" if report.baseline is None else str(len(report.baseline.regressions)),
            "cost": usd(report.cost),  # agent.pricing: the run's cost in USD; empty when unpriced
        }
        write_output(views.paths.github_output, output_block(step_paths(values, root)), root, "--github-output", append=True)


def deliver_suite_ci(views: Views, suite: SuiteRun, written: dict[str, str], console: Console, root: Path) -> None:
    """As :func:`deliver_ci`, for several contracts: every file and view holds each
    contract's; the outputs give the suite's status, the summed counts and the
    run directories (one a line)."""
    from behavegate.render import suite as suite_views

    files = {
        "report": suite_views.report_json,
        "junit": suite_views.junit,
        "summary": suite_views.summary,
        "html": suite_views.html,
        "sarif": suite_views.sarif,
    }
    write_files(views.paths, lambda flag: files[flag](suite), written, root)
    if views.annotations:
        console.commands(suite_views.annotation_commands(suite).split("\n"), stderr=views.json_on_stdout)
    if views.paths.github_output:
        counts = suite.scenario_counts()
        values = {
            "status": suite.status,
            "passed": str(counts["pass"]),
            "failed": str(counts["fail"]),
            "incomplete": str(counts["incomplete"]),
            "report": written.get("report", ""),
            "junit": written.get("junit", ""),
            "summary": written.get("summary", ""),
            "html": written.get("html", ""),
            "sarif": written.get("sarif", ""),
            "run-dir": "",
            "regressions": "",
            "cost": usd(suite.cost),
        }
        shown = step_paths(values, root)
        run_dirs = [step_paths({"run-dir": r.run_dir}, root)["run-dir"] for r in suite.reports if r.run_dir]
        shown["run-dir"] = "\n".join(run_dirs)
        write_output(views.paths.github_output, output_block(shown), root, "--github-output", append=True)


def write_files(paths: OutputPaths, render: Callable[[str], str | Iterable[str]], written: dict[str, str], root: Path) -> None:
    """``--report``, ``--junit``, ``--summary``, ``--html``, ``--sarif``: a file refused by
    the path rule does not stop the others; then the run ends incomplete, naming every refused path."""
    refused: list[str] = []
    given = paths.by_flag()
    for flag in FILE_FLAGS:
        path = given[flag]
        if path:
            try:
                write_output(path, render(flag), root, f"--{flag}")
                written[flag] = path
            except InputError as exc:
                refused.append(str(exc))
    if refused:
        raise InputError("; ".join(refused))


FILE_FLAGS = ("report", "junit", "summary", "html", "sarif")
PATH_OUTPUTS = FILE_FLAGS


def step_paths(values: dict[str, str], root: Path) -> dict[str, str]:
    """Path outputs as a later step needs them: relative to ``$GITHUB_WORKSPACE``
    (where ``actions/upload-artifact`` and ``run:`` steps resolve paths), not to
    the directory behavegate ran in; else to the project root. The runner's own
    files are not outputs: their path inside the Action's container means nothing
    to the next step."""
    workspace = os.environ.get("GITHUB_WORKSPACE")
    bases = [*([Path(workspace).resolve(), Path(os.path.abspath(workspace))] if workspace else []), root]
    runner = {os.path.abspath(os.environ[name]) for name in ("GITHUB_OUTPUT", "GITHUB_STEP_SUMMARY") if os.environ.get(name)}
    paths = {name: Path.cwd() / values[name] for name in PATH_OUTPUTS if values.get(name)}
    if values.get("run-dir"):
        paths["run-dir"] = root / values["run-dir"]  # the run directory is relative to the project root
    shown = dict(values)
    for name, path in paths.items():
        absolute = Path(os.path.abspath(path))  # never resolved: a planted link is not followed
        if str(absolute) in runner:
            shown[name] = ""
            continue
        for base in bases:
            with contextlib.suppress(ValueError):
                shown[name] = absolute.relative_to(base).as_posix()
                break
    return shown


def _render_file(flag: str, report: Report) -> str | Iterable[str]:
    """Renderers are imported only when their file is asked for (start-up time)."""
    if flag == "report":
        from behavegate.render import json

        return json.pieces(report)
    if flag == "junit":
        from behavegate.render import junit as renderer
    elif flag == "html":
        from behavegate.render import html as renderer  # type: ignore[no-redef]
    elif flag == "sarif":
        from behavegate.render import sarif as renderer  # type: ignore[no-redef]
    else:
        from behavegate.render import summary as renderer  # type: ignore[no-redef]
    return renderer.render(report)


def error_summary(heading: str, problems: Sequence[str]) -> str:
    """The job summary of a run that could not be judged: the heading, then one list item a
    problem, each its own code span (shown literally, never as Markdown), as many as the
    console lists; the JSON report keeps every one."""
    from behavegate.limits import CONSOLE_MAX_PROBLEMS
    from behavegate.render.summary import code  # jinja2: imported only when a summary is asked for

    lines = [f"## ⚠️ behavegate: {heading}", ""]
    lines += [f"- {code(problem, limit=2000)}" for problem in problems[:CONSOLE_MAX_PROBLEMS]]
    if len(problems) > CONSOLE_MAX_PROBLEMS:
        lines.append(f"- ... and {len(problems) - CONSOLE_MAX_PROBLEMS} more (the JSON report lists every one)")
    return "\n".join(lines) + "\n"


def deliver_ci_error(
    views: Views, payload: dict[str, Any], contract_path: str, problems: Sequence[Problem], console: Console, root: Path
) -> None:
    """A run that could not be judged: the error report, the summary, an annotation
    on each contract line at fault, and the status: "error" (the configuration is
    wrong) or "incomplete". An error output that cannot be written is skipped:
    the error itself has been reported already."""
    ours = payload.get("behavegate") or {}
    status = str(ours.get("status") or "incomplete")
    # What a person can act on (path, cause, fix) before skylos's words.
    message = "\n".join(ours.get("problems") or [str(payload["error"])])
    heading = "configuration error, the run could not be judged" if status == "error" else "the run could not be judged"
    title = "behavegate: configuration error" if status == "error" else "behavegate: run incomplete"

    def quietly(path: str, text: str, label: str, append: bool = False) -> None:
        with contextlib.suppress(BehavegateError, OSError):
            write_output(path, text, root, label, append=append)

    paths = views.paths
    if paths.report:
        quietly(paths.report, json.dumps(payload, indent=2, sort_keys=True), "--report")
    if paths.summary:
        quietly(paths.summary, error_summary(heading, ours.get("problems") or [str(payload["error"])]), "--summary")
    if views.annotations:
        from behavegate.render.annotations import command

        lines = [
            command("error", p.located(), file=_problem_file(contract_path, p), line=p.line, title="behavegate: invalid contract")
            for p in problems
        ]
        console.commands(lines or [command("error", message, title=title)], stderr=views.json_on_stdout)
    if paths.github_output:
        values = {
            "status": status,
            "passed": "0",
            "failed": "0",
            "incomplete": "0",
            "report": paths.report or "",
            "junit": "",
            "summary": paths.summary or "",
            "html": "",
            "sarif": "",
            "run-dir": "",
            "regressions": "",
            "cost": "",
        }
        quietly(paths.github_output, output_block(step_paths(values, root)), "--github-output", append=True)


def _problem_file(contract_path: str, problem: Problem) -> str:
    """The file a problem is in as the annotations name it: the contract's, or a golden set's
    (``problem.file``, relative to the contract's folder) beside it."""
    if not problem.file:
        return contract_path
    return posixpath.normpath(posixpath.join(posixpath.dirname(contract_path), problem.file))
