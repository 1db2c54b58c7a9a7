"""Version-2 keys of judged checks: ``response.judge`` (``{expected, criteria?, votes?}``)
and the top-level ``judge:`` block. Problems go to the collector with path and line."""

from __future__ import annotations

from typing import Any

from behavegate.contract import rules as f
from behavegate.judged import JudgeSpec, JudgeTarget
from behavegate.limits import MAX_JUDGE_REQUESTS_CEILING, MAX_JUDGE_VOTES, MAX_OUTPUT_TOKENS

JUDGE_KEYS = ("expected", "criteria", "votes")  # response.judge
# The top-level judge block. No token variable: only the person running picks which
# secret is sent (--judge-auth-env), as for the agent.
JUDGE_TARGET_KEYS = ("endpoint", "model", "timeout_seconds", "max_requests", "max_tokens", "parameters")
# The judge request's own keys: judge.parameters cannot set them (temperature is always 0).
JUDGE_RESERVED = ("model", "messages", "stream", "temperature", "max_tokens")


def _bounded_int(value: Any, path: str, line: int | None, high: int) -> int:
    number = f.integer(value, path, line)
    if not 1 <= number <= high:
        raise f.Bad(f"{path} must be between 1 and {high}", path, line)
    return number


def _timeout(value: Any, path: str, line: int | None = None) -> float:
    number = f.number(value, path, line)
    if not 0 < number <= 300:
        raise f.Bad(f"{path} must be between 0 and 300", path, line)
    return number


def judge_spec(c: f.Collector, value: Any, path: str, line: int | None = None, line_of: Any = None) -> JudgeSpec | None:
    """``response.judge``: ``{expected, criteria?, votes?}``, from any mapping (a contract's,
    or one built from another format's case, e.g. an Oxy test file's ``expected``); every
    problem goes to ``c`` with its path and line, and None comes back when there is one."""
    block = c.take(f.mapping, value, path, line, required=True)
    if block is None:
        return None
    mark = c.mark()

    def at(key: str) -> int | None:
        return (line_of(block, key) if line_of is not None else None) or line

    for key in block:
        if key not in JUDGE_KEYS:
            c.problems.append(f.unknown_key(f"{path}.{key}", key, JUDGE_KEYS, at(key)))
    expected = c.take(f.required_text, block, "expected", f"{path}.expected", at("expected"))
    criteria = c.take(f.text, block["criteria"], f"{path}.criteria", at("criteria")) if "criteria" in block else None
    votes = c.take(_bounded_int, block["votes"], f"{path}.votes", at("votes"), MAX_JUDGE_VOTES) if "votes" in block else 1
    if not c.clean_since(mark) or expected is None or votes is None:
        return None
    return JudgeSpec(expected=expected, criteria=criteria, votes=votes)


def judge_target(c: f.Collector, block: dict[str, Any], line_of: Any) -> JudgeTarget:
    """The ``judge:`` block (its unknown keys already reported): where judged checks are
    asked. Its endpoint needs the same consent as the agent's (evidence/trust.py)."""

    def take(key: str, check: Any, *extra: Any) -> Any:
        return c.take(check, block[key], f"judge.{key}", line_of(block, key), *extra) if key in block else None

    return JudgeTarget(
        endpoint=take("endpoint", f.text),
        model=take("model", f.text),
        timeout_seconds=take("timeout_seconds", _timeout),
        max_requests=take("max_requests", _bounded_int, MAX_JUDGE_REQUESTS_CEILING),
        max_tokens=take("max_tokens", _bounded_int, MAX_OUTPUT_TOKENS),
        parameters=take("parameters", _parameters),
    )


def _parameters(value: Any, path: str, line: int | None = None) -> dict[str, Any]:
    params = f.json_mapping(value, path, line)
    reserved = sorted(set(params) & set(JUDGE_RESERVED))
    if reserved:
        raise f.Bad(f"{path} cannot set {reserved}", path, line)
    return params
