"""Time reading behavegate's own JSON formats: a large run record for replay, its report as a
baseline, and a shard report (stdlib only, in this process).

Run from the repository root:

    .venv/bin/python bench/bench_formats.py [--scenarios 1000] [--runs 5] [--repeat 5] [--keep]

It writes a version-2 suite of N scenarios, each run R times (one observation file, every
attempt answered the same), runs ``behavegate test`` once with its run directory, and
once more as shard 1 of 1, then times, each the median of --repeat runs after a warm-up:

* ``json.loads`` of behavior-results.json: the floor;
* replay's shape check of the four files (``replay.shape_issues``, on the parsed files):
  the step that decodes the run record by its schema (report/run_schema.py);
* the whole ``replay`` check (``replay.validate_run``: read, shapes, seal, re-judging);
* ``parse_baseline`` of the JSON report and ``parse_shard_report`` of the shard report;
* the same three decodes with one verdict's status a number (the refusal path, which lists problems).

Every success must come back valid, every refusal must name the mistyped path (exit 1 if not).
"""

from __future__ import annotations

import argparse
import io
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path
from typing import Any


def suite(scenarios: int, runs: int) -> tuple[str, dict[str, Any]]:
    """A contract (YAML flow style) and an observation file: every 20th answer misses its word."""
    rows, observed = [], []
    for i in range(scenarios):
        sid = f"q{i:05d}"
        rows.append(
            f'  - {{id: {sid}, prompt: "question {i}", runs: {runs}, min_pass_rate: 0.5, '
            f"expect: {{response: {{contains: [w{i}]}}, tools: {{required: [{{name: lookup}}]}}}}}}"
        )
        answer = f"the answer is w{i}" if i % 20 else "no idea"
        observed.append(
            {
                "id": sid,
                "response": answer,
                "finish_reason": "stop",
                "response_complete": True,
                "tool_calls_complete": True,
                "tool_calls": [{"name": "lookup", "arguments": {"q": str(i)}}],
                "refusal": False,
                "sources": [],
                "latency_ms": 100 + i % 400,
            }
        )
    contract = (
        "version: 2\nagent:\n  model: m\n  tools:\n    - {name: lookup, description: d, parameters: {type: object}}\n"
        "scenarios:\n" + "\n".join(rows) + "\n"
    )
    return contract, {"version": 2, "scenarios": observed}


def quiet(argv: list[str]) -> int:
    from behavegate.cli import main

    with redirect_stdout(io.StringIO()), redirect_stderr(io.StringIO()):
        return main(argv)


def median_seconds(action: Any, repeat: int) -> float:
    action()  # warm-up
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        action()
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--scenarios", type=int, default=1_000)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--keep", action="store_true", help="keep the temporary directory and print its path")
    args = parser.parse_args()

    from behavegate.errors import BaselineError, ShardError
    from behavegate.report import replay
    from behavegate.report.baseline_file import parse_baseline
    from behavegate.report.layout import EVENTS, RESULTS, STATE, SUMMARY
    from behavegate.report.shard_reports import parse_shard_report

    work = Path(tempfile.mkdtemp(prefix="behavegate-bench-formats-"))
    os.chdir(work)
    print(f"load average: {' '.join(f'{x:.2f}' for x in os.getloadavg())}; cpus: {os.cpu_count()}")
    try:
        contract, observations = suite(args.scenarios, args.runs)
        Path("contract.yml").write_text(contract)
        Path("obs.json").write_text(json.dumps(observations))
        cap = ["--max-scenarios", str(args.scenarios)]
        quiet(["test", "contract.yml", "--observations", "obs.json", *cap, "--report", "r.json"])
        quiet(
            ["test", "contract.yml", "--observations", "obs.json", *cap, "--no-artifacts", "--shard", "1/1", "--report", "s.json"]
        )
        run_dir = work / str(json.loads(Path("r.json").read_text())["behavegate"]["run_dir"])
        texts = {name: (run_dir / name).read_text() for name in (EVENTS, STATE, SUMMARY, RESULTS)}
        events = [json.loads(line) for line in texts[EVENTS].splitlines()]
        state, summary, report = (json.loads(texts[name]) for name in (STATE, SUMMARY, RESULTS))
        baseline, shard = Path("r.json").read_text(), Path("s.json").read_text()
        print(
            f"{args.scenarios} scenarios x {args.runs} runs: behavior-results.json {len(texts[RESULTS]) / 1e6:.1f} MB, "
            f"{len(events)} events; baseline {len(baseline) / 1e6:.1f} MB; shard report {len(shard) / 1e6:.1f} MB"
        )
        ok = not replay.shape_issues(events, state, summary, report) and not replay.validate_run(run_dir)
        parse_baseline(baseline, "r.json")
        parse_shard_report(shard, "s.json", "0" * 64)

        def bad(document: dict[str, Any]) -> dict[str, Any]:
            broken = json.loads(json.dumps(document))
            broken["scenarios"][-1]["attempts"][-1]["assertions"][0]["status"] = 7
            return broken

        bad_report, bad_baseline, bad_shard = (
            bad(report),
            json.dumps(bad(json.loads(baseline))),
            json.dumps(bad(json.loads(shard))),
        )
        where = f"scenarios[{args.scenarios - 1}].attempts[{args.runs - 1}].assertions[0].status"
        said: list[str] = []

        def refused(parse: Any, text: str) -> None:
            try:
                parse(text)
            except (BaselineError, ShardError) as error:
                said.append("\n".join(error.details()))

        timings = {
            "json.loads of behavior-results.json (the floor)": lambda: json.loads(texts[RESULTS]),
            "replay: shape check of the four parsed files": lambda: replay.shape_issues(events, state, summary, report),
            "replay: the whole check (validate_run)": lambda: replay.validate_run(run_dir),
            "parse_baseline (the JSON report)": lambda: parse_baseline(baseline, "r.json"),
            "parse_shard_report": lambda: parse_shard_report(shard, "s.json", "0" * 64),
            "refused: replay shape check, one verdict's status mistyped": lambda: said.append(
                "\n".join(i.message for i in replay.shape_issues(events, state, summary, bad_report))
            ),
            "refused: parse_baseline, one verdict's status mistyped": lambda: refused(
                lambda t: parse_baseline(t, "r.json"), bad_baseline
            ),
            "refused: parse_shard_report, one verdict's status mistyped": lambda: refused(
                lambda t: parse_shard_report(t, "s.json", "0" * 64), bad_shard
            ),
        }
        for label, action in timings.items():
            print(f"  {label:<60} {median_seconds(action, args.repeat):7.3f} s")
        missed = [text for text in said if where not in text]
        if not ok or missed or len(said) < 3:
            print(f"MISMATCH: the valid record was refused, or a refusal did not name {where}: {missed[:1]}")
            return 1
        print(f"every refusal names {where}; the valid documents decode")
        return 0
    finally:
        os.chdir("/")
        if args.keep:
            print(f"kept: {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
    sys.exit(main())
