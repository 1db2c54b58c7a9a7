"""``behavegate test``: choose the scenarios, gather evidence (an observation
file or a live agent), judge once, and hand the one typed Report to every view
that was asked for. The only place, with ``github/``, that reads the clock and
the environment of a test run.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from behavegate import frozen as records
from behavegate.commands.clock import Clock
from behavegate.commands.output_paths import check_included_outputs, check_outputs, place_flag, show_and_deliver
from behavegate.errors import BehavegateError, ContractError, ExitCode, OutputClash, UsageError
from behavegate.gating import FailOn
from behavegate.github.console import Console
from behavegate.limits import CONSOLE_MAX_PROBLEMS, MAX_ASSERTIONS_CEILING
from behavegate.model import Timing
from behavegate.text import path_text

if TYPE_CHECKING:
    from behavegate.commands.invocation import Gating, MergeCommand, TestCommand
    from behavegate.commands.options import RunOptions
    from behavegate.github.views import Views
    from behavegate.model import Contract, ObservationSet, Scenario
    from behavegate.report.comparison import Baseline
    from behavegate.report.result import Report


def run(command: TestCommand, console: Console) -> int:
    root = Path.cwd().resolve()
    try:
        from behavegate.commands.discovery import discover, locate_contract
        from behavegate.commands.suite_run import contract_files, run_suite

        files = contract_files(list(command.contracts)) if command.contracts else discover(root, console)
        if files is not None and len(files) > 1:
            return run_suite(
                command,
                files,
                root,
                console,
                judge=_judge,
                check=_preflight,
                stop=lambda at_fault, exc: _stopped(at_fault, exc, root, console),
            )
        if files:
            command = records.replace(command, contract=str(files[0]))
        contract_path, root = locate_contract(command.contract, root)
        observed = command.evidence.observations
        inputs = {
            "the contract": contract_path,
            "--observations": root / observed if observed and "\x00" not in observed else None,
        }
        check_outputs(command.views.paths, root, inputs)
        if command.evidence.observations is not None:  # a live run never streams: not imported before its first request
            from behavegate.commands import stream_offline

            if stream_offline.streamable(command):  # JSON Lines in, one JSON report out: a part at a time
                streamed = stream_offline.run_streaming(command, contract_path, root, console, lambda p: display_path(p, root))
                if streamed is not None:
                    return streamed
        report = _judge(command, contract_path, root, console)
        deliver(command.views, report, root, console)
        from behavegate.report.suite import exit_status

        # A shard's attempts are part of the evidence: `behavegate merge` gives the verdict.
        return exit_status(report)
    except (BehavegateError, OSError) as exc:
        return _stopped(command, exc, root, console)


def _stopped(command: TestCommand, exc: BehavegateError | OSError, root: Path, console: Console) -> int:
    """A run that could not be judged: the error on the console (or in ``--output``) and to CI."""
    report_error(command.views, root, exc, console, shard=command.shard)
    report_error_to_ci(command, exc, console, root)
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


class _Plan(records.Frozen):
    """One contract's run, checked and chosen, before any evidence is gathered."""

    command: TestCommand  # this contract's own (an Oxy file's settings and --case applied)
    contract: Contract
    selected: Contract
    options: RunOptions
    observations: ObservationSet | None
    baseline: Baseline | None


def _judge(
    command: TestCommand,
    contract_path: Path,
    root: Path,
    console: Console,
    loaded: Contract | None = None,
    others: tuple[Scenario, ...] = (),
) -> Report:
    """One contract judged. In a suite, ``loaded`` is the contract already read and
    ``others`` the scenarios of the suite's other contracts (their evidence is theirs)."""
    clock = Clock()  # the run's time starts before its contract is read, as a single run's always has
    return _execute(_prepare(command, contract_path, root, loaded, others), clock, root, console, others)


def _preflight(
    command: TestCommand,
    contract_path: Path,
    root: Path,
    console: Console,
    loaded: Contract | None = None,
    others: tuple[Scenario, ...] = (),
) -> None:
    """What ``_judge`` would refuse before its first request, refused now: a suite checks
    every file (options, endpoint and judge trust, credentials) before it runs any."""
    plan = _prepare(command, contract_path, root, loaded, others)
    if plan.observations is None and not plan.command.evidence.traces:
        from behavegate.commands.live_run import trusted_settings

        live = plan.command.live
        trusted_settings(  # checked, not used
            plan.selected,
            plan.options,
            live.allow_hosts,
            plan.options.concurrency,
            0.0,
            mcp_listen=live.mcp_listen,
            mcp_port=live.mcp_port,
        )


