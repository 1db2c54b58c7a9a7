"""Reading a behavior contract (version 1, skylos-compatible) into the model.

Checks run in the order skylos runs them, so the first problem is the one it
reports; unlike skylos we keep going and report every problem with its line.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from dataclasses import replace
from pathlib import Path
from typing import Any

from behavegate.contract import golden_queries as golden
from behavegate.contract import rules as f
from behavegate.contract.v2 import V2_KEYS, V2Fields
from behavegate.contract.yaml_lines import LineMap, YamlRefused, load_yaml
from behavegate.errors import ContractError, Problem
from behavegate.files import read_project_text
from behavegate.model import AgentTarget, Contract, Expectation, Gates, RequiredCall, Scenario, ToolDefinition

MAX_CONTRACT_BYTES = 256 * 1024
MAX_TOOLS = 1_000
MAX_ASSERTIONS = 250
MAX_ASSERTIONS_V2 = 5_000
CAPABILITIES = frozenset({"chat", "tools", "retrieval"})

TOP_KEYS = ("version", "agent", "scenarios")
AGENT_KEYS = ("endpoint", "model", "timeout_seconds", "capabilities", "tools")
TOOL_KEYS = ("name", "description", "parameters")
SCENARIO_KEYS = ("id", "prompt", "system_prompt", "available_tools", "expect")
EXPECT_KEYS = ("response", "tools", "refusal", "sources")
RESPONSE_KEYS = ("contains", "excludes")
TOOLS_KEYS = ("required", "allowed", "forbidden", "exact_sequence", "max_calls")
SOURCES_KEYS = ("required",)


def load_contract(path: str | Path, root: Path) -> Contract:
    resolved, source = read_project_text(path, root, "Contract", MAX_CONTRACT_BYTES)
    return parse_contract_text(source, resolved, root)


def parse_contract_text(source: str, path: Path, root: Path) -> Contract:
    try:
        raw, lines = load_yaml(source)
    except YamlRefused as refused:
        raise ContractError([refused.problem]) from None
    try:
        if not lines.within_limits:
            f.check_shape(raw, "Contract")
    except f.Bad as bad:
        raise ContractError([bad.problem]) from None
    if not isinstance(raw, dict):
        raise ContractError([Problem("Contract must be a YAML mapping")])
    digest = hashlib.sha256(source.encode("utf-8")).hexdigest()
    if golden.is_golden(raw):
        raw = golden.to_contract(raw, lines)
    return _Reader(lines).contract(raw, path=path, root=root, digest=digest)


class _Reader(V2Fields):
    def __init__(self, lines: LineMap) -> None:
        self.lines = lines
        self.c = f.Collector()
        self.v2 = False
        self.run_defaults: dict[str, Any] = {}

    def keys(self, block: str, v1: tuple[str, ...]) -> tuple[str, ...]:
        return v1 + V2_KEYS[block] if self.v2 else v1

    # -- helpers ---------------------------------------------------------------

    def unknown(self, raw: dict[str, Any], allowed: tuple[str, ...], prefix: str) -> None:
        for key in raw:
            if key not in allowed:
                where = f"{prefix}.{key}" if prefix else str(key)
                self.c.add(f"Unknown behavior contract key: {where}", where, self.lines.of_key(raw, key))

    def names(self, raw: dict[str, Any], key: str, path: str, check: Any = f.tool_name) -> tuple[str, ...] | None:
        """A list of names/texts; None when the list itself (or an item) is invalid."""
        items = self.c.take(f.listing, raw.get(key), path, self.lines.of_key(raw, key))
        if items is None:
            return None
        mark = self.c.mark()
        values = [self.c.take(check, item, f"{path}[{i}]", self.lines.of_item(items, i)) for i, item in enumerate(items)]
        if not self.c.clean_since(mark):
            return None
        return tuple(v for v in values if v is not None)

    def no_duplicates(self, values: tuple[str, ...] | None, label: str, path: str, line: int | None) -> None:
        if values is not None:
            repeated = f.duplicates(values)
            if repeated:
                self.c.add(f"Duplicate {label}: {repeated}", path, line)

    # -- the document ----------------------------------------------------------

    def contract(self, raw: dict[str, Any], *, path: Path, root: Path, digest: str) -> Contract:
        c, lines = self.c, self.lines
        self.v2 = type(raw.get("version")) is int and raw.get("version") == 2
        self.unknown(raw, self.keys("top", TOP_KEYS), "")
        version = c.take(f.integer, raw.get("version"), "version", lines.of_key(raw, "version"))
        if version is not None and version not in (1, 2):
            c.add(f"version must be 1, got {version}", "version", lines.of_key(raw, "version"))
        agent_raw = c.take(f.mapping, raw.get("agent"), "agent", lines.of_key(raw, "agent"), required=True)
        agent = self.agent(agent_raw) if agent_raw is not None else None
        gates = Gates()
        if self.v2:
            self.run_defaults = self.defaults(raw)
            gates = self.gates(raw)
        scenarios_raw = c.take(f.listing, raw.get("scenarios"), "scenarios", lines.of_key(raw, "scenarios"), required=True)
        scenarios: list[Scenario] = []
        if scenarios_raw is not None:
            line = lines.of_key(raw, "scenarios")
            if not scenarios_raw:
                c.add("scenarios must contain at least one scenario", "scenarios", line)
            elif len(scenarios_raw) > f.MAX_SCENARIOS:
                c.add(f"scenarios cannot exceed {f.MAX_SCENARIOS} entries", "scenarios", line)
            else:
                for index, item in enumerate(scenarios_raw):
                    scenario = self.scenario(item, index, agent, lines.of_item(scenarios_raw, index))
                    if scenario is not None:
                        scenarios.append(scenario)
                if self.v2 and "include" in raw:
                    scenarios.extend(self.includes(raw, agent, path, root))
                self.no_duplicates(tuple(s.id for s in scenarios), "scenario id", "scenarios", line)
        cap = MAX_ASSERTIONS_V2 if self.v2 else MAX_ASSERTIONS
        if sum(assertion_count(s.expect) for s in scenarios) > cap:
            c.add(f"contract assertions cannot exceed {cap}", "scenarios", lines.of_key(raw, "scenarios"))
        if c.problems:
            raise ContractError(c.problems)
        assert version is not None and agent is not None
        return Contract(
            version=version, path=path, project_root=root, digest=digest, agent=agent, scenarios=tuple(scenarios), gates=gates
        )

    def includes(self, raw: dict[str, Any], agent: AgentTarget | None, path: Path, root: Path) -> list[Scenario]:
        """Scenario libraries: ``builtin:NAME`` or a file next to the contract."""
        from behavegate.contract.includes import read_include

        found: list[Scenario] = []
        names = self.names(raw, "include", "include", f.text) or ()
        for index, name in enumerate(names):
            where = f"include[{index}]"
            try:
                items, lines = read_include(name, path.parent, root)
            except f.Bad as bad:
                self.c.add(f"{where}: {bad.problem.text}", where, self.lines.of_item(raw["include"], index))
                continue
            outer = self.lines
            self.lines = lines
            try:
                for item_index, item in enumerate(items):
                    scenario = self.scenario(
                        item, item_index, agent, lines.of_item(items, item_index), prefix=f"{where}({name})."
                    )
                    if scenario is not None:
                        found.append(_located(scenario, name, outer.of_item(raw["include"], index)))
            finally:
                self.lines = outer
        return found

    def agent(self, raw: dict[str, Any]) -> AgentTarget | None:
        c, lines = self.c, self.lines
        mark = c.mark()
        self.unknown(raw, self.keys("agent", AGENT_KEYS), "agent")
        endpoint = c.take(f.optional_text, raw.get("endpoint"), "agent.endpoint", lines.of_key(raw, "endpoint"))
        model = c.take(f.optional_text, raw.get("model"), "agent.model", lines.of_key(raw, "model"))
        timeout_line = lines.of_key(raw, "timeout_seconds")
        timeout = c.take(f.number, raw.get("timeout_seconds", 30), "agent.timeout_seconds", timeout_line)
        if timeout is not None and not 0 < timeout <= 300:
            c.add("agent.timeout_seconds must be between 0 and 300", "agent.timeout_seconds", timeout_line)
        capabilities = self.names(raw, "capabilities", "agent.capabilities", f.text)
        cap_line = lines.of_key(raw, "capabilities")
        self.no_duplicates(capabilities, "agent capability", "agent.capabilities", cap_line)
        unsupported = sorted(set(capabilities or ()) - CAPABILITIES)
        if unsupported:
            c.add(f"agent.capabilities contains unsupported values: {unsupported}", "agent.capabilities", cap_line)
        tools: list[ToolDefinition] = []
        tools_raw = c.take(f.listing, raw.get("tools"), "agent.tools", lines.of_key(raw, "tools"))
        if tools_raw is not None:
            if len(tools_raw) > MAX_TOOLS:
                c.add(f"agent.tools cannot exceed {MAX_TOOLS} entries", "agent.tools", lines.of_key(raw, "tools"))
            else:
                for index, item in enumerate(tools_raw):
                    tool = self.tool(item, index, lines.of_item(tools_raw, index))
                    if tool is not None:
                        tools.append(tool)
                self.no_duplicates(tuple(t.name for t in tools), "agent tool name", "agent.tools", lines.of_key(raw, "tools"))
        extras = self.agent_extras(raw) if self.v2 else {}
        if not c.clean_since(mark):
            return None
        return AgentTarget(
            endpoint=endpoint,
            model=model,
            timeout_seconds=float(timeout if timeout is not None else 30),
            capabilities=capabilities or (),
            tools=tuple(tools),
            **extras,
        )

    def tool(self, value: Any, index: int, line: int | None) -> ToolDefinition | None:
        c, lines = self.c, self.lines
        path = f"agent.tools[{index}]"
        raw = c.take(f.mapping, value, path, line, required=True)
        if raw is None:
            return None
        mark = c.mark()
        self.unknown(raw, TOOL_KEYS, path)
        name = c.take(f.tool_name, raw.get("name"), f"{path}.name", lines.of_key(raw, "name"))
        description = c.take(f.required_text, raw, "description", f"{path}.description", lines.of_key(raw, "description"))
        parameters = c.take(f.json_mapping, raw.get("parameters"), f"{path}.parameters", lines.of_key(raw, "parameters"))
        if parameters is not None and self.v2:
            # Only version 2 validates arguments against the schema (version 1 passes it on
            # untouched, as skylos does), so only there can a reference be followed.
            from behavegate.contract.schema_refs import bad_patterns, foreign_references

            for check in (foreign_references, bad_patterns):
                for holder, key, at, problem in check(raw["parameters"], f"{path}.parameters"):
                    c.add(problem, at, lines.of_key(holder, key))
        if not c.clean_since(mark) or name is None or description is None or parameters is None:
            return None
        return ToolDefinition(name=name, description=description, parameters=parameters)

    def scenario(self, value: Any, index: int, agent: AgentTarget | None, line: int | None, prefix: str = "") -> Scenario | None:
        c, lines = self.c, self.lines
        path = f"{prefix}scenarios[{index}]"
        raw = c.take(f.mapping, value, path, line, required=True)
        if raw is None:
            return None
        mark = c.mark()
        self.unknown(raw, self.keys("scenario", SCENARIO_KEYS), path)
        scenario_id = c.take(f.safe_id, raw.get("id"), f"{path}.id", lines.of_key(raw, "id"))
        messages: tuple[dict[str, Any], ...] | None = ()
        if self.v2 and "messages" in raw:
            if "prompt" in raw:
                c.add(f"{path} takes prompt or messages, not both", f"{path}.messages", lines.of_key(raw, "messages"))
            if "system_prompt" in raw:
                c.add(f"{path} takes system_prompt or messages (put it in a system message), not both",
                      f"{path}.system_prompt", lines.of_key(raw, "system_prompt"))  # fmt: skip
            messages = self.messages(raw, path)
            prompt = next((m["content"] for m in reversed(messages or ()) if m["role"] == "user"), "")
        else:
            prompt = c.take(f.required_text, raw, "prompt", f"{path}.prompt", lines.of_key(raw, "prompt"))
        system_prompt = c.take(
            f.optional_text, raw.get("system_prompt"), f"{path}.system_prompt", lines.of_key(raw, "system_prompt")
        )
        available: tuple[str, ...] | None = None
        if "available_tools" in raw:
            key_line = lines.of_key(raw, "available_tools")
            available = self.names(raw, "available_tools", f"{path}.available_tools")
            self.no_duplicates(available, f"{path}.available_tools value", f"{path}.available_tools", key_line)
            if available is not None and agent is not None:
                unknown = sorted(set(available) - set(agent.tool_names()))
                if unknown:
                    c.add(f"{path}.available_tools references unknown tools: {unknown}", f"{path}.available_tools", key_line)
        expect_raw = c.take(f.mapping, raw.get("expect"), f"{path}.expect", lines.of_key(raw, "expect"), required=True)
        if expect_raw is None:
            return None
        if available is not None:
            availability: set[str] | None = set(available)
        elif agent is not None and agent.tools and "available_tools" not in raw:
            availability = set(agent.tool_names())
        else:
            availability = None
        assertion_lines: dict[str, int] = {}
        extras = self.scenario_extras(raw, path, self.run_defaults) if self.v2 else {}
        expect = self.expectation(expect_raw, f"{path}.expect", availability, assertion_lines)
        if expect is not None and assertion_count(expect) == 0:
            c.add(f"{path}.expect must request at least one assertion", f"{path}.expect", lines.of_key(raw, "expect"))
        if not c.clean_since(mark) or expect is None or scenario_id is None or prompt is None:
            return None
        return Scenario(
            id=scenario_id,
            prompt=prompt,
            expect=expect,
            system_prompt=system_prompt,
            available_tools=available,
            line=line,
            assertion_lines=assertion_lines,
            messages=messages or (),
            **extras,
        )

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


def assertion_count(expect: Expectation) -> int:
    return (
        len(expect.icontains)
        + len(expect.matches)
        + len(expect.not_matches)
        + len(expect.calls)
        + len(expect.pii)
        + sum(
            value is not None
            for value in (
                expect.min_calls,
                expect.sequence,
                expect.tool_set,
                expect.arguments_valid,
                expect.known_only,
                expect.no_errors,
                expect.max_steps,
                expect.max_latency_ms,
                expect.max_total_tokens,
                expect.injection,
            )
        )
    ) + (
        len(expect.contains)
        + len(expect.excludes)
        + len(expect.required)
        + len(expect.forbidden)
        + len(expect.sources)
        + (expect.allowed is not None)
        + (expect.exact_sequence is not None)
        + (expect.max_calls is not None)
        + (expect.refusal is not None)
    )


def _located(scenario: Scenario, name: str, include_line: int | None) -> Scenario:
    """An included scenario keeps where it is written: a file include points at
    its own file and lines; a builtin library, which is not in the repository,
    points at the ``include:`` entry that brought it in."""
    if not name.startswith("builtin:"):
        return replace(scenario, source=name, file=name)
    lines = {assertion: include_line or 0 for assertion in scenario.assertion_lines}
    return replace(scenario, source=name, line=include_line, assertion_lines=lines)
