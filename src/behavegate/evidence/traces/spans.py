"""One span, whatever wire shape it came in: OTLP/JSON (and its proto3-style
variant), the Python console exporter's objects, or Assay's flat rows.

Decoding is lenient where exporters in the wild differ (hex or base64 ids,
integer or named enums, numbers as strings or numbers, camelCase or
snake_case keys) and strict about what would change a verdict: a span without
a trace id or span id is refused, not guessed. Only the attributes and events
a GenAI reading needs are kept, so memory grows with the GenAI content of the
traces being assembled, not with the file.
"""

from __future__ import annotations

import base64
import binascii
import math
import re
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any, NamedTuple

from behavegate.magnitude import shown

# Attribute families the normalizer reads (GenAI, OpenInference, OpenLLMetry, Assay,
# errors, binding). Everything else (http.*, db.*, ...) is dropped as it is read.
KEPT_PREFIXES = (
    "gen_ai.",
    "llm.",
    "tool.",
    "input.",
    "output.",
    "openinference.",
    "traceloop.",
    "error.",
    "exception.",
    "behavegate.",
    "mcp.method.name",  # an MCP tools/call span (its tool is in the span name)
)
KEPT_EVENTS = ("gen_ai.", "exception")
# Kept families' attributes nothing reads, and often the largest (the system prompt, repeated every step).
UNREAD = frozenset({"gen_ai.system_instructions", "gen_ai.tool.definitions", "llm.invocation_parameters"})
_HEX = re.compile(r"[0-9a-fA-F]+")
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


class SpanShapeError(ValueError):
    """A span object that cannot be read (the message names the field)."""


class SpanEvent(NamedTuple):
    name: str
    time_ns: int | None
    attributes: Mapping[str, Any]


class Span(NamedTuple):
    """A span as the normalizer needs it. ``trace_id``/``span_id`` are lowercase
    hex for OTLP shapes, as written for Assay's free-form ids."""

    trace_id: str
    span_id: str
    parent_id: str | None
    name: str
    start_ns: int | None
    end_ns: int | None
    error: bool  # status ERROR
    status_message: str | None
    attributes: Mapping[str, Any]
    events: tuple[SpanEvent, ...]
    resource: Mapping[str, Any]
    base64_ids: bool = False  # ids were base64 (proto3-style JSON)
    status_recorded: bool = True  # False: the row has no status at all (Assay), so a failure may not show


class Keep:
    """Which attributes to keep: the GenAI families plus the binding attribute."""

    def __init__(self, extra: tuple[str, ...] = (), *, everything: bool = False) -> None:
        self.extra = frozenset(extra)
        self.everything = everything

    def __call__(self, key: str) -> bool:
        return self.everything or key in self.extra or (key.startswith(KEPT_PREFIXES) and key not in UNREAD)


_EVERYTHING = Keep(everything=True)


# --- OTLP/JSON and proto3-style JSON --------------------------------------------------------


def _get(raw: Mapping[str, Any], camel: str, snake: str) -> Any:
    value = raw.get(camel)
    return raw.get(snake) if value is None else value


def any_value(value: Any) -> Any:
    """An OTLP ``AnyValue`` as a plain value (kvlists as dicts, arrays as lists)."""
    if not isinstance(value, Mapping):
        return value  # already plain (lenient writers)
    for key in ("stringValue", "string_value"):
        if key in value:
            return value[key]
    for key in ("boolValue", "bool_value"):
        if key in value:
            return bool(value[key])
    for key in ("intValue", "int_value"):
        if key in value:
            return _integer(value[key], "intValue")
    for key in ("doubleValue", "double_value"):
        if key in value:
            number = float(value[key])
            # proto3 JSON writes "NaN" and "Infinity": kept as that text, never a number in a report
            return number if math.isfinite(number) else str(value[key])
    for key in ("arrayValue", "array_value"):
        if key in value:
            return [any_value(item) for item in (value[key] or {}).get("values") or ()]
    for key in ("kvlistValue", "kvlist_value"):
        if key in value:
            return {str(kv.get("key")): any_value(kv.get("value")) for kv in (value[key] or {}).get("values") or ()}
    for key in ("bytesValue", "bytes_value"):
        if key in value:
            return value[key]  # base64 text, kept as written
    return None  # an empty AnyValue


INT64 = (-(2**63), 2**63 - 1)  # an OTLP intValue
UINT64 = (0, 2**64 - 1)  # an OTLP time in Unix nanoseconds (fixed64)


