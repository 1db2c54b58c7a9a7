"""``behavegate test``: choose the scenarios, gather evidence (an observation
file or a live agent), judge once, and hand the one typed Report to every view
that was asked for. The only place, with ``github/``, that reads the clock and
the environment of a test run.
"""

from __future__ import annotations

import argparse
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from behavegate import frozen as records
from behavegate.commands.clock import Clock
from behavegate.commands.judge_options import from_args as judge_options_from
from behavegate.commands.judge_options import validate_judge
from behavegate.commands.output_paths import check_outputs, place_flag, show_output
from behavegate.errors import BehavegateError, ContractError, ExitCode, InputError, UsageError
from behavegate.github.console import Console
from behavegate.limits import MAX_ASSERTIONS_CEILING
from behavegate.model import Timing
from behavegate.report.result import Report, RunIssue

if TYPE_CHECKING:
    from behavegate.model import Contract, Scenario
    from behavegate.report.comparison import Baseline


def run(args: argparse.Namespace, console: Console) -> int:
    root = Path.cwd().resolve()
    named, args.contract = args.contract or [], None
    try:
        from behavegate.commands.suite_run import contract_files, run_suite

        files = contract_files(named) if named else _discover(root)
        if files is not None and len(files) > 1:
            return run_suite(args, files, root, console, judge=_judge)
        if files:
            args.contract = str(files[0])
        contract_path, root = _locate_contract(args.contract, root)
        check_outputs(args, root)
        report = _judge(args, contract_path, root, console)
        deliver(args, report, root, console)
        # A shard's attempts are part of the evidence: `behavegate merge` gives the verdict.
        return ExitCode.PASS if report.shard is not None else ExitCode.of(report.gate_status)
    except (BehavegateError, OSError) as exc:
        report_error(args, root, exc, console)
        report_error_to_ci(args, exc, console, root)
        return ExitCode.INCOMPLETE


# Every file a run may write, by flag: all placed by one rule (files.place_output),
# relative to the project root, and all checked before the first request.
def error_status(exc: BaseException) -> str:
    """ "error": the configuration is wrong (fix it and re-run); "incomplete": the
    evidence could not be gathered or kept, or behavegate itself failed."""
    return exc.status if isinstance(exc, BehavegateError) else "incomplete"


def display_path(path: Path, root: Path) -> str:
    """A path as people see it in CI: relative to the workspace or project."""
    workspace = os.environ.get("GITHUB_WORKSPACE")
    for base in filter(None, (workspace, str(root))):
        try:
            return Path(path).relative_to(base).as_posix()
        except ValueError:
            continue
    return str(path)


def _discover(cwd: Path) -> list[Path] | None:
    """No path named: the discovered contract, then every Oxy test file of the project
    (as ``oxy test`` runs them all), each its own testsuite. None: nothing but the
    contract's discovery, which names what is missing."""
    from behavegate.contract.oxy import SUFFIXES
    from behavegate.files import discover_contract, walk_files

    found = discover_contract(cwd)
    base = found[1] if found is not None else cwd
    tests = list(walk_files(base, SUFFIXES))
    if not tests:
        return None
    return ([found[0]] if found is not None else []) + tests


def _locate_contract(argument: str | None, cwd: Path) -> tuple[Path, Path]:
    from behavegate.files import discover_contract

    if argument is not None:
        return Path(argument), cwd
    found = discover_contract(cwd)
    if found is None:
        raise InputError("No .behavegate/contract.yml or .skylos/agent-test.yml found; run behavegate init")
    return found


