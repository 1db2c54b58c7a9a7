"""Oxy test files (``*.test.yml``) read as they are, as a version-2 contract.

The format is Oxy's ``TestFileConfig`` (oxy-hq/oxy, crates/core/src/config/test_config.rs
and json-schemas/agent-test.json, read at commit 52d7e74): top-level ``name``,
``target``, ``settings`` (``concurrency`` default 5, ``runs`` default 3,
``judge_model``) and ``cases`` (``name``, ``prompt``, ``expected``, ``tags``,
``tool``); every level refuses unknown keys, as Oxy's ``deny_unknown_fields`` does.

Each case becomes a scenario judged against ``expected`` (``response.judge``);
``tool`` becomes ``tools.required`` (Oxy: "assert that this tool was invoked").
The file's own paths are checked here, so every problem names the Oxy key and its
line; what is left is translated and read by the one contract reader, like a
golden-query file. ``target`` names an Oxy agent file: behavegate reaches the
agent through ``--endpoint``, so it is kept for reports only.
"""

from __future__ import annotations

import re
from pathlib import PurePath
from typing import Any

from behavegate.contract import rules as f
from behavegate.contract.yaml_lines import LineMap
from behavegate.errors import ContractError
from behavegate.limits import MAX_CONCURRENCY, MAX_RUNS
from behavegate.magnitude import shown
from behavegate.oxy_file import OxyCase, OxyFile

SUFFIXES = (".test.yml", ".test.yaml")
TOP_KEYS = ("name", "target", "settings", "cases")
SETTINGS_KEYS = ("concurrency", "runs", "judge_model")
CASE_KEYS = ("name", "prompt", "expected", "tags", "tool")
# Oxy's defaults (test_config.rs: default_test_concurrency, default_test_runs).
DEFAULT_RUNS = 3
DEFAULT_CONCURRENCY = 5

_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def is_oxy_path(path: str | PurePath) -> bool:
    return str(path).endswith(SUFFIXES)


def is_oxy(raw: dict[str, Any], path: str | PurePath) -> bool:
    """An Oxy test file: named ``*.test.yml``, or shaped like one (``cases``, no ``scenarios``)."""
    if is_oxy_path(path):
        return "scenarios" not in raw and "queries" not in raw
    return "cases" in raw and not {"scenarios", "queries", "version"} & set(raw)


_CASES_LINE = re.compile(r"(?m)^cases[ \t]*:")


def declares_cases(source: str) -> bool:
    """Is this text meant as an Oxy test file (a top-level ``cases``)? Discovery asks it
    of every ``*.test.yml`` it finds: a file that is not (a CI workflow, a fixture) is
    skipped; one that is, however malformed, is read and its problems reported. A file
    whose YAML does not parse is meant as one when a line starts with ``cases:``."""
    from behavegate.contract.yaml_lines import YamlRefused, load_yaml
    from behavegate.limits import V2_INPUT_MAX_VALUES

    try:
        raw, _ = load_yaml(source, max_values=V2_INPUT_MAX_VALUES)
    except YamlRefused:
        return _CASES_LINE.search(source) is not None
    return isinstance(raw, dict) and "cases" in raw


def inferred_target(path: str | PurePath) -> str | None:
    """Oxy's target when the file names none: ``sales.agentic.test.yml`` -> ``sales.agentic.yml``."""
    name = PurePath(path).name
    base = next((name[: -len(suffix)] for suffix in SUFFIXES if name.endswith(suffix)), None)
    return f"{base}.yml" if base else None


