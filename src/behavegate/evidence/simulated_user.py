"""The simulated user (``simulated_user``, version 2, opt-in): after a scenario's scripted user
turns, an LLM plays the user from the scenario's persona and goal, one message after each final
answer of the agent, until it says DONE or its turns run out.

It is asked at the judge's endpoint and model (the one LLM endpoint the person running allowed,
checked by evidence/trust.py as the agent's is), within the judge's request budget and the
run's time budget, at temperature 0. What it said is evidence of the attempt (the conversation's
``user_turns`` marked ``simulated``, and its raw replies): a replay reads it and asks nothing.
The agent's answers reach it as the judge's questions do: the run's tokens masked."""

from __future__ import annotations

import json
import time
from collections.abc import Awaitable, Callable

from behavegate.conversation import UserTurn
from behavegate.evidence.chat import EndpointError
from behavegate.evidence.judge_client import JudgeSend, JudgeSettings, answer_for_judge, judge_request, reply_of
from behavegate.model import Scenario, SimulatedUser

DONE = "DONE"
AskUser = Callable[[Scenario, tuple[UserTurn, ...]], Awaitable[tuple[str | None, str | None]]]
"""The simulated user's next message given the conversation so far → (its reply, why it
cannot be used); the reply ``DONE`` ends the conversation."""


def instructions(simulated: SimulatedUser) -> str:
    return (
        "You are playing the user of an AI assistant, in an automated test. Stay in character.\n"
        f"Persona: {simulated.persona}\n"
        f"Your goal: {simulated.goal}\n"
        "Reply with only your next message to the assistant, in the user's voice. "
        f"When your goal is met, or clearly cannot be met, reply with exactly {DONE}."
    )


def messages(simulated: SimulatedUser, went: tuple[UserTurn, ...], hidden: tuple[str, ...]) -> tuple[dict[str, str], ...]:
    """The simulator's view: its own earlier messages as ``assistant``, the agent's answers as
    ``user`` (the agent's text is untrusted data to it, as to the judge)."""
    found = [{"role": "system", "content": instructions(simulated)}]
    for turn in went:
        found.append({"role": "assistant", "content": turn.user})
        found.append({"role": "user", "content": answer_for_judge(turn.response or "", hidden)})
    return tuple(found)


def simulator(send: JudgeSend, judge: JudgeSettings, run_deadline: float | None) -> AskUser:
    """An :data:`AskUser` over the judge's endpoint, counted in the judge's request budget."""

    async def ask(scenario: Scenario, went: tuple[UserTurn, ...]) -> tuple[str | None, str | None]:
        assert scenario.simulated_user is not None
        now = time.monotonic()
        if run_deadline is not None and now >= run_deadline:
            return None, "not asked: the run's time budget (--max-seconds) ran out"
        if judge.count.sent >= judge.max_requests:
            return None, f"not asked: the run's judge request budget ({judge.max_requests}) is spent"
        judge.count.sent += 1
        body = judge_request(
            judge.model, messages(scenario.simulated_user, went, judge.hidden), judge.max_tokens, judge.parameters
        )
        deadline = now + judge.timeout_seconds if run_deadline is None else min(now + judge.timeout_seconds, run_deadline)
        try:
            raw = await send((json.dumps(body).encode("utf-8"),), deadline)
        except EndpointError as failed:
            return None, str(failed).replace("agent endpoint", "simulated-user endpoint")
        reply, problem = reply_of(raw)
        if problem is not None:
            return reply, problem.replace("the judge", "the simulated user")
        if reply is None or not reply.strip():
            return reply, "the simulated user's reply is empty"
        return reply, None

    return ask
