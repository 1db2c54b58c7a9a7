"""behavegate from Python: load a contract, gather evidence, get the typed Report.

    from behavegate.api import load_contract, run_callable

    report = run_callable(load_contract("contract.yml"), my_agent)
    assert report.status == "pass", [r.scenario.id for r in report.results if r.status != "pass"]

The same functions as the command line, in the same order, with the same checks:
the contract loader, the run options' validation and scenario selection, the live
conversation loop with its budgets, the judge and the report builder
(``commands/``); nothing here judges or renders anything itself. Every function
returns a :class:`Report` (``report.status``, ``report.results``: each scenario's
verdicts and attempts) or raises :class:`BehavegateError` for what the command
line reports as a configuration error or an incomplete run (exit 2). Nothing is
printed; no evidence artifacts are written unless asked for.
"""

import hashlib as _hashlib
import json as _json
import os as _os
from collections.abc import Iterable as _Iterable
from collections.abc import Mapping as _Mapping
from collections.abc import Sequence as _Sequence
from pathlib import Path as _Path
from typing import Any as _Any

from behavegate import limits as _limits
from behavegate.commands import options as _options
from behavegate.commands.clock import Clock as _Clock
from behavegate.commands.judge_options import JudgeOptions
from behavegate.errors import BehavegateError
from behavegate.errors import UsageError as _UsageError
from behavegate.evidence.in_process import Agent, Call, Reply
from behavegate.judged import JudgeEvidence, JudgeVote
from behavegate.model import Attempt, Contract, Observation, ScenarioResult, ToolCall, Verdict
from behavegate.model import ObservationSet as _ObservationSet
from behavegate.report.result import Report

__all__ = [
    "Agent",
    "Attempt",
    "BehavegateError",
    "Call",
    "Contract",
    "JudgeEvidence",
    "JudgeOptions",
    "JudgeVote",
    "Observation",
    "Reply",
    "Report",
    "ScenarioResult",
    "ToolCall",
    "Verdict",
    "evaluate",
    "load_contract",
    "run_callable",
    "run_live",
]

_PathLike = str | _os.PathLike[str]


def load_contract(path: "_PathLike", *, root: "_PathLike | None" = None, max_assertions: int | None = None) -> Contract:
    """Read and validate a contract (version 1, 2 or a golden-query file), includes resolved.

    ``root``: the project the contract and its includes must stay inside (default: the
    current directory, or the contract's folder when it lies outside it)."""
    from behavegate.contract.load import load_contract as load

    if max_assertions is not None and not 1 <= max_assertions <= _limits.MAX_ASSERTIONS_CEILING:
        raise _UsageError(f"--max-assertions must be between 1 and {_limits.MAX_ASSERTIONS_CEILING}")
    contract = load(_Path(path), _project_root(path, root), max_assertions=max_assertions)
    if max_assertions is not None and contract.version < 2:
        raise _UsageError("--max-assertions needs a version 2 contract: version 1 keeps skylos's cap of 250 assertions")
    return contract


def evaluate(
    contract: Contract,
    observations: "_PathLike | _Mapping[str, Observation | _Sequence[Observation]]",
    *,
    scenarios: _Iterable[str] | None = None,
    tags: _Iterable[str] = (),
    runs: int | None = None,
    min_pass_rate: float | None = None,
    threshold_mode: str | None = None,
    max_scenarios: int | None = None,
) -> Report:
    """Judge captured evidence: an observation file (as ``--observations``), or observations
    by scenario id (several per id: the attempts of a version-2 scenario)."""
    from behavegate.commands.offline import run_offline
    from behavegate.model import Timing

    clock = _Clock()
    if isinstance(observations, _Mapping):
        found = _in_memory(observations)
    else:
        from behavegate.evidence.observation_file import load_observations
        from behavegate.files import runner_dirs

        root = contract.project_root
        turns = {s.id: s.max_turns for s in contract.scenarios} if contract.version >= 2 else None
        found = load_observations(
            _Path(observations), root, attempts=contract.version >= 2, bases=runner_dirs(_os.environ), max_turns=turns
        )
    if runs is None:
        runs = found.runs  # a recording made with --runs N replays as N attempts
    options = _run_options(contract, scenarios, tags, runs, min_pass_rate, threshold_mode, max_scenarios, offline=True)
    selected, skipped, shown = _select(contract, options, found)
    facts = clock.facts(options.max_scenarios, options.max_seconds)
    timings = (Timing(facts.started_at, facts.ended_at, 0),) * len(selected.scenarios)
    report = run_offline(
        selected,
        found,
        options,
        facts,
        display_path=shown,
        skipped=skipped,
        timings=timings,
        provenance=_memory_provenance(found),
    )
    _options.check_run_budget(clock.elapsed(), options.max_seconds, version=contract.version, live=False)
    return report


