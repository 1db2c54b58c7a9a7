"""Recorded conversations in version-2 observation files: read, and their attempt made
incomplete when they contradict themselves (more turns than max_turns; a possible loop
that did not use every turn or that ended with a final answer) or the contract (another
max_turns). The rules are evidence/consistency.py's; docs/observations.md states them."""

from __future__ import annotations

from typing import Any

from behavegate.contract import rules as f
from behavegate.conversation import BudgetStop, Conversation, ScriptedResult, Simulator, UserTurn
from behavegate.evidence.consistency import Consistency
from behavegate.magnitude import shown
from behavegate.model import Observation, ToolCall

CONVERSATION_KEYS = ("turns", "max_turns", "possible_loop", "results", "tool_budget_exceeded", "user_turns", "simulator")
SIMULATOR_KEYS = ("model", "replies", "ended")
RESULT_KEYS = ("call", "name", "content", "error")
STOP_KEYS = ("key", "limit", "observed", "turn")
USER_TURN_KEYS = (
    "simulated",
    "user",
    "calls",
    "response",
    "finish_reason",
    "response_complete",
    "refusal",
    "sources",
    "model_turns",
)


_unknown = f.unknown_record_keys  # skylos's words, as the observation file's


def same_max_turns(rules: Consistency, observation: Observation, expected: int | None, path: str) -> None:
    """A recorded conversation ran under the contract's max_turns, or it is not evidence
    for this contract (a loop at 99 turns says nothing about a limit of 3)."""
    conversation = observation.conversation
    if conversation is None or expected is None or conversation.max_turns == expected:
        return
    rules.breach(
        "conversation-max_turns-contract",
        f"{path}.conversation.max_turns must be the contract's max_turns for scenario {observation.scenario_id!r} "
        f"({expected}), not {conversation.max_turns}: record the observation again under this contract",
        f"{path}.conversation.max_turns",
    )


