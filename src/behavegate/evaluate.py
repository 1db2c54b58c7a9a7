"""Judging observations against a contract: evidence gates, then every assertion."""

from __future__ import annotations

from collections.abc import Mapping

from .assertions import REGISTRY, Evidence
from .matching import assign_calls
from .model import AgentTarget, Contract, Evaluation, Observation, Scenario, ScenarioResult, combine


def observation_gap(observation: Observation | None) -> str | None:
    if observation is None:
        return "scenario observation is missing"
    if observation.error:
        return f"scenario observation failed: {observation.error}"
    return None


def response_gap(observation: Observation | None) -> str | None:
    """Why final-response evidence (text, refusal, sources) cannot be judged."""
    gap = observation_gap(observation)
    if gap is not None or observation is None:
        return gap
    reason = observation.finish_reason
    if reason is not None and reason != "stop":
        return f"final response is incomplete (finish_reason={reason!r})"
    if observation.response_complete is False:
        return f"final response is incomplete (finish_reason={reason or 'unknown'!r})"
    if observation.response_complete is None:
        return "final response completion evidence was not observed"
    return None


def tool_gap(observation: Observation | None) -> str | None:
    """Why tool-call evidence cannot be judged."""
    gap = observation_gap(observation)
    if gap is not None or observation is None:
        return gap
    reason = observation.finish_reason
    if reason is not None and reason not in {"stop", "tool_calls"}:
        return f"tool-call evidence is incomplete (finish_reason={reason!r})"
    if observation.tool_calls_complete is False:
        return f"tool-call evidence is incomplete (finish_reason={reason or 'unknown'!r})"
    if observation.tool_calls_complete is None:
        return "tool-call completion evidence was not observed"
    return None


def evidence_for(scenario: Scenario, observation: Observation | None, agent: AgentTarget | None = None) -> Evidence:
    tools = tool_gap(observation)
    assignment: Mapping[int, int] = {}
    if tools is None and observation is not None and observation.tool_calls is not None:
        assignment = assign_calls(scenario.expect.required, observation.tool_calls)
    return Evidence(observation, response_gap(observation), tools, assignment, scenario, agent)


def evaluate_scenario(scenario: Scenario, observation: Observation | None, agent: AgentTarget | None = None) -> ScenarioResult:
    evidence = evidence_for(scenario, observation, agent)
    verdicts = tuple(
        entry.judge(assertion, spec, evidence) for entry in REGISTRY for assertion, spec in entry.requested(scenario.expect)
    )
    return ScenarioResult(scenario, combine(v.status for v in verdicts), verdicts, observation)


def evaluate(contract: Contract, observations: Mapping[str, Observation]) -> Evaluation:
    results = tuple(evaluate_scenario(s, observations.get(s.id), contract.agent) for s in contract.scenarios)
    return Evaluation(combine(r.status for r in results), results)
