"""The offline path in bounded memory: a JSON Lines golden set, or a version-2 contract's own
scenarios, with a JSON Lines observation file, judged a part at a time and written as a JSON
report (``--format json --output FILE``), with ``--junit`` and ``--summary`` when asked.

Rows (or the contract's scenarios, from its one parse: contract/parts.py) are read, judged and
spooled as they come (report/json_stream.py; JUnit's testcases too, render/junit.JunitParts);
what stays in memory beyond the parse is each scenario's id and a few numbers, and what the
size-capped summary can still show (render/summary.SummaryParts). Every file is the one the
whole-run path writes, byte for byte. Anything this path does not carry (other views,
selections, gates, includes, a judge, pricing, scenarios with runs, turns or calls, an unknown
or out-of-order observation, any problem in either file) makes it give way, before anything
is written, to the whole-run path, which then decides and words every refusal as it always has.
"""

from __future__ import annotations

import os
import tempfile
from array import array
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from behavegate import __version__
from behavegate.commands.clock import Clock
from behavegate.commands.invocation import TestCommand
from behavegate.commands.request import TestRequest
from behavegate.errors import ExitCode, RunIncomplete
from behavegate.github.views import OutputPaths, Views
from behavegate.judge.scores import ScoreTotals
from behavegate.model import Contract, Observation, RunFacts, Status, Timing
from behavegate.text import one_line

if TYPE_CHECKING:
    from behavegate.contract.datasets import Origin  # imported for a golden set alone

PART = 1000  # scenarios judged together: a part's results are all that is ever held
_STREAMED_REQUEST = ("max_scenarios", "max_seconds", "max_assertions")  # the request flags this path honours


_INLINE_KEYS = frozenset({"id", "prompt", "system_prompt", "available_tools", "tags", "expect"})


class NotStreamable(Exception):
    """This run needs the whole-run path (which words any refusal)."""


def streamable(command: TestCommand) -> bool:
    """Only flags whose effect this path reproduces: a JSON report in a file, JUnit, the summary."""
    from behavegate.limits import MAX_ASSERTIONS_CEILING

    views, evidence = command.views, command.evidence
    request = TestRequest(**{**{k: getattr(command.request, k) for k in _STREAMED_REQUEST}, "artifacts": False})
    most = command.request.max_assertions  # out of its range: the whole-run path refuses it
    paths = OutputPaths(output=views.paths.output, junit=views.paths.junit, summary=views.paths.summary)
    return (
        views == Views(format="json", detail=views.detail, paths=paths)
        and views.paths.output is not None
        and evidence.observations is not None
        and evidence.observations.lower().endswith(".jsonl")
        and not evidence.traces
        and command.request == request
        and (most is None or 1 <= most <= MAX_ASSERTIONS_CEILING)
        and not command.live.given()
        and command.live.tools_mcp is None
        and command.live.cache is None  # refused with --observations, by the whole-run path (commands/cache_policy.py)
        and command.shard is None
        and command.cases is None
        and command.gating.baseline is None
        and command.gating.fail_on != "regression"  # refused without --baseline, by the whole-run path
        and len(command.contracts) <= 1
    )


def run_streaming(
    command: TestCommand, contract_path: Path, root: Path, console: Any, display: Callable[[Path], str]
) -> int | None:
    """The run's exit status, or None when it must take the whole-run path. ``display``: a
    path as the report shows it (commands/test.display_path)."""
    clock = Clock()
    with tempfile.TemporaryDirectory(prefix="behavegate-stream-") as folder:
        try:
            run = _judge(command, contract_path, root, Path(folder), display(contract_path))
        except Exception as exc:  # any refusal is the whole-run path's to find and word; it redoes everything
            # Said whole (the type and the words, one line): a run that gives way holds every row at once.
            console.err(
                f"behavegate: the streamed path gave way to the whole-run path: {type(exc).__name__}: {one_line(str(exc), 300)}"
            )
            return None
        return _deliver(command, run, root, console, clock, display)


class _Run:
    """What a streamed run keeps: per scenario an id and offsets; totals; the spools. An
    accumulator that grows as parts are judged, so a plain class, not a frozen record."""

    def __init__(self, head: Contract, options: Any, provenance: dict[str, Any], spools: Any = None, shown: str = "") -> None:
        self.head = head  # the golden-query file with its first part of rows
        self.shown = shown  # the contract's path as the views show it
        self.junit: Any = None  # render/junit.JunitParts when --junit is given
        self.summary: Any = None  # render/summary.SummaryParts when --summary is given
        self.options = options
        self.provenance = provenance
        self.ids: list[str] = []
        self.statuses: Counter[str] = Counter()
        self.pairs: Counter[tuple[str, str]] = Counter()
        self.latencies: array[float] = array("d")
        self.decisions = 0
        self.spools = spools
        self.scores = ScoreTotals()


