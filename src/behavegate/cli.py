"""The command line: the only place that reads the environment, the clock and
argv, and the only place that turns exceptions into messages and exit codes.

Heavy modules are imported inside the commands so ``behavegate --version``
starts fast.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any, TextIO

from . import __version__
from .ci import write_untrusted
from .limits import DEFAULT_MAX_SCENARIOS, DEFAULT_MAX_SECONDS, DEFAULT_MAX_TOKENS

EXIT_PASS, EXIT_FAIL, EXIT_INCOMPLETE = 0, 1, 2


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="behavegate",
        description="Test what a running AI agent does against a behavior contract.",
    )
    parser.add_argument("--version", action="version", version=f"behavegate {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")

    test = commands.add_parser(
        "test",
        help="judge an agent's behavior against a contract",
        description="Judge an agent's behavior against a contract. Exit 0: every assertion passed; "
        "1: a behavior was violated; 2: the contract, run or evidence was invalid or incomplete.",
    )
    test.add_argument(
        "contract",
        nargs="?",
        default=None,
        help="contract path (default: discover .behavegate/contract.yml, then .skylos/agent-test.yml)",
    )
    test.add_argument(
        "--observations", default=None, metavar="FILE", help="judge a captured observation file (offline; no network)"
    )
    test.add_argument(
        "--endpoint", default=None, metavar="URL", help="trusted agent endpoint for this run (overrides agent.endpoint)"
    )
    test.add_argument(
        "--auth-env", default=None, metavar="VAR", help="environment variable holding a bearer token; requires --endpoint"
    )
    test.add_argument("--allow-remote", action="store_true", help="allow a non-loopback HTTPS --endpoint")
    test.add_argument("--allow-contract-endpoint", action="store_true", help="allow the contract's own loopback endpoint")
    test.add_argument("--allow-host", action="append", default=[], metavar="NAME",
                      help="allow plain-http endpoints on this service host name when it resolves only to private, "
                      "loopback or link-local addresses (repeatable; for CI service containers)")  # fmt: skip
    test.add_argument(
        "--concurrency", type=int, default=4, metavar="N", help="live requests in flight at once, 1-64 (default: 4)"
    )
    test.add_argument(
        "--scenario", action="append", dest="scenarios", metavar="ID", help="run only this scenario id (repeatable)"
    )
    test.add_argument("--format", choices=["table", "json"], default="table", help="output format (default: table)")
    test.add_argument("--output", "-o", default=None, metavar="FILE", help="write the output to a file inside the project")
    test.add_argument("--no-artifacts", action="store_true", help="do not write evidence artifacts")
    test.add_argument("--runs", type=int, default=None, metavar="N", help="version 2: attempts per scenario (overrides runs)")
    test.add_argument("--tag", action="append", dest="tags", default=[], metavar="TAG",
                      help="version 2: only scenarios with this tag or golden-query category (repeatable)")  # fmt: skip
    test.add_argument("--min-pass-rate", type=float, default=None, metavar="RATE",
                      help="version 2: suite-wide pass-rate floor, 0-1 (overrides gates.min_pass_rate)")  # fmt: skip
    test.add_argument("--threshold-mode", choices=["average", "all"], default=None,
                      help="version 2: the floor applies to the average, or to every included file")  # fmt: skip
    test.add_argument("--report", default=None, metavar="FILE", help="also write the JSON report (whatever --format says)")
    test.add_argument("--junit", default=None, metavar="FILE", help="also write a JUnit XML report")
    test.add_argument("--summary", default=None, metavar="FILE", help="also write a Markdown summary (e.g. $GITHUB_STEP_SUMMARY)")
    test.add_argument("--annotations", action="store_true", help="print GitHub annotations on the contract lines that failed")
    test.add_argument("--github-output", default=None, metavar="FILE", help="append step outputs (e.g. $GITHUB_OUTPUT)")
    test.add_argument("--save-observations", default=None, metavar="FILE",
                      help="write what a live run observed as an observation file (token redacted) to replay offline")  # fmt: skip
    test.add_argument("--max-scenarios", type=int, default=DEFAULT_MAX_SCENARIOS, metavar="N",
                      help=f"most scenarios a run may select, 1-1000 (default: {DEFAULT_MAX_SCENARIOS})")  # fmt: skip
    test.add_argument("--max-seconds", type=float, default=DEFAULT_MAX_SECONDS, metavar="S",
                      help=f"wall-time budget of the run, 0-3600 (default: {int(DEFAULT_MAX_SECONDS)})")  # fmt: skip
    test.add_argument("--max-tokens", type=int, default=DEFAULT_MAX_TOKENS, metavar="N",
                      help=f"response-token cap sent to the endpoint, 1-32768 (default: {DEFAULT_MAX_TOKENS})")  # fmt: skip

    replay = commands.add_parser(
        "replay",
        help="check that a run's evidence artifacts are whole and untouched",
        description="Check a run directory (.behavegate/runs/<run-id>) against itself: every file present, "
        "canonical and sealed, every digest and count re-derived. Exit 0: valid; 1: invalid; 2: unusable input.",
    )
    replay.add_argument("run_dir", metavar="RUN_DIR", help="the run directory")
    replay.add_argument("--format", choices=["table", "json"], default="table", help="output format (default: table)")

    init = commands.add_parser(
        "init",
        help="write a starter contract",
        description="Write a starter behavior contract.",
    )
    init.add_argument("--path", default=".behavegate/contract.yml", help="where to write it (default: .behavegate/contract.yml)")
    init.add_argument("--force", action="store_true", help="overwrite an existing contract file")
    init.add_argument("--version", dest="contract_version", type=int, choices=[1, 2], default=1,
                      help="contract version to start from (default: 1, the skylos-compatible format)")  # fmt: skip
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        if args.command == "test":
            return run_test(args, sys.stdout, sys.stderr)
        if args.command == "init":
            return run_init(args, sys.stdout, sys.stderr)
        if args.command == "replay":
            return run_replay(args, sys.stdout, sys.stderr)
        parser.print_help()
        return EXIT_INCOMPLETE
    except KeyboardInterrupt:
        print("behavegate: interrupted", file=sys.stderr)
        return 130
    except Exception as exc:  # never a traceback to a user
        if os.environ.get("BEHAVEGATE_DEBUG"):
            raise
        print(f"behavegate: internal error: {type(exc).__name__}: {exc}", file=sys.stderr)
        print("behavegate: set BEHAVEGATE_DEBUG=1 to see the traceback, and please report it", file=sys.stderr)
        return EXIT_INCOMPLETE


def exit_code(status: str) -> int:
    return {"pass": EXIT_PASS, "fail": EXIT_FAIL}.get(status, EXIT_INCOMPLETE)


def run_test(args: argparse.Namespace, stdout: TextIO, stderr: TextIO) -> int:
    from .errors import BehavegateError
    from .files import resolve_inside, write_project_text

    root = Path.cwd().resolve()
    try:
        contract_path, root = _locate_contract(args.contract, root)
        report = _test(args, contract_path, root)
        output = _render(report, args.format)
        written: dict[str, str] = {}
        if args.output:
            destination = resolve_inside(args.output, root, "output path")
            write_project_text(destination, root, output.rstrip() + "\n")
            written["report"] = _display(destination, root)
            if args.format == "table":
                print(f"Wrote agent behavior report: {destination}", file=stdout)
        elif args.format == "json":
            stdout.write(output + "\n")  # JSON lines cannot start a workflow command
        else:
            write_untrusted(stdout, output)
        _ci_outputs(args, report, root, written, stdout)
        return exit_code(str(report["status"]))
    except (BehavegateError, OSError) as exc:
        _report_error(args, root, exc, stdout, stderr)
        _ci_error_outputs(args, root, exc, stdout)
        return EXIT_INCOMPLETE


def _ci_error_outputs(args: argparse.Namespace, root: Path, exc: Exception, stdout: TextIO) -> None:
    """Even a run that could not start tells CI why: the JSON report, the summary,
    an annotation on each contract line at fault, and status=incomplete."""
    from .ci import append_file, output_block, write_commands
    from .errors import ContractError
    from .render.annotations import command
    from .render.summary import code

    message = str(exc)
    if args.report:
        payload = {"schema_version": 1, "kind": "agent_behavior", "status": "incomplete", "error": message}
        _write_quietly(args.report, json.dumps(payload, indent=2, sort_keys=True), root, "--report")
    if args.summary:
        text = f"## ⚠️ behavegate: the run could not be judged\n\n{code(message, limit=2000)}\n"
        _write_quietly(args.summary, text, root, "--summary")
    if args.annotations:
        where = _display(Path(args.contract), root) if args.contract else "contract"
        problems = exc.problems[:10] if isinstance(exc, ContractError) else ()
        lines = [command("error", p.located(), file=where, line=p.line, title="behavegate: invalid contract") for p in problems]
        write_commands(stdout, "\n".join(lines or [command("error", message, title="behavegate: run incomplete")]))
    if args.github_output:
        values = {"status": "incomplete", "passed": "0", "failed": "0", "incomplete": "0", "report": args.report or "",
                  "junit": "", "summary": args.summary or "", "run-dir": ""}  # fmt: skip
        _write_quietly(args.github_output, output_block(values), root, "--github-output", append_file)


def _ci_outputs(args: argparse.Namespace, report: dict[str, Any], root: Path, written: dict[str, str], stdout: TextIO) -> None:
    """JUnit, summary, annotations and step outputs, each when asked for.

    A file that cannot be written under the path rule does not stop the others;
    then the run ends incomplete, naming every refused path."""
    from .ci import append_file, output_block, write_commands
    from .errors import InputError

    refused: list[str] = []
    for flag in ("report", "junit", "summary"):
        path = getattr(args, flag)
        if path:
            try:
                _write_plain(path, _render_file(flag, report), root, f"--{flag}")
                written[flag] = path
            except InputError as exc:
                refused.append(str(exc))
    if refused:
        raise InputError("; ".join(refused))
    if args.annotations:
        from .render import annotations

        write_commands(stdout, annotations.render(report))
    if args.github_output:
        counts = report["summary"]
        values = {
            "status": str(report["status"]),
            "passed": str(counts["passed_scenarios"]),
            "failed": str(counts["failed_scenarios"]),
            "incomplete": str(counts["incomplete_scenarios"]),
            "report": written.get("report", ""),
            "junit": written.get("junit", ""),
            "summary": written.get("summary", ""),
            "run-dir": str(report.get("behavegate", {}).get("run_dir") or ""),
        }
        append_file(args.github_output, output_block(values), root)


def _render_file(flag: str, report: dict[str, Any]) -> str:
    """Renderers are imported only when their file is asked for (start-up time)."""
    if flag == "report":
        from .render import json as renderer
    elif flag == "junit":
        from .render import junit as renderer  # type: ignore[no-redef]
    else:
        from .render import summary as renderer  # type: ignore[no-redef]
    return str(renderer.render(report))


def _write_plain(path: str, text: str, root: Path, label: str) -> None:
    """Every output file goes through ``files.write_file`` under one path rule (docs/cli.md)."""
    from .files import place_output, write_file

    write_file(place_output(path, root, label, os.environ, Path.cwd()), text if text.endswith("\n") else text + "\n", label)


def _write_quietly(path: str, text: str, root: Path, label: str, writer: Any = None) -> None:
    """An error output that cannot be written is skipped: the error itself is reported already."""
    from .errors import BehavegateError

    try:
        if writer is None:
            _write_plain(path, text, root, label)
        else:
            writer(path, text, root)
    except (BehavegateError, OSError):
        pass


def _locate_contract(argument: str | None, cwd: Path) -> tuple[Path, Path]:
    from .errors import InputError
    from .files import discover_contract

    if argument is not None:
        return Path(argument), cwd
    found = discover_contract(cwd)
    if found is None:
        raise InputError("No .behavegate/contract.yml or .skylos/agent-test.yml found; run behavegate init")
    return found


def _test(args: argparse.Namespace, contract_path: Path, root: Path) -> dict[str, Any]:
    from .artifacts import Timing
    from .contract import load_contract
    from .errors import RunError, UsageError
    from .observations import load_observations
    from .offline import run_offline
    from .options import RunOptions, scenario_selection, select, validate, validate_v2

    clock = _Clock()
    contract = load_contract(contract_path, root)
    attempts = contract.version >= 2
    observations = load_observations(args.observations, root, attempts=attempts) if args.observations else None
    options = RunOptions(
        scenarios=scenario_selection(args.scenarios),
        endpoint=args.endpoint,
        auth_env=args.auth_env,
        allow_remote=bool(args.allow_remote),
        allow_contract_endpoint=bool(args.allow_contract_endpoint),
        max_scenarios=args.max_scenarios,
        max_seconds=args.max_seconds,
        max_tokens=args.max_tokens,
        artifacts=not args.no_artifacts,
        runs=args.runs,
        tags=tuple(args.tags),
        min_pass_rate=args.min_pass_rate,
        threshold_mode=args.threshold_mode,
    )
    validate(options, offline=observations is not None)
    validate_v2(options, contract)
    if observations is not None and (args.allow_host or args.save_observations):
        raise UsageError("--observations cannot be combined with live endpoint options")
    if not 1 <= args.concurrency <= 64:
        raise UsageError("--concurrency must be between 1 and 64")
    selected = select(contract, options, observations)
    if observations is None:
        report, timings = _live(args, selected, options, clock, root, display=_display(contract.path, root))
    else:
        report = run_offline(selected, observations, options, clock.facts(options), display_path=_display(contract.path, root))
        timings = [Timing(report["harness"]["started_at"], report["harness"]["ended_at"], 0)] * len(selected.scenarios)
    elapsed = clock.elapsed()
    if elapsed > options.max_seconds:
        raise RunError(
            f"agent behavior run exceeded its budget: harness time budget exceeded: {elapsed:.3f}s>{options.max_seconds:.3f}s"
        )
    extra = report["behavegate"]
    chosen = set(selected.scenario_ids())
    extra["skipped"] = [{"id": s.id, "line": s.line} for s in contract.scenarios if s.id not in chosen]
    extra["seconds"] = {s.id: t.duration_ms / 1000 for s, t in zip(selected.scenarios, timings, strict=True)}
    if options.artifacts:
        _write_artifacts(report, timings, root)
    return report


def _write_artifacts(report: dict[str, Any], timings: list[Any], root: Path) -> None:
    """Write the run directory; on failure the report says so and a pass becomes incomplete."""
    from .artifacts import build_files, write_run

    try:
        write_run(root, report["harness"]["run_id"], build_files(report, timings))
    except OSError as exc:
        report.setdefault("issues", []).append(
            {"code": "harness_artifact_write_failed", "message": f"required harness artifacts were not written: {exc}"}
        )
        report["evidence_digest"] = None
        if report["status"] != "fail":
            report["status"] = "incomplete"


def _live(
    args: argparse.Namespace, contract: Any, options: Any, clock: _Clock, root: Path, display: str
) -> tuple[dict[str, Any], list[Any]]:
    from . import live
    from .files import resolve_inside, write_project_text
    from .progress import Progress
    from .trust import choose_endpoint, load_credentials, pin_allowed_host, system_resolver

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
    settings = live.LiveSettings(
        endpoint=endpoint,
        credentials=credentials,
        max_tokens=options.max_tokens,
        max_seconds=float(options.max_seconds),
        concurrency=args.concurrency,
        started=clock.monotonic,
    )
    progress = Progress(len(live.jobs(contract, options.runs)), sys.stderr, clock.monotonic)
    results = live.observe(contract, settings, progress.scenario_done, options.runs)
    progress.finish()
    observations = [observation for _, observation, _ in results]
    result = live.judge(contract, observations, settings, options, clock.facts(options), display_path=display)
    if args.save_observations:
        destination = resolve_inside(args.save_observations, root, "Observation file")
        write_project_text(destination, root, live.observation_file(result) + "\n")
    return result, _scenario_timings(contract, results)


def _scenario_timings(contract: Any, results: list[Any]) -> list[Any]:
    """One timing per scenario (attempts of one scenario span from first start to last end)."""
    from .artifacts import Timing

    spans: dict[str, list[Any]] = {}
    for job, _, timing in results:
        spans.setdefault(job.scenario.id, []).append(timing)
    out = []
    for scenario in contract.scenarios:
        timings = spans.get(scenario.id) or [Timing("", "", 0)]
        out.append(
            Timing(min(t.started_at for t in timings), max(t.ended_at for t in timings), sum(t.duration_ms for t in timings))
        )
    return out


def _display(path: Path, root: Path) -> str:
    workspace = os.environ.get("GITHUB_WORKSPACE")
    for base in filter(None, (workspace, str(root))):
        try:
            return Path(path).relative_to(base).as_posix()
        except ValueError:
            continue
    return str(path)


class _Clock:
    """The run's id and wall clock (the only clock reads of a run)."""

    def __init__(self) -> None:
        import time
        from datetime import UTC, datetime

        self._time = time
        self._datetime = datetime
        self._utc = UTC
        self.started = datetime.now(UTC)
        self.monotonic = time.monotonic()
        self.run_id = f"{self.started.strftime('%Y%m%dT%H%M%SZ')}-{os.urandom(4).hex()}"

    def elapsed(self) -> float:
        return float(self._time.monotonic() - self.monotonic)

    @staticmethod
    def stamp(moment: Any) -> str:
        return str(moment.strftime("%Y-%m-%dT%H:%M:%S.%fZ"))

    def facts(self, options: Any) -> Any:
        from .report import RunFacts

        elapsed_ms = int((self._time.monotonic() - self.monotonic) * 1000)
        return RunFacts(
            run_id=self.run_id,
            started_at=self.stamp(self.started),
            ended_at=self.stamp(self._datetime.now(self._utc)),
            duration_ms=elapsed_ms,
            max_scenarios=options.max_scenarios,
            max_seconds=float(options.max_seconds),
        )


