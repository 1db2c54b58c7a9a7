"""Reading a captured observation file (skylos v1 format) into the model.

The file is an *unverified fixture*: whoever wrote it could have written
anything, so reports label it as such and bind its digest into the evidence.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any, TypeVar, cast

from behavegate.contract import rules as f
from behavegate.conversation import final_answer
from behavegate.errors import ObservationError, Problem
from behavegate.evidence.consistency import Consistency
from behavegate.evidence.conversation_record import conversation, same_max_turns, text_or_none
from behavegate.files import read_project_text
from behavegate.frozen import replace
from behavegate.judged import JudgeEvidence, JudgeVote
from behavegate.limits import (
    INPUT_MAX_VALUES,
    MAX_EVIDENCE_QUANTITY,
    MAX_OBSERVATION_BYTES,
    MAX_RUN_SCENARIOS,
    MAX_RUNS,
    OBSERVATION_MAX_SOURCES,
    OBSERVATION_MAX_TOOL_CALLS,
    V2_INPUT_MAX_VALUES,
    V2_MAX_INPUT_BYTES,
    V2_MAX_OBSERVATION_ENTRIES,
)
from behavegate.magnitude import in_range, integer_text, shown
from behavegate.model import TOOL_SOURCE_MCP, Observation, ObservationSet, Retry, ToolCall
from behavegate.text import scrub, surrogate_paths

T = TypeVar("T")
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")

OBSERVATION_KEYS = (
    "id",
    "response",
    "response_complete",
    "finish_reason",
    "tool_calls",
    "tool_calls_complete",
    "refusal",
    "sources",
    "error",
)


class _Duplicate(Exception):
    pass


def _unique_object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result: dict[str, Any] = {}
    for key, value in pairs:
        if key in result:
            raise _Duplicate(f"Duplicate observation mapping key: {key!r}")
        result[key] = value
    return result


V2_OBSERVATION_KEYS = (
    "latency_ms",
    "total_tokens",
    "input_tokens",
    "output_tokens",
    "steps",
    "tool_errors",
    "conversation",
    "judge",
    "retries",
    "response_gap",
    "tool_gap",
    "tool_source",
)
RETRY_KEYS = ("turn", "reason", "waited_ms")
JUDGE_EVIDENCE_KEYS = ("model", "votes")
JUDGE_VOTE_KEYS = ("question", "reply", "error")
JUDGE_MESSAGE_KEYS = ("role", "content")


def load_observations(
    path: str | Path,
    root: Path,
    *,
    attempts: bool = False,
    bases: tuple[Path, ...] = (),
    max_turns: Mapping[str, int] | None = None,
) -> ObservationSet:
    """``attempts`` (version-2 contracts): several observations of one scenario are
    attempts, and observation files may be version 2 (latency, usage, steps, tool errors).
    ``max_turns``: the contract's, by scenario id; a recorded conversation must agree."""
    cap = V2_MAX_INPUT_BYTES if attempts else MAX_OBSERVATION_BYTES  # version 2: a suite's; version 1: skylos's
    resolved, source = read_project_text(path, root, "Observation file", cap, bases)
    return parse_observation_text(source, resolved, attempts=attempts, max_turns=max_turns)


def parse_observation_text(
    source: str, path: Path, *, attempts: bool = False, max_turns: Mapping[str, int] | None = None
) -> ObservationSet:
    try:
        raw = _jsonl_document(source, attempts) if is_jsonl(path) else _json_document(source)
    except _Duplicate as duplicate:
        raise ObservationError([Problem(str(duplicate))]) from None
    except (ValueError, RecursionError) as exc:  # JSONDecodeError, or an integer too long to convert
        raise ObservationError([Problem(f"Invalid observation JSON: {exc}")]) from None
    try:
        f.check_shape(raw, "Observation file", V2_INPUT_MAX_VALUES if attempts else INPUT_MAX_VALUES)
    except f.Bad as bad:
        raise ObservationError([bad.problem]) from None
    if not isinstance(raw, dict):
        raise ObservationError([Problem("Observation file must be a JSON object")])
    digest = hashlib.sha256(source.encode("utf-8")).hexdigest()
    # Text decoded from UTF-8 holds no surrogate: only a "\\udXXX" JSON escape can make one.
    found = read_observations(
        raw, attempts=attempts, unicode_checked=_SURROGATE_ESCAPE.search(source) is None, max_turns=max_turns
    )
    grouped: dict[str, list[Observation]] = {}
    for observation in found:
        grouped.setdefault(observation.scenario_id, []).append(observation)
    return ObservationSet(
        path=path,
        digest=digest,
        observations={key: group[0] for key, group in grouped.items()},
        version=2 if raw.get("version") == 2 else 1,
        attempts={key: tuple(group) for key, group in grouped.items()},
        runs=raw.get("runs") if attempts and raw.get("version") == 2 else None,
    )


