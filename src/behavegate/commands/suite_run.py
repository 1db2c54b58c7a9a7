"""``behavegate test A.yml B.yml`` or ``behavegate test contracts/``: a suite.

A thin layer over the single-contract path: each contract is loaded, then
judged by ``commands.test`` with the same flags and evidence, writes its own
run directory, and the reports are handed together (a :class:`SuiteRun`) to
every view. One contract that cannot be loaded or judged stops the whole run,
named as a single run names it."""

from __future__ import annotations

import argparse
import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Protocol

from behavegate.commands.request import run_seconds
from behavegate.errors import BehavegateError, RunIncomplete, UsageError
from behavegate.github.console import Console
from behavegate.model import Contract, GateResult, ObservationSet, Scenario
from behavegate.report.result import Report
from behavegate.report.suite import SuiteRun, exit_status

SUFFIXES = (".yml", ".yaml")


class Judge(Protocol):
    def __call__(
        self,
        args: argparse.Namespace,
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
        args: argparse.Namespace,
        contract_path: Path,
        root: Path,
        console: Console,
        *,
        loaded: Contract,
        others: tuple[Scenario, ...],
    ) -> None: ...


# Flags that name one contract's scenarios, baseline or shard, or one file a live run writes.
SINGLE_ONLY = {
    "scenarios": "--scenario",
    "baseline": "--baseline",
    "shard": "--shard",
    "save_observations": "--save-observations",
    "case": "--case",
}


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
    from behavegate.frozen import replace

    theirs = {s.id for s in others} - set(contract.scenario_ids())
    return replace(
        observations,
        observations={k: v for k, v in observations.observations.items() if k not in theirs},
        attempts={k: v for k, v in observations.attempts.items() if k not in theirs},
    )


def run_suite(args: argparse.Namespace, files: list[Path], root: Path, console: Console, judge: Judge, check: Check) -> int:
    """``judge``: the single-contract path (``commands.test``), given each contract loaded;
    ``check``: its checks alone, run on every contract before the first is judged, so a
    file the run cannot serve (no endpoint, no judge) stops it before any request."""
    from behavegate.commands.output_paths import check_outputs
    from behavegate.contract.load import load_contract

    used = [flag for name, flag in SINGLE_ONLY.items() if getattr(args, name, None)]
    if used:
        raise UsageError(f"{', '.join(used)} takes one contract; name one contract file to use it")
    check_outputs(args, root)
    contracts = []
    for path in files:
        args.contract = str(path)  # the CI error annotations name the contract at fault
        with _naming(path, console):
            contracts.append(load_contract(path, root, max_assertions=args.max_assertions))
    # Oxy's --threshold-mode average across files: the floor is on the mean of the files'
    # scores, so each file reports its score and the suite holds the floor.
    oxy_floor = _oxy_floor(args, contracts)
    args.oxy_suite_floor = oxy_floor is not None
    for index, (path, contract) in enumerate(zip(files, contracts, strict=True)):
        args.contract = str(path)
        with _naming(path, console):
            check(args, path, root, console, loaded=contract, others=_others(contracts, index))
    reports: list[Report] = []
    budget, started = run_seconds(args.max_seconds), time.monotonic()
    for index, (path, contract) in enumerate(zip(files, contracts, strict=True)):
        args.contract = str(path)
        # --max-seconds is the whole suite's budget: each contract gets what the ones before it left.
        left = budget - (time.monotonic() - started)
        if left <= 0:
            with _naming(path, console):
                raise RunIncomplete(f"the suite's time budget of {budget:g}s (--max-seconds) was spent before this contract")
        args.max_seconds = left
        # --max-total-tokens and --max-cost are the whole suite's too: each contract starts from what the ones before it used.
        args.spent_before = _spent(reports)
        with _naming(path, console):
            reports.append(judge(args, path, root, console, loaded=contract, others=_others(contracts, index)))
    args.max_seconds = budget
    args.spent_before = (0, 0.0)
    suite = SuiteRun(tuple(reports), _oxy_gates(reports, oxy_floor))
    deliver_suite(args, suite, root, console)
    return exit_status(suite)


def _spent(reports: list[Report]) -> tuple[int, float]:
    """The tokens and USD the finished contracts of a suite reported (report/usage.py)."""
    used = [report.derived.usage for report in reports if report.derived.usage is not None]
    return sum(u.total_tokens for u in used), sum(u.cost or 0.0 for u in used)


def _others(contracts: list[Contract], index: int) -> tuple[Scenario, ...]:
    return tuple(s for i, other in enumerate(contracts) if i != index for s in other.scenarios)


def deliver_suite(args: argparse.Namespace, suite: SuiteRun, root: Path, console: Console) -> None:
    """A suite's views, as :func:`deliver` gives a single run's."""
    from behavegate.commands.output_paths import detail, show_and_deliver
    from behavegate.github.outputs import deliver_suite_ci
    from behavegate.render import suite as views

    output = views.report_json(suite) if args.format == "json" else views.table(suite, detail(args))
    show_and_deliver(
        args, output, root, console, "suite report", lambda written: deliver_suite_ci(args, suite, written, console, root)
    )


def _oxy_floor(args: argparse.Namespace, contracts: list[Contract]) -> float | None:
    """The floor the suite holds for its Oxy files: ``--min-pass-rate`` in ``average`` mode over two or more."""
    several = sum(contract.oxy is not None for contract in contracts) > 1
    if not several or args.min_pass_rate is None or args.threshold_mode == "all":
        return None
    return float(args.min_pass_rate)


def _oxy_gates(reports: list[Report], floor: float | None) -> tuple[GateResult, ...]:
    from behavegate.judge.oxy_score import file_score, floor_gate

    if floor is None:
        return ()
    files = [file_score(report.results) for report in reports if report.contract.oxy is not None]
    observed = {"files": len(files), "scores": [round(one.score, 6) for one in files]}
    return (floor_gate("min_pass_rate[oxy files]", files, floor, observed),)


@contextmanager
def _naming(path: Path, console: Console) -> Iterator[None]:
    """An error stops the suite; the console says first which contract it came from."""
    try:
        yield
    except (BehavegateError, OSError):
        console.err(f"behavegate: suite stopped at contract {path}")
        raise
