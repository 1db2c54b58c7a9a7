"""Comparing a run with its baseline (``--baseline``): pure, computed once.

The unit is the assertion, keyed by scenario id and assertion id, and for
repeated scenarios also the scenario's pass rate. The rules (docs/baselines.md):

* **A failure the baseline does not record is a regression.** Single-run
  scenarios are declared deterministic (they must pass every time): an
  assertion that passed in the baseline and fails now is a regression, and so is
  a failing assertion or scenario the baseline does not have (new, or never
  judged there). One that failed in the baseline too is pre-existing.
* **A repeated scenario regresses when its pass rate drops significantly**: the
  one-sided Fisher exact test on the two attempt samples, family-wise level
  ``alpha`` over the run (judge.significance), for the scenario and for each of
  its assertions. A drop within sampling error is reported, never gated.
* **A total break is a regression at any number of runs**: every judged attempt
  passed in the baseline and every attempt fails now (3/3 then 0/3), whatever the
  p-value. Runs too few for any smaller drop to reach significance are named in
  the comparison (``total_break_only``), so every view can say so.
* **Missing evidence never hides a regression.** Incomplete attempts are
  completed both ways: a regression if the drop is significant even had they all
  passed, unresolved (the gate is incomplete) if it is significant only had they
  failed. An incomplete check that passed in the baseline is unresolved.
* Removed scenarios, new ones that pass, changed tool sequences, drops within
  noise and improvements are reported, not gated. When a suite pass-rate floor
  decides the run, scenario findings do not gate: the suite's pass rate and its
  gates are compared instead.
"""

from __future__ import annotations

from collections import Counter

from behavegate.frozen import Frozen, replace
from behavegate.judge.significance import ALPHA, drop_p_value, least_drop_p_value, rise_p_value, tarone_threshold
from behavegate.model import ScenarioResult
from behavegate.report.comparison import (
    SAFETY_KINDS,
    Baseline,
    Comparison,
    Counts,
    Finding,
    RunRecord,
    ScenarioRecord,
    normalized,
    one,
    tally,
)
from behavegate.report.result import Report
from behavegate.text import one_line

SHOWN_CALLS = 12  # tool names shown of one sequence


def current_record(report: Report) -> RunRecord:
    """This run reduced to what a comparison reads (as the baseline's report is)."""
    return RunRecord(tuple(_record(result) for result in report.results), {g.gate: g.status for g in report.gates})


def _record(result: ScenarioResult) -> ScenarioRecord:
    reliability = result.reliability
    if reliability is not None:
        attempts = Counts(reliability.passed, reliability.failed, reliability.incomplete)
    else:
        attempts = one(result.status)
    verdicts = [attempt.verdicts for attempt in result.attempts] if result.attempts else [result.verdicts]
    observations = [attempt.observation for attempt in result.attempts] if result.attempts else [result.observation]
    kinds = {verdict.kind for group in verdicts for verdict in group}
    tags = {tag.lower() for tag in result.scenario.tags}
    return ScenarioRecord(
        id=result.scenario.id,
        status=result.status,
        repeated=reliability is not None and reliability.runs > 1,
        attempts=attempts,
        assertions=tally([(v.assertion, v.status) for v in group] for group in verdicts),
        safety=bool(kinds & SAFETY_KINDS or tags & {"safety", "security"}),
        sequences=tuple(
            normalized([(call.name, call.group) for call in o.tool_calls])
            for o in observations
            if o is not None and o.tool_calls is not None
        ),
    )


class _Test(Frozen):
    """A pass-rate comparison waiting for the run's threshold."""

    scenario: str
    assertion: str | None
    before: Counts
    after: Counts

    def p_values(self) -> tuple[float, float]:
        """The drop's p-value with the incomplete attempts passed (best case) and failed (worst)."""
        b, a = self.before, self.after
        return (
            drop_p_value(b.passed, b.judged, a.passed + a.incomplete, a.runs),
            drop_p_value(b.passed, b.judged, a.passed, a.runs),
        )

    def least(self) -> float:
        return least_drop_p_value(self.before.passed, self.before.judged, self.after.passed, self.after.runs)

    def broken(self) -> str | None:
        """``"total"``: every judged attempt passed in the baseline and every attempt fails
        now; ``"if_incomplete_failed"``: so, had the incomplete attempts failed."""
        b, a = self.before, self.after
        if not b.judged or b.failed or a.passed or not a.failed:
            return None
        return "if_incomplete_failed" if a.incomplete else "total"

    def partial_drop_reaches(self, threshold: float) -> bool:
        """Could a drop short of a total break (every attempt passed before, one passes
        now) be significant with these sample sizes?"""
        before, now = self.before.judged, self.after.runs
        return before > 0 and now > 1 and drop_p_value(before, before, 1, now) <= threshold