def _judge(command: TestCommand, contract_path: Path, root: Path, folder: Path, shown: str) -> _Run:
    from behavegate.commands.request import resolve
    from behavegate.contract import datasets
    from behavegate.contract import golden_queries as golden
    from behavegate.contract.assertion_keys import scenario_assertions
    from behavegate.contract.load import declares_version_2
    from behavegate.contract.yaml_lines import load_yaml
    from behavegate.files import ProjectLines, read_project_text, runner_dirs
    from behavegate.limits import (
        V2_INPUT_MAX_VALUES,
        V2_MAX_ASSERTIONS,
        V2_MAX_INPUT_BYTES,
        V2_MAX_OBSERVATION_ENTRIES,
        V2_MAX_SCENARIOS,
    )

    resolved, source = read_project_text(contract_path, root, "Contract", V2_MAX_INPUT_BYTES)
    if not declares_version_2(source):
        raise NotStreamable("not a version-2 contract")
    raw, lines = load_yaml(source, max_values=V2_INPUT_MAX_VALUES)
    if not isinstance(raw, dict) or {"include", "gates", "judge"} & raw.keys():
        raise NotStreamable("not a mapping, or it has include, gates or judge")
    agent = raw.get("agent")
    if isinstance(agent, dict) and {"pricing", "tools_from"} & agent.keys():
        raise NotStreamable("agent.pricing or agent.tools_from")
    evidence = ProjectLines(
        str(command.evidence.observations), root, "Observation file", V2_MAX_INPUT_BYTES, runner_dirs(os.environ)
    )
    parts: Iterator[Contract]
    if golden.is_golden(raw):
        name = raw.get("queries")
        if not isinstance(name, str) or not name.lower().endswith(".jsonl"):
            raise NotStreamable("the golden set is not a .jsonl file")
        from behavegate.commands.output_paths import check_included_outputs

        check_included_outputs(command.views.paths, root, resolved, [name])  # an output over it: the whole-run path words it
        rows = ProjectLines(resolved.parent / name, root, "Golden set", V2_MAX_INPUT_BYTES)
        parts = _golden_parts(datasets.jsonl_queries(name, rows.lines()), source, resolved, root)
    else:
        parts = _inline_parts(raw, lines, source, resolved, root)
    entries = _Entries(evidence.lines())
    run: _Run | None = None
    from behavegate.report.json_stream import KeyedSpool, Spool

    spools = {
        "records": Spool(folder / "records"),
        "observations": KeyedSpool(folder / "observations"),
        "where": KeyedSpool(folder / "where"),
        "tags": KeyedSpool(folder / "tags"),
    }
    seen: set[str] = set()
    assertions = 0
    for contract in parts:
        if run is None:
            options = resolve(command.request, contract, offline=True)
            if options.runs is not None or options.gates(contract.gates) != contract.gates:
                raise NotStreamable("run options or gates the path does not carry")
            provenance = {
                "kind": "observation_file",
                "trust": "unverified_fixture",
                "path": str(evidence.path),
                "schema_version": 2,
            }
            run = _Run(contract, options, provenance, spools=spools, shown=shown)
            if command.views.paths.junit:
                from behavegate.render.junit import JunitParts

                run.junit = JunitParts(folder / "junit")
            if command.views.paths.summary:
                from behavegate.render.summary import SummaryParts

                run.summary = SummaryParts()
        for scenario in contract.scenarios:
            if scenario.id in seen:
                raise NotStreamable("a scenario id repeated")  # the whole-run path names the duplicate
            seen.add(scenario.id)
            assertions += scenario_assertions(scenario)
        if len(seen) > min(V2_MAX_SCENARIOS, run.options.max_scenarios):
            raise NotStreamable("more scenarios than allowed")
        if assertions > (run.options.max_assertions or V2_MAX_ASSERTIONS):
            raise NotStreamable("more assertions than allowed")
        _judge_part(run, contract, entries)
        if entries.count > V2_MAX_OBSERVATION_ENTRIES:
            raise NotStreamable("more observation entries than allowed")
        # Past the cap by the lines' bound, the whole-run path counts the file's values and words the refusal.
        if entries.values > V2_INPUT_MAX_VALUES:
            raise NotStreamable("the observation file may hold more values than allowed")
    if run is None or entries.pending is not None or entries.problem:
        raise NotStreamable("no rows, or observations of no scenario or out of order")  # the whole-run path says which
    run.provenance["source_digest"] = evidence.digest
    return run


