"""``behavegate watch``: ``test`` run again whenever the contract, its included files, its
datasets or the observation file change, for the loop of writing a contract.

The files are polled (size and modification time, every ``interval`` seconds): no new
dependency, and the same on every platform. What is watched is read again after each run,
so an include added to the contract is watched from the next run on. A snapshot is taken
before each run: a file saved while the run was going starts the next one."""

from __future__ import annotations

import math
import os
import time
from collections.abc import Callable, Iterable
from pathlib import Path

from behavegate.commands import test
from behavegate.commands.invocation import TestCommand, WatchCommand
from behavegate.errors import ExitCode
from behavegate.github.console import Console

Stamp = tuple[str, int, int] | tuple[str, None, None]  # path, size, mtime_ns (None: missing)
MIN_INTERVAL, MAX_INTERVAL = 0.05, 60.0
MAX_WATCHED_BYTES = 16 * 1024 * 1024  # a contract read for its file names after it failed to load


def run(command: WatchCommand, console: Console, sleep: Callable[[float], None] = time.sleep) -> int:
    """Exit 0 on Ctrl-C; with ``max_runs`` (--once, --max-runs), the last run's status.
    ``sleep``: between looks (tests pass one that edits a file)."""
    interval = command.interval
    if isinstance(interval, bool) or not math.isfinite(interval) or not MIN_INTERVAL <= interval <= MAX_INTERVAL:
        console.err(f"behavegate: configuration error: --interval must be between {MIN_INTERVAL} and {MAX_INTERVAL:g} seconds")
        return ExitCode.ERROR
    if command.max_runs is not None and command.max_runs < 1:
        console.err("behavegate: configuration error: --max-runs must be at least 1")
        return ExitCode.ERROR
    runs, status = 0, int(ExitCode.PASS)
    try:
        while True:
            files = watched(command.test, Path.cwd())
            before = stamps(files)
            status = test.run(command.test, console)
            runs += 1
            if command.max_runs is not None and runs >= command.max_runs:
                return status
            console.err(
                f"behavegate watch: run {runs} exited {status}; watching {len(files)} file(s) for changes (Ctrl-C to stop)"
            )
            while stamps(files) == before:
                sleep(interval)
            console.err("behavegate watch: a watched file changed; running again")
    except KeyboardInterrupt:
        console.err("behavegate watch: stopped")
        return ExitCode.PASS


def stamps(files: Iterable[Path]) -> tuple[Stamp, ...]:
    """What a change is: a file's size or modification time, or its appearing or going."""
    found: list[Stamp] = []
    for path in files:
        try:
            info = os.stat(path)
        except OSError:
            found.append((str(path), None, None))
            continue
        found.append((str(path), info.st_size, info.st_mtime_ns))
    return tuple(found)


def watched(command: TestCommand, cwd: Path) -> tuple[Path, ...]:
    """The contract files the run reads (named, or discovered), the files they include
    (scenario libraries, golden-set datasets) and the recorded evidence it judges. A contract
    that does not load is watched itself: fixing it is the change awaited."""
    from behavegate.commands.suite_run import contract_files
    from behavegate.files import discover_contract

    if command.contracts:
        contracts = contract_files(list(command.contracts))
    else:
        found = discover_contract(cwd)
        contracts = [found[0]] if found is not None else []
    files: dict[str, Path] = {}
    for path in contracts:
        files.setdefault(str(path), path)
        for included in _included(path, cwd):
            files.setdefault(str(included), included)
    for name in (command.evidence.observations, *command.evidence.traces):
        if name:
            files.setdefault(name, Path(name))
    return tuple(files.values())


def _included(path: Path, cwd: Path) -> list[Path]:
    from behavegate.contract.load import load_contract
    from behavegate.errors import BehavegateError

    try:
        names: Iterable[str] = load_contract(path, cwd).included
    except (BehavegateError, OSError):
        names = _named_files(path)  # a broken include fails the load: fixing it is the change awaited
    # Built-in libraries (builtin:NAME) ship with behavegate: they do not change under a watch.
    return [path.parent / name for name in names if not name.startswith("builtin:")]


def _named_files(path: Path) -> list[str]:
    """The files a contract that does not load names (``include:``, ``queries: FILE``), read
    as plain YAML; none when even that fails."""
    import yaml

    from behavegate.files import read_project_text

    try:
        _, text = read_project_text(path, path.parent, "Contract", MAX_WATCHED_BYTES)
        data = yaml.safe_load(text)
    except Exception:  # any unreadable contract: only the file itself is watched
        return []
    if not isinstance(data, dict):
        return []
    included = data.get("include")
    names = [name for name in included if isinstance(name, str)] if isinstance(included, list) else []
    queries = data.get("queries")
    return [*names, queries] if isinstance(queries, str) else names