def run_live(
    contract: Contract,
    *,
    endpoint: str | None = None,
    allow_remote: bool = False,
    allow_contract_endpoint: bool = False,
    allow_hosts: _Iterable[str] = (),
    auth_env: str | None = None,
    concurrency: int | None = None,
    max_seconds: float | None = None,
    max_tokens: int | None = None,
    max_total_tokens: int | None = None,
    max_cost: float | None = None,
    scenarios: _Iterable[str] | None = None,
    tags: _Iterable[str] = (),
    runs: int | None = None,
    min_pass_rate: float | None = None,
    threshold_mode: str | None = None,
    max_scenarios: int | None = None,
    judge: JudgeOptions | None = None,
) -> Report:
    """Ask a running OpenAI-compatible endpoint, with the command line's trust rules: the
    contract's loopback endpoint needs ``allow_contract_endpoint``, a CI service host
    ``allow_hosts``, anything else ``endpoint`` with ``allow_remote`` over HTTPS. Nothing is
    sent before those checks pass. ``judge``: where ``response.judge`` checks are asked
    (``JudgeOptions(endpoint=..., model=...)``, the ``--judge-*`` flags; the judge endpoint
    under the same trust rules, ``allow_hosts`` shared). ``max_total_tokens``, ``max_cost``:
    the run's spend budgets (``--max-total-tokens``, ``--max-cost``)."""
    from behavegate.commands.live_run import gather, trusted_settings

    clock = _Clock()
    options, (selected, skipped, shown) = _prepared(
        contract,
        concurrency,
        scenarios,
        tags,
        runs,
        min_pass_rate,
        threshold_mode,
        max_scenarios,
        endpoint=endpoint,
        auth_env=auth_env,
        allow_remote=allow_remote,
        allow_contract_endpoint=allow_contract_endpoint,
        max_seconds=max_seconds,
        max_tokens=max_tokens,
        judge=judge or JudgeOptions(),
        max_total_tokens=max_total_tokens,
        max_cost=max_cost,
    )
    settings = trusted_settings(selected, options, tuple(allow_hosts), options.concurrency, clock.monotonic)
    report = gather(selected, options, clock, settings, display=shown, skipped=skipped)
    _options.check_run_budget(clock.elapsed(), options.max_seconds, version=contract.version, live=True)
    return report


def run_callable(
    contract: Contract,
    agent: Agent,
    *,
    concurrency: int | None = None,
    max_seconds: float | None = None,
    max_tokens: int | None = None,
    max_total_tokens: int | None = None,
    max_cost: float | None = None,
    scenarios: _Iterable[str] | None = None,
    tags: _Iterable[str] = (),
    runs: int | None = None,
    min_pass_rate: float | None = None,
    threshold_mode: str | None = None,
    max_scenarios: int | None = None,
    judge: JudgeOptions | None = None,
    allow_hosts: _Iterable[str] = (),
) -> Report:
    """Ask an in-process agent: ``agent(messages, tools)``, sync or async, returning a
    :class:`Reply` (or its answer as a str, or a Chat Completions dict). The live
    conversation loop and budgets apply: ``agent.timeout_seconds`` per turn,
    ``max_seconds`` for the run, the scenario's ``max_turns``. An agent that raises, hangs
    or returns something unreadable leaves that attempt incomplete; the run goes on.
    ``judge``: where ``response.judge`` checks are asked (see :func:`run_live`; ``allow_hosts``
    applies to the judge endpoint)."""
    from behavegate.commands.live_run import run_callable as gather_callable

    if not callable(agent):
        raise _UsageError(f"agent must be callable, got {type(agent).__name__}")
    clock = _Clock()
    options, (selected, skipped, shown) = _prepared(
        contract,
        concurrency,
        scenarios,
        tags,
        runs,
        min_pass_rate,
        threshold_mode,
        max_scenarios,
        max_seconds=max_seconds,
        max_tokens=max_tokens,
        judge=judge or JudgeOptions(),
        max_total_tokens=max_total_tokens,
        max_cost=max_cost,
    )
    report = gather_callable(selected, options, clock, agent, options.concurrency, shown, skipped, tuple(allow_hosts))
    _options.check_run_budget(clock.elapsed(), options.max_seconds, version=contract.version, live=True)
    return report