class _Findings:
    def __init__(self) -> None:
        self.regressions: list[Finding] = []
        self.unresolved: list[Finding] = []
        self.improvements: list[Finding] = []
        self.changes: list[Finding] = []


def compare(baseline: Baseline, report: Report, alpha: float = ALPHA) -> Comparison:
    skipped = frozenset(scenario.id for scenario in report.skipped or ())
    note = contract_note_of(baseline, report.contract.digest, report.contract_path)
    return compare_records(baseline, current_record(report), skipped, report.floor_decides, note, alpha)


def compare_records(
    baseline: Baseline, now: RunRecord, not_selected: frozenset[str], absorbed: bool, contract_note: str, alpha: float = ALPHA
) -> Comparison:
    """``now`` (a run reduced to its record, e.g. a stored run read as a baseline is: ``behavegate
    view``) against ``baseline``; ``not_selected``: the contract's scenarios the run did not select;
    ``absorbed``: a suite pass-rate floor decides it."""
    before = baseline.run.by_id()
    found = _Findings()
    tests: list[_Test] = []
    compared = still_failing = 0
    for scenario in now.scenarios:
        old = before.get(scenario.id)
        if old is None:
            _new_scenario(scenario, found, "new scenario")
            continue
        compared += 1
        still_failing += scenario.status == old.status == "fail"
        if scenario.repeated and old.attempts.judged == 0:
            _new_scenario(scenario, found, "the baseline could not judge it (incomplete there)")
        elif scenario.repeated:
            tests.append(_Test(scenario.id, None, old.attempts, scenario.attempts))
            tests.extend(
                _Test(scenario.id, key, old.assertions[key], counts)
                for key, counts in scenario.assertions.items()
                if key in old.assertions and old.assertions[key].judged
            )
        else:
            _single_run(scenario, old, found)
        for key in old.assertions:
            if key not in scenario.assertions:
                found.changes.append(Finding("removed_assertion", scenario.id, key, "in the baseline, not in this run"))
        _sequences(scenario, old, found)
    ran = {scenario.id for scenario in now.scenarios}
    for old in baseline.run.scenarios:
        if old.id in ran:
            continue
        if old.id in not_selected:
            found.changes.append(Finding("not_run", old.id, None, "in the baseline and the contract, not selected this run"))
        elif old.safety:
            message = (
                "in the baseline, not in the contract; it guarded safety (a PII, injection, forbidden-tool or refusal check)"
            )
            found.changes.append(Finding("removed_safety_scenario", old.id, None, message, before=old.attempts))
        else:
            found.changes.append(
                Finding("removed_scenario", old.id, None, "in the baseline, not in the contract", before=old.attempts)
            )
    for name, status in now.gates.items():
        was = baseline.run.gates.get(name)
        _single("", name, None if was is None else one(was), one(status), found, gate=True)
    if absorbed:
        _absorb(found)
        prior, suite = _suite(baseline.run), _suite(now)
        if prior.judged:
            tests.append(_Test("", None, prior, suite))
    # A check that failed in exactly the attempts its scenario failed is the same comparison: counted once.
    distinct = {(test.scenario, test.before, test.after): test for test in tests}
    threshold, counted = tarone_threshold([test.least() for test in distinct.values()], alpha)
    for test in tests:
        _judge(test, threshold, found, gating=not (absorbed and test.scenario))
    blind = tuple(test for test in tests if test.assertion is None and test.scenario and not test.partial_drop_reaches(threshold))
    order = {scenario.id: index for index, scenario in enumerate((*now.scenarios, *baseline.run.scenarios))}

    def ordered(findings: list[Finding]) -> tuple[Finding, ...]:
        """Suite findings first, then in contract order, each scenario before its assertions."""
        return tuple(sorted(findings, key=lambda f: (order.get(f.scenario, -1), f.assertion is not None)))

    return Comparison(
        source=baseline.source,
        contract_note=contract_note,
        alpha=alpha,
        threshold=threshold,
        tests=counted,
        total_break_only=tuple((test.scenario, test.before.judged, test.after.runs) for test in blind),
        partial_drop_runs=_runs_for_a_partial_drop(threshold),
        regressions=ordered(found.regressions),
        unresolved=ordered(found.unresolved),
        improvements=ordered(found.improvements),
        changes=ordered(found.changes),
        compared=compared,
        still_failing=still_failing,
    )


