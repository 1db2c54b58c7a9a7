"""One run as it was asked for, whichever door it came in by: the command line's argv,
the Action's inputs (which become argv: github/action.py), the Python API and the pytest
plugin each build one ``TestRequest``. Nothing in it is a default: None is "not given".
``resolve`` decides every default that depends on the contract (the scenario cap of a
version-1 or version-2 contract, an Oxy file's concurrency) and checks every value, once,
in one place, in skylos's order and words."""

from __future__ import annotations

from behavegate.commands.judge_options import JudgeOptions, validate_judge
from behavegate.commands.options import (
    RunOptions,
    check_concurrency,
    default_max_scenarios,
    scenario_selection,
    validate,
    validate_cost,
    validate_v2,
)
from behavegate.errors import UsageError
from behavegate.frozen import Frozen, field, fields
from behavegate.limits import DEFAULT_CONCURRENCY, DEFAULT_MAX_SECONDS, DEFAULT_MAX_TOKENS
from behavegate.model import Contract, TagGate

RUN_OPTION_NAMES = frozenset(item.name for item in fields(RunOptions))


class TestRequest(Frozen):
    """What the person running chose (None, empty or False: not given)."""

    __test__ = False  # not a pytest test class, whatever its name says

    scenarios: tuple[str, ...] | None = None
    tags: tuple[str, ...] = ()
    endpoint: str | None = None
    auth_env: str | None = None
    allow_remote: bool = False
    allow_contract_endpoint: bool = False
    concurrency: int | None = None
    max_scenarios: int | None = None
    max_seconds: float | None = None
    max_tokens: int | None = None
    max_assertions: int | None = None
    retries: int | None = None
    max_total_tokens: int | None = None
    max_cost: float | None = None
    runs: int | None = None
    min_pass_rate: float | None = None
    threshold_mode: str | None = None
    gate_tags: tuple[TagGate, ...] = ()
    artifacts: bool = True
    judge: JudgeOptions = field(default_factory=JudgeOptions)


def run_seconds(given: float | None) -> float:
    """The run's wall-time budget: as given, else limits.py's."""
    return DEFAULT_MAX_SECONDS if given is None else given


def resolve(request: TestRequest, contract: Contract, *, offline: bool, suite_tags: frozenset[str] = frozenset()) -> RunOptions:
    """The run's options for ``contract``: every default decided here, every value checked.
    ``suite_tags``: the tags of a suite's other contracts (a --gate-tag applies where carried)."""
    oxy = contract.oxy
    # What the request names as RunOptions does is taken as given; the rest is decided here.
    given = {item.name: getattr(request, item.name) for item in fields(request) if item.name in RUN_OPTION_NAMES}
    options = RunOptions(
        **{
            **given,
            "scenarios": scenario_selection(list(request.scenarios) if request.scenarios is not None else None),
            "max_scenarios": default_max_scenarios(contract.version) if request.max_scenarios is None else request.max_scenarios,
            "max_seconds": run_seconds(request.max_seconds),
            "max_tokens": DEFAULT_MAX_TOKENS if request.max_tokens is None else request.max_tokens,
            "concurrency": request.concurrency
            if request.concurrency is not None
            else oxy.concurrency
            if oxy
            else DEFAULT_CONCURRENCY,
            "suite_tags": suite_tags,
        }
    )
    if isinstance(request.scenarios, str) or isinstance(request.tags, str):
        raise UsageError("scenarios and tags take a list of ids or tags, not one string")
    validate(options, offline=offline, version=contract.version)
    validate_judge(options.judge, offline=offline, version=contract.version)
    validate_v2(options, contract)
    validate_cost(options, contract)
    check_concurrency(options.concurrency)
    return options