def is_jsonl(path: Path) -> bool:
    """A JSON Lines observation file: one version-2 entry a line (docs/observations.md)."""
    return path.suffix.lower() == ".jsonl"


def _json_document(source: str) -> Any:
    return json.loads(source, object_pairs_hook=_unique_object, parse_int=integer_text)


def _jsonl_document(source: str, attempts: bool) -> dict[str, Any]:
    """The JSON Lines form read as the version-2 document it stands for."""
    if not attempts:
        raise ObservationError([Problem("A JSON Lines observation file needs a version 2 contract")])
    return {"version": 2, "scenarios": list(jsonl_entries(source.split("\n")))}


def jsonl_entries(lines: Iterable[str]) -> Iterator[Any]:
    """Each non-blank line's JSON value, as the JSON form reads one (duplicate keys refused)."""
    return (value for _, value in jsonl_lines(lines))


def jsonl_lines(lines: Iterable[str]) -> Iterator[tuple[str, Any]]:
    """Each non-blank line with its JSON value (:func:`jsonl_entries`)."""
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            yield line, _json_document(line)
        except (ValueError, RecursionError) as exc:
            raise ValueError(f"line {number}: {exc}") from None


def read_observations(
    raw: dict[str, Any], *, attempts: bool = False, unicode_checked: bool = False, max_turns: Mapping[str, int] | None = None
) -> list[Observation]:
    c = f.Collector()
    v2 = attempts and raw.get("version") == 2
    # A version-2 recording carries the run's --runs (commands/live_run.py), so its replay asks for as many.
    _unknown(c, raw, ("version", "scenarios", "runs") if v2 else ("version", "scenarios"), "")
    version = c.take(f.integer, raw.get("version"), "version")
    if v2 and "runs" in raw and c.take(f.integer, raw["runs"], "runs") is not None and not 1 <= raw["runs"] <= MAX_RUNS:
        c.add(f"runs must be between 1 and {MAX_RUNS}", "runs")
    if version is not None and version != 1 and not v2:
        c.add(f"observation version must be 1, got {shown(version)}", "version")
    items = c.take(f.listing, raw.get("scenarios"), "scenarios", required=True)
    observations: list[Observation] = []
    if items is not None:
        if len(items) > (entries := V2_MAX_OBSERVATION_ENTRIES if attempts else MAX_RUN_SCENARIOS):
            c.add(f"scenarios cannot exceed {entries} entries", "scenarios")
        else:
            seen: dict[str, int] = {}
            for index, item in enumerate(items):
                observation = read_entry(c, item, index, v2, unicode_checked, seen.get, max_turns)
                if observation is not None:
                    seen[observation.scenario_id] = seen.get(observation.scenario_id, 0) + 1
                    observations.append(observation)
            repeated = f.duplicates(o.scenario_id for o in observations)
            if repeated and not attempts:
                c.add(f"Duplicate observation scenario id: {repeated}", "scenarios")
    if c.problems:
        raise ObservationError(c.problems)
    return observations


def read_entry(
    c: f.Collector,
    item: Any,
    index: int,
    v2: bool,
    unicode_checked: bool,
    earlier: Callable[[str], int | None],
    max_turns: Mapping[str, int] | None,
) -> Observation | None:
    """Entry ``index`` of an observation file; ``earlier``: how many attempts of a scenario
    came before it (None: none). Problems go to ``c``."""
    # A broken consistency rule refuses a version-1 file (skylos); in version 2 it
    # makes this attempt incomplete, and the others are judged.
    rules = Consistency(c, attempt_level=v2)
    observation = _observation(c, item, f"scenarios[{index}]", v2, unicode_checked, rules)
    if observation is None:
        return None
    same_max_turns(rules, observation, (max_turns or {}).get(observation.scenario_id), f"scenarios[{index}]")
    reason = rules.reason((earlier(observation.scenario_id) or 0) + 1)
    if reason is not None and observation.error is None:  # a recorded error already says why
        observation = replace(observation, error=reason)
    return observation