def to_contract(raw: dict[str, Any], lines: LineMap, file: str | PurePath = "") -> tuple[dict[str, Any], OxyFile]:
    """The file as a version-2 contract (lines registered), and what else it says.

    The agent's ``model`` (sent with every request) is the target, as written or as Oxy
    infers it from the file name, so a gateway in front of several agents can route on it."""
    c = f.Collector()
    _unknown_keys(c, raw, TOP_KEYS, "", lines)
    name = _optional_text(c, raw, "name", "name", lines)
    target = _optional_text(c, raw, "target", "target", lines)
    runs, concurrency, judge_model = _settings(c, raw, lines)
    cases_raw = raw.get("cases")
    cases_line = lines.of_key(raw, "cases")
    if "cases" not in raw:
        c.add("cases is required: a list of {prompt, expected}", "cases", lines.of(raw))
        raise ContractError(c.problems)
    if not isinstance(cases_raw, list) or not cases_raw:
        c.add("cases must be a non-empty list of {prompt, expected}", "cases", cases_line)
        raise ContractError(c.problems)
    scenarios: list[dict[str, Any]] = []
    cases: list[OxyCase] = []
    taken: set[str] = set()
    for index, item in enumerate(cases_raw):
        path, line = f"cases[{index}]", lines.of_item(cases_raw, index)
        if not isinstance(item, dict):
            c.add(f"{path} must be a mapping with prompt and expected", path, line)
            continue
        mark = c.mark()
        _unknown_keys(c, item, CASE_KEYS, path, lines)
        case_name = _optional_text(c, item, "name", f"{path}.name", lines)
        prompt = _required_text(c, item, "prompt", path, lines)
        expected = _required_text(c, item, "expected", path, lines)
        tags = _tags(c, item, path, lines)
        tool = None
        if item.get("tool") is not None:
            tool = c.take(f.tool_name, item["tool"], f"{path}.tool", lines.of_key(item, "tool"))
        if not c.clean_since(mark) or prompt is None or expected is None:
            continue
        scenario_id = _scenario_id(case_name, index, taken)
        taken.add(scenario_id)
        cases.append(OxyCase(index=index, name=case_name, prompt=prompt, scenario_id=scenario_id))
        scenarios.append(_scenario(item, scenario_id, prompt, expected, tags, tool, lines, line))
    if c.problems:
        raise ContractError(c.problems)
    model = target or inferred_target(file)
    # Chat endpoints leave tool_calls out when no tool was called: for `tool:` that means
    # "not invoked" (a failure), never a pass.
    agent: dict[str, Any] = {"missing_tool_calls": "none", **({"model": model} if model else {})}
    contract: dict[str, Any] = {"version": 2, "agent": agent, "defaults": {"runs": runs}, "scenarios": scenarios}
    settings_line = lines.of_key(raw, "settings") or lines.of(raw)
    if judge_model is not None:  # the judge's model, as the contract's judge block sets it (--judge-model overrides)
        contract["judge"] = {"model": judge_model}
        block = raw["settings"]
        _register(lines, contract["judge"], {"model": lines.of_key(block, "judge_model")}, settings_line)
    _register(lines, contract["defaults"], {"runs": settings_line}, settings_line)
    at = lines.of_key(raw, "target") or lines.of(raw)
    _register(lines, contract["agent"], {"model": at, "missing_tool_calls": at}, lines.of(raw))
    key_lines = {"scenarios": cases_line, "defaults": settings_line, "agent": lines.of(raw), "judge": settings_line}
    _register(lines, contract, key_lines, lines.of(raw))
    lines.items[id(scenarios)] = [lines.of_item(cases_raw, case.index) or 0 for case in cases]
    meta = OxyFile(name=name, target=target, runs=runs, concurrency=concurrency, judge_model=judge_model, cases=tuple(cases))
    return contract, meta


def _settings(c: f.Collector, raw: dict[str, Any], lines: LineMap) -> tuple[int, int, str | None]:
    block = raw.get("settings")
    if block is None:  # absent or `settings:` with nothing under it: Oxy's defaults
        return DEFAULT_RUNS, DEFAULT_CONCURRENCY, None
    if not isinstance(block, dict):
        c.add("settings must be a mapping (concurrency, runs, judge_model)", "settings", lines.of_key(raw, "settings"))
        return DEFAULT_RUNS, DEFAULT_CONCURRENCY, None
    _unknown_keys(c, block, SETTINGS_KEYS, "settings", lines)
    runs = _count(c, block, "runs", DEFAULT_RUNS, MAX_RUNS, lines)
    concurrency = _count(c, block, "concurrency", DEFAULT_CONCURRENCY, MAX_CONCURRENCY, lines)
    judge_model = _optional_text(c, block, "judge_model", "settings.judge_model", lines)
    return runs, concurrency, judge_model


def _count(c: f.Collector, block: dict[str, Any], key: str, default: int, high: int, lines: LineMap) -> int:
    if block.get(key) is None:
        return default
    path, line = f"settings.{key}", lines.of_key(block, key)
    value = c.take(f.integer, block[key], path, line)
    if value is None:
        return default
    if not 1 <= value <= high:
        c.add(f"{path} must be between 1 and {high}, got {shown(value)}", path, line)
        return default
    return value


def _optional_text(c: f.Collector, raw: dict[str, Any], key: str, path: str, lines: LineMap) -> str | None:
    value = raw.get(key)
    if value is None:
        return None
    if not isinstance(value, str):
        c.add(f"{path} must be a string (quote it)", path, lines.of_key(raw, key))
        return None
    return value