def _prepare(
    command: TestCommand, contract_path: Path, root: Path, loaded: Contract | None, others: tuple[Scenario, ...]
) -> _Plan:
    from behavegate.commands.options import select
    from behavegate.commands.request import resolve
    from behavegate.contract.load import load_contract
    from behavegate.files import runner_dirs

    require_baseline(command.gating)
    max_assertions = command.request.max_assertions
    if max_assertions is not None and not 1 <= max_assertions <= MAX_ASSERTIONS_CEILING:
        raise UsageError(f"--max-assertions must be between 1 and {MAX_ASSERTIONS_CEILING}")
    contract = loaded or load_contract(contract_path, root, max_assertions=max_assertions)
    check_included_outputs(command.views.paths, root, contract.path, contract.included)
    if max_assertions is not None and contract.version < 2:
        raise UsageError("--max-assertions needs a version 2 contract: version 1 keeps skylos's cap of 250 assertions")
    # This contract's own settings: in a suite, the others' stay theirs.
    command = _file_settings(command, contract, display_path(contract.path, root))
    evidence, request = command.evidence, command.request
    from behavegate.commands.cache_policy import check_cache

    check_cache(command, contract, os.environ, root)  # before any file is read or anything asked
    if contract.version >= 2 and contract.agent.tools_from_mcp is not None:  # read before anything else is asked
        from behavegate.commands.mcp_tools import with_listed_tools

        contract = with_listed_tools(contract, request, command.live)
    baseline = load_baseline(command.gating.baseline, root)
    if evidence.traces:
        from behavegate.commands.trace_run import check_flags

        check_flags(command)
    if command.shard:
        from behavegate.commands import shard_run

        shard_run.check_flags(command)
    turns = {s.id: s.max_turns for s in contract.scenarios} if contract.version >= 2 else None  # a recording must agree
    observations = None
    if evidence.observations:
        # Here: a live run never reads an observation file, so it does not import the reader.
        from behavegate.evidence.observation_file import load_observations

        observations = load_observations(
            evidence.observations, root, attempts=contract.version >= 2, bases=runner_dirs(os.environ), max_turns=turns
        )
    if observations is not None and observations.runs is not None and request.runs is None:
        # Recorded with --runs N: replayed as N attempts (the flag still overrides).
        request = records.replace(request, runs=observations.runs)
    if observations is not None and others:
        from behavegate.commands.suite_run import own_observations

        observations = own_observations(observations, contract, others)
    if contract.oxy is not None and observations is None and not evidence.traces and not request.endpoint:
        raise UsageError(
            f"{display_path(contract.path, root)}: an Oxy test file names no agent endpoint: give --endpoint URL "
            "(a discovered contract's agent.endpoint is not used for it), or --observations FILE"
        )
    offline = observations is not None or bool(evidence.traces)
    options = resolve(request, contract, offline=offline, suite_tags=frozenset(t for s in others or () for t in s.tags))
    if observations is not None and (command.live.given() or command.views.paths.save_observations):
        raise UsageError("--observations cannot be combined with live endpoint options")
    selected = select(contract, options, observations)
    return _Plan(command, contract, selected, options, observations, baseline)


