"""``behavegate merge REPORT...``: shard reports in, one run's verdict out.

The reports must be one run's: the same shard count, contract digest, plan and
partition, written by this version of behavegate. The contract they name is
loaded (its digest must match), the partition recomputed, and every shard's
attempts checked to be exactly the pairs the partition gives it. The attempts
are then aggregated as one run aggregates them (``judge/evaluate.py``: scenario
verdicts, pass rates, Wilson intervals, suite gates) and the Report is delivered
through the same code as ``behavegate test``. A shard without a report (or with
an error report, or given twice) leaves its attempts unobserved, and a
``shards`` gate makes the run incomplete: never a pass.
"""

from __future__ import annotations

import gc
import hashlib
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from behavegate import __version__
from behavegate import frozen as records
from behavegate.commands.clock import Clock
from behavegate.commands.output_paths import check_outputs
from behavegate.commands.test import (
    deliver,
    display_path,
    gated,
    load_baseline,
    report_error,
    report_error_to_ci,
    require_baseline,
    write_artifacts,
)
from behavegate.errors import BehavegateError, ExitCode, InputError, Problem, ShardError
from behavegate.files import resolve_inside, walk_files
from behavegate.github.console import Console
from behavegate.limits import MAX_SHARDS, SHARD_REPORT_MAX_BYTES
from behavegate.model import Contract, Evaluation, GateResult, ScenarioResult, Timing
from behavegate.report.result import Report
from behavegate.report.shard_reports import ShardReport
from behavegate.report.suite import exit_status

if TYPE_CHECKING:
    from behavegate.commands.invocation import MergeCommand
    from behavegate.evidence.shard import Partition

MAX_FILES = 2 * MAX_SHARDS  # a shard given twice is reported, not refused


def run(command: MergeCommand, console: Console) -> int:
    root = Path.cwd().resolve()
    # Everything read (the reports, the contract) lives until the command ends and holds
    # no cycle to collect; the collector's passes over it cost more than the merge itself
    # (bench/bench_merge.py: 10,000 scenarios, 2.4x faster without them).
    gc.disable()
    try:
        check_outputs(command.views.paths, root)
        require_baseline(command.gating)
        baseline = load_baseline(command.gating.baseline, root)  # before the reports: a bad one costs nothing
        report = gated(merge(command, root), baseline, command.gating.fail_on)
        if report.artifacts:
            report = write_artifacts(report, root)
        deliver(command.views, report, root, console)
        return exit_status(report)
    except (BehavegateError, OSError) as exc:
        report_error(command.views, root, exc, console)
        report_error_to_ci(command, exc, console, root)
        return ExitCode.INCOMPLETE
    finally:
        gc.enable()


def merge(command: MergeCommand, root: Path) -> Report:
    from behavegate.commands.options import select, validate_v2
    from behavegate.commands.shard_run import options_of
    from behavegate.contract.load import load_contract
    from behavegate.evidence.shard import partition
    from behavegate.judge.evaluate import evaluate
    from behavegate.report.build import build_report

    clock = Clock()
    reports = read_reports(command.reports, root)
    ran = [r for r in reports if r.failed is None]
    first = _one_run(reports, ran)
    options, extra = options_of(first.plan)
    contract_path = _contract_path(command.contract, first.contract_path, root)
    contract = _carried_contract(reports, first, contract_path, root) or load_contract(
        contract_path, root, max_assertions=options.max_assertions
    )
    if contract.digest != first.contract_digest:
        raise ShardError(
            [
                Problem(
                    f"the contract {display_path(contract.path, root)} (sha256 {contract.digest[:12]}) is not the one the shards ran "
                    f"(sha256 {first.contract_digest[:12]}): merge with the same contract, e.g. from the same commit"
                )
            ]
        )
    changed = sorted(
        name for name in {*contract.included, *first.included} if contract.included.get(name) != first.included.get(name)
    )
    if changed:
        raise ShardError(
            [
                Problem(
                    f"the files the contract includes are not the ones the shards ran ({', '.join(changed)} changed, or were added or "
                    "removed, since): merge with the same contract and includes, e.g. from the same commit"
                )
            ]
        )
    validate_v2(options, contract)
    selected = select(contract, options, None)
    parts = partition(selected, first.count, options.runs, extra)
    if parts.digest != first.partition_digest:
        raise ShardError(
            [
                Problem(
                    f"the shards' partition ({first.path}) is not this contract's: the contract or its "
                    "includes changed since the shards ran, or a shard report was edited"
                )
            ]
        )
    for report in ran:
        if report.pairs != parts.shards[report.index - 1]:
            raise ShardError([Problem(f"shard report {report.path}: its pairs are not shard {report.index}'s", report.path)])
    used, gate, why = _coverage(reports, first.count)
    judged = _judged(selected, used, parts, why)
    attempts = {sid: [result.observation for result in tries] for sid, tries in judged.items()}
    observed = {sid: found[0] for sid, tries in attempts.items() if (found := [o for o in tries if o is not None])}
    evaluation = evaluate(
        selected,
        observed,
        attempts=attempts if selected.version >= 2 else None,
        runs=options.runs,
        gates=selected.gates,
        judged=judged,
    )
    if gate is not None:
        evaluation = _with_gate(evaluation, gate)
    facts = clock.facts(options.max_scenarios, options.max_seconds)
    if first.mode == "live":
        facts = records.replace(facts, tool_call_count=len(selected.scenarios))
    chosen = set(selected.scenario_ids())
    seconds: dict[str, float] = {}
    for report in used:  # in shard order, as one sum per scenario adds them
        for sid, spent in report.seconds.items():
            seconds[sid] = seconds.get(sid, 0.0) + spent
    return build_report(
        selected,
        evaluation,
        mode=first.mode,
        provenance=_provenance(reports, used, first),
        facts=facts,
        contract_display_path=display_path(contract.path, root),
        version=__version__,
        artifacts=command.artifacts,
        skipped=tuple(s for s in contract.scenarios if s.id not in chosen),
        timings=tuple(Timing(facts.started_at, facts.ended_at, round(1000 * seconds.get(s.id, 0.0))) for s in selected.scenarios),
    )


