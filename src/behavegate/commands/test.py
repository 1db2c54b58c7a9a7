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
from behavegate.commands.output_paths import check_outputs, detail, place_flag, show_and_deliver
from behavegate.errors import BehavegateError, ContractError, ExitCode, UsageError
from behavegate.gating import FailOn
from behavegate.github.console import Console
from behavegate.limits import CONSOLE_MAX_PROBLEMS, MAX_ASSERTIONS_CEILING
from behavegate.model import Timing
from behavegate.report.result import Report, RunIssue
from behavegate.report.suite import exit_status
from behavegate.text import path_text

if TYPE_CHECKING:
    from behavegate.commands.options import RunOptions
    from behavegate.model import Contract, ObservationSet, Scenario
    from behavegate.report.comparison import Baseline


def run(args: argparse.Namespace, console: Console) -> int:
    root = Path.cwd().resolve()
    named, args.contract = args.contract or [], None
    try:
        from behavegate.commands.discovery import discover, locate_contract
        from behavegate.commands.suite_run import contract_files, run_suite

        files = contract_files(named) if named else discover(root, console)
        if files is not None and len(files) > 1:
            return run_suite(args, files, root, console, judge=_judge, check=_preflight)
        if files:
            args.contract = str(files[0])
        contract_path, root = locate_contract(args.contract, root)
        check_outputs(args, root)
        report = _judge(args, contract_path, root, console)
        deliver(args, report, root, console)
        # A shard's attempts are part of the evidence: `behavegate merge` gives the verdict.
        return exit_status(report)
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
    shown = str(path)
    for base in filter(None, (workspace, str(root))):
        try:
            shown = Path(path).relative_to(base).as_posix()
            break
        except ValueError:
            continue
    return path_text(shown)


@records.frozen
class _Plan:
    """One contract's run, checked and chosen, before any evidence is gathered."""

    args: argparse.Namespace  # this contract's own copy (an Oxy file's settings applied)
    contract: Contract
    selected: Contract
    options: RunOptions
    observations: ObservationSet | None
    baseline: Baseline | None


def _judge(
    args: argparse.Namespace,
    contract_path: Path,
    root: Path,
    console: Console,
    loaded: Contract | None = None,
    others: tuple[Scenario, ...] = (),
) -> Report:
    """One contract judged. In a suite, ``loaded`` is the contract already read and
    ``others`` the scenarios of the suite's other contracts (their evidence is theirs)."""
    clock = Clock()  # the run's time starts before its contract is read, as a single run's always has
    return _execute(_prepare(args, contract_path, root, loaded, others), clock, root, console, others)


def _preflight(
    args: argparse.Namespace,
    contract_path: Path,
    root: Path,
    console: Console,
    loaded: Contract | None = None,
    others: tuple[Scenario, ...] = (),
) -> None:
    """What ``_judge`` would refuse before its first request, refused now: a suite checks
    every file (options, endpoint and judge trust, credentials) before it runs any."""
    plan = _prepare(args, contract_path, root, loaded, others)
    if plan.observations is None and not plan.args.traces:
        from behavegate.commands.live_run import trusted_settings

        trusted_settings(  # checked, not used
            plan.selected, plan.options, plan.args.allow_host, plan.options.concurrency, 0.0, mcp_listen=plan.args.mcp_listen
        )


def _prepare(
    args: argparse.Namespace, contract_path: Path, root: Path, loaded: Contract | None, others: tuple[Scenario, ...]
) -> _Plan:
    from behavegate.commands.options import select
    from behavegate.commands.request import from_args, resolve
    from behavegate.contract.load import load_contract
    from behavegate.evidence.observation_file import load_observations
    from behavegate.files import runner_dirs

    args = argparse.Namespace(**vars(args))  # this contract's settings below stay its own in a suite
    baseline_args(args)
    if args.max_assertions is not None and not 1 <= args.max_assertions <= MAX_ASSERTIONS_CEILING:
        raise UsageError(f"--max-assertions must be between 1 and {MAX_ASSERTIONS_CEILING}")
    contract = loaded or load_contract(contract_path, root, max_assertions=args.max_assertions)
    if args.max_assertions is not None and contract.version < 2:
        raise UsageError("--max-assertions needs a version 2 contract: version 1 keeps skylos's cap of 250 assertions")
    _file_settings(args, contract, display_path(contract.path, root))
    baseline = load_baseline(args.baseline, root)
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
    if observations is not None and observations.runs is not None and args.runs is None:
        args.runs = observations.runs  # recorded with --runs N: replayed as N attempts (the flag still overrides)
    if observations is not None and others:
        from behavegate.commands.suite_run import own_observations

        observations = own_observations(observations, contract, others)
    if contract.oxy is not None and observations is None and not args.traces and not args.endpoint:
        raise UsageError(
            f"{display_path(contract.path, root)}: an Oxy test file names no agent endpoint: give --endpoint URL "
            "(a discovered contract's agent.endpoint is not used for it), or --observations FILE"
        )
    offline = observations is not None or bool(args.traces)
    options = resolve(from_args(args), contract, offline=offline, suite_tags=frozenset(t for s in others or () for t in s.tags))
    if observations is not None and (args.allow_host or args.save_observations or args.mcp_listen):
        raise UsageError("--observations cannot be combined with live endpoint options")
    selected = select(contract, options, observations)
    return _Plan(args, contract, selected, options, observations, baseline)


