"""What the checks of a conversation see (version 2): the whole conversation (every call of
every user turn, the last answer) and each scripted user turn alone (its answer, its calls and
their results), both read from the attempt's recorded conversation. Pure functions.

Unknown is never a pass: a conversation stopped by a tool-call budget, or one that ended before
its last scripted user turn was sent, cannot be judged as a whole (its checks are incomplete
unless the calls made already decide them, e.g. a call budget exceeded), and a user turn never
sent, or evidence that did not record the conversation turn by turn, leaves that turn's checks
incomplete.
"""

from __future__ import annotations

from behavegate.conversation import Conversation
from behavegate.frozen import replace
from behavegate.model import TOOL_SOURCE_MCP, Observation, Scenario

NOT_RECORDED = (
    "the conversation was not recorded turn by turn (scripted user turns are recorded by a live run "
    "and by the observations it saves)"
)


def _unfinished(scenario: Scenario, conversation: Conversation) -> str | None:
    """Why a scripted user turn was never sent, or the record is not this scenario's; None: all were."""
    went = conversation.user_turns
    if not went:
        return NOT_RECORDED
    scripted = len(scenario.turns)
    most = scripted + (scenario.simulated_user.max_turns if scenario.simulated_user is not None else 0)
    forged = any(t.simulated != (i >= scripted) for i, t in enumerate(went))
    if forged or len(went) > most or any(t.user != s.user for t, s in zip(went, scenario.turns, strict=False)):
        return "the recorded user turns are not this scenario's turns: record the observation again under this contract"
    if len(went) >= len(scenario.turns):
        simulator = conversation.simulator
        if scenario.simulated_user is not None and (simulator is None or simulator.failed()):
            why = "no simulator record" if simulator is None else simulator.ended
            return f"the simulated user could not go on after user turn {len(went) - 1}: {why}"
        return None
    last = went[-1]
    if conversation.tool_budget_exceeded is not None:
        why = conversation.tool_budget_exceeded.reason()
    elif conversation.possible_loop:
        why = f"the agent was still calling tools when max_turns ({conversation.max_turns}) ran out"
    elif conversation.turns >= conversation.max_turns:
        why = f"max_turns ({conversation.max_turns}) ran out; raise max_turns"
    else:
        why = f"user turn {len(went) - 1} ended without a final answer (finish_reason {last.finish_reason!r})"
    return f"user turn {len(went)} of {len(scenario.turns)} (turns[{len(went)}]) was never sent: {why}"


def whole(scenario: Scenario, observation: Observation | None) -> Observation | None:
    """The observation as the scenario's own checks see it: with the reason the conversation
    cannot be judged as a whole, when it stopped early (the calls made remain a lower bound)."""
    if observation is None or observation.error is not None:
        return observation
    conversation = observation.conversation
    reason = None
    if scenario.turns:
        reason = NOT_RECORDED if conversation is None else _unfinished(scenario, conversation)
    if reason is None and conversation is not None and conversation.tool_budget_exceeded is not None:
        reason = conversation.tool_budget_exceeded.reason()
    if reason is None:
        return observation
    return replace(
        observation,
        tool_calls_complete=False,
        tool_gap=observation.tool_gap or reason,
        response_gap=observation.response_gap or reason,
    )


def turn(scenario: Scenario, observation: Observation | None, index: int) -> Observation | None:
    """The observation of user turn ``index`` alone: its answer, its calls (and their errors and
    scripted results, indexed within the turn) and its model requests."""
    if observation is None or observation.error is not None:
        return observation
    conversation = observation.conversation
    went = conversation.user_turns if conversation is not None else ()
    problem = NOT_RECORDED if conversation is None else _unfinished(scenario, conversation)
    if conversation is None or index >= len(went) or (problem is not None and not problem.startswith("user turn")):
        return Observation(scenario_id=observation.scenario_id, error=problem or NOT_RECORDED)
    record = went[index]
    first, end = record.first_call, record.end_call
    last = index == len(went) - 1
    results = tuple(replace(r, call=r.call - first) for r in conversation.results if first <= r.call < end)
    calls = observation.tool_calls[first:end] if observation.tool_calls is not None else None
    # Earlier turns ended with a final answer (their calls were all answered); the last keeps the attempt's gaps.
    # Calls seen on the MCP server are tied to a turn by when they arrived: a gap there (a refused request,
    # a call between turns) may belong to any turn, so every turn keeps it.
    gaps = last or observation.tool_source == TOOL_SOURCE_MCP
    seen = Observation(
        scenario_id=observation.scenario_id,
        response=record.response,
        response_complete=record.response_complete,
        finish_reason=record.finish_reason,
        tool_calls=calls,
        tool_calls_complete=observation.tool_calls_complete if gaps else calls is not None,
        refusal=record.refusal,
        sources=record.sources,
        tool_errors=observation.tool_errors[first:end] if observation.tool_errors is not None else None,
        tool_calls_absent=observation.tool_calls_absent if last else False,
        tool_gap=observation.tool_gap if gaps else None,
        tool_source=observation.tool_source,
        conversation=Conversation(record.model_turns, conversation.max_turns, results, conversation.possible_loop and last),
    )
    stop = conversation.tool_budget_exceeded
    if last and stop is not None:
        return replace(seen, tool_calls_complete=False, tool_gap=stop.reason(), response_gap=stop.reason())
    return seen
