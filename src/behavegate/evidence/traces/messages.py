"""What one span says, in whichever attribute dialect wrote it.

* GenAI semantic conventions, current (1.37+): ``gen_ai.input.messages`` /
  ``gen_ai.output.messages`` with typed parts, ``gen_ai.tool.call.arguments``;
* GenAI 1.28–1.36: per-message span events (``gen_ai.choice``, ...), their body
  in ``gen_ai.event.content``;
* GenAI ≤1.27: ``gen_ai.content.prompt`` / ``.completion`` events in OpenAI format;
* OpenInference: flattened ``llm.input_messages.N.message.*``, ``input.value``;
* OpenLLMetry: flattened ``gen_ai.prompt.N.*`` / ``gen_ai.completion.N.*``,
  ``traceloop.entity.input`` / ``.output``; LiteLLM's callback: ``gen_ai.completion.N.function_call.*``
  per requested call beside ``gen_ai.output.messages`` whose parts leave the calls out;
* Assay's rows: ``gen_ai.prompt`` / ``gen_ai.completion`` as plain text,
  ``gen_ai.tool.args`` / ``.result``.

Each reader returns what it found and None for what the span does not say; a
value that is present but unusable (arguments that are not a JSON object) is
"not observed", never a guess.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, NamedTuple

from behavegate import finite_json
from behavegate.evidence.chat import EndpointError, check_shape
from behavegate.evidence.traces.flattened import UnreadableText, group, one_output
from behavegate.evidence.traces.spans import Span
from behavegate.magnitude import in_range, quantity
from behavegate.text import surrogate_paths

MODEL_OPERATIONS = frozenset({"chat", "text_completion", "generate_content"})
AGENT_OPERATIONS = frozenset({"invoke_agent", "create_agent"})

# Provider finish reasons, in the words the rest of behavegate uses (OpenAI's).
_FINISH = {
    "stop": "stop",
    "end_turn": "stop",
    "stop_sequence": "stop",
    "complete": "stop",
    "completed": "stop",
    "eos": "stop",
    "finish_reason_stop": "stop",
    "tool_calls": "tool_calls",
    "tool_call": "tool_calls",
    "tool_use": "tool_calls",
    "function_call": "tool_calls",
    "length": "length",
    "max_tokens": "length",
    "max_output_tokens": "length",
    "content_filter": "content_filter",
    "safety": "content_filter",
    "recitation": "content_filter",
}


class Requested(NamedTuple):
    """A tool call the model asked for in its output."""

    call_id: str | None
    name: str
    arguments: Mapping[str, Any] | None


class ModelReading(NamedTuple):
    text: str | None  # the assistant's output text
    requested: tuple[Requested, ...]
    finish_reasons: tuple[str, ...]
    captured: bool  # the output's content was recorded (text or calls or an explicit empty output)
    first_user: str | None
    input_tokens: int | None
    output_tokens: int | None
    total_tokens: int | None
    model: str | None
    history: Mapping[str, Mapping[str, Any]]  # call id -> arguments, from the input messages


def classify(span: Span) -> str | None:
    """model | tool | agent | workflow | None (not a GenAI span), in the spec's order."""
    a = span.attributes
    op, tl = _name(a.get("gen_ai.operation.name")), _name(a.get("traceloop.span.kind"))  # an object names no kind
    oi = str(a.get("openinference.span.kind") or "").upper()
    if op in MODEL_OPERATIONS or oi == "LLM" or "llm.request.type" in a:
        return "model"
    if op == "execute_tool" or oi == "TOOL" or tl == "tool" or (op is None and mcp_tool_call(span)):
        return "tool"
    if op in AGENT_OPERATIONS or oi == "AGENT" or tl == "agent":
        return "agent"
    if op == "invoke_workflow" or tl == "workflow" or oi == "CHAIN":
        return "workflow"
    return None


def mcp_tool_call(span: Span) -> bool:
    """An MCP ``tools/call`` span (OTel MCP conventions; ``gen_ai.operation.name`` is optional there)."""
    return span.attributes.get("mcp.method.name") == "tools/call"


def finish_reason(value: str) -> str:
    return _FINISH.get(value.strip().lower(), value.strip().lower())


# --- small decoders ---------------------------------------------------------------------------


SURROGATE_PROBLEM = "text with an unpaired surrogate (a \\ud800-\\udfff escape) cannot be judged or reported"


