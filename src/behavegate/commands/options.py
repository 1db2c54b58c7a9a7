"""Run options and their validation, in skylos's order and words."""

from __future__ import annotations

import math
from typing import Any

from behavegate.commands.judge_options import JudgeOptions
from behavegate.errors import RunIncomplete, UsageError
from behavegate.frozen import Frozen, field, replace
from behavegate.limits import (
    DEFAULT_CONCURRENCY,
    DEFAULT_MAX_SCENARIOS,
    DEFAULT_MAX_SECONDS,
    DEFAULT_MAX_TOKENS,
    MAX_CONCURRENCY,
    MAX_OUTPUT_TOKENS,
    MAX_RETRIES,
    MAX_RUN_COST,
    MAX_RUN_SCENARIOS,
    MAX_RUN_SECONDS,
    MAX_RUN_TOKENS,
    V2_MAX_SCENARIOS,
)
from behavegate.model import Contract, Gates, ObservationSet, TagGate


class RunOptions(Frozen):
    scenarios: tuple[str, ...] | None = None
    endpoint: str | None = None
    auth_env: str | None = None
    allow_remote: bool = False
    allow_contract_endpoint: bool = False
    max_scenarios: int = DEFAULT_MAX_SCENARIOS
    max_seconds: float = DEFAULT_MAX_SECONDS
    max_tokens: int = DEFAULT_MAX_TOKENS
    concurrency: int = DEFAULT_CONCURRENCY  # live requests in flight (an Oxy file's settings.concurrency)
    artifacts: bool = True
    # version 2
    runs: int | None = None
    tags: tuple[str, ...] = ()
    min_pass_rate: float | None = None
    threshold_mode: str | None = None
    gate_tags: tuple[TagGate, ...] = ()  # --gate-tag TAG=RATE: over gates.by_tag's rate for TAG
    suite_tags: frozenset[str] = frozenset()  # the tags of a suite's other contracts (--gate-tag applies where carried)
    max_assertions: int | None = None  # --max-assertions (version 2): the contract's assertion cap
    judge: JudgeOptions = field(default_factory=JudgeOptions)  # response.judge: where it is asked
    retries: int | None = None  # --retries (version 2): None = absent, never retried
    max_total_tokens: int | None = None  # --max-total-tokens (live): the whole run's; None = no budget
    max_cost: float | None = None  # --max-cost (version 2 live, USD by agent.pricing); None = no budget

    def gates(self, contract_gates: Gates) -> Gates:
        """The contract's suite gates with command-line overrides applied."""
        return replace(
            contract_gates,
            min_pass_rate=self.min_pass_rate if self.min_pass_rate is not None else contract_gates.min_pass_rate,
            threshold_mode=self.threshold_mode or contract_gates.threshold_mode,
            by_tag=_tag_gates(contract_gates.by_tag, self.gate_tags),
        )


def _tag_gates(written: tuple[TagGate, ...], given: tuple[TagGate, ...]) -> tuple[TagGate, ...]:
    merged = {gate.tag: gate for gate in written}
    for gate in given:
        merged[gate.tag] = replace(merged.get(gate.tag, gate), min_pass_rate=gate.min_pass_rate)
    return tuple(merged.values())


def scenario_selection(values: list[str] | None) -> tuple[str, ...] | None:
    """``--scenario`` values stripped and de-duplicated, first occurrence kept."""
    if not values:
        return None
    selected = tuple(dict.fromkeys(v.strip() for v in values if v.strip()))
    if not selected:
        raise UsageError("--scenario requires a non-empty scenario id")
    return selected


def validate(options: RunOptions, *, offline: bool, version: int = 1) -> None:
    endpoint = options.endpoint
    if endpoint is not None and (not endpoint.strip() or endpoint != endpoint.strip()):
        raise UsageError("--endpoint must be a non-empty URL without surrounding whitespace")
    live_only = (
        endpoint is not None,
        bool(options.auth_env),
        options.allow_remote,
        options.allow_contract_endpoint,
        options.retries is not None,
        options.max_total_tokens is not None,
        options.max_cost is not None,
    )
    if offline and any(live_only):
        raise UsageError("--observations cannot be combined with live endpoint options")
    _integer_between(options.max_scenarios, 1, V2_MAX_SCENARIOS if version >= 2 else MAX_RUN_SCENARIOS, "--max-scenarios")
    seconds: Any = options.max_seconds
    if isinstance(seconds, bool) or not isinstance(seconds, int | float):
        raise UsageError("--max-seconds must be a number")
    if not math.isfinite(seconds):
        raise UsageError("--max-seconds must be finite")
    if seconds <= 0 or seconds > MAX_RUN_SECONDS:
        raise UsageError(f"--max-seconds must be between 0 and {int(MAX_RUN_SECONDS)}")
    _integer_between(options.max_tokens, 1, MAX_OUTPUT_TOKENS, "--max-tokens")
    if options.max_total_tokens is not None:
        _integer_between(options.max_total_tokens, 1, MAX_RUN_TOKENS, "--max-total-tokens")


def validate_cost(options: RunOptions, contract: Contract) -> None:
    """--max-cost prices tokens: it needs the contract's price (a version-2 key)."""
    cost: Any = options.max_cost
    if cost is None:
        return
    if isinstance(cost, bool) or not isinstance(cost, int | float) or not math.isfinite(cost):
        raise UsageError("--max-cost must be a finite number of USD")
    if not 0 < cost <= MAX_RUN_COST:
        raise UsageError(f"--max-cost must be between 0 and {MAX_RUN_COST:,.0f}")
    if contract.version < 2:
        raise UsageError("--max-cost needs a version 2 contract with agent.pricing")
    if contract.agent.pricing is None:
        raise UsageError("--max-cost needs agent.pricing (input_per_mtok, output_per_mtok) in the contract")


