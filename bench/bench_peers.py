"""The same suite against behavegate, promptfoo and inspect_ai, as ratios from one run.

Run from the repository root:

    .venv/bin/python bench/bench_peers.py [--scenarios 1000] [--delay 0.05] [--concurrency 32]
        [--promptfoo CMD] [--inspect PATH]

One loopback agent (bench/bench_live.py's OpenAI-compatible server, answering
``ok <prompt>`` after ``--delay`` seconds) serves every tool in turn. The suite is
``--scenarios`` prompts, one check each, every ``--fail-every``-th asking for a word
the agent never says: each tool must find exactly those planted failures, or its
time is not compared (a line starting with MISMATCH says which, exit status 1).

* behavegate: ``test contract.yml --endpoint URL --concurrency C`` (a version-2 contract
  over 250 scenarios), JSON report.
* promptfoo: ``promptfoo eval`` over an ``openai:chat`` provider at the agent's URL,
  ``--max-concurrency C``, cache off; found as ``--promptfoo`` (a command), else
  ``promptfoo`` on PATH, else ``node_modules/.bin/promptfoo`` under ``$PEERS_NODE``.
* inspect_ai: ``inspect eval`` of a task with the same samples, ``generate()`` and
  ``includes()``, ``--max-connections C``; found as ``--inspect`` (the ``inspect``
  executable), else ``inspect`` on PATH, else ``$PEERS_VENV/bin/inspect``.
* the bare asyncio client of bench_live.py: the floor.

A peer that is not installed is skipped and said so; nothing is installed here. Every
number printed is measured in this run, on this machine; ratios are wall time over
behavegate's wall time (and behavegate's over the floor's), never absolute targets.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_live

REPO = Path(__file__).resolve().parents[1]
PROMPTFOO_FAILED = 100  # promptfoo eval's exit status when a test failed


@dataclass(frozen=True)
class Timed:
    tool: str
    wall: float
    failed: int | None  # scenarios judged failed; None when the run could not be read
    served: int
    note: str = ""


def prompt_of(i: int) -> str:
    return f"Please check scenario s{i:04d} for me."


def planted(i: int, fail_every: int) -> bool:
    return bool(fail_every) and i % fail_every == fail_every - 1


def check_of(i: int, fail_every: int) -> tuple[str, str]:
    """(kind, value) of scenario i: the checks each tool writes in its own format."""
    if planted(i, fail_every):
        return "contains", f"NEVER-{i:04d}"
    kind = i % 3
    if kind == 0:
        return "contains", "ok"
    if kind == 1:
        return "contains", f"scenario s{i:04d}"
    return "not-contains", "LEAK"


def behavegate_contract(n: int, fail_every: int) -> str:
    out = ["version: 2", "agent:", "  model: m", "scenarios:"]
    for i in range(n):
        kind, value = check_of(i, fail_every)
        key = "contains" if kind == "contains" else "excludes"
        out += [
            f"  - id: s{i:04d}",
            f"    prompt: {json.dumps(prompt_of(i))}",
            f"    expect: {{response: {{{key}: [{json.dumps(value)}]}}}}",
        ]
    return "\n".join(out) + "\n"


def promptfoo_config(n: int, fail_every: int, url: str) -> dict[str, object]:
    tests = []
    for i in range(n):
        kind, value = check_of(i, fail_every)
        tests.append({"vars": {"prompt": prompt_of(i)}, "assert": [{"type": kind, "value": value}]})
    base = url.rsplit("/chat/completions", 1)[0]
    provider = {"id": "openai:chat:m", "config": {"apiBaseUrl": base, "apiKey": "unused"}}
    return {"prompts": ["{{prompt}}"], "providers": [provider], "tests": tests}


INSPECT_TASK = """
import json
from inspect_ai import Task, task
from inspect_ai.dataset import Sample
from inspect_ai.scorer import includes, scorer, accuracy, Score, CORRECT, INCORRECT
from inspect_ai.solver import generate

@scorer(metrics=[accuracy()])
def excludes():
    async def score(state, target):
        found = target.text in state.output.completion
        return Score(value=INCORRECT if found else CORRECT)
    return score

ROWS = json.load(open("inspect_rows.json"))

@task
def includes_suite():
    rows = [r for r in ROWS if r["kind"] == "contains"]
    return Task(dataset=[Sample(id=r["id"], input=r["prompt"], target=r["value"]) for r in rows],
                solver=generate(), scorer=includes(ignore_case=False))