def _integer(value: Any, what: str, bounds: tuple[int, int] = INT64) -> int:
    """A 64-bit integer as OTLP writes it (a number, or its decimal text); a longer one is
    refused before any conversion or arithmetic (a 400-digit end time, a 5,000-digit string)."""
    if isinstance(value, bool):
        raise SpanShapeError(f"{what} must be an integer")
    number: int | None = None
    if isinstance(value, int):
        number = value
    elif isinstance(value, float) and value.is_integer():
        number = int(value)
    elif isinstance(value, str) and value.strip().lstrip("-").isdigit():
        text = value.strip()
        if len(text) > 21:  # 2**64 has 20 digits: past that the text is out of range, unconverted
            raise SpanShapeError(f"{what} is {shown(text)}, not a 64-bit integer")
        number = int(text)
    if number is None:
        raise SpanShapeError(f"{what} must be an integer, not {value!r:.40}")
    if not bounds[0] <= number <= bounds[1]:
        raise SpanShapeError(f"{what} is {shown(number)}, not a 64-bit integer")
    return number


def _time(value: Any, what: str) -> int | None:
    if value is None or value == "" or value == 0 or value == "0":
        return None  # proto3 default: not set
    return _integer(value, what, UINT64)


def otlp_id(value: Any, size: int, what: str) -> tuple[str | None, bool]:
    """A trace (16 bytes) or span (8 bytes) id as lowercase hex; (id, was_base64)."""
    if value is None or value == "":
        return None, False
    if not isinstance(value, str):
        raise SpanShapeError(f"{what} must be a string")
    if len(value) == size * 2 and _HEX.fullmatch(value):
        return value.lower(), False
    try:
        raw = base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        raw = b""
    if len(raw) == size:
        return raw.hex(), True
    return value, False  # free-form: kept as written, never guessed into another id


def _status(raw: Any) -> tuple[bool, str | None]:
    if not isinstance(raw, Mapping):
        return False, None
    code = raw.get("code", raw.get("status_code"))
    message = raw.get("message", raw.get("description"))
    error = code in (2, "2", "STATUS_CODE_ERROR", "ERROR", "StatusCode.ERROR")
    return error, message if isinstance(message, str) and message else None


def _attributes(raw: Any, keep: Keep) -> dict[str, Any]:
    found: dict[str, Any] = {}
    if isinstance(raw, Mapping):  # a plain map (lenient writers)
        for key, value in raw.items():
            if keep(key):
                found[key] = value
        return found
    if raw is None:
        return found
    if not isinstance(raw, list):
        raise SpanShapeError(f"attributes must be a list of key-value objects, not {type(raw).__name__}")
    for item in raw:
        if not isinstance(item, Mapping):
            continue
        key = item.get("key")
        if isinstance(key, str) and keep(key):
            found[key] = any_value(item.get("value"))
    return found


def _events(raw: Any, time_key: tuple[str, str], plain: bool) -> tuple[SpanEvent, ...]:
    events = []
    for event in raw or ():
        if not isinstance(event, Mapping):
            continue
        name = event.get("name")
        if not isinstance(name, str) or not name.startswith(KEPT_EVENTS):
            continue
        stamp = event.get(time_key[0], event.get(time_key[1]))
        when = iso_time(stamp, "event timestamp") if plain else _time(stamp, "event timeUnixNano")
        # An event's attributes are its message: kept whole (events of the kept kinds are few).
        events.append(SpanEvent(name, when, _attributes(event.get("attributes"), _EVERYTHING) | _all(event)))
    return tuple(events)


def _all(event: Mapping[str, Any]) -> dict[str, Any]:
    # Log-style events carry their JSON in a body; keep it under one name.
    body = event.get("body")
    return {"body": any_value(body)} if body is not None else {}