def _new_scenario(scenario: ScenarioRecord, found: _Findings, why: str) -> None:
    """No baseline verdict: a failure is a regression; anything else is reported."""
    if scenario.status != "fail":
        found.changes.append(Finding("new_scenario", scenario.id, None, f"{why}; {scenario.status} now", after=scenario.attempts))
    elif scenario.repeated:
        message = f"{why}; fails now ({scenario.attempts.text()} attempts passed)"
        found.regressions.append(Finding("new_failure", scenario.id, None, message, after=scenario.attempts))
    else:
        for key, counts in scenario.assertions.items():
            if counts.failed:
                found.regressions.append(Finding("new_failure", scenario.id, key, f"{why}; this check fails", after=counts))


def _single_run(scenario: ScenarioRecord, old: ScenarioRecord, found: _Findings) -> None:
    """A single-run scenario, assertion by assertion; its unresolved checks as one finding."""
    hidden: list[str] = []
    for key, counts in scenario.assertions.items():
        if _single(scenario.id, key, old.assertions.get(key), counts, found):
            hidden.append(key)
    if hidden:
        listed = ", ".join(hidden[:5]) + (f" and {len(hidden) - 5} more" if len(hidden) > 5 else "")
        message = f"incomplete now; {len(hidden)} check(s) that passed in the baseline could not be judged: {listed}"
        found.unresolved.append(Finding("unresolved", scenario.id, hidden[0] if len(hidden) == 1 else None, message))


def _single(scenario: str, key: str, before: Counts | None, after: Counts, found: _Findings, *, gate: bool = False) -> bool:
    """One check judged once now. True when it is incomplete and passed in the baseline."""
    vouched = before is not None and before.passed > 0 and before.failed == 0
    if after.failed:
        if before is None or before.judged == 0:
            why = "not in the baseline" if before is None else "the baseline could not judge it (incomplete there)"
            found.regressions.append(
                Finding("gate_failing" if gate else "new_failure", scenario, key, f"{why}; fails now", before=before, after=after)
            )
        elif vouched:
            found.regressions.append(
                Finding(
                    "gate_failing" if gate else "newly_failing",
                    scenario,
                    key,
                    f"passed in the baseline{_sample(before)}, fails now",
                    before=before,
                    after=after,
                )
            )
        return False
    if after.incomplete:
        if vouched and gate:
            message = "passed in the baseline, incomplete now: a regression cannot be ruled out"
            found.unresolved.append(Finding("unresolved", scenario, key, message, before=before, after=after))
        return vouched and not gate
    if before is not None and before.failed:
        found.improvements.append(
            Finding(
                "gate_fixed" if gate else "fixed",
                scenario,
                key,
                f"failed in the baseline{_sample(before)}, passes now",
                before=before,
                after=after,
            )
        )
    return False


