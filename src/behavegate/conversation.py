"""The data model of conversations (version 2): ``tool_results`` rules and
``uses_tool_result`` items (contract), and what a conversation returned (evidence).
Part of the data model (``model.py``), kept apart to keep modules small."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from behavegate.frozen import frozen


@frozen
class ToolField:
    """``response.uses_tool_result`` item: a field of a tool's scripted result (a dotted
    path, list indices as ``[0]``) whose value the final answer must contain."""

    tool: str
    field: str

    def as_dict(self) -> dict[str, Any]:
        return {"tool": self.tool, "field": self.field}


@frozen
class Reply:
    """One scripted result: ``content`` (any JSON), or a failed call with ``error``; either may
    hold ``{{arguments...}}`` / ``{{state...}}`` placeholders (tool_templates.py)."""

    content: Any = None
    error: str | None = None


@frozen
class ToolResultRule:
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


@frozen
class ScriptedResult:
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


@frozen
class Conversation:
    """A version-2 multi-turn attempt as it went: model requests made, the run's
    ``max_turns``, every scripted result returned, and whether the agent was still
    calling tools when ``max_turns`` ran out (a possible loop)."""

    turns: int
    max_turns: int
    results: tuple[ScriptedResult, ...] = ()
    possible_loop: bool = False

    def as_dict(self) -> dict[str, Any]:
        return {
            "turns": self.turns,
            "max_turns": self.max_turns,
            "possible_loop": self.possible_loop,
            "results": [result.as_dict() for result in self.results],
        }


def final_answer(finish_reason: str | None, response_complete: bool | None, response: str | None) -> bool:
    """Whether a last turn ended the conversation with an answer (finish_reason ``stop``,
    complete, some text): then the attempt is no possible loop, even if that turn also
    asked for tools (servers that answer ``stop`` with ``tool_calls``)."""
    return finish_reason == "stop" and response_complete is True and bool(response and response.strip())


@frozen
class Retry:
    """One request sent again (``--retries``): the turn it belongs to (from 1), why
    (``HTTP 429``, ``connection reset``) and how long behavegate waited first."""

    turn: int
    reason: str
    waited_ms: int

    def as_dict(self) -> dict[str, Any]:
        return {"turn": self.turn, "reason": self.reason, "waited_ms": self.waited_ms}
