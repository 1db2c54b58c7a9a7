"""Schema regexes (``pattern``, ``patternProperties``) under a time budget in
``tools.arguments_valid``: they run on agent-supplied strings, and ``re`` backtracks
without bound while holding the GIL.

The run tests use a subprocess with a timeout: on code without the budget the run
hangs for minutes instead of failing."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import types
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from helpers import ROOT, spy_on_timeouts

from behavegate.contract.load import parse_contract_text
from behavegate.errors import ContractError
from behavegate.model import ToolCall

NEAR_MISS = "a" * 30 + "b"  # `(a|a)+$` on it: 2**30 paths under `re`
EVIL = "(a|a)+$"

# (tool parameters, arguments) pairs where only a budget keeps the check short
CATASTROPHIC: dict[str, tuple[dict[str, Any], dict[str, Any]]] = {
    "pattern": ({"type": "object", "properties": {"q": {"type": "string", "pattern": EVIL}}}, {"q": NEAR_MISS}),
    "pattern_properties": ({"type": "object", "patternProperties": {EVIL: {"type": "string"}}}, {NEAR_MISS: "v"}),
    "additional_properties": ({"type": "object", "patternProperties": {EVIL: {}}, "additionalProperties": False}, {NEAR_MISS: 1}),
    "property_names": ({"type": "object", "propertyNames": {"pattern": EVIL}}, {NEAR_MISS: 1}),
    "dependent_schemas": (
        {"type": "object", "dependentSchemas": {"k": {"properties": {"q": {"pattern": EVIL}}}}},
        {"k": 1, "q": NEAR_MISS},
    ),
    "nested_ref": (
        {
            "$defs": {"s": {"type": "string", "pattern": EVIL}},
            "type": "object",
            "properties": {"q": {"type": "array", "items": {"$ref": "#/$defs/s"}}},
        },
        {"q": ["ok", NEAR_MISS]},
    ),
    "draft_2019": (
        {"$schema": "https://json-schema.org/draft/2019-09/schema", "type": "object", "properties": {"q": {"pattern": EVIL}}},
        {"q": NEAR_MISS},
    ),
}


def _tool(name: str, parameters: dict[str, Any]) -> str:
    return f"    - {{name: {name}, description: d, parameters: {json.dumps(parameters)}}}\n"


def _observation(scenario_id: str, calls: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "id": scenario_id,
        "response": "done",
        "finish_reason": "stop",
        "response_complete": True,
        "tool_calls_complete": True,
        "tool_calls": calls,
    }


def _run(tmp_path: Path, contract: str, observations: list[dict[str, Any]]) -> tuple[int, dict[str, Any]]:
    (tmp_path / "contract.yml").write_text(contract)
    (tmp_path / "obs.json").write_text(json.dumps({"version": 2, "scenarios": observations}))
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "behavegate",
            "test",
            "contract.yml",
            "--observations",
            "obs.json",
            "--format",
            "json",
            "--no-artifacts",
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=30,
    )
    return done.returncode, json.loads(done.stdout)


@pytest.mark.slow  # scale or timing: `make test-slow`
def test_a_catastrophic_schema_pattern_is_incomplete_and_the_run_goes_on(tmp_path: Path) -> None:
    tools = "".join(_tool(name, parameters) for name, (parameters, _) in CATASTROPHIC.items())
    tools += _tool("digits", {"type": "object", "properties": {"n": {"type": "string", "pattern": "^[0-9]+$"}}})
    scenarios = "".join(
        f"  - {{id: {name}, prompt: p, expect: {{tools: {{arguments_valid: true}}}}}}\n"
        for name in [*CATASTROPHIC, "fine", "wrong"]
    )
    observations = [_observation(name, [{"name": name, "arguments": arguments}]) for name, (_, arguments) in CATASTROPHIC.items()]
    observations += [
        _observation("fine", [{"name": "digits", "arguments": {"n": "42"}}]),
        _observation("wrong", [{"name": "digits", "arguments": {"n": "4x"}}]),
    ]
    code, report = _run(tmp_path, f"version: 2\nagent:\n  model: m\n  tools:\n{tools}scenarios:\n{scenarios}", observations)
    from behavegate.limits import ARGUMENT_REGEX_BUDGET_MS  # after the run: without the budget, the run is what fails (times out)

    # `re` needs minutes for any one of them (the child is killed at 30 s): each ends at its budget
    statuses = {s["id"]: s["status"] for s in report["scenarios"]}
    assert code == 1 and statuses == {**dict.fromkeys(CATASTROPHIC, "incomplete"), "fine": "pass", "wrong": "fail"}
    for scenario in report["scenarios"][: len(CATASTROPHIC)]:
        (verdict,) = scenario["assertions"]
        assert verdict["message"] == f"argument schema pattern exceeded its time budget of {ARGUMENT_REGEX_BUDGET_MS} ms"
        assert verdict["observed"] == {"call_count": 1, "call_index": 0, "tool": scenario["id"]}
    wrong = report["scenarios"][-1]["assertions"][0]
    assert (
        wrong["message"]
        == "expected arguments valid against the declared schemas, observed 1 problem(s): digits: n: '4x' does not match '^[0-9]+$'"
    )


def test_the_calls_of_one_attempt_share_one_budget(monkeypatch: pytest.MonkeyPatch) -> None:
    import regex

    from behavegate.judge.argument_schemas import check_calls

    parameters, arguments = CATASTROPHIC["pattern"]
    timeouts = spy_on_timeouts(monkeypatch, regex)
    checks = check_calls([ToolCall("t", arguments)] * 5, {"t": parameters}, budget_ms=100)
    assert [c.incomplete for c in checks] == ["argument schema pattern exceeded its time budget of 100 ms"] * 5
    # One budget, not five: the first search is given it, and spends it; the rest are not run.
    assert len(timeouts) == 1 and 0 < timeouts[0] <= 0.1


# Normal schemas: the same problems, word for word, as stock jsonschema (what the reports said before).
ORDINARY = [
    ({"properties": {"q": {"pattern": "^[a-z]+$"}}}, {"q": "abc"}),
    ({"properties": {"q": {"pattern": "^[a-z]+$"}}}, {"q": "ABC"}),
    ({"properties": {"q": {"pattern": r"(?i)^x\d"}}}, {"q": "X1"}),
    ({"patternProperties": {"^s_": {"type": "string"}, "^n_": {"type": "integer"}}}, {"s_a": 1, "n_b": "x", "other": 2}),
    ({"patternProperties": {"^s_": {}}, "additionalProperties": False}, {"s_a": 1, "zz": 2, "yy": 3}),
    ({"patternProperties": {"^s_": {}, "^t_": {}}, "additionalProperties": False}, {"zz": 2}),
    ({"properties": {"a": {}}, "additionalProperties": {"type": "integer"}}, {"a": 1, "b": "x"}),
    ({"patternProperties": {"^s_": {}}, "unevaluatedProperties": False}, {"s_a": 1, "zz": 2}),
    ({"allOf": [{"patternProperties": {"^s_": {}}}], "unevaluatedProperties": {"type": "integer"}}, {"s_a": "x", "zz": "y"}),
    (
        {
            "$schema": "https://json-schema.org/draft/2019-09/schema",
            "patternProperties": {"^s_": {}},
            "unevaluatedProperties": False,
        },
        {"s_a": 1, "zz": 2},
    ),
    ({"propertyNames": {"pattern": "^[a-z]+$"}}, {"ok": 1, "Bad": 2}),
    ({"dependentSchemas": {"k": {"properties": {"q": {"pattern": "^y"}}}}}, {"k": 1, "q": "n"}),
    ({"$schema": "http://json-schema.org/draft-07/schema#", "patternProperties": {"^x": {"type": "integer"}}}, {"xa": "s"}),
]


@pytest.mark.parametrize(("schema", "arguments"), ORDINARY)
def test_ordinary_patterns_judge_exactly_as_jsonschema_does(schema: dict[str, Any], arguments: dict[str, Any]) -> None:
    from behavegate.judge.argument_schemas import check_calls

    stock = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)(schema)
    expected = tuple(
        f"{'/'.join(str(p) for p in e.absolute_path) or '(root)'}: {e.message}"
        for e in sorted(stock.iter_errors(arguments), key=lambda e: list(e.absolute_path))
    )
    (check,) = check_calls([ToolCall("t", arguments)], {"t": {"type": "object", **schema}})
    assert check.incomplete is None and check.problems == expected


def test_no_keyword_of_any_draft_reaches_the_re_module() -> None:
    # Structural guard for jsonschema upgrades: no keyword, nor any jsonschema helper it calls, searches with `re`.
    from behavegate.judge.argument_schemas import budgeted

    def reaches_re(function: Any, seen: set[Any]) -> bool:
        if function in seen or not isinstance(function, types.FunctionType):
            return False
        seen.add(function)
        names = function.__code__.co_names + tuple(
            n for c in function.__code__.co_consts if isinstance(c, types.CodeType) for n in c.co_names
        )
        if "re" in names and function.__globals__.get("re") is re:
            return True
        helpers = (function.__globals__.get(name) for name in names)
        return any(reaches_re(h, seen) for h in helpers if getattr(h, "__module__", "").startswith("jsonschema"))

    drafts = [
        jsonschema.Draft3Validator,
        jsonschema.Draft4Validator,
        jsonschema.Draft6Validator,
        jsonschema.Draft7Validator,
        jsonschema.Draft201909Validator,
        jsonschema.Draft202012Validator,
    ]
    for draft in drafts:
        assert any(reaches_re(f, set()) for f in draft.VALIDATORS.values())  # the guard can see the stock ones
        assert [k for k, f in budgeted(draft).VALIDATORS.items() if reaches_re(f, set())] == [], draft.__name__


def test_format_regex_compiles_nothing_the_agent_sends() -> None:
    # No format checker is enabled: `format: regex` is an annotation, so an agent's pattern string is never compiled.
    from behavegate.judge.argument_schemas import check_calls

    schema = {"type": "object", "properties": {"p": {"type": "string", "format": "regex"}}}
    checks = check_calls([ToolCall("t", {"p": "(unclosed"}), ToolCall("t", {"p": EVIL})], {"t": schema})
    assert [(c.problems, c.incomplete) for c in checks] == [((), None), ((), None)]


# --- the contract reader ----------------------------------------------------------------------

HEAD = "version: {version}\nagent:\n  model: m\n  tools:\n    - name: t\n      description: d\n      parameters:\n        type: object\n"
TAIL = "scenarios:\n  - {id: s, prompt: p, expect: {refusal: false}}\n"


def _load(version: int, body: str) -> Any:
    return parse_contract_text(HEAD.format(version=version) + body + TAIL, ROOT / "contract.yml", ROOT)


@pytest.mark.parametrize(
    ("body", "path", "line"),
    [
        (
            "        properties:\n          q: {type: string, pattern: '(unclosed'}\n",
            "agent.tools[0].parameters.properties.q.pattern",
            10,
        ),
        ("        patternProperties:\n          '[a-': {type: string}\n", "agent.tools[0].parameters.patternProperties.[a-", 10),
        (
            "        items:\n          - type: string\n            pattern: 'a{2,1}'\n",
            "agent.tools[0].parameters.items[0].pattern",
            11,
        ),
    ],
)
def test_a_schema_pattern_that_does_not_compile_is_a_contract_error_with_its_line(body: str, path: str, line: int) -> None:
    with pytest.raises(ContractError) as error:
        _load(2, body)
    (problem,) = error.value.problems
    assert problem.text.startswith(f"{path} is not a valid regular expression: ")
    assert problem.line == line


def test_version_1_passes_parameters_through_untouched() -> None:
    contract = _load(1, "        properties:\n          q: {type: string, pattern: '(unclosed'}\n")
    assert contract.agent.tools[0].parameters["properties"]["q"]["pattern"] == "(unclosed"


def test_patterns_in_data_and_names_are_not_schema_patterns() -> None:
    # `pattern` as a property name, or inside `const`/`examples`, is not a regex.
    body = "        properties:\n          pattern: {const: {pattern: '('}, examples: [{pattern: '('}]}\n"
    assert _load(2, body).agent.tools[0].parameters["properties"]["pattern"]["const"] == {"pattern": "("}
