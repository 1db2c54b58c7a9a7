"""Reading a behavior contract (version 1, skylos-compatible) into the model.

Checks run in the order skylos runs them, so the first problem is the one it
reports; unlike skylos we keep going and report every problem with its line.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from behavegate.contract import oxy, v2_mcp
from behavegate.contract import rules as f
from behavegate.contract.assertion_keys import requests_any, scenario_assertions
from behavegate.contract.expect import ExpectFields
from behavegate.contract.v2 import V2_KEYS
from behavegate.contract.v2_turns import turn_problems
from behavegate.contract.yaml_lines import LineMap, YamlRefused, load_yaml
from behavegate.errors import ContractError, InputError, Problem
from behavegate.files import read_project_text
from behavegate.frozen import replace
from behavegate.judged import JudgeTarget
from behavegate.limits import (
    INPUT_MAX_VALUES,
    MAX_ASSERTIONS,
    MAX_ASSERTIONS_CEILING,
    MAX_CONTRACT_BYTES,
    MAX_RUN_SCENARIOS,
    MAX_TIMEOUT_SECONDS,
    MAX_TOOLS,
    V2_INPUT_MAX_VALUES,
    V2_MAX_ASSERTIONS,
    V2_MAX_INPUT_BYTES,
    V2_MAX_SCENARIOS,
)
from behavegate.magnitude import shown
from behavegate.model import AgentTarget, Contract, Gates, Scenario, ScriptedTurn, ToolDefinition

if TYPE_CHECKING:
    from behavegate.contract.datasets import Origin

CAPABILITIES = ("chat", "tools", "retrieval")

TOP_KEYS = ("version", "agent", "scenarios")
AGENT_KEYS = ("endpoint", "model", "timeout_seconds", "capabilities", "tools")
TOOL_KEYS = ("name", "description", "parameters")
SCENARIO_KEYS = ("id", "prompt", "system_prompt", "available_tools", "expect")


_DECLARES_V2 = re.compile(r"""(?m)^(?:version[ \t]*:[ \t]*(?:2|"2"|'2')[ \t]*(?:#.*)?|(?:queries|cases)[ \t]*:.*)$""")


def declares_version_2(source: str) -> bool:
    """A version-2 contract (or golden-query file), told from its text before it is parsed,
    so that version 1 keeps skylos's size limits and version 2 gets a suite's."""
    return _DECLARES_V2.search(source) is not None


def load_contract(path: str | Path, root: Path, *, max_assertions: int | None = None) -> Contract:
    try:
        resolved, source = read_project_text(path, root, "Contract", V2_MAX_INPUT_BYTES)
    except InputError:  # unreadable: say so in skylos's words (its cap named), whatever the version
        resolved, source = read_project_text(path, root, "Contract", MAX_CONTRACT_BYTES)
    if not declares_version_2(source) and len(source.encode("utf-8")) > MAX_CONTRACT_BYTES - 1024:
        resolved, source = read_project_text(path, root, "Contract", MAX_CONTRACT_BYTES)  # skylos's cap and words
    return parse_contract_text(source, resolved, root, max_assertions=max_assertions)


def parse_contract_text(source: str, path: Path, root: Path, *, max_assertions: int | None = None) -> Contract:
    max_values = V2_INPUT_MAX_VALUES if declares_version_2(source) else INPUT_MAX_VALUES
    try:
        raw, lines = load_yaml(source, max_values=max_values)
    except YamlRefused as refused:
        raise ContractError([refused.problem]) from None
    try:
        if not lines.within_limits:
            f.check_shape(raw, "Contract", max_values)
    except f.Bad as bad:
        raise ContractError([bad.problem]) from None
    if not isinstance(raw, dict):
        raise ContractError([Problem("Contract must be a YAML mapping")])
    digest = hashlib.sha256(source.encode("utf-8")).hexdigest()
    if oxy.is_oxy(raw, path):
        translated, meta = oxy.to_contract(raw, lines, path)
        contract = _Reader(lines, max_assertions).contract(translated, path=path, root=root, digest=digest)
        return replace(contract, oxy=meta, gates=Gates(formula="runs"))
    origins: dict[int, Origin] = {}
    reader = _Reader(lines, max_assertions)
    if "queries" in raw:  # only a golden-query file can have them: its readers (CSV, JSONL) are imported for it alone
        from behavegate.contract import golden_queries as golden

        if golden.is_golden(raw):
            raw, origins, reader.included = golden.to_contract(raw, lines, path, root)
    try:
        contract = reader.contract(raw, path=path, root=root, digest=digest)
    except ContractError as error:
        if not origins:
            raise
        from behavegate.contract.datasets import located

        raise ContractError(located(error.problems, origins, raw)) from None
    if not origins:
        return contract
    from behavegate.contract.datasets import placed

    return placed(contract, origins, raw)


def golden_part(source: str, path: Path, root: Path, queries: list[Any], origins: Sequence[Origin] = ()) -> Contract:
    """The golden-query file ``source`` (at ``path``) with ``queries`` in place of its golden
    set's rows, each placed at its ``origins`` (file and line): one part of a streamed run
    (commands/stream_offline.py). The reader's checks hold within the part; the caller checks
    what spans parts (ids, counts)."""
    from behavegate.contract import golden_queries as golden

    raw, lines = load_yaml(source, max_values=V2_INPUT_MAX_VALUES)
    if not isinstance(raw, dict) or not golden.is_golden(raw):
        raise ContractError([Problem("not a golden-query file")])
    raw["queries"] = queries  # the same dict: its keys keep their lines
    translated, _, _ = golden.to_contract(raw, lines, path, root)
    from behavegate.contract.datasets import placed

    digest = hashlib.sha256(source.encode("utf-8")).hexdigest()
    return placed(_Reader(lines).contract(translated, path=path, root=root, digest=digest), dict(enumerate(origins)), translated)


class _Reader(ExpectFields):
    def __init__(self, lines: LineMap, max_assertions: int | None = None) -> None:
        self.lines = lines
        self.max_assertions = max_assertions
        self.c = f.Collector()
        self.v2 = False
        self.grounding = []
        self.run_defaults: dict[str, Any] = {}
        self.included: dict[str, str] = {}

    def keys(self, block: str, v1: tuple[str, ...]) -> tuple[str, ...]:
        return v1 + V2_KEYS[block] if self.v2 else v1

    # -- helpers ---------------------------------------------------------------

    def unknown(self, raw: dict[str, Any], allowed: tuple[str, ...], prefix: str) -> None:
        for key in raw:
            if key not in allowed:
                where = f"{prefix}.{key}" if prefix else str(key)
                self.c.problems.append(f.unknown_key(where, key, allowed, self.lines.of_key(raw, key)))

    def names(self, raw: dict[str, Any], key: str, path: str, check: Any = f.tool_name) -> tuple[str, ...] | None:
        """A list of names/texts; None when the list itself (or an item) is invalid."""
        if raw.get(key) is None:  # absent: most keys of most scenarios (10,000s of calls)
            return ()
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
            c.add(f"version must be 1, got {shown(version)}", "version", lines.of_key(raw, "version"))
        agent_raw = c.take(f.mapping, raw.get("agent"), "agent", lines.of_key(raw, "agent"), required=True)
        agent = self.agent(agent_raw) if agent_raw is not None else None
        gates, judge = Gates(), JudgeTarget()
        if self.v2:
            self.run_defaults = self.defaults(raw)
            gates = self.gates(raw)
            judge = self.judge_target(raw)
        scenarios_raw = c.take(f.listing, raw.get("scenarios"), "scenarios", lines.of_key(raw, "scenarios"), required=True)
        scenarios: list[Scenario] = []
        if scenarios_raw is not None:
            line = lines.of_key(raw, "scenarios")
            if not scenarios_raw:
                c.add("scenarios must contain at least one scenario", "scenarios", line)
            elif len(scenarios_raw) > (cap := V2_MAX_SCENARIOS if self.v2 else MAX_RUN_SCENARIOS):
                c.add(f"scenarios cannot exceed {cap} entries", "scenarios", line)
            else:
                for index, item in enumerate(scenarios_raw):
                    scenario = self.scenario(item, index, agent, lines.of_item(scenarios_raw, index))
                    if scenario is not None:
                        scenarios.append(scenario)
                if self.v2 and "include" in raw:
                    scenarios.extend(self.includes(raw, agent, path, root))
                    if len(scenarios) > cap:
                        c.add(
                            f"scenarios with their includes cannot exceed {cap} entries", "include", lines.of_key(raw, "include")
                        )
                self.no_duplicates(tuple(s.id for s in scenarios), "scenario id", "scenarios", line)
        cap = (self.max_assertions or V2_MAX_ASSERTIONS) if self.v2 else MAX_ASSERTIONS
        if (count := sum(scenario_assertions(s) for s in scenarios)) > cap:
            # Version 1 keeps skylos's words; version 2 names the count and the flag that raises the cap.
            fix = ""
            if self.v2:
                fix = f" (this contract has {count:,}); " + (
                    f"raise it with --max-assertions {count}"
                    if count <= MAX_ASSERTIONS_CEILING
                    else f"--max-assertions allows at most {MAX_ASSERTIONS_CEILING:,}: split the contract"
                )
            c.add(f"contract assertions cannot exceed {cap}{fix}", "scenarios", lines.of_key(raw, "scenarios"))
        if c.problems:
            raise ContractError(c.problems)
        assert version is not None and agent is not None
        return Contract(
            version=version,
            path=path,
            project_root=root,
            digest=digest,
            agent=agent,
            scenarios=tuple(scenarios),
            gates=gates,
            judge=judge,
            included=self.included,
        )

    def includes(self, raw: dict[str, Any], agent: AgentTarget | None, path: Path, root: Path) -> list[Scenario]:
        """Scenario libraries: ``builtin:NAME`` or a file next to the contract."""
        from behavegate.contract.includes import read_include

        found: list[Scenario] = []
        names = self.names(raw, "include", "include", f.text) or ()
        for index, name in enumerate(names):
            where = f"include[{index}]"
            try:
                items, lines, text = read_include(name, path.parent, root)
            except f.Bad as bad:
                self.c.add(f"{where}: {bad.problem.text}", where, self.lines.of_item(raw["include"], index))
                continue
            if not name.startswith("builtin:"):  # a builtin library is this version's
                self.included[name] = hashlib.sha256(text.encode("utf-8")).hexdigest()
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
        if timeout is not None and not 0 < timeout <= MAX_TIMEOUT_SECONDS:
            c.add(f"agent.timeout_seconds must be between 0 and {MAX_TIMEOUT_SECONDS}", "agent.timeout_seconds", timeout_line)
        capabilities = self.names(raw, "capabilities", "agent.capabilities", f.text)
        cap_line = lines.of_key(raw, "capabilities")
        self.no_duplicates(capabilities, "agent capability", "agent.capabilities", cap_line)
        unsupported = sorted(set(capabilities or ()) - set(CAPABILITIES))
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
        if self.v2 and "turns" in raw and "prompt" in raw:
            c.add(
                f"{path} takes prompt or turns (turns[0] is the first message), not both",
                f"{path}.turns",
                lines.of_key(raw, "turns"),
            )
        call = v2_mcp.scenario_call(self.c, raw, path, agent, self.lines.of_key) if self.v2 else None
        if call is not None and "prompt" not in raw and "messages" not in raw and "turns" not in raw:
            prompt: str | None = f"call {call.name}"  # an MCP server as the target is called, never prompted
        elif self.v2 and "messages" in raw:
            if "prompt" in raw:
                c.add(f"{path} takes prompt or messages, not both", f"{path}.messages", lines.of_key(raw, "messages"))
            if "system_prompt" in raw:
                c.add(
                    f"{path} takes system_prompt or messages (put it in a system message), not both",
                    f"{path}.system_prompt",
                    lines.of_key(raw, "system_prompt"),
                )
            messages = self.messages(raw, path, history_only="turns" in raw)
            prompt = next((m["content"] for m in reversed(messages or ()) if m["role"] == "user"), "")
        elif self.v2 and "turns" in raw:
            prompt = ""  # turns[0], below
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
            if available is not None and agent is not None and agent.tools_from_mcp is None:  # else: checked once listed
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
        if self.v2 and "tool_results" in raw:
            from behavegate.contract.v2_conversation import unoffered_results

            declared = set(agent.tool_names()) if agent is not None and agent.tools else None
            for text, where, at in unoffered_results(raw["tool_results"], f"{path}.tool_results", lines, declared, available):
                c.add(text, where, at)
        if self.v2 and agent is not None and agent.http is not None:
            from behavegate.contract.v2_http import unplaced

            for text, where, at in unplaced(agent.http, raw, path, lines.of_key, agent.serve_mcp):
                c.add(text, where, at)
        self.grounding = []
        expect = self.expectation(expect_raw, f"{path}.expect", availability, assertion_lines)
        scripted_turns = self.user_turns(raw, path, availability, assertion_lines) if self.v2 and "turns" in raw else ()
        simulated = self.simulated_user(raw, path) if self.v2 and "simulated_user" in raw else None
        if simulated is not None:
            extras["simulated_user"] = simulated
            if not scripted_turns and scripted_turns is not None and prompt:  # the prompt is the first user turn
                extras["turns"] = (ScriptedTurn(prompt, None, lines.of_key(raw, "prompt")),)
                for problem, where, at in turn_problems(raw, path, lines.of_key, extras["turns"], extras):
                    c.add(problem, where, at)
        if scripted_turns:
            extras["turns"] = scripted_turns
            prompt = scripted_turns[0].user
            if messages:  # the history before the first scripted turn
                messages = (*messages, {"role": "user", "content": prompt})
            for problem, where, at in turn_problems(raw, path, lines.of_key, scripted_turns, extras):
                c.add(problem, where, at)
        # Broken turns (None) are reported themselves; an empty expect may then be meant for them.
        per_turn = scripted_turns is None or any(t.expect is not None and requests_any(t.expect) for t in scripted_turns)
        if expect is not None and not requests_any(expect) and not per_turn:
            c.add(f"{path}.expect must request at least one assertion", f"{path}.expect", lines.of_key(raw, "expect"))
        scripted_ok = "tool_results" not in raw or {"tool_rules", "tool_results"} & set(extras)
        ran_itself = agent is not None and agent.http is not None and agent.http.executed_calls is not None
        # else the rules' own problems are reported; an agent that runs its own tools reports the results itself
        if self.v2 and self.grounding and scripted_ok and not ran_itself:
            from behavegate.contract.v2_conversation import grounding_problems

            for index, problem, item_line in grounding_problems(self.grounding, extras):
                where = f"{path}.expect.response.uses_tool_result[{index}].tool"
                c.add(f"{where}: {problem}", where, item_line)
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
            call=call,
            **extras,
        )


def _located(scenario: Scenario, name: str, include_line: int | None) -> Scenario:
    """An included scenario keeps where it is written: a file include points at
    its own file and lines; a builtin library, which is not in the repository,
    points at the ``include:`` entry that brought it in."""
    if not name.startswith("builtin:"):
        return replace(scenario, source=name, file=name)
    lines = {assertion: include_line or 0 for assertion in scenario.assertion_lines}
    return replace(scenario, source=name, line=include_line, assertion_lines=lines)