def _golden_parts(rows: Iterator[tuple[Origin, dict[str, Any]]], source: str, path: Path, root: Path) -> Iterator[Contract]:
    """A golden-query file's JSON Lines rows, a part at a time, each at its file and line."""
    from behavegate.contract.load import golden_part

    before = 0
    while part := _next_part(rows, before):
        before += len(part)
        yield golden_part(source, path, root, [query for _, query in part], [origin for origin, _ in part])


def _inline_parts(raw: dict[str, Any], lines: Any, source: str, path: Path, root: Path) -> Iterator[Contract]:
    """A version-2 contract's own ``scenarios:``, a part at a time, from the one parse; only
    what the whole-run path would read as it is (no limit crossed, no includes, not an Oxy file)."""
    import hashlib

    from behavegate.contract import oxy
    from behavegate.contract import rules as f
    from behavegate.contract.parts import inline_parts
    from behavegate.limits import V2_INPUT_MAX_VALUES

    if raw.get("version") != 2 or type(raw.get("version")) is not int or oxy.is_oxy(raw, path):
        raise NotStreamable("not version 2, or an Oxy test file")
    scenarios = raw.get("scenarios")
    if not isinstance(scenarios, list) or not scenarios:
        raise NotStreamable("no scenarios list")
    # Only the keys a golden-set row becomes (and a scenario's system prompt and tool list):
    # runs, turns, conversations, MCP calls and the like keep to the whole-run path.
    if any(not isinstance(item, dict) or not item.keys() <= _INLINE_KEYS for item in scenarios):
        raise NotStreamable("a scenario with keys beyond a golden-set row's (runs, turns, messages, ...)")
    if not lines.within_limits:
        try:
            f.check_shape(raw, "Contract", V2_INPUT_MAX_VALUES)
        except f.Bad:
            raise NotStreamable("the contract is past the shape limits") from None
    digest = hashlib.sha256(source.encode("utf-8")).hexdigest()
    return inline_parts(raw, lines, path, root, digest, PART)


def _next_part(rows: Iterator[tuple[Origin, dict[str, Any]]], before: int) -> list[tuple[Origin, dict[str, Any]]]:
    part: list[tuple[Origin, dict[str, Any]]] = []
    for origin, query in rows:
        # A row without an id is named by its place in the whole set, as the whole-run path names it.
        part.append((origin, query if "id" in query else {"id": f"query-{before + len(part) + 1:03d}", **query}))
        if len(part) == PART:
            break
    return part


class _Entries:
    """The observation file's entries in order, each scenario's attempts taken while they
    come together; an entry of a scenario later in the set waits for it."""

    def __init__(self, lines: Iterator[str]) -> None:
        from behavegate.evidence.observation_file import jsonl_lines

        self._raw = jsonl_lines(lines)
        self.count = 0
        # No fewer than the values the whole-run path counts in the document the file stands for,
        # {"version": 2, "scenarios": [...]}: its value limit is the whole file's, not a line's.
        self.values = 5
        self.problem = False
        self.pending: Any = None
        self.line = ""  # the pending entry's text
        self._advance()

    def _advance(self) -> None:
        from behavegate.contract.rules import values_at_most

        self.line, self.pending = next(self._raw, ("", None))
        if self.pending is not None:
            self.count += 1
            self.values += 1 + values_at_most(self.line)  # its index in the list, then its own

    def take(self, scenario_id: str) -> Iterator[tuple[int, str, Any]]:
        while isinstance(self.pending, dict) and self.pending.get("id") == scenario_id:
            yield self.count - 1, self.line, self.pending
            self._advance()
        if self.pending is not None and not isinstance(self.pending, dict):
            self.problem = True


