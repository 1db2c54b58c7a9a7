"""``behavegate test --traces``: recorded traces read, bound to the selected
scenarios and handed to the offline path as attempts, with their provenance."""

from __future__ import annotations

import argparse
import hashlib
import os
from pathlib import Path
from typing import Any

from behavegate.commands.clock import Clock
from behavegate.errors import Problem, RunIncomplete, TraceError, UsageError
from behavegate.model import Contract, ObservationSet, Scenario

LIVE_ONLY = (
    "endpoint",
    "auth_env",
    "allow_remote",
    "allow_contract_endpoint",
    "allow_host",
    "save_observations",
    "mcp_listen",
    "mcp_port",
)


def check_flags(args: argparse.Namespace) -> None:
    if args.observations:
        raise UsageError("--traces cannot be combined with --observations: a run judges one evidence source")
    if any(getattr(args, name) for name in LIVE_ONLY):
        raise UsageError("--traces cannot be combined with live endpoint options")
    if not args.trace_attribute or args.trace_attribute != args.trace_attribute.strip():
        raise UsageError("--trace-attribute must be a non-empty attribute name without surrounding whitespace")


def trace_observations(
    args: argparse.Namespace,
    contract: Contract,
    selected: Contract,
    root: Path,
    clock: Clock,
    max_seconds: float,
    shown: Any,
    others: tuple[Scenario, ...] = (),
) -> tuple[ObservationSet, dict[str, Any]]:
    """The attempts the traces give each selected scenario, and the provenance block.
    ``others``: the scenarios of a suite's other contracts (their traces are not unbound)."""
    from behavegate.evidence.traces.bind import Binding, bind, observation, unbound_summary
    from behavegate.evidence.traces.load import read_traces, trace_paths
    from behavegate.files import runner_dirs

    def check_time() -> None:
        if clock.elapsed() > max_seconds:
            raise RunIncomplete(f"reading the traces exceeded the run's time budget of {max_seconds:g}s (--max-seconds)")

    paths = trace_paths(args.traces, root, runner_dirs(os.environ))
    binding = Binding(args.trace_bind, args.trace_attribute)
    traces = read_traces(paths, fmt=args.trace_format, attribute=binding.attribute, shown=shown, check_time=check_time)
    if not traces.files:
        raise TraceError([Problem(f"no trace file could be read: {traces.skipped[0][1]}", traces.skipped[0][0])])
    bound = bind(traces.traces, contract.scenarios, set(selected.scenario_ids()), binding, others)
    if contract.version < 2:
        several = [
            Problem(
                f"scenario {key!r} has {len(found)} traces; a version-1 contract judges one attempt per scenario "
                "(use version: 2 to judge each trace as an attempt)",
                found[1].file,
            )
            for key, found in bound.attempts.items()
            if len(found) > 1
        ]
        if several:
            raise TraceError(several)
    attempts = {key: tuple(observation(trace, key) for trace in found) for key, found in bound.attempts.items()}
    source_digest = hashlib.sha256("".join(f"{f.path}\0{f.digest}\n" for f in traces.files).encode()).hexdigest()
    provenance: dict[str, Any] = {
        "kind": "trace_file",
        "trust": "recorded_trace",
        "files": [
            {"path": f.path, "sha256": f.digest, "format": f.format, "bytes": f.bytes, "spans": f.spans} for f in traces.files
        ],
        "skipped_files": [{"path": path, "reason": why} for path, why in traces.skipped],
        "source_digest": source_digest,
        "binding": {"by": binding.mode, **({"attribute": binding.attribute} if binding.mode in ("auto", "attribute") else {})},
        "traces": {
            "genai": len(traces.traces),
            "ignored_without_genai": traces.ignored,
            "bound": sum(len(found) for found in bound.attempts.values()),
            "other_scenarios": bound.elsewhere,
            "duplicate_spans": traces.duplicates,
        },
        "unbound_traces": unbound_summary(bound),
    }
    observations = ObservationSet(
        path=paths[0].path,
        digest=source_digest,
        observations={key: found[0] for key, found in attempts.items()},
        version=2,
        attempts=attempts,
    )
    return observations, provenance