def _carried_contract(reports: list[ShardReport], first: ShardReport, path: Path, root: Path) -> Contract | None:
    """The contract as the shards carry it (``contract/as_data.py``), when every shard
    ran, exactly once, and the contract's files are the ones they read; else None."""
    from behavegate.contract.as_data import contract_from_data

    if sorted(r.index for r in reports) != list(range(1, first.count + 1)) or any(r.failed for r in reports):
        return None
    try:
        resolved = resolve_inside(path, root, "Contract")
    except InputError:
        return None  # loading it says why
    return contract_from_data([r.contract_data for r in reports], resolved, root)


def read_reports(arguments: Sequence[str], root: Path) -> list[ShardReport]:
    """Every report named, and every ``*.json`` under every folder named (sorted; no links, no hidden names)."""
    from behavegate.files import read_project_text, runner_dirs
    from behavegate.report.shard_reports import parse_shard_report

    bases = runner_dirs(os.environ)
    found: list[ShardReport] = []
    for path in _report_files(arguments, root, bases):
        resolved, text = read_project_text(path, root, "Shard report", SHARD_REPORT_MAX_BYTES, bases)
        digest = hashlib.sha256(text.encode("utf-8")).hexdigest()
        found.append(parse_shard_report(text, display_path(resolved, root), digest))
    return found


def _report_files(arguments: Sequence[str], root: Path, bases: tuple[Path, ...]) -> list[Path]:
    from behavegate.files import base_of, reject_symlinks, resolve_inside

    files: list[Path] = []
    for argument in arguments:
        path = root if Path(argument) in (Path("."), root) else resolve_inside(argument, root, "Shard report", bases)
        if path.is_dir():
            if path != root:
                reject_symlinks(path, base_of(path, root, bases), "Shard report folder")
            inside = sorted(walk_files(path, (".json",)))
            if not inside:
                raise InputError(f"no shard report (*.json) in the folder {argument}")
            files.extend(inside)
        else:
            files.append(path)
        if len(files) > MAX_FILES:
            raise InputError(f"more than {MAX_FILES} shard reports given; a run has at most {MAX_SHARDS} shards")
    return list(dict.fromkeys(files))


def _one_run(reports: list[ShardReport], ran: list[ShardReport]) -> ShardReport:
    """The reference report, once every report is shown to belong to the same run."""
    if not reports:
        raise InputError("no shard report given")
    counts = {r.count for r in reports}
    if len(counts) > 1:
        shown = ", ".join(f"{r.path}: {r.count}" for r in reports)
        raise ShardError([Problem(f"the shard reports disagree on the shard count N ({shown}): they are not one run's")])
    if not ran:
        raise ShardError([Problem(f"no shard could run: {r.path} (shard {r.index}): {r.failed}", r.path) for r in reports])
    first = ran[0]
    for report in ran[1:]:
        for what, mine, theirs in (
            ("contract digest", report.contract_digest, first.contract_digest),
            ("included files' digests", report.included, first.included),
            ("contract path", report.contract_path, first.contract_path),
            ("partition digest", report.partition_digest, first.partition_digest),
            ("plan (selection, runs, gates and limits)", report.plan, first.plan),
            ("mode", report.mode, first.mode),
            ("evidence kind", report.provenance.get("kind"), first.provenance.get("kind")),
            ("behavegate version", report.version, first.version),
        ):
            if mine != theirs:
                raise ShardError(
                    [
                        Problem(
                            f"shard reports {first.path} and {report.path} differ in their {what}: they are not one run's",
                            report.path,
                        )
                    ]
                )
    if first.version != __version__:
        raise ShardError(
            [
                Problem(
                    f"the shard reports were written by behavegate {first.version}, this is {__version__}: "
                    "merge with the version that ran the shards",
                    first.path,
                )
            ]
        )
    return first


