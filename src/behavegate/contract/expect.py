"""Reading a scenario's ``expect`` block (version-1 keys, and through
``V2Fields`` the version-2 ones) into an ``Expectation``, each assertion's
line kept. Mixed into the contract reader (``contract/load.py``)."""

from __future__ import annotations

from collections import Counter
from typing import Any

from behavegate.contract import rules as f
from behavegate.contract.checks import added_keys
from behavegate.contract.v2_turns import TurnFields
from behavegate.model import Expectation, RequiredCall

# Version 1's keys, from the check rows (contract/checks.py)
EXPECT_KEYS = added_keys("expect", 1)
RESPONSE_KEYS = added_keys("response", 1)
TOOLS_KEYS = added_keys("tools", 1)
SOURCES_KEYS = added_keys("sources", 1)


class ExpectFields(TurnFields):
    """Uses the reader's collector, line map and key rules."""

    v2: bool

    def keys(self, block: str, v1: tuple[str, ...]) -> tuple[str, ...]:
        raise NotImplementedError

    def no_duplicates(self, values: tuple[str, ...] | None, label: str, path: str, line: int | None) -> None:
        raise NotImplementedError

    def expectation(
        self, raw: dict[str, Any], path: str, availability: set[str] | None, at: dict[str, int]
    ) -> Expectation | None:
        c, lines = self.c, self.lines
        mark = c.mark()
        self.unknown(raw, self.keys("expect", EXPECT_KEYS), path)
        response = c.take(f.mapping, raw.get("response"), f"{path}.response", lines.of_key(raw, "response"))
        texts = self.response(response, f"{path}.response", at) if response is not None else {}
        tools = c.take(f.mapping, raw.get("tools"), f"{path}.tools", lines.of_key(raw, "tools"))
        tool_expect = self.tools(tools, f"{path}.tools", availability, at) if tools is not None else None
        sources_raw = c.take(f.mapping, raw.get("sources"), f"{path}.sources", lines.of_key(raw, "sources"))
        sources: tuple[str, ...] | None = ()
        if sources_raw is not None:
            self.unknown(sources_raw, SOURCES_KEYS, f"{path}.sources")
            sources = self.names(sources_raw, "required", f"{path}.sources.required", f.text)
            self.no_duplicates(
                sources, f"{path}.sources.required source", f"{path}.sources.required", lines.of_key(sources_raw, "required")
            )
            for i, line in enumerate(self._item_lines(sources_raw, "required")):
                at[f"sources.required[{i}]"] = line
        refusal: bool | None = None
        if "refusal" in raw:
            refusal = c.take(f.boolean, raw.get("refusal"), f"{path}.refusal", lines.of_key(raw, "refusal"))
            at["refusal"] = lines.of_key(raw, "refusal") or 0
        extras = self.expect_extras(raw, path, at) if self.v2 else {}
        if not c.clean_since(mark):
            return None
        return Expectation(refusal=refusal, sources=sources or (), **texts, **(tool_expect or {}), **extras)

    def _item_lines(self, raw: dict[str, Any], key: str) -> list[int]:
        items = raw.get(key)
        if not isinstance(items, list):
            return []
        return [self.lines.of_item(items, i) or 0 for i in range(len(items))]

    def response(self, raw: dict[str, Any], path: str, at: dict[str, int]) -> dict[str, Any]:
        lines = self.lines
        self.unknown(raw, self.keys("response", RESPONSE_KEYS), path)
        contains = self.names(raw, "contains", f"{path}.contains", f.text)
        excludes = self.names(raw, "excludes", f"{path}.excludes", f.text)
        self.no_duplicates(contains, f"{path}.contains value", f"{path}.contains", lines.of_key(raw, "contains"))
        self.no_duplicates(excludes, f"{path}.excludes value", f"{path}.excludes", lines.of_key(raw, "excludes"))
        overlap = sorted(set(contains or ()) & set(excludes or ()))
        if overlap:
            self.c.add(f"{path} cannot contain and exclude the same text: {overlap}", path, lines.of_key(raw, "excludes"))
        for kind in RESPONSE_KEYS:
            for i, line in enumerate(self._item_lines(raw, kind)):
                at[f"response.{kind}[{i}]"] = line
        extras = self.response_extras(raw, path, at) if self.v2 else {}
        return {"contains": contains or (), "excludes": excludes or (), **extras}

    def tools(self, raw: dict[str, Any], path: str, availability: set[str] | None, at: dict[str, int]) -> dict[str, Any] | None:
        c, lines = self.c, self.lines
        mark = c.mark()
        self.unknown(raw, self.keys("tools", TOOLS_KEYS), path)
        required: list[RequiredCall] = []
        required_raw = c.take(f.listing, raw.get("required"), f"{path}.required", lines.of_key(raw, "required"))
        for index, item in enumerate(required_raw or ()):
            call = self.required_call(item, f"{path}.required[{index}]", lines.of_item(required_raw, index))
            if call is not None:
                required.append(call)
        allowed: tuple[str, ...] | None = None
        if "allowed" in raw:
            allowed = self.names(raw, "allowed", f"{path}.allowed")
            self.no_duplicates(allowed, f"{path}.allowed value", f"{path}.allowed", lines.of_key(raw, "allowed"))
        forbidden = self.names(raw, "forbidden", f"{path}.forbidden")
        self.no_duplicates(forbidden, f"{path}.forbidden value", f"{path}.forbidden", lines.of_key(raw, "forbidden"))
        sequence: tuple[str, ...] | None = None
        if "exact_sequence" in raw:
            sequence = self.names(raw, "exact_sequence", f"{path}.exact_sequence")
        max_calls: int | None = None
        if "max_calls" in raw:
            line = lines.of_key(raw, "max_calls")
            max_calls = c.take(f.integer, raw.get("max_calls"), f"{path}.max_calls", line)
            if max_calls is not None and max_calls < 0:
                c.add(f"{path}.max_calls must be non-negative", f"{path}.max_calls", line)
        for key in ("required", "forbidden"):
            for i, line in enumerate(self._item_lines(raw, key)):
                at[f"tools.{key}[{i}]"] = line
        for key in ("allowed", "exact_sequence", "max_calls"):
            if key in raw:
                at[f"tools.{key}"] = lines.of_key(raw, key) or 0
        extras = self.tools_extras(raw, path, at) if self.v2 else {}
        if not c.clean_since(mark):
            return None
        self.tool_rules(raw, path, tuple(required), allowed, forbidden or (), sequence, max_calls, availability)
        if availability is not None and extras:
            reference = extras.get("sequence")
            named = {call.name for call in (reference.calls if reference is not None else ())}
            named |= set(extras.get("tool_set") or ())
            named |= {count.name for count in extras.get("calls", ()) if count.min}
            unavailable = sorted(named - availability)
            if unavailable:
                c.add(f"{path} references tools unavailable to the scenario: {unavailable}", path, lines.of_key(raw, "sequence"))
        if not c.clean_since(mark):
            return None
        return {
            **extras,
            "required": tuple(required),
            "allowed": allowed,
            "forbidden": forbidden or (),
            "exact_sequence": sequence,
            "max_calls": max_calls,
        }

    def required_call(self, value: Any, path: str, line: int | None) -> RequiredCall | None:
        c, lines = self.c, self.lines
        if isinstance(value, str):
            name = c.take(f.tool_name, value, path, line)
            return None if name is None else RequiredCall(name)
        raw = c.take(f.mapping, value, path, line, required=True)
        if raw is None:
            return None
        mark = c.mark()
        self.unknown(raw, ("name", "arguments"), path)
        arguments = None
        if "arguments" in raw:
            arguments = c.take(f.json_mapping, raw.get("arguments"), f"{path}.arguments", lines.of_key(raw, "arguments"))
        name = c.take(f.tool_name, raw.get("name"), f"{path}.name", lines.of_key(raw, "name") or line)
        if not c.clean_since(mark) or name is None:
            return None
        return RequiredCall(name, arguments)

    def tool_rules(
        self,
        raw: dict[str, Any],
        path: str,
        required: tuple[RequiredCall, ...],
        allowed: tuple[str, ...] | None,
        forbidden: tuple[str, ...],
        sequence: tuple[str, ...] | None,
        max_calls: int | None,
        availability: set[str] | None,
    ) -> None:
        """Cross-field rules, in skylos's order."""
        add, line = self.c.add, self.lines.of_key
        required_names = {call.name for call in required}
        both = sorted(required_names & set(forbidden))
        if both:
            add(f"{path} cannot require and forbid the same tool: {both}", path, line(raw, "forbidden"))
        both = sorted(set(sequence or ()) & set(forbidden))
        if both:
            add(f"{path} cannot sequence and forbid the same tool: {both}", path, line(raw, "forbidden"))
        both = sorted(set(allowed or ()) & set(forbidden))
        if allowed is not None and both:
            add(f"{path} cannot allow and forbid the same tool: {both}", path, line(raw, "forbidden"))
        if sequence is not None:
            counts = Counter(sequence)
            missing = sorted(name for name, n in Counter(c.name for c in required).items() if counts[name] < n)
            if missing:
                add(
                    f"{path}.required tools are missing from exact_sequence: {missing}",
                    f"{path}.required",
                    line(raw, "exact_sequence"),
                )
        if max_calls is not None and max_calls < len(required):
            add(f"{path}.max_calls cannot be less than required tool calls", f"{path}.max_calls", line(raw, "max_calls"))
        if max_calls is not None and sequence is not None and max_calls < len(sequence):
            add(f"{path}.max_calls cannot be less than exact_sequence length", f"{path}.max_calls", line(raw, "max_calls"))
        if allowed is not None:
            outside = sorted(required_names - set(allowed))
            if outside:
                add(f"{path}.required tools are missing from allowed: {outside}", f"{path}.required", line(raw, "allowed"))
            outside = sorted(set(sequence or ()) - set(allowed))
            if outside:
                add(
                    f"{path}.exact_sequence tools are missing from allowed: {outside}",
                    f"{path}.exact_sequence",
                    line(raw, "allowed"),
                )
        if availability is not None:
            unavailable = sorted((required_names | set(sequence or ()) | set(allowed or ())) - availability)
            if unavailable:
                add(f"{path} references tools unavailable to the scenario: {unavailable}", path, line(raw, "required"))