def text_or_none(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def conversation(
    c: f.Collector,
    value: Any,
    path: str,
    calls: tuple[ToolCall, ...] | None,
    answered: bool = False,
    rules: Consistency | None = None,
) -> Conversation | None:
    """A recorded conversation: model turns, the run's max_turns, the scripted results
    returned (each naming the call it answered) and the possible-loop flag. A record
    that contradicts itself breaks a consistency rule: more turns than max_turns, or a possible loop
    (max_turns ran out with no final answer) that did not use every turn or that ended
    with a final answer (``answered``: finish_reason stop, complete, some text).
    ``rules``: where a broken rule goes (the attempt's own list, in version 2)."""
    from behavegate.contract.v2_values import positive_int

    rules = rules or Consistency(c, attempt_level=False)
    raw = c.take(f.mapping, value, path, required=True)
    if raw is None:
        return None
    mark = c.mark()
    _unknown(c, raw, CONVERSATION_KEYS, path)
    turns = c.take(positive_int, raw.get("turns"), f"{path}.turns")
    max_turns = c.take(positive_int, raw.get("max_turns"), f"{path}.max_turns")
    loop = c.take(f.boolean, raw.get("possible_loop", False), f"{path}.possible_loop")
    results: list[ScriptedResult] = []
    for item_path, result in f.records(
        c, c.take(f.listing, raw.get("results"), f"{path}.results") or (), f"{path}.results", RESULT_KEYS
    ):
        call = c.take(f.integer, result.get("call"), f"{item_path}.call")
        name = c.take(f.tool_name, result.get("name"), f"{item_path}.name")
        indexed = calls is not None and call is not None and 0 <= call < len(calls) and calls[call].name == name
        if call is not None and name is not None and not indexed:
            rules.breach(
                "conversation-result-call", f"{item_path}.call must index a tool call named {name!r}", f"{item_path}.call"
            )
        if ("content" in result) == ("error" in result):
            c.add(f"{item_path} takes content or error", item_path)
        error = c.take(f.text, result["error"], f"{item_path}.error") if "error" in result else None
        if c.clean_since(mark) and indexed and call is not None and name is not None:
            results.append(ScriptedResult(call, name, result.get("content"), error))
    if turns is not None and max_turns is not None and turns > max_turns:
        rules.breach(
            "conversation-turns", f"{path}.turns cannot exceed max_turns ({max_turns}), got {shown(turns)}", f"{path}.turns"
        )
    elif loop and turns is not None and max_turns is not None and turns < max_turns:
        rules.breach(
            "conversation-loop-turns",
            f"{path}.possible_loop cannot be true with {turns} of max_turns {max_turns} "
            "used: a possible loop ran out of max_turns",
            f"{path}.possible_loop",
        )
    if loop and answered:
        rules.breach(
            "conversation-loop-answer",
            f"{path}.possible_loop cannot be true when the attempt ended with a final "
            "answer (finish_reason 'stop', a complete response): a possible loop has none",
            f"{path}.possible_loop",
        )
    stop = _stop(c, raw["tool_budget_exceeded"], f"{path}.tool_budget_exceeded") if "tool_budget_exceeded" in raw else None
    went = _user_turns(c, raw["user_turns"], f"{path}.user_turns", calls, rules) if "user_turns" in raw else ()
    simulator = _simulator(c, raw["simulator"], f"{path}.simulator") if "simulator" in raw else None
    if not c.clean_since(mark) or turns is None or max_turns is None or loop is None:
        return None
    return Conversation(turns, max_turns, tuple(results), loop, stop, went, simulator)


def _simulator(c: f.Collector, value: Any, path: str) -> Simulator | None:
    """The simulated user's record: its model, its raw replies, how it ended."""
    raw = c.take(f.mapping, value, path, required=True)
    if raw is None:
        return None
    mark = c.mark()
    _unknown(c, raw, SIMULATOR_KEYS, path)
    model = c.take(f.text, raw.get("model", ""), f"{path}.model") if raw.get("model", "") != "" else ""
    replies = c.take(f.listing, raw.get("replies"), f"{path}.replies") or []
    if not all(isinstance(reply, str) for reply in replies):
        c.add(f"{path}.replies must be texts", f"{path}.replies")
    ended = c.take(f.text, raw.get("ended"), f"{path}.ended")
    if model is None or ended is None or not c.clean_since(mark):
        return None
    return Simulator(model, tuple(replies), ended)


def _stop(c: f.Collector, value: Any, path: str) -> BudgetStop | None:
    """A recorded tool-call budget stop: which budget, its limit, the calls observed, the turn."""
    from behavegate.contract.v2_values import positive_int

    raw = c.take(f.mapping, value, path, required=True)
    if raw is None:
        return None
    mark = c.mark()
    _unknown(c, raw, STOP_KEYS, path)
    key = c.take(f.text, raw.get("key"), f"{path}.key")
    limit = c.take(f.integer, raw.get("limit"), f"{path}.limit")
    observed = c.take(positive_int, raw.get("observed"), f"{path}.observed")
    turn = c.take(positive_int, raw.get("turn"), f"{path}.turn")
    if None in (key, limit, observed, turn) or not c.clean_since(mark):
        return None
    assert key is not None and limit is not None and observed is not None and turn is not None
    if observed <= limit:
        c.add(f"{path}.observed must exceed limit: a budget stops only when exceeded", f"{path}.observed")
        return None
    return BudgetStop(key, limit, observed, turn)


def _user_turns(
    c: f.Collector, value: Any, path: str, calls: tuple[ToolCall, ...] | None, rules: Consistency
) -> tuple[UserTurn, ...]:
    """Recorded user turns: each holds the calls that follow the previous turn's (``calls: [first, end]``)."""
    from behavegate.contract.v2_values import positive_int

    found: list[UserTurn] = []
    end = 0
    for item_path, item in f.records(c, c.take(f.listing, value, path) or (), path, USER_TURN_KEYS):
        mark = c.mark()
        user = c.take(f.text, item.get("user"), f"{item_path}.user")
        span = c.take(f.listing, item.get("calls"), f"{item_path}.calls") or []
        bounds = [c.take(f.integer, bound, f"{item_path}.calls") for bound in span]
        model_turns = c.take(positive_int, item.get("model_turns", 1), f"{item_path}.model_turns")
        simulated = item.get("simulated", False)
        if not isinstance(simulated, bool):
            c.add(f"{item_path}.simulated must be a boolean", f"{item_path}.simulated")
        complete = item.get("response_complete")
        refusal = item.get("refusal")
        sources = item.get("sources")
        if len(bounds) != 2 or None in bounds:
            c.add(f"{item_path}.calls must be [first, end]: the turn's calls in the attempt's tool_calls", f"{item_path}.calls")
            continue
        first, last = bounds[0], bounds[1]
        assert first is not None and last is not None
        count = len(calls) if calls is not None else last
        if first != end or last < first or last > count:
            rules.breach(
                "conversation-user-turn-calls",
                f"{item_path}.calls must follow the previous turn's and stay within tool_calls",
                f"{item_path}.calls",
            )
        end = last
        if not isinstance(sources, list | type(None)) or not all(isinstance(s, str) for s in sources or ()):
            c.add(f"{item_path}.sources must be a list of texts or null", f"{item_path}.sources")
        for key, flag in (("response_complete", complete), ("refusal", refusal)):
            if flag is not None and not isinstance(flag, bool):
                c.add(f"{item_path}.{key} must be a boolean or null", f"{item_path}.{key}")
        if user is None or model_turns is None or not c.clean_since(mark):
            continue
        found.append(
            UserTurn(
                user,
                first,
                last,
                text_or_none(item.get("response")),
                text_or_none(item.get("finish_reason")),
                complete,
                refusal,
                None if sources is None else tuple(sources),
                model_turns,
                simulated is True,
            )
        )
    return tuple(found)
