"""Judging observations against a contract: evidence gates, then every assertion."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from behavegate.frozen import replace
from behavegate.judge import aggregate, user_turns
from behavegate.judge.assertions import BY_KEY, EMPTY_PATTERNS, AssertionType, Evidence, requested_assertions
from behavegate.judge.evidence import partly
from behavegate.judge.gaps import response_gap, tool_gap
from behavegate.judge.matching import assign_calls
from behavegate.judge.oxy_score import decides_alone, score_gates
from behavegate.judge.scores import attempt_scores, mean_scores, score_gate
from behavegate.model import (
    AgentTarget,
    Attempt,
    Contract,
    Evaluation,
    GateResult,
    Gates,
    Observation,
    Scenario,
    ScenarioResult,
    Status,
    ToolCall,
    Verdict,
    combine,
)

if TYPE_CHECKING:  # imported where patterns are searched, not on every run
    from behavegate.judge.user_regex import PatternResult


def evidence_for(
    scenario: Scenario, observation: Observation | None, agent: AgentTarget | None = None, version: int = 1
) -> Evidence:
    tools = tool_gap(observation, version)
    assignment: Mapping[int, int] = {}
    if tools is None and observation is not None and observation.tool_calls is not None:
        assignment = assign_calls(scenario.expect.required, observation.tool_calls)
    response = response_gap(observation, version)
    patterns = _pattern_results(scenario, observation) if response is None else EMPTY_PATTERNS
    seen: tuple[ToolCall, ...] = ()
    if version >= 2 and tools is not None and observation is not None and not observation.error and observation.tool_calls:
        seen = observation.tool_calls  # what could be read: a lower bound, never the whole
    return Evidence(observation, response, tools, assignment, scenario, agent, patterns, seen)


def _pattern_results(scenario: Scenario, observation: Observation | None) -> Mapping[str, PatternResult]:
    """Every response regex of the scenario searched once, under the attempt's shared time budget."""
    expect = scenario.expect
    if observation is None or observation.response is None or not (expect.matches or expect.not_matches):
        return EMPTY_PATTERNS
    from behavegate.judge.user_regex import search_all  # imports `regex` only for contracts that use patterns

    requested = [item for key in ("response.matches", "response.not_matches") for item in BY_KEY[key].requested(expect)]
    results = search_all([pattern for _, (_, pattern) in requested], observation.response)
    return {assertion: result for (assertion, _), result in zip(requested, results, strict=True)}


def evaluate_scenario(
    scenario: Scenario, observation: Observation | None, agent: AgentTarget | None = None, version: int = 1
) -> ScenarioResult:
    """``version``: the contract's (version 2 words incomplete reasons with their fix). A
    conversation's own checks judge it whole; each scripted user turn's, that turn alone
    (judge/user_turns.py), reported as ``turns[i].<check>``."""
    evidence = evidence_for(scenario, user_turns.whole(scenario, observation), agent, version)
    verdicts = tuple(
        _judged(entry, assertion, spec, evidence) for entry, assertion, spec in requested_assertions(scenario.expect)
    )
    for index, scripted in enumerate(scenario.turns):
        if scripted.expect is None:
            continue
        alone = replace(scenario, expect=scripted.expect, turns=())
        on_turn = evidence_for(alone, user_turns.turn(scenario, observation, index), agent, version)
        verdicts += tuple(
            replace(_judged(entry, assertion, spec, on_turn), assertion=f"turns[{index}].{assertion}")
            for entry, assertion, spec in requested_assertions(scripted.expect)
        )
    return ScenarioResult(scenario, combine(v.status for v in verdicts), verdicts, observation)


def evidence_for_seen(evidence: Evidence, known: Observation) -> Evidence:
    """The evidence as if the calls that could be read were all the calls."""
    assert evidence.scenario is not None and known.tool_calls is not None
    assignment = assign_calls(evidence.scenario.expect.required, known.tool_calls)
    return replace(evidence, observation=known, tool_gap=None, assignment=assignment, seen=())


def _judged(entry: AssertionType, assertion: str, spec: Any, evidence: Evidence) -> Verdict:
    """The check on the evidence; with tool calls only partly known, decided on the calls read
    when they settle it (``seen_decides``), else incomplete: unknown is never zero."""
    verdict = entry.judge(assertion, spec, evidence)
    if verdict.status != "incomplete" or not evidence.seen:
        return verdict
    settles = entry.seen_decides(spec)
    if settles is None:
        return verdict
    assert evidence.observation is not None
    # A call read in part (arguments cut short with the answer) has arguments not observed, not invalid ones.
    seen = tuple(
        call if call.arguments is not None or call.executed is not None else replace(call, executed=False)
        for call in evidence.seen
    )
    known = replace(evidence.observation, tool_calls=seen, tool_calls_complete=True, tool_gap=None, finish_reason="stop")
    on_seen = entry.judge(assertion, spec, evidence_for_seen(evidence, known))
    return partly(on_seen, evidence) if on_seen.status == settles else verdict


