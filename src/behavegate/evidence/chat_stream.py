"""Streamed Chat Completions (``text/event-stream``) assembled into one response.

The stream is fed as it arrives (:meth:`Assembly.feed`) and, at ``[DONE]``, gives
back the response a non-streaming endpoint would have sent: ``choices[0].message``
with the joined ``content`` (and ``refusal``), the tool calls put together by their
``index`` from their argument fragments, the last ``finish_reason`` and the last
``usage``. That response goes through the same normalization as a plain one, so a
stream and a plain answer of the same behaviour are the same Observation.

What a stream cannot be trusted to have finished is an EndpointError (the attempt is
incomplete with the reason): a body that ends before ``[DONE]`` or without a
``finish_reason``, a chunk that is not JSON, an ``error`` event, more than
STREAM_MAX_CHUNKS events. A field of the wrong type breaks only its own evidence,
as in a plain response. Bytes and time are bounded by the transport that feeds it.
"""

from __future__ import annotations

from typing import Any

from behavegate.evidence.chat import EndpointError, strict_json
from behavegate.limits import RESPONSE_MAX_TOOL_CALLS, STREAM_MAX_CHUNKS

EVENT_STREAM = "text/event-stream"
DONE = "[DONE]"
# What a broken field becomes in the assembled message: a shape normalization rejects
# (an unknown content part; tool_calls that are not a list), so it stays unobserved.
_BROKEN_TEXT = [{"type": "unreadable stream fragment"}]


def is_event_stream(content_type: str) -> bool:
    return content_type.split(";", 1)[0].strip().lower() == EVENT_STREAM


class _Call:
    """One tool call being put together from its fragments."""

    def __init__(self) -> None:
        self.id: str | None = None
        self.name: list[str] = []
        self.arguments: list[str] = []

    def as_dict(self) -> dict[str, Any]:
        call: dict[str, Any] = {} if self.id is None else {"id": self.id}
        call.update(type="function", function={"name": "".join(self.name), "arguments": "".join(self.arguments)})
        return call


