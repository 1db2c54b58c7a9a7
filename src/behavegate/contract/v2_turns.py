"""Version-2 scripted user turns: ``turns: [{user, expect?}, ...]`` of a scenario (``turns[0]``
is the first message; each next one is sent after the agent's final answer), each turn's
expectations (what cannot be judged of one turn alone is refused), and the scenario settings
turns need. Mixed into the contract reader; problems go to the collector with path and line."""

from __future__ import annotations

from typing import Any

from behavegate.contract import rules as f
from behavegate.contract.v2 import V2Fields
from behavegate.model import Expectation, ScriptedTurn, SimulatedUser

TURN_KEYS = ("user", "expect")
SIMULATED_KEYS = ("persona", "goal", "max_turns")
MAX_SIMULATED_TURNS = 10
# Checks a user turn alone cannot be judged on: its own time, tokens and steps are not recorded.
NOT_PER_TURN = (
    ("latency", "a turn's latency is not recorded"),
    ("usage", "a turn's tokens are not recorded"),
    ("steps", "a turn's steps are not recorded"),
    ("response.judge", "the judge is asked about the conversation's final answer"),
)


class TurnFields(V2Fields):
    def simulated_user(self, raw: dict[str, Any], path: str) -> SimulatedUser | None:
        """``simulated_user: {persona, goal, max_turns?}``."""
        from behavegate.contract.v2_values import positive_int

        where = f"{path}.simulated_user"
        block = self.c.take(f.mapping, raw["simulated_user"], where, self.lines.of_key(raw, "simulated_user"), required=True)
        if block is None:
            return None
        mark = self.c.mark()
        self.unknown(block, SIMULATED_KEYS, where)
        line = self.lines.of_key(raw, "simulated_user")
        persona = self.c.take(f.required_text, block, "persona", f"{where}.persona", self.lines.of_key(block, "persona") or line)
        goal = self.c.take(f.required_text, block, "goal", f"{where}.goal", self.lines.of_key(block, "goal") or line)
        most = self._take(lambda v, p, ln: positive_int(v, p, ln, high=MAX_SIMULATED_TURNS), block, "max_turns", where)
        if persona is None or goal is None or not self.c.clean_since(mark):
            return None
        return SimulatedUser(persona, goal, most if most is not None else 3)

    def user_turns(
        self, raw: dict[str, Any], path: str, availability: set[str] | None, at: dict[str, int]
    ) -> tuple[ScriptedTurn, ...] | None:
        """``turns: [{user, expect?}, ...]``: the scripted user turns, ``turns[0]`` the first message;
        each turn's assertion lines go into ``at`` as ``turns[i].<assertion>``."""
        key_line = self.lines.of_key(raw, "turns")
        items = self.c.take(f.listing, raw.get("turns"), f"{path}.turns", key_line, required=True)
        if items is None:
            return None
        if not items:
            self.c.add(f"{path}.turns must contain at least one user turn", f"{path}.turns", key_line)
            return None
        mark = self.c.mark()
        found: list[ScriptedTurn] = []
        for index, item in enumerate(items):
            item_path, line = f"{path}.turns[{index}]", self.lines.of_item(items, index)
            block = self.c.take(f.mapping, item, item_path, line, required=True)
            if block is None:
                continue
            self.unknown(block, TURN_KEYS, item_path)
            user = self.c.take(f.required_text, block, "user", f"{item_path}.user", self.lines.of_key(block, "user") or line)
            expect = None
            if "expect" in block:
                expect = self.turn_expect(block, item_path, availability, at, index)
            if user is not None:
                found.append(ScriptedTurn(user, expect, line))
        return tuple(found) if self.c.clean_since(mark) else None

    def turn_expect(
        self, block: dict[str, Any], path: str, availability: set[str] | None, at: dict[str, int], index: int
    ) -> Expectation | None:
        raw = self.c.take(f.mapping, block["expect"], f"{path}.expect", self.lines.of_key(block, "expect"), required=True)
        if raw is None:
            return None
        for key, why in NOT_PER_TURN:
            holder = raw.get(key.split(".")[0]) if "." in key else raw
            name = key.split(".")[-1]
            if isinstance(holder, dict) and name in holder:
                where = f"{path}.expect.{key}"
                self.c.add(
                    f"{where} is not judged per user turn ({why}): put it in the scenario's expect",
                    where,
                    self.lines.of_key(holder, name),
                )
        own: dict[str, int] = {}
        kept, self.grounding = self.grounding, []  # a turn's grounding items are not the scenario's
        expect = self.expectation(raw, f"{path}.expect", availability, own)
        self.grounding = kept
        at.update({f"turns[{index}].{assertion}": line for assertion, line in own.items()})
        return expect


def turn_problems(
    raw: dict[str, Any], path: str, key_line: Any, turns: tuple[ScriptedTurn, ...], extras: dict[str, Any]
) -> list[tuple[str, str, int | None]]:
    """(problem, path, line) of scripted user ``turns`` that could never all be sent: fewer
    requests (``max_turns``) than user turns."""
    problems = []
    max_turns = extras.get("max_turns", 1)
    key = "turns" if "turns" in raw else "simulated_user"
    simulated = extras.get("simulated_user")
    needed = len(turns) + (simulated.max_turns if simulated is not None else 0)
    if max_turns < needed:
        said = f"{len(turns)} user turns" + (f" and up to {simulated.max_turns} simulated ones" if simulated else "")
        problems.append(
            (
                f"{path}.{key} has {said} but max_turns is {max_turns}: every user turn needs at least one "
                f"request (and one more for each round of tool calls); set max_turns to at least {needed}",
                f"{path}.{key}",
                key_line(raw, key),
            )
        )
    return problems