def evaluate(
    contract: Contract,
    observations: Mapping[str, Observation],
    *,
    attempts: Mapping[str, Sequence[Observation | None]] | None = None,
    runs: int | None = None,
    gates: Gates | None = None,
    judged: Mapping[str, Sequence[ScenarioResult | None]] | None = None,
) -> Evaluation:
    """Judge every scenario. Version 1: one observation each. Version 2: every
    attempt, aggregated per scenario, then the suite gates. ``judged`` holds
    attempts already judged (by :func:`evaluate_scenario`, as they completed, or
    by the shard that ran them), in attempt order: they are used as they are, not
    judged again. None in either sequence: that attempt was not observed."""
    judged = judged or {}
    if contract.version < 2:
        results = tuple(
            (judged.get(s.id) or [None])[0] or evaluate_scenario(s, observations.get(s.id), contract.agent)
            for s in contract.scenarios
        )
        return Evaluation(combine(r.status for r in results), results)
    tries = attempts if attempts is not None else {key: (value,) for key, value in observations.items()}
    results = tuple(
        evaluate_repeated(s, tries.get(s.id, ()), contract.agent, runs, judged.get(s.id, ()), contract.version)
        for s in contract.scenarios
    )
    suite = suite_gates(results, gates or contract.gates)
    return Evaluation(run_status([r.status for r in results], [(g.gate, g.status) for g in suite]), results, suite)


def run_status(scenarios: Sequence[str], gates: Sequence[tuple[str, str]]) -> Status:
    """With a suite accuracy floor, the floor decides instead of every scenario
    having to pass; other gates always count."""
    if any(decides_alone(name) for name, _ in gates):
        return combine(status for _, status in gates)
    return combine([*scenarios, *(status for _, status in gates)])


def evaluate_repeated(
    scenario: Scenario,
    observations: Sequence[Observation | None],
    agent: AgentTarget | None,
    runs: int | None = None,
    judged: Sequence[ScenarioResult | None] = (),
    version: int = 2,
) -> ScenarioResult:
    """``sequential``: the attempts are consumed in order until the evidence decides
    (judge/sequential.py); the ones after are counted as unused, not judged."""
    if scenario.sequential is not None:
        return _sequential(scenario, observations, agent, runs or scenario.runs, judged, version)
    planned = max(runs or scenario.runs, len(observations))
    tries = _judge_attempts(scenario, observations, agent, planned, judged, version)
    statuses = [t.status for t in tries]
    status = aggregate.scenario_status(statuses, planned, scenario.min_pass_rate, scenario.gate)
    shown = next((t for t in tries if t.status == status), tries[0])
    return ScenarioResult(
        scenario,
        status,
        shown.verdicts,
        shown.observation,
        attempts=tuple(tries),
        reliability=aggregate.reliability(
            statuses, planned, scenario.min_pass_rate, scenario.gate, mean_scores([t.scores for t in tries])
        ),
    )


def _judge_attempts(
    scenario: Scenario,
    observations: Sequence[Observation | None],
    agent: AgentTarget | None,
    count: int,
    judged: Sequence[ScenarioResult | None],
    version: int,
) -> list[Attempt]:
    tries = []
    for index in range(count):
        observation = observations[index] if index < len(observations) else None
        prior = judged[index] if index < len(judged) else None
        result = prior or evaluate_scenario(scenario, observation, agent, version)
        tries.append(Attempt(index, result.status, result.verdicts, observation, attempt_scores(scenario.expect, observation)))
    return tries


def _sequential(
    scenario: Scenario,
    observations: Sequence[Observation | None],
    agent: AgentTarget | None,
    cap: int,
    judged: Sequence[ScenarioResult | None],
    version: int,
) -> ScenarioResult:
    from behavegate.judge import sequential

    assert scenario.sequential is not None
    d = sequential.design(scenario.min_pass_rate, scenario.sequential, cap)
    # Observed attempts only, in order (a gap -- an attempt a shard or a budget left
    # unobserved -- is judged incomplete where it stands).
    last = max((i for i, o in enumerate(observations) if o is not None), default=-1)
    observed = max(last + 1, max((i + 1 for i, j in enumerate(judged) if j is not None), default=0))
    tries: list[Attempt] = []
    decision = sequential.decide([], d, scenario.gate)
    for index in range(min(observed, cap)):
        tries.extend(_judge_attempts(scenario, observations[index : index + 1], agent, 1, judged[index : index + 1], version))
        tries[-1] = replace(tries[-1], index=index)
        decision = sequential.decide([t.status for t in tries], d, scenario.gate)
        if decision.by == "boundary":
            break
    used = tries[: decision.used] or _judge_attempts(scenario, (), agent, 1, (), version)
    if decision.by == "evidence":
        # Undecided with attempts missing before the cap: each missing one is an
        # incomplete attempt where it stands, with its reason, as in the fixed design.
        missing = _judge_attempts(scenario, (), agent, cap - len(used), (), version)
        used = [*used, *(replace(t, index=len(used) + i) for i, t in enumerate(missing))]
    unused = sum(1 for o in observations[decision.used :] if o is not None)
    statuses = [t.status for t in used]
    shown = next((t for t in used if t.status == decision.status), used[0])
    rel = aggregate.reliability(statuses, len(used), scenario.min_pass_rate, scenario.gate)
    rel = replace(
        rel,
        sequential=sequential.summary(d, replace(decision, used=min(len(used), decision.used or 1))),
        unused=unused,
        scores=mean_scores([t.scores for t in used]),
    )
    return ScenarioResult(scenario, decision.status, shown.verdicts, shown.observation, attempts=tuple(used), reliability=rel)