class Assembly:
    """The state of one stream: the line not yet ended, the event not yet dispatched,
    and what the deltas have said so far."""

    def __init__(self, max_chunks: int = STREAM_MAX_CHUNKS) -> None:
        self.max_chunks = max_chunks
        self.chunks = 0
        self.done = False
        self._partial: list[bytes] = []  # the line not yet ended, in the pieces it came in
        self._after_cr = False  # the last bytes fed ended in "\r"
        self._data: list[bytes] = []
        self._content: list[str] = []
        self._content_ok = True
        self._refusal: list[str] | None = None
        self._refusal_ok = True
        self._calls: dict[int, _Call] = {}
        self._calls_seen = False
        self._calls_ok = True
        self._sources: list[Any] | None = None
        self._finish_reason: Any = None
        self._usage: Any = None

    def feed(self, data: bytes) -> bool:
        """Take the next bytes of the body; True once ``[DONE]`` arrived (read no more).
        Linear in the bytes fed: a line not yet ended is kept in pieces, joined once at its end."""
        if self.done:
            return True
        if self._after_cr and data[:1] == b"\n":
            data = data[1:]  # the "\n" of a "\r\n" split across reads: that line was ended by the "\r"
        self._after_cr = False
        if b"\n" not in data and b"\r" not in data:
            if data:
                self._partial.append(data)
            return False
        if self._partial:
            self._partial.append(data)
            data = b"".join(self._partial)
            self._partial = []
        lines = data.splitlines(keepends=True)
        if not lines[-1].endswith((b"\n", b"\r")):
            self._partial.append(lines.pop())
        self._after_cr = data.endswith(b"\r")
        for line in lines:
            self._line(line.rstrip(b"\r\n"))
            if self.done:
                return True
        return False

    def finish(self) -> dict[str, Any]:
        """The assembled response, once the body has ended."""
        if not self.done:
            # A last line without its end of line still counts (the body ended it).
            if self._partial:
                self._line(b"".join(self._partial))
                self._partial = []
            if not self.done:
                self._line(b"")  # the body's end dispatches a pending event
        if not self.done:
            raise EndpointError("agent endpoint stream ended before [DONE]")
        if self._finish_reason is None:
            raise EndpointError("agent endpoint stream ended without a finish_reason")
        return self.response()

    def response(self) -> dict[str, Any]:
        message: dict[str, Any] = {"role": "assistant", "content": "".join(self._content) if self._content else None}
        if not self._content_ok:
            message["content"] = _BROKEN_TEXT
        if self._refusal is not None:
            message["refusal"] = "".join(self._refusal) if self._refusal_ok else 0
        if self._calls_seen:
            ordered = [self._calls[index].as_dict() for index in sorted(self._calls)]
            message["tool_calls"] = ordered if self._calls_ok else {}
        if self._sources is not None:
            message["sources"] = self._sources
        raw: dict[str, Any] = {"choices": [{"index": 0, "message": message, "finish_reason": self._finish_reason}]}
        if self._usage is not None:
            raw["usage"] = self._usage
        return raw

    # -- the event-stream format (WHATWG HTML, server-sent events) -----------------------

    def _line(self, line: bytes) -> None:
        if not line:
            if self._data:
                data, self._data = b"\n".join(self._data), []
                self._event(data)
            return
        if line.startswith(b":"):
            return  # a comment (keep-alive)
        name, _, value = line.partition(b":")
        if name == b"data":
            self._data.append(value[1:] if value.startswith(b" ") else value)
        # event, id and retry carry nothing a Chat Completions stream needs

    def _event(self, data: bytes) -> None:
        self.chunks += 1
        if self.chunks > self.max_chunks:
            raise EndpointError(f"agent endpoint stream exceeds {self.max_chunks:,} chunks")
        if data.strip() == DONE.encode():
            self.done = True
            return
        try:
            chunk = strict_json(data.decode("utf-8"))
        except (UnicodeError, ValueError, RecursionError):
            raise EndpointError(f"agent endpoint stream chunk {self.chunks} is not valid JSON") from None
        if not isinstance(chunk, dict):
            raise EndpointError(f"agent endpoint stream chunk {self.chunks} must be an object")
        if chunk.get("error") is not None:
            raise EndpointError(f"agent endpoint stream reported an error at chunk {self.chunks}")
        if chunk.get("usage") is not None:
            self._usage = chunk["usage"]
        choices = chunk.get("choices")
        if choices is None:
            return
        if not isinstance(choices, list):
            raise EndpointError(f"agent endpoint stream chunk {self.chunks} has choices that are not a list")
        for choice in choices:
            # Only the first choice is evidence, as choices[0] of a plain response.
            if isinstance(choice, dict) and choice.get("index", 0) == 0:
                self._choice(choice)

    def _choice(self, choice: dict[str, Any]) -> None:
        if choice.get("finish_reason") is not None:
            self._finish_reason = choice["finish_reason"]
        delta = choice.get("delta")
        if delta is None:
            return
        if not isinstance(delta, dict):
            self._content_ok = self._calls_ok = False
            return
        content = delta.get("content")
        if isinstance(content, str):
            self._content.append(content)
        elif content is not None:
            self._content_ok = False
        if "refusal" in delta:
            self._refusal = self._refusal or []
            if isinstance(delta["refusal"], str):
                self._refusal.append(delta["refusal"])
            elif delta["refusal"] is not None:
                self._refusal_ok = False
        if "tool_calls" in delta:
            self._tool_calls(delta["tool_calls"])
        if isinstance(delta.get("sources"), list):
            self._sources = [*(self._sources or []), *delta["sources"]]

    def _tool_calls(self, fragments: Any) -> None:
        self._calls_seen = True
        if fragments is None:
            return
        if not isinstance(fragments, list):
            self._calls_ok = False
            return
        for fragment in fragments:
            index = fragment.get("index") if isinstance(fragment, dict) else None
            if not isinstance(index, int) or isinstance(index, bool) or not 0 <= index < RESPONSE_MAX_TOOL_CALLS:
                self._calls_ok = False
                continue
            assert isinstance(fragment, dict)
            call = self._calls.setdefault(index, _Call())
            if isinstance(fragment.get("id"), str) and fragment["id"] and call.id is None:
                call.id = fragment["id"]  # sent with the first fragment; some servers repeat it
            function = fragment.get("function")
            if function is None:
                continue
            if not isinstance(function, dict):
                self._calls_ok = False
                continue
            for key, parts in (("name", call.name), ("arguments", call.arguments)):
                value = function.get(key)
                if isinstance(value, str):
                    parts.append(value)
                elif value is not None:
                    self._calls_ok = False