_unknown = f.unknown_record_keys  # skylos words observation-file keys as contract keys; kept for compatibility


def _optional(c: f.Collector, check: Any, raw: dict[str, Any], key: str, path: str) -> Any:
    if key not in raw:
        return None
    return c.take(check, raw[key], f"{path}.{key}")


def _observation(
    c: f.Collector, value: Any, path: str, v2: bool = False, unicode_checked: bool = False, rules: Consistency | None = None
) -> Observation | None:
    rules = rules or Consistency(c, attempt_level=False)
    raw = c.take(f.mapping, value, path, required=True)
    if raw is None:
        return None
    # A string that cannot be written as UTF-8 spoils this attempt only: it is
    # judged as a failed observation (incomplete), the rest of the file is not.
    unicode_gaps = [] if unicode_checked else surrogate_paths(raw, path)
    if unicode_gaps:
        raw = cast(dict[str, Any], scrub(raw))
    mark = c.mark()
    _unknown(c, raw, OBSERVATION_KEYS + (V2_OBSERVATION_KEYS if v2 else ()), path)
    # Field order follows skylos: response side, tool side, refusal, sources, error, id.
    # Version-2 files keep the response verbatim ("" included), as live evidence is.
    response = _optional(c, _verbatim_text if v2 else f.optional_text, raw, "response", path)
    response_complete = _optional(c, f.boolean, raw, "response_complete", path)
    finish_reason = _optional(c, f.optional_text, raw, "finish_reason", path)
    if finish_reason is not None and _conflicts(response_complete, finish_reason == "stop", v2):
        rules.breach(
            "response_complete-finish_reason",
            f"{path}.response_complete conflicts with finish_reason",
            f"{path}.response_complete",
        )
    tool_calls_complete = _optional(c, f.boolean, raw, "tool_calls_complete", path)
    if finish_reason is not None and _conflicts(tool_calls_complete, finish_reason in {"stop", "tool_calls"}, v2):
        rules.breach(
            "tool_calls_complete-finish_reason",
            f"{path}.tool_calls_complete conflicts with finish_reason",
            f"{path}.tool_calls_complete",
        )
    tool_calls = _tool_calls(c, raw, path, v2) if "tool_calls" in raw else None
    refusal = _optional(c, f.boolean, raw, "refusal", path)
    sources = _sources(c, raw["sources"], f"{path}.sources") if "sources" in raw else None
    error = _optional(c, f.optional_text, raw, "error", path)
    if unicode_gaps:
        error = f"observation text at {unicode_gaps[0]} is not valid Unicode (an unpaired surrogate escape)"
    scenario_id = c.take(f.safe_id, raw.get("id"), f"{path}.id")
    extras = _v2_fields(c, raw, path, tool_calls, rules) if v2 else {}
    if not c.clean_since(mark) or scenario_id is None:
        return None
    return Observation(
        **extras,
        scenario_id=scenario_id,
        response=response,
        response_complete=response_complete,
        finish_reason=finish_reason,
        tool_calls=tool_calls,
        tool_calls_complete=tool_calls_complete,
        refusal=refusal,
        sources=sources,
        error=error,
    )


def _conflicts(flag: bool | None, allowed: bool, v2: bool) -> bool:
    """Version 1: the flag must equal what the finish reason implies. Version 2
    (recorded live evidence): it may also be false when the response's shape was
    broken, but never true when the finish reason rules it out."""
    if v2:
        return flag is None or (flag and not allowed)
    return flag is not allowed


def _verbatim_text(value: Any, path: str, line: int | None = None) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str):
        raise f.Bad(f"{path} must be a string", path, line)
    if len(value) > 200_000:
        raise f.Bad(f"{path} exceeds 200000 characters", path, line)
    return value


