"""In-process evidence: a Python callable answers instead of an HTTP endpoint.

The agent is any callable ``agent(messages, tools)``, sync or async, given the
conversation so far and the tools offered exactly as an endpoint would receive
them (OpenAI Chat Completions shapes), and returning what it did: a
:class:`Reply`, a plain string (its answer, no tool called), or a Chat Completions
response (a dict, or an SDK object with ``model_dump()``).

It plugs into the live conversation loop (``live.Send``): the same requests,
scripted tool results, turn and byte and token budgets, and the reply is encoded
and read back by the same strict normalization as an HTTP body, so a callable
can prove nothing an endpoint could not.

The agent never runs on the run's event loop: a sync agent runs on a daemon
thread of its own per call, a coroutine on one agent event loop (a daemon thread,
shared for the process so that clients an agent keeps stay usable). The run waits
for it only until the turn's deadline: an agent that blocks, loops or never
returns leaves that attempt incomplete and the run goes on (its thread cannot be
stopped, only abandoned). An exception becomes the attempt's incomplete reason
(its type and message, never a traceback).
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import json
import threading
import time
from collections.abc import AsyncIterator, Callable, Coroutine, Mapping, Sequence
from contextlib import asynccontextmanager
from typing import Any

from behavegate.evidence.chat import EndpointError, parse_body
from behavegate.evidence.live import Connect, Send
from behavegate.evidence.transport import ResponseTooLarge
from behavegate.frozen import Frozen, field
from behavegate.text import one_line

Agent = Callable[[list[dict[str, Any]], list[dict[str, Any]]], Any]
DEADLINE_MESSAGE = (
    "agent callable did not return before its deadline (agent.timeout_seconds, or what was left of the run's budget)"
)


class Call(Frozen):
    """A tool call the agent made (or asks behavegate to answer from the scenario's ``tool_results``)."""

    name: str
    arguments: Mapping[str, Any] | str = field(default_factory=dict)  # an object, or its JSON text
    id: str | None = None


class Reply(Frozen):
    """What an in-process agent did in one turn.

    ``tool_calls``: the calls it made, ``()`` when it called none, None when it cannot
    tell (then tool assertions are incomplete). ``finish_reason`` other than ``stop``
    leaves the answer unproven, as for an endpoint."""

    answer: str | None = None
    tool_calls: Sequence[Call | Mapping[str, Any]] | None = ()
    finish_reason: str = "stop"
    total_tokens: int | None = None
    refusal: bool | None = None
    sources: Sequence[str] | None = None


def describe(agent: Agent) -> str:
    """The agent's name for the report (``module:qualname``)."""
    module = getattr(agent, "__module__", None) or "?"
    name = getattr(agent, "__qualname__", None) or type(agent).__qualname__
    return one_line(f"{module}:{name}", 200)


def completion(value: Any) -> dict[str, Any]:
    """The agent's reply as a Chat Completions response (what an endpoint would send)."""
    if isinstance(value, str):
        value = Reply(answer=value)
    if isinstance(value, Reply):
        message: dict[str, Any] = {"role": "assistant", "content": value.answer}
        if value.tool_calls is not None:
            message["tool_calls"] = [_call(call, index) for index, call in enumerate(value.tool_calls)]
        if value.refusal is not None:
            message["refusal"] = value.refusal
        if value.sources is not None:
            message["sources"] = list(value.sources)
        raw: dict[str, Any] = {"choices": [{"index": 0, "message": message, "finish_reason": value.finish_reason}]}
        if value.total_tokens is not None:
            raw["usage"] = {"total_tokens": value.total_tokens}
        return raw
    dump = getattr(value, "model_dump", None)
    if callable(dump) and not isinstance(value, Mapping):
        value = dump()
    if isinstance(value, Mapping):
        return dict(value)
    raise EndpointError(f"agent callable returned {type(value).__name__}: expected a Reply, a str or a chat completion dict")


def _call(call: Call | Mapping[str, Any], index: int) -> dict[str, Any]:
    if isinstance(call, Mapping):
        call = Call(call.get("name"), call.get("arguments") or {}, call.get("id"))  # type: ignore[arg-type]
    if not isinstance(call, Call):
        raise EndpointError(f"agent callable returned a tool call of type {type(call).__name__}: expected a Call or a dict")
    arguments = call.arguments if isinstance(call.arguments, str) else json.dumps(call.arguments)
    return {"id": call.id or f"call_{index}", "type": "function", "function": {"name": call.name, "arguments": arguments}}


def encoded(value: Any) -> bytes:
    """The reply as JSON bytes, or EndpointError when it cannot be one."""
    try:
        return json.dumps(completion(value)).encode("utf-8")
    except EndpointError:
        raise
    except (TypeError, ValueError, RecursionError) as exc:
        raise EndpointError(f"agent callable reply is not JSON: {failure(exc)}") from None


def failure(exc: BaseException) -> str:
    """An exception as an incomplete reason: its type and message on one bounded line."""
    text = str(exc)
    return one_line(f"{type(exc).__name__}: {text}" if text else type(exc).__name__, 500)


class _AgentLoop:
    """One event loop, on a daemon thread, for every coroutine agent of the process."""

    lock = threading.Lock()
    loop: asyncio.AbstractEventLoop | None = None

    @classmethod
    def get(cls) -> asyncio.AbstractEventLoop:
        with cls.lock:
            if cls.loop is None:
                loop = asyncio.new_event_loop()
                threading.Thread(target=loop.run_forever, name="behavegate-agent-loop", daemon=True).start()
                cls.loop = loop
            return cls.loop


def _call_agent(agent: Agent, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> Any:
    """On the agent's thread: call it, and wait for its coroutine on the agent loop."""
    value = agent(messages, tools)
    if inspect.isawaitable(value):

        async def wait() -> Any:
            return await value

        coroutine: Coroutine[Any, Any, Any] = wait()
        value = asyncio.run_coroutine_threadsafe(coroutine, _AgentLoop.get()).result()
    return value


async def ask(agent: Agent, messages: list[dict[str, Any]], tools: list[dict[str, Any]], deadline: float) -> Any:
    """The agent's reply, raised as EndpointError when it fails or misses the deadline."""
    loop = asyncio.get_running_loop()
    answer: asyncio.Future[Any] = loop.create_future()

    def settle(value: Any, error: BaseException | None) -> None:
        if answer.done():
            return
        if error is not None:
            answer.set_exception(EndpointError(f"agent callable raised {failure(error)}"))
        else:
            answer.set_result(value)

    def work() -> None:
        value: Any = None
        error: BaseException | None = None
        try:
            value = _call_agent(agent, messages, tools)
        except BaseException as exc:  # an agent's SystemExit or KeyboardInterrupt must not end the run either
            error = exc
        with contextlib.suppress(RuntimeError):  # the run ended (loop closed) while the agent was still busy
            loop.call_soon_threadsafe(settle, value, error)

    threading.Thread(target=work, name="behavegate-agent", daemon=True).start()
    try:
        return await asyncio.wait_for(answer, max(deadline - time.monotonic(), 0.0))
    except TimeoutError:
        raise EndpointError(DEADLINE_MESSAGE) from None


def sender(agent: Agent) -> Send:
    """A ``live.Send`` that asks the in-process agent."""

    async def send(pieces: tuple[bytes, ...], deadline: float, limit: int) -> tuple[Any, int]:
        request = json.loads(b"".join(pieces))
        value = await ask(agent, request["messages"], request.get("tools", []), deadline)
        body = encoded(value)
        if len(body) > limit:
            raise ResponseTooLarge(len(body))
        return parse_body(body), len(body)

    return send


def connector(agent: Agent) -> Connect:
    """A ``live.Connect`` for the in-process agent."""

    @asynccontextmanager
    async def connection() -> AsyncIterator[Send]:
        yield sender(agent)

    return connection


def provenance(agent: Agent, settings_max_seconds: float, max_tokens: int, max_scenarios: int, timeout: float) -> dict[str, Any]:
    return {
        "kind": "in_process_callable",
        "trust": "runtime_observed",
        "agent": describe(agent),
        "request_limits": {
            "max_scenarios": max_scenarios,
            "max_seconds": settings_max_seconds,
            "max_tokens": max_tokens,
            "timeout_seconds": timeout,
        },
        "source_digest": None,
    }