def _judge(
    args: argparse.Namespace, contract_path: Path, root: Path, console: Console,
    loaded: Contract | None = None, others: tuple[Scenario, ...] = (),
) -> Report:  # fmt: skip
    """One contract judged. In a suite, ``loaded`` is the contract already read and
    ``others`` the scenarios of the suite's other contracts (their evidence is theirs)."""
    from behavegate.commands.offline import run_offline
    from behavegate.commands.options import (
        RunOptions,
        check_concurrency,
        check_run_budget,
        default_max_scenarios,
        scenario_selection,
        select,
        validate,
        validate_v2,
    )
    from behavegate.contract.load import load_contract
    from behavegate.evidence.observation_file import load_observations
    from behavegate.files import runner_dirs

    clock = Clock()
    args = argparse.Namespace(**vars(args))  # this contract's settings below stay its own in a suite
    if args.fail_on == "regression" and not args.baseline:
        raise UsageError("--fail-on regression needs --baseline REPORT: the JSON report of the run to compare with")
    if args.max_assertions is not None and not 1 <= args.max_assertions <= MAX_ASSERTIONS_CEILING:
        raise UsageError(f"--max-assertions must be between 1 and {MAX_ASSERTIONS_CEILING}")
    contract = loaded or load_contract(contract_path, root, max_assertions=args.max_assertions)
    if args.max_assertions is not None and contract.version < 2:
        raise UsageError("--max-assertions needs a version 2 contract: version 1 keeps skylos's cap of 250 assertions")
    _file_settings(args, contract)
    baseline = _load_baseline(args.baseline, root) if args.baseline else None
    if args.traces:
        from behavegate.commands.trace_run import check_flags

        check_flags(args)
    if args.shard:
        from behavegate.commands import shard_run

        shard_run.check_flags(args)
    turns = {s.id: s.max_turns for s in contract.scenarios} if contract.version >= 2 else None  # a recording must agree
    observations = (
        load_observations(args.observations, root, attempts=contract.version >= 2, bases=runner_dirs(os.environ), max_turns=turns)
        if args.observations
        else None
    )
    if observations is not None and others:
        from behavegate.commands.suite_run import own_observations

        observations = own_observations(observations, contract, others)
    options = RunOptions(
        scenarios=scenario_selection(args.scenarios),
        endpoint=args.endpoint,
        auth_env=args.auth_env,
        allow_remote=bool(args.allow_remote),
        allow_contract_endpoint=bool(args.allow_contract_endpoint),
        max_scenarios=default_max_scenarios(contract.version) if args.max_scenarios is None else args.max_scenarios,
        max_seconds=args.max_seconds,
        max_tokens=args.max_tokens,
        artifacts=not args.no_artifacts,
        runs=args.runs,
        tags=tuple(args.tags),
        min_pass_rate=args.min_pass_rate,
        threshold_mode=args.threshold_mode,
        gate_tags=tuple(args.gate_tag or ()),
        suite_tags=frozenset(tag for scenario in others or () for tag in scenario.tags),
        judge=judge_options_from(args),
    )
    validate(options, offline=observations is not None or bool(args.traces), version=contract.version)
    validate_judge(options.judge, offline=observations is not None or bool(args.traces), version=contract.version)
    validate_v2(options, contract)
    if observations is not None and (args.allow_host or args.save_observations):
        raise UsageError("--observations cannot be combined with live endpoint options")
    check_concurrency(args.concurrency)
    selected = select(contract, options, observations)
    shown = display_path(contract.path, root)
    chosen = set(selected.scenario_ids())
    skipped = tuple(s for s in contract.scenarios if s.id not in chosen)
    provenance = None
    if args.traces:
        from behavegate.commands.trace_run import trace_observations

        observations, provenance = trace_observations(
            args, contract, selected, root, clock, options.max_seconds, lambda path: display_path(path, root), others
        )
    shard = None
    if args.shard:
        from behavegate.commands.shard_run import plan_shard

        shard = plan_shard(args.shard, selected, options, observations)
    scope, only = (shard.contract, shard.owned) if shard else (selected, None)
    if observations is None:
        from behavegate.commands.live_run import run_live

        report = run_live(args, scope, options, clock, root, console, display=shown, skipped=skipped, only=only)
    else:
        facts = clock.facts(options.max_scenarios, options.max_seconds)
        # Offline evidence was gathered before the run: each scenario spans the run's judging.
        timings = (Timing(facts.started_at, facts.ended_at, 0),) * len(scope.scenarios)
        report = run_offline(
            scope, observations, options, facts, display_path=shown, skipped=skipped, timings=timings,
            provenance=provenance, only=only,
        )  # fmt: skip
    if shard:
        report = records.replace(report, shard=shard.block)
    check_run_budget(clock.elapsed(), options.max_seconds, version=contract.version, live=observations is None)
    if baseline is not None or args.fail_on != "incomplete":
        from behavegate.report.baseline import compare

        report = report.gated(compare(baseline, report) if baseline is not None else None, args.fail_on)
    if options.artifacts:
        report = write_artifacts(report, root)
    return report


def _file_settings(args: argparse.Namespace, contract: Contract) -> None:
    """What an Oxy test file sets for its run (the command line overrides it), and ``--case``."""
    from behavegate.limits import DEFAULT_CONCURRENCY

    oxy = contract.oxy
    if oxy is not None and getattr(args, "oxy_suite_floor", False):
        args.min_pass_rate = None  # the suite holds the floor on the mean of the files' scores
    if args.concurrency is None:
        args.concurrency = oxy.concurrency if oxy is not None else DEFAULT_CONCURRENCY
    if getattr(args, "case", None) is None:
        return
    if oxy is None:
        raise UsageError("--case selects a case of an Oxy test file (*.test.yml); for a contract use --scenario ID")
    if args.scenarios:
        raise UsageError("--case and --scenario both select scenarios; use one")
    from behavegate.contract.oxy import case_index

    case = case_index(oxy, args.case)
    if case is None:
        raise UsageError(
            f"--case {args.case!r}: no case with that 0-based index, name or prompt in {contract.path} "
            f"({len(oxy.cases)} case(s), 0 to {len(oxy.cases) - 1})"
        )
    args.scenarios = [case.scenario_id]


