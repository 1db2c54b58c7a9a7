"""Every command's arguments (argparse only): ``cli.py`` builds the parser from
these, reads what it parsed into the command's frozen value (``parsed``, the one
reader of argparse's Namespace) and dispatches; ``docs/cli.md`` is kept equal to
the help they give."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from behavegate import limits
from behavegate.gating import FailOn

if TYPE_CHECKING:  # imported where used: `behavegate --version` starts without them
    from collections.abc import Callable

    from behavegate.commands.invocation import Command, Gating, TestCommand
    from behavegate.commands.request import TestRequest
    from behavegate.github.console import ArgumentParser, Console
    from behavegate.github.views import Views
    from behavegate.model import TagGate

# The option groups of `behavegate test --help`, as people look for options (title, description);
# `merge` reuses the gating and outputs groups. Every option but --help is in one (tests/test_docs.py).
GROUPS: dict[str, tuple[str, str | None]] = {
    "evidence": ("agent and evidence", "offline, from captured observations or recorded traces; without them, live"),
    "live": ("running live", "which endpoint may be called, with which token, how many requests at once"),
    "selection": ("choosing scenarios", None),
    "budgets": ("budgets", "limits of the run; reaching one is reported, never silent"),
    "judging": ("judging", "where response.judge checks are asked (docs/judge.md)"),
    "gates": ("baselines and gating", "what fails the run, and what it is compared with"),
    "outputs": ("reports and outputs", None),
    "sharding": ("sharding", None),
}


def add_commands(commands: argparse._SubParsersAction[ArgumentParser], console: Console, only: str | None = None) -> None:
    """Every command's parser, in the order help lists them; ``only``: just that command's (the
    one a run names: building the other nine cost about 10 ms of a live run's start-up, most of
    it argparse's translation lookups)."""
    for name, add in COMMANDS:
        if only is None or name == only:
            add(commands, console)


def _add_test(commands: argparse._SubParsersAction[ArgumentParser], console: Console) -> None:
    test = commands.add_parser(
        "test",
        console=console,
        help="judge an agent's behavior against a contract",
        description="Judge an agent's behavior against a contract. Exit 0: every assertion passed; "
        "1: a behavior was violated; 2: the contract, run or evidence was invalid or incomplete.",
    )
    _test_options(test)


def _add_watch(commands: argparse._SubParsersAction[ArgumentParser], console: Console) -> None:
    watch = commands.add_parser(
        "watch",
        console=console,
        help="run test again whenever the contract, its includes or datasets change",
        description="Run `behavegate test` with these options, then again whenever the contract, its included "
        "files, its datasets or the --observations file change (their sizes and modification times, polled). "
        "Each run prints its table. Ctrl-C stops it (exit 0). For writing a contract: pair it with --cache DIR "
        "or --observations FILE so a re-run does not ask the agent again (docs/authoring.md).",
    )
    _test_options(watch)
    watching = watch.add_argument_group("watching", "how often the files are looked at, and when to stop")
    watching.add_argument(
        "--interval",
        type=float,
        default=0.5,
        metavar="S",
        help="seconds between looks at the watched files, 0.05-60 (default: 0.5)",
    )
    watching.add_argument("--once", action="store_true", help="run once and exit with the run's status (no watching)")
    watching.add_argument(
        "--max-runs",
        type=int,
        default=None,
        metavar="N",
        help="stop after N runs, exiting with the last run's status (default: until Ctrl-C)",
    )


def _add_merge(commands: argparse._SubParsersAction[ArgumentParser], console: Console) -> None:
    merge = commands.add_parser(
        "merge",
        console=console,
        help="combine shard reports into one run's verdict",
        description="Combine the reports of `behavegate test --shard K/N` jobs into one run: every "
        "verdict, pass rate, interval and gate computed as if it had been one run, every view rendered. Exit 0: every "
        "assertion passed; 1: a behavior was violated; 2: a shard or an attempt is missing or duplicated (incomplete), or "
        "the reports are invalid or not one run's.",
    )
    merge.add_argument("reports", nargs="+", metavar="REPORT", help="shard reports, or folders of them (their *.json files)")
    merge.add_argument_group("the shards' run").add_argument(
        "--contract",
        default=None,
        metavar="FILE",
        help="the contract (default: the path the shard reports name, from the workspace or the project root)",
    )
    merged_gates = merge.add_argument_group(*GROUPS["gates"])
    merged_outputs = merge.add_argument_group(*GROUPS["outputs"])
    _format(merged_outputs)
    merged_outputs.add_argument(
        "--output", "-o", default=None, metavar="FILE", help="write the output to a file inside the project"
    )
    merged_outputs.add_argument("--no-artifacts", action="store_true", help="do not write evidence artifacts")
    merged_outputs.add_argument(
        "--verbose",
        "-v",
        action="store_true",
        help="table: every scenario's row (past 50 scenarios only those that did not pass are listed)",
    )
    _gating(merged_gates)
    _views(merged_outputs)


def _add_replay(commands: argparse._SubParsersAction[ArgumentParser], console: Console) -> None:
    replay = commands.add_parser(
        "replay",
        console=console,
        help="check that a run's evidence artifacts are whole and untouched, and judge them again",
        description="Check a run directory (.behavegate/runs/<run-id>) against itself: every file present, "
        "canonical and sealed, every digest and count re-derived, every attempt judged again from its evidence. "
        "Exit 0: valid; 1: invalid; 2: unusable input.",
    )
    replay.add_argument("run_dir", metavar="RUN_DIR", help="the run directory")
    _format(replay)


def _add_show(commands: argparse._SubParsersAction[ArgumentParser], console: Console) -> None:
    show = commands.add_parser(
        "show",
        console=console,
        help="show what the agent said and called in a run, with the verdicts",
        description="Show a run directory's scenarios, attempt by attempt: the response, tool calls with their "
        "arguments, refusal, sources, errors and every verdict. The run is checked as replay checks it first. "
        "Exit 0: shown; 2: not a valid run directory, or no such scenario.",
    )
    show.add_argument("run_dir", metavar="RUN_DIR", help="the run directory (.behavegate/runs/<run-id>)")
    show.add_argument("scenario", nargs="?", default=None, metavar="SCENARIO", help="show only this scenario id")
    _format(show)
    show.add_argument(
        "--max-chars",
        type=int,
        default=2000,
        metavar="N",
        help="table: show at most N characters of each response or text (default: 2000)",
    )


def _add_listing(commands: argparse._SubParsersAction[ArgumentParser], console: Console) -> None:
    listing = commands.add_parser(
        "list",
        console=console,
        help="list the builtin scenario libraries, or one library's scenarios and tags",
        description="List the builtin scenario libraries (for `include: [builtin:NAME]`), or with LIBRARY "
        "(e.g. builtin:injection) its scenario ids and tags (for --tag and --scenario).",
    )
    listing.add_argument("library", nargs="?", default=None, metavar="LIBRARY", help="a library, e.g. builtin:injection")
    _format(listing)


def _add_traces(commands: argparse._SubParsersAction[ArgumentParser], console: Console) -> None:
    traces = commands.add_parser(
        "traces",
        console=console,
        help="read OpenTelemetry trace files as behavegate understands them",
        description="Work with OpenTelemetry trace files (OTLP JSON, OTLP JSON Lines, proto3-style JSON, "
        "Python console-exporter output, Assay span rows).",
    )
    actions = traces.add_subparsers(dest="traces_command", metavar="ACTION")
    inspect = actions.add_parser(
        "inspect",
        console=console,
        help="show what behavegate reads from trace files",
        description="Show, per trace, what behavegate understood: the tool calls in order (with call ids, "
        "arguments and errors), the model steps, the final answer, and what binds it to a scenario, to debug instrumentation. "
        "Exit 0: read; 2: a file could not be read.",
    )
    inspect.add_argument("files", nargs="+", metavar="FILE_OR_DIR", help="trace files, or folders of them")
    _format(inspect)
    _trace_options(inspect, binding=False)


def _add_validate(commands: argparse._SubParsersAction[ArgumentParser], console: Console) -> None:
    validate = commands.add_parser(
        "validate",
        console=console,
        help="check contracts, their included files and golden sets without running anything",
        description="Check contracts as test reads them, with their included files and golden sets (CSV, "
        "JSONL), calling and writing nothing. Every problem is listed with its file and line; an unknown "
        "key names the closest allowed one. Exit 0: every contract is valid; 2: a problem (a configuration error).",
    )
    validate.add_argument(
        "contract",
        nargs="*",
        default=None,
        metavar="CONTRACT",
        help="contract paths, or folders of them (default: what test discovers)",
    )
    _format(validate)


def _add_view(commands: argparse._SubParsersAction[ArgumentParser], console: Console) -> None:
    view = commands.add_parser(
        "view",
        console=console,
        help="a local page over the stored runs: list them, show one, compare two",
        description="Serve a read-only page on a loopback address listing the runs in RUNS_DIR (each checked as "
        "replay checks it), showing one, and comparing two scenario by scenario (/compare?a=RUN&b=RUN): status "
        "changes, checks that newly fail or pass, the answer and tool calls of each side. "
        "Exit 0: stopped with Ctrl-C, or the comparison written; 2: a run or address that cannot be used.",
    )
    view.add_argument(
        "runs_dir", nargs="?", default=".behavegate/runs", metavar="RUNS_DIR", help="the runs folder (default: .behavegate/runs)"
    )
    view.add_argument(
        "--host", default="127.0.0.1", help="loopback address to listen on (default: 127.0.0.1; no other is allowed)"
    )
    view.add_argument("--port", type=int, default=0, help="port to listen on (default: a free one, printed)")
    view.add_argument(
        "--compare",
        nargs=2,
        default=None,
        metavar=("A", "B"),
        help="write the comparison of runs A and B to --html instead of serving",
    )
    view.add_argument("--html", default=None, metavar="FILE", help="with --compare: the HTML file to write")


def _add_init(commands: argparse._SubParsersAction[ArgumentParser], console: Console) -> None:
    init = commands.add_parser(
        "init", console=console, help="write a starter contract", description="Write a starter behavior contract."
    )
    init.add_argument("--path", default=".behavegate/contract.yml", help="where to write it (default: .behavegate/contract.yml)")
    init.add_argument("--force", action="store_true", help="overwrite an existing contract file")
    init.add_argument(
        "--version",
        dest="contract_version",
        type=int,
        choices=[1, 2],
        default=1,
        help="contract version to start from (default: 1, the skylos-compatible format)",
    )


COMMANDS: tuple[tuple[str, Callable[[argparse._SubParsersAction[ArgumentParser], Console], None]], ...] = (
    ("test", _add_test),
    ("watch", _add_watch),
    ("merge", _add_merge),
    ("replay", _add_replay),
    ("show", _add_show),
    ("list", _add_listing),
    ("traces", _add_traces),
    ("validate", _add_validate),
    ("view", _add_view),
    ("init", _add_init),
)
"""Every command: its name and what adds its parser."""


def _test_options(test: argparse.ArgumentParser) -> None:
    """``test``'s arguments; ``watch`` takes the same."""
    test.add_argument(
        "contract",
        nargs="*",
        default=None,
        metavar="CONTRACT",
        help="contract paths, or folders of them (their *.yml and *.yaml files); several make a suite, each "
        "contract its own testsuite in every report (default: discover .behavegate/contract.yml, then "
        ".skylos/agent-test.yml, and every Oxy test file (*.test.yml with cases) in the project outside hidden, "
        "dependency and build folders: docs/oxy.md)",
    )
    # Grouped as people look for options: --help (and its usage line) shows them in this order.
    evidence = test.add_argument_group(*GROUPS["evidence"])
    evidence.add_argument(
        "--observations", default=None, metavar="FILE", help="judge a captured observation file (offline; no network)"
    )
    evidence.add_argument(
        "--traces",
        action="append",
        default=[],
        metavar="FILE_OR_DIR",
        help="judge recorded OpenTelemetry traces: a file or a folder of them (repeatable; offline; no network)",
    )
    _trace_options(evidence)
    evidence.add_argument(
        "--save-observations",
        default=None,
        metavar="FILE",
        help="write what a live run observed as an observation file (token redacted) to replay offline",
    )
    live = test.add_argument_group(*GROUPS["live"])
    live.add_argument(
        "--endpoint", default=None, metavar="URL", help="trusted agent endpoint for this run (overrides agent.endpoint)"
    )
    live.add_argument(
        "--auth-env", default=None, metavar="VAR", help="environment variable holding a bearer token; requires --endpoint"
    )
    live.add_argument("--allow-remote", action="store_true", help="allow a non-loopback HTTPS --endpoint")
    live.add_argument("--allow-contract-endpoint", action="store_true", help="allow the contract's own loopback endpoint")
    live.add_argument(
        "--allow-host",
        action="append",
        default=[],
        metavar="NAME",
        help="allow plain-http endpoints on this service host name when it resolves only to loopback, "
        "RFC 1918 or unique local addresses (repeatable; for CI service containers)",
    )
    live.add_argument(
        "--mcp-listen",
        default=None,
        metavar="ADDR",
        help="agent.mcp: the IP address the scripted MCP tool server binds (default 127.0.0.1); e.g. "
        "the Action container's own address on the job network, for an agent in a service container",
    )
    live.add_argument(
        "--tools-mcp",
        default=None,
        metavar="URL",
        help="agent.tools_from: the trusted MCP server whose tools/list is the agent's tools (overrides agent.tools_from.mcp)",
    )
    live.add_argument(
        "--mcp-port",
        type=int,
        default=None,
        metavar="PORT",
        help="agent.mcp: the port the scripted MCP tool server binds (default: an ephemeral one); "
        "agent.mcp.url: fixed needs it (the agent is configured with http://ADDR:PORT/mcp)",
    )
    live.add_argument(
        "--concurrency",
        type=int,
        default=None,
        metavar="N",
        help=f"live requests in flight at once, 1-{limits.MAX_CONCURRENCY} (default: an Oxy test file's "
        f"settings.concurrency, else {limits.DEFAULT_CONCURRENCY})",
    )
    live.add_argument(
        "--retries",
        type=int,
        default=None,
        metavar="N",
        help=f"version 2: send a request again up to N times (0-{limits.MAX_RETRIES}) on HTTP 429, 502, 503, 504 "
        "or a connection reset, after a backoff or the server's Retry-After, within the request's deadline; "
        "each retry is recorded (default: never)",
    )
    live.add_argument(
        "--cache",
        default=None,
        metavar="DIR",
        help="authoring only: replay the agent's answers from DIR, keyed by the exact request and attempt index, "
        "and store those not there yet; refused under CI=true or GITHUB_ACTIONS=true and with --baseline, "
        "--fail-on regression, --shard, --github-output or --annotations (every view says how many answers came from it)",
    )
    selection = test.add_argument_group(*GROUPS["selection"])
    selection.add_argument(
        "--scenario", action="append", dest="scenarios", metavar="ID", help="run only this scenario id (repeatable)"
    )
    selection.add_argument(
        "--case",
        action="append",
        default=None,
        metavar="CASE",
        help="an Oxy test file: run only this case, by 0-based index, name, exact prompt or scenario id "
        "(one file; repeat for several; a value naming two cases is refused)",
    )
    selection.add_argument(
        "--runs", type=int, default=None, metavar="N", help="version 2: attempts per scenario (overrides runs)"
    )
    selection.add_argument(
        "--tag",
        action="append",
        dest="tags",
        default=[],
        metavar="TAG",
        help="version 2: only scenarios with this tag or golden-query category (repeatable)",
    )
    selection.add_argument(
        "--max-scenarios",
        type=int,
        default=None,
        metavar="N",
        help=f"most scenarios a run may select (default: {limits.DEFAULT_MAX_SCENARIOS}, at most {limits.MAX_RUN_SCENARIOS}, "
        f"for a version-1 contract; version 2: every scenario it names, at most {limits.V2_MAX_SCENARIOS:,})",
    )
    selection.add_argument(
        "--max-assertions",
        type=int,
        default=None,
        metavar="N",
        help=f"version 2: most assertions a contract may hold (default: {limits.V2_MAX_ASSERTIONS:,}; "
        f"at most {limits.MAX_ASSERTIONS_CEILING:,}); version 1 keeps skylos's 250",
    )
    budgets = test.add_argument_group(*GROUPS["budgets"])
    budgets.add_argument(
        "--max-seconds",
        type=float,
        default=None,
        metavar="S",
        help=f"wall-time budget of the run, 0-{int(limits.MAX_RUN_SECONDS)} (default: {int(limits.DEFAULT_MAX_SECONDS)})",
    )
    budgets.add_argument(
        "--max-tokens",
        type=int,
        default=None,
        metavar="N",
        help=f"response-token cap sent to the endpoint, 1-{limits.MAX_OUTPUT_TOKENS} (default: {limits.DEFAULT_MAX_TOKENS})",
    )
    budgets.add_argument(
        "--max-total-tokens",
        type=int,
        default=None,
        metavar="N",
        help=f"live: the whole run's token budget, 1-{limits.MAX_RUN_TOKENS:,}: once the finished attempts "
        "reported N tokens, no further attempt is sent and those left are incomplete (default: none)",
    )
    budgets.add_argument(
        "--max-cost",
        type=float,
        default=None,
        metavar="USD",
        help="version 2 live: the whole run's cost budget in USD, priced by agent.pricing: once the finished "
        "attempts cost this much, no further attempt is sent and those left are incomplete (default: none)",
    )
    _judge_options(test.add_argument_group(*GROUPS["judging"]))
    gates = test.add_argument_group(*GROUPS["gates"])
    _gating(gates)
    gates.add_argument(
        "--min-pass-rate",
        type=_rate,
        default=None,
        metavar="RATE",
        help="version 2: suite-wide pass-rate floor, 0-1 (overrides gates.min_pass_rate)",
    )
    gates.add_argument(
        "--gate-tag",
        action="append",
        type=_gate_tag,
        default=None,
        metavar="TAG=RATE",
        help="version 2: a pass-rate gate on the scenarios tagged TAG (repeatable; over gates.by_tag)",
    )
    gates.add_argument(
        "--threshold-mode",
        choices=["average", "all"],
        default=None,
        help="version 2: the floor applies to the average, or to every included file",
    )
    outputs = test.add_argument_group(*GROUPS["outputs"])
    outputs.add_argument("--format", choices=["table", "json"], default="table", help="output format (default: table)")
    outputs.add_argument("--output", "-o", default=None, metavar="FILE", help="write the output to a file inside the project")
    outputs.add_argument("--quiet", "-q", action="store_true", help="table: an Oxy test file's cases, score and consistency only")
    outputs.add_argument(
        "--verbose",
        "-v",
        action="store_true",
        help="table: every scenario's row (past 50 scenarios only those that did not pass are listed); for each "
        "run that did not pass, the agent's tool calls, its answer and the judge's reasoning",
    )
    outputs.add_argument("--no-artifacts", action="store_true", help="do not write evidence artifacts")
    _views(outputs)
    sharding = test.add_argument_group(*GROUPS["sharding"])
    sharding.add_argument(
        "--shard",
        default=None,
        metavar="K/N",
        help="run only shard K of N (a stable partition of the scenario attempts) and write a shard report; "
        "exit 0 once it is written: `behavegate merge` of every shard report gives the verdict",
    )


def _trace_options(command: argparse._ActionsContainer, *, binding: bool = True) -> None:
    command.add_argument(
        "--trace-format",
        choices=["otlp-json", "otlp-jsonl", "proto3-json", "console", "assay"],
        default=None,
        help="the trace files' format (default: told from each file)",
    )
    if binding:
        command.add_argument(
            "--trace-bind",
            choices=["auto", "attribute", "conversation", "prompt"],
            default="auto",
            help="how a trace names its scenario: an attribute (see --trace-attribute), gen_ai.conversation.id, "
            "or its first user message equal to the scenario prompt; auto (default): the first of "
            "these the trace holds",
        )
    command.add_argument(
        "--trace-attribute",
        default="behavegate.scenario.id",
        metavar="NAME",
        help="the span or resource attribute holding the scenario id (default: behavegate.scenario.id)",
    )


def _gating(command: argparse._ActionsContainer) -> None:
    """What fails the run, and the baseline it is compared with (a test, or a merge of shards)."""
    command.add_argument(
        "--baseline",
        default=None,
        metavar="REPORT",
        help="compare with a baseline JSON report (e.g. the main branch's --report): regressions, "
        "improvements, new and removed scenarios lead every output",
    )
    command.add_argument(
        "--fail-on",
        type=_fail_on,
        choices=[m.value for m in FailOn],
        default=FailOn.INCOMPLETE,
        help="what fails the run: a violation or missing evidence (incomplete, exit 1 or 2), violations only "
        "(fail), only regressions against --baseline (regression: exit 1 on a regression, 2 when missing "
        "evidence could hide one), or nothing (never: exit 0 once judged); invalid input or a run that "
        "cannot be judged always exits 2 (default: incomplete)",
    )


def _views(command: argparse._ActionsContainer) -> None:
    """The files and CI views of a judged run."""
    command.add_argument("--report", default=None, metavar="FILE", help="also write the JSON report (whatever --format says)")
    command.add_argument("--junit", default=None, metavar="FILE", help="also write a JUnit XML report")
    command.add_argument(
        "--summary", default=None, metavar="FILE", help="also write a Markdown summary (e.g. $GITHUB_STEP_SUMMARY)"
    )
    command.add_argument(
        "--html",
        default=None,
        metavar="FILE",
        help="also write a self-contained HTML report (no external requests; agent text shown as text)",
    )
    command.add_argument(
        "--sarif",
        default=None,
        metavar="FILE",
        help="also write SARIF 2.1.0 for GitHub code scanning: one finding per failed or incomplete assertion",
    )
    command.add_argument(
        "--annotations",
        action="store_true",
        help="print GitHub annotations on the contract lines that failed (on stderr with --format json)",
    )
    command.add_argument("--github-output", default=None, metavar="FILE", help="append step outputs (e.g. $GITHUB_OUTPUT)")


def _format(command: argparse._ActionsContainer) -> None:
    command.add_argument("--format", choices=["table", "json"], default="table", help="output format (default: table)")


def _fail_on(value: str) -> FailOn | str:
    try:
        return FailOn(value)
    except ValueError:
        return value  # argparse refuses it as an invalid choice, naming the choices


def _rate(value: str) -> float:
    try:
        return float(value) + 0.0  # -0 is 0 (range and nan are checked with the options)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a number between 0 and 1, got {value!r}") from None


def _gate_tag(value: str) -> TagGate:
    from behavegate.contract.v2_run import gate_tag_option

    try:
        return gate_tag_option(value)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def _judge_options(parser: argparse._ActionsContainer) -> None:
    """Where response.judge checks are asked (docs/judge.md): the agent endpoint's trust rules, own flags."""
    parser.add_argument(
        "--judge-endpoint",
        default=None,
        metavar="URL",
        help="version 2: trusted judge endpoint for response.judge checks (overrides judge.endpoint)",
    )
    parser.add_argument(
        "--judge-model", default=None, metavar="NAME", help="version 2: the judge's model (overrides judge.model)"
    )
    parser.add_argument(
        "--judge-auth-env",
        default=None,
        metavar="VAR",
        help="environment variable holding the judge's bearer token; requires --judge-endpoint",
    )
    parser.add_argument("--judge-allow-remote", action="store_true", help="allow a non-loopback HTTPS --judge-endpoint")
    parser.add_argument(
        "--judge-allow-contract-endpoint", action="store_true", help="allow the contract's own loopback judge.endpoint"
    )
    parser.add_argument(
        "--judge-timeout",
        type=float,
        default=None,
        metavar="S",
        help=f"seconds for each judge request, more than 0 and at most 300 (default: judge.timeout_seconds, else {int(limits.DEFAULT_JUDGE_TIMEOUT_SECONDS)})",
    )
    parser.add_argument(
        "--judge-max-requests",
        type=int,
        default=None,
        metavar="N",
        help=f"most judge requests in the run (default: judge.max_requests, else {limits.DEFAULT_JUDGE_MAX_REQUESTS})",
    )
    parser.add_argument(
        "--judge-max-tokens",
        type=int,
        default=None,
        metavar="N",
        help=f"max_tokens sent with each judge request (default: judge.max_tokens, else {limits.DEFAULT_JUDGE_MAX_TOKENS})",
    )


def parsed(args: argparse.Namespace) -> Command:
    """The command the parsed arguments name, as its frozen value: the one place argparse's
    Namespace is read (argparse leaves every option that was not given at its default)."""
    from behavegate.commands import invocation as given

    if args.command == "watch":
        return given.WatchCommand(test=_test_command(args), interval=args.interval, max_runs=1 if args.once else args.max_runs)
    if args.command == "test":
        return _test_command(args)
    if args.command == "merge":
        return given.MergeCommand(
            reports=tuple(args.reports),
            contract=args.contract,
            artifacts=not args.no_artifacts,
            gating=_gating_of(args),
            views=_views_of(args),
        )
    if args.command == "replay":
        return given.ReplayCommand(run_dir=args.run_dir, format=args.format)
    if args.command == "show":
        return given.ShowCommand(run_dir=args.run_dir, scenario=args.scenario, format=args.format, max_chars=args.max_chars)
    if args.command == "list":
        return given.ListCommand(library=args.library, format=args.format)
    if args.command == "init":
        return given.InitCommand(path=args.path, force=bool(args.force), contract_version=args.contract_version)
    if args.command == "traces":
        if args.traces_command is None:  # no action named: nothing else was parsed
            return given.TracesCommand(action=None)
        return given.TracesCommand(
            action=args.traces_command,
            files=tuple(args.files),
            format=args.format,
            trace_format=args.trace_format,
            trace_attribute=args.trace_attribute,
        )
    if args.command == "view":
        compare = None if args.compare is None else (str(args.compare[0]), str(args.compare[1]))
        return given.ViewCommand(runs_dir=args.runs_dir, host=args.host, port=args.port, compare=compare, html=args.html)
    if args.command == "validate":
        return given.ValidateCommand(contracts=tuple(args.contract or ()), format=args.format)
    raise ValueError(f"no such command: {args.command!r}")


def _test_command(args: argparse.Namespace) -> TestCommand:
    """``test`` (and ``watch``, which runs it) as invoked."""
    from behavegate.commands import invocation as given

    return given.TestCommand(
        contracts=tuple(args.contract or ()),
        request=_request(args),
        evidence=given.Evidence(
            observations=args.observations,
            traces=tuple(args.traces),
            trace_format=args.trace_format,
            trace_bind=args.trace_bind,
            trace_attribute=args.trace_attribute,
        ),
        live=given.LiveAccess(
            allow_hosts=tuple(args.allow_host),
            mcp_listen=args.mcp_listen,
            mcp_port=args.mcp_port,
            tools_mcp=args.tools_mcp,
            cache=args.cache,
        ),
        cases=tuple(args.case) if args.case is not None else None,
        shard=args.shard,
        gating=_gating_of(args),
        views=_views_of(args),
    )


def _request(args: argparse.Namespace) -> TestRequest:
    from behavegate.commands.judge_options import JudgeOptions
    from behavegate.commands.request import TestRequest

    return TestRequest(
        scenarios=tuple(args.scenarios) if args.scenarios else None,
        tags=tuple(args.tags),
        endpoint=args.endpoint,
        auth_env=args.auth_env,
        allow_remote=bool(args.allow_remote),
        allow_contract_endpoint=bool(args.allow_contract_endpoint),
        concurrency=args.concurrency,
        max_scenarios=args.max_scenarios,
        max_seconds=args.max_seconds,
        max_tokens=args.max_tokens,
        max_assertions=args.max_assertions,
        retries=args.retries,
        max_total_tokens=args.max_total_tokens,
        max_cost=args.max_cost,
        runs=args.runs,
        min_pass_rate=args.min_pass_rate,
        threshold_mode=args.threshold_mode,
        gate_tags=tuple(args.gate_tag or ()),
        artifacts=not args.no_artifacts,
        judge=JudgeOptions(
            endpoint=args.judge_endpoint,
            model=args.judge_model,
            auth_env=args.judge_auth_env,
            allow_remote=bool(args.judge_allow_remote),
            allow_contract_endpoint=bool(args.judge_allow_contract_endpoint),
            timeout_seconds=args.judge_timeout,
            max_requests=args.judge_max_requests,
            max_tokens=args.judge_max_tokens,
        ),
    )


def _gating_of(args: argparse.Namespace) -> Gating:
    from behavegate.commands.invocation import Gating

    return Gating(baseline=args.baseline, fail_on=FailOn(args.fail_on))


def _views_of(args: argparse.Namespace) -> Views:
    """``test`` and ``merge``: merge has no --quiet and writes no observations."""
    from behavegate.github.views import OutputPaths, Views

    quiet, verbose = getattr(args, "quiet", False), getattr(args, "verbose", False)
    return Views(
        format=args.format,
        detail="quiet" if quiet else "verbose" if verbose else "normal",
        annotations=bool(args.annotations),
        paths=OutputPaths(
            output=args.output,
            report=args.report,
            junit=args.junit,
            summary=args.summary,
            html=args.html,
            sarif=args.sarif,
            github_output=args.github_output,
            save_observations=getattr(args, "save_observations", None),
        ),
    )
