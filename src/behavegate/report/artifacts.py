"""Evidence artifacts of a run: ``.behavegate/runs/<run-id>/``.

Four files: ``events.jsonl`` (what happened, in order), ``state.json`` (the
whole run), ``summary.json`` (the run summary, = the report's ``harness``) and
``behavior-results.json`` (the report). Every file is canonical JSON, and the
last event seals the run: it carries the digest of every earlier event line
and of the three other files, so ``behavegate replay`` notices a change of a
single byte anywhere.

Building the contents is pure; ``write_run`` is the only I/O, done with
directory descriptors so no path component is ever a followed symlink.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from behavegate import indented_json
from behavegate.frozen import Frozen
from behavegate.limits import MAX_RUN_DECISIONS, V2_MAX_REPORT_BYTES, V2_MAX_SCENARIOS
from behavegate.model import Observation, Timing
from behavegate.report.layout import EVENTS, RESULTS, RUNS_DIR, STATE, SUMMARY
from behavegate.report.result import Report

# A run directory may hold a version-2 suite: its ceilings are version 2's (a version-1
# run is far within them; each file is checked against what its run declares).
MAX_RUN_SCENARIOS, MAX_REPORT_BYTES = V2_MAX_SCENARIOS, V2_MAX_REPORT_BYTES

# Size limits of a run directory, shared by the writer and ``replay``: derived
# from the counts the run declares in summary.json, clamped to the contract's
# hard ceilings, so an honest run always fits and a forged count cannot lift them.
RUN_BASE_BYTES = 256 * 1024  # run-level fields: four paths, budget, metadata
SCENARIO_BYTES = 16 * 1024  # one scenario's events, step and tool-call records (ids are at most 96 characters)
DECISION_BYTES = 1024  # a decision's keys and ids; its texts are copies of the report's


def render_json(value: Any) -> str:
    return indented_json.dumps(value, sort_keys=True) + "\n"


def render_event(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=True, allow_nan=False) + "\n"


def sha256_text(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def observation_summary(observation: Observation | None) -> dict[str, Any]:
    o = observation
    return {
        "observed": o is not None,
        "response_observed": bool(o is not None and o.response is not None),
        "response_complete": None if o is None else o.response_complete,
        "finish_reason": None if o is None else o.finish_reason,
        "tool_calls_observed": bool(o is not None and o.tool_calls is not None),
        "tool_calls_complete": None if o is None else o.tool_calls_complete,
        "tool_call_count": 0 if o is None or o.tool_calls is None else len(o.tool_calls),
        "refusal_observed": bool(o is not None and o.refusal is not None),
        "sources_observed": bool(o is not None and o.sources is not None),
        "source_count": 0 if o is None or o.sources is None else len(o.sources),
        "error": None if o is None else o.error,
    }


class RunLimits(Frozen):
    """Byte limits of the four files of a run that declares these counts."""

    scenarios: int
    decisions: int
    report_bytes: int

    def max_bytes(self, name: str) -> int:
        per_run = RUN_BASE_BYTES + self.scenarios * SCENARIO_BYTES
        # Events and state copy report texts (observation errors, assertion
        # details, provenance): the state holds them at most twice.
        return {
            RESULTS: MAX_REPORT_BYTES,
            SUMMARY: per_run,
            EVENTS: per_run + self.report_bytes,
            STATE: per_run + self.decisions * DECISION_BYTES + 2 * self.report_bytes,
        }[name]


CEILING = RunLimits(MAX_RUN_SCENARIOS, MAX_RUN_DECISIONS, MAX_REPORT_BYTES)


def run_limits(summary: Any, report_bytes: int) -> RunLimits:
    """The limits a run's summary.json declares (``phase_count``: one phase per
    scenario; ``decision_count``), each clamped to its ceiling."""

    def declared(key: str, ceiling: int) -> int:
        value = summary.get(key) if isinstance(summary, dict) else None
        return min(value, ceiling) if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0

    return RunLimits(
        declared("phase_count", MAX_RUN_SCENARIOS),
        declared("decision_count", MAX_RUN_DECISIONS),
        min(max(report_bytes, 0), MAX_REPORT_BYTES),
    )


def max_values(name: str, text: str) -> int:
    """Most JSON values a canonical file of this length holds: an indented file
    spends at least 4 bytes a value (newline, 2 spaces, 1 character; a key and
    its value share a line of at least 8), an event line at least 2 (``0,``)."""
    return len(text) // (2 if name == EVENTS else 4) + 1


def oversized(files: dict[str, str]) -> list[str]:
    """Files of a run that exceed the limits its own summary declares."""
    limits = run_limits(json.loads(files[SUMMARY]), len(files[RESULTS].encode("utf-8")))
    return [name for name, text in sorted(files.items()) if len(text.encode("utf-8")) > limits.max_bytes(name)]


def build_files(judged: Report) -> dict[str, str]:
    """The four files' text for a finished report (whose ``harness`` names them):
    the JSON view of the report, and what happened, scenario by scenario."""
    report = judged.to_json()
    timings: Sequence[Timing] = judged.timings or ()
    harness = report["harness"]
    run_id, mode = harness["run_id"], report["mode"]
    base = {"run_id": run_id, "kind": "agent_behavior", "schema_version": 1}
    steps: list[dict[str, Any]] = []
    tool_calls: list[dict[str, Any]] = []
    events: list[dict[str, Any]] = [
        {
            **base,
            "event": "run_started",
            "timestamp": harness["started_at"],
            "project_root": harness["project_root"],
            "budget": harness["budget"],
        }
    ]
    for result, timing in zip(judged.results, timings, strict=True):
        scenario_id = result.scenario.id
        name = f"scenario:{scenario_id}"
        summary = observation_summary(result.observation)
        step = {
            "name": name,
            "status": "completed",
            "started_at": timing.started_at,
            "ended_at": timing.ended_at,
            "duration_ms": timing.duration_ms,
            "input_summary": {"scenario_id": scenario_id, "mode": mode},
            "output_summary": summary,
            "error": None,
        }
        steps.append(step)
        events.append(
            {
                **base,
                "event": "step_started",
                "timestamp": timing.started_at,
                "step": name,
                "input_summary": step["input_summary"],
            }
        )
        if mode == "live":
            call = {
                "tool": "agent_endpoint",
                "step": name,
                "status": "completed",
                "started_at": timing.started_at,
                "ended_at": timing.ended_at,
                "duration_ms": timing.duration_ms,
                "input_summary": {"scenario_id": scenario_id},
                "output_summary": summary,
            }
            tool_calls.append(call)
            events.append(
                {**base, "event": "tool_started", "timestamp": timing.started_at, "step": name, "tool": "agent_endpoint"}
            )
            events.append(
                {
                    **base,
                    "event": "tool_completed",
                    "timestamp": timing.ended_at,
                    "step": name,
                    "tool": "agent_endpoint",
                    "status": "completed",
                }
            )
        events.append(
            {
                **base,
                "event": "step_completed",
                "timestamp": timing.ended_at,
                "step": name,
                "status": "completed",
                "duration_ms": timing.duration_ms,
                "output_summary": summary,
            }
        )
    decisions = [
        {
            "phase": f"scenario:{scenario['id']}",
            "code": f"behavior_assertion_{a['status']}",
            "target": {"scenario_id": scenario["id"], "assertion": a["assertion"], "kind": a["kind"]},
            "details": {"message": a["message"], "expected": a["expected"], "observed": a["observed"]},
        }
        for scenario in report["scenarios"]
        for a in scenario["assertions"]
    ]
    provenance = report["provenance"]
    state = {
        **base,
        "status": harness["status"],
        "started_at": harness["started_at"],
        "ended_at": harness["ended_at"],
        "duration_ms": harness["duration_ms"],
        "budget": harness["budget"],
        "steps": steps,
        "tool_calls": tool_calls,
        "decisions": decisions,
        "error": harness["error"],
        "metadata": {
            "contract_path": report["contract"]["path"],
            "contract_digest": report["contract"]["digest"],
            "contract_version": report["contract"]["version"],
            "mode": mode,
            "scenario_ids": sorted(s["id"] for s in report["scenarios"]),
            "evidence_trust": provenance["trust"],
            "registered_tools": ["agent_endpoint"] if mode == "live" else [],
            "behavior_evidence_digest": report["evidence_digest"],
            "observation_evidence_digest": provenance["selected_digest"],
            "observation_source_digest": provenance.get("source_digest"),
            "behavior_provenance": provenance,
        },
    }
    files = {STATE: render_json(state), SUMMARY: render_json(harness), RESULTS: _results_text(judged)}
    lines = "".join(render_event(e) for e in events)
    events_text = lines + render_event(
        {
            **base,
            "event": "run_completed",
            "timestamp": harness["ended_at"],
            "status": harness["status"],
            "evidence_digest": report["evidence_digest"],
            "events_digest": sha256_text(lines),
            "artifact_digests": {name: sha256_text(text) for name, text in sorted(files.items())},
        }
    )
    files[EVENTS] = events_text
    return files


def _results_text(judged: Report) -> str:
    """The JSON view, carrying the contract as data (``behavegate.contract_data``) so that
    replay can judge every attempt's recorded evidence again; left out when it would not
    round-trip or the file would pass its size limit (replay then says it could not re-judge)."""
    from behavegate.contract.as_data import whole_contract_data
    from behavegate.report.json_text import chunks

    plain = "".join(judged.json_chunks()) + "\n"
    data = whole_contract_data(judged.contract)
    if data is None:
        return plain
    rest = judged.json_rest()
    carried = {**rest, "behavegate": {**rest["behavegate"], "contract_data": data}}
    text = "".join(chunks(judged.encoded(), carried)) + "\n"
    try:
        return text if len(text.encode("utf-8")) <= MAX_REPORT_BYTES else plain
    except UnicodeEncodeError:  # a name in the contract that is not UTF-8: the run is kept, its contract is not
        return plain


def write_run(project_root: Path, run_id: str, files: dict[str, str]) -> None:
    """Write the files into ``.behavegate/runs/<run_id>/`` (dirs 0700, files 0600)
    through ``files.write_file``, the one writer: a planted symlink anywhere
    below the project fails the write instead of redirecting it. A run that
    would exceed its own replay limits is refused (never written unreplayable).
    """
    from behavegate.errors import InputError
    from behavegate.files import Place, write_file

    too_large = oversized(files)
    if too_large:
        raise OSError(f"run artifacts exceed their replay limits: {', '.join(too_large)}")
    try:
        for name in (STATE, SUMMARY, RESULTS, EVENTS):  # the sealing events last
            write_file(Place(project_root, (*RUNS_DIR, run_id, name)), files[name], "run artifact")
    except InputError as exc:
        raise OSError(str(exc)) from None
