"""A version-2 suite at scale: 10,000 scenarios × 10 assertions, judged offline.

Run from the repository root:

    .venv/bin/python bench/bench_scale.py [--scenarios N] [--repeat K] [--suite user|compact] [--profile] [--keep]

The suite (``--suite user``, the default) is written by ``bench/make_scale_suite.py`` the way a
user's script would (``yaml.safe_dump``, ``json.dump(indent=2)``, ten mixed assertion kinds);
``--suite compact`` is the older flow-style suite below. Measured in one run, ``parse`` and
``test`` alternated, each in its own process (peak memory is that process's VmHWM):

* ``parse``: the floor — read the contract with the same YAML loader behavegate uses
  (libyaml's CSafeLoader) and ``json.loads`` the observation file; nothing else;
* ``test``: ``behavegate test CONTRACT --observations FILE --format json --no-artifacts
  --output report.json`` (load, validate, judge, build the report, render JSON); its verdicts
  are checked: every scenario judged, the exit code as the status says, and (user suite)
  the failing and incomplete scenarios the generator planned;
* a refusal: the same with ``--max-assertions`` one below the suite's count must exit 2 and
  name the cap and the flag on stderr (issue 27: it printed nothing with ``--output``);
* ``report``: in-process, the time from a judged Evaluation to the rendered JSON report
  (best of K, with its CPU time: on a loaded machine the wall time is mostly waiting).

Targets (issues 13 and 27): test within 3× parse, under 300 MB peak; report under 1 s.
Exit status: 0, or 1 on a MISMATCH, or 2 when the run was refused.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import make_scale_suite  # bench/ is not a package

REPO = Path(__file__).resolve().parents[1]
V2_MAX_ASSERTIONS = 250_000  # limits.V2_MAX_ASSERTIONS (not imported: the bench runs any checkout)
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


def timed(args: list[str], cwd: Path) -> tuple[float, int, int, str]:
    """Wall seconds, the child's own peak RSS (MB), its exit code and stderr."""
    code = PEAK + (
        "import runpy, sys\nsys.argv = " + repr(args) + "\nrunpy.run_path(sys.argv[0], run_name='__main__')"
        if args[0].endswith(".py")
        else "import sys\nfrom behavegate.cli import main\nsys.exit(main(" + repr(args) + "))"
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO / "src"), os.environ.get("PYTHONPATH")]))}
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", code], cwd=cwd, capture_output=True, text=True, env=env)
    seconds = time.perf_counter() - start
    peak = next((int(line.split()[1]) for line in done.stderr.splitlines() if line.startswith("PEAK")), -1)
    stderr = "\n".join(line for line in done.stderr.splitlines() if not line.startswith("PEAK"))
    return seconds, peak, done.returncode, stderr


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
    parser.add_argument(
        "--suite", choices=["user", "compact"], default="user",
        help="user: bench/make_scale_suite.py (yaml.safe_dump, json indent=2, ten mixed kinds); compact: the flow-style suite above",
    )  # fmt: skip
    parser.add_argument("--profile", action="store_true", help="also print where `test` spends its time (cProfile)")
    parser.add_argument("--keep", action="store_true", help="keep the generated suite and print its folder")
    options = parser.parse_args()
    temp = tempfile.mkdtemp(prefix="bench-scale-")
    folder = Path(temp)
    planned: dict[str, int] | None = None
    if options.suite == "user":
        contract, evidence, planned = make_scale_suite.generate(folder, options.scenarios)
    else:
        contract, evidence = generate(folder, options.scenarios)
    (folder / "parse.py").write_text(PARSE)
    sizes = f"contract {contract.stat().st_size / 2**20:.1f} MiB, observations {evidence.stat().st_size / 2**20:.1f} MiB"
    print(f"suite ({options.suite}): {options.scenarios} scenarios x 10 assertions ({sizes}); load {_load()}")
    parse, test = [], []
    peaks: dict[str, int] = {}
    code, stderr = 0, ""
    base = ["test", "contract.yml", "--observations", "observations.json", "--format", "json", "--no-artifacts",
            "--output", "report.json"]  # fmt: skip
    command = [*base, *_cap_flag(options.scenarios)]
    for _ in range(options.repeat):  # alternated, so drift in the machine's load hits both
        seconds, peak, _, _ = timed([str(folder / "parse.py"), str(contract), str(evidence)], folder)
        parse.append(seconds)
        peaks["parse"] = max(peaks.get("parse", 0), peak)
        seconds, peak, code, stderr = timed(command, folder)
        test.append(seconds)
        peaks["test"] = max(peaks.get("test", 0), peak)
    p, t = statistics.median(parse), statistics.median(test)
    print(f"command: behavegate {' '.join(command)}")
    print(f"parse  {p:6.2f} s  peak {peaks['parse']:4d} MB  (libyaml CSafeLoader + json.loads, median of {options.repeat})")
    print(f"test   {t:6.2f} s  peak {peaks['test']:4d} MB  exit {code}")
    report = json.loads((folder / "report.json").read_text()) if (folder / "report.json").exists() else {}
    if "summary" not in report:  # refused before judging: the reason must be on the console
        print(f"REFUSED: exit {code}: {stderr.strip() or '(nothing on stderr: MISMATCH)'}")
        return 2
    summary = report["summary"]
    size = (folder / "report.json").stat().st_size
    print(f"verdicts: status {report['status']}; scenarios {summary['scenario_count']} judged: "
          f"{summary['passed_scenarios']} pass, {summary['failed_scenarios']} fail, "
          f"{summary['incomplete_scenarios']} incomplete; assertions {summary['assertion_count']}: "
          f"{summary['passed_assertions']} pass, {summary['failed_assertions']} fail, "
          f"{summary['incomplete_assertions']} incomplete; JSON report {size / 2**20:.1f} MiB")  # fmt: skip
    mismatch = _check(report, code, planned, options.scenarios)
    # Issue 27: a refusal over a cap must say why on the console, even with --output.
    below = options.scenarios * 10 - 1
    _, _, refused, reason = timed([*base[:-2], "--output", "refused.json", "--max-assertions", str(below)], folder)
    said = f"cannot exceed {below}" in reason and f"--max-assertions {options.scenarios * 10}" in reason
    print(f"refusal at --max-assertions {below}: exit {refused}, stderr: {reason.strip()[:160] or '(nothing)'}")
    if refused != 2 or not said:
        print("MISMATCH: the refusal did not print its reason")
        mismatch = True
    sys.path.insert(0, str(REPO / "src"))
    best, median, cpu = _report_time(contract, evidence, folder, options.repeat)
    ok = {True: "OK", False: "MISSED"}
    print(f"ratio test/parse       {t / p:5.2f}   target <= 3.0: {ok[t / p <= 3.0]}")
    print(f"peak memory of test    {peaks['test']:5d} MB (parse's {peaks['parse']} MB; ratio "
          f"{peaks['test'] / max(peaks['parse'], 1):.2f})   target < 300 MB: {ok[peaks['test'] < 300]}")  # fmt: skip
    print(f"report build + render  {best:5.2f} s  best of {options.repeat} in process (median {median:.2f} s, "
          f"CPU {cpu:.2f} s; {best / t:.0%} of test)   target < 1 s: wall {ok[best < 1.0]}, CPU {ok[cpu < 1.0]}")  # fmt: skip
    if options.profile:
        _profile(folder)
    if options.keep:
        print(f"kept: {folder}")
    else:
        shutil.rmtree(folder)
    return 1 if mismatch else 0