def _judge(test: _Test, threshold: float, found: _Findings, *, gating: bool) -> None:
    best, worst = test.p_values()
    b, a = test.before, test.after
    change = f"{'' if test.assertion is None else 'passed '}{b.text()} in the baseline, {a.text()} now"
    scenario_level = test.assertion is None
    broken = test.broken()
    if best <= threshold or broken == "total":
        kind = "pass_rate_drop" if scenario_level else "newly_failing"
        if best <= threshold:
            message = f"{change}, a significant drop (one-sided Fisher exact p={best:.2g} <= {threshold:.2g})"
        else:  # too few runs for the test, and still what anyone calls a regression
            message = f"{change}: passed every attempt in the baseline, fails every attempt now, a regression at any p-value (p={best:.2g})"
        found.regressions.append(Finding(kind, test.scenario, test.assertion, message, b, a, best, gating))
    elif broken == "if_incomplete_failed" and worst > threshold:
        message = (
            f"{change}: passed every attempt in the baseline, and no attempt passes now; a total break if the "
            f"{a.incomplete} incomplete attempt(s) failed: a regression cannot be ruled out"
        )
        found.unresolved.append(Finding("unresolved", test.scenario, test.assertion, message, b, a, worst, gating))
    elif worst <= threshold:
        message = (
            f"{change}, a significant drop if the {a.incomplete} incomplete attempt(s) failed (p={worst:.2g}), "
            f"not if they passed (p={best:.2g}); a regression cannot be ruled out"
        )
        found.unresolved.append(Finding("unresolved", test.scenario, test.assertion, message, b, a, worst, gating))
    else:
        rise = rise_p_value(b.passed, b.judged, a.passed, a.runs)
        if rise <= threshold:
            kind = "pass_rate_rise" if scenario_level else "fixed"
            message = f"{change}, a significant rise (p={rise:.2g} <= {threshold:.2g})"
            found.improvements.append(Finding(kind, test.scenario, test.assertion, message, b, a, rise))
        elif scenario_level and a.judged and a.passed * b.judged < b.passed * a.judged:
            message = f"pass rate {change} (p={worst:.2g} > {threshold:.2g}): not a regression"
            found.changes.append(Finding("within_noise", test.scenario, None, message, b, a, worst))


def _runs_for_a_partial_drop(threshold: float) -> int:
    """The fewest attempts on each side at which every attempt passing before and one
    passing now is a significant drop at ``threshold`` (what ``runs`` must reach for
    the gate to see more than a total break)."""
    runs = 2
    while runs < 1000 and drop_p_value(runs, runs, 1, runs) > threshold:
        runs += 1
    return runs


def _absorb(found: _Findings) -> None:
    """Under a suite floor, scenario findings are reported but do not gate."""
    found.regressions = [replace(f, gating=False) if f.scenario else f for f in found.regressions]
    found.unresolved = [replace(f, gating=False) if f.scenario else f for f in found.unresolved]


def _suite(run: RunRecord) -> Counts:
    """A run's scenarios as one sample: how many passed, failed, were incomplete."""
    statuses = Counter(scenario.status for scenario in run.scenarios)
    return Counts(statuses["pass"], statuses["fail"], statuses["incomplete"])


def _sequences(scenario: ScenarioRecord, old: ScenarioRecord, found: _Findings) -> None:
    """The most common normalized tool sequence, when both runs recorded tool calls.
    A change is reported, not gated: the contract's tool checks say which paths are wrong."""
    if not scenario.sequences or not old.sequences:
        return
    (was, was_count), (now, now_count) = Counter(old.sequences).most_common(1)[0], Counter(scenario.sequences).most_common(1)[0]
    if was == now:
        return
    message = (
        f"most common tool sequence was {_calls(was)}{_share(was_count, len(old.sequences))}, "
        f"is {_calls(now)}{_share(now_count, len(scenario.sequences))}"
    )
    found.changes.append(Finding("tool_sequence", scenario.id, None, message))


def _share(count: int, total: int) -> str:
    return f" ({count}/{total} attempts)" if total > 1 else ""


def _sample(counts: Counts) -> str:
    """`` (7/8)`` for a sample of attempts, nothing for one verdict."""
    return f" ({counts.text()})" if counts.runs > 1 else ""


def _calls(names: tuple[str, ...]) -> str:
    if not names:
        return "(no tool call)"
    shown = " → ".join(one_line(name, 64) for name in names[:SHOWN_CALLS])
    return shown + (f" … (+{len(names) - SHOWN_CALLS})" if len(names) > SHOWN_CALLS else "")


def contract_note_of(baseline: Baseline, digest: str, path: str) -> str:
    source = baseline.source
    if source.contract_digest == digest:
        return "same contract"
    if source.contract_path == path:
        return "the contract changed since the baseline; scenarios and assertions are matched by id"
    return f"the baseline is of another contract file ({one_line(source.contract_path, 200)}); scenarios are matched by id"