@task
def excludes_suite():
    rows = [r for r in ROWS if r["kind"] == "not-contains"]
    return Task(dataset=[Sample(id=r["id"], input=r["prompt"], target=r["value"]) for r in rows],
                solver=generate(), scorer=excludes())
"""


def found(explicit: str | None, name: str, fallback: Path) -> list[str] | None:
    """The command that runs a peer; None (skipped, and said so) when it is not there: an
    explicit one that names no executable (``--inspect none`` leaves inspect_ai out)."""
    if explicit:
        command = explicit.split()
        return command if shutil.which(command[0]) else None
    if on_path := shutil.which(name):
        return [on_path]
    return [str(fallback)] if fallback.exists() else None


def run(cmd: list[str], cwd: Path, agent: bench_live.LoopbackAgent, env: dict[str, str]) -> tuple[int, float, str]:
    agent.reset()
    start = time.perf_counter()
    proc = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, env=env, check=False)
    return proc.returncode, time.perf_counter() - start, (proc.stderr or proc.stdout)[-400:]


# Python children read compiled modules, as an installed package does: this machine sets
# PYTHONDONTWRITEBYTECODE, and behavegate here is an editable checkout (its sources, where
# a pip install has compiled them), so without this it would compile ~200 modules each run.
_ENV = {key: value for key, value in os.environ.items() if key != "PYTHONDONTWRITEBYTECODE"}
_COMPILE = "import behavegate, compileall, os; compileall.compile_dir(os.path.dirname(behavegate.__file__), quiet=1)"


def time_behavegate(work: Path, url: str, args: argparse.Namespace, agent: bench_live.LoopbackAgent) -> Timed:
    (work / "contract.yml").write_text(behavegate_contract(args.scenarios, args.fail_every))
    cmd = [str(REPO / ".venv" / "bin" / "behavegate"), "test", "contract.yml", "--endpoint", url]
    cmd += ["--concurrency", str(args.concurrency), "--no-artifacts", "--format", "json", "--output", "out.json"]
    rc, wall, tail = run(cmd, work, agent, dict(_ENV))
    try:
        report = json.loads((work / "out.json").read_text())
        failed = sum(1 for s in report["scenarios"] if s["status"] == "fail")
    except (OSError, ValueError, KeyError, TypeError):
        return Timed("behavegate", wall, None, agent.requests, f"rc {rc}: {tail}")
    return Timed("behavegate", wall, failed, agent.requests)


def time_promptfoo(cmd: list[str], work: Path, url: str, args: argparse.Namespace, agent: bench_live.LoopbackAgent) -> Timed:
    (work / "promptfooconfig.json").write_text(json.dumps(promptfoo_config(args.scenarios, args.fail_every, url)))
    env = dict(os.environ, PROMPTFOO_DISABLE_TELEMETRY="1", PROMPTFOO_DISABLE_UPDATE="1", PROMPTFOO_CONFIG_DIR=str(work / ".pf"))
    argv = [*cmd, "eval", "-c", "promptfooconfig.json", "--max-concurrency", str(args.concurrency)]
    argv += ["--no-cache", "--no-progress-bar", "--no-table", "--no-write", "-o", "pf.json"]
    rc, wall, tail = run(argv, work, agent, env)
    try:
        results = json.loads((work / "pf.json").read_text())["results"]
        failed = results["stats"]["failures"]
    except (OSError, ValueError, KeyError, TypeError):
        return Timed("promptfoo", wall, None, agent.requests, f"rc {rc}: {tail}")
    return Timed("promptfoo", wall, int(failed), agent.requests, "" if rc in (0, PROMPTFOO_FAILED) else f"rc {rc}")


def time_inspect(cmd: list[str], work: Path, url: str, args: argparse.Namespace, agent: bench_live.LoopbackAgent) -> Timed:
    rows = []
    for i in range(args.scenarios):
        kind, value = check_of(i, args.fail_every)
        rows.append({"id": f"s{i:04d}", "prompt": prompt_of(i), "kind": kind, "value": value})
    (work / "inspect_rows.json").write_text(json.dumps(rows))
    (work / "suite.py").write_text(INSPECT_TASK)
    env = dict(_ENV, OPENAI_API_KEY="unused", OPENAI_BASE_URL=url.rsplit("/chat/completions", 1)[0])
    env["INSPECT_LOG_DIR"] = str(work / "logs")
    argv = [*cmd, "eval-set", "suite.py", "--model", "openai/m", "-M", "responses_api=false"]
    argv += ["--max-connections", str(args.concurrency)]
    argv += ["--display", "none", "--log-format", "json", "--log-dir", str(work / "logs"), "--no-fail-on-error"]
    argv += ["--max-tasks", "2", "--log-dir-allow-dirty"]
    rc, wall, tail = run(argv, work, agent, env)
    failed, logs = 0, 0
    try:
        for path in sorted((work / "logs").glob("*.json")):
            log = json.loads(path.read_text())
            if not isinstance(log, dict) or "samples" not in log:
                continue  # eval-set's own index files
            logs += 1
            for sample in log["samples"]:
                if sample.get("error"):
                    return Timed("inspect_ai", wall, None, agent.requests, f"sample error: {str(sample['error'])[:200]}")
                failed += sum(score.get("value") != "C" for score in sample.get("scores", {}).values())
    except (OSError, ValueError, AttributeError, TypeError):
        return Timed("inspect_ai", wall, None, agent.requests, f"rc {rc}: {tail}")
    if logs != 2:
        return Timed("inspect_ai", wall, None, agent.requests, f"rc {rc}, {logs} task logs: {tail}")
    return Timed("inspect_ai", wall, failed, agent.requests)


def time_floor(work: Path, url: str, args: argparse.Namespace, agent: bench_live.LoopbackAgent) -> Timed:
    bench_live.N_SCENARIOS = args.scenarios
    bench_live.CHILD_ENV = dict(_ENV)  # the floor reads compiled modules too
    floor = bench_live.run_floor(sys.executable, bench_live.FLOOR_STDLIB, url, args.concurrency, work, agent)
    return Timed("bare asyncio client", floor.wall, None, floor.served)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--scenarios", type=int, default=1000)
    parser.add_argument("--delay", type=float, default=0.05)
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--fail-every", type=int, default=100)
    parser.add_argument("--promptfoo", help="the promptfoo command (default: on PATH, else $PEERS_NODE/node_modules/.bin)")
    parser.add_argument("--inspect", help="the inspect executable (default: on PATH, else $PEERS_VENV/bin/inspect)")
    args = parser.parse_args(argv)
    expected = sum(planted(i, args.fail_every) for i in range(args.scenarios))
    promptfoo = found(
        args.promptfoo, "promptfoo", Path(os.environ.get("PEERS_NODE", "/nonexistent")) / "node_modules/.bin/promptfoo"
    )
    inspect = found(args.inspect, "inspect", Path(os.environ.get("PEERS_VENV", "/nonexistent")) / "bin" / "inspect")
    subprocess.run([str(REPO / ".venv" / "bin" / "python"), "-c", _COMPILE], check=True, env=_ENV)
    agent = bench_live.LoopbackAgent(args.delay)
    url = agent.start()
    results: list[Timed] = []
    with tempfile.TemporaryDirectory(prefix="bench-peers-") as tmp:
        work = Path(tmp)
        try:
            results.append(time_floor(work, url, args, agent))
            results.append(time_behavegate(work, url, args, agent))
            for name, cmd, timer in (("promptfoo", promptfoo, time_promptfoo), ("inspect_ai", inspect, time_inspect)):
                if cmd is None:
                    print(f"note: {name} not installed; skipped")
                    continue
                results.append(timer(cmd, work, url, args, agent))
        finally:
            agent.stop()
    print(
        f"{args.scenarios} scenarios, agent answering after {args.delay * 1000:.0f} ms, concurrency {args.concurrency},"
        f" {expected} planted failures"
    )
    ours = next(r for r in results if r.tool == "behavegate")
    floor = results[0]
    print(f"{'tool':<22} {'wall s':>8} {'÷ behavegate':>13} {'failures found':>15} {'requests':>9}")
    mismatch = False
    for r in results:
        found_text = "-" if r.tool == floor.tool else ("unreadable" if r.failed is None else str(r.failed))
        print(f"{r.tool:<22} {r.wall:>8.2f} {r.wall / ours.wall:>13.2f} {found_text:>15} {r.served:>9}  {r.note}")
        if r.tool != floor.tool and r.failed != expected:
            print(f"MISMATCH {r.tool}: expected {expected} failures, observed {r.failed}")
            mismatch = True
    print(f"behavegate ÷ bare client: {ours.wall / floor.wall:.2f}")
    return 1 if mismatch else 0


if __name__ == "__main__":
    sys.exit(main())
