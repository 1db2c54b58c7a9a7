"""``behavegate test``: choose the scenarios, gather evidence (an observation
file or a live agent), judge once, and hand the one typed Report to every view
that was asked for. The only place, with ``github/``, that reads the clock and
the environment of a test run.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
from pathlib import Path
from typing import Any

from behavegate.commands.clock import Clock
from behavegate.errors import BehavegateError, ContractError, ExitCode, InputError, RunError, UsageError
from behavegate.github.console import Console
from behavegate.limits import MAX_CONCURRENCY
from behavegate.model import Timing
from behavegate.report.result import Report, RunIssue


def run(args: argparse.Namespace, console: Console) -> int:
    root = Path.cwd().resolve()
    try:
        contract_path, root = _locate_contract(args.contract, root)
        report = _judge(args, contract_path, root, console)
        _deliver(args, report, root, console)
        return ExitCode.of(report.status)
    except (BehavegateError, OSError) as exc:
        _report_error(args, root, exc, console)
        report_error_to_ci(args, exc, console)
        return ExitCode.INCOMPLETE


def display_path(path: Path, root: Path) -> str:
    """A path as people see it in CI: relative to the workspace or project."""
    workspace = os.environ.get("GITHUB_WORKSPACE")
    for base in filter(None, (workspace, str(root))):
        try:
            return Path(path).relative_to(base).as_posix()
        except ValueError:
            continue
    return str(path)


def _locate_contract(argument: str | None, cwd: Path) -> tuple[Path, Path]:
    from behavegate.files import discover_contract

    if argument is not None:
        return Path(argument), cwd
    found = discover_contract(cwd)
    if found is None:
        raise InputError("No .behavegate/contract.yml or .skylos/agent-test.yml found; run behavegate init")
    return found


def _judge(args: argparse.Namespace, contract_path: Path, root: Path, console: Console) -> Report:
    from behavegate.commands.offline import run_offline
    from behavegate.commands.options import RunOptions, scenario_selection, select, validate, validate_v2
    from behavegate.contract.load import load_contract
    from behavegate.evidence.observation_file import load_observations

    clock = Clock()
    contract = load_contract(contract_path, root)
    observations = load_observations(args.observations, root, attempts=contract.version >= 2) if args.observations else None
    options = RunOptions(
        scenarios=scenario_selection(args.scenarios),
        endpoint=args.endpoint,
        auth_env=args.auth_env,
        allow_remote=bool(args.allow_remote),
        allow_contract_endpoint=bool(args.allow_contract_endpoint),
        max_scenarios=args.max_scenarios,
        max_seconds=args.max_seconds,
        max_tokens=args.max_tokens,
        artifacts=not args.no_artifacts,
        runs=args.runs,
        tags=tuple(args.tags),
        min_pass_rate=args.min_pass_rate,
        threshold_mode=args.threshold_mode,
    )
    validate(options, offline=observations is not None)
    validate_v2(options, contract)
    if observations is not None and (args.allow_host or args.save_observations):
        raise UsageError("--observations cannot be combined with live endpoint options")
    if not 1 <= args.concurrency <= MAX_CONCURRENCY:
        raise UsageError(f"--concurrency must be between 1 and {MAX_CONCURRENCY}")
    selected = select(contract, options, observations)
    shown = display_path(contract.path, root)
    if observations is None:
        from behavegate.commands.live_run import run_live

        report = run_live(args, selected, options, clock, root, console, display=shown)
    else:
        report = run_offline(selected, observations, options, clock.facts(options.max_scenarios, options.max_seconds),
                             display_path=shown)  # fmt: skip
        stamp = Timing(report.facts.started_at, report.facts.ended_at, 0)
        report = dataclasses.replace(report, timings=(stamp,) * len(selected.scenarios))
    elapsed = clock.elapsed()
    if elapsed > options.max_seconds:
        raise RunError(
            f"agent behavior run exceeded its budget: harness time budget exceeded: {elapsed:.3f}s>{options.max_seconds:.3f}s"
        )
    chosen = set(selected.scenario_ids())
    report = dataclasses.replace(report, skipped=tuple(s for s in contract.scenarios if s.id not in chosen))
    if options.artifacts:
        report = _write_artifacts(report, root)
    return report


def _write_artifacts(report: Report, root: Path) -> Report:
    """Write the run directory; on failure the report says so (a pass becomes incomplete)."""
    from behavegate.report.artifacts import build_files, write_run

    try:
        write_run(root, report.facts.run_id, build_files(report))
    except OSError as exc:
        issue = RunIssue("harness_artifact_write_failed", f"required harness artifacts were not written: {exc}")
        return dataclasses.replace(report, issues=(*report.issues, issue))
    return report


def _deliver(args: argparse.Namespace, report: Report, root: Path, console: Console) -> None:
    """The report on the console or in ``--output``, then the CI files asked for."""
    from behavegate.files import resolve_inside, write_project_text
    from behavegate.github.outputs import deliver_ci

    if args.format == "json":
        from behavegate.render import json as renderer
    else:
        from behavegate.render import table as renderer  # type: ignore[no-redef]
    output = renderer.render(report)
    written: dict[str, str] = {}
    if args.output:
        destination = resolve_inside(args.output, root, "output path")
        write_project_text(destination, root, output.rstrip() + "\n")
        written["report"] = str(destination)  # shown relative to the workspace by outputs.step_paths
        if args.format == "table":
            console.out(f"Wrote agent behavior report: {destination}")
    elif args.format == "json":
        console.json(output)
    else:
        console.out(output)
    deliver_ci(args, report, written, console, root)


def _error_payload(message: str, details: list[str]) -> dict[str, Any]:
    payload: dict[str, Any] = {"schema_version": 1, "kind": "agent_behavior", "status": "incomplete", "error": message}
    if len(details) > 1 or details[0] != message:
        payload["behavegate"] = {"problems": details}
    return payload


def _report_error(args: argparse.Namespace, root: Path, exc: Exception, console: Console) -> None:
    """The error as skylos reports it: JSON (to ``--output`` or stdout) or one message."""
    from behavegate.files import resolve_inside, write_project_text
    from behavegate.text import one_line

    message = str(exc)
    details = exc.details() if isinstance(exc, BehavegateError) else [message]
    if args.format == "json":
        payload = _error_payload(message, details)
        if args.output:
            try:
                destination = resolve_inside(args.output, root, "output path")
                write_project_text(destination, root, json.dumps(payload, indent=2, sort_keys=True) + "\n")
                return
            except (BehavegateError, OSError) as output_exc:
                payload["output_error"] = str(output_exc)
        console.json(json.dumps(payload, indent=2, sort_keys=True))
        return
    lines = [f"Agent behavior test incomplete: {one_line(message, 2000)}"]
    if len(details) > 1 or details[0] != message:
        lines.append(f"{len(details)} problem(s):" if len(details) > 1 else "where:")
        lines.extend(f"  {one_line(detail, 2000)}" for detail in details)
    text = "\n".join(lines)
    if args.output:
        try:
            destination = resolve_inside(args.output, root, "output path")
            write_project_text(destination, root, text + "\n")
            return
        except (BehavegateError, OSError):
            pass
    console.err(text)


def report_error_to_ci(args: argparse.Namespace, exc: Exception, console: Console) -> None:
    """Even a run that could not start tells CI why: the JSON report, the summary,
    an annotation on each contract line at fault, and status=incomplete."""
    from behavegate.github.outputs import deliver_ci_error

    root = Path.cwd().resolve()
    where = display_path(Path(args.contract), root) if args.contract else "contract"
    problems = exc.problems[:10] if isinstance(exc, ContractError) else ()
    message = str(exc)
    details = exc.details() if isinstance(exc, BehavegateError) else [message]
    deliver_ci_error(args, _error_payload(message, details), where, problems, console, root)