def suite_gates(results: Sequence[ScenarioResult], gates: Gates) -> tuple[GateResult, ...]:
    found: list[GateResult] = []
    if gates.formula == "runs":  # an Oxy file: its score, with or without a floor
        found.extend(score_gates(results, gates.min_pass_rate))
    elif gates.min_pass_rate is not None:
        groups: dict[str, list[ScenarioResult]] = {}
        for result in results:
            key = result.scenario.source if gates.threshold_mode == "all" else "suite"
            groups.setdefault(key or "contract", []).append(result)
        for name, group in groups.items():
            found.append(_accuracy_gate(name, group, gates.min_pass_rate))
    for tag_gate in gates.by_tag:  # each its own gate; the scenarios carrying the tag
        tagged = [r for r in results if tag_gate.tag in r.scenario.tags]
        if not tagged:  # incomplete, and why: nothing here carries the tag
            known = ", ".join(sorted({t for r in results for t in r.scenario.tags})) or "none"
            for key, floor in (("min_pass_rate", tag_gate.min_pass_rate), ("min_score", tag_gate.min_score)):
                if floor is not None:
                    message = (
                        f"no scenario is tagged {tag_gate.tag!r} (tags: {known}), so the floor of {floor:g} cannot be judged"
                    )
                    found.append(GateResult(f"tag[{tag_gate.tag}].{key}", "incomplete", message, floor, {"scenarios": 0}))
            continue
        if tag_gate.min_pass_rate is not None:
            name = f"tag[{tag_gate.tag}].min_pass_rate"
            found.append(_accuracy_gate(name, tagged, tag_gate.min_pass_rate, name))
        if tag_gate.min_score is not None:
            found.append(score_gate(f"tag[{tag_gate.tag}].min_score", tagged, tag_gate.min_score))
    if gates.min_score is not None:
        found.append(score_gate("min_score", results, gates.min_score))
    if gates.latency_p95_ms is not None:
        latencies = [
            t.observation.latency_ms
            for r in results
            for t in r.attempts
            if t.observation is not None and t.observation.latency_ms is not None
        ]
        limit = gates.latency_p95_ms
        if not latencies:
            found.append(GateResult("latency_p95_ms", "incomplete", "no attempt reported its latency", limit, None))
        else:
            p95 = aggregate.percentile(latencies, 95)
            ok = p95 <= limit
            message = (
                f"latency p95 {p95:g} ms is within {limit:g} ms"
                if ok
                else f"expected latency p95 at most {limit:g} ms, observed {p95:g} ms over {len(latencies)} attempts"
            )
            found.append(
                GateResult("latency_p95_ms", "pass" if ok else "fail", message, limit, {"p95": p95, "attempts": len(latencies)})
            )
    return tuple(found)


def _accuracy_gate(name: str, group: Sequence[ScenarioResult], floor: float, gate: str = "") -> GateResult:
    rates = [r.reliability for r in group if r.reliability is not None]
    gate = gate or ("min_pass_rate" if name == "suite" else f"min_pass_rate[{name}]")
    if not any(x.passed + x.failed for x in rates):  # evidence is required, whatever the floor
        none: dict[str, Any] = {"pass_rate": None, "scenarios": len(rates)}
        return GateResult(
            gate, "incomplete", f"no attempt was observed, so the floor of {floor:.1%} cannot be judged", floor, none
        )
    mean = sum(x.pass_rate for x in rates) / len(rates) if rates else 0.0
    best = sum((x.passed + x.incomplete) / x.runs for x in rates) / len(rates) if rates else 0.0
    observed = {"pass_rate": round(mean, 6), "scenarios": len(rates)}
    if mean >= floor - 1e-12:
        return GateResult(gate, "pass", f"pass rate {mean:.1%} reaches {floor:.1%}", floor, observed)
    if best < floor - 1e-12:
        return GateResult(gate, "fail", f"expected a pass rate of at least {floor:.1%}, observed {mean:.1%}", floor, observed)
    return GateResult(
        gate, "incomplete", f"pass rate {mean:.1%} is below {floor:.1%} only because evidence is missing", floor, observed
    )