def _integer_between(value: Any, low: int, high: int, flag: str) -> None:
    if isinstance(value, bool) or not isinstance(value, int):
        raise UsageError(f"{flag} must be an integer")
    if value < low or value > high:
        raise UsageError(f"{flag} must be between {low} and {high}")


def validate_v2(options: RunOptions, contract: Contract) -> None:
    if contract.version < 2 and (
        options.runs is not None
        or options.tags
        or options.min_pass_rate is not None
        or options.threshold_mode
        or options.gate_tags
    ):
        raise UsageError("--runs, --tag, --min-pass-rate, --threshold-mode and --gate-tag need a version 2 contract")
    if options.retries is not None:
        if contract.version < 2:
            raise UsageError("--retries needs a version 2 contract (version 1 sends each request once, as skylos does)")
        _integer_between(options.retries, 0, MAX_RETRIES, "--retries")
    if options.runs is not None and not 1 <= options.runs <= 100:
        raise UsageError("--runs must be between 1 and 100")
    if options.min_pass_rate is not None and not 0 <= options.min_pass_rate <= 1:
        raise UsageError("--min-pass-rate must be between 0 and 1")


def default_max_scenarios(version: int) -> int:
    """The cap when --max-scenarios is not given. Version 1: skylos's 25. Version 2:
    every scenario the contract names (its author chose them, includes included),
    up to the contract's own scenario cap; --max-scenarios still narrows it."""
    return DEFAULT_MAX_SCENARIOS if version < 2 else V2_MAX_SCENARIOS


def select(contract: Contract, options: RunOptions, observations: ObservationSet | None) -> Contract:
    """The contract narrowed to the selected scenarios (contract order kept)."""
    selected = contract
    if options.tags:
        wanted_tags = set(options.tags)
        selected = replace(selected, scenarios=tuple(s for s in selected.scenarios if wanted_tags & set(s.tags)))
        if not selected.scenarios:
            raise UsageError(f"no scenario has the tags {sorted(wanted_tags)}")
    if options.scenarios:
        known = set(contract.scenario_ids())
        unknown = sorted(set(options.scenarios) - known)
        if unknown:
            raise UsageError(f"unknown scenario ids: {unknown}")
        wanted = set(options.scenarios)
        selected = replace(selected, scenarios=tuple(s for s in selected.scenarios if s.id in wanted))
    if contract.version >= 2:
        selected = replace(selected, gates=_selected_gates(selected, options))
    count, cap = len(selected.scenarios), options.max_scenarios
    if count > cap:
        narrow = "--scenario or --tag" if contract.version >= 2 else "--scenario"
        actionable = f"selected {count} scenarios, more than --max-scenarios {cap}; raise it with --max-scenarios {count} or select fewer with {narrow}"
        if contract.version >= 2:
            raise UsageError(actionable)
        raise UsageError(f"selected scenarios exceed --max-scenarios ({cap})", actionable)  # the JSON error: skylos's words
    if observations is not None:
        strangers = sorted(set(observations.observations) - set(contract.scenario_ids()))
        if strangers:
            raise UsageError(f"observations contain scenarios not defined by the contract: {strangers}")
    return selected


def _selected_gates(selected: Contract, options: RunOptions) -> Gates:
    """The gates of this run, in one place: the contract's with the command line's
    applied, and each tag gate kept only where it can be judged. A tag gate of the
    contract whose scenarios the selection (--tag, --scenario) left out is not run;
    a --gate-tag applies to the contracts whose selected scenarios carry the tag, and
    a tag no selected scenario of the run carries is a usage error (a typo, most often)."""
    gates = options.gates(selected.gates)
    carried = {tag for scenario in selected.scenarios for tag in scenario.tags}
    given = {gate.tag for gate in options.gate_tags}
    narrowed = bool(options.tags or options.scenarios)
    kept = []
    for gate in gates.by_tag:
        if gate.tag in carried:
            kept.append(gate)
        elif gate.tag in given:
            if gate.tag not in options.suite_tags:
                known = ", ".join(sorted(carried | options.suite_tags)) or "none"
                raise UsageError(f"--gate-tag {gate.tag}: no selected scenario is tagged {gate.tag!r} (tags: {known})")
        elif not narrowed:
            kept.append(gate)  # judged incomplete: the contract gates a tag none of its scenarios carries
    return replace(gates, by_tag=tuple(kept))


def check_run_budget(elapsed: float, max_seconds: float, *, version: int, live: bool) -> None:
    """Version 2 live: attempts the budget cut are incomplete in the report (evidence/live.py),
    the finished ones keep their verdicts. Otherwise skylos's error, nothing reported."""
    if elapsed > max_seconds and not (version >= 2 and live):
        raise RunIncomplete(
            f"agent behavior run exceeded its budget: harness time budget exceeded: {elapsed:.3f}s>{max_seconds:.3f}s"
        )


def check_concurrency(concurrency: int) -> None:
    if not 1 <= concurrency <= MAX_CONCURRENCY:
        raise UsageError(f"--concurrency must be between 1 and {MAX_CONCURRENCY}")
