"""Golden-query files: ``queries: [{query, expected_tools, expected_elements,
category}]`` read as a version-2 contract; ``queries: golden.csv`` (or ``.jsonl``) reads
the same fields from a golden set's rows (contract/datasets.py).

Each query becomes a scenario: ``expected_tools`` is an unordered set equality
on the names of the tools called (``tools.set``), ``expected_elements`` a
case-insensitive substring check each (``response.icontains``), ``category`` a
tag for ``--tag``. Lines are carried over so annotations point at the query.

Tools are sent to the endpoint only from ``agent.tools``; a file whose queries
expect tool calls must say which (or ``tools: []`` when the agent brings its
own), or a model endpoint would be asked to call tools it was never offered.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from behavegate.contract import rules as f
from behavegate.contract.datasets import Origin, locate, read_dataset
from behavegate.contract.yaml_lines import LineMap
from behavegate.errors import ContractError, Problem

QUERY_KEYS = ("id", "query", "expected_tools", "expected_elements", "category", "expect")
TOP_KEYS = ("version", "agent", "queries", "defaults", "gates", "include", "judge")


def is_golden(raw: dict[str, Any]) -> bool:
    return "queries" in raw and "scenarios" not in raw


def to_contract(
    raw: dict[str, Any], lines: LineMap, path: Path | None = None, root: Path | None = None
) -> tuple[dict[str, Any], dict[int, Origin], dict[str, str]]:
    """The contract the file means; where each scenario made from a golden set's row came from
    (``queries: golden.csv``, read beside the contract at ``path``, inside ``root``); and the
    golden set's digest by its name, kept as an included file's is."""
    problems: list[Problem] = []
    for key in raw:
        if key not in TOP_KEYS:
            problems.append(f.unknown_key(str(key), key, TOP_KEYS, lines.of_key(raw, key)))
    if raw.get("version", 2) != 2:
        problems.append(Problem("a golden-query file is version 2", "version", lines.of_key(raw, "version")))
    queries = raw.get("queries")
    origins: dict[int, Origin] = {}
    digests: dict[str, str] = {}
    if isinstance(queries, str) and path is not None and root is not None:
        try:
            dataset = read_dataset(queries, path.parent, root)
        except f.Bad as bad:
            raise ContractError([*problems, Problem(bad.problem.text, "queries", lines.of_key(raw, "queries"))]) from None
        except ContractError as error:
            raise ContractError([*problems, *error.problems]) from None
        queries = list(dataset.queries)
        origins = dict(enumerate(dataset.origins))
        digests[raw["queries"]] = dataset.digest
    if not isinstance(queries, list) or not queries:
        problems.append(
            Problem(
                "queries must be a non-empty list, or name a golden set file (.csv, .jsonl)",
                "queries",
                lines.of_key(raw, "queries"),
            )
        )
        raise ContractError(problems)
    scenarios: list[Any] = []
    for index, query in enumerate(queries):
        where, line = f"queries[{index}]", lines.of_item(queries, index)
        if not isinstance(query, dict):
            problems.append(Problem(f"{where} must be a mapping", where, line))
            continue
        for key in query:
            if key not in QUERY_KEYS:
                problems.append(f.unknown_key(f"{where}.{key}", key, QUERY_KEYS, lines.of_key(query, key)))
        scenarios.append(_scenario(query, index, lines, problems))
    problems += _undeclared_tools(raw, queries, lines)
    if problems:
        raise ContractError([locate(problem, origins) for problem in problems])
    contract: dict[str, Any] = {key: raw[key] for key in ("agent", "defaults", "gates", "include", "judge") if key in raw}
    contract.setdefault("agent", {})
    contract.update(version=2, scenarios=scenarios)
    keys = {"version": lines.of_key(raw, "version"), "scenarios": lines.of_key(raw, "queries")}
    _register(
        lines,
        contract,
        {**keys, **{k: lines.of_key(raw, k) for k in ("agent", "defaults", "gates", "include", "judge")}},
        lines.of(raw),
    )
    lines.items[id(scenarios)] = [lines.of_item(queries, i) or 0 for i in range(len(scenarios))]
    return contract, origins, digests


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


def _scenario(query: dict[str, Any], index: int, lines: LineMap, problems: list[Problem]) -> dict[str, Any]:
    line = lines.of(query)
    scenario: dict[str, Any] = {"id": query.get("id", f"query-{index + 1:03d}"), "prompt": query.get("query")}
    key_lines = {"id": lines.of_key(query, "id"), "prompt": lines.of_key(query, "query")}
    if "category" in query:
        scenario["tags"] = [query["category"]]
        key_lines["tags"] = lines.of_key(query, "category")
    # Any version-2 `expect` keys the entry writes (safety included), with the
    # generated checks merged in; the reader reports a key written twice.
    written: dict[str, Any] = query["expect"] if isinstance(query.get("expect"), dict) else {}
    expect: Any = dict(written)
    expect_lines: dict[str, int | None] = {key: lines.of_key(written, key) for key in written}
    if "expect" in query and not isinstance(query["expect"], dict):
        expect = query["expect"]  # the reader names the problem at its line
    for key, block, generated in (("expected_tools", "tools", "set"), ("expected_elements", "response", "icontains")):
        if key not in query or not isinstance(expect, dict):
            continue
        mine: dict[str, Any] = expect[block] if isinstance(expect.get(block), dict) else {}
        merged = {**mine, generated: query[key]}
        block_lines = {k: lines.of_key(mine, k) for k in mine}
        if generated in mine:
            where = f"queries[{index}].expect.{block}.{generated}"
            problems.append(
                Problem(
                    f"{where} is also set by queries[{index}].{key}; write one of the two", where, lines.of_key(mine, generated)
                )
            )
        expect[block] = merged
        expect_lines[block] = lines.of_key(query, key)
        _register(lines, merged, {**block_lines, generated: lines.of_key(query, key)}, line)
        if key == "expected_tools" and isinstance(query[key], list):
            lines.items.setdefault(id(query[key]), [])
    scenario["expect"] = expect
    key_lines["expect"] = lines.of_key(query, "expect") or line
    if isinstance(expect, dict):
        _register(lines, expect, expect_lines, line)
    _register(lines, scenario, key_lines, line)
    return scenario


def _register(lines: LineMap, container: dict[str, Any], key_lines: dict[str, int | None], start: int | None) -> None:
    lines.starts[id(container)] = start or 0
    lines.keys[id(container)] = {key: value for key, value in key_lines.items() if value is not None}
