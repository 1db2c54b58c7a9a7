"""A version-2 YAML contract of N scenarios judged offline: peak memory beyond its parse.

    python bench/bench_yaml_contract.py [--scenarios 100000] [--keep]

``bench/make_scale_suite.py`` writes the suite (``contract.yml`` with 10 assertions a
scenario, ``observations.json``). Each case runs in a child process of its own, and its peak
RSS is that child's ``ru_maxrss`` (resource.getrusage in a wrapper child, so nothing else is
counted; the wrapper is small, and on Linux a child's ru_maxrss starts from its spawner's peak,
so the run is never spawned by this process, which holds the generated suite):

* ``parse``: what the contract's parse alone needs: the file read and parsed the way
  behavegate parses it (contract/yaml_lines.load_yaml: libyaml's events, each mapping key and
  list item with its line), nothing else.
* ``run``: ``behavegate test contract.yml --observations observations.jsonl --format json
  --no-artifacts --output report.json`` (offline), the observations as JSON Lines (one entry a
  line, the form read a part at a time).
* ``run-json`` (``--json-observations``): the same with ``observations.json`` (one JSON
  document, which is parsed whole: at 100,000 it alone needs GBs).

The target (issue 41): ``run`` adds under 300 MB to ``parse`` at 100,000 scenarios. Ratios
are from one run; the machine is shared, so compare them, not wall times.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "bench"))

_WRAP = """
import resource, subprocess, sys, time, json
start = time.perf_counter()
code = subprocess.call(sys.argv[1:])
wall = time.perf_counter() - start
peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss // 1024
print(json.dumps({"exit": code, "wall": wall, "peak_mb": peak}))
"""

_PARSE = """
import sys
from behavegate.contract.yaml_lines import load_yaml
from behavegate.limits import V2_INPUT_MAX_VALUES
with open(sys.argv[1], encoding="utf-8") as handle:
    source = handle.read()
value, lines = load_yaml(source, max_values=V2_INPUT_MAX_VALUES)
"""


def measured(argv: list[str], folder: Path) -> dict[str, float]:
    out = subprocess.run([sys.executable, "-c", _WRAP, *argv], cwd=folder, capture_output=True, text=True, check=True)
    return dict(json.loads(out.stdout.strip().splitlines()[-1]))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--scenarios", type=int, default=100_000)
    parser.add_argument("--json-observations", action="store_true", help="also the run with observations.json")
    parser.add_argument("--keep", action="store_true")
    options = parser.parse_args()
    from make_scale_suite import generate

    folder = Path(tempfile.mkdtemp(prefix="bench-yaml-"))
    contract, evidence, planned = generate(folder, options.scenarios)
    with evidence.open(encoding="utf-8") as handle, (folder / "observations.jsonl").open("w", encoding="utf-8") as out:
        for entry in json.load(handle)["scenarios"]:
            out.write(json.dumps(entry, ensure_ascii=False) + "\n")
    print(
        f"suite: {options.scenarios:,} scenarios x 10 assertions; contract.yml {contract.stat().st_size / 2**20:.1f} MiB, "
        f"observations.json {evidence.stat().st_size / 2**20:.1f} MiB; load {os.getloadavg()[0]:.1f}"
    )
    test = [
        "test",
        "contract.yml",
        "--format",
        "json",
        "--no-artifacts",
        "--max-scenarios",
        str(options.scenarios),
        "--max-assertions",
        str(max(options.scenarios * 10, 1)),
    ]
    cases = {
        "parse": [sys.executable, "-c", _PARSE, "contract.yml"],
        "run": [sys.executable, "-m", "behavegate", *test, "--observations", "observations.jsonl", "--output", "report.json"],
    }
    if options.json_observations:
        json_run = [*test, "--observations", "observations.json", "--output", "report-json.json"]
        cases["run-json"] = [sys.executable, "-m", "behavegate", *json_run]
    results = {name: measured(argv, folder) for name, argv in cases.items()}
    for name, result in results.items():
        print(f"{name:8s} exit {result['exit']:.0f}  wall {result['wall']:7.2f} s  peak {result['peak_mb']:6.0f} MB")
    with (folder / "report.json").open("rb") as handle:  # the report's last keys only: it is large
        handle.seek(max((folder / "report.json").stat().st_size - 65536, 0))
        tail = handle.read().decode("utf-8", "replace")
    summary = json.loads("{" + tail[tail.rindex('\n  "schema_version": ') :])["summary"]
    print(
        f"verdicts: {summary['scenario_count']} scenarios: {summary['failed_scenarios']} fail (planned {planned['broken']}), "
        f"{summary['incomplete_scenarios']} incomplete (planned {planned['cut_off']})"
    )
    extra = results["run"]["peak_mb"] - results["parse"]["peak_mb"]
    ratio = results["run"]["wall"] / results["parse"]["wall"]
    # The target is for 100,000; at a few thousand the run's imports and one part being judged
    # (about 40 MB, whatever the size) outweigh the scaled share.
    budget = 300 * options.scenarios / 100_000
    print(f"run - parse {extra:.0f} MB (target < 300 at 100,000, {budget:.0f} scaled); wall run/parse {ratio:.2f}")
    if options.keep:
        print(f"kept: {folder}")
    else:
        shutil.rmtree(folder)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