def _load_baseline(path: str, root: Path) -> Baseline:
    """Read before any evidence is gathered: a bad baseline costs no live run."""
    from behavegate.files import runner_dirs
    from behavegate.report.baseline_file import load_baseline

    return load_baseline(path, root, shown=path, bases=runner_dirs(os.environ))


def write_artifacts(report: Report, root: Path) -> Report:
    """Write the run directory; on failure the report says so (a pass becomes incomplete)."""
    from behavegate.report.artifacts import build_files, write_run

    try:
        write_run(root, report.facts.run_id, build_files(report))
    except OSError as exc:
        issue = RunIssue("harness_artifact_write_failed", f"required harness artifacts were not written: {exc}")
        return records.replace(report, issues=(*report.issues, issue))
    return report


def deliver(args: argparse.Namespace, report: Report, root: Path, console: Console) -> None:
    """The report on the console or in ``--output``, then the CI files asked for."""
    from behavegate.github.outputs import deliver_ci

    output: str | Iterator[str]
    if args.format == "json":
        from behavegate.render import json

        output = json.pieces(report)
    elif report.shard is not None:
        from behavegate.render import shard

        output = shard.render(report)
    else:
        from behavegate.render import table

        output = table.render(report, detail(args))
    written = show_output(args, output, root, console, "report")
    deliver_ci(args, report, written, console, root)


def detail(args: argparse.Namespace) -> str:
    """``--quiet`` / ``--verbose`` for the table (quiet wins when both are given)."""
    return "quiet" if getattr(args, "quiet", False) else "verbose" if getattr(args, "verbose", False) else "normal"


def _error_payload(message: str, details: list[str], status: str, args: argparse.Namespace) -> dict[str, Any]:
    # skylos's shape (its "status" is "incomplete" for every error); ours beside it.
    payload: dict[str, Any] = {"schema_version": 1, "kind": "agent_behavior", "status": "incomplete", "error": message}
    payload["behavegate"] = {"status": status}
    shard = _shard_named(args)
    if shard is not None:  # so a merge names the shard that could not run
        payload["behavegate"]["shard"] = {"index": shard[0], "count": shard[1]}
    if len(details) > 1 or details[0] != message:
        payload["behavegate"]["problems"] = details
    return payload


def error_text(exc: BaseException) -> str:
    """The error for a person: the status, what is wrong (path, cause, fix), every problem."""
    from behavegate.text import one_line

    message = str(exc)
    details = exc.details() if isinstance(exc, BehavegateError) else [message]
    if error_status(exc) == "error":
        lines = [f"behavegate: configuration error: {one_line(details[0], 2000)}"]
    else:
        lines = [f"Agent behavior test incomplete: {one_line(details[0], 2000)}"]
    if len(details) > 1:
        lines.append(f"{len(details)} problem(s):")
        lines.extend(f"  {one_line(detail, 2000)}" for detail in details)
    return "\n".join(lines)


def report_error(args: argparse.Namespace, root: Path, exc: Exception, console: Console) -> None:
    """The error as skylos reports it: JSON (to ``--output`` or stdout) or one message."""
    from behavegate.files import write_file

    message = str(exc)
    details = exc.details() if isinstance(exc, BehavegateError) else [message]
    text = error_text(exc)
    if args.format == "json":
        payload = _error_payload(message, details, error_status(exc), args)
        if args.output:
            try:
                write_file(place_flag(args, "output", root), json.dumps(payload, indent=2, sort_keys=True) + "\n", "--output")
                return
            except (BehavegateError, OSError) as output_exc:
                payload["output_error"] = str(output_exc)
        console.json(json.dumps(payload, indent=2, sort_keys=True))
        return
    if args.output:
        try:
            write_file(place_flag(args, "output", root), text + "\n", "--output")
            return
        except (BehavegateError, OSError):
            pass
    console.err(text)


def report_error_to_ci(args: argparse.Namespace, exc: Exception, console: Console, root: Path | None = None) -> None:
    """Even a run that could not start tells CI why: the JSON report, the summary,
    an annotation on each contract line at fault, and status=error (the
    configuration) or status=incomplete (the evidence)."""
    from behavegate.github.outputs import deliver_ci_error

    root = root or Path.cwd().resolve()
    where = display_path(Path(args.contract), root) if args.contract else "contract"
    problems = exc.problems[:10] if isinstance(exc, ContractError) else ()
    message = str(exc)
    details = exc.details() if isinstance(exc, BehavegateError) else [message]
    status = error_status(exc)
    deliver_ci_error(args, _error_payload(message, details, status, args), where, problems, console, root)


def _shard_named(args: argparse.Namespace) -> tuple[int, int] | None:
    from behavegate.evidence.shard import parse_shard

    try:
        return parse_shard(args.shard) if getattr(args, "shard", None) else None
    except BehavegateError:
        return None