def _render(report: dict[str, Any], fmt: str) -> str:
    if fmt == "json":
        from .render import json as renderer
    else:
        from .render import table as renderer  # type: ignore[no-redef]
    return renderer.render(report)


def _report_error(args: argparse.Namespace, root: Path, exc: Exception, stdout: TextIO, stderr: TextIO) -> None:
    from .errors import BehavegateError
    from .files import resolve_inside, write_project_text

    message = str(exc)
    details = exc.details() if isinstance(exc, BehavegateError) else [message]
    if args.format == "json":
        payload: dict[str, Any] = {"schema_version": 1, "kind": "agent_behavior", "status": "incomplete", "error": message}
        if len(details) > 1 or details[0] != message:
            payload["behavegate"] = {"problems": details}
        rendered = json.dumps(payload, indent=2, sort_keys=True)
        if args.output:
            try:
                destination = resolve_inside(args.output, root, "output path")
                write_project_text(destination, root, rendered + "\n")
                return
            except (BehavegateError, OSError) as output_exc:
                payload["output_error"] = str(output_exc)
                rendered = json.dumps(payload, indent=2, sort_keys=True)
        stdout.write(rendered + "\n")
        return
    from .text import one_line

    lines = [f"Agent behavior test incomplete: {one_line(message, 2000)}"]
    if len(details) > 1 or details[0] != message:
        lines.append(f"{len(details)} problem(s):" if len(details) > 1 else "where:")
        lines.extend(f"  {one_line(detail, 2000)}" for detail in details)
    text = "\n".join(lines)
    if args.output:
        try:
            destination = resolve_inside(args.output, root, "output path")
            write_project_text(destination, root, text + "\n")
            return
        except (BehavegateError, OSError):
            pass
    print(text, file=stderr)


