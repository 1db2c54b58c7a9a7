"""A live run's fixed cost: the time from starting ``behavegate test`` to its first request (issue 41).

Run from the repository root:

    .venv/bin/python bench/bench_startup.py [--repeat 5] [--scenarios 5] [--python PY ...]

One loopback agent (bench/bench_live.py's, answering at once) and a small contract
(bench_live's generator, ``--scenarios`` scenarios). For each interpreter given (default:
this checkout's .venv and, when it exists, ``.venv-main``: the main checkout's), alternated
run by run so that both sample the same minutes of a shared machine:

* **whole**: ``python -m behavegate test contract.yml --endpoint URL --no-artifacts``, timed
  from the spawn to the moment the agent reads the first request (one clock, CLOCK_MONOTONIC,
  shared by the processes), and to the process's exit;
* **by phase**: the same run with ``behavegate.cli.main`` called from a small driver that
  notes when the interpreter reached it (start-up), when the modules a live run surely needs
  are imported (``cli``, ``commands.test``, ``commands.live_run``), and how long the contract
  read took; what is left before the first request is options, checks, lazy imports and the
  connection.

Bytecode: every child runs with ``PYTHONPYCACHEPREFIX`` set to one temporary directory (and
bytecode writing on) after a warm-up run, so each side reads compiled modules as an installed
package does, without writing into either checkout. Figures are medians of ``--repeat`` runs.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_live

REPO = Path(__file__).resolve().parent.parent

DRIVER = r"""
import time
started, started_cpu = time.monotonic(), time.process_time()
import json, sys
import behavegate.cli, behavegate.commands.test, behavegate.commands.live_run
from behavegate.contract import load
imported, imported_cpu = time.monotonic(), time.process_time()
contract = {}
inner = load.load_contract
def timed(*args, **kwargs):
    contract["start"], contract["start_cpu"] = time.monotonic(), time.process_time()
    try:
        return inner(*args, **kwargs)
    finally:
        contract["end"], contract["end_cpu"] = time.monotonic(), time.process_time()