def _required_text(c: f.Collector, item: dict[str, Any], key: str, path: str, lines: LineMap) -> str | None:
    where = f"{path}.{key}"
    if key not in item:
        c.add(f"{where} is required", where, lines.of(item))
        return None
    value = item[key]
    if not isinstance(value, str):
        c.add(f"{where} must be a string (quote it)", where, lines.of_key(item, key))
        return None
    if not value.strip():
        c.add(f"{where} must not be empty", where, lines.of_key(item, key))
        return None
    return value


def _tags(c: f.Collector, item: dict[str, Any], path: str, lines: LineMap) -> tuple[str, ...]:
    value = item.get("tags")
    if value is None:
        return ()
    where = f"{path}.tags"
    if not isinstance(value, list):
        c.add(f"{where} must be a list of strings", where, lines.of_key(item, "tags"))
        return ()
    found = []
    for position, tag in enumerate(value):
        checked = c.take(f.safe_id, tag, f"{where}[{position}]", lines.of_item(value, position))
        if checked is not None and checked not in found:
            found.append(checked)
    return tuple(found)


def _scenario_id(name: str | None, index: int, taken: set[str]) -> str:
    """A case's scenario id: its name made id-safe, or ``case-N`` (0-based, as ``--case N``)."""
    base = _UNSAFE.sub("-", name or "").strip("-._")[:90] or f"case-{index}"
    if base[0].isalnum() and base not in taken:
        return base
    candidate = f"case-{index}" if not base[0].isalnum() else f"{base}-{index}"
    while candidate in taken:
        candidate = f"{candidate}-{index}"
    return candidate


def _scenario(
    item: dict[str, Any],
    scenario_id: str,
    prompt: str,
    expected: str,
    tags: tuple[str, ...],
    tool: str | None,
    lines: LineMap,
    line: int | None,
) -> dict[str, Any]:
    judge: dict[str, Any] = {"expected": expected}
    response: dict[str, Any] = {"judge": judge}
    expect: dict[str, Any] = {"response": response}
    _register(lines, judge, {"expected": lines.of_key(item, "expected")}, line)
    _register(lines, response, {"judge": lines.of_key(item, "expected")}, line)
    expect_lines: dict[str, int | None] = {"response": lines.of_key(item, "expected")}
    if tool is not None:
        required = [tool]
        tools = {"required": required}
        tool_line = lines.of_key(item, "tool")
        lines.items[id(required)] = [tool_line or 0]
        _register(lines, tools, {"required": tool_line}, line)
        expect["tools"] = tools
        expect_lines["tools"] = tool_line
    _register(lines, expect, expect_lines, line)
    scenario: dict[str, Any] = {"id": scenario_id, "prompt": prompt, "expect": expect}
    key_lines = {"id": lines.of_key(item, "name") or line, "prompt": lines.of_key(item, "prompt"), "expect": line}
    if tags:
        scenario["tags"] = list(tags)
        lines.items[id(scenario["tags"])] = [lines.of_key(item, "tags") or 0] * len(tags)
        key_lines["tags"] = lines.of_key(item, "tags")
    _register(lines, scenario, key_lines, line)
    return scenario


def _register(lines: LineMap, container: dict[str, Any], key_lines: dict[str, int | None], start: int | None) -> None:
    lines.starts[id(container)] = start or 0
    lines.keys[id(container)] = {key: value for key, value in key_lines.items() if value is not None}


def case_matches(meta: OxyFile, wanted: str) -> tuple[OxyCase, ...]:
    """The cases ``--case WANTED`` names: by 0-based index (as Oxy), by name, by exact
    prompt, or by scenario id (``case-N`` for an unnamed case, ``NAME-N`` for a repeated
    name). More than one means the value is ambiguous: the caller refuses it rather than
    pick one (Oxy takes the index first, then the first match)."""
    index = int(wanted) if wanted.isdigit() else None
    return tuple(case for case in meta.cases if case.index == index or wanted in (case.name, case.prompt, case.scenario_id))


def case_index(meta: OxyFile, wanted: str) -> OxyCase | None:
    """The one case ``--case WANTED`` names, or None (none, or several: see ``case_matches``)."""
    found = case_matches(meta, wanted)
    return found[0] if len(found) == 1 else None


def _unknown_keys(c: f.Collector, raw: dict[Any, Any], known: tuple[str, ...], prefix: str, lines: Any) -> None:
    """Every key Oxy's format does not have (it denies unknown fields), at its line."""
    for key in raw:
        if key not in known:
            where = f"{prefix}.{key}" if prefix else str(key)
            c.add(f"Unknown Oxy test file key: {where} (known: {', '.join(known)})", where, lines.of_key(raw, key))
