#!/usr/bin/env python3
"""Generate the live-mode conformance case inputs under cases/ (stdlib only).

Each case directory gets ``contract.yml``, ``responses.json`` (prompt -> canned
reply, see server.py), optionally ``args.json`` (``{"args": [...], "env": {...}}``)
and an entry in ``case-index.json`` (spec section + the rule it pins).
``expected.json`` is written only by record.py from the real skylos.

Placeholders replaced at run time in args and contract.yml:
``{endpoint}`` -> ``http://127.0.0.1:<port>/v1/chat/completions`` of the canned server,
``{host_port}`` -> ``127.0.0.1:<port>``, ``{dead_endpoint}`` -> the same URL on a
port nothing listens on.

Usage: python3 make_cases.py   (rewrites every generated case's inputs)
"""

from __future__ import annotations

import base64
import json
import re
import shutil
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
CASES = HERE / "cases"
INDEX_JSON = HERE / "case-index.json"

ABSENT: Any = object()
MODEL = "canned-model"
DEFAULT_TIMEOUT = 5
TOKEN_LONG = "sk-test-7f3a9c2e41b8d6"  # 22 chars -> [REDACTED]

TOOLS = [
    {
        "name": "lookup_order",
        "description": "Look up an order by id",
        "parameters": {
            "type": "object",
            "properties": {"order_id": {"type": "string"}, "verbose": {"type": "boolean"}},
            "required": ["order_id"],
        },
    },
    {
        "name": "issue_refund",
        "description": "Refund an order",
        "parameters": {
            "type": "object",
            "properties": {"order_id": {"type": "string"}, "amount": {"type": "number"}},
            "required": ["order_id", "amount"],
        },
    },
    {
        "name": "send_email",
        "description": "Send an email",
        "parameters": {"type": "object", "properties": {"to": {"type": "string"}}},
    },
]

# Findings from recording skylos 5.1.2 (rendered into INDEX.md by record.py).
NOTES = [
    "No contradiction with spec sections 7-9 was found: every recorded outcome matches the spec text. "
    "The items below are places where skylos is more specific than the spec (now pinned by cases).",
    "Body that ends before its Content-Length (server closes mid-body) -> `agent endpoint request failed: "
    "ChunkedEncodingError` (`transport-truncated-body`): the name is the *requests* exception class, not a generic one. "
    "A server that closes without any response and a refused connection both give `ConnectionError`.",
    "Decode precedence is parse order: duplicate keys are detected while parsing (when an object closes), so "
    '`{"choices": [], "choices": []} trailing` -> duplicate keys, while a `NaN` earlier in the document than a '
    "duplicate key -> invalid JSON (`decode-duplicate-keys-then-garbage`, `decode-nan-before-duplicate-keys`).",
    "Nesting far beyond 64 (100,000 nested arrays) -> `agent endpoint returned invalid JSON`, not `nesting exceeds 64`: "
    "the parser hits its recursion limit before the depth check runs (`decode-recursion-depth-100000`). Depth 65 "
    "and 50,001 values give the spec messages. The exact depth where the message switches (around Python's "
    "recursion limit, ~1,000) is interpreter-dependent and deliberately not pinned.",
    "Depth counting: root = 0 and object *keys* are one level below their object, like values; a key/value count "
    "of exactly 50,000 passes (`decode-depth-64-ok`, `decode-values-50000-ok`). An arguments *string* is checked "
    "on its own (its root = 0): depth 64 inside it is fine, 65 voids only that call's arguments.",
    "The response charset is ignored: Latin-1 bytes labelled `charset=iso-8859-1` are decoded as UTF-8 -> invalid JSON "
    "(`decode-latin1-declared`); `Content-Type: text/html` with a JSON body is parsed normally.",
    'Live text is kept exactly (`content-whitespace-kept`: `"  Gate B12 \\n"` stays padded in the observation). '
    "Spec 14.7 lists observed responses among stripped values; that applies to offline observation files only "
    "(7.4 says `as-is`, and skylos agrees with 7.4). finish_reason, tool names and source ids *are* stripped live.",
    "Redaction: `observed.response_length` is the length of the *raw* (unredacted) text, e.g. 38 for a 26-char "
    "redacted response (`auth-long-token-redacted`); only strings are redacted. Token names in tool names are "
    "redacted in messages and in `observed.unexpected` / `observed` sequence lists (`auth-token-in-tool-name`). "
    "The boundary is len >= 10 -> `[REDACTED]`, 9 -> `*********` (`auth-token-10-chars`, `auth-token-9-chars`).",
    "More than 250 tool calls or an invalid item: tool evidence unobserved *and* the tool shape broken, so tool "
    "assertions say `tool-call evidence is incomplete (finish_reason='stop')`, never `tool calls were not observed`.",
    "Messages the spec lists without wording: `--auth-env must be a valid environment variable name`, "
    "`environment variable X exceeds 8192 characters`, `environment variable X contains invalid header characters`, "
    "`agent endpoint must include a hostname`; a non-numeric port gives `agent endpoint contains an invalid port`.",
    "Order of live pre-flight errors: the --auth-env variable (name, unset/empty, length, CR/LF) first; then endpoint "
    "presence, then agent.model, then URL shape and trust, with `--auth-env` needing `--endpoint` last "
    "(`trust-missing-endpoint-and-model`, `trust-missing-model-before-endpoint-shape`, `auth-unset-checked-before-endpoint`). "
    "A remote contract endpoint is not validated at all when `--endpoint` overrides it.",
    "The `--max-seconds` budget error embeds the measured time (`harness time budget exceeded: 1.004s>1.000s`); the "
    "corpus masks it as `<elapsed>`.",
    "skylos sends scenarios sequentially in contract order, a fresh connection per request; behavegate may run them "
    "concurrently, so request lists are compared order-free.",
]

# --------------------------------------------------------------------------- YAML

_PLAIN_KEY = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_YAML11_WORDS = {"y", "n", "yes", "no", "on", "off", "true", "false", "null"}


def _yaml_scalar(value: Any) -> str:
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, int | float):
        return json.dumps(value)
    return json.dumps(str(value), ensure_ascii=False)


def _yaml_key(key: str) -> str:
    if _PLAIN_KEY.match(key) and key.lower() not in _YAML11_WORDS:
        return key
    return json.dumps(key, ensure_ascii=False)


def to_yaml(value: Any, indent: int = 0) -> str:
    pad = " " * indent
    lines: list[str] = []
    if isinstance(value, dict):
        for key, item in value.items():
            if isinstance(item, dict | list) and item:
                lines.append(f"{pad}{_yaml_key(key)}:")
                lines.append(to_yaml(item, indent + 2))
            else:
                rendered = "{}" if item == {} and isinstance(item, dict) else "[]" if item == [] else _yaml_scalar(item)
                lines.append(f"{pad}{_yaml_key(key)}: {rendered}")
    elif isinstance(value, list):
        for item in value:
            if isinstance(item, dict | list) and item:
                inner = to_yaml(item, indent + 2).splitlines()
                lines.append(f"{pad}- {inner[0].lstrip()}")
                lines.extend(inner[1:])
            else:
                rendered = "{}" if item == {} and isinstance(item, dict) else "[]" if item == [] else _yaml_scalar(item)
                lines.append(f"{pad}- {rendered}")
    else:
        lines.append(pad + _yaml_scalar(value))
    return "\n".join(lines)


# ------------------------------------------------------------------ builders


def contract(
    *scenarios: dict[str, Any],
    tools: list[dict[str, Any]] | None = None,
    model: Any = MODEL,
    timeout: Any = DEFAULT_TIMEOUT,
    endpoint: str | None = None,
) -> dict[str, Any]:
    agent: dict[str, Any] = {}
    if endpoint is not None:
        agent["endpoint"] = endpoint
    if model is not ABSENT:
        agent["model"] = model
    if timeout is not ABSENT:
        agent["timeout_seconds"] = timeout
    if tools:
        agent["tools"] = tools
    return {"version": 1, "agent": agent, "scenarios": list(scenarios)}


