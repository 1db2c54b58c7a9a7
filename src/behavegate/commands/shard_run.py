"""``behavegate test --shard K/N``: run only shard K's (scenario, attempt) pairs of
the stable partition (``evidence/shard.py``) and write a shard report.

A shard report is the usual report of the attempts this shard judged, plus a
``behavegate.shard`` block: which shard of how many, the contract and partition
digests, its pairs, and the plan (the options the partition and the judging
depend on) that ``behavegate merge`` needs to recompute the run as one. A shard
exits 0 once its report is written, whatever it judged: its attempts are only
part of the evidence, and the merge gives the verdict.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from behavegate.commands.options import RunOptions
from behavegate.errors import UsageError
from behavegate.evidence.shard import Pair, ShardBlock, parse_shard, partition
from behavegate.frozen import Frozen, replace
from behavegate.limits import CARRIED_MAX_BYTES
from behavegate.model import Contract, ObservationSet, TagGate

if TYPE_CHECKING:
    from behavegate.commands.invocation import TestCommand


def check_flags(command: TestCommand) -> None:
    parse_shard(command.shard or "")
    views, paths, gating = command.views, command.views.paths, command.gating
    # Views of the run's verdict: a shard has none to show, the merge renders them.
    merge_views = {
        "--junit": paths.junit,
        "--summary": paths.summary,
        "--html": paths.html,
        "--sarif": paths.sarif,
        "--annotations": views.annotations,
    }
    asked = [flag for flag, given in merge_views.items() if given]
    asked += ["--baseline"] * bool(gating.baseline) + ["--fail-on"] * (gating.fail_on != "incomplete")
    if asked:
        raise UsageError(
            f"--shard writes a shard report, not the run's verdict: {' and '.join(asked)} "
            f"belong{'s' if len(asked) == 1 else ''} to `behavegate merge` of every shard report"
        )


class ShardRun(Frozen):
    contract: Contract  # the selected scenarios this shard has pairs of, contract order kept
    owned: frozenset[Pair]
    block: ShardBlock


def plan_shard(
    text: str, contract: Contract, selected: Contract, options: RunOptions, evidence: ObservationSet | None
) -> ShardRun:
    """Shard ``text`` (``K/N``) of the selected scenarios. Offline evidence holding more
    attempts of a scenario than its runs adds them to the plan, as one run judges them.
    The block carries, as data for the merge, the contract's scenarios whose first
    attempt this shard runs (so each is carried once; shard 1 also those no shard runs)."""
    from behavegate.contract.as_data import contract_data, written_bytes

    index, count = parse_shard(text)
    extra: dict[str, int] = {}
    if selected.version >= 2 and evidence is not None:
        for scenario in selected.scenarios:
            held = len(evidence.attempts.get(scenario.id, ()))
            if held > (options.runs or scenario.runs):
                extra[scenario.id] = held
    parts = partition(selected, count, options.runs, extra)
    pairs = parts.shards[index - 1]
    mine = {sid for sid, _ in pairs}
    # A shard judges every attempt it owns: a sequential scenario's decision needs every
    # shard's attempts, so the merge makes it (a shard deciding would leave its later ones out).
    scenarios = tuple(replace(s, sequential=None) if s.sequential else s for s in selected.scenarios if s.id in mine)
    narrowed = replace(selected, scenarios=scenarios)
    chosen, firsts = set(selected.scenario_ids()), {sid for sid, attempt in pairs if attempt == 0}
    carried = [p for p, s in enumerate(contract.scenarios) if s.id in firsts or (index == 1 and s.id not in chosen)]
    data = contract_data(contract, carried)
    if data is not None and written_bytes(data, depth=3) > CARRIED_MAX_BYTES:  # behavegate.shard.contract_data
        data = None  # the merge loads the YAML
    block = ShardBlock(index, count, selected.digest, parts.digest, pairs, plan_of(options, extra), data, contract.included)
    return ShardRun(narrowed, frozenset(pairs), block)


def plan_of(options: RunOptions, extra: Mapping[str, int]) -> dict[str, Any]:
    """What a merge needs to select the same scenarios, partition them the same way
    and judge them as one run: every shard of a run records the same plan."""
    return {
        "scenarios": None if options.scenarios is None else list(options.scenarios),
        "tags": list(options.tags),
        "runs": options.runs,
        "min_pass_rate": options.min_pass_rate,
        "threshold_mode": options.threshold_mode,
        "max_scenarios": options.max_scenarios,
        "max_seconds": options.max_seconds,
        "attempts": dict(sorted(extra.items())),
        "gate_tags": [[gate.tag, gate.min_pass_rate] for gate in options.gate_tags],
        "suite_tags": sorted(options.suite_tags),
        "max_assertions": options.max_assertions,
    }


def options_of(plan: Mapping[str, Any]) -> tuple[RunOptions, dict[str, int]]:
    """The run options (and extra attempts) a plan records; its shape was checked when read."""
    scenarios = plan["scenarios"]
    options = RunOptions(
        scenarios=None if scenarios is None else tuple(scenarios),
        tags=tuple(plan["tags"]),
        runs=plan["runs"],
        min_pass_rate=plan["min_pass_rate"],
        threshold_mode=plan["threshold_mode"],
        max_scenarios=plan["max_scenarios"],
        max_seconds=plan["max_seconds"],
        gate_tags=tuple(TagGate(tag, min_pass_rate=rate) for tag, rate in plan["gate_tags"]),
        suite_tags=frozenset(plan["suite_tags"]),
        max_assertions=plan["max_assertions"],
    )
    return options, dict(plan["attempts"])