def _cap_flag(scenarios: int) -> list[str]:
    """The flag a user needs past the default assertion cap (the refusal names it)."""
    return ["--max-assertions", str(scenarios * 10)] if scenarios * 10 > V2_MAX_ASSERTIONS else []


def _check(report: dict[str, Any], code: int, planned: dict[str, int] | None, scenarios: int) -> bool:
    """Every scenario judged, the exit code as the verdicts say; the user suite's plan met."""
    summary = report["summary"]
    problems = []
    if summary["scenario_count"] != scenarios or summary["assertion_count"] != scenarios * 10:
        problems.append(f"judged {summary['scenario_count']} scenarios / {summary['assertion_count']} assertions")
    if code != {"pass": 0, "fail": 1}.get(report["status"], 2):
        problems.append(f"exit {code} for status {report['status']}")
    # A broken answer fails its scenario; a cut-off one leaves it incomplete.
    if planned is not None and (
        summary["failed_scenarios"] != planned["broken"] or summary["incomplete_scenarios"] != planned["cut_off"]
    ):
        problems.append(f"planned {planned['broken']} failing and {planned['cut_off']} incomplete scenarios")
    for problem in problems:
        print(f"MISMATCH: {problem}")
    return bool(problems)


def _load() -> str:
    try:
        return "average " + " ".join(f"{x:.1f}" for x in os.getloadavg()) + f" on {os.cpu_count()} cores"
    except OSError:
        return "unknown"


def _report_time(contract: Path, evidence: Path, folder: Path, repeat: int) -> tuple[float, float, float]:
    """Build and render the JSON report of one judged run, ``repeat`` times: (best wall,
    median wall, best CPU) seconds. CPU time shows what a loaded machine's wall time hides."""
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
    walls, cpus = [], []
    for _ in range(repeat):
        gc.collect()
        start, cpu = time.perf_counter(), time.process_time()
        report = build_report(loaded, evaluation, mode="offline", provenance={"kind": "observation_file", "trust": "x"},
                              facts=facts, contract_display_path="contract.yml", version=__version__)  # fmt: skip
        size = sum(len(piece) for piece in renderer.pieces(report))  # the JSON text, piece by piece, as it is written
        assert size > 0
        walls.append(time.perf_counter() - start)
        cpus.append(time.process_time() - cpu)
        del report
    return min(walls), statistics.median(walls), min(cpus)


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