def scenario(sid: str, prompt: str, expect: dict[str, Any], system: str | None = None, available: Any = ABSENT) -> dict[str, Any]:
    result: dict[str, Any] = {"id": sid, "prompt": prompt}
    if system is not None:
        result["system_prompt"] = system
    if available is not ABSENT:
        result["available_tools"] = available
    result["expect"] = expect
    return result


def completion(
    content: Any = "OK",
    finish: Any = "stop",
    *,
    tool_calls: Any = ABSENT,
    refusal: Any = ABSENT,
    sources: Any = ABSENT,
    message_extra: dict[str, Any] | None = None,
    extra: dict[str, Any] | None = None,
) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant"}
    if content is not ABSENT:
        message["content"] = content
    if tool_calls is not ABSENT:
        message["tool_calls"] = tool_calls
    if refusal is not ABSENT:
        message["refusal"] = refusal
    if sources is not ABSENT:
        message["sources"] = sources
    message.update(message_extra or {})
    choice: dict[str, Any] = {"index": 0, "message": message}
    if finish is not ABSENT:
        choice["finish_reason"] = finish
    body: dict[str, Any] = {
        "id": "chatcmpl-canned",
        "object": "chat.completion",
        "created": 1700000000,
        "model": MODEL,
        "choices": [choice],
    }
    body.update(extra or {})
    return body


def call(name: Any, arguments: Any = ABSENT, *, index: int = 0, kind: Any = "function") -> dict[str, Any]:
    function: dict[str, Any] = {"name": name}
    if arguments is not ABSENT:
        function["arguments"] = json.dumps(arguments) if isinstance(arguments, dict) else arguments
    result: dict[str, Any] = {"id": f"call_{index}", "function": function}
    if kind is not ABSENT:
        result["type"] = kind
    return result


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def ok(body: Any, **reply: Any) -> dict[str, Any]:
    return {"json": body, **reply}


def json_depth_and_count(value: Any) -> tuple[int, int]:
    """Max depth (root 0; keys and values one deeper than their container) and node count."""
    pending = [(value, 0)]
    deepest = count = 0
    while pending:
        item, depth = pending.pop()
        deepest = max(deepest, depth)
        count += 1
        if isinstance(item, dict):
            pending.extend((key, depth + 1) for key in item)
            pending.extend((child, depth + 1) for child in item.values())
        elif isinstance(item, list):
            pending.extend((child, depth + 1) for child in item)
    return deepest, count


def nested_lists(levels: int) -> Any:
    value: Any = 0
    for _ in range(levels):
        value = [value]
    return value


def completion_with_depth(depth: int) -> dict[str, Any]:
    body = completion(extra={"extra": nested_lists(depth - 1)})
    assert json_depth_and_count(body)[0] == depth, json_depth_and_count(body)
    return body


def completion_with_count(count: int) -> dict[str, Any]:
    base_count = json_depth_and_count(completion(extra={"extra": []}))[1]
    body = completion(extra={"extra": [0] * (count - base_count)})
    assert json_depth_and_count(body)[1] == count
    return body


# --------------------------------------------------------------------- cases

CASE_DEFS: dict[str, dict[str, Any]] = {}


def case(
    name: str,
    section: str,
    rule: str,
    contract_data: dict[str, Any],
    responses: dict[str, Any],
    args: list[str] | None = None,
    env: dict[str, Any] | None = None,
    slow: bool = False,
    files: dict[str, str] | None = None,
) -> None:
    assert name not in CASE_DEFS, name
    CASE_DEFS[name] = {
        "section": section,
        "rule": rule,
        "contract": contract_data,
        "responses": responses,
        "args": args,
        "env": env,
        "slow": slow,
        "files": files or {},
    }


LIVE = ["contract.yml", "--endpoint", "{endpoint}", "--format", "json", "--no-artifacts"]
CONTAINS_OK = {"response": {"contains": ["OK"]}}
FULL_EXPECT = {
    "response": {"contains": ["OK"], "excludes": ["secret"]},
    "tools": {"forbidden": ["issue_refund"], "max_calls": 2},
    "refusal": False,
    "sources": {"required": ["kb-1"]},
}


def one(
    expect: dict[str, Any], reply: dict[str, Any], tools: list[dict[str, Any]] | None = None, **kw: Any
) -> tuple[dict[str, Any], dict[str, Any]]:
    """A one-scenario contract (id s1, prompt p1) and its canned reply."""
    return contract(scenario("s1", "p1", expect), tools=tools, **kw), {"p1": reply}


