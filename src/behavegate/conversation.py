"""The data model of conversations (version 2): ``tool_results`` rules and
``uses_tool_result`` items (contract), and what a conversation returned (evidence).
Part of the data model (``model.py``), kept apart to keep modules small."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from behavegate.frozen import Frozen


class ToolField(Frozen):
    """``response.uses_tool_result`` item: a field of a tool's scripted result (a dotted
    path, list indices as ``[0]``) whose value the final answer must contain."""

    tool: str
    field: str

    def as_dict(self) -> dict[str, Any]:
        return {"tool": self.tool, "field": self.field}


class Reply(Frozen):
    """One scripted result: ``content`` (any JSON), or a failed call with ``error``; either may
    hold ``{{arguments...}}`` / ``{{state...}}`` placeholders (tool_templates.py)."""

    content: Any = None
    error: str | None = None


class ToolResultRule(Frozen):
    """One ``tool_results`` rule (the list form): calls of ``name`` whose arguments
    contain ``arguments`` (a JSON subset) get ``content``, or fail with ``error``.
    ``name`` None: the default, used when no other rule matches.

    ``results``: the replies to the rule's first, second, ... call, then ``content``/``error``
    when given (``then``), else the last reply again. ``set``: the state keys the rule writes
    after answering (values may hold placeholders)."""

    name: str | None
    arguments: Mapping[str, Any] | None = None
    content: Any = None
    error: str | None = None
    results: tuple[Reply, ...] = ()
    then: bool = True  # whether content/error answer the calls after ``results``
    set: Mapping[str, Any] | None = None

    def reply(self, uses: int) -> Reply:
        """The reply to this rule's call number ``uses`` (from 0)."""
        if uses < len(self.results):
            return self.results[uses]
        if self.then or not self.results:
            return Reply(self.content, self.error)
        return self.results[-1]


class ScriptedResult(Frozen):
    """What behavegate sent back for one tool call: ``call`` indexes the attempt's
    ``tool_calls``; ``content`` is the scripted value (as the contract wrote it),
    ``error`` the failure text when the result is a failed call."""

    call: int
    name: str
    content: Any = None
    error: str | None = None

    def as_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {"call": self.call, "name": self.name}
        if self.error is not None:
            data["error"] = self.error
        else:
            data["content"] = self.content
        return data


class BudgetStop(Frozen):
    """A tool-call budget that stopped the conversation: ``key`` names it (``tools.max_calls``,
    or ``turns[1].tools.max_calls`` for one user turn's), ``observed`` calls were made against
    ``limit``, at model request ``turn``; no request was sent after it."""

    key: str
    limit: int
    observed: int
    turn: int

    def as_dict(self) -> dict[str, Any]:
        return {"key": self.key, "limit": self.limit, "observed": self.observed, "turn": self.turn}

    def reason(self) -> str:
        return (
            f"conversation stopped: expected at most {self.limit} tool calls ({self.key}), observed {self.observed} "
            f"at turn {self.turn}; no further request was sent"
        )


class UserTurn(Frozen):
    """One user turn of a conversation with scripted user turns, as it went: the user message,
    the attempt's tool calls it holds (``calls[first_call:end_call]``), the answer that ended it
    (text, finish reason, completeness, refusal, sources) and its model requests."""

    user: str
    first_call: int
    end_call: int
    response: str | None = None
    finish_reason: str | None = None
    response_complete: bool | None = None
    refusal: bool | None = None
    sources: tuple[str, ...] | None = None
    model_turns: int = 1
    simulated: bool = False  # the message was written by the simulated user (an LLM), not the contract

    def as_dict(self) -> dict[str, Any]:
        simulated = {"simulated": True} if self.simulated else {}  # only when so: other records keep their shape
        return simulated | {
            "user": self.user,
            "calls": [self.first_call, self.end_call],
            "response": self.response,
            "finish_reason": self.finish_reason,
            "response_complete": self.response_complete,
            "refusal": self.refusal,
            "sources": None if self.sources is None else list(self.sources),
            "model_turns": self.model_turns,
        }


class Simulator(Frozen):
    """What the simulated user's LLM was asked and said: its model, the requests made and the
    raw replies (recorded as a judge's are: a replay reuses them and asks nothing), and how
    the simulation ended: ``done`` (it said DONE), ``max_turns``, or why it could not go on."""

    model: str
    replies: tuple[str, ...] = ()
    ended: str = "done"

    def as_dict(self) -> dict[str, Any]:
        return {"model": self.model, "replies": list(self.replies), "ended": self.ended}

    def failed(self) -> bool:
        return self.ended not in ("done", "max_turns")


class Conversation(Frozen):
    """A version-2 multi-turn attempt as it went: model requests made, the run's
    ``max_turns``, every scripted result returned, and whether the agent was still
    calling tools when ``max_turns`` ran out (a possible loop); a tool-call budget that
    stopped it, and its user turns when the scenario scripts them."""

    turns: int
    max_turns: int
    results: tuple[ScriptedResult, ...] = ()
    possible_loop: bool = False
    tool_budget_exceeded: BudgetStop | None = None
    user_turns: tuple[UserTurn, ...] = ()
    simulator: Simulator | None = None

    def as_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "turns": self.turns,
            "max_turns": self.max_turns,
            "possible_loop": self.possible_loop,
            "results": [result.as_dict() for result in self.results],
        }
        # Only when there is one: other reports keep their shape.
        if self.tool_budget_exceeded is not None:
            data["tool_budget_exceeded"] = self.tool_budget_exceeded.as_dict()
        if self.user_turns:
            data["user_turns"] = [turn.as_dict() for turn in self.user_turns]
        if self.simulator is not None:
            data["simulator"] = self.simulator.as_dict()
        return data


def final_answer(finish_reason: str | None, response_complete: bool | None, response: str | None) -> bool:
    """Whether a last turn ended the conversation with an answer (finish_reason ``stop``,
    complete, some text): then the attempt is no possible loop, even if that turn also
    asked for tools (servers that answer ``stop`` with ``tool_calls``)."""
    return finish_reason == "stop" and response_complete is True and bool(response and response.strip())


class Retry(Frozen):
    """One request sent again (``--retries``): the turn it belongs to (from 1), why
    (``HTTP 429``, ``connection reset``) and how long behavegate waited first."""

    turn: int
    reason: str
    waited_ms: int

    def as_dict(self) -> dict[str, Any]:
        return {"turn": self.turn, "reason": self.reason, "waited_ms": self.waited_ms}
