"""``behavegate test A.yml B.yml`` or ``behavegate test contracts/``: a suite.

A thin layer over the single-contract path: each contract is loaded, then
judged by ``commands.test`` with the same flags and evidence, writes its own
run directory, and the reports are handed together (a :class:`SuiteRun`) to
every view. One contract that cannot be loaded or judged stops the whole run,
named as a single run names it."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from behavegate.commands.invocation import SuiteShare, TestCommand
from behavegate.commands.request import run_seconds
from behavegate.errors import BehavegateError, RunIncomplete, UsageError
from behavegate.frozen import replace
from behavegate.github.console import Console
from behavegate.model import Contract, GateResult, ObservationSet, Scenario

if TYPE_CHECKING:
    from behavegate.report.result import Report
    from behavegate.report.suite import SuiteRun

SUFFIXES = (".yml", ".yaml")


class Judge(Protocol):
    def __call__(
        self,
        command: TestCommand,
        contract_path: Path,
        root: Path,
        console: Console,
        *,
        loaded: Contract,
        others: tuple[Scenario, ...],
    ) -> Report: ...


class Check(Protocol):
    def __call__(
        self,
        command: TestCommand,
        contract_path: Path,
        root: Path,
        console: Console,
        *,
        loaded: Contract,
        others: tuple[Scenario, ...],
    ) -> None: ...


class Stop(Protocol):
    def __call__(self, at_fault: TestCommand, exc: BehavegateError | OSError) -> int: ...


def single_only(command: TestCommand) -> list[str]:
    """The flags given that name one contract's scenarios, baseline or shard, or one file a live run writes."""
    given = {
        "--scenario": command.request.scenarios,
        "--baseline": command.gating.baseline,
        "--shard": command.shard,
        "--save-observations": command.views.paths.save_observations,
        "--case": command.cases,
    }
    return [flag for flag, value in given.items() if value]


def contract_files(named: list[str]) -> list[Path]:
    """The contract files the arguments name, in order: a folder stands for its
    ``*.yml``/``*.yaml`` files (sorted, no hidden entries, no symlinks); the same
    file named twice counts once."""
    from behavegate.files import walk_files

    found: list[Path] = []
    seen: set[str] = set()
    for argument in named:
        path = Path(argument)
        # A folder without contract files stays itself: refused as skylos refuses it (not a regular file).
        listed = (list(walk_files(path, SUFFIXES)) if path.is_dir() else []) or [path]
        for file in listed:
            key = os.path.realpath(file)
            if key not in seen:
                seen.add(key)
                found.append(file)
    return found


def own_observations(observations: ObservationSet, contract: Contract, others: tuple[Scenario, ...]) -> ObservationSet:
    """One contract's part of a suite's observation file: its own scenario ids. An
    id in no contract of the suite stays, so the contract's check still refuses it."""
    theirs = {s.id for s in others} - set(contract.scenario_ids())
    return replace(
        observations,
        observations={k: v for k, v in observations.observations.items() if k not in theirs},
        attempts={k: v for k, v in observations.attempts.items() if k not in theirs},
    )


def run_suite(
    command: TestCommand, files: list[Path], root: Path, console: Console, judge: Judge, check: Check, stop: Stop
) -> int:
    """``judge``: the single-contract path (``commands.test``), given each contract loaded;
    ``check``: its checks alone, run on every contract before the first is judged, so a
    file the run cannot serve (no endpoint, no judge) stops it before any request;
    ``stop``: how a run that could not be judged ends, given the contract at fault."""
    at_fault = command  # the CI error annotations name the contract at fault
    try:
        return _run_suite(command, files, root, console, judge, check)
    except _Stopped as stopped:
        at_fault, error = replace(command, contract=str(stopped.path)), stopped.error
    except (BehavegateError, OSError) as exc:
        error = exc
    return stop(at_fault, error)


