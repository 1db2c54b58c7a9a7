"""One version-2 attempt as a conversation: send the request, read the turn, send scripted
tool results back while the agent asks for them (never executing anything), after each final
answer the scenario's next scripted user message, up to ``max_turns`` requests, within the
attempt's byte and token budgets and its tool-call budgets (``tools.max_calls``: exceeded, the
conversation stops); then the attempt's evidence from every turn (its calls, their results
and errors, usage summed, steps, each user turn's answer and calls)."""

from __future__ import annotations

import time
from typing import Protocol

from behavegate.conversation import BudgetStop, Conversation, ScriptedResult, Simulator, UserTurn, final_answer
from behavegate.cost import attempt_tokens
from behavegate.evidence import wire
from behavegate.evidence.budgets import exceeded, plus_split
from behavegate.evidence.chat import EndpointError, encode_message
from behavegate.evidence.retry import retrying
from behavegate.evidence.scripted import Unanswerable, scripts_results, start, unmatched_reason
from behavegate.evidence.scripted import answer as scripted_answer
from behavegate.evidence.settings import LiveSettings, Send
from behavegate.evidence.simulated_user import DONE
from behavegate.evidence.transport import ResponseTooLarge
from behavegate.frozen import Frozen, replace
from behavegate.limits import MAX_RESPONSE_BYTES
from behavegate.model import AgentTarget, Contract, Observation, Retry, Scenario, ToolCall


class TurnMarks(Protocol):
    """Where tool calls land apart from the answers (agent.mcp: evidence/mcp_server.py's AttemptTools)."""

    def mark(self, user_turn: int | None) -> None:
        """The user turn now in flight (before its requests are sent); None once its answer is in."""

    def halted(self) -> bool:
        """A call budget was exceeded there: no further user turn is sent."""
        ...


