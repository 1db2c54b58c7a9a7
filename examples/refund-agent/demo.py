"""`make demo`: judge the refund agent, good and regressed, offline and live.

Offline, behavegate judges captured evidence; live, it starts the reference
agent (examples/refund-agent/agent.py) on a free loopback port and tests the
running service. The good agent must pass (exit 0) and the regressed one must
fail (exit 1) both ways; the demo exits 0 only when all four outcomes are as
expected, and always stops the agents it started.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
CONTRACT = HERE.relative_to(ROOT) / "contract.yml"


def run(title: str, evidence: list[str], expected_exit: int) -> bool:
    print(f"\n=== {title} ===", flush=True)
    command = [sys.executable, "-m", "behavegate", "test", str(CONTRACT), *evidence, "--no-artifacts"]
    print("$ behavegate " + " ".join(command[3:]), flush=True)
    code = subprocess.run(command, cwd=ROOT, check=False).returncode
    ok = code == expected_exit
    print(f"-> exit {code} ({'as expected' if ok else f'expected {expected_exit}'})", flush=True)
    return ok


def start_agent(*flags: str) -> tuple[subprocess.Popen[str], str]:
    process = subprocess.Popen([sys.executable, str(HERE / "agent.py"), "--port", "0", *flags], stdout=subprocess.PIPE, text=True)
    assert process.stdout is not None
    line = process.stdout.readline().strip()
    if not line.startswith("listening on "):
        process.kill()
        raise SystemExit(f"the reference agent did not start: {line!r}")
    return process, line.removeprefix("listening on ")


def main() -> int:
    offline = str(HERE.relative_to(ROOT))
    results = [
        run("well-behaved agent, offline evidence", ["--observations", f"{offline}/observations-good.json"], 0),
        run("regressed agent, offline evidence: calls a forbidden tool, drops its source",
            ["--observations", f"{offline}/observations-regressed.json"], 1),
    ]  # fmt: skip
    agents: list[subprocess.Popen[str]] = []
    try:
        good, good_url = start_agent()
        agents.append(good)
        bad, bad_url = start_agent("--regressed")
        agents.append(bad)
        results.append(run("well-behaved agent, live on loopback", ["--endpoint", good_url], 0))
        results.append(run("regressed agent, live on loopback", ["--endpoint", bad_url], 1))
    finally:
        for agent in agents:
            agent.terminate()
            agent.wait(timeout=10)
    if all(results):
        print("\ndemo: all four outcomes as expected (the good agent passes, the regressed one is caught, offline and live)")
        return 0
    print("\ndemo: UNEXPECTED outcome, see above", file=sys.stderr)
    return 1


if __name__ == "__main__":
    sys.exit(main())