def otlp_span(raw: Any, resource: Mapping[str, Any], keep: Keep) -> Span:
    """One span of an OTLP/JSON (or proto3-style JSON) ``spans`` array."""
    if not isinstance(raw, Mapping):
        raise SpanShapeError("a span must be an object")
    trace_id, b64_trace = otlp_id(_get(raw, "traceId", "trace_id"), 16, "traceId")
    span_id, b64_span = otlp_id(_get(raw, "spanId", "span_id"), 8, "spanId")
    if trace_id is None or span_id is None:
        raise SpanShapeError("a span needs a traceId and a spanId")
    parent, _ = otlp_id(_get(raw, "parentSpanId", "parent_span_id"), 8, "parentSpanId")
    error, message = _status(raw.get("status"))
    return Span(
        trace_id,
        span_id,
        parent,
        str(raw.get("name") or ""),
        _time(_get(raw, "startTimeUnixNano", "start_time_unix_nano"), "startTimeUnixNano"),
        _time(_get(raw, "endTimeUnixNano", "end_time_unix_nano"), "endTimeUnixNano"),
        error,
        message,
        _attributes(raw.get("attributes"), keep),
        _events(raw.get("events"), ("timeUnixNano", "time_unix_nano"), plain=False),
        resource,
        b64_trace or b64_span,
    )


def otlp_resource(raw: Any, keep: Keep) -> dict[str, Any]:
    return _attributes(raw.get("attributes"), keep) if isinstance(raw, Mapping) else {}


# --- the Python console exporter --------------------------------------------------------------


def iso_time(value: Any, what: str) -> int | None:
    """ISO-8601 (the console exporter's ``2026-01-01T00:00:00.250000Z``) as Unix nanoseconds."""
    if value is None:
        return None
    if not isinstance(value, str):
        raise SpanShapeError(f"{what} must be an ISO-8601 time")
    try:
        moment = datetime.fromisoformat(value)
    except ValueError:
        raise SpanShapeError(f"{what} is not an ISO-8601 time: {value!r:.40}") from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    delta = moment - _EPOCH
    return (delta.days * 86_400 + delta.seconds) * 1_000_000_000 + delta.microseconds * 1_000


def _console_id(value: Any, size: int, what: str) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str):
        raise SpanShapeError(f"{what} must be a string")
    text = value[2:] if value.lower().startswith("0x") else value
    return otlp_id(text.rjust(size * 2, "0") if _HEX.fullmatch(text) else text, size, what)[0]


def console_shaped(value: Any) -> bool:
    """A console-exporter span object (a JSON log line with a ``context`` key is not)."""
    context = value.get("context") if isinstance(value, dict) else None
    return isinstance(context, dict) and "trace_id" in context and "span_id" in context


def console_span(raw: Mapping[str, Any], keep: Keep) -> Span:
    """One object printed by the Python SDK's ``ConsoleSpanExporter``."""
    context = raw.get("context")
    if not isinstance(context, Mapping):
        raise SpanShapeError("a console span needs a context")
    trace_id = _console_id(context.get("trace_id"), 16, "context.trace_id")
    span_id = _console_id(context.get("span_id"), 8, "context.span_id")
    if trace_id is None or span_id is None:
        raise SpanShapeError("a console span needs context.trace_id and context.span_id")
    error, message = _status(raw.get("status"))
    resource = raw.get("resource")
    return Span(
        trace_id,
        span_id,
        _console_id(raw.get("parent_id"), 8, "parent_id"),
        str(raw.get("name") or ""),
        iso_time(raw.get("start_time"), "start_time"),
        iso_time(raw.get("end_time"), "end_time"),
        error,
        message,
        _attributes(raw.get("attributes"), keep),
        _events(raw.get("events"), ("timestamp", "timestamp"), plain=True),
        _attributes(resource.get("attributes"), keep) if isinstance(resource, Mapping) else {},
    )


# --- Assay's flat span rows --------------------------------------------------------------------


def assay_span(raw: Mapping[str, Any], keep: Keep) -> Span:
    """One row of Assay's ``ingest-otel`` input: free-form snake_case ids, camelCase times, a plain map."""
    trace_id, span_id = raw.get("trace_id"), raw.get("span_id")
    if not isinstance(trace_id, str) or not trace_id or not isinstance(span_id, str) or not span_id:
        raise SpanShapeError("an Assay span row needs string trace_id and span_id")
    parent = raw.get("parent_span_id")
    error, message = _status(raw.get("status"))
    return Span(
        trace_id,
        span_id,
        parent if isinstance(parent, str) and parent else None,
        str(raw.get("name") or ""),
        _time(raw.get("startTimeUnixNano"), "startTimeUnixNano"),
        _time(raw.get("endTimeUnixNano"), "endTimeUnixNano"),
        error,
        message,
        _attributes(raw.get("attributes"), keep),
        (),
        {},
        status_recorded="status" in raw,
    )