def build() -> None:
    # ------------------------------------------------------------ §7.3 transport
    case(
        "transport-redirect-302",
        "7.3",
        "302 with Location is not followed -> 'redirects are not allowed'",
        *one(CONTAINS_OK, {"status": 302, "headers": {"Location": "/elsewhere"}}),
    )
    case(
        "transport-redirect-307-and-304",
        "7.3",
        "any 3xx (307, 304) is a redirect error; the run continues to the next scenario",
        contract(scenario("s307", "p307", CONTAINS_OK), scenario("s304", "p304", CONTAINS_OK)),
        {"p307": {"status": 307, "headers": {"Location": "/x"}, "json": completion()}, "p304": {"status": 304}},
    )
    case(
        "transport-http-500",
        "7.3",
        "HTTP 500 -> 'agent endpoint returned HTTP 500'",
        *one(CONTAINS_OK, {"status": 500, "json": {"error": {"message": "boom"}}}),
    )
    case(
        "transport-http-404-with-chat-body",
        "7.3",
        "non-2xx is an error even when the body is a valid completion",
        *one(CONTAINS_OK, ok(completion(), status=404)),
    )
    case(
        "transport-http-429",
        "7.3",
        "HTTP 429 -> 'agent endpoint returned HTTP 429'",
        *one(CONTAINS_OK, {"status": 429, "headers": {"Retry-After": "1"}, "json": {"error": "slow down"}}),
    )
    case(
        "transport-http-201-accepted",
        "7.3, 14.13",
        "any 2xx (201) is accepted and evaluated",
        *one(CONTAINS_OK, ok(completion(), status=201)),
    )
    case("transport-http-204-no-content", "7.3, 14.13", "204 (empty body) -> invalid JSON", *one(CONTAINS_OK, {"status": 204}))
    case(
        "transport-http-200-empty-body",
        "7.3",
        "200 with an empty body -> invalid JSON",
        *one(CONTAINS_OK, {"status": 200, "body": ""}),
    )
    case(
        "transport-content-length-too-large",
        "7.3",
        "a declared Content-Length of 2,097,153 is rejected before reading the (short) body",
        *one(CONTAINS_OK, ok(completion(), content_length=2_097_153)),
    )
    case(
        "transport-body-exactly-2mib",
        "7.3, 12",
        "a 2,097,152-byte body (whitespace-padded JSON) is accepted",
        *one(CONTAINS_OK, ok(completion(), pad_to=2_097_152)),
    )
    case(
        "transport-body-2mib-plus-one",
        "7.3, 12",
        "a 2,097,153-byte body with a truthful Content-Length is too large",
        *one(CONTAINS_OK, ok(completion(), pad_to=2_097_153)),
    )
    case(
        "transport-chunked-oversize",
        "7.3",
        "a chunked body (no Content-Length) growing past 2 MiB is too large",
        *one(CONTAINS_OK, ok(completion(), pad_to=3 * 1024 * 1024, chunked=True)),
    )
    case(
        "transport-chunked-ok", "7.3", "a small chunked body is read normally", *one(CONTAINS_OK, ok(completion(), chunked=True))
    )
    case(
        "transport-gzip-ok",
        "7.3",
        "a gzip-encoded completion is decoded and evaluated",
        *one(CONTAINS_OK, ok(completion(), gzip=True)),
    )
    case(
        "transport-gzip-decoded-oversize",
        "7.3",
        "a small gzip body that decodes past 2 MiB is too large (limit is on decoded bytes)",
        *one(CONTAINS_OK, ok(completion(), pad_to=3_000_000, gzip=True)),
    )
    case(
        "transport-content-type-ignored",
        "7.3",
        "Content-Type text/html with a JSON body is still parsed",
        *one(CONTAINS_OK, ok(completion(), content_type="text/html; charset=iso-8859-1")),
    )
    case(
        "transport-connection-refused",
        "7.3",
        "nothing listening -> 'agent endpoint request failed: ConnectionError'",
        *one(CONTAINS_OK, ok(completion())),
        args=["contract.yml", "--endpoint", "{dead_endpoint}", "--format", "json", "--no-artifacts"],
    )
    case(
        "transport-close-without-response",
        "7.3",
        "server closes the connection without a response -> request failed: ConnectionError",
        *one(CONTAINS_OK, {"close": True}),
    )
    case(
        "transport-truncated-body",
        "7.3",
        "body shorter than its Content-Length, then close -> request failed with the client exception name",
        *one(CONTAINS_OK, ok(completion(), truncate=40)),
    )
    case(
        "transport-deadline-before-headers",
        "7.2, 7.3",
        "no headers within timeout_seconds (1) -> 'exceeded request deadline'; next scenario still runs",
        contract(scenario("slow", "p-slow", CONTAINS_OK), scenario("fast", "p-fast", CONTAINS_OK), timeout=1),
        {"p-slow": ok(completion(), delay=3), "p-fast": ok(completion())},
        slow=True,
    )
    case(
        "transport-deadline-trickled-body",
        "7.2, 7.3",
        "a body trickling in past the absolute deadline -> 'exceeded request deadline'",
        *one(CONTAINS_OK, ok(completion(), trickle={"chunk": 10, "interval": 0.25}), timeout=1),
        slow=True,
    )
    case(
        "transport-slow-within-deadline",
        "7.2",
        "a reply delayed 0.3 s under timeout_seconds 1 is fine",
        *one(CONTAINS_OK, ok(completion(), delay=0.3), timeout=1),
        slow=True,
    )
    case(
        "transport-max-seconds-budget",
        "7.2, 14.14",
        "slow endpoint under --max-seconds 1 -> whole-run budget error (elapsed time masked)",
        *one(CONTAINS_OK, ok(completion(), delay=2)),
        args=[*LIVE, "--max-seconds", "1"],
        slow=True,
    )

    # ------------------------------------------------------ §7.3 decoding / shape
    valid = json.dumps(completion(content="OK")).encode("utf-8")
    case(
        "decode-invalid-utf8",
        "7.3",
        "body bytes that are not UTF-8 (a lone 0xE9 0xFF inside a string) -> invalid JSON",
        *one(CONTAINS_OK, {"body_b64": b64(valid.replace(b'"OK"', b'"OK \xe9\xff"'))}),
    )
    case(
        "decode-utf8-bom",
        "7.3",
        "a UTF-8 BOM before the JSON -> invalid JSON (not stripped)",
        *one(CONTAINS_OK, {"body_b64": b64(b"\xef\xbb\xbf" + valid)}),
    )
    case(
        "decode-latin1-declared",
        "7.3",
        "Latin-1 bytes with a charset=iso-8859-1 Content-Type are still decoded as UTF-8 -> invalid JSON",
        *one(
            CONTAINS_OK,
            {
                "body_b64": b64(json.dumps(completion(content="Café"), ensure_ascii=False).encode("latin-1")),
                "content_type": "application/json; charset=iso-8859-1",
            },
        ),
    )
    case(
        "decode-truncated-json",
        "7.3",
        "malformed JSON -> invalid JSON",
        *one(CONTAINS_OK, {"body": '{"choices": [{"message": {"content": "OK"}, "finish_reason": "stop"}'}),
    )
    case(
        "decode-nan",
        "7.3",
        "NaN anywhere in the body -> invalid JSON",
        *one(
            CONTAINS_OK,
            {"body": '{"choices": [{"message": {"content": "OK"}, "finish_reason": "stop"}], "usage": {"cost": NaN}}'},
        ),
    )
    case(
        "decode-negative-infinity",
        "7.3",
        "-Infinity anywhere in the body -> invalid JSON",
        *one(CONTAINS_OK, {"body": '{"choices": [{"message": {"content": "OK"}, "finish_reason": "stop"}], "score": -Infinity}'}),
    )
    case(
        "decode-duplicate-keys-nested",
        "7.3",
        "a duplicate key deep inside message -> 'response contains duplicate keys'",
        *one(CONTAINS_OK, {"body": '{"choices": [{"message": {"content": "OK", "content": "OK"}, "finish_reason": "stop"}]}'}),
    )
    case(
        "decode-duplicate-keys-then-garbage",
        "7.3",
        "duplicate keys are detected while parsing, before trailing garbage makes the JSON invalid",
        *one(CONTAINS_OK, {"body": '{"choices": [], "choices": []} trailing'}),
    )
    case(
        "decode-nan-before-duplicate-keys",
        "7.3",
        "NaN earlier in the document than a duplicate key -> invalid JSON (first problem wins)",
        *one(CONTAINS_OK, {"body": '{"a": NaN, "b": {"x": 1, "x": 2}}'}),
    )
    case(
        "decode-depth-64-ok",
        "7.3, 12",
        "nesting depth exactly 64 (root = 0, keys count as children) is accepted",
        *one(CONTAINS_OK, ok(completion_with_depth(64))),
    )
    case(
        "decode-depth-65",
        "7.3, 12",
        "nesting depth 65 -> 'response nesting exceeds 64'",
        *one(CONTAINS_OK, ok(completion_with_depth(65))),
    )
    case(
        "decode-values-50000-ok",
        "7.3, 12",
        "exactly 50,000 values (keys counted) is accepted",
        *one(CONTAINS_OK, ok(completion_with_count(50_000))),
    )
    case(
        "decode-values-50001",
        "7.3, 12",
        "50,001 values -> 'response exceeds 50000 values'",
        *one(CONTAINS_OK, ok(completion_with_count(50_001))),
    )
    case(
        "decode-recursion-depth-100000",
        "7.3",
        "100,000 nested arrays: the parser gives up -> invalid JSON (not the nesting message)",
        *one(CONTAINS_OK, {"body": '{"choices": [], "x": ' + "[" * 100_000 + "]" * 100_000 + "}"}),
    )
    case(
        "decode-root-not-object",
        "7.3",
        "root array / string / null -> 'response must be an object'",
        contract(
            scenario("array", "p-array", CONTAINS_OK),
            scenario("string", "p-string", CONTAINS_OK),
            scenario("null", "p-null", CONTAINS_OK),
        ),
        {"p-array": {"json": [completion()]}, "p-string": {"json": "OK"}, "p-null": {"body": "null"}},
    )
    case(
        "decode-choices-missing",
        "7.3",
        "no choices key -> 'requires choices[0]'",
        *one(CONTAINS_OK, ok({"id": "x", "object": "chat.completion"})),
    )
    case("decode-choices-empty", "7.3", "choices: [] -> 'requires choices[0]'", *one(CONTAINS_OK, ok({"choices": []})))
    case(
        "decode-choices-not-list",
        "7.3",
        "choices as an object -> 'requires choices[0]'",
        *one(CONTAINS_OK, ok({"choices": {"0": completion()["choices"][0]}})),
    )
    case(
        "decode-choice-not-object",
        "7.3",
        "choices[0] a string -> 'requires choices[0].message'",
        *one(CONTAINS_OK, ok({"choices": ["OK"]})),
    )
    case(
        "decode-message-missing",
        "7.3",
        "choices[0] without message -> 'requires choices[0].message'",
        *one(CONTAINS_OK, ok({"choices": [{"index": 0, "text": "OK", "finish_reason": "stop"}]})),
    )
    case(
        "decode-message-not-object",
        "7.3",
        "message null / string -> 'requires choices[0].message'",
        contract(scenario("null", "p-null", CONTAINS_OK), scenario("string", "p-string", CONTAINS_OK)),
        {
            "p-null": ok({"choices": [{"message": None, "finish_reason": "stop"}]}),
            "p-string": ok({"choices": [{"message": "OK", "finish_reason": "stop"}]}),
        },
    )
    case(
        "decode-only-first-choice-read",
        "7.4",
        "choices[1] (even garbage) is ignored",
        *one(CONTAINS_OK, ok({"choices": [completion()["choices"][0], "garbage", {"message": {"content": "other"}}]})),
    )
    case(
        "decode-non-ascii-content",
        "7.4, 9",
        "raw UTF-8 non-ASCII content is kept exactly",
        *one(
            {"response": {"contains": ["Café ☕"]}},
            {"body": '{"choices": [{"message": {"content": "Café ☕ naïve"}, "finish_reason": "stop"}]}'},
        ),
    )

    # ------------------------------------------------------------ §7.4 finish
    case(
        "finish-missing",
        "7.4, 5.1",
        "no finish_reason -> both flags absent -> every response and tool assertion incomplete",
        *one(FULL_EXPECT, ok(completion(finish=ABSENT, tool_calls=None, refusal=None, sources=["kb-1"]))),
    )
    case(
        "finish-null",
        "7.4",
        "finish_reason null -> absent",
        *one(FULL_EXPECT, ok(completion(finish=None, tool_calls=None, refusal=None, sources=["kb-1"]))),
    )
    case(
        "finish-non-string",
        "7.4",
        "finish_reason 1 -> absent",
        *one(FULL_EXPECT, ok(completion(finish=1, tool_calls=None, refusal=None, sources=["kb-1"]))),
    )
    case(
        "finish-blank",
        "7.4",
        "finish_reason '   ' -> absent",
        *one(FULL_EXPECT, ok(completion(finish="   ", tool_calls=None, refusal=None, sources=["kb-1"]))),
    )
    case(
        "finish-padded-stop",
        "7.4, 14.7",
        "finish_reason ' stop ' is stripped to 'stop' -> everything evaluable",
        *one(FULL_EXPECT, ok(completion(finish=" stop\n", tool_calls=None, refusal=None, sources=["kb-1"]))),
    )
    case(
        "finish-uppercase-stop",
        "7.4",
        "finish_reason 'STOP' is not 'stop' -> both gates closed with that reason",
        *one(FULL_EXPECT, ok(completion(finish="STOP", tool_calls=None, refusal=None, sources=["kb-1"]))),
    )
    case(
        "finish-64-chars",
        "7.4, 12",
        "a 64-char finish_reason is kept (gates closed, reason quoted)",
        *one(FULL_EXPECT, ok(completion(finish="x" * 64, tool_calls=None, refusal=None, sources=["kb-1"]))),
    )
    case(
        "finish-65-chars",
        "7.4, 12",
        "a 65-char finish_reason is treated as absent",
        *one(FULL_EXPECT, ok(completion(finish="x" * 65, tool_calls=None, refusal=None, sources=["kb-1"]))),
    )
    case(
        "finish-length",
        "7.4, 5.1, 14.5",
        "finish 'length' closes both gates; a visible forbidden call is incomplete, not fail",
        *one(
            FULL_EXPECT,
            ok(
                completion(
                    finish="length",
                    tool_calls=[call("issue_refund", {"order_id": "A1", "amount": 5})],
                    refusal=None,
                    sources=["kb-1"],
                )
            ),
            tools=TOOLS,
        ),
    )
    case(
        "finish-content-filter",
        "7.4, 5.1",
        "finish 'content_filter' closes both gates",
        *one(FULL_EXPECT, ok(completion(content=None, finish="content_filter", tool_calls=None, refusal=None, sources=["kb-1"]))),
    )
    case(
        "finish-tool-calls",
        "7.4, 5.1",
        "finish 'tool_calls': tool gate open, response gate closed (refusal, sources incomplete)",
        *one(
            FULL_EXPECT,
            ok(
                completion(
                    content=None,
                    finish="tool_calls",
                    tool_calls=[call("lookup_order", {"order_id": "A1"})],
                    refusal=None,
                    sources=["kb-1"],
                )
            ),
            tools=TOOLS,
        ),
    )

    # ----------------------------------------------------------- §7.4 content
    case(
        "content-null",
        "7.4",
        "content null: no text but shape OK -> contains incomplete, refusal/sources still evaluated",
        *one(
            {"response": {"contains": ["OK"], "excludes": ["x"]}, "refusal": False, "sources": {"required": ["kb-1"]}},
            ok(completion(content=None, refusal=None, sources=["kb-1"])),
        ),
    )
    case(
        "content-absent",
        "7.4",
        "content key missing behaves like null",
        *one({"response": {"contains": ["OK"]}, "refusal": False}, ok(completion(content=ABSENT, refusal=None))),
    )
    case(
        "content-empty-string",
        "7.4, 14.4",
        "content '' is valid text: contains fails, excludes passes",
        *one({"response": {"contains": ["OK"], "excludes": ["secret"]}}, ok(completion(content=""))),
    )
    case(
        "content-whitespace-kept",
        "7.4",
        "live content is not stripped (observation keeps the padding)",
        *one({"response": {"contains": ["Gate B12"], "excludes": ["  Gate"]}}, ok(completion(content="  Gate B12 \n"))),
    )
    case(
        "content-parts-text",
        "7.4",
        "parts without type, 'text' and 'output_text' are concatenated without separator",
        *one(
            {"response": {"contains": ["OK, Gate B12"]}},
            ok(
                completion(
                    content=[
                        {"text": "OK"},
                        {"type": "text", "text": ", Gate"},
                        {"type": "output_text", "text": " B12", "annotations": []},
                    ]
                )
            ),
        ),
    )
    case(
        "content-parts-other-type",
        "7.4",
        "an image_url part breaks the shape: text kept, response gate closed ('stop')",
        *one(
            {"response": {"contains": ["OK"]}, "tools": {"max_calls": 0}},
            ok(
                completion(
                    content=[{"type": "text", "text": "OK"}, {"type": "image_url", "image_url": {"url": "x"}}], tool_calls=None
                )
            ),
        ),
    )
    case(
        "content-parts-non-object",
        "7.4",
        "a bare string inside the parts list breaks the shape",
        *one({"response": {"contains": ["OK"]}}, ok(completion(content=["OK", {"type": "text", "text": "OK"}]))),
    )
    case(
        "content-parts-text-not-string",
        "7.4",
        "a text part whose text is not a string breaks the shape",
        *one(
            {"response": {"contains": ["OK"]}},
            ok(completion(content=[{"type": "text", "text": "OK"}, {"type": "text", "text": 5}])),
        ),
    )
    case(
        "content-parts-empty-list",
        "7.4",
        "content [] -> no text, shape OK -> 'final response text was not observed'",
        *one({"response": {"contains": ["OK"]}, "refusal": False}, ok(completion(content=[], refusal=None))),
    )
    case(
        "content-parts-only-other",
        "7.4",
        "only non-text parts -> no text and shape broken",
        *one({"response": {"contains": ["OK"]}}, ok(completion(content=[{"type": "refusal", "refusal": "no"}]))),
    )
    case(
        "content-not-text",
        "7.4",
        "content number / object -> no text, shape broken",
        contract(scenario("number", "p-number", CONTAINS_OK), scenario("object", "p-object", CONTAINS_OK)),
        {"p-number": ok(completion(content=42)), "p-object": ok(completion(content={"text": "OK"}))},
    )
    case(
        "content-200000-chars",
        "7.4, 12",
        "a 200,000-char content is kept",
        *one({"response": {"contains": ["OK"]}}, ok(completion(content="OK" + "a" * 199_998))),
    )
    case(
        "content-200001-chars",
        "7.4, 12",
        "a 200,001-char content -> no text, shape broken",
        *one({"response": {"contains": ["OK"]}}, ok(completion(content="OK" + "a" * 199_999))),
    )
    case(
        "content-parts-joined-too-long",
        "7.4, 12",
        "parts joining to 200,001 chars -> no text, shape broken",
        *one(
            {"response": {"contains": ["OK"]}}, ok(completion(content=[{"text": "OK" + "a" * 99_999}, {"text": "b" * 100_000}]))
        ),
    )

    # ------------------------------------------------------------- §7.4 tools
    tool_expect = {"tools": {"required": ["lookup_order"], "forbidden": ["issue_refund"], "max_calls": 3}}
    case(
        "tools-absent-finish-stop",
        "7.4",
        "no tool_calls key with finish stop -> tool shape broken -> tool gate closed ('stop')",
        *one({**tool_expect, "response": {"contains": ["OK"]}}, ok(completion()), tools=TOOLS),
    )
    case(
        "tools-absent-finish-tool-calls",
        "7.4",
        "no tool_calls key with finish tool_calls -> tool gate closed ('tool_calls')",
        *one(tool_expect, ok(completion(content=None, finish="tool_calls")), tools=TOOLS),
    )
    case(
        "tools-null-zero-calls",
        "7.4",
        "tool_calls null = zero calls: forbidden/allowed/exact_sequence []/max_calls 0 pass, required fails",
        *one(
            {
                "tools": {
                    "required": ["lookup_order"],
                    "allowed": ["lookup_order"],
                    "forbidden": ["issue_refund"],
                    "exact_sequence": ["lookup_order"],
                    "max_calls": 1,
                }
            },
            ok(completion(tool_calls=None)),
            tools=TOOLS,
        ),
    )
    case(
        "tools-empty-list",
        "7.4",
        "tool_calls [] = zero calls",
        *one(
            {"tools": {"forbidden": ["issue_refund"], "exact_sequence": [], "max_calls": 0}},
            ok(completion(tool_calls=[])),
            tools=TOOLS,
        ),
    )
    case(
        "tools-valid-calls",
        "7.4, 6",
        "two well-formed calls (JSON-string arguments) drive every tool assertion",
        *one(
            {
                "tools": {
                    "required": [{"name": "lookup_order", "arguments": {"order_id": "A1"}}, "issue_refund"],
                    "allowed": ["lookup_order", "issue_refund"],
                    "forbidden": ["send_email"],
                    "exact_sequence": ["lookup_order", "issue_refund"],
                    "max_calls": 2,
                }
            },
            ok(
                completion(
                    content=None,
                    finish="tool_calls",
                    tool_calls=[
                        call("lookup_order", {"order_id": "A1", "verbose": True}, index=0),
                        call("issue_refund", {"order_id": "A1", "amount": 12.5}, index=1),
                    ],
                )
            ),
            tools=TOOLS,
        ),
    )
    case(
        "tools-name-padded",
        "7.4",
        "function.name ' lookup_order ' is stripped",
        *one(
            {"tools": {"required": ["lookup_order"], "exact_sequence": ["lookup_order"]}},
            ok(completion(tool_calls=[call(" lookup_order\t", {"order_id": "A1"})])),
            tools=TOOLS,
        ),
    )
    void_expect = {"tools": {"forbidden": ["issue_refund"], "max_calls": 5}, "response": {"contains": ["OK"]}}
    case(
        "tools-item-not-object",
        "7.4, 14.20",
        "one non-object item voids all tool evidence and breaks the tool shape",
        *one(void_expect, ok(completion(tool_calls=[call("lookup_order", {}), "issue_refund"])), tools=TOOLS),
    )
    case(
        "tools-item-without-function",
        "7.4",
        "an item without a function object voids all tool evidence",
        *one(
            void_expect,
            ok(completion(tool_calls=[call("lookup_order", {}), {"id": "c2", "type": "function", "name": "issue_refund"}])),
            tools=TOOLS,
        ),
    )
    case(
        "tools-function-not-object",
        "7.4",
        "function as a string voids all tool evidence",
        *one(void_expect, ok(completion(tool_calls=[{"id": "c1", "type": "function", "function": "lookup_order"}])), tools=TOOLS),
    )
    case(
        "tools-name-invalid",
        "7.4",
        "a function name with a space or a dot voids all tool evidence",
        contract(scenario("space", "p-space", void_expect), scenario("dot", "p-dot", void_expect), tools=TOOLS),
        {
            "p-space": ok(completion(tool_calls=[call("lookup order", {})])),
            "p-dot": ok(completion(tool_calls=[call("functions.lookup_order", {})])),
        },
    )
    case(
        "tools-name-missing-or-long",
        "7.4",
        "a missing name or a 65-char name voids all tool evidence",
        contract(scenario("missing", "p-missing", void_expect), scenario("long", "p-long", void_expect), tools=TOOLS),
        {
            "p-missing": ok(completion(tool_calls=[{"id": "c1", "type": "function", "function": {"arguments": "{}"}}])),
            "p-long": ok(completion(tool_calls=[call("a" * 65, {})])),
        },
    )
    case(
        "tools-not-list",
        "7.4",
        "tool_calls as an object / string -> unobserved, shape broken",
        contract(scenario("object", "p-object", void_expect), scenario("string", "p-string", void_expect), tools=TOOLS),
        {
            "p-object": ok(completion(tool_calls={"0": call("lookup_order", {})})),
            "p-string": ok(completion(tool_calls="lookup_order")),
        },
    )
    case(
        "tools-250-calls",
        "7.4, 12",
        "250 calls are observed",
        *one(
            {"tools": {"max_calls": 250, "forbidden": ["issue_refund"]}},
            ok(completion(tool_calls=[call("lookup_order", {"n": i}, index=i) for i in range(250)])),
            tools=TOOLS,
        ),
    )
    case(
        "tools-251-calls",
        "7.4, 12",
        "251 calls -> tool evidence unobserved (not an error)",
        *one(
            {"tools": {"max_calls": 250, "forbidden": ["issue_refund"]}},
            ok(completion(tool_calls=[call("lookup_order", {"n": i}, index=i) for i in range(251)])),
            tools=TOOLS,
        ),
    )
    args_expect = {"tools": {"required": [{"name": "lookup_order", "arguments": {"order_id": "A1"}}]}}
    case(
        "tools-args-object",
        "7.4",
        "function.arguments as an object is used as-is",
        *one(
            args_expect,
            ok(
                completion(
                    tool_calls=[{"type": "function", "function": {"name": "lookup_order", "arguments": {"order_id": "A1"}}}]
                )
            ),
            tools=TOOLS,
        ),
    )
    case(
        "tools-args-json-string",
        "7.4",
        "function.arguments as a JSON-object string is parsed",
        *one(
            args_expect,
            ok(completion(tool_calls=[call("lookup_order", '{"order_id": "A1", "extra": [1, 2.5, null]}')])),
            tools=TOOLS,
        ),
    )
    case(
        "tools-args-unparseable-string",
        "7.4, 6, 14.20",
        "unparseable arguments -> that call's arguments null (call counted) -> required-with-args incomplete",
        *one(
            {**args_expect, "tools": {**args_expect["tools"], "max_calls": 1}},
            ok(completion(tool_calls=[call("lookup_order", '{"order_id": "A1"')])),
            tools=TOOLS,
        ),
    )
    case(
        "tools-args-non-object-json",
        "7.4",
        "arguments '[1,2]' / '\"A1\"' / '5' / 'null' parse but are not objects -> null",
        contract(
            *[scenario(f"s-{label}", f"p-{label}", args_expect) for label in ("array", "string", "number", "null")], tools=TOOLS
        ),
        {
            "p-array": ok(completion(tool_calls=[call("lookup_order", "[1, 2]")])),
            "p-string": ok(completion(tool_calls=[call("lookup_order", '"A1"')])),
            "p-number": ok(completion(tool_calls=[call("lookup_order", "5")])),
            "p-null": ok(completion(tool_calls=[call("lookup_order", "null")])),
        },
    )
    case(
        "tools-args-other-types",
        "7.4",
        "arguments missing / null / number / list -> null",
        contract(
            *[scenario(f"s-{label}", f"p-{label}", args_expect) for label in ("missing", "null", "number", "list")], tools=TOOLS
        ),
        {
            "p-missing": ok(completion(tool_calls=[call("lookup_order")])),
            "p-null": ok(completion(tool_calls=[call("lookup_order", None)])),
            "p-number": ok(completion(tool_calls=[call("lookup_order", 5)])),
            "p-list": ok(completion(tool_calls=[call("lookup_order", [{"order_id": "A1"}])])),
        },
    )
    case(
        "tools-args-string-strict",
        "7.4",
        "arguments strings with duplicate keys / NaN / depth 65 -> null, response still valid",
        contract(*[scenario(f"s-{label}", f"p-{label}", args_expect) for label in ("dup", "nan", "deep")], tools=TOOLS),
        {
            "p-dup": ok(completion(tool_calls=[call("lookup_order", '{"order_id": "A1", "order_id": "A1"}')])),
            "p-nan": ok(completion(tool_calls=[call("lookup_order", '{"order_id": "A1", "n": NaN}')])),
            "p-deep": ok(completion(tool_calls=[call("lookup_order", json.dumps({"order_id": "A1", "d": nested_lists(64)}))])),
        },
    )
    case(
        "tools-args-string-depth-64-ok",
        "7.4",
        "an arguments string nested to depth 64 (its own root = 0) is accepted",
        *one(
            args_expect,
            ok(completion(tool_calls=[call("lookup_order", json.dumps({"order_id": "A1", "d": nested_lists(63)}))])),
            tools=TOOLS,
        ),
    )
    case(
        "tools-args-values-not-stripped",
        "7.4, 14.7",
        "argument strings are not stripped: ' A1 ' does not match 'A1'",
        *one(args_expect, ok(completion(tool_calls=[call("lookup_order", {"order_id": " A1 "})])), tools=TOOLS),
    )
    case(
        "tools-type-and-id-ignored",
        "7.4",
        "call type 'custom' / missing and ids are ignored; calls still count",
        *one(
            {"tools": {"exact_sequence": ["lookup_order", "send_email"]}},
            ok(
                completion(
                    tool_calls=[call("lookup_order", {}, kind="custom"), {"function": {"name": "send_email", "arguments": "{}"}}]
                )
            ),
            tools=TOOLS,
        ),
    )

    # ------------------------------------------------------------ §7.4 refusal
    refusal_cases = {
        "refusal-absent": ("refusal key absent -> not observed (incomplete)", ABSENT, [True, False]),
        "refusal-null": ("refusal null -> false: expect false passes, expect true FAILS", None, [True, False]),
        "refusal-true": ("refusal true -> true", True, [True, False]),
        "refusal-false": ("refusal false -> false", False, [True, False]),
        "refusal-string": ("a non-blank refusal string -> true", "I can't help with that.", [True, False]),
        "refusal-blank-string": ("a blank refusal string -> false", "  \n", [True, False]),
        "refusal-number": ("refusal 1 -> not observed", 1, [True, False]),
    }
    for name, (rule, value, expectations) in refusal_cases.items():
        case(
            name,
            "7.4, 14.2",
            rule,
            contract(*[scenario(f"expect-{str(e).lower()}", f"p-{str(e).lower()}", {"refusal": e}) for e in expectations]),
            {f"p-{str(e).lower()}": ok(completion(content="I cannot do that.", refusal=value)) for e in expectations},
        )

    # ------------------------------------------------------------ §7.4 sources
    source_expect = {"sources": {"required": ["kb-1", "kb-2"]}}
    source_cases = {
        "sources-absent": ("sources key absent -> not observed", ABSENT),
        "sources-null": ("sources null -> not observed (offline it would be [])", None),
        "sources-empty-list": ("sources [] -> observed, required sources fail", []),
        "sources-strings-padded": ("string items are stripped", [" kb-1 ", "kb-2\n", "kb-3"]),
        "sources-objects": (
            "objects: id, else source (falsy id falls back), extra keys ignored",
            [{"id": " kb-1 ", "title": "x"}, {"id": "", "source": "kb-2"}, {"id": None, "source": "kb-3", "url": "u"}],
        ),
        "sources-blank-string-voids": ("a blank string item voids the whole list", ["kb-1", "   "]),
        "sources-object-without-id-voids": ("an object with neither id nor source voids the list", ["kb-1", {"title": "kb-2"}]),
        "sources-non-string-id-voids": ("an object whose id is a number voids the list", ["kb-1", {"id": 2}]),
        "sources-non-string-item-voids": ("a number item voids the list", ["kb-1", 2]),
        "sources-not-list": ("sources as an object -> not observed", {"kb-1": True}),
        "sources-1000-items": ("1,000 sources are observed", ["kb-1", "kb-2", *[f"s{i}" for i in range(998)]]),
        "sources-1001-items": ("1,001 sources -> not observed", ["kb-1", "kb-2", *[f"s{i}" for i in range(999)]]),
    }
    for name, (rule, value) in source_cases.items():
        case(name, "7.4, 14.3", rule, *one(source_expect, ok(completion(sources=value))))

    # ------------------------------------------------------------- multi-scenario
    three = contract(scenario("a", "pa", CONTAINS_OK), scenario("b", "pb", CONTAINS_OK), scenario("c", "pc", CONTAINS_OK))
    case(
        "multi-error-continues",
        "7.3, 5.3",
        "a middle scenario's HTTP 500 makes it incomplete; the others still run and pass",
        three,
        {"pa": ok(completion()), "pb": {"status": 500, "body": "oops"}, "pc": ok(completion())},
    )
    case(
        "multi-fail-beats-incomplete",
        "5.3, 13",
        "one failing scenario plus one refused connection -> run fail, exit 1",
        contract(scenario("a", "pa", CONTAINS_OK), scenario("b", "pb", CONTAINS_OK), scenario("c", "pc", CONTAINS_OK)),
        {"pa": ok(completion(content="nope")), "pb": {"close": True}, "pc": ok(completion())},
    )
    case(
        "multi-scenario-select-one",
        "1",
        "--scenario b sends exactly one request",
        three,
        {"pa": ok(completion()), "pb": ok(completion()), "pc": ok(completion())},
        args=[*LIVE, "--scenario", "b"],
    )
    case(
        "multi-scenario-select-contract-order",
        "1",
        "--scenario c --scenario ' a ' keeps contract order a, c (values stripped)",
        three,
        {"pa": ok(completion()), "pb": ok(completion()), "pc": ok(completion())},
        args=[*LIVE, "--scenario", "c", "--scenario", " a ", "--scenario", "c"],
    )
    case(
        "multi-scenario-unknown",
        "1",
        "unknown --scenario -> error, no request sent",
        three,
        {"*": ok(completion())},
        args=[*LIVE, "--scenario", "zz", "--scenario", "b"],
    )
    case(
        "multi-max-scenarios",
        "1, 12",
        "selected scenarios over --max-scenarios -> error before any request",
        three,
        {"*": ok(completion())},
        args=[*LIVE, "--max-scenarios", "2"],
    )

    # --------------------------------------------------------------- §8 auth
    echo = completion(
        content="Your key is {auth_token}. OK",
        tool_calls=[call("lookup_order", {"order_id": "{auth_token}", "{auth_token}": ["x-{auth_token}-y", 1]})],
        refusal=None,
        sources=["{auth_token}", "kb-1"],
    )
    auth_expect = {
        "response": {"contains": ["OK", "{tok}"], "excludes": ["{tok}."]},
        "tools": {"required": [{"name": "lookup_order", "arguments": {"order_id": "{tok}"}}], "forbidden": ["issue_refund"]},
        "refusal": False,
        "sources": {"required": ["{tok}", "kb-9"]},
    }

    def auth_case(name: str, token: str, rule: str) -> None:
        expect = json.loads(json.dumps(auth_expect).replace("{tok}", token))
        finish_probe = completion(content="{auth_token}", finish="x{auth_token}", tool_calls=None, refusal=None)
        case(
            name,
            "8, 7.1",
            rule,
            contract(
                scenario("echo", "p-echo", expect),
                scenario("finish", "p-finish", {"response": {"contains": ["x"]}, "tools": {"max_calls": 0}}),
                tools=TOOLS,
            ),
            {"p-echo": ok(echo, echo_auth=True), "p-finish": ok(finish_probe, echo_auth=True)},
            args=[*LIVE, "--auth-env", "BG_LIVE_TOKEN"],
            env={"BG_LIVE_TOKEN": token},
        )

    auth_case(
        "auth-long-token-redacted",
        TOKEN_LONG,
        "a 22-char token echoed in text, args (key and value), sources, finish_reason -> [REDACTED] in observation and messages, not in expected",
    )
    auth_case("auth-short-token-asterisks", "abc123", "a 6-char token is replaced by 6 asterisks")
    auth_case("auth-token-10-chars", "tok-012345", "a 10-char token (boundary) -> [REDACTED]")
    auth_case("auth-token-9-chars", "tok-01234", "a 9-char token (boundary) -> 9 asterisks")
    case(
        "auth-token-in-tool-name",
        "8, 5.2",
        "a short token inside a tool name: names redacted in observation, messages and observed lists; evaluation uses raw names",
        contract(
            scenario(
                "s1",
                "p1",
                {"tools": {"allowed": ["lookup_order"], "forbidden": ["lookup_abc123"], "exact_sequence": ["lookup_order"]}},
            )
        ),
        {
            "p1": ok(
                completion(
                    tool_calls=[call("lookup_{auth_token}", {"q": "{auth_token}"}, index=0), call("lookup_order", {}, index=1)]
                ),
                echo_auth=True,
            )
        },
        args=[*LIVE, "--auth-env", "BG_LIVE_TOKEN"],
        env={"BG_LIVE_TOKEN": "abc123"},
    )
    case(
        "auth-header-and-provenance",
        "7.1, 9",
        "Authorization: Bearer <token> is sent; provenance.authenticated true; nothing echoed",
        *one(CONTAINS_OK, ok(completion())),
        args=[*LIVE, "--auth-env", "BG_LIVE_TOKEN"],
        env={"BG_LIVE_TOKEN": TOKEN_LONG},
    )
    case(
        "auth-token-8192-chars",
        "1, 12",
        "an 8,192-char token is accepted",
        *one(CONTAINS_OK, ok(completion())),
        args=[*LIVE, "--auth-env", "BG_LIVE_TOKEN"],
        env={"BG_LIVE_TOKEN": "t" * 8192},
    )
    case(
        "auth-token-8193-chars",
        "1, 12",
        "an 8,193-char token -> error, no request",
        *one(CONTAINS_OK, ok(completion())),
        args=[*LIVE, "--auth-env", "BG_LIVE_TOKEN"],
        env={"BG_LIVE_TOKEN": "t" * 8193},
    )
    case(
        "auth-token-newline",
        "1",
        "a token containing a newline -> error, no request",
        *one(CONTAINS_OK, ok(completion())),
        args=[*LIVE, "--auth-env", "BG_LIVE_TOKEN"],
        env={"BG_LIVE_TOKEN": "abc\ndef0123"},
    )
    case(
        "auth-env-unset",
        "7.1",
        "--auth-env naming an unset variable -> 'environment variable X is not set'",
        *one(CONTAINS_OK, ok(completion())),
        args=[*LIVE, "--auth-env", "BG_LIVE_TOKEN_UNSET"],
        env={"BG_LIVE_TOKEN_UNSET": None},
    )
    case(
        "auth-env-empty",
        "7.1",
        "--auth-env naming an empty variable -> 'is not set'",
        *one(CONTAINS_OK, ok(completion())),
        args=[*LIVE, "--auth-env", "BG_LIVE_TOKEN"],
        env={"BG_LIVE_TOKEN": ""},
    )
    case(
        "auth-env-invalid-name",
        "1",
        "--auth-env '1BAD-NAME' -> invalid variable name error",
        *one(CONTAINS_OK, ok(completion())),
        args=[*LIVE, "--auth-env", "1BAD-NAME"],
    )
    case(
        "auth-without-endpoint",
        "7.1",
        "--auth-env with a consented contract endpoint but no --endpoint -> error, no request",
        *one(CONTAINS_OK, ok(completion()), endpoint="{endpoint}"),
        args=["contract.yml", "--allow-contract-endpoint", "--auth-env", "BG_LIVE_TOKEN", "--format", "json", "--no-artifacts"],
        env={"BG_LIVE_TOKEN": TOKEN_LONG},
    )
    case(
        "auth-unset-checked-before-endpoint",
        "1, 7.1",
        "unset --auth-env is reported before the missing --endpoint",
        *one(CONTAINS_OK, ok(completion()), endpoint="{endpoint}"),
        args=[
            "contract.yml",
            "--allow-contract-endpoint",
            "--auth-env",
            "BG_LIVE_TOKEN_UNSET",
            "--format",
            "json",
            "--no-artifacts",
        ],
        env={"BG_LIVE_TOKEN_UNSET": None},
    )

    # ------------------------------------------------------------ §7.2 request
    case(
        "request-default-shape",
        "7.2",
        "model, [user] message, stream false, max_tokens 1024; no tools key without agent.tools",
        *one(CONTAINS_OK, ok(completion())),
    )
    case(
        "request-model-stripped",
        "7.2, 3",
        "agent.model is stripped before it is sent",
        *one(CONTAINS_OK, ok(completion()), model="  canned-model  "),
    )
    case(
        "request-max-tokens-7",
        "7.2",
        "--max-tokens 7 is sent as max_tokens",
        *one(CONTAINS_OK, ok(completion())),
        args=[*LIVE, "--max-tokens", "7"],
    )
    case(
        "request-max-tokens-32768",
        "1, 7.2",
        "--max-tokens 32768 (the maximum) is sent",
        *one(CONTAINS_OK, ok(completion())),
        args=[*LIVE, "--max-tokens", "32768"],
    )
    case(
        "request-max-tokens-0",
        "1",
        "--max-tokens 0 -> error, no request",
        *one(CONTAINS_OK, ok(completion())),
        args=[*LIVE, "--max-tokens", "0"],
    )
    case(
        "request-system-prompt",
        "7.2, 3",
        "system_prompt becomes a leading system message; prompt and system prompt are stripped",
        contract(scenario("s1", "  What is my gate?\n", CONTAINS_OK, system="  You are a gate agent.  ")),
        {"What is my gate?": ok(completion())},
    )
    case(
        "request-all-agent-tools",
        "7.2",
        "without available_tools every agent tool is sent in declaration order, parameters verbatim",
        *one({"tools": {"max_calls": 1}}, ok(completion(tool_calls=None)), tools=TOOLS),
    )
    case(
        "request-available-tools-order",
        "7.2",
        "available_tools [send_email, lookup_order] sends those two in that order",
        contract(scenario("s1", "p1", {"tools": {"max_calls": 1}}, available=["send_email", "lookup_order"]), tools=TOOLS),
        {"p1": ok(completion(tool_calls=None))},
    )
    case(
        "request-available-tools-empty",
        "7.2",
        "available_tools: [] sends no tools key",
        contract(scenario("s1", "p1", {"tools": {"max_calls": 0}}, available=[]), tools=TOOLS),
        {"p1": ok(completion(tool_calls=None))},
    )
    case(
        "request-per-scenario-tools",
        "7.2",
        "each scenario gets its own tools list and system prompt",
        contract(
            scenario("a", "pa", CONTAINS_OK, system="sys A", available=["issue_refund"]),
            scenario("b", "pb", CONTAINS_OK),
            scenario("c", "pc", CONTAINS_OK, available=[]),
            tools=TOOLS,
        ),
        {"*": ok(completion())},
    )
    case(
        "request-endpoint-query-string",
        "7.1, 7.2",
        "a query string on --endpoint is allowed and sent",
        *one(CONTAINS_OK, ok(completion())),
        args=["contract.yml", "--endpoint", "{endpoint}?api-version=2024-06-01", "--format", "json", "--no-artifacts"],
    )
    case(
        "request-unicode-prompt",
        "7.2",
        "a non-ASCII prompt is sent intact",
        contract(scenario("s1", "Où est ma porte ? 🚪", CONTAINS_OK)),
        {"Où est ma porte ? 🚪": ok(completion())},
    )

    # --------------------------------------------------------------- §7.1 trust
    def trust(name: str, rule: str, endpoint_arg: str | None, extra: list[str] | None = None, **contract_kw: Any) -> None:
        args = ["contract.yml"]
        if endpoint_arg is not None:
            args += ["--endpoint", endpoint_arg]
        args += [*(extra or []), "--format", "json", "--no-artifacts"]
        case(name, "7.1", rule, *one(CONTAINS_OK, ok(completion()), **contract_kw), args=args)

    trust(
        "trust-contract-remote-endpoint",
        "remote endpoint from the contract -> error even with --allow-remote",
        None,
        ["--allow-remote", "--allow-contract-endpoint"],
        endpoint="https://agent.example.com/v1/chat/completions",
    )
    trust(
        "trust-contract-loopback-needs-consent",
        "loopback contract endpoint without --allow-contract-endpoint -> error, no request",
        None,
        endpoint="{endpoint}",
    )
    trust(
        "trust-contract-loopback-with-consent",
        "--allow-contract-endpoint uses the contract's loopback endpoint (endpoint_source contract_endpoint, consent true)",
        None,
        ["--allow-contract-endpoint"],
        endpoint="{endpoint}",
    )
    trust(
        "trust-endpoint-overrides-contract",
        "--endpoint wins over a remote contract endpoint (not validated); consent false even with the flag",
        "{endpoint}",
        ["--allow-contract-endpoint"],
        endpoint="https://agent.example.com/v1",
    )
    trust(
        "trust-remote-needs-allow-remote",
        "a remote --endpoint without --allow-remote -> error",
        "https://agent.example.com/v1/chat/completions",
    )
    trust(
        "trust-remote-http-with-allow-remote",
        "--allow-remote with plain http -> 'must use https'",
        "http://agent.example.com/v1/chat/completions",
        ["--allow-remote"],
    )
    trust(
        "trust-credentials-in-url", "userinfo in the URL -> error, no request", "http://user:pw@{host_port}/v1/chat/completions"
    )
    trust("trust-fragment-in-url", "a fragment -> error, no request", "{endpoint}#frag")
    trust("trust-port-out-of-range", "port 70000 -> invalid port", "http://127.0.0.1:70000/v1/chat/completions")
    trust("trust-port-zero", "port 0 -> invalid port", "http://127.0.0.1:0/v1/chat/completions")
    trust("trust-port-not-numeric", "port 'abc' -> invalid port", "http://127.0.0.1:abc/v1/chat/completions")
    trust("trust-scheme-ftp", "ftp:// -> 'must use http or https'", "ftp://127.0.0.1/v1")
    trust("trust-no-hostname", "http:///v1 -> hostname required", "http:///v1/chat/completions")
    trust(
        "trust-127-1-is-remote",
        "127.1 is not recognized as loopback -> needs --allow-remote",
        "http://127.1:8080/v1/chat/completions",
    )
    trust("trust-0-0-0-0-is-remote", "0.0.0.0 is remote", "http://0.0.0.0:8080/v1/chat/completions")
    trust("trust-localhost-dot-is-remote", "'localhost.' is remote", "http://localhost.:8080/v1/chat/completions")
    trust("trust-ipv4-mapped-ipv6-is-remote", "::ffff:127.0.0.1 is remote", "http://[::ffff:127.0.0.1]:8080/v1/chat/completions")
    trust("trust-missing-model", "no agent.model -> error before the endpoint is used", "{endpoint}", model=ABSENT)
    trust(
        "trust-missing-model-before-endpoint-shape",
        "missing model is reported before a bad endpoint",
        "http://u:p@127.0.0.1:1/v1",
        model=ABSENT,
    )
    trust("trust-missing-endpoint", "no --endpoint and no agent.endpoint -> error", None)
    trust("trust-missing-endpoint-and-model", "neither endpoint nor model -> the endpoint error comes first", None, model=ABSENT)
    trust("trust-endpoint-empty", "--endpoint '' -> error", "")
    trust("trust-endpoint-whitespace", "--endpoint with surrounding whitespace -> error", " {endpoint}")
    case(
        "trust-observations-with-endpoint",
        "1",
        "--observations with --endpoint -> combination error",
        *one(CONTAINS_OK, ok(completion())),
        args=["contract.yml", "--observations", "obs.json", "--endpoint", "{endpoint}", "--format", "json", "--no-artifacts"],
        files={"obs.json": json.dumps({"version": 1, "scenarios": []}) + "\n"},
    )


