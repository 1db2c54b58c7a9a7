"""A live run: decide whether the endpoint may be called, ask the agent for
every attempt, judge each attempt as it completes (progress shows that verdict),
and build the Report from the same judged attempts."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from behavegate import __version__
from behavegate import frozen as records
from behavegate.commands.clock import Clock, scenario_timings
from behavegate.commands.options import RunOptions
from behavegate.evidence import live
from behavegate.evidence.budgets import SpendLimit, spend_limits
from behavegate.evidence.http_model import parse_url
from behavegate.evidence.retry import RetryPolicy
from behavegate.github.console import Console
from behavegate.model import TOOL_SIDE, TOOL_SOURCE_MCP, Contract, Observation, Scenario, ScenarioResult, Timing
from behavegate.render.progress import Progress

if TYPE_CHECKING:
    from behavegate.commands.invocation import TestCommand
    from behavegate.report.result import Report


def run_live(
    command: TestCommand,
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
    from behavegate.files import write_file

    live_access, paths = command.live, command.views.paths
    settings = trusted_settings(
        contract,
        options,
        live_access.allow_hosts,
        options.concurrency,
        clock.monotonic,
        mcp_listen=live_access.mcp_listen,
        mcp_port=live_access.mcp_port,
    )
    if live_access.cache is not None:  # allowed here: commands/cache_policy.py refused it everywhere else
        from behavegate.commands.cache_policy import cache_folder
        from behavegate.evidence.answer_cache import AnswerCache

        folder = cache_folder(live_access.cache, root, os.environ, Path.cwd())
        settings = records.replace(settings, cache=AnswerCache(folder))
    if settings.spend is not None:  # a suite's earlier contracts spent part of the budgets (commands/suite_run.py)
        spent = command.suite
        settings = records.replace(
            settings, spend=records.replace(settings.spend, before_tokens=spent.spent_tokens, before_cost=spent.spent_cost)
        )
    # Checked with every output before the run (commands/output_paths.check_outputs); placed here.
    destination = place_flag(paths, "save_observations", root) if paths.save_observations else None
    progress = Progress(len(live.jobs(contract, options.runs, only)), console, clock.monotonic)
    with console.capturing_library_output():  # asyncio brought logging and threading in
        report = gather(
            contract, options, clock, settings, display=display, skipped=skipped, only=only, on_attempt=progress.attempt_done
        )
    progress.finish()
    if destination is not None:
        from behavegate.report.recording import observation_file

        write_file(destination, observation_file(report, options.runs) + "\n", "--save-observations")
    return report


def trusted_settings(
    contract: Contract,
    options: RunOptions,
    allow_hosts: list[str] | tuple[str, ...],
    concurrency: int,
    started: float,
    *,
    mcp_listen: str | None = None,
    mcp_port: int | None = None,
) -> live.LiveSettings:
    """The endpoint the person running it allowed (evidence/trust.py), with its credentials
    and the run's budgets. Raises before any request when the endpoint is not allowed.
    ``mcp_listen``, ``mcp_port``: where the MCP tool server (agent.mcp) may listen; loopback on
    an ephemeral port by default."""
    from behavegate.commands.judge_options import trusted_judge
    from behavegate.evidence.trust import choose_endpoint, load_credentials, pin_allowed_host, system_resolver

    credentials = load_credentials(options.auth_env, os.environ)
    endpoint = choose_endpoint(
        contract.agent.endpoint,
        contract.agent.model,
        override=options.endpoint,
        allow_remote=options.allow_remote,
        allow_contract_endpoint=options.allow_contract_endpoint,
        authenticated=credentials is not None,
        allow_hosts=list(allow_hosts),
        needs_model=contract.agent.http is None and contract.agent.api != "mcp",
    )
    endpoint = pin_allowed_host(endpoint, system_resolver)
    # The judge is checked with the agent, before any request: a judge endpoint that is
    # not allowed stops the run before the agent is asked anything.
    judge = trusted_judge(contract, options.judge, allow_hosts, hidden=(credentials.token,) if credentials else ())
    serving = contract.version >= 2 and contract.agent.serve_mcp
    return live.LiveSettings(
        endpoint=endpoint,
        credentials=credentials,
        max_tokens=options.max_tokens,
        max_seconds=float(options.max_seconds),
        concurrency=concurrency,
        started=started,
        judge=judge,
        retry=RetryPolicy(options.retries or 0),
        spend=spend_limit(contract, options),
        mcp_listen=mcp_address(mcp_listen) if serving else None,
        mcp_fixed=live.one_at_a_time(contract),
        mcp_port=checked_mcp_port(mcp_port, live.one_at_a_time(contract)) if serving else 0,
    )


def checked_mcp_port(given: int | None, fixed: bool) -> int:
    """The port the MCP tool server binds (0: ephemeral). A fixed URL needs one: the agent was
    configured with it before the run."""
    from behavegate.errors import RunError

    if given is None and fixed:
        raise RunError(
            "agent.mcp.url: fixed needs --mcp-port PORT: the agent is configured once with "
            "http://ADDR:PORT/mcp (ADDR: --mcp-listen, default 127.0.0.1)"
        )
    if given is not None and not 1 <= given <= 65535:
        raise RunError(f"--mcp-port must be a TCP port, 1-65535, not {given}")
    return given or 0


def mcp_address(given: str | None) -> str:
    """The address the MCP tool server binds: 127.0.0.1 unless the person running named one
    (an IP address the agent reaches; never a wildcard, which would listen everywhere)."""
    import ipaddress

    from behavegate.errors import RunError

    if given is None:
        return "127.0.0.1"
    try:
        address = ipaddress.ip_address(given)
    except ValueError:
        raise RunError(
            f"--mcp-listen must be an IP address (e.g. 127.0.0.1, or the container's own address), not {given!r}"
        ) from None
    if address.is_unspecified:
        raise RunError("--mcp-listen must name one address the agent reaches, not a wildcard that listens on every interface")
    return str(address)


def spend_limit(contract: Contract, options: RunOptions) -> SpendLimit | None:
    """The run's spend budgets (--max-total-tokens, --max-cost), or None when neither was given."""
    if options.max_total_tokens is None and options.max_cost is None:
        return None
    return SpendLimit(options.max_total_tokens, options.max_cost, contract.agent.pricing)


