"""A version-2 suite at scale: 10,000 scenarios × 10 assertions, judged offline.

Run from the repository root:

    .venv/bin/python bench/bench_scale.py [--scenarios N] [--repeat K] [--profile]

Measured in one run, each case in its own process (peak memory is that process's VmHWM):

* ``parse``: the floor — read the contract with the same YAML loader behavegate uses
  (libyaml's CSafeLoader) and ``json.loads`` the observation file; nothing else;
* ``test``: ``behavegate test CONTRACT --observations FILE --format json --no-artifacts``
  (load, validate, judge, build the report, render JSON);
* ``report``: in-process, the time from a judged Evaluation to the rendered JSON report.

Issue 13's targets: test within 3× parse, under 300 MB peak; report under 1 s.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PYTHON = REPO / ".venv" / "bin" / "python"
PEAK = "import atexit\ndef _peak():\n    for line in open('/proc/self/status'):\n        if line.startswith('VmHWM'):\n            print('PEAK', int(line.split()[1]) // 1024, file=__import__('sys').stderr)\natexit.register(_peak)\n"

TOOLS = ["lookup_order", "lookup_customer", "issue_refund", "escalate", "search_docs"]


def generate(folder: Path, scenarios: int, seed: int = 7) -> tuple[Path, Path]:
    rng = random.Random(seed)
    lines = ["version: 2", "agent:", "  tools:"]
    for tool in TOOLS:
        lines += [f"    - name: {tool}", "      description: a tool", "      parameters:", "        type: object",
                  "        properties: {id: {type: string}}"]  # fmt: skip
    lines.append("scenarios:")
    observations = []
    for i in range(scenarios):
        first, second = rng.sample([t for t in TOOLS if t != "escalate"], 2)
        lines += [
            f"  - id: s{i:05d}",
            f"    prompt: Please handle case {i}",
            "    tags: [bulk]",
            "    expect:",
            f"      response: {{contains: [case {i}], excludes: [password], icontains: [CASE], matches: ['case \\d+']}}",
            f"      tools: {{required: [{{name: {first}, arguments: {{id: c{i}}}}}], forbidden: [escalate], max_calls: 4,",
            f"              sequence: {{mode: in_order, calls: [{{name: {first}}}, {{name: {second}}}]}}, known_only: true}}",
            "      steps: {max: 8}",
        ]
        ok = rng.random() > 0.05
        observations.append({
            "id": f"s{i:05d}",
            "response": f"Handled case {i}." if ok else "Sorry, the password is hunter2.",
            "response_complete": True,
            "finish_reason": "stop",
            "tool_calls": [{"name": first, "arguments": {"id": f"c{i}"}}, {"name": second, "arguments": {"id": f"c{i}"}}],
            "tool_calls_complete": True,
            "refusal": False,
            "sources": [],
            "error": None,
            "steps": 3,
        })  # fmt: skip
    contract = folder / "contract.yml"
    contract.write_text("\n".join(lines) + "\n")
    evidence = folder / "observations.json"
    evidence.write_text(json.dumps({"version": 2, "scenarios": observations}))
    return contract, evidence


def timed(args: list[str], cwd: Path) -> tuple[float, int, int]:
    start = time.perf_counter()
    done = subprocess.run([str(PYTHON), "-c", PEAK + "import runpy, sys\nsys.argv = " + repr(args) + "\n"
                           "runpy.run_path(sys.argv[0], run_name='__main__')" if args[0].endswith(".py") else
                           PEAK + "import sys\nfrom behavegate.cli import main\nsys.exit(main(" + repr(args) + "))"],
                          cwd=cwd, capture_output=True, text=True)  # fmt: skip
    seconds = time.perf_counter() - start
    peak = next((int(line.split()[1]) for line in done.stderr.splitlines() if line.startswith("PEAK")), -1)
    return seconds, peak, done.returncode


PARSE = """
import json, sys, yaml
with open(sys.argv[1]) as f:
    yaml.load(f.read(), Loader=yaml.CSafeLoader)