def _judge_part(run: _Run, contract: Contract, entries: _Entries) -> None:
    from behavegate.contract import rules as f
    from behavegate.evidence.observation_file import _SURROGATE_ESCAPE, read_entry
    from behavegate.judge.evaluate import evaluate
    from behavegate.limits import V2_INPUT_MAX_VALUES
    from behavegate.report.derived import derive
    from behavegate.report.json_stream import COMPACT, observation_bytes
    from behavegate.report.redact import mask_flagged
    from behavegate.report.result import Report, scenario_views, where

    collector = f.Collector()
    attempts: dict[str, tuple[Observation, ...]] = {}
    turns = {s.id: s.max_turns for s in contract.scenarios}
    for scenario in contract.scenarios:
        found: list[Observation] = []
        for index, line, item in entries.take(scenario.id):
            # As the whole-run path checks the file {"version": 2, "scenarios": [...]}: the line
            # is walked only when its text alone cannot show it is within the limits.
            if not f.surely_within(line, V2_INPUT_MAX_VALUES, depth=2, values=4):
                try:
                    f.check_shape({"scenarios": [item]}, "Observation file", V2_INPUT_MAX_VALUES)
                except f.Bad:
                    raise NotStreamable("an observation line past the shape limits") from None
            # UTF-8 text holds no surrogate: only a "\\udXXX" escape in the line can make one.
            checked = _SURROGATE_ESCAPE.search(line) is None
            observation = read_entry(collector, item, index, True, checked, {scenario.id: len(found)}.get, turns)
            if collector.problems or observation is None:
                raise NotStreamable("an observation the reader refuses")
            found.append(observation)
        if found:
            attempts[scenario.id] = tuple(found)
    evaluation = evaluate(contract, {k: v[0] for k, v in attempts.items()}, attempts=attempts, runs=None, gates=contract.gates)
    facts = RunFacts("stream", "", "", 0, run.options.max_scenarios, run.options.max_seconds)
    timings = (Timing("", "", 0),) * len(contract.scenarios)
    # As build_report makes it, without its size check: the whole text is measured as it is written.
    masked = mask_flagged(evaluation)
    report = Report(
        contract=contract,
        evaluation=masked,
        derived=derive(contract, masked, run.provenance),
        mode="offline",
        provenance=run.provenance,
        facts=facts,
        contract_path=run.shown,
        version=__version__,
        skipped=(),
        timings=timings,
    )
    derived = report.derived
    if report.gates or derived.judged is not None or derived.usage is not None or derived.oxy is not None:
        raise NotStreamable("gates, a judge, usage or an Oxy score")
    spools = run.spools
    for result, shown, entry in scenario_views(report):
        sid = result.scenario.id
        run.ids.append(sid)
        run.statuses[result.status] += 1
        run.decisions += len(result.verdicts)
        run.scores.add(result)
        for attempt in result.attempts:
            run.pairs.update((v.kind, v.status) for v in attempt.verdicts)
            if attempt.observation is not None and attempt.observation.latency_ms is not None:
                run.latencies.append(attempt.observation.latency_ms)
        from behavegate.canonical_json import canonical_bytes

        spools["records"].add(canonical_bytes(entry))
        if shown is not None:
            spools["observations"].add(sid, observation_bytes(shown))
        spools["where"].add(sid, COMPACT.encode(where(report, result.scenario)).encode())
        if result.scenario.tags:
            spools["tags"].add(sid, COMPACT.encode(list(result.scenario.tags)).encode())
    if run.junit is not None:
        run.junit.add(report)
    if run.summary is not None:
        run.summary.add(report)