def gather(
    contract: Contract,
    options: RunOptions,
    clock: Clock,
    settings: live.LiveSettings,
    *,
    display: str,
    skipped: tuple[Scenario, ...] = (),
    only: frozenset[tuple[str, int]] | None = None,
    on_attempt: Callable[[str, str, float], None] | None = None,
    connect: live.Connect | None = None,
    provenance: dict[str, object] | None = None,
) -> Report:
    """Ask the agent (the endpoint, or ``connect``: an in-process agent) for every attempt,
    judge each as it completes (``on_attempt`` sees that verdict), and build the Report
    from the same judged attempts."""
    judged: dict[tuple[str, int], ScenarioResult] = {}
    schedule = None
    if only is None and any(s.sequential is not None for s in contract.scenarios):
        # A shard sends every attempt it owns; the merge decides sequentially.
        from behavegate.commands.sequential_schedule import SequentialSchedule

        schedule = SequentialSchedule(contract, options.runs)

    def attempt_done(job: live.Job, observation: Observation, timing: Timing) -> None:
        # Judged once, here: progress shows this verdict and the report reuses it. Imported
        # with the first answer (on the judging thread), not before the first request.
        from behavegate.judge.evaluate import evaluate_scenario

        result = evaluate_scenario(job.scenario, observation, contract.agent, contract.version)
        judged[(job.scenario.id, job.attempt)] = result
        if schedule is not None:
            schedule.judged(job, result.status)
        if on_attempt is not None:
            on_attempt(job.scenario.id, result.status, timing.duration_ms / 1000)

    observe = live.observe
    if contract.version >= 2 and contract.agent.api == "mcp" and connect is None:  # an MCP server as the target
        from behavegate.evidence import mcp_target

        observe = mcp_target.observe
        provenance = provenance or {
            **live.provenance(settings, options.max_scenarios, contract.agent.timeout_seconds),
            **mcp_target.provenance(),
        }
    results = observe(contract, settings, attempt_done, options.runs, only, connect, schedule)
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
    from behavegate.judge.evaluate import evaluate
    from behavegate.report.build import build_report

    evaluation = evaluate(
        contract,
        {key: found[0] for key, group in attempts.items() if (found := [o for o in group if o is not None])},
        attempts=attempts,
        runs=options.runs,
        gates=contract.gates,  # the run's, set by options.select
        judged=prejudged,
    )
    facts = records.replace(clock.facts(options.max_scenarios, options.max_seconds), tool_call_count=len(contract.scenarios))
    return build_report(
        contract,
        evaluation,
        mode="live",
        provenance={
            **(
                {**provenance, **live.judge_provenance(settings)}
                if provenance
                else live.provenance(settings, options.max_scenarios, contract.agent.timeout_seconds)
            ),
            # Counted now every answer is in: how many were replayed (--cache).
            **(settings.cache.provenance() if settings.cache is not None else {}),
        },
        facts=facts,
        contract_display_path=display,
        version=__version__,
        secrets=run_secrets(settings),
        artifacts=options.artifacts,
        skipped=skipped,
        timings=scenario_timings(contract, spans),
        notes=run_notes(contract, settings, [observation for _, observation, _ in results]),
    )


def run_notes(contract: Contract, settings: live.LiveSettings, observations: list[Observation]) -> tuple[str, ...]:
    notes = (
        unreachable_note(settings, observations),
        settings.cache.note() if settings.cache is not None else None,
        absent_calls_note(contract, observations),
        tool_side_note(observations),
        fixed_url_note(contract),
    )
    return tuple(note for note in notes if note)


