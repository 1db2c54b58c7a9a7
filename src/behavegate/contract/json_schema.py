"""The JSON Schema of behavior contracts (versions 1 and 2), built from the
same key tables the reader uses (``expect`` from the check rows, ``checks.py``),
so the two cannot drift apart. Editors use the shipped file
(``behavegate/contract.schema.json``, also in ``docs/``) for completion and inline
errors; ``python -m behavegate.contract.json_schema`` rewrites both copies.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from behavegate.contract import golden_queries
from behavegate.contract.checks import CHECKS
from behavegate.contract.expect import EXPECT_KEYS
from behavegate.contract.load import AGENT_KEYS, CAPABILITIES, SCENARIO_KEYS, TOOL_KEYS, TOP_KEYS
from behavegate.contract.schema_parts import NAMES, RATE, SAFE_ID, TEXT, TEXTS, TOOL_NAME
from behavegate.contract.schema_parts import block as _block
from behavegate.contract.v2 import (
    DEFAULT_KEYS,
    GATE_KEYS,
    GATES,
    MESSAGE_ROLES,
    MISSING_TOOL_CALLS,
    PRICING_KEYS,
    THRESHOLD_MODES,
    V2_KEYS,
    WIRE_APIS,
)
from behavegate.contract.v2_http import CALLS_KEYS, EXECUTED_KEYS, HTTP_KEYS
from behavegate.contract.v2_http import RESPONSE_KEYS as HTTP_RESPONSE_KEYS
from behavegate.contract.v2_judge import JUDGE_TARGET_KEYS
from behavegate.contract.v2_mcp import MCP_REQUIRED, MCP_URLS
from behavegate.contract.v2_run import SEQUENTIAL_KEYS
from behavegate.http_mapping import PLACEHOLDERS, USAGE_KEYS
from behavegate.limits import (
    MAX_JUDGE_REQUESTS_CEILING,
    MAX_OUTPUT_TOKENS,
    MAX_PRICE_PER_MTOK,
    MAX_RUN_SCENARIOS,
    MAX_RUNS,
    MAX_TIMEOUT_SECONDS,
    MAX_TOOLS,
    MAX_TURNS,
    V2_MAX_SCENARIOS,
)

RESULT = {"oneOf": [{"required": ["content"]}, {"required": ["error"]}]}
REPLY = {"type": "object", "additionalProperties": False, "properties": {"content": {}, "error": TEXT}, **RESULT}
# A rule answers with content or error, or with a sequence of results (then content or error, or the last again).
BEHAVIOUR = {
    "content": {},
    "error": TEXT,
    "results": {"type": "array", "minItems": 1, "items": REPLY},
    "set": {"type": "object"},
}
ANSWERS = {
    "oneOf": [
        {"required": ["content"], "not": {"required": ["error"]}},
        {"required": ["error"], "not": {"required": ["content"]}},
        {"required": ["results"], "not": {"anyOf": [{"required": ["content"]}, {"required": ["error"]}]}},
    ]
}
TOOL_RESULTS = {
    "oneOf": [
        {"type": "object", "propertyNames": TOOL_NAME},  # {tool_name: result}
        {
            "type": "array",
            "minItems": 1,
            "items": {
                "oneOf": [
                    {
                        "type": "object",
                        "required": ["name"],
                        "additionalProperties": False,
                        "properties": {"name": TOOL_NAME, "arguments": {"type": "object"}, **BEHAVIOUR},
                        "anyOf": ANSWERS["oneOf"],
                    },
                    {
                        "type": "object",
                        "required": ["default"],
                        "additionalProperties": False,
                        "properties": {
                            "default": {
                                "type": "object",
                                "additionalProperties": False,
                                "properties": BEHAVIOUR,
                                "anyOf": ANSWERS["oneOf"],
                            }
                        },
                    },
                ]
            },
        },
    ]
}


def _http() -> dict[str, Any]:
    """``agent.http``: a JSON request template and the paths of the answer's evidence."""
    path = {"type": "string", "minLength": 1, "description": "answer, data.reply, items[0].text, $"}
    where = {
        "type": "object",
        "minProperties": 1,
        "description": "only the items whose value at each path equals this",
        "additionalProperties": {"type": ["string", "number", "boolean", "null"]},
    }
    keyed = {key: where if key == "where" else path for key in EXECUTED_KEYS}
    calls = _block(keyed, CALLS_KEYS, required=["path", "name"])
    executed = _block(keyed, EXECUTED_KEYS, required=["path", "name"])
    response = _block(
        {
            "content": path,
            "tool_calls": {**calls, "type": "object"},
            "executed_calls": {**executed, "type": "object"},
            "refusal": path,
            "sources": path,
            "complete": {"oneOf": [path, {"const": True}]},
            "usage": {**_block({key: path for key in USAGE_KEYS}, USAGE_KEYS), "type": "object"},
        },
        HTTP_RESPONSE_KEYS,
        anyOf=[{"required": ["content"]}, {"required": ["tool_calls"]}, {"required": ["executed_calls"]}],
    )
    request = {"type": "object", "description": "the body; placeholders: " + ", ".join(f"{{{{{p}}}}}" for p in PLACEHOLDERS)}
    return {
        **_block({"request": request, "response": {**response, "type": "object"}}, HTTP_KEYS),
        "type": "object",
        "required": list(HTTP_KEYS),
    }


