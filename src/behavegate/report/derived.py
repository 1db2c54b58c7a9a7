"""What every view shows beside the verdicts, derived once when the Report is built
(report/build.py): possible loops, the observations as a view may show them (what a
failing ``safety.pii`` check found, masked), graded scores, an Oxy file's score, the
judged checks' counts, the run's tokens and cost. No view computes any of these again: each renders what is here.
A Report holds the Derived of its own evaluation (checked when it is made): a changed
evaluation is a new Report, made by build.rejudged."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from behavegate.frozen import Frozen, not_compared, not_shown
from behavegate.judge.oxy_score import FileScore, file_score
from behavegate.judge.scores import scores_block
from behavegate.model import Attempt, Contract, Evaluation, Observation, ScenarioResult
from behavegate.report.judged import judged_counts
from behavegate.report.loops import PossibleLoop, attempt_loop
from behavegate.report.redact import masked_observation
from behavegate.report.usage import RunUsage, run_usage

REPRESENTATIVE = -1  # the attempt index of a scenario's representative observation in ``masked``


@not_shown("of")
@not_compared("of")
class Derived(Frozen):
    of: Evaluation  # the evaluation these were derived from
    loops: Mapping[str, tuple[PossibleLoop, ...]]  # by scenario id; only scenarios with a possible loop
    # (scenario id, attempt index or REPRESENTATIVE) -> the observation with flagged values masked;
    # only where masking changed it (every other observation is shown as it is)
    masked: Mapping[tuple[str, int], Observation | None]
    scores: dict[str, Any] | None  # graded scores per suite and tag (judge/scores.py); None: nothing graded
    oxy: FileScore | None  # an Oxy test file's score and consistency
    judged: dict[str, Any] | None  # judged (response.judge) checks counted, with their models
    usage: RunUsage | None = None  # the run's tokens and cost; None: not priced and no spend budget

    @property
    def all_loops(self) -> tuple[PossibleLoop, ...]:
        return tuple(loop for loops in self.loops.values() for loop in loops)

    def loops_of(self, result: ScenarioResult) -> tuple[PossibleLoop, ...]:
        return self.loops.get(result.scenario.id, ())

    def shown(self, result: ScenarioResult, attempt: Attempt | None = None) -> Observation | None:
        """The observation of a scenario (its representative one, or ``attempt``'s) as views
        show it: what a failing ``safety.pii`` check found, masked."""
        observation = attempt.observation if attempt is not None else result.observation
        key = (result.scenario.id, attempt.index if attempt is not None else REPRESENTATIVE)
        return self.masked.get(key, observation)


def derive(contract: Contract, evaluation: Evaluation, provenance: Mapping[str, Any]) -> Derived:
    """The view facts of a judged (and already redacted) evaluation, in one pass of its results."""
    results = evaluation.results
    loops: dict[str, tuple[PossibleLoop, ...]] = {}
    masked: dict[tuple[str, int], Observation | None] = {}
    for result in results:
        sid = result.scenario.id
        shown = masked_observation(result.scenario, result.observation, result.verdicts)
        if shown is not result.observation:
            masked[(sid, REPRESENTATIVE)] = shown
        found = []
        for attempt in result.attempts:
            shown = masked_observation(result.scenario, attempt.observation, attempt.verdicts)
            if shown is not attempt.observation:
                masked[(sid, attempt.index)] = shown
            if (loop := attempt_loop(sid, attempt.index, shown)) is not None:
                found.append(loop)
        if found:
            loops[sid] = tuple(found)
    return Derived(
        of=evaluation,
        loops=loops,
        masked=masked,
        scores=scores_block(results) if contract.version >= 2 else None,
        oxy=file_score(results) if contract.oxy is not None else None,
        judged=judged_counts(results, provenance),
        usage=run_usage(contract, results, provenance),
    )


def provenance_note(provenance: Mapping[str, Any]) -> str | None:
    """What trace evidence held that no scenario used (the JSON report lists it whole);
    which shard reports a merged run was made of."""
    if provenance.get("kind") == "merged_shards":
        used = sum(1 for shard in provenance["shards"] if shard["used"])
        count = provenance["count"]
        return f"Merged from the reports of {used} of {count} shard{'s' if count != 1 else ''}" + (
            f"; missing: shard {', '.join(str(k) for k in provenance['missing'])}" if provenance["missing"] else ""
        )
    if provenance.get("kind") != "trace_file":
        return None
    counts, unbound = provenance["traces"], provenance["unbound_traces"]
    files = len(provenance["files"])
    text = (
        f"Traces: {counts['genai']} with GenAI content in {files} file{'s' if files != 1 else ''}, "
        f"{counts['bound']} bound to the selected scenarios"
    )
    if counts["other_scenarios"]:
        text += f", {counts['other_scenarios']} to scenarios not selected"
    if counts["ignored_without_genai"]:
        text += f", {counts['ignored_without_genai']} without GenAI content ignored"
    skipped = provenance.get("skipped_files") or []
    if skipped:
        text += f"; {len(skipped)} file{'s' if len(skipped) != 1 else ''} in the folders skipped as not trace files"
    if unbound["count"]:
        first = unbound["shown"][0]
        text += (
            f"; {unbound['count']} bound to no scenario (first: trace {first['trace_id']} in {first['file']}: "
            f"{first['reason']}); bind them with --trace-bind attribute (--trace-attribute NAME), conversation or "
            "prompt (docs/traces.md)"
        )
    return text