load.load_contract = timed
code = behavegate.cli.main(sys.argv[1:])
print(json.dumps({
    "started": started, "imported": imported, "started_cpu": started_cpu, "imported_cpu": imported_cpu,
    **contract, "modules": len(sys.modules), "code": code,
}))
"""


class FirstRequest:
    """When the agent read its first request since the last reset (CLOCK_MONOTONIC)."""

    def __init__(self) -> None:
        self.at: float | None = None
        self._inner = bench_live.completion

    def __call__(self, prompt: str) -> bytes:
        if self.at is None:
            self.at = time.monotonic()
        return self._inner(prompt)


def child_env(pycache: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONDONTWRITEBYTECODE", "PYTHONPATH")}
    env["PYTHONPYCACHEPREFIX"] = str(pycache)
    return env


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run_once(cmd: list[str], work: Path, first: FirstRequest, env: dict[str, str]) -> tuple[float, float, float, float, str]:
    """(spawn time, first request time, exit time: CLOCK_MONOTONIC; the child's CPU seconds; stdout)."""
    first.at = None
    cpu = children_cpu()
    spawned = time.monotonic()
    proc = subprocess.run(cmd, cwd=work, capture_output=True, check=False, env=env)
    ended = time.monotonic()
    if first.at is None:
        raise SystemExit(f"ERROR: no request reached the agent: {cmd[0]} exit {proc.returncode}: {proc.stderr.decode()[-400:]}")
    return spawned, first.at, ended, children_cpu() - cpu, proc.stdout.decode()


def measure(python: str, work: Path, url: str, first: FirstRequest, env: dict[str, str]) -> dict[str, float]:
    argv = ["test", "contract.yml", "--endpoint", url, "--no-artifacts", "--format", "json", "--output", "out.json"]
    spawned, request, ended, cpu, _ = run_once([python, "-m", "behavegate", *argv], work, first, env)
    row = {"whole_first_request": request - spawned, "whole_exit": ended - spawned, "whole_cpu": cpu}
    spawned, request, ended, cpu, out = run_once([python, "-c", DRIVER, *argv], work, first, env)
    facts: dict[str, Any] = json.loads(out.strip().splitlines()[-1])
    row |= {
        "imports_cpu": facts["imported_cpu"] - facts["started_cpu"],
        "contract_cpu": facts["end_cpu"] - facts["start_cpu"],
        "interpreter": facts["started"] - spawned,
        "imports": facts["imported"] - facts["started"],
        "options": facts["start"] - facts["imported"],
        "contract": facts["end"] - facts["start"],
        "to_request": request - facts["end"],
        "first_request": request - spawned,
        "modules": float(facts["modules"]),
    }
    return row


ROWS = (
    ("interpreter", "interpreter start (spawn to the driver's first line)"),
    ("imports", "imports (cli, commands.test, commands.live_run)"),
    ("options", "arguments, options, lazy imports before the contract"),
    ("contract", "the contract read and checked"),
    ("to_request", "settings, trust checks, lazy imports, connect"),
    ("first_request", "by phase: spawn to the first request"),
    ("whole_first_request", "whole `python -m behavegate`: to the first request"),
    ("whole_exit", "whole `python -m behavegate`: to exit"),
    ("imports_cpu", "CPU: imports (as above)"),
    ("contract_cpu", "CPU: the contract"),
    ("whole_cpu", "CPU: whole `python -m behavegate`, spawn to exit"),
)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--scenarios", type=int, default=5)
    parser.add_argument("--python", action="append", help="an interpreter with behavegate installed (repeatable)")
    args = parser.parse_args()
    pythons = args.python or [str(p) for p in (REPO / ".venv/bin/python", REPO / ".venv-main/bin/python") if p.exists()]
    first = FirstRequest()
    bench_live.completion = first  # the agent calls it for each request it reads
    agent = bench_live.LoopbackAgent(0.0)
    url = agent.start()
    rows: dict[str, list[dict[str, float]]] = {p: [] for p in pythons}
    try:
        with tempfile.TemporaryDirectory(prefix="bench-startup-") as tmp:
            work = Path(tmp)
            (work / "contract.yml").write_text(bench_live.build_contract(args.scenarios, 0, version=2)[0])
            env = child_env(work / "pycache")
            for python in pythons:  # warm-up: writes each side's bytecode under the prefix
                measure(python, work, url, first, env)
            for _ in range(args.repeat):
                for python in pythons:
                    rows[python].append(measure(python, work, url, first, env))
    finally:
        agent.stop()
    print(f"-- a live run's fixed cost, {args.scenarios} scenarios, median of {args.repeat} runs, alternated --")
    load = os.getloadavg()
    print(f"load average {load[0]:.1f} {load[1]:.1f} {load[2]:.1f}; ms")
    medians = {p: {key: statistics.median(r[key] for r in rows[p]) for key in rows[p][0]} for p in pythons}
    print(f"{'':<56}" + "".join(f"{_name(p)[-14:]:>16}" for p in pythons))
    for key, label in ROWS:
        print(f"{label:<56}" + "".join(f"{medians[p][key] * 1000:>16.1f}" for p in pythons))
    print(f"{'modules imported by the run':<56}" + "".join(f"{medians[p]['modules']:>16.0f}" for p in pythons))
    if len(pythons) == 2:
        names = " / ".join(_name(p) for p in pythons)
        for key in ("whole_first_request", "imports_cpu", "whole_cpu"):
            a, b = (medians[p][key] for p in pythons)
            print(f"ratio {names}, {key}: {a / b:.2f}")
    return 0


def _name(python: str) -> str:
    """A column's name: the venv's folder, with its checkout's when the venv is plainly ``.venv``."""
    venv = Path(python).absolute().parent.parent
    return f"{venv.parent.name}/{venv.name}" if venv.name == ".venv" else venv.name


if __name__ == "__main__":
    sys.exit(main())
