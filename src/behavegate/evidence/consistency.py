"""Observation-file consistency rules: fields of one attempt that must agree.

A version-1 file breaking one is refused whole with skylos's message (exit 2).
A version-2 file is many attempts: one attempt's contradiction makes that attempt
incomplete, its reason naming the rule and the entry, and the others are judged.
docs/observations.md states the rules as a table; a test keeps the two equal.
"""

from __future__ import annotations

from behavegate.contract import rules as f

# name -> what must hold (docs/observations.md's table has the same names, in this order)
RULES: dict[str, str] = {
    "response_complete-finish_reason": 'with a finish_reason, response_complete is given, and true only for "stop"',
    "tool_calls_complete-finish_reason": 'with a finish_reason, tool_calls_complete is given, and true only for "stop" or "tool_calls"',
    "tool_errors-tool_calls": "tool_errors has one entry per tool call",
    "conversation-turns": "conversation.turns is at most conversation.max_turns",
    "conversation-loop-turns": "a possible loop used every turn (turns equals max_turns)",
    "conversation-loop-answer": "a possible loop has no final answer",
    "conversation-result-call": "each conversation result indexes a tool call of its name",
    "conversation-user-turn-calls": "each recorded user turn's calls follow the previous turn's, within tool_calls",
    "conversation-max_turns-contract": "conversation.max_turns is the contract scenario's max_turns",
}

INCONSISTENT = "observation_inconsistent"


class Consistency:
    """Where one entry's broken rules go: the file's problems (version 1, skylos:
    the run is refused), or this attempt's own list (version 2)."""

    def __init__(self, c: f.Collector, attempt_level: bool) -> None:
        self._c = c
        self.attempt_level = attempt_level
        self.broken: list[str] = []

    def breach(self, rule: str, text: str, path: str) -> None:
        if rule not in RULES:
            raise KeyError(rule)  # every rule is in the table, so in the docs
        if self.attempt_level:
            self.broken.append(f"{text} (rule {rule})")
        else:
            self._c.add(text, path)

    def reason(self, attempt: int) -> str | None:
        """The attempt's incomplete reason, or None when every rule holds."""
        if not self.broken:
            return None
        return f"{INCONSISTENT}: attempt {attempt}, {'; '.join(self.broken)}"