async def conversation(
    send: Send,
    contract: Contract,
    scenario: Scenario,
    settings: LiveSettings,
    retried: list[Retry],
    mcp_url: str | None = None,
    marks: TurnMarks | None = None,
) -> Observation:
    """A version-2 attempt; the requests sent again (``--retries``) are appended to ``retried``;
    ``mcp_url``: the attempt's own MCP URL (agent.mcp), placed in the request; ``marks`` is told
    which scripted user turn is in flight (before its requests are sent) and when its answer is in."""
    agent = contract.agent
    payload, conversation = wire.first_request(agent, scenario, settings.max_tokens, mcp_url)
    # The conversation is kept encoded, once: the assistant turns it re-sends are
    # what grows, and nothing else holds a copy of them.
    history = [encode_message(message) for message in conversation]
    budget = settings.budget
    earlier: list[ToolCall] = []  # every call of the requests before the last
    returned: list[ScriptedResult] = []  # scripted results, in call order
    ran_before: list[ScriptedResult] = []  # results of calls an agent ran itself, in user turns before the last
    went: list[UserTurn] = []  # the user turns that ended (scripted user turns only)
    turns = sent = received = tokens = 0
    usage_complete = True
    split: tuple[int | None, int | None] = (0, 0)  # input and output tokens, summed like total_tokens
    scripted = scripts_results(scenario)
    tools_state = start(scenario)  # result sequences and the key-value store, call by call
    user = 0  # the user turn being answered (scripted user turns)
    user_start = (0, 0)  # calls and model requests before it
    stop: BudgetStop | None = None
    said = (scenario.turns[0].user, False) if scenario.turns else ("", False)  # the current user message, simulated or not
    simulated, replies, ended = 0, [], "max_turns"  # the simulated user: messages it wrote, its raw replies, how it ended
    while True:
        turns += 1
        # Budgets are checked before each request: the one that would exceed the
        # bytes budget is never sent, and reported tokens past it stop the next.
        if tokens > budget.tokens:
            return exceeded(scenario, "tokens", tokens, budget.tokens, turns)
        pieces = wire.encode(agent, payload, history)
        size = sum(len(piece) for piece in pieces)
        if sent + size > budget.request_bytes:
            return exceeded(scenario, "request bytes", sent + size, budget.request_bytes, turns)
        sent += size
        room = budget.response_bytes - received
        deadline = turn_deadline(agent.timeout_seconds, settings)
        if marks is not None and scenario.turns:
            marks.mark(user)
        try:
            ask = retrying(send, settings.retry, turns, retried)
            turn = await _turn(ask, pieces, deadline, min(MAX_RESPONSE_BYTES, room), scenario.id, agent, turns)
        except ResponseTooLarge as error:
            if room >= MAX_RESPONSE_BYTES:
                return Observation(scenario_id=scenario.id, error=str(error))
            return exceeded(scenario, "response bytes", received + error.observed, budget.response_bytes, turns)
        except EndpointError as error:
            return Observation(scenario_id=scenario.id, error=str(error))
        observation = turn.observation
        received += turn.received
        reported = attempt_tokens(observation)  # total, else input + output (cost.py: one meaning)
        if reported is None:
            usage_complete = False
        else:
            tokens += reported
        split = plus_split(split, observation)
        calls = observation.tool_calls or ()
        # A call budget stops the conversation as soon as the calls exceed it: nothing is answered
        # and nothing more is sent (the calls made are the evidence that it was exceeded).
        if scripted or scenario.turns:  # a conversation that would go on (else the one request is all there is)
            stop = tool_budget_stop(scenario, user, len(earlier) + len(calls), len(earlier) + len(calls) - user_start[0], turns)
            if stop is not None:
                break
        # Only calls the agent asks behavegate to answer continue the conversation (an agent.http
        # answer may also report calls it ran itself: those need no result).
        if scripted and calls and turn.call_ids and turns < scenario.max_turns:
            history.extend(turn.assistant)
            for index, call_id in enumerate(turn.call_ids):
                answered = scripted_answer(scenario, calls[index], len(earlier) + index, tools_state)
                if answered is None:  # a rule list with no rule (and no default) for this call
                    return Observation(scenario_id=scenario.id, error=unmatched_reason(calls[index], turns))
                if isinstance(answered, Unanswerable):
                    return Observation(scenario_id=scenario.id, error=f"{answered.reason} at turn {turns}")
                tools_state = answered.state
                answer_id = call_id or f"call_{turns}_{index}"
                history.append(encode_message(wire.tool_message(agent, answer_id, answered.content)))
                returned.append(answered.record)
            earlier.extend(calls)
            continue
        if not scenario.turns:
            break
        # The user turn ended: recorded; the next user message follows a final answer, while requests remain.
        if marks is not None:  # until the next user message is sent, a tool call belongs to no turn
            marks.mark(None)
        went.append(_user_turn(said, observation, user_start, len(earlier), turns))
        final = final_answer(observation.finish_reason, observation.response_complete, observation.response)
        if not final or turns >= scenario.max_turns or (marks is not None and marks.halted()):
            break
        if user + 1 < len(scenario.turns):
            said = (scenario.turns[user + 1].user, False)
        elif scenario.simulated_user is None:
            break
        elif simulated >= scenario.simulated_user.max_turns:
            ended = "max_turns"
            break
        elif settings.simulate is None:
            ended = "not asked: no simulated-user endpoint (the judge's endpoint is asked; give --judge-endpoint)"
            break
        else:
            reply, problem = await settings.simulate(scenario, tuple(went))
            replies.append(reply or "")
            if problem is not None or reply is None:
                ended = problem or "the simulated user gave no reply"
                break
            if reply.strip() == DONE:
                ended = "done"
                break
            simulated += 1
            said = (reply.strip(), True)
        ran_before.extend(_ran_results(observation, len(earlier)))
        earlier.extend(calls)
        history.extend(turn.assistant)
        user += 1
        history.append(encode_message({"role": "user", "content": said[0]}))
        payload = wire.next_user_request(agent, scenario, said[0], payload, settings.max_tokens, mcp_url)
        user_start = (len(earlier), turns)
    if stop is not None and scenario.turns:
        went.append(_user_turn(said, observation, user_start, len(earlier), turns))
    # Usage is the sum over every request; one turn without it leaves it unobserved.
    observation = replace(
        observation, total_tokens=tokens if usage_complete else None, input_tokens=split[0], output_tokens=split[1]
    )
    # Results of calls the agent ran itself (agent.http executed_calls), indexed in the whole attempt.
    ran = _ran_results(observation, len(earlier))
    if scripted or scenario.expect.max_model_turns is not None or ran or scenario.turns:
        # Still calling tools when max_turns ran out: the agent may be looping.
        final = final_answer(observation.finish_reason, observation.response_complete, observation.response)
        looping = stop is None and scripted and bool(turn.call_ids) and turns >= scenario.max_turns and not final
        results = tuple(sorted((*returned, *ran_before, *ran), key=lambda result: result.call))
        model = settings.judge.model if settings.judge is not None else ""
        simulation = None if scenario.simulated_user is None else Simulator(model, tuple(replies), ended)
        record = Conversation(turns, scenario.max_turns, results, looping, stop, tuple(went), simulation)
        observation = replace(observation, conversation=record)
    steps = None if any(call.executed for call in observation.tool_calls or ()) else turns  # its own steps are unseen
    if not earlier:
        return replace(observation, steps=steps)
    # A last turn that leaves its tool calls unobserved keeps the earlier turns' calls
    # (the scripted results point at them); its tool evidence stays incomplete.
    all_calls = (*earlier, *(observation.tool_calls or ()))
    # Each scripted result belongs to one call: when they cover the calls known (a last turn with
    # none, or whose calls are not known), their errors are those calls' outcomes.
    answered_all = len(returned) == len(all_calls)
    return replace(
        observation,
        tool_calls=all_calls,
        steps=None if steps is None else turns + len(returned),
        tool_errors=tuple(r.error for r in returned) if answered_all else None,
    )