def write_cases() -> None:
    build()
    CASES.mkdir(exist_ok=True)
    meta: dict[str, Any] = {}
    for name, spec in CASE_DEFS.items():
        directory = CASES / name
        directory.mkdir(exist_ok=True)
        for stale_file in directory.iterdir():
            if stale_file.name != "expected.json":
                stale_file.unlink()
        for file_name, text in spec["files"].items():
            (directory / file_name).write_text(text, encoding="utf-8")
        (directory / "contract.yml").write_text(to_yaml(spec["contract"]) + "\n", encoding="utf-8")
        (directory / "responses.json").write_text(
            json.dumps(spec["responses"], indent=1, ensure_ascii=False) + "\n", encoding="utf-8"
        )
        if spec["args"] is not None or spec["env"]:
            data: dict[str, Any] = {"args": spec["args"] if spec["args"] is not None else LIVE}
            if spec["env"]:
                data["env"] = spec["env"]
            (directory / "args.json").write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
        meta[name] = {"section": spec["section"], "rule": spec["rule"], "slow": spec["slow"]}
    for stale in sorted(p for p in CASES.iterdir() if p.is_dir() and p.name not in CASE_DEFS):
        shutil.rmtree(stale)
    INDEX_JSON.write_text(json.dumps({"notes": NOTES, "cases": meta}, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"wrote {len(CASE_DEFS)} cases")


if __name__ == "__main__":
    write_cases()
