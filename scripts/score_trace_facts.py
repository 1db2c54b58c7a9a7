"""Score `behavegate traces inspect` against the facts table of the trace fixtures.

For every file in tests/fixtures/trace_matrix/facts.json (written by scripts/make_trace_fixtures.py from
its run plans) and every GenAI trace in it, four facts are compared with what
`behavegate traces inspect --format json` says:

  tool_calls    the tool names in execution order (calls one model step requested together may be in
                any order among themselves, as the contract's exact sequences accept them)
  tool_errors   how many calls failed
  steps         model steps + tool calls
  final_answer  the run's answer

A fact the table lists under `not_shown` (the dialect, or the trace, cannot show it) is right only when
inspect says "not shown" for it; a value there is a guess and counts as wrong. Any other fact is right
when inspect's value equals the truth.

Usage:  .venv/bin/python scripts/score_trace_facts.py            (a Markdown table per file; exit 1 below 95%)
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "tests" / "fixtures"
FACTS = FIXTURES / "trace_matrix" / "facts.json"
NAMES = ("tool_calls", "tool_errors", "steps", "final_answer")
THRESHOLD = 0.95


def _canonical(names: Sequence[str], parallel: Sequence[Sequence[int]]) -> list[Any]:
    """The names with each parallel group's names sorted in place of the group."""
    out: list[Any] = list(names)
    for group in parallel:
        members = sorted(names[i] for i in group if i < len(names))
        for i, name in zip(sorted(group), members, strict=False):
            out[i] = name
    return out


def fact_right(name: str, truth: dict[str, Any], seen: dict[str, Any]) -> bool:
    hidden = seen["not_shown"]
    if name in truth["not_shown"]:
        return name in hidden and seen[name] is None and str(hidden[name]).startswith("not shown")
    if name in hidden:
        return False
    if name == "tool_calls":
        got = seen["tool_calls"]
        return (
            isinstance(got, list)
            and len(got) == len(truth["tool_calls"])
            and _canonical(got, truth["parallel"]) == _canonical(truth["tool_calls"], truth["parallel"])
        )
    return bool(seen[name] == truth[name])


def score(inspect: Callable[[Path], dict[str, Any]]) -> list[dict[str, Any]]:
    """One row per file: format, dialects, facts right and total, and the wrong ones."""
    table = json.loads(FACTS.read_text(encoding="utf-8"))
    rows = []
    for name, entry in table.items():
        if name.startswith("_"):
            continue
        found = {t["trace_id"]: t["facts"] for t in inspect(FIXTURES / name)["traces"]}
        right, wrong = 0, []
        for truth in entry["traces"]:
            seen = found.get(truth["trace_id"])
            for fact in NAMES:
                if seen is not None and fact_right(fact, truth, seen):
                    right += 1
                else:
                    wrong.append(f"{truth['trace_id'][:8]} {fact}")
        dialects = sorted({t["dialect"] for t in entry["traces"]})
        rows.append(
            {
                "file": name,
                "format": entry["format"],
                "dialects": dialects,
                "right": right,
                "total": 4 * len(entry["traces"]),
                "wrong": wrong,
            }
        )
    return rows


def markdown(rows: Sequence[dict[str, Any]]) -> str:
    lines = ["| file | format | dialects | facts right |", "|---|---|---|---|"]
    for row in rows:
        lines.append(f"| `{row['file']}` | {row['format']} | {', '.join(row['dialects'])} | {row['right']}/{row['total']} |")
    right, total = sum(r["right"] for r in rows), sum(r["total"] for r in rows)
    lines.append(f"| **all {len(rows)} files** | | | **{right}/{total} ({100 * right / total:.1f}%)** |")
    return "\n".join(lines)


def _inspect_cli(path: Path) -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, "-m", "behavegate", "traces", "inspect", "--format", "json", str(path.relative_to(ROOT))],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    data: dict[str, Any] = json.loads(done.stdout)
    return data


def main() -> int:
    rows = score(_inspect_cli)
    print(markdown(rows))
    for row in rows:
        for wrong in row["wrong"]:
            print(f"wrong: {row['file']}: {wrong}", file=sys.stderr)
    right, total = sum(r["right"] for r in rows), sum(r["total"] for r in rows)
    return 0 if right >= THRESHOLD * total else 1


if __name__ == "__main__":
    sys.exit(main())