def _execute(plan: _Plan, clock: Clock, root: Path, console: Console, others: tuple[Scenario, ...]) -> Report:
    from behavegate.commands.options import check_run_budget

    command, contract, selected, options, observations, baseline = (
        plan.command,
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
    if command.evidence.traces:
        from behavegate.commands.trace_run import trace_observations

        observations, provenance = trace_observations(
            command.evidence, contract, selected, root, clock, options.max_seconds, lambda path: display_path(path, root), others
        )
    shard = None
    if command.shard:
        from behavegate.commands.shard_run import plan_shard

        shard = plan_shard(command.shard, contract, selected, options, observations)
    scope, only = (shard.contract, shard.owned) if shard else (selected, None)
    if observations is None:
        from behavegate.commands.live_run import run_live

        report = run_live(command, scope, options, clock, root, console, display=shown, skipped=skipped, only=only)
    else:
        from behavegate.commands.offline import run_offline

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
    report = gated(report, baseline, command.gating.fail_on)
    if options.artifacts:
        report = write_artifacts(report, root)
    return report


def _file_settings(command: TestCommand, contract: Contract, shown: str) -> TestCommand:
    """What an Oxy test file sets for its run (the command line overrides it), and ``--case``."""
    oxy = contract.oxy
    if oxy is not None and command.suite.oxy_floor:
        # The suite holds the floor on the mean of the files' scores.
        command = records.replace(command, request=records.replace(command.request, min_pass_rate=None))
    if not command.cases:
        return command
    if oxy is None:
        raise UsageError("--case selects a case of an Oxy test file (*.test.yml); for a contract use --scenario ID")
    if command.request.scenarios:
        raise UsageError("--case and --scenario both select scenarios; use one")
    from behavegate.contract.oxy import case_matches

    chosen: list[str] = []
    for wanted in command.cases:
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
    return records.replace(command, request=records.replace(command.request, scenarios=tuple(chosen)))


def require_baseline(gating: Gating) -> None:
    if gating.fail_on is FailOn.REGRESSION and not gating.baseline:
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
    if not path:
        return None  # before the imports: the reader brings jsonschema, which a run without a baseline never needs
    from behavegate.files import runner_dirs
    from behavegate.report.baseline_file import load_baseline as read_baseline

    return read_baseline(path, root, shown=path, bases=runner_dirs(os.environ))


def write_artifacts(report: Report, root: Path) -> Report:
    """Write the run directory; on failure the report says so (a pass becomes incomplete)."""
    from behavegate.report.artifacts import build_files, write_run
    from behavegate.report.result import RunIssue

    try:
        write_run(root, report.facts.run_id, build_files(report))
    except OSError as exc:
        issue = RunIssue("harness_artifact_write_failed", f"required harness artifacts were not written: {exc}")
        return records.replace(report, issues=(*report.issues, issue))
    return report


def deliver(views: Views, report: Report, root: Path, console: Console) -> None:
    """The report on the console or in ``--output``, then the CI files asked for."""
    from behavegate.github.outputs import deliver_ci

    output: str | Iterator[str]
    if views.format == "json":
        from behavegate.render import json

        output = json.pieces(report)
    elif report.shard is not None:
        from behavegate.render import shard

        output = shard.render(report)
    else:
        from behavegate.render import table

        output = table.render(report, views.detail)
    show_and_deliver(views, output, root, console, "report", lambda written: deliver_ci(views, report, written, console, root))


def _error_payload(message: str, details: list[str], status: str, shard_text: str | None) -> dict[str, Any]:
    # skylos's shape (its "status" is "incomplete" for every error); ours beside it.
    payload: dict[str, Any] = {"schema_version": 1, "kind": "agent_behavior", "status": "incomplete", "error": message}
    payload["behavegate"] = {"status": status}
    shard = _shard_named(shard_text)
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


def report_error(views: Views, root: Path, exc: Exception, console: Console, *, shard: str | None = None) -> None:
    """The error as skylos reports it: JSON (to ``--output`` or stdout) or one message.
    Its reason is always on stderr too: a run that exits 2 never leaves the console silent
    (with ``--output`` the report file was the only place it went, and a JSON report on
    stdout is usually redirected to a file)."""
    from behavegate.files import write_file

    message = str(exc)
    details = exc.details() if isinstance(exc, BehavegateError) else [message]
    text = error_text(exc)
    console.err(text)
    views = unclashed(views, exc)
    if views.format == "json":
        payload = _error_payload(message, details, error_status(exc), shard)
        if views.paths.output:
            try:
                write_file(
                    place_flag(views.paths, "output", root), json.dumps(payload, indent=2, sort_keys=True) + "\n", "--output"
                )
                return
            except (BehavegateError, OSError) as output_exc:
                payload["output_error"] = str(output_exc)
        console.json(json.dumps(payload, indent=2, sort_keys=True))
        return
    if views.paths.output:
        try:
            write_file(place_flag(views.paths, "output", root), text + "\n", "--output")
        except (BehavegateError, OSError) as output_exc:
            console.err(f"behavegate: could not write --output: {output_exc}")


def report_error_to_ci(command: TestCommand | MergeCommand, exc: Exception, console: Console, root: Path | None = None) -> None:
    """Even a run that could not start tells CI why: the JSON report, the summary,
    an annotation on each contract line at fault, and status=error (the
    configuration) or status=incomplete (the evidence)."""
    from behavegate.github.outputs import deliver_ci_error

    root = root or Path.cwd().resolve()
    from behavegate.commands.invocation import TestCommand

    # Made absolute first, as a judged run's contract path is: relative to the workspace, a contract
    # under the Action's working-directory is "sub/agent/bad.yml", where the annotation can land.
    where = display_path(Path(os.path.abspath(command.contract)), root) if command.contract else "contract"
    shard = command.shard if isinstance(command, TestCommand) else None
    problems = exc.problems[:10] if isinstance(exc, ContractError) else ()
    message = str(exc)
    details = exc.details() if isinstance(exc, BehavegateError) else [message]
    status = error_status(exc)
    views = unclashed(command.views, exc)
    deliver_ci_error(views, _error_payload(message, details, status, shard), where, problems, console, root)


def unclashed(views: Views, exc: Exception) -> Views:
    """``views`` without the files an OutputClash names: its error is not written over them."""
    if not isinstance(exc, OutputClash):
        return views
    return records.replace(views, paths=records.replace(views.paths, **dict.fromkeys(exc.flags)))


def _shard_named(text: str | None) -> tuple[int, int] | None:
    from behavegate.evidence.shard import parse_shard

    try:
        return parse_shard(text) if text else None
    except BehavegateError:
        return None