def _tool_calls(c: f.Collector, raw: dict[str, Any], path: str, v2: bool = False) -> tuple[ToolCall, ...] | None:
    items = c.take(f.listing, raw.get("tool_calls"), f"{path}.tool_calls")
    if items is None:
        return None
    if len(items) > OBSERVATION_MAX_TOOL_CALLS:
        c.add(f"{path}.tool_calls cannot exceed {OBSERVATION_MAX_TOOL_CALLS}", f"{path}.tool_calls")
        return None
    calls: list[ToolCall] = []
    for item_path, call_raw in f.records(c, items, f"{path}.tool_calls", ("name", "arguments")):
        arguments = None
        if "arguments" in call_raw:
            value = call_raw["arguments"]
            if v2 and isinstance(value, str):  # OpenAI's form, as the live path accepts it
                value = _json_object_text(c, value, f"{item_path}.arguments")
            arguments = c.take(f.json_mapping, value, f"{item_path}.arguments")
        name = c.take(f.tool_name, call_raw.get("name"), f"{item_path}.name")
        if name is not None:
            calls.append(ToolCall(name, arguments))
    return tuple(calls)


def _json_object_text(c: f.Collector, text: str, path: str) -> Any:
    """A version-2 file's string ``arguments``: strict JSON holding an object
    (duplicate keys, NaN or too deep are refused, as in a live response)."""
    from behavegate.evidence.chat import EndpointError, strict_json

    try:
        value = strict_json(text)
    except (EndpointError, ValueError, RecursionError):
        value = None
    if not isinstance(value, dict):
        c.add(f"{path} must be a JSON object, or a string holding one", path)
        return {}
    return value


def _sources(c: f.Collector, value: Any, path: str) -> tuple[str, ...] | None:
    items = c.take(f.listing, value, path)
    if items is None:
        return None
    found: list[str] = []
    for index, item in enumerate(items):
        source = c.take(_source_id, item, f"{path}[{index}]")
        if source is not None:
            found.append(source)
    if len(found) > OBSERVATION_MAX_SOURCES:
        c.add(f"{path} cannot exceed {OBSERVATION_MAX_SOURCES}", path)
        return None
    return tuple(found)


def _source_id(value: Any, path: str) -> str:
    if isinstance(value, str):
        return f.text(value, path)
    raw = f.mapping(value, path, required=True)
    extra = f.unknown_keys(raw, ("id", "source"), path)
    if extra:
        raise f.Bad(f"Unknown behavior contract key: {extra[0]}", extra[0])
    source = f.optional_text(raw.get("id"), f"{path}.id")
    source = source or f.optional_text(raw.get("source"), f"{path}.source")
    if source is None:
        raise f.Bad(f"{path} requires id or source", path)
    return source


def _v2_fields(
    c: f.Collector, raw: dict[str, Any], path: str, calls: tuple[ToolCall, ...] | None, rules: Consistency
) -> dict[str, Any]:
    from behavegate.contract.v2_values import non_negative_int

    extras: dict[str, Any] = {}
    if raw.get("latency_ms") is not None:
        latency = c.take(f.number, raw["latency_ms"], f"{path}.latency_ms")
        if latency is not None and latency < 0:
            c.add(f"{path}.latency_ms must be non-negative", f"{path}.latency_ms")
        extras["latency_ms"] = c.take(_credible, latency, f"{path}.latency_ms")
    for key in ("total_tokens", "input_tokens", "output_tokens", "steps"):
        if raw.get(key) is not None:
            extras[key] = c.take(_credible, c.take(non_negative_int, raw[key], f"{path}.{key}"), f"{path}.{key}")
    if raw.get("tool_errors") is not None:
        errors = c.take(f.listing, raw["tool_errors"], f"{path}.tool_errors")
        if errors is not None:
            checked = tuple(None if e is None else c.take(f.text, e, f"{path}.tool_errors[{i}]") for i, e in enumerate(errors))
            if calls is None or len(checked) != len(calls):
                text = f"{path}.tool_errors must have one entry per tool call"
                rules.breach("tool_errors-tool_calls", text, f"{path}.tool_errors")
            else:  # kept only when it pairs with the calls: views read them side by side
                extras["tool_errors"] = checked
    if raw.get("conversation") is not None:
        answered = final_answer(raw.get("finish_reason"), raw.get("response_complete"), text_or_none(raw.get("response")))
        extras["conversation"] = conversation(c, raw["conversation"], f"{path}.conversation", calls, answered, rules)
    if raw.get("judge") is not None:
        extras["judge"] = judge_evidence(c, raw["judge"], f"{path}.judge")
    if raw.get("retries") is not None:
        extras["retries"] = retries(c, raw["retries"], f"{path}.retries")
    for key in ("response_gap", "tool_gap"):  # why the source found that evidence unusable
        if raw.get(key) is not None:
            extras[key] = c.take(f.text, raw[key], f"{path}.{key}")
    if raw.get("tool_source") is not None:  # where the calls were seen (agent.mcp), as a run recorded it
        if raw["tool_source"] == TOOL_SOURCE_MCP:
            extras["tool_source"] = TOOL_SOURCE_MCP
        else:
            c.add(f"{path}.tool_source must be {TOOL_SOURCE_MCP!r} or absent", f"{path}.tool_source")
    return extras