def parse_json(value: Any) -> Any:
    """A JSON string's value (NaN and Infinity refused); anything else as it is; None when the
    string is not JSON; UnreadableText when it decodes to text with an unpaired surrogate."""
    if not isinstance(value, str):
        return value
    try:
        parsed = finite_json.loads(value)
    except (ValueError, RecursionError):
        return None
    if "\\u" in value and surrogate_paths(parsed, ""):
        raise UnreadableText(SURROGATE_PROBLEM)
    return parsed


def arguments_of(value: Any) -> Mapping[str, Any] | None:
    """Tool arguments: a JSON object (or a string holding one) that a report can hold, as the
    live adapter requires (depth, size, no NaN); anything else is not observed."""
    parsed = parse_json(value)
    if not isinstance(parsed, dict):
        return None
    try:
        check_shape(parsed)
        json.dumps(parsed, allow_nan=False)
    except (EndpointError, ValueError, RecursionError):
        return None
    return parsed


def text_of(value: Any, limit: int | None = None) -> str | None:
    """Text as recorded: a string (a JSON-encoded string decoded), else compact JSON; ``limit``
    cuts what is only shown (tool results), never what is judged."""
    if value is None:
        return None
    if isinstance(value, str):
        decoded = parse_json(value) if value[:1] == '"' else None
        text = decoded if isinstance(decoded, str) else value
    else:
        text = json.dumps(value, ensure_ascii=False, sort_keys=True)
    return text if limit is None else text[:limit]


