"""`make e2e`: behavegate against a real language model, end to end.

Builds or reuses the model server (scripts/real-model), starts it on a free
loopback port, runs examples/real-model live with artifacts on and the
observations recorded, replays those offline and requires identical verdicts,
validates the artifacts with `behavegate replay`, runs a judged contract with the
same model as the judge (live, recorded, replayed), renders JUnit and the job
summary, runs the e2e tests, and stops the server whatever happens.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
OUT = Path("out/e2e")
CONTRACT = "examples/real-model/contract.yml"
JUDGED = "examples/real-model/judged.yml"  # the same server is the agent and the judge


def step(title: str) -> None:
    print(f"\n=== {title} ===", flush=True)


def behavegate(*args: str, expect: set[int]) -> int:
    command = [sys.executable, "-m", "behavegate", *args]
    print("$ behavegate " + " ".join(args), flush=True)
    code = subprocess.run(command, cwd=ROOT, check=False).returncode
    if code not in expect:
        raise SystemExit(f"e2e: behavegate exited {code}, expected one of {sorted(expect)}")
    return code


def verdicts(report: dict[str, Any]) -> list[Any]:
    return [
        (s["id"], s["status"], [(a["status"], [x["status"] for x in a["assertions"]]) for a in s.get("attempts", [])])
        for s in report["scenarios"]
    ]


def judged_live(url: str) -> None:
    """Wiring, recording and replay of response.judge with a real judge (not its wisdom):
    every judged verdict carries the judge's recorded votes and its label, and the offline
    run, with no judge flags, gives the same verdicts."""
    live_code = behavegate(
        "test", JUDGED, "--endpoint", url, "--judge-endpoint", url, "--format", "json", "--output", f"{OUT}/judged-live.json",
        "--save-observations", f"{OUT}/judged-observations.json", "--summary", f"{OUT}/judged-summary.md",
        "--concurrency", "1", "--max-tokens", "64", expect={0, 1, 2},
    )  # fmt: skip
    live = json.loads((ROOT / OUT / "judged-live.json").read_text())
    judged = [a for s in live["scenarios"] for t in s["attempts"] for a in t["assertions"] if a["kind"] == "response_judge"]
    if len(judged) != 2 or not all(a["message"].startswith("[judged, non-deterministic: judge 'smollm2-135m']") for a in judged):
        raise SystemExit(f"e2e: judged verdicts are not labelled: {[a['message'] for a in judged]}")
    sent = live["provenance"]["judge"]["requests_sent"]
    recorded = json.loads((ROOT / OUT / "judged-observations.json").read_text())
    votes = [v for item in recorded["scenarios"] for v in item.get("judge", {}).get("votes", [])]
    if sent != 4 or len(votes) != 4 or not all(v["question"] and (v["reply"] is not None or v["error"]) for v in votes):
        raise SystemExit(f"e2e: expected 4 judge requests recorded with their replies, sent {sent}, recorded {len(votes)}")
    for item in judged:
        print(f"  {item['status']}: {item['message'][:160]}")
    offline_code = behavegate(
        "test", JUDGED, "--observations", f"{OUT}/judged-observations.json", "--no-artifacts",
        "--format", "json", "--output", f"{OUT}/judged-offline.json", expect={0, 1, 2},
    )  # fmt: skip
    offline = json.loads((ROOT / OUT / "judged-offline.json").read_text())
    if (offline_code, verdicts(offline)) != (live_code, verdicts(live)):
        raise SystemExit("e2e: offline judged verdicts differ from live ones")
    messages = [[a["message"] for t in s["attempts"] for a in t["assertions"]] for s in offline["scenarios"]]
    if messages != [[a["message"] for t in s["attempts"] for a in t["assertions"]] for s in live["scenarios"]]:
        raise SystemExit("e2e: offline judged messages differ from live ones")
    behavegate("replay", live["behavegate"]["run_dir"], expect={0})
    print(f"judged: {sent} judge requests recorded; offline replay gives the same verdicts (exit {live_code})")


def main() -> int:
    started = time.monotonic()
    step("model server: build or reuse")
    subprocess.run([str(ROOT / "scripts/real-model"), "setup"], check=True)
    served = subprocess.run([str(ROOT / "scripts/real-model"), "serve", "0"], check=True, capture_output=True, text=True)
    pid, url = served.stdout.split()
    print(f"serving {url} (pid {pid})", flush=True)
    try:
        (ROOT / OUT).mkdir(parents=True, exist_ok=True)
        step("live run (artifacts on, observations recorded)")
        live_code = behavegate(
            "test", CONTRACT, "--endpoint", url, "--format", "json", "--output", f"{OUT}/live.json",
            "--save-observations", f"{OUT}/observations.json", "--junit", f"{OUT}/junit.xml",
            "--summary", f"{OUT}/summary.md", "--concurrency", "1", "--max-tokens", "256", expect={0, 1, 2},
        )  # fmt: skip
        live = json.loads((ROOT / OUT / "live.json").read_text())

        step("offline replay of the recorded observations")
        offline_code = behavegate(
            "test", CONTRACT, "--observations", f"{OUT}/observations.json", "--no-artifacts",
            "--format", "json", "--output", f"{OUT}/offline.json", expect={0, 1, 2},
        )  # fmt: skip
        offline = json.loads((ROOT / OUT / "offline.json").read_text())
        if (offline_code, verdicts(offline)) != (live_code, verdicts(live)):
            raise SystemExit("e2e: offline verdicts differ from live ones")
        print(f"offline verdicts equal the live ones (exit {live_code}, {len(live['scenarios'])} scenarios)")

        step("evidence artifacts")
        behavegate("replay", live["behavegate"]["run_dir"], expect={0})

        step("a judged contract: the real model as the judge (live, recorded, replayed)")
        judged_live(url)

        step("the same question under version-1 rules (llama-server omits tool_calls)")
        behavegate(
            "test",
            "examples/real-model/contract-strict.yml",
            "--endpoint",
            url,
            "--no-artifacts",
            "--max-tokens",
            "256",
            expect={2},
        )

        step("e2e tests")
        env = dict(os.environ, BEHAVEGATE_E2E_URL=url)
        tests = subprocess.run([sys.executable, "-m", "pytest", "-m", "e2e", "tests/e2e", "-q"], cwd=ROOT, env=env, check=False)
        if tests.returncode != 0:
            raise SystemExit("e2e: tests failed")

        step("summary table")
        print((ROOT / OUT / "summary.md").read_text())
        if live_code != 0:
            raise SystemExit(f"e2e: the real model's contract did not pass (exit {live_code})")
    finally:
        os.kill(int(pid), signal.SIGTERM)
    print(f"e2e: ok in {time.monotonic() - started:.1f}s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