def _expect(version: int) -> dict[str, Any]:
    """The properties of ``expect``: each check of ``version`` or earlier (and the keys read
    with it) with the schema its row gives, under its block ("tools") or on its own ("refusal")."""
    blocks: dict[str, dict[str, Any]] = {}
    alone: dict[str, Any] = {}
    for check in (check for check in CHECKS if check.version <= version):
        for key, fragment in ((check.key, check.schema), *((extra.key, extra.schema) for extra in check.extras)):
            head, _, name = key.partition(".")
            if name:
                blocks.setdefault(head, {})[name] = fragment
            else:
                alone[head] = fragment
    return {**alone, **{head: _block(inner, tuple(inner)) for head, inner in blocks.items()}}


def build(version: int) -> dict[str, Any]:
    v2 = version == 2

    def keys(block: str, v1: tuple[str, ...]) -> tuple[str, ...]:
        return v1 + V2_KEYS[block] if v2 else v1

    expect = {**_block(_expect(version), keys("expect", EXPECT_KEYS)), "type": "object"}
    run_settings = {
        "runs": {"type": "integer", "minimum": 1, "maximum": MAX_RUNS},
        "min_pass_rate": RATE,
        "gate": {"enum": list(GATES)},
        "max_turns": {"type": "integer", "minimum": 1, "maximum": MAX_TURNS},
        "sequential": {
            "oneOf": [
                {"type": "boolean"},
                {
                    "type": "object",
                    "additionalProperties": False,
                    "properties": {
                        key: {"type": "number", "exclusiveMinimum": 0, "exclusiveMaximum": 0.5} for key in SEQUENTIAL_KEYS
                    },
                },
            ]
        },
    }
    scenario = _block(
        {
            "id": SAFE_ID,
            "prompt": TEXT,
            "system_prompt": TEXT,
            "available_tools": NAMES,
            "expect": expect,
            "messages": {
                "type": "array",
                "minItems": 1,
                "items": {
                    "type": "object",
                    "required": ["role", "content"],
                    "additionalProperties": False,
                    "properties": {"role": {"enum": list(MESSAGE_ROLES)}, "content": TEXT, "name": TEXT, "tool_call_id": TEXT},
                },
            },
            "tags": {"type": ["array", "null"], "items": SAFE_ID, "uniqueItems": True},
            "tool_results": TOOL_RESULTS,
            "call": {  # agent.api: mcp
                "type": "object",
                "required": ["tool"],
                "additionalProperties": False,
                "properties": {"tool": TOOL_NAME, "arguments": {"type": "object"}},
            },
            "state": {"type": "object"},
            "turns": {
                "type": "array",
                "minItems": 1,
                "items": {
                    "type": "object",
                    "required": ["user"],
                    "additionalProperties": False,
                    "properties": {"user": TEXT, "expect": expect},
                },
            },
            "simulated_user": {
                "type": "object",
                "required": ["persona", "goal"],
                "additionalProperties": False,
                "properties": {"persona": TEXT, "goal": TEXT, "max_turns": {"type": "integer", "minimum": 1, "maximum": 10}},
            },
            "canaries": TEXTS,
            "parameters": {
                "type": "object",
                "not": {"anyOf": [{"required": [k]} for k in ("model", "messages", "tools", "stream")]},
            },
            **run_settings,
        },
        keys("scenario", SCENARIO_KEYS),
        required=["id", "expect"],
    )
    scenario["type"] = "object"
    scenario["oneOf" if v2 else "allOf"] = (
        [
            {"required": ["prompt"], "not": {"required": ["turns"]}},
            {"required": ["messages"], "not": {"required": ["turns"]}},
            {"required": ["turns"], "not": {"required": ["prompt"]}},
            # an MCP server as the target (agent.api: mcp) is called, not prompted
            {
                "required": ["call"],
                "not": {"anyOf": [{"required": ["prompt"]}, {"required": ["messages"]}, {"required": ["turns"]}]},
            },
        ]
        if v2
        else [{"required": ["prompt"]}]
    )
    agent = _block(
        {
            "endpoint": TEXT,
            "model": TEXT,
            "timeout_seconds": {"type": "number", "exclusiveMinimum": 0, "maximum": MAX_TIMEOUT_SECONDS},
            "capabilities": {"type": ["array", "null"], "items": {"enum": list(CAPABILITIES)}, "uniqueItems": True},
            "tools": {
                "type": ["array", "null"],
                "maxItems": MAX_TOOLS,
                "items": {
                    "type": "object",
                    "required": list(TOOL_KEYS),
                    "additionalProperties": False,
                    "properties": {"name": TOOL_NAME, "description": TEXT, "parameters": {"type": "object"}},
                },
            },
            "parameters": {
                "type": "object",
                "not": {"anyOf": [{"required": [k]} for k in ("model", "messages", "tools", "stream")]},
            },
            "missing_tool_calls": {"enum": list(MISSING_TOOL_CALLS)},
            "stream": {"type": "boolean"},
            "api": {"enum": list(WIRE_APIS)},
            "pricing": {
                "type": "object",
                "required": list(PRICING_KEYS),
                "additionalProperties": False,
                "properties": {key: {"type": "number", "minimum": 0, "maximum": MAX_PRICE_PER_MTOK} for key in PRICING_KEYS},
            },
            "http": _http(),
            "tools_from": {
                "type": "object",
                "required": ["mcp"],
                "additionalProperties": False,
                "properties": {"mcp": {"type": "string", "pattern": "^https?://"}},
            },
            "mcp": {
                "type": "object",
                "required": list(MCP_REQUIRED),
                "additionalProperties": False,
                "properties": {"serve": {"type": "boolean"}, "url": {"enum": list(MCP_URLS)}},
            },
        },
        keys("agent", AGENT_KEYS),
    )
    agent["type"] = "object"
    top = _block(
        {
            "version": {"const": version},
            "agent": agent,
            "scenarios": {
                "type": "array",
                "minItems": 1,
                "maxItems": V2_MAX_SCENARIOS if v2 else MAX_RUN_SCENARIOS,
                "items": scenario,
            },
            "defaults": _block(run_settings, DEFAULT_KEYS),
            "gates": _block(
                {
                    "min_pass_rate": RATE,
                    "threshold_mode": {"enum": list(THRESHOLD_MODES)},
                    "latency_p95_ms": {"type": "number", "exclusiveMinimum": 0},
                    "by_tag": {
                        "type": "object",
                        "propertyNames": SAFE_ID,
                        "additionalProperties": {
                            "type": "object",
                            "minProperties": 1,
                            "additionalProperties": False,
                            "properties": {"min_pass_rate": RATE, "min_score": RATE},
                        },
                    },
                    "min_score": RATE,
                },
                GATE_KEYS,
            ),
            "include": {"type": "array", "items": TEXT},
            "judge": _block(
                {
                    "endpoint": TEXT,
                    "model": TEXT,
                    "timeout_seconds": {"type": "number", "exclusiveMinimum": 0, "maximum": MAX_TIMEOUT_SECONDS},
                    "max_requests": {"type": "integer", "minimum": 1, "maximum": MAX_JUDGE_REQUESTS_CEILING},
                    "max_tokens": {"type": "integer", "minimum": 1, "maximum": MAX_OUTPUT_TOKENS},
                    "parameters": {
                        "type": "object",
                        "not": {
                            "anyOf": [{"required": [k]} for k in ("model", "messages", "stream", "temperature", "max_tokens")]
                        },
                    },
                },
                JUDGE_TARGET_KEYS,
            ),
        },
        keys("top", TOP_KEYS),
        required=["version", "agent", "scenarios"],
    )
    top["type"] = "object"
    return top


