"""A live run: decide whether the endpoint may be called, ask the agent for
every attempt, judge each attempt as it completes (progress shows that verdict),
and build the Report from the same judged attempts."""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from behavegate import __version__
from behavegate import frozen as records
from behavegate.commands.clock import Clock, scenario_timings
from behavegate.commands.options import RunOptions
from behavegate.evidence import live
from behavegate.github.console import Console
from behavegate.judge.evaluate import evaluate, evaluate_scenario
from behavegate.model import Contract, Observation, Scenario, ScenarioResult, Timing
from behavegate.render.progress import Progress
from behavegate.report.build import build_report
from behavegate.report.result import Report


def run_live(
    args: argparse.Namespace,
    contract: Contract,
    options: RunOptions,
    clock: Clock,
    root: Path,
    console: Console,
    display: str,
    skipped: tuple[Scenario, ...] = (),
    only: frozenset[tuple[str, int]] | None = None,
) -> Report:
    """``only``: just these (scenario id, attempt) pairs are sent (a shard's); the
    others are left unobserved in this report."""
    from behavegate.commands.output_paths import place_flag
    from behavegate.evidence.trust import choose_endpoint, load_credentials, pin_allowed_host, system_resolver
    from behavegate.files import write_file

    credentials = load_credentials(options.auth_env, os.environ)
    endpoint = choose_endpoint(
        contract.agent.endpoint,
        contract.agent.model,
        override=options.endpoint,
        allow_remote=options.allow_remote,
        allow_contract_endpoint=options.allow_contract_endpoint,
        authenticated=credentials is not None,
        allow_hosts=args.allow_host,
    )
    endpoint = pin_allowed_host(endpoint, system_resolver)
    # Checked with every output before the run (commands/output_paths.check_outputs); placed here.
    destination = place_flag(args, "save_observations", root) if args.save_observations else None
    settings = live.LiveSettings(
        endpoint=endpoint,
        credentials=credentials,
        max_tokens=options.max_tokens,
        max_seconds=float(options.max_seconds),
        concurrency=args.concurrency,
        started=clock.monotonic,
    )
    judged: dict[tuple[str, int], ScenarioResult] = {}
    schedule = None
    if only is None and any(s.sequential is not None for s in contract.scenarios):
        # A shard sends every attempt it owns; the merge decides sequentially.
        from behavegate.commands.sequential_schedule import SequentialSchedule

        schedule = SequentialSchedule(contract, options.runs)
    progress = Progress(len(live.jobs(contract, options.runs, only)), console, clock.monotonic)

    def attempt_done(job: live.Job, observation: Observation, timing: Timing) -> None:
        # Judged once, here: progress shows this verdict and the report reuses it.
        result = evaluate_scenario(job.scenario, observation, contract.agent, contract.version)
        judged[(job.scenario.id, job.attempt)] = result
        if schedule is not None:
            schedule.judged(job, result.status)
        progress.attempt_done(job.scenario.id, result.status, timing.duration_ms / 1000)

    with console.capturing_library_output():  # httpx brought logging and threading in
        results = live.observe(contract, settings, attempt_done, options.runs, only, schedule)
    progress.finish()
    # Each attempt at its own index (a shard observes only some of them).
    attempts: dict[str, list[Observation | None]] = {}
    prejudged: dict[str, list[ScenarioResult | None]] = {}
    spans: dict[str, list[Timing]] = {}
    for job, observation, timing in results:
        key = job.scenario.id
        for slots in (attempts.setdefault(key, []), prejudged.setdefault(key, [])):
            slots.extend([None] * (job.attempt + 1 - len(slots)))
        attempts[key][job.attempt] = observation
        prejudged[key][job.attempt] = judged[(key, job.attempt)]
        spans.setdefault(key, []).append(timing)
    evaluation = evaluate(
        contract,
        {key: found[0] for key, group in attempts.items() if (found := [o for o in group if o is not None])},
        attempts=attempts,
        runs=options.runs,
        gates=options.gates(contract.gates),
        judged=prejudged,
    )
    facts = records.replace(clock.facts(options.max_scenarios, options.max_seconds), tool_call_count=len(contract.scenarios))
    report = build_report(
        contract,
        evaluation,
        mode="live",
        provenance=live.provenance(settings, options.max_scenarios, contract.agent.timeout_seconds),
        facts=facts,
        contract_display_path=display,
        version=__version__,
        secret=credentials.token if credentials else None,
        artifacts=options.artifacts,
        skipped=skipped,
        timings=scenario_timings(contract, spans),
    )
    if destination is not None:
        from behavegate.report.recording import observation_file

        write_file(destination, observation_file(report) + "\n", "--save-observations")
    return report
