"""Time `behavegate merge` of N shard reports of a large suite (stdlib only).

Run from the repository root:

    .venv/bin/python bench/bench_merge.py [--scenarios 10000] [--shards 10] [--repeat 3] [--keep]

It generates a version-2 suite (one attempt per scenario, two assertions each, a suite
floor) and its observation file, runs the N shards in this process
(`behavegate test --shard K/N`), then times, each as the median of --repeat runs in this
process after a warm-up:

* `json.load` of the N shard report files: the floor any merge has to pay;
* `behavegate merge SHARDS --no-artifacts --report merged.json` (cli.main: read and check
  the reports, take the contract they carry (contract/as_data.py; or load its YAML),
  recompute the partition, aggregate, build the Report, write the JSON report, print
  the table).

It prints both in seconds and their ratio, and checks the merged verdict equals the
unsharded run's (exit 1 on a mismatch). See bench/README.md.

The suite is version 2, so the shipped version-2 limits hold it (docs/limits.md).
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


def suite(scenarios: int) -> tuple[str, dict[str, Any]]:
    """A contract (YAML flow style, which is JSON) and an observation file: every 20th
    scenario's answer misses its word, every 50th calls no tool."""
    rows, observed = [], []
    for i in range(scenarios):
        sid = f"q{i:05d}"
        rows.append(
            f'  - {{id: {sid}, prompt: "question {i}", tags: [t{i % 7}], '
            f"expect: {{response: {{contains: [w{i}]}}, tools: {{required: [{{name: lookup}}]}}}}}}"
        )
        answer = f"the answer is w{i}" if i % 20 else "no idea"
        calls = [] if i % 50 == 0 else [{"name": "lookup", "arguments": {"q": str(i)}}]
        observed.append({"id": sid, "response": answer, "finish_reason": "stop", "response_complete": True,
                         "tool_calls_complete": True, "tool_calls": calls, "refusal": False, "sources": [],
                         "latency_ms": 100 + i % 400})  # fmt: skip
    contract = (
        "version: 2\ngates: {min_pass_rate: 0.9}\n"
        "agent:\n  model: m\n  tools:\n    - {name: lookup, description: d, parameters: {type: object}}\n"
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


def stages(repeat: int) -> dict[str, float]:
    """Process time of each stage of `merge shards --no-artifacts` (each wrapped where merge
    calls it), and of a bare libyaml parse of the contract for scale; the best of ``repeat``."""
    import yaml

    import behavegate.commands.merge as merge
    import behavegate.contract.load as load
    import behavegate.judge.evaluate as evaluate
    import behavegate.render.table as table
    import behavegate.report.build as build

    spent: dict[str, float] = {}
    wrapped = [(merge, "read_reports", "read and check the shard reports"),
               (merge, "_carried_contract", "decode the contract the shards carry, check its files"),
               (load, "load_contract", "load and validate the contract's YAML (when not carried)"),
               (merge, "_judged", "place every attempt"), (evaluate, "evaluate", "aggregate (rates, intervals, gates)"),
               (build, "build_report", "build the Report (digest, size limit)"), (table, "render", "render the table")]  # fmt: skip
    originals = [(module, name, getattr(module, name)) for module, name, _ in wrapped]

    def timed(function: Any, label: str) -> Any:
        def call(*args: Any, **kwargs: Any) -> Any:
            started = time.process_time()
            try:
                return function(*args, **kwargs)
            finally:
                spent[label] = spent.get(label, 0.0) + time.process_time() - started

        return call

    best: dict[str, float] = {}
    try:
        for module, name, label in wrapped:
            setattr(module, name, timed(getattr(module, name), label))
        for _ in range(repeat):
            spent.clear()
            started = time.process_time()
            quiet(["merge", "shards", "--no-artifacts"])
            spent["the whole merge"] = time.process_time() - started
            started = time.process_time()
            yaml.load(Path("contract.yml").read_text(), Loader=yaml.CSafeLoader)
            spent["(for scale: libyaml alone parsing the contract)"] = time.process_time() - started
            best = {k: min(v, best.get(k, v)) for k, v in spent.items()}
    finally:
        for module, name, original in originals:
            setattr(module, name, original)
    return best


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--scenarios", type=int, default=10_000)
    parser.add_argument("--shards", type=int, default=10)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--keep", action="store_true", help="keep the temporary directory and print its path")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="behavegate-bench-merge-"))
    os.chdir(work)
    print(f"load average: {' '.join(f'{x:.2f}' for x in os.getloadavg())}; cpus: {os.cpu_count()}")
    try:
        contract, observations = suite(args.scenarios)
        Path("contract.yml").write_text(contract)
        Path("obs.json").write_text(json.dumps(observations))
        common = ["--observations", "obs.json", "--no-artifacts"]
        started = time.perf_counter()
        whole_code = quiet(["test", "contract.yml", *common, "--report", "whole.json"])
        print(f"unsharded run of {args.scenarios} scenarios: exit {whole_code}, {time.perf_counter() - started:.2f} s")
        started = time.perf_counter()
        for index in range(1, args.shards + 1):
            code = quiet(
                ["test", "contract.yml", *common, "--shard", f"{index}/{args.shards}", "--report", f"shards/{index}.json"]
            )
            assert code == 0, f"shard {index} exited {code}"
        files = sorted(Path("shards").glob("*.json"))
        size = sum(f.stat().st_size for f in files)
        print(f"{args.shards} shards written in {time.perf_counter() - started:.2f} s: {size / 1e6:.1f} MB of shard reports")

        def load_all() -> None:
            for path in files:
                with path.open(encoding="utf-8") as handle:
                    json.load(handle)

        codes: list[int] = []
        floor = median_seconds(load_all, args.repeat)
        merge = median_seconds(lambda: codes.append(quiet(["merge", "shards", "--no-artifacts"])), args.repeat)
        written = median_seconds(
            lambda: codes.append(quiet(["merge", "shards", "--no-artifacts", "--report", "merged.json"])), args.repeat
        )
        merged, whole = json.loads(Path("merged.json").read_text()), json.loads(Path("whole.json").read_text())
        same = set(codes) == {whole_code} and all(merged[k] == whole[k] for k in ("status", "summary", "scenarios", "gates"))
        print(f"json.load of the {args.shards} shard reports: {floor:.3f} s (median of {args.repeat})")
        print(f"behavegate merge SHARDS --no-artifacts (table on stdout): {merge:.3f} s, {merge / floor:.1f}x json.load")
        print(f"... and --report merged.json ({Path('merged.json').stat().st_size / 1e6:.1f} MB): {written:.3f} s, "
              f"{written / floor:.1f}x json.load")  # fmt: skip
        print(f"target: merge under 2 s: {'OK' if merge < 2 else 'MISSED'} (on this machine, under this load)")
        print("where a merge spends its CPU (process time, the best of --repeat runs):")
        for stage, seconds in stages(args.repeat).items():
            print(f"  {stage:<48} {seconds:6.3f} s")
        if not same:
            print("MISMATCH: the merged verdicts differ from the unsharded run's")
            return 1
        print(f"verdicts: merged equals unsharded (status {merged['status']}, exit {whole_code})")
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