def build_golden() -> dict[str, Any]:
    """A golden-query file: read as a version-2 contract, so agent, defaults and
    gates are version 2's (contract/golden_queries.py)."""
    v2 = build(2)["properties"]
    query = _block(
        {
            "id": SAFE_ID,
            "query": TEXT,
            "expected_tools": {"type": "array", "items": TOOL_NAME},
            "expected_elements": {"type": "array", "items": TEXT},
            "category": SAFE_ID,
            "expect": {**v2["scenarios"]["items"]["properties"]["expect"], "type": "object"},
        },
        golden_queries.QUERY_KEYS,
        required=["query"],
    )
    query["type"] = "object"
    top = _block(
        {
            "version": {"const": 2},
            "agent": v2["agent"],
            "defaults": v2["defaults"],
            "gates": v2["gates"],
            "queries": {
                "oneOf": [
                    {"type": "array", "minItems": 1, "items": query},
                    # a golden set's file (contract/datasets.py), its rows checked when it is read
                    {"type": "string", "pattern": r"(?i)\.(csv|jsonl)$"},
                ]
            },
            "include": v2["include"],
            "judge": v2["judge"],
        },
        golden_queries.TOP_KEYS,
        required=["queries"],
    )
    top["type"] = "object"
    return top


def schema() -> dict[str, Any]:
    # No "$id": the schema has no canonical URL; editors point at the file itself.
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "behavegate behavior contract",
        "description": "Version 1 is the skylos-compatible format; version 2 adds behavegate's extensions; "
        "a golden-query file (queries: [...]) is read as a version-2 contract.",
        "oneOf": [build(1), build(2), build_golden()],
    }


def render() -> str:
    return json.dumps(schema(), indent=2, sort_keys=True) + "\n"


def main() -> int:
    root = Path(__file__).resolve().parents[3]
    for target in (Path(__file__).parent / "contract.schema.json", root / "docs" / "contract.schema.json"):
        target.write_text(render(), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