def _coverage(reports: list[ShardReport], count: int) -> tuple[list[ShardReport], GateResult | None, dict[int, str]]:
    """The reports whose attempts are used (one per shard index), the ``shards``
    gate when some shard's attempts are missing, and why each such shard's are."""
    by_index: dict[int, list[ShardReport]] = {}
    for report in reports:
        by_index.setdefault(report.index, []).append(report)
    used, problems = [], []
    missing, failed, twice = [], [], []
    why: dict[int, str] = {}
    for index in range(1, count + 1):
        given = by_index.get(index, [])
        ran = [r for r in given if r.failed is None]
        if len(given) > 1:
            twice.append(index)
            why[index] = f"was given {len(given)} times"
            problems.append(
                f"shard {index} was given {len(given)} times ({', '.join(r.path for r in given)}): its attempts are not used"
            )
        elif ran:
            used.append(ran[0])
        elif given:
            failed.append(index)
            why[index] = "could not run"
            problems.append(f"shard {index} could not run ({given[0].path}: {given[0].failed})")
        else:
            missing.append(index)
            why[index] = "has no report"
            problems.append(f"shard {index} of {count} has no report")
    if not problems:
        return used, None, why
    message = f"attempts are missing, so the run cannot pass: {'; '.join(problems)}"
    observed = {"missing": missing, "could_not_run": failed, "given_twice": twice}
    return used, GateResult("shards", "incomplete", message, {"shards": count}, observed), why


def _judged(
    contract: Contract, used: list[ShardReport], parts: Partition, why: Mapping[int, str]
) -> dict[str, list[ScenarioResult]]:
    """Every attempt at its index: as the shard that owns it judged it (with the
    assertions the contract asks of its scenario), or, when that shard's attempts
    are not used, unobserved with the reason."""
    from behavegate.judge.assertions import scenario_assertions
    from behavegate.judge.evaluate import evaluate_scenario

    scenarios = {s.id: s for s in contract.scenarios}
    found = {pair: (report, judged) for report in used for pair, judged in report.attempts.items()}
    owner = parts.owner()
    results: dict[str, list[ScenarioResult]] = {}
    for sid, planned in parts.planned.items():
        scenario = scenarios[sid]
        asked = scenario_assertions(scenario)
        tries = results[sid] = []
        for attempt in range(planned):
            if (sid, attempt) not in found:
                index = owner[(sid, attempt)]
                unseen = evaluate_scenario(scenario, None, contract.agent, contract.version)
                note = f" (shard {index} of {parts.count} {why[index]})"
                tries.append(
                    records.replace(unseen, verdicts=tuple(records.replace(v, message=v.message + note) for v in unseen.verdicts))
                )
                continue
            report, judged = found[(sid, attempt)]
            if [(v.assertion, v.kind) for v in judged.verdicts] != asked:
                raise ShardError(
                    [
                        Problem(
                            f"shard report {report.path}: scenario {sid!r} attempt {attempt + 1} judged other assertions than "
                            "the contract asks for: the contract or its includes changed since the shard ran",
                            report.path,
                        )
                    ]
                )
            tries.append(ScenarioResult(scenario, judged.status, judged.verdicts, judged.observation))
    return results


def _with_gate(evaluation: Evaluation, gate: GateResult) -> Evaluation:
    from behavegate.judge.evaluate import run_status

    gates = (*evaluation.gates, gate)
    status = run_status([r.status for r in evaluation.results], [(g.gate, g.status) for g in gates])
    return Evaluation(status, evaluation.results, gates)


def _provenance(reports: list[ShardReport], used: list[ShardReport], first: ShardReport) -> dict[str, Any]:
    """Which shard reports the run was made of, each with its digests and its own provenance."""
    shown = sorted(reports, key=lambda r: (r.index, r.path))
    present = {r.index for r in reports if r.failed is None}
    return {
        "kind": "merged_shards",
        "trust": first.provenance.get("trust"),
        "evidence_kind": first.provenance.get("kind"),
        "count": first.count,
        "partition_digest": first.partition_digest,
        "shards": [
            {
                "index": r.index,
                "path": r.path,
                "sha256": r.sha256,
                "used": r in used,
                "error": r.failed,
                "evidence_digest": r.evidence_digest,
                "provenance": None if r.failed else dict(r.provenance),
            }
            for r in shown
        ],
        "missing": [index for index in range(1, first.count + 1) if index not in present],
        "source_digest": hashlib.sha256("".join(f"{r.index}\0{r.sha256}\n" for r in shown).encode()).hexdigest(),
    }


def _contract_path(flag: str | None, named: str, root: Path) -> Path:
    if flag:
        return Path(flag)
    workspace = os.environ.get("GITHUB_WORKSPACE")
    return Path(named) if Path(named).is_absolute() else Path(workspace or root) / named
