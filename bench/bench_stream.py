"""A JSON Lines golden set and observation file judged offline: time and peak memory.

    python bench/bench_stream.py [--scenarios 100000] [--whole] [--views] [--keep]

``bench/make_scale_suite.py --jsonl`` writes the suite (10 assertions a scenario). Each case
runs in a child process of its own, and its peak RSS is that child's ``ru_maxrss``
(resource.getrusage in a wrapper child, so nothing else is counted):

* ``parse``: the floor: every line of golden.jsonl and observations.jsonl read and
  ``json.loads``-ed, the golden-query file's head read by PyYAML; nothing kept.
* ``stream``: ``behavegate test contract.yml --observations observations.jsonl --format json
  --no-artifacts --output report.json`` (the streamed path: commands/stream_offline.py).
* ``views`` (``--views``): ``stream`` writing ``--junit`` and ``--summary`` too.
* ``whole`` (``--whole``): the same run forced through the whole-run path (before).

Ratios are from one run; the machine is shared, so compare them, not wall times. CPU time
(user + system, of the child) moves less with the load than wall time: both are printed.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "bench"))

_WRAP = """
import resource, subprocess, sys, time, json
start = time.perf_counter()
code = subprocess.call(sys.argv[1:])
wall = time.perf_counter() - start
usage = resource.getrusage(resource.RUSAGE_CHILDREN)
cpu = usage.ru_utime + usage.ru_stime
print(json.dumps({"exit": code, "wall": wall, "cpu": cpu, "peak_mb": usage.ru_maxrss // 1024}))
"""

_PARSE = """
import json, sys, yaml
yaml.load(open(sys.argv[1]).read(), Loader=yaml.CSafeLoader)
for name in sys.argv[2:]:
    with open(name, encoding="utf-8") as handle:
        for line in handle:
            if line.strip():
                json.loads(line)
"""

_WHOLE = """
import sys
from behavegate.commands import stream_offline
from behavegate.cli import main
stream_offline.streamable = lambda command: False
sys.exit(main(sys.argv[1:]))
"""


# Each child runs with its modules' bytecode cached, as an installed package has it: under
# PYTHONDONTWRITEBYTECODE every run would compile behavegate's ~200 modules again (~1 s here).
_ENV = {key: value for key, value in os.environ.items() if key != "PYTHONDONTWRITEBYTECODE"}
_COMPILE = "import behavegate, compileall, os; compileall.compile_dir(os.path.dirname(behavegate.__file__), quiet=1)"


def measured(argv: list[str], folder: Path) -> dict[str, float]:
    out = subprocess.run([sys.executable, "-c", _WRAP, *argv], cwd=folder, capture_output=True, text=True, check=True, env=_ENV)
    return dict(json.loads(out.stdout.strip().splitlines()[-1]))


def _tail(path: Path) -> dict[str, Any]:
    """The report's last keys (``schema_version``, ``status``, ``summary``: they sort last)."""
    with path.open("rb") as handle:
        handle.seek(max(path.stat().st_size - 65536, 0))
        text = handle.read().decode("utf-8", "replace")
    return dict(json.loads("{" + text[text.rindex('\n  "schema_version": ') :]))


_CLOCK = re.compile(r'"(run_id|started_at|ended_at|duration_ms|seconds)": [^,\n{]+')


def _same_but_clock(first: Path, second: Path) -> bool:
    """The two reports' texts, line by line, equal but for the clock's readings."""
    with first.open() as one, second.open() as two:
        return all(_CLOCK.sub("", a) == _CLOCK.sub("", b) for a, b in itertools.zip_longest(one, two, fillvalue=""))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--scenarios", type=int, default=100_000)
    parser.add_argument("--whole", action="store_true", help="also the whole-run path (before); needs GBs at 100,000")
    parser.add_argument("--views", action="store_true", help="also the streamed run with --junit and --summary")
    parser.add_argument("--keep", action="store_true")
    options = parser.parse_args()
    from make_scale_suite import generate_jsonl

    folder = Path(tempfile.mkdtemp(prefix="bench-stream-"))
    _, evidence, planned = generate_jsonl(folder, options.scenarios)
    golden = folder / "golden.jsonl"
    print(
        f"suite: {options.scenarios:,} scenarios x 10 assertions; golden.jsonl {golden.stat().st_size / 2**20:.1f} MiB, "
        f"observations.jsonl {evidence.stat().st_size / 2**20:.1f} MiB; load {os.getloadavg()[0]:.1f}"
    )
    test = [
        "test",
        "contract.yml",
        "--observations",
        "observations.jsonl",
        "--format",
        "json",
        "--no-artifacts",
        "--max-scenarios",
        str(options.scenarios),
        "--max-assertions",
        str(max(options.scenarios * 10, 1)),
    ]
    cases = {
        "parse": [sys.executable, "-c", _PARSE, "contract.yml", "golden.jsonl", "observations.jsonl"],
        "stream": [sys.executable, "-m", "behavegate", *test, "--output", "stream.json"],
    }
    if options.views:
        views = ["--junit", "junit.xml", "--summary", "summary.md"]
        cases["views"] = [sys.executable, "-m", "behavegate", *test, "--output", "views.json", *views]
    if options.whole:
        cases["whole"] = [sys.executable, "-c", _WHOLE, *test, "--output", "whole.json"]
    subprocess.run([sys.executable, "-c", _COMPILE], check=True, env=_ENV)
    results = {name: measured(argv, folder) for name, argv in cases.items()}
    for name, result in results.items():
        print(
            f"{name:7s} exit {result['exit']:.0f}  wall {result['wall']:7.2f} s  cpu {result['cpu']:7.2f} s  "
            f"peak {result['peak_mb']:6.0f} MB"
        )
    report = _tail(folder / "stream.json")  # the whole report is ~1 GB at 100,000: never loaded
    summary = report["summary"]
    print(
        f"verdicts: {report['status']}; {summary['scenario_count']} scenarios: {summary['failed_scenarios']} fail "
        f"(planned {planned['broken']}), {summary['incomplete_scenarios']} incomplete (planned {planned['cut_off']}); "
        f"report {(folder / 'stream.json').stat().st_size / 2**20:.0f} MiB"
    )
    ratio = results["stream"]["wall"] / results["parse"]["wall"]
    cpu = results["stream"]["cpu"] / results["parse"]["cpu"]
    print(
        f"ratio stream/parse {ratio:.2f} wall, {cpu:.2f} cpu (target <= 2); "
        f"peak {results['stream']['peak_mb']:.0f} MB (target < 300)"
    )
    if options.views:
        junit = (folder / "junit.xml").stat().st_size / 2**20
        views = results["views"]
        print(
            f"views/parse {views['wall'] / results['parse']['wall']:.2f} wall, {views['cpu'] / results['parse']['cpu']:.2f} cpu; "
            f"junit.xml {junit:.0f} MiB"
        )
    if options.whole:
        same = _same_but_clock(folder / "whole.json", folder / "stream.json")
        whole = results["whole"]
        print(
            f"whole/parse {whole['wall'] / results['parse']['wall']:.2f} wall, {whole['cpu'] / results['parse']['cpu']:.2f} cpu; "
            f"same report text: {same}"
        )
    if options.keep:
        print(f"kept: {folder}")
    else:
        shutil.rmtree(folder)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
