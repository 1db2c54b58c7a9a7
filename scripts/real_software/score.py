"""Scores behavegate on the traces real instrumentation packages wrote (tests/fixtures/real/traces/).

    .venv/bin/python scripts/real_software/score.py [--behavegate PATH]

For every file in expected.json: `behavegate test contract.yml --traces FILE --format json` with the
file's binding flags, each assertion's verdict compared with the right one, and `behavegate traces
inspect FILE --format json`, each trace's tool names and answer compared with truth.json. Prints one
Markdown table (right/total per source) and every mismatch, false passes first, then missed
failures (incomplete where the trace shows the violation). Exit 0 always: the
score is the output (tests/test_real_traces.py is the gate).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "fixtures" / "real" / "traces"


@dataclass(frozen=True)
class Mismatch:
    file: str
    scenario: str
    assertion: str
    expected: str
    got: str
    why: str = ""

    @property
    def false_pass(self) -> bool:
        """Passed where the truth says fail, or where the trace cannot show the fact (incomplete)."""
        return self.got == "pass" and self.expected != "pass"

    @property
    def missed_fail(self) -> bool:
        """Incomplete where the trace does show the violation."""
        return self.got == "incomplete" and self.expected == "fail"


@dataclass(frozen=True)
class Score:
    file: str
    source: str
    right: int
    total: int
    mismatches: tuple[Mismatch, ...]
    calls_right: int = 0
    answers_right: int = 0
    traces: int = 0


def verdicts(report: dict[str, Any]) -> dict[str, dict[str, str]]:
    """scenario id -> assertion id -> status, from a `behavegate test --format json` report."""
    return {s["id"]: {a["assertion"]: a["status"] for a in s["assertions"]} for s in report.get("scenarios", [])}


def compare(file: str, entry: dict[str, Any], got: dict[str, dict[str, str]]) -> list[Mismatch]:
    """Every assertion of expected.json's ``entry`` whose verdict in ``got`` differs (absent: "missing")."""
    out = []
    for scenario, expected in entry["scenarios"].items():
        for assertion, right in expected.items():
            observed = got.get(scenario, {}).get(assertion, "missing")
            if observed != right["verdict"]:
                out.append(Mismatch(file, scenario, assertion, right["verdict"], observed, right.get("why", "")))
    return out


def judge_args(file: str, entry: dict[str, Any]) -> list[str]:
    traces = f"tests/fixtures/real/traces/{file}"
    return ["test", "tests/fixtures/real/traces/contract.yml", "--traces", traces, *entry["bind"], "--format", "json"]


def _run(behavegate: Path, args: list[str]) -> dict[str, Any]:
    done = subprocess.run([str(behavegate), *args], cwd=ROOT, stdout=subprocess.PIPE, text=True, check=False)
    return dict(json.loads(done.stdout))


def _inspect_right(inspected: dict[str, Any], truth: dict[str, Any]) -> tuple[int, int]:
    """How many traces `traces inspect` read the right tool names (in order) and the right answer of."""
    by_prompt = {t["prompt"]: t for t in truth["traces"]}
    by_id = {t["scenario"]: t for t in truth["traces"]}
    calls = answers = 0
    for trace in inspected.get("traces", []):
        binding = trace["binding"]
        ids = binding.get("scenario_attribute") or []
        right = by_id.get(ids[0]) if ids else by_prompt.get(binding.get("first_user_message") or "")
        if right is None:
            continue
        calls += [c["name"] for c in trace["tool_calls"]] == [c["name"] for c in right["tool_calls"]]
        answers += trace.get("final_answer") == right["answer"]
    return calls, answers


def score(behavegate: Path, fixtures: Path = FIXTURES) -> list[Score]:
    expected = json.loads((fixtures / "expected.json").read_text(encoding="utf-8"))
    truth = json.loads((fixtures / "truth.json").read_text(encoding="utf-8"))["files"]
    scores = []
    for file, entry in expected.items():
        mismatches = compare(file, entry, verdicts(_run(behavegate, [*judge_args(file, entry), "--no-artifacts"])))
        total = sum(len(a) for a in entry["scenarios"].values())
        attribute = entry["bind"][1:] if entry["bind"][0] == "--trace-attribute" else []
        inspect = ["traces", "inspect", f"tests/fixtures/real/traces/{file}", "--format", "json"]
        inspected = _run(behavegate, [*inspect, *(["--trace-attribute", *attribute] if attribute else [])])
        calls, answers = _inspect_right(inspected, truth[file])
        traces = len(truth[file]["traces"])
        scores.append(Score(file, entry["source"], total - len(mismatches), total, tuple(mismatches), calls, answers, traces))
    return scores


def markdown(scores: list[Score]) -> str:
    lines = [
        "| source | file | verdicts right | false passes | missed fails | inspect: tool names right | inspect: answer right |",
        "|---|---|---|---|---|---|---|",
    ]
    for s in scores:
        false, missed = sum(m.false_pass for m in s.mismatches), sum(m.missed_fail for m in s.mismatches)
        lines.append(
            f"| {s.source} | `{s.file}` | {s.right}/{s.total} | {false} | {missed} | {s.calls_right}/{s.traces} "
            f"| {s.answers_right}/{s.traces} |"
        )
    right, total = sum(s.right for s in scores), sum(s.total for s in scores)
    lines.append(f"| **all** | {len(scores)} files | **{right}/{total}** | | | | |")
    mismatches = sorted((m for s in scores for m in s.mismatches), key=lambda m: (not m.false_pass, not m.missed_fail, m.file))
    if mismatches:
        lines += ["", "Mismatches (source file, scenario, assertion: expected, got):", ""]
        for m in mismatches:
            tag = "FALSE PASS " if m.false_pass else "MISSED FAIL " if m.missed_fail else ""
            lines.append(f"- {tag}`{m.file}` {m.scenario} {m.assertion}: expected {m.expected}, got {m.got}")
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--behavegate", type=Path, default=ROOT / ".venv" / "bin" / "behavegate")
    args = parser.parse_args()
    print(markdown(score(args.behavegate)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