with open(sys.argv[2]) as f:
    json.loads(f.read())
"""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--scenarios", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--profile", action="store_true", help="also print where `test` spends its time (cProfile)")
    options = parser.parse_args()
    with tempfile.TemporaryDirectory() as temp:
        folder = Path(temp)
        contract, evidence = generate(folder, options.scenarios)
        (folder / "parse.py").write_text(PARSE)
        sizes = f"contract {contract.stat().st_size / 2**20:.1f} MiB, observations {evidence.stat().st_size / 2**20:.1f} MiB"
        print(f"suite: {options.scenarios} scenarios x 10 assertions ({sizes})")
        parse, test = [], []
        peaks: dict[str, int] = {}
        code = 0
        for _ in range(options.repeat):
            seconds, peak, _ = timed([str(folder / "parse.py"), str(contract), str(evidence)], folder)
            parse.append(seconds)
            peaks["parse"] = max(peaks.get("parse", 0), peak)
            seconds, peak, code = timed(["test", "contract.yml", "--observations", "observations.json", "--format", "json",
                                         "--no-artifacts", "--output", "report.json"], folder)  # fmt: skip
            test.append(seconds)
            peaks["test"] = max(peaks.get("test", 0), peak)
        report = json.loads((folder / "report.json").read_text())
        p, t = statistics.median(parse), statistics.median(test)
        print(f"parse  {p:6.2f} s  peak {peaks['parse']:4d} MB")
        print(f"test   {t:6.2f} s  peak {peaks['test']:4d} MB  exit {code}  status {report['status']}  "
              f"({report['summary']['failed_scenarios']} failed scenarios)")  # fmt: skip
        print(f"ratio test/parse {t / p:.2f}  (target <= 3.0; peak target < 300 MB)")
        sys.path.insert(0, str(REPO / "src"))
        report_seconds = _report_time(contract, evidence, folder)
        print(f"report {report_seconds:6.2f} s  from the judged run to the rendered JSON (target < 1 s)")
        if options.profile:
            _profile(folder)
    return 0


def _report_time(contract: Path, evidence: Path, folder: Path) -> float:
    import gc

    gc.set_threshold(100_000, 50, 100)  # as behavegate.cli.main sets it for a run
    from behavegate import __version__
    from behavegate.contract.load import load_contract
    from behavegate.evidence.observation_file import load_observations
    from behavegate.judge.evaluate import evaluate
    from behavegate.model import RunFacts
    from behavegate.render import json as renderer
    from behavegate.report.build import build_report

    loaded = load_contract(contract, folder)
    observations = load_observations(evidence, folder, attempts=True)
    evaluation = evaluate(loaded, observations.observations, attempts=observations.attempts)
    facts = RunFacts("r", "2026-01-01T00:00:00Z", "2026-01-01T00:00:01Z", 1, 100_000, 300.0)
    start = time.perf_counter()
    report = build_report(loaded, evaluation, mode="offline", provenance={"kind": "observation_file", "trust": "x"},
                          facts=facts, contract_display_path="contract.yml", version=__version__)  # fmt: skip
    size = sum(len(piece) for piece in renderer.pieces(report))  # the JSON text, piece by piece, as it is written
    assert size > 0
    return time.perf_counter() - start


def _profile(folder: Path) -> None:
    import cProfile
    import pstats

    from behavegate.cli import main as cli

    profiler = cProfile.Profile()
    profiler.enable()
    cli(["test", str(folder / "contract.yml"), "--observations", str(folder / "observations.json"), "--format", "json",
         "--no-artifacts", "--output", str(folder / "report.json")])  # fmt: skip
    profiler.disable()
    pstats.Stats(profiler).sort_stats("cumulative").print_stats(30)


if __name__ == "__main__":
    raise SystemExit(main())