def _credible(value: T | None, path: str) -> T | None:
    """A count or measure no run could have reached is refused before any view adds or prices it."""
    if isinstance(value, int | float) and not in_range(value):
        raise f.Bad(f"{path} must be at most {MAX_EVIDENCE_QUANTITY:,} (got {shown(value)})", path)
    return value


def retries(c: f.Collector, value: Any, path: str) -> tuple[Retry, ...]:
    """The requests a live run sent again (--retries), as recorded: evidence of how the
    answer was obtained, never of what it says."""
    from behavegate.contract.v2_values import non_negative_int

    items = c.take(f.listing, value, path, required=True) or []
    found: list[Retry] = []
    for index, item in enumerate(items):
        where = f"{path}[{index}]"
        record = c.take(f.mapping, item, where, required=True)
        if record is None:
            continue
        _unknown(c, record, RETRY_KEYS, where)
        turn = c.take(non_negative_int, record.get("turn"), f"{where}.turn")
        reason = c.take(f.text, record.get("reason"), f"{where}.reason")
        waited = c.take(_credible, c.take(non_negative_int, record.get("waited_ms"), f"{where}.waited_ms"), f"{where}.waited_ms")
        if turn is not None and reason is not None and waited is not None:
            found.append(Retry(turn, reason, waited))
    return tuple(found)


def judge_evidence(c: f.Collector, value: Any, path: str) -> JudgeEvidence | None:
    """The judge's recorded votes on an attempt: the model, and per vote the question
    sent (chat messages), the reply text and the error, exactly as recorded."""
    from behavegate.limits import MAX_JUDGE_VOTES

    raw = c.take(f.mapping, value, path, required=True)
    if raw is None:
        return None
    mark = c.mark()
    _unknown(c, raw, JUDGE_EVIDENCE_KEYS, path)
    model = c.take(f.text, raw.get("model"), f"{path}.model")
    items = c.take(f.listing, raw.get("votes"), f"{path}.votes") or []
    if len(items) > MAX_JUDGE_VOTES:
        c.add(f"{path}.votes cannot exceed {MAX_JUDGE_VOTES}", f"{path}.votes")
        return None
    votes: list[JudgeVote] = []
    for vote_path, vote in f.records(c, items, f"{path}.votes", JUDGE_VOTE_KEYS):
        messages: list[dict[str, str]] = []
        question = c.take(f.listing, vote.get("question"), f"{vote_path}.question") or ()
        for m_path, m in f.records(c, question, f"{vote_path}.question", JUDGE_MESSAGE_KEYS):
            role = c.take(_raw_text, m.get("role"), f"{m_path}.role")
            content = c.take(_raw_text, m.get("content"), f"{m_path}.content")
            if role is not None and content is not None:
                messages.append({"role": role, "content": content})
        reply = c.take(_raw_text, vote["reply"], f"{vote_path}.reply") if vote.get("reply") is not None else None
        error = c.take(f.text, vote["error"], f"{vote_path}.error") if vote.get("error") is not None else None
        votes.append(JudgeVote(tuple(messages), reply, error))
    if not c.clean_since(mark) or model is None:
        return None
    return JudgeEvidence(model, tuple(votes))


def _raw_text(value: Any, path: str) -> str:
    """A recorded text kept byte for byte (not stripped): the question is compared exactly."""
    if not isinstance(value, str):
        raise f.Bad(f"{path} must be a string", path)
    return value
