"""Where a run's evidence lives: ``.behavegate/runs/<run-id>/`` and its four files."""

from __future__ import annotations

from pathlib import Path

RUNS_DIR = (".behavegate", "runs")
EVENTS, STATE, SUMMARY, RESULTS = "events.jsonl", "state.json", "summary.json", "behavior-results.json"
LAYOUT = {"run_dir": ".", "events": EVENTS, "state": STATE, "summary": SUMMARY, "behavior_results": RESULTS}
NO_ARTIFACTS = {"run_dir": None, "events": None, "state": None, "summary": None, "behavior_results": None}


def run_paths(project_root: Path, run_id: str) -> dict[str, str]:
    run_dir = project_root.joinpath(*RUNS_DIR, run_id)
    return {"trace_path": str(run_dir / EVENTS), "state_path": str(run_dir / STATE), "summary_path": str(run_dir / SUMMARY)}