def _deliver(command: TestCommand, run: _Run, root: Path, console: Any, clock: Clock, display: Callable[[Path], str]) -> int:
    import json

    from behavegate.canonical_json import canonical_text
    from behavegate.commands.options import check_run_budget
    from behavegate.commands.output_paths import show_output
    from behavegate.gating import FailOn, fail_on_status
    from behavegate.judge.aggregate import percentile
    from behavegate.judge.evaluate import run_status
    from behavegate.limits import REPORT_RESERVE_BYTES
    from behavegate.model import Evaluation
    from behavegate.report.digests import EVIDENCE_KEYS, count_pairs, harness_block, report_cap
    from behavegate.report.json_blocks import gate_block
    from behavegate.report.json_stream import Placeholder, selected_digest, written
    from behavegate.report.json_text import EncodedReport, digest
    from behavegate.report.layout import NO_ARTIFACTS
    from behavegate.text import path_text

    contract, options, spools = run.head, run.options, run.spools
    facts = clock.facts(options.max_scenarios, options.max_seconds)
    check_run_budget(clock.elapsed(), options.max_seconds, version=2, live=False)
    status: Status = run_status([s for s in ("fail", "incomplete", "pass") if run.statuses[s]], [])
    summary, coverage = count_pairs(run.pairs)
    evidence: dict[str, Any] = {
        "schema_version": 1,
        "kind": "agent_behavior",
        "status": status,
        "mode": "offline",
        "contract": {"version": contract.version, "path": path_text(contract.path), "digest": contract.digest},
        "summary": {
            "scenario_count": len(run.ids),
            "passed_scenarios": run.statuses["pass"],
            "failed_scenarios": run.statuses["fail"],
            "incomplete_scenarios": run.statuses["incomplete"],
            **summary,
        },
        "coverage": coverage,
        "provenance": {**run.provenance, "selected_digest": selected_digest(spools["observations"])},
        "artifacts": dict(NO_ARTIFACTS),
        "gates": [],
    }
    parts = {key: canonical_text(value) for key, value in evidence.items()}
    encoded = EncodedReport(parts, spools["records"], digest(parts, spools["records"], (*EVIDENCE_KEYS, "gates")))
    big = Placeholder()
    ids = run.ids
    harness = harness_block(contract, Evaluation(status, ()), facts, None, status)
    steps = len(ids)
    harness["budget_used"]["steps"] = harness["phase_count"] = steps
    harness["budget_remaining"]["steps"] = facts.max_scenarios - steps
    harness["decision_count"] = run.decisions
    harness["completed_phases"] = big.add(lambda: (json.dumps(f"scenario:{i}") for i in ids), mapping=False)
    fail_on = FailOn(command.gating.fail_on)
    gate_status = fail_on_status(status, fail_on, None)
    latencies = list(run.latencies)
    extra: dict[str, Any] = {
        "version": __version__,
        "contract_path": display(contract.path),
        "run_dir": None,
        "scenarios": big.add(lambda: _members(spools["where"]), mapping=True),
        "latency_ms": {
            "attempts": len(latencies),
            "p50": percentile(latencies, 50),
            "p95": percentile(latencies, 95),
            "max": max(latencies),
        }
        if latencies
        else None,
        "tags": big.add(lambda: _members(spools["tags"]), mapping=True),
        "tool_calls_key": contract.agent.missing_tool_calls,
        "skipped": [],
        "seconds": big.add(lambda: (f"{json.dumps(i)}:0.0" for i in sorted(ids)), mapping=True),
    }
    del latencies
    if (scores := run.scores.block()) is not None:
        extra["scores"] = scores
    gate_block(extra, None, fail_on, gate_status)
    rest = {"evidence_digest": encoded.digest, "harness": harness, "behavegate": extra}
    sizes: Counter[str] = Counter()
    files = show_output(
        command.views, written(encoded, rest, big, lambda key, n: sizes.update({key: n})), root, console, "report"
    )
    # skylos's size limit, on its own keys (the text without ours), as build_report checks it.
    if sum(sizes.values()) - sizes["behavegate"] + 1 > report_cap(2) - REPORT_RESERVE_BYTES:
        raise RunIncomplete(f"agent behavior evidence exceeds {report_cap(2)} bytes")
    _write_views(command, run, root, files, facts.started_at, status, gate_status, encoded.digest, extra["latency_ms"])
    return int(ExitCode.of(gate_status))


def _write_views(
    command: TestCommand,
    run: _Run,
    root: Path,
    files: dict[str, str],
    started_at: str,
    status: Status,
    gate_status: Status,
    evidence_digest: str,
    latency: dict[str, float] | None,
) -> None:
    """``--junit`` and ``--summary``, as deliver_ci writes them after the report."""
    from behavegate.github.outputs import write_files

    if run.junit is None and run.summary is None:
        return
    trust = run.provenance.get("trust")

    def render(flag: str) -> str | Iterator[str]:
        if flag == "junit":
            from behavegate.render.junit import head_properties, suite_properties

            head = head_properties(status, "offline", run.head.digest, evidence_digest, trust)
            return run.junit.pieces(run.shown, started_at, suite_properties(head, latency, None, (), {}))  # type: ignore[no-any-return]
        return run.summary.render(  # type: ignore[no-any-return]
            fail_on=command.gating.fail_on,
            status=status,
            gate_status=gate_status,
            mode="offline",
            trust=trust,
            evidence_digest=evidence_digest,
            contract_path=run.shown,
            latency=latency,
            usage=None,
            evidence_note=None,  # an observation file's provenance has no note (report/derived.provenance_note)
            notes=(),
            judge_note=None,
        )

    write_files(command.views.paths, render, files, root)


def _members(spool: Any) -> Iterator[str]:
    import json

    for key, record in spool.sorted():
        yield f"{json.dumps(key)}:{record.decode()}"