FIXED_URL_NOTE = "attempts ran one at a time: the agent's MCP URL is fixed (agent.mcp.url: fixed)"


def tool_side_note(observations: list[Observation]) -> str | None:
    """Said once for the run: whose tool calls the checks read (agent.mcp), so no view passes
    tool-side evidence off as the agent's own account, or the reverse."""
    seen = sum(1 for o in observations if o.tool_source == TOOL_SOURCE_MCP)
    if not seen:
        return None
    return (
        f"tool calls {TOOL_SIDE} (tool-side evidence, agent.mcp) in {seen} of {len(observations)} attempts: "
        "the calls where they landed, not the agent's account of them; the answers came from the agent"
    )


def fixed_url_note(contract: Contract) -> str | None:
    """Said once for the run: why --concurrency did not apply."""
    return FIXED_URL_NOTE if live.one_at_a_time(contract) else None


def absent_calls_note(contract: Contract, observations: list[Observation]) -> str | None:
    """Said once for the run: answers that left their tool calls out are "calls not known",
    why that is the default, and the setting that changes it."""
    if contract.version < 2 or contract.agent.missing_tool_calls != "unobserved":
        return None
    from behavegate.judge.assertions import requested_assertions

    # Only attempts with a tool check to leave incomplete: the note is about those checks.
    checked = {s.id for s in contract.scenarios if any(e.key.startswith("tools.") for e, _, _ in requested_assertions(s.expect))}
    absent = sum(
        1 for o in observations if o.error is None and o.tool_calls_absent and o.tool_calls is None and o.scenario_id in checked
    )
    if not absent:
        return None
    stream = ", or streamed with no tool-call delta" if contract.agent.stream else ""
    return (
        f"{absent} of {len(observations)} answers left out message.tool_calls{stream}: their tool checks are "
        "incomplete (calls not known), since such an answer cannot tell 'no tool called' from 'tools the agent ran "
        "itself and did not report' (both end with finish_reason stop). If the agent leaves the key out only when it "
        "calls no tool, state agent.missing_tool_calls: none; if it runs its own tools, report them "
        "(agent.http response paths for executed calls, or traces)"
    )


CONNECTION_FAILED = "agent endpoint request failed: ConnectionError"  # skylos's words, kept in every check


def unreachable_note(settings: live.LiveSettings, observations: list[Observation]) -> str | None:
    """Said once for the run: the attempts that never reached the agent, where it was
    dialled and what to look at; each check keeps skylos's words."""
    failed = sum(1 for observation in observations if observation.error == CONNECTION_FAILED)
    if not failed or settings.endpoint is None:
        return None
    url = parse_url(settings.endpoint.url)
    port = url.effective_port
    host = f"[{url.host}]" if ":" in url.host else url.host
    return (
        f"could not reach the agent at {host}:{port} in {failed} of {len(observations)} attempts (connection refused, "
        f"or closed before an answer: '{CONNECTION_FAILED}' in their checks): is the agent running and listening there?"
    )


def run_secrets(settings: live.LiveSettings) -> tuple[str, ...]:
    """The bearer tokens of the run (the agent's, the judge's): no view or file shows them."""
    tokens = [settings.credentials.token] if settings.credentials else []
    if settings.judge is not None and settings.judge.credentials is not None:
        tokens.append(settings.judge.credentials.token)
    return tuple(tokens)


def run_callable(
    contract: Contract,
    options: RunOptions,
    clock: Clock,
    agent: Any,
    concurrency: int,
    display: str,
    skipped: tuple[Scenario, ...] = (),
    allow_hosts: tuple[str, ...] = (),
) -> Report:
    """Every attempt asked of an in-process agent (evidence/in_process.py): the live
    conversation loop and budgets, no network."""
    from behavegate.commands.judge_options import trusted_judge
    from behavegate.evidence import in_process

    # An in-process agent is called with (messages, tools): agent.api and agent.http name an endpoint's wire format.
    # agent.mcp serves an endpoint's own tool calls: an in-process agent reports its calls in its answer.
    contract = records.replace(contract, agent=records.replace(contract.agent, api="chat", http=None, serve_mcp=False))
    settings = live.LiveSettings(
        endpoint=None,
        credentials=None,
        max_tokens=options.max_tokens,
        max_seconds=float(options.max_seconds),
        concurrency=concurrency,
        started=clock.monotonic,
        judge=trusted_judge(contract, options.judge, allow_hosts),
        spend=spend_limit(contract, options),
    )
    provenance = in_process.provenance(
        agent, settings.max_seconds, options.max_tokens, options.max_scenarios, contract.agent.timeout_seconds
    )
    provenance["request_limits"].update(spend_limits(settings.spend))
    return gather(
        contract,
        options,
        clock,
        settings,
        display=display,
        skipped=skipped,
        connect=in_process.connector(agent),
        provenance=provenance,
    )