def tool_budget_stop(scenario: Scenario, user: int, calls: int, in_turn: int, turn: int) -> BudgetStop | None:
    """The call budget the calls so far exceed, if any: the scenario's ``tools.max_calls`` (the
    whole conversation), else the current user turn's own (``turns[i].expect.tools.max_calls``)."""
    limit = scenario.expect.max_calls
    if limit is not None and calls > limit:
        return BudgetStop("tools.max_calls", limit, calls, turn)
    own = scenario.turns[user].expect if user < len(scenario.turns) else None
    if own is not None and own.max_calls is not None and in_turn > own.max_calls:
        return BudgetStop(f"turns[{user}].tools.max_calls", own.max_calls, in_turn, turn)
    return None


def _user_turn(said: tuple[str, bool], observation: Observation, start: tuple[int, int], before: int, turns: int) -> UserTurn:
    """The user turn (its message, and whether the simulated user wrote it) that ended with ``observation``."""
    end = before + len(observation.tool_calls or ())
    return UserTurn(
        said[0],
        start[0],
        end,
        observation.response,
        observation.finish_reason,
        observation.response_complete,
        observation.refusal,
        observation.sources,
        turns - start[1],
        said[1],
    )


def _ran_results(observation: Observation, before: int) -> tuple[ScriptedResult, ...]:
    """Results of the calls an answer reports the agent ran itself, indexed in the whole attempt."""
    ran = observation.conversation.results if observation.conversation is not None else ()
    return tuple(replace(result, call=result.call + before) for result in ran)


def turn_deadline(timeout_seconds: float, settings: LiveSettings) -> float:
    now = time.monotonic()
    return now + max(min(timeout_seconds, settings.max_seconds - (now - settings.started)), 0.001)


class Turn(Frozen):
    observation: Observation
    received: int  # response bytes read
    assistant: tuple[bytes, ...]  # the assistant message (Responses API: output items) to send back, encoded
    call_ids: tuple[str | None, ...]  # the id of each tool call, in order


async def _turn(
    send: Send, pieces: tuple[bytes, ...], deadline: float, limit: int, scenario_id: str, agent: AgentTarget, turn: int
) -> Turn:
    """One request of a conversation. The raw response (bytes, text, parsed
    JSON) lives only in here: what outlives the turn is the observation and the
    encoded assistant message."""
    raw, received = await send(pieces, deadline, limit)
    observation, assistant, ids = wire.read_turn(agent, raw, scenario_id, turn)
    return Turn(observation, received, assistant, ids)
