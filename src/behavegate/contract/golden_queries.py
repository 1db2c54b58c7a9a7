"""Golden-query files: ``queries: [{query, expected_tools, expected_elements,
category}]`` read as a version-2 contract.

Each query becomes a scenario: ``expected_tools`` is an unordered set equality
on the names of the tools called (``tools.set``), ``expected_elements`` a
case-insensitive substring check each (``response.icontains``), ``category`` a
tag for ``--tag``. Lines are carried over so annotations point at the query.

Tools are sent to the endpoint only from ``agent.tools``; a file whose queries
expect tool calls must say which (or ``tools: []`` when the agent brings its
own), or a model endpoint would be asked to call tools it was never offered.
"""

from __future__ import annotations

from typing import Any

from behavegate.contract.yaml_lines import LineMap
from behavegate.errors import ContractError, Problem

QUERY_KEYS = ("id", "query", "expected_tools", "expected_elements", "category")
TOP_KEYS = ("version", "agent", "queries", "defaults", "gates")


def is_golden(raw: dict[str, Any]) -> bool:
    return "queries" in raw and "scenarios" not in raw


def to_contract(raw: dict[str, Any], lines: LineMap) -> dict[str, Any]:
    problems: list[Problem] = []
    for key in raw:
        if key not in TOP_KEYS:
            problems.append(Problem(f"Unknown behavior contract key: {key}", str(key), lines.of_key(raw, key)))
    if raw.get("version", 2) != 2:
        problems.append(Problem("a golden-query file is version 2", "version", lines.of_key(raw, "version")))
    queries = raw.get("queries")
    if not isinstance(queries, list) or not queries:
        problems.append(Problem("queries must be a non-empty list", "queries", lines.of_key(raw, "queries")))
        raise ContractError(problems)
    scenarios: list[Any] = []
    for index, query in enumerate(queries):
        path, line = f"queries[{index}]", lines.of_item(queries, index)
        if not isinstance(query, dict):
            problems.append(Problem(f"{path} must be a mapping", path, line))
            continue
        for key in query:
            if key not in QUERY_KEYS:
                problems.append(
                    Problem(f"Unknown behavior contract key: {path}.{key}", f"{path}.{key}", lines.of_key(query, key))
                )
        scenarios.append(_scenario(query, index, lines))
    problems += _undeclared_tools(raw, queries, lines)
    if problems:
        raise ContractError(problems)
    contract: dict[str, Any] = {key: raw[key] for key in ("agent", "defaults", "gates") if key in raw}
    contract.setdefault("agent", {})
    contract.update(version=2, scenarios=scenarios)
    _register(
        lines, contract, {"version": lines.of_key(raw, "version"), "scenarios": lines.of_key(raw, "queries")}, lines.of(raw)
    )
    lines.items[id(scenarios)] = [lines.of_item(queries, i) or 0 for i in range(len(scenarios))]
    return contract


def _undeclared_tools(raw: dict[str, Any], queries: list[Any], lines: LineMap) -> list[Problem]:
    """One located problem when queries expect tool calls but no tools would be sent."""
    agent = raw.get("agent")
    if isinstance(agent, dict) and "tools" in agent:
        return []
    for index, query in enumerate(queries):
        if isinstance(query, dict) and isinstance(query.get("expected_tools"), list) and query["expected_tools"]:
            path = f"queries[{index}].expected_tools"
            return [
                Problem(
                    f"{path} expects tool calls, but agent.tools is not declared, so no tools are sent to the "
                    "endpoint; declare the tools under agent.tools (name, description, parameters), or write "
                    "`tools: []` under agent if the agent brings its own tools",
                    path,
                    lines.of_key(query, "expected_tools"),
                )
            ]
    return []


def _scenario(query: dict[str, Any], index: int, lines: LineMap) -> dict[str, Any]:
    line = lines.of(query)
    scenario: dict[str, Any] = {"id": query.get("id", f"query-{index + 1:03d}"), "prompt": query.get("query")}
    key_lines = {"id": lines.of_key(query, "id"), "prompt": lines.of_key(query, "query")}
    if "category" in query:
        scenario["tags"] = [query["category"]]
        key_lines["tags"] = lines.of_key(query, "category")
    expect: dict[str, Any] = {}
    expect_lines: dict[str, int | None] = {}
    if "expected_tools" in query:
        expect["tools"] = {"set": query["expected_tools"]}
        expect_lines["tools"] = lines.of_key(query, "expected_tools")
        _register(lines, expect["tools"], {"set": lines.of_key(query, "expected_tools")}, line)
        if isinstance(query["expected_tools"], list):
            lines.items.setdefault(id(query["expected_tools"]), [])
    if "expected_elements" in query:
        expect["response"] = {"icontains": query["expected_elements"]}
        expect_lines["response"] = lines.of_key(query, "expected_elements")
        _register(lines, expect["response"], {"icontains": lines.of_key(query, "expected_elements")}, line)
    scenario["expect"] = expect
    key_lines["expect"] = line
    _register(lines, expect, expect_lines, line)
    _register(lines, scenario, key_lines, line)
    return scenario


def _register(lines: LineMap, container: dict[str, Any], key_lines: dict[str, int | None], start: int | None) -> None:
    lines.starts[id(container)] = start or 0
    lines.keys[id(container)] = {key: value for key, value in key_lines.items() if value is not None}