def _execute(plan: _Plan, clock: Clock, root: Path, console: Console, others: tuple[Scenario, ...]) -> Report:
    from behavegate.commands.offline import run_offline
    from behavegate.commands.options import check_run_budget

    args, contract, selected, options, observations, baseline = (
        plan.args,
        plan.contract,
        plan.selected,
        plan.options,
        plan.observations,
        plan.baseline,
    )
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

        shard = plan_shard(args.shard, contract, selected, options, observations)
    scope, only = (shard.contract, shard.owned) if shard else (selected, None)
    if observations is None:
        from behavegate.commands.live_run import run_live

        report = run_live(args, scope, options, clock, root, console, display=shown, skipped=skipped, only=only)
    else:
        facts = clock.facts(options.max_scenarios, options.max_seconds)
        # Offline evidence was gathered before the run: each scenario spans the run's judging.
        timings = (Timing(facts.started_at, facts.ended_at, 0),) * len(scope.scenarios)
        report = run_offline(
            scope,
            observations,
            options,
            facts,
            display_path=shown,
            skipped=skipped,
            timings=timings,
            provenance=provenance,
            only=only,
        )
    if shard:
        report = records.replace(report, shard=shard.block)
    check_run_budget(clock.elapsed(), options.max_seconds, version=contract.version, live=observations is None)
    report = gated(report, baseline, args.fail_on)
    if options.artifacts:
        report = write_artifacts(report, root)
    return report


def _file_settings(args: argparse.Namespace, contract: Contract, shown: str) -> None:
    """What an Oxy test file sets for its run (the command line overrides it), and ``--case``."""
    oxy = contract.oxy
    if oxy is not None and getattr(args, "oxy_suite_floor", False):
        args.min_pass_rate = None  # the suite holds the floor on the mean of the files' scores
    if not getattr(args, "case", None):
        return
    if oxy is None:
        raise UsageError("--case selects a case of an Oxy test file (*.test.yml); for a contract use --scenario ID")
    if args.scenarios:
        raise UsageError("--case and --scenario both select scenarios; use one")
    from behavegate.contract.oxy import case_matches

    chosen: list[str] = []
    for wanted in args.case:
        found = case_matches(oxy, wanted)
        if not found:
            raise UsageError(
                f"--case {wanted!r}: no case with that 0-based index, name, prompt or scenario id in {shown} "
                f"({len(oxy.cases)} case(s), 0 to {len(oxy.cases) - 1})"
            )
        if len(found) > 1:
            which = "; ".join(f"index {case.index} (scenario id {case.scenario_id})" for case in found)
            raise UsageError(
                f"--case {wanted!r} names {len(found)} cases of {shown}: {which}; "
                "name the one you mean by its index or scenario id, whichever no other case shares"
            )
        if found[0].scenario_id not in chosen:
            chosen.append(found[0].scenario_id)
    args.scenarios = chosen


def baseline_args(args: argparse.Namespace) -> None:
    if args.fail_on is FailOn.REGRESSION and not args.baseline:
        raise UsageError("--fail-on regression needs --baseline REPORT: the JSON report of the run to compare with")


def gated(report: Report, baseline: Baseline | None, fail_on: FailOn) -> Report:
    """The report compared with its baseline, and what fails it (``--fail-on``)."""
    if baseline is None and fail_on == "incomplete":
        return report
    from behavegate.report.baseline import compare

    return report.gated(compare(baseline, report) if baseline is not None else None, fail_on)


def load_baseline(path: str | None, root: Path) -> Baseline | None:
    """``--baseline`` (None: not given), read before any evidence is gathered: a bad
    baseline costs no live run."""
    from behavegate.files import runner_dirs
    from behavegate.report.baseline_file import load_baseline as read_baseline

    return None if not path else read_baseline(path, root, shown=path, bases=runner_dirs(os.environ))


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
    show_and_deliver(args, output, root, console, "report", lambda written: deliver_ci(args, report, written, console, root))


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
        lines.extend(f"  {one_line(detail, 2000)}" for detail in details[:CONSOLE_MAX_PROBLEMS])
        if len(details) > CONSOLE_MAX_PROBLEMS:  # 30,000 lines would bury the reason; JSON keeps them all
            lines.append(f"  ... and {len(details) - CONSOLE_MAX_PROBLEMS} more (--format json lists every one)")
    return "\n".join(lines)


def report_error(args: argparse.Namespace, root: Path, exc: Exception, console: Console) -> None:
    """The error as skylos reports it: JSON (to ``--output`` or stdout) or one message.
    Its reason is always on stderr too: a run that exits 2 never leaves the console silent
    (with ``--output`` the report file was the only place it went, and a JSON report on
    stdout is usually redirected to a file)."""
    from behavegate.files import write_file

    message = str(exc)
    details = exc.details() if isinstance(exc, BehavegateError) else [message]
    text = error_text(exc)
    console.err(text)
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
        except (BehavegateError, OSError) as output_exc:
            console.err(f"behavegate: could not write --output: {output_exc}")


def report_error_to_ci(args: argparse.Namespace, exc: Exception, console: Console, root: Path | None = None) -> None:
    """Even a run that could not start tells CI why: the JSON report, the summary,
    an annotation on each contract line at fault, and status=error (the
    configuration) or status=incomplete (the evidence)."""
    from behavegate.github.outputs import deliver_ci_error

    root = root or Path.cwd().resolve()
    # Made absolute first, as a judged run's contract path is: relative to the workspace, a contract
    # under the Action's working-directory is "sub/agent/bad.yml", where the annotation can land.
    where = display_path(Path(os.path.abspath(args.contract)), root) if args.contract else "contract"
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