def run_init(args: argparse.Namespace, stdout: TextIO, stderr: TextIO) -> int:
    from .errors import BehavegateError
    from .files import resolve_inside, write_project_text
    from .starter import STARTER_CONTRACT, STARTER_CONTRACT_V2

    root = Path.cwd().resolve()
    try:
        destination = resolve_inside(args.path, root, "output path")
        try:
            text = STARTER_CONTRACT_V2 if args.contract_version == 2 else STARTER_CONTRACT
            write_project_text(destination, root, text, overwrite=bool(args.force))
        except FileExistsError:
            print(f"Could not create agent behavior contract: contract already exists: {destination}; "
                  "use --force to overwrite", file=stderr)  # fmt: skip
            return EXIT_INCOMPLETE
    except (BehavegateError, OSError) as exc:
        print(f"Could not create agent behavior contract: {exc}", file=stderr)
        return EXIT_INCOMPLETE
    print(f"Created agent behavior contract: {destination}", file=stdout)
    print("Run it with: behavegate test --observations FILE  (or --allow-contract-endpoint for live)", file=stdout)
    return EXIT_PASS


def run_replay(args: argparse.Namespace, stdout: TextIO, stderr: TextIO) -> int:
    from .replay import render, validate_run

    run_dir = Path(args.run_dir)
    if not run_dir.is_dir() or run_dir.is_symlink():
        print(f"behavegate replay: {args.run_dir} is not a run directory", file=stderr)
        return EXIT_INCOMPLETE
    issues = validate_run(run_dir)
    stdout.write(render(run_dir, issues, args.format) + "\n")
    return EXIT_FAIL if issues else EXIT_PASS