# --- shared with nothing but the functions above ---------------------------------------------


def _project_root(path: "_PathLike", root: "_PathLike | None") -> _Path:
    if root is not None:
        return _Path(root).resolve()
    cwd = _Path.cwd().resolve()
    folder = (cwd / path).resolve().parent
    return cwd if folder == cwd or cwd in folder.parents else folder


def _prepared(
    contract: Contract,
    concurrency: int | None,
    scenarios: _Iterable[str] | None,
    tags: _Iterable[str],
    runs: int | None,
    min_pass_rate: float | None,
    threshold_mode: str | None,
    max_scenarios: int | None,
    **live: _Any,
) -> tuple[_options.RunOptions, tuple[Contract, tuple[_Any, ...], str]]:
    """A live or in-process run's options, checked, and its selection (the pytest plugin
    checks a whole contract with this before the first request)."""
    options = _run_options(
        contract, scenarios, tags, runs, min_pass_rate, threshold_mode, max_scenarios, concurrency=concurrency, **live
    )
    return options, _select(contract, options, None)


def _run_options(
    contract: Contract,
    scenarios: _Iterable[str] | None,
    tags: _Iterable[str],
    runs: int | None,
    min_pass_rate: float | None,
    threshold_mode: str | None,
    max_scenarios: int | None,
    *,
    offline: bool = False,
    **live: _Any,
) -> _options.RunOptions:
    """The command line's request (commands/request.py), resolved for the contract as the
    command line resolves it: the same defaults, the same checks, in its order."""
    from behavegate.commands.request import TestRequest, resolve

    if isinstance(scenarios, str) or isinstance(tags, str):
        raise _UsageError("scenarios and tags take a list of ids or tags, not one string")
    request = TestRequest(
        scenarios=tuple(scenarios) if scenarios is not None else None,
        tags=tuple(tags),
        max_scenarios=max_scenarios,
        artifacts=False,
        runs=runs,
        min_pass_rate=min_pass_rate,
        threshold_mode=threshold_mode,
        **live,
    )
    return resolve(request, contract, offline=offline)


def _select(
    contract: Contract, options: _options.RunOptions, observations: _ObservationSet | None
) -> tuple[Contract, tuple[_Any, ...], str]:
    """The selected contract, the scenarios left out, and the contract's path as shown."""
    from behavegate.commands.test import display_path

    selected = _options.select(contract, options, observations)
    chosen = set(selected.scenario_ids())
    skipped = tuple(s for s in contract.scenarios if s.id not in chosen)
    return selected, skipped, display_path(contract.path, contract.project_root)


def _in_memory(observations: _Mapping[str, Observation | _Sequence[Observation]]) -> _ObservationSet:
    attempts: dict[str, tuple[Observation, ...]] = {}
    for key, value in observations.items():
        group = (value,) if isinstance(value, Observation) else tuple(value)
        if not group or not all(isinstance(o, Observation) for o in group):
            raise _UsageError(f"observations[{key!r}] must be an Observation or a non-empty list of them")
        attempts[key] = tuple(o if o.scenario_id == key else _renamed(o, key) for o in group)
    text = _json.dumps({key: [o.as_dict_v2() for o in group] for key, group in attempts.items()}, sort_keys=True)
    digest = _hashlib.sha256(text.encode("utf-8")).hexdigest()
    first = {key: group[0] for key, group in attempts.items()}
    return _ObservationSet(path=_Path("<python>"), digest=digest, observations=first, version=2, attempts=attempts)


def _renamed(observation: Observation, key: str) -> Observation:
    from behavegate.frozen import replace

    return replace(observation, scenario_id=key)


def _memory_provenance(found: _ObservationSet) -> dict[str, _Any] | None:
    if str(found.path) != "<python>":
        return None  # an observation file: run_offline's own provenance
    return {"kind": "python_observations", "trust": "unverified_fixture", "schema_version": 2, "source_digest": found.digest}
