"""One command: build the agent's venv, start the OpenAI Agents SDK refund agent (good, then
regressed), and judge each with the behavegate CLI from the tool side (agent.mcp).

    python3 examples/mcp-framework-agent/run.py [--venv DIR] [--behavegate CMD] [--record]

The venv (default ``~/.cache/behavegate-real-software/mcp-agent-venv``) gets the exact pins of
requirements.txt beside this file (uv when it can be had, else pip), once; behavegate itself is
never installed there. ``--behavegate``: how to run the CLI (default: the project's
``.venv/bin/behavegate``, else ``behavegate`` on PATH). ``--record`` also saves each run's
evidence as ``tests/fixtures/mcp-framework-agent/<variant>.observations.json``, which
tests/test_mcp_framework_agent.py replays in ``make test`` without the framework.

Exit 0 when the good agent passes (exit 0) and the regressed one is caught (exit 1). Standard
library only; nothing leaves the machine (every server on 127.0.0.1).
"""

from __future__ import annotations

import argparse
import hashlib
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
PINS = HERE / "requirements.txt"
FIXTURES = REPO / "tests" / "fixtures" / "mcp-framework-agent"
EXPECTED = {"good": 0, "regressed": 1}  # the CLI's exit code for each variant


def venv_python(venv: Path) -> Path:
    """The venv's python, (re)built when the pins changed since it was made."""
    python = venv / "bin" / "python"
    stamp = venv / ".pins-sha256"
    digest = hashlib.sha256(PINS.read_bytes()).hexdigest()
    if python.exists() and stamp.exists() and stamp.read_text() == digest:
        return python
    subprocess.run([sys.executable, "-m", "venv", "--clear", str(venv)], check=True)
    uv = shutil.which("uv") or next((str(p) for p in [REPO / ".venv" / "bin" / "uv"] if p.exists()), None)
    if uv:
        subprocess.run([uv, "pip", "install", "--quiet", "--python", str(python), "-r", str(PINS)], check=True)
    else:
        subprocess.run([str(python), "-m", "pip", "install", "--quiet", "-r", str(PINS)], check=True)
    stamp.write_text(digest)
    return python


def started(python: Path, variant: str) -> tuple[subprocess.Popen[str], str]:
    """The agent (and its scripted LLM) running; its URL from the READY line."""
    agent = subprocess.Popen(
        [str(python), str(HERE / "agent.py"), "--variant", variant], stdout=subprocess.PIPE, text=True, env=_quiet_env()
    )
    assert agent.stdout is not None
    deadline = time.monotonic() + 180  # importing the SDK takes a while on a busy machine
    while time.monotonic() < deadline:
        line = agent.stdout.readline()
        if line.startswith("READY "):
            return agent, line.split()[1]
        if not line and agent.poll() is not None:
            break
    agent.kill()
    raise SystemExit(f"the {variant} agent did not start")


def _quiet_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.lower().endswith("_proxy")}  # loopback only
    env["OPENAI_AGENTS_DISABLE_TRACING"] = "1"
    return env


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--venv", type=Path, default=Path.home() / ".cache" / "behavegate-real-software" / "mcp-agent-venv")
    parser.add_argument("--behavegate", default=None, help="the behavegate command (default: the project's .venv)")
    parser.add_argument("--record", action="store_true", help="save each run's evidence as the committed fixtures")
    args = parser.parse_args()
    local = REPO / ".venv" / "bin" / "behavegate"
    behavegate = (args.behavegate or (str(local) if local.exists() else "behavegate")).split()
    python = venv_python(args.venv)
    ok = True
    for variant, expected in EXPECTED.items():
        agent, url = started(python, variant)
        try:
            command = [*behavegate, "test", str((HERE / "contract.yml").relative_to(REPO)), "--endpoint", url, "--no-artifacts"]
            if args.record:
                FIXTURES.mkdir(parents=True, exist_ok=True)
                saved = (FIXTURES / f"{variant}.observations.json").relative_to(REPO)
                command += ["--save-observations", str(saved)]
            print(f"\n$ {' '.join(command[len(behavegate) - 1 :])}   # the {variant} agent", flush=True)
            code = subprocess.run(command, cwd=REPO, check=False).returncode
            print(f"exit {code} (expected {expected})", flush=True)
            ok = ok and code == expected
        finally:
            agent.terminate()
            agent.wait(10)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