def _run_suite(command: TestCommand, files: list[Path], root: Path, console: Console, judge: Judge, check: Check) -> int:
    from behavegate.commands.output_paths import check_outputs
    from behavegate.contract.load import load_contract

    used = single_only(command)
    if used:
        raise UsageError(f"{', '.join(used)} takes one contract; name one contract file to use it")
    check_outputs(command.views.paths, root)
    contracts = []
    for path in files:
        with _naming(path, console):
            contracts.append(load_contract(path, root, max_assertions=command.request.max_assertions))
    # Oxy's --threshold-mode average across files: the floor is on the mean of the files'
    # scores, so each file reports its score and the suite holds the floor.
    oxy_floor = _oxy_floor(command, contracts)
    suite = replace(command, suite=SuiteShare(oxy_floor=oxy_floor is not None))
    for index, (path, contract) in enumerate(zip(files, contracts, strict=True)):
        with _naming(path, console):
            check(_own(suite, path), path, root, console, loaded=contract, others=_others(contracts, index))
    reports: list[Report] = []
    budget, started = run_seconds(command.request.max_seconds), time.monotonic()
    for index, (path, contract) in enumerate(zip(files, contracts, strict=True)):
        # --max-seconds is the whole suite's budget: each contract gets what the ones before it left.
        left = budget - (time.monotonic() - started)
        if left <= 0:
            with _naming(path, console):
                raise RunIncomplete(f"the suite's time budget of {budget:g}s (--max-seconds) was spent before this contract")
        # --max-total-tokens and --max-cost are the whole suite's too: each contract starts from what the ones before it used.
        own = _own(suite, path, left=left, spent=_spent(reports))
        with _naming(path, console):
            reports.append(judge(own, path, root, console, loaded=contract, others=_others(contracts, index)))
    from behavegate.report.suite import SuiteRun, exit_status

    run = SuiteRun(tuple(reports), _oxy_gates(reports, oxy_floor))
    with _naming(files[-1], console, announce=False):  # an error delivering still names the last contract, as it ran last
        deliver_suite(command, run, root, console)
    return exit_status(run)


def _own(suite: TestCommand, path: Path, *, left: float | None = None, spent: tuple[int, float] = (0, 0.0)) -> TestCommand:
    """One contract's value in the suite: its path, and what the contracts before it left of
    the shared budgets (``left``: seconds; ``spent``: tokens and USD)."""
    shared = replace(suite.suite, spent_tokens=spent[0], spent_cost=spent[1])
    own = replace(suite, contract=str(path), suite=shared)
    return own if left is None else replace(own, request=replace(own.request, max_seconds=left))


def _spent(reports: list[Report]) -> tuple[int, float]:
    """The tokens and USD the finished contracts of a suite reported (report/usage.py)."""
    used = [report.derived.usage for report in reports if report.derived.usage is not None]
    return sum(u.total_tokens for u in used), sum(u.cost or 0.0 for u in used)


def _others(contracts: list[Contract], index: int) -> tuple[Scenario, ...]:
    return tuple(s for i, other in enumerate(contracts) if i != index for s in other.scenarios)


def deliver_suite(command: TestCommand, suite: SuiteRun, root: Path, console: Console) -> None:
    """A suite's views, as :func:`deliver` gives a single run's."""
    from behavegate.commands.output_paths import show_and_deliver
    from behavegate.github.outputs import deliver_suite_ci
    from behavegate.render import suite as suite_views

    views = command.views
    output = suite_views.report_json(suite) if views.format == "json" else suite_views.table(suite, views.detail)
    show_and_deliver(
        views, output, root, console, "suite report", lambda written: deliver_suite_ci(views, suite, written, console, root)
    )


def _oxy_floor(command: TestCommand, contracts: list[Contract]) -> float | None:
    """The floor the suite holds for its Oxy files: ``--min-pass-rate`` in ``average`` mode over two or more."""
    several = sum(contract.oxy is not None for contract in contracts) > 1
    request = command.request
    if not several or request.min_pass_rate is None or request.threshold_mode == "all":
        return None
    return float(request.min_pass_rate)


def _oxy_gates(reports: list[Report], floor: float | None) -> tuple[GateResult, ...]:
    from behavegate.judge.oxy_score import file_score, floor_gate

    if floor is None:
        return ()
    files = [file_score(report.results) for report in reports if report.contract.oxy is not None]
    observed = {"files": len(files), "scores": [round(one.score, 6) for one in files]}
    return (floor_gate("min_pass_rate[oxy files]", files, floor, observed),)


class _Stopped(Exception):
    """An error that stopped the suite, and the contract it stopped at."""

    def __init__(self, error: BehavegateError | OSError, path: Path) -> None:
        super().__init__(str(error))
        self.error, self.path = error, path


@contextmanager
def _naming(path: Path, console: Console, *, announce: bool = True) -> Iterator[None]:
    """An error stops the suite; the console says first which contract it came from."""
    try:
        yield
    except (BehavegateError, OSError) as exc:
        if announce:
            console.err(f"behavegate: suite stopped at contract {path}")
        raise _Stopped(exc, path) from exc