def _name(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _int(value: Any) -> int | None:
    """A count as exporters write it (number, float or text); a negative one, or one past any
    real run's (magnitude.quantity), is no count: unknown, never zero."""
    if isinstance(value, float) and value.is_integer() and in_range(value):
        return quantity(int(value))
    if (
        isinstance(value, str) and value.strip().isascii() and value.strip().isdigit() and len(value.strip()) <= 20
    ):  # '²' is a digit int() refuses
        return quantity(int(value))
    return quantity(value)


def first(attributes: Mapping[str, Any], *keys: str) -> Any:
    for key in keys:
        value = attributes.get(key)
        if value is not None:
            return value
    return None


# --- message lists (GenAI parts, OpenAI format) -------------------------------------------------


def _content_text(content: Any) -> str | None:
    if isinstance(content, str):
        return content
    if isinstance(content, list):  # OpenAI content parts
        texts = [p.get("text") or p.get("content") for p in content if isinstance(p, Mapping)]
        joined = "".join(t for t in texts if isinstance(t, str))
        return joined or None
    return None


def _openai_calls(calls: Any) -> list[Requested]:
    found = []
    for call in calls if isinstance(calls, list) else ():
        if not isinstance(call, Mapping):
            continue
        function: Mapping[str, Any] = call["function"] if isinstance(call.get("function"), Mapping) else call
        name = function.get("name")
        if isinstance(name, str) and name.strip():
            name = name.strip()
            call_id = call.get("id")
            found.append(Requested(call_id if isinstance(call_id, str) else None, name, arguments_of(function.get("arguments"))))
    return found


class _Messages(NamedTuple):
    texts: list[str]
    calls: list[Requested]
    finish: list[str]
    first_user: str | None
    readable: bool = True  # False: the value was there but not messages (cut by a length limit, not JSON)


def read_messages(messages: Any, *, output: bool) -> _Messages:
    """GenAI ``parts`` messages or OpenAI-format messages (or choices) alike."""
    texts: list[str] = []
    calls: list[Requested] = []
    finish: list[str] = []
    first_user = None
    for item in messages if isinstance(messages, list) else [messages] if isinstance(messages, Mapping) else ():
        if not isinstance(item, Mapping):
            continue
        message: Mapping[str, Any] = item["message"] if isinstance(item.get("message"), Mapping) else item  # a choice
        reason = item.get("finish_reason") or message.get("finish_reason")
        if isinstance(reason, str) and reason:
            finish.append(finish_reason(reason))
        role = message.get("role", "assistant" if output else None)
        parts = message.get("parts")
        if isinstance(parts, list):
            for part in parts:
                if not isinstance(part, Mapping):
                    continue
                if part.get("type") == "text" and isinstance(part.get("content"), str):
                    if role == "user" and first_user is None:
                        first_user = part["content"]
                    elif role in ("assistant", None):
                        texts.append(part["content"])
                elif part.get("type") == "tool_call" and isinstance(part.get("name"), str):
                    call_id = part.get("id")
                    calls.append(
                        Requested(
                            call_id if isinstance(call_id, str) else None,
                            part["name"].strip(),
                            arguments_of(part.get("arguments")),
                        )
                    )
            continue
        text = _content_text(message.get("content"))
        if role == "user" and first_user is None and text is not None:
            first_user = text
        elif role in ("assistant", None) and text:
            texts.append(text)
        calls.extend(_openai_calls(message.get("tool_calls")))
    return _Messages(texts, calls, finish, first_user, isinstance(messages, list | Mapping))


def _event_body(attributes: Mapping[str, Any]) -> Any:
    for key in ("gen_ai.event.content", "body"):
        if key in attributes:
            return parse_json(attributes[key])
    return {key: parse_json(value) if key in ("message", "tool_calls") else value for key, value in attributes.items()}


# --- model spans ------------------------------------------------------------------------------


def read_model(span: Span) -> ModelReading:
    a = span.attributes
    inputs: list[_Messages] = []
    ways: list[tuple[int, _Messages]] = []  # each output and the way it was written: a span may write one output twice
    # GenAI 1.37+: message attributes (JSON strings, or structured values)
    if "gen_ai.input.messages" in a:
        inputs.append(read_messages(parse_json(a["gen_ai.input.messages"]), output=False))
    if "gen_ai.output.messages" in a:
        ways.append((0, read_messages(parse_json(a["gen_ai.output.messages"]), output=True)))
    # GenAI 1.28-1.36 and ≤1.27: events
    for event in span.events:
        body = _event_body(event.attributes)
        if event.name == "gen_ai.content.prompt":
            inputs.append(read_messages(parse_json(event.attributes.get("gen_ai.prompt")), output=False))
        elif event.name == "gen_ai.content.completion":
            ways.append((1, completion(event.attributes.get("gen_ai.completion"))))
        elif event.name == "gen_ai.user.message" and isinstance(body, Mapping):
            inputs.append(read_messages({**body, "role": "user"}, output=False))
        elif event.name == "gen_ai.assistant.message" and isinstance(body, Mapping):
            inputs.append(read_messages({**body, "role": "assistant"}, output=False))
        elif event.name == "gen_ai.choice" and isinstance(body, Mapping):
            ways.append((1, read_messages(body, output=True)))
    # OpenInference and OpenLLMetry: flattened, indexed attributes
    for prefix, output in (("llm.input_messages", False), ("llm.output_messages", True)):
        items = group(a, prefix)
        if items:
            if output:
                ways.append((2, _openinference(items, output)))
            else:
                inputs.append(_openinference(items, output))
    for prefix, output in (("gen_ai.prompt", False), ("gen_ai.completion", True)):
        items = group(a, prefix)
        if items:
            if output:
                ways.append((3, _traceloop(items, output)))
            else:
                inputs.append(_traceloop(items, output))
    # OpenInference: the response in output.value, the answer itself when no output messages were
    # written (a streamed answer); beside them, for the calls it lists (a call either way lists is a call)
    if str(a.get("openinference.span.kind") or "").upper() == "LLM" and "output.value" in a:
        response = _output_value(a["output.value"])
        if not ways or (response.readable and response.calls):
            ways.append((4, response))
    # Assay rows: plain text
    if isinstance(a.get("gen_ai.prompt"), str):
        inputs.append(completion(a["gen_ai.prompt"], role="user"))
    if isinstance(a.get("gen_ai.completion"), str):
        ways.append((5, completion(a["gen_ai.completion"])))
    outputs = [found for _, found in ways]
    reasons = _reasons(first(a, "gen_ai.response.finish_reasons", "llm.finish_reason"))  # OpenInference: llm.finish_reason
    for found in outputs:
        reasons.extend(r for r in found.finish if r not in reasons)
    texts, requested = one_output(ways)
    input_tokens = _int(first(a, "gen_ai.usage.input_tokens", "gen_ai.usage.prompt_tokens", "llm.token_count.prompt"))
    output_tokens = _int(first(a, "gen_ai.usage.output_tokens", "gen_ai.usage.completion_tokens", "llm.token_count.completion"))
    total = _int(first(a, "llm.usage.total_tokens", "llm.token_count.total", "gen_ai.usage.total_tokens"))
    if total is None and input_tokens is not None and output_tokens is not None:
        total = input_tokens + output_tokens
    history = {c.call_id: c.arguments for found in inputs for c in found.calls if c.call_id and c.arguments is not None}
    model = first(a, "gen_ai.response.model", "gen_ai.request.model", "llm.model_name")
    return ModelReading(
        text="".join(texts) if texts else None,
        requested=requested,
        finish_reasons=tuple(reasons),
        captured=bool(outputs) and all(found.readable for found in outputs),
        first_user=next((found.first_user for found in inputs if found.first_user is not None), None),
        input_tokens=input_tokens,
        output_tokens=output_tokens,
        total_tokens=total,
        model=model if isinstance(model, str) else None,
        history=history,
    )


def _reasons(value: Any) -> list[str]:
    value = parse_json(value) if isinstance(value, str) and value.startswith("[") else value
    if isinstance(value, str):
        return [finish_reason(value)] if value else []
    return [finish_reason(v) for v in value if isinstance(v, str) and v] if isinstance(value, list) else []


def completion(value: Any, role: str = "assistant") -> _Messages:
    """A ≤1.27 prompt/completion: OpenAI-format JSON, or (Assay) plain text."""
    looks_like_json = isinstance(value, str) and value.lstrip()[:1] in ("[", "{")
    parsed = parse_json(value) if looks_like_json else None
    if isinstance(parsed, list | dict):
        return read_messages(parsed, output=role == "assistant")
    if not isinstance(value, str) or looks_like_json:  # JSON cut short (a length limit): neither messages nor text
        return _Messages([], [], [], None, readable=False)
    if role == "user":
        return _Messages([], [], [], value)
    return _Messages([value], [], [], None)


def _output_value(value: Any) -> _Messages:
    """OpenInference's ``output.value`` of a model span: a Chat Completions response (its
    choices), a Responses API response (its output items' text and calls) or plain text."""
    parsed = parse_json(value) if isinstance(value, str) and value.lstrip()[:1] == "{" else None
    if isinstance(parsed, dict) and isinstance(parsed.get("choices"), list):
        return read_messages(parsed["choices"], output=True)
    if isinstance(parsed, dict) and isinstance(parsed.get("output"), list):
        texts: list[str] = []
        calls: list[Requested] = []
        for item in parsed["output"]:
            if isinstance(item, Mapping) and item.get("type") == "message":
                texts += [
                    c["text"] for c in item.get("content") or () if isinstance(c, Mapping) and isinstance(c.get("text"), str)
                ]
            elif isinstance(item, Mapping) and item.get("type") == "function_call" and isinstance(item.get("name"), str):
                call_id = item.get("call_id")
                calls.append(
                    Requested(call_id if isinstance(call_id, str) else None, item["name"], arguments_of(item.get("arguments")))
                )
        return _Messages(texts, calls, [], None)
    if isinstance(value, str) and parsed is None and value.lstrip()[:1] not in ("{", "["):
        return _Messages([value] if value else [], [], [], None)
    return _Messages([], [], [], None, readable=False)  # JSON of a shape not known: not a guess


def _openinference(items: list[dict[str, Any]], output: bool) -> _Messages:
    messages = []
    for item in items:
        calls = [
            {
                "id": call.get("tool_call.id"),
                "function": {"name": call.get("tool_call.function.name"), "arguments": call.get("tool_call.function.arguments")},
            }
            for call in group(item, "message.tool_calls")
        ]
        if isinstance(item.get("message.function_call_name"), str):  # the legacy form
            calls.append(
                {
                    "function": {
                        "name": item["message.function_call_name"],
                        "arguments": item.get("message.function_call_arguments_json"),
                    }
                }
            )
        contents = [c.get("message_content.text") for c in group(item, "message.contents")]
        content = item.get("message.content")
        if content is None and contents:
            content = "".join(c for c in contents if isinstance(c, str))
        messages.append({"role": item.get("message.role"), "content": content, "tool_calls": calls})
    return read_messages(messages, output=output)


def _traceloop(items: list[dict[str, Any]], output: bool) -> _Messages:
    messages = [
        {
            "role": item.get("role"),
            "content": item.get("content"),
            "finish_reason": item.get("finish_reason"),
            "tool_calls": [
                {"id": call.get("id"), "function": {"name": call.get("name"), "arguments": call.get("arguments")}}
                for call in group(item, "tool_calls")
            ]
            + _function_call(item),
        }
        for item in items
    ]
    return read_messages(messages, output=output)


def _function_call(item: Mapping[str, Any]) -> list[dict[str, Any]]:
    """``N.function_call.name`` / ``.arguments``: the legacy OpenAI form, which LiteLLM's
    OpenTelemetry callback writes for each requested tool call (N counts the calls)."""
    name = item.get("function_call.name")
    if name is None:
        return []
    return [{"id": item.get("function_call.id"), "function": {"name": name, "arguments": item.get("function_call.arguments")}}]
