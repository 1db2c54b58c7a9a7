"""The scripted MCP tool server of a live run (``agent.mcp.serve``, version 2).

An agent that runs its own tools through MCP is observed where its calls land: behavegate
serves the contract's tools over Streamable HTTP (the official ``mcp`` SDK, stateless, JSON
answers; uvicorn underneath), one unguessable path per attempt (``/mcp/<token>``). Each
``tools/call`` on an attempt's path is answered from the scenario's ``tool_results`` rules
(evidence/scripted.py: same matching, ``error``, ``default``) and recorded as that attempt's
tool-side evidence. Nothing is ever executed.

Binding: a path is registered when its attempt starts and forgotten when the attempt's answer
has arrived. A request on any other path (unknown, or an attempt already answered) is refused
with 404 before the MCP layer reads it, and is never anyone's evidence. With ``agent.mcp.url:
fixed`` there is one path, ``/mcp``, for an agent configured once: it belongs to the one attempt
in flight (the run sends them one at a time) and answers 404 between attempts.

User turns (``turns``): the conversation loop marks which user turn of the attempt is in flight
(:meth:`AttemptTools.mark`, from before its first request until its final answer is read); a call
belongs to the turn in flight when it arrives. A call while no turn is in flight (between one
turn's answer and the next user message) is not evidence of any turn: it is refused, unrecorded,
and leaves the attempt's tool evidence incomplete, never "no call".

Bounds: the server binds only the address it is given (loopback unless the person running it
said otherwise, commands/live_run.py), on an ephemeral port; request bodies, open
connections, requests per path, recorded calls per attempt and each request's time are
limited (limits.py); it stops when the run ends.
"""

from __future__ import annotations

import json
import logging
import secrets
import socket
from collections import Counter
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import h11
import mcp_types as types
import uvicorn
from mcp.server import Server
from mcp.server.context import ServerRequestContext
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from starlette.types import Message, Receive, Scope, Send
from uvicorn.protocols.http.h11_impl import H11Protocol

from behavegate.conversation import BudgetStop, Conversation, ScriptedResult, UserTurn
from behavegate.evidence.chat import offered_tools
from behavegate.evidence.scripted import Unanswerable, answer, deeper_than, shown_call, start
from behavegate.frozen import Frozen, replace
from behavegate.limits import (
    MCP_HEADER_SECONDS,
    MCP_MAX_ATTEMPT_BYTES,
    MCP_MAX_CALLS,
    MCP_MAX_CONNECTIONS,
    MCP_MAX_REQUEST_BYTES,
    MCP_MAX_REQUESTS,
    MCP_REQUEST_SECONDS,
    TOOL_RESULT_MAX_DEPTH,
)
from behavegate.model import TOOL_SOURCE_MCP, AgentTarget, Observation, Scenario, ToolCall
from behavegate.text import one_line

_PREFIX = "/mcp/"
FIXED_PATH = "/mcp"  # agent.mcp.url: fixed
_ATTEMPT = "behavegate.attempt"  # the ASGI scope key holding the AttemptTools a request was admitted for


class ServedCall(Frozen):
    """One ``tools/call`` an attempt's path received, and what behavegate answered."""

    call: ToolCall
    result: ScriptedResult
    turn: int = 0  # the user turn in flight when it arrived (scripted user turns; else 0)


class AttemptTools:
    """One attempt's path and what arrived on it. Mutable while the attempt runs (the
    server appends), read once by :func:`tool_side` after :meth:`close`."""

    def __init__(self, agent: AgentTarget, scenario: Scenario, url: str) -> None:
        self.agent = agent
        self.scenario = scenario
        self.url = url
        self.calls: list[ServedCall] = []
        self.requests = 0
        self.open = True
        self.overflow: str | None = None  # past a bound (calls, bytes, nesting): refused, unrecorded; evidence incomplete
        self.kept = 0  # bytes of arguments received and results answered, as recorded
        self.refused: str | None = None  # a POST on this path refused or cut: what it carried is not known
        self.unmatched: str | None = None  # a call no tool_results rule answers
        self.state = start(scenario)  # sequences and the key-value store, as the conversation loop keeps them
        self.stopped: int | None = None  # calls made when tools.max_calls was exceeded: later calls are refused
        self.budget: tuple[str, int] | None = None  # the budget exceeded (its key and limit), once stopped
        # The user turn in flight (marked by the conversation loop); None: none yet, or between two turns.
        self.user_turn: int | None = None if scenario.turns else 0
        self.ended: int | None = None  # the user turn whose answer came last (while none is in flight)
        self.between: str | None = None  # a call arrived while no user turn was in flight

    def mark(self, user_turn: int | None) -> None:
        """The user turn now in flight (before its request is sent), or None once its answer is in."""
        if user_turn is None and self.user_turn is not None:
            self.ended = self.user_turn
        self.user_turn = user_turn

    def close(self) -> None:
        """The attempt's answer has arrived: what comes later is not its evidence."""
        self.open = False

    def tools(self) -> list[types.Tool]:
        return [
            types.Tool(
                name=tool["function"]["name"],
                description=tool["function"]["description"] or None,
                input_schema=_object_schema(tool["function"]["parameters"]),
            )
            for tool in offered_tools(self.agent, self.scenario)
        ]

    def call(self, name: str, arguments: dict[str, Any] | None) -> types.CallToolResult:
        """Answers one call from the scenario's rules and records it (while the attempt is open)."""
        if not self.open:
            return _refused("this attempt has ended: the call is not recorded")
        if self.user_turn is None:  # which turn asked for it is not known: unknown, never that turn's "no call"
            after = "before the first user turn was sent" if self.ended is None else f"after user turn {self.ended}'s answer"
            self.between = self.between or (
                f"a tool call ({name}) reached the attempt's MCP path {after}, while no user turn was in flight: "
                "it is not evidence of any turn"
            )
            return _refused("no user turn is in flight: the call is not recorded")
        if len(self.calls) >= MCP_MAX_CALLS:
            self.overflow = f"more than {MCP_MAX_CALLS} MCP tool calls in one attempt"
            return _refused(f"more than {MCP_MAX_CALLS} tool calls in one attempt: refused")
        if deeper_than(arguments, TOOL_RESULT_MAX_DEPTH):  # recorded, it could not be read back from saved observations
            self.overflow = f"a call's arguments nest deeper than {TOOL_RESULT_MAX_DEPTH} levels"
            return _refused(f"arguments nest deeper than {TOOL_RESULT_MAX_DEPTH} levels: refused")
        index = len(self.calls)
        call = ToolCall(name, arguments if arguments is not None else {}, f"mcp_{index}", executed=True)
        # Each body is bounded, not their sum: an attempt's evidence is held for the whole run, so it
        # gets the byte budget of an attempt's HTTP side (arguments in, scripted results out).
        self.kept += len(json.dumps(call.arguments, ensure_ascii=False))
        if self.kept > MCP_MAX_ATTEMPT_BYTES:
            self.overflow = f"more than {MCP_MAX_ATTEMPT_BYTES:,} bytes of MCP tool calls and results in one attempt"
            return _refused("this attempt's tool calls passed their byte budget: refused")
        if self.budget is None:
            self.budget, self.stopped = self._over_budget(index)
        if self.budget is not None:
            # The call budget stops the conversation where behavegate can: no call past it is answered.
            refused = f"tool budget exceeded (at most {self.budget[1]} calls, {self.budget[0]}): this call was not run"
            self.calls.append(ServedCall(call, ScriptedResult(index, name, error=refused), self.user_turn))
            return _refused(refused)
        scripted = answer(self.scenario, call, index, self.state)
        if scripted is None or isinstance(scripted, Unanswerable):  # as the loop: the attempt is incomplete
            self.unmatched = self.unmatched or (
                scripted.reason
                if scripted is not None
                else f"no tool_results rule matches the MCP call {shown_call(call)}: add a rule for it, or a {{default: ...}} rule"
            )
            error = "no scripted result for this call"
            self.calls.append(ServedCall(call, ScriptedResult(index, name, error=error), self.user_turn))
            return _refused(error)
        self.kept += len(scripted.content)
        if self.kept > MCP_MAX_ATTEMPT_BYTES:  # a result filled from the state can outgrow what came in
            self.overflow = f"more than {MCP_MAX_ATTEMPT_BYTES:,} bytes of MCP tool calls and results in one attempt"
            return _refused("this attempt's tool results passed their byte budget: refused")
        self.state = scripted.state
        self.calls.append(ServedCall(call, scripted.record, self.user_turn))
        return types.CallToolResult(
            content=[types.TextContent(text=scripted.content)], is_error=scripted.record.error is not None
        )

    def _over_budget(self, index: int) -> tuple[tuple[str, int] | None, int | None]:
        """The budget call ``index`` would exceed (the scenario's ``tools.max_calls``, else the user
        turn in flight's own), with the calls counted against it; (None, None) within them."""
        limit = self.scenario.expect.max_calls
        if limit is not None and index >= limit:
            return ("tools.max_calls", limit), index + 1
        turn = self.user_turn
        own = self.scenario.turns[turn].expect if turn is not None and turn < len(self.scenario.turns) else None
        in_turn = sum(1 for served in self.calls if served.turn == turn)
        if own is not None and own.max_calls is not None and in_turn >= own.max_calls:
            return (f"turns[{turn}].tools.max_calls", own.max_calls), in_turn + 1
        return None, None

    def halted(self) -> bool:
        """Whether a call budget was exceeded: the conversation sends no further user turn."""
        return self.budget is not None


def _object_schema(parameters: Any) -> dict[str, Any]:
    schema = dict(parameters) if isinstance(parameters, dict) else {}
    return schema if schema.get("type") == "object" else {"type": "object", **schema}


def _refused(text: str) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(text=text)], is_error=True)


def tool_side(observation: Observation, tools: AttemptTools) -> Observation:
    """The attempt's evidence with its tool calls taken from what its MCP path received
    (executed calls, their scripted errors and results). Pure, once the attempt is closed.

    The MCP side is the evidence of which tools ran, even when the answer also reports
    calls: those are the agent's words, these are where its calls landed. An answer that
    reports more calls of a tool than landed leaves the tool evidence incomplete, never
    "not called"."""
    if observation.error is not None:
        return observation  # no answer: the attempt is incomplete whatever arrived
    if tools.unmatched is not None:
        return Observation(scenario_id=observation.scenario_id, error=tools.unmatched)
    calls = tuple(served.call for served in tools.calls)
    results = tuple(served.result for served in tools.calls)
    went = observation.conversation
    turns, most = (went.turns, went.max_turns) if went else (1, 1)
    over, count = tools.budget, tools.stopped
    stop = None if over is None or count is None else BudgetStop(over[0], over[1], count, turns)
    conversation = Conversation(turns, most, results, tool_budget_exceeded=stop) if results else None
    if went is not None and went.user_turns:  # the loop's record of the user turns, with the calls each one got
        conversation = replace(
            went,
            results=results,
            tool_budget_exceeded=stop or went.tool_budget_exceeded,
            user_turns=_split_by_turn(went.user_turns, tools.calls),
        )
    gap = None
    if tools.overflow is not None:
        gap = f"tool calls were not observed: {tools.overflow}"
    elif tools.refused is not None:  # the refused request may have been a call: unknown, never "no call"
        gap = f"tool calls were not all observed: a request on the attempt's MCP path was {tools.refused}"
    elif tools.between is not None:
        gap = f"tool calls were not all tied to a user turn: {tools.between}"
    elif unseen := _reported_not_landed(observation.tool_calls or (), calls):
        # The answer asks for (or says it made) calls that never reached the MCP path, e.g. a chat
        # function call: dropping them would read as "not called", so the tool side is not the whole story.
        gap = f"tool calls were not all observed: the answer reports calls that did not reach the attempt's MCP path: {unseen}"
    return replace(
        observation,
        tool_calls=calls,
        tool_calls_complete=gap is None,
        tool_calls_absent=False,
        tool_errors=tuple(result.error for result in results),
        tool_gap=gap,
        tool_source=TOOL_SOURCE_MCP,
        steps=None,  # the agent's own model steps are not seen from the tool side
        conversation=conversation,
    )


def _split_by_turn(went: tuple[UserTurn, ...], served: list[ServedCall]) -> tuple[UserTurn, ...]:
    """Each user turn with the calls that arrived while it was in flight (calls arrive in turn
    order); the last turn also holds any call marked past it, so no recorded call goes unseen."""
    split = []
    for index, record in enumerate(went):
        first = sum(1 for call in served if call.turn < index)
        end = len(served) if index == len(went) - 1 else sum(1 for call in served if call.turn <= index)
        split.append(replace(record, first_call=first, end_call=end))
    return tuple(split)


def _reported_not_landed(reported: tuple[ToolCall, ...], landed: tuple[ToolCall, ...]) -> str:
    """The tool names the answer reports more calls of than the MCP path received, shown inert."""
    seen = Counter(call.name for call in landed)
    said = Counter(call.name for call in reported)
    return one_line(", ".join(sorted(name for name in said if said[name] > seen[name])), 300)


class ToolServer:
    """The run's MCP server: started once, one path per attempt (:meth:`attempt`)."""

    def __init__(self, agent: AgentTarget, host: str, port: int = 0) -> None:
        self.agent = agent
        self.host = host
        self.port = port  # 0: an ephemeral one, known once bound
        self._paths: dict[str, AttemptTools] = {}
        self._fixed: AttemptTools | None = None  # agent.mcp.url: fixed: the attempt in flight
        server: Server[Any] = Server("behavegate", on_list_tools=self._list_tools, on_call_tool=self._call_tool)
        # Stateless: every POST stands alone, so nothing of one attempt outlives its request.
        self._manager = StreamableHTTPSessionManager(
            server, json_response=True, stateless=True, max_request_body_size=MCP_MAX_REQUEST_BYTES
        )

    def _bound(self, path: str) -> AttemptTools | None:
        """The attempt a request path belongs to, if any."""
        if self.agent.mcp_fixed_url:
            return self._fixed if path in (FIXED_PATH, _PREFIX) else None
        return self._paths.get(path[len(_PREFIX) :]) if path.startswith(_PREFIX) else None

    def _tools_of(self, ctx: ServerRequestContext[Any, Any]) -> AttemptTools | None:
        # The attempt the request was admitted for (_app), never the path looked up again: with a
        # fixed URL a request whose body arrives late would land on the next attempt holding /mcp.
        scope = getattr(ctx.request, "scope", None)
        tools = scope.get(_ATTEMPT) if isinstance(scope, dict) else None
        return tools if isinstance(tools, AttemptTools) else None

    async def _list_tools(
        self, ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        tools = self._tools_of(ctx)
        return types.ListToolsResult(tools=tools.tools() if tools is not None else [])

    async def _call_tool(self, ctx: ServerRequestContext[Any, Any], params: types.CallToolRequestParams) -> types.CallToolResult:
        tools = self._tools_of(ctx)
        if tools is None:  # the attempt ended between the path check and this call
            return _refused("this attempt has ended: the call is not recorded")
        try:
            return tools.call(params.name, params.arguments)
        except Exception as failed:  # the SDK would answer an error result and the call would be lost: "no call"
            tools.refused = tools.refused or f"not answered ({type(failed).__name__} in behavegate)"
            return _refused("behavegate could not answer this call")

    async def _app(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Only the registered per-attempt paths reach the MCP layer; each request is bounded in time."""
        if scope["type"] != "http":
            return
        path = scope.get("path", "")
        tools = self._bound(path) if isinstance(path, str) else None
        if tools is None or not tools.open:
            await _plain(send, 404, b"not found")
            return
        scope[_ATTEMPT] = tools  # what the request's calls are bound to, however late its body comes
        posted = scope.get("method") == "POST"  # a POST may carry a call; GET and DELETE never do
        tools.requests += 1
        if tools.requests > MCP_MAX_REQUESTS:
            tools.refused = tools.refused or (f"refused (more than {MCP_MAX_REQUESTS} requests)" if posted else None)
            await _plain(send, 429, b"too many requests for this attempt")
            return
        answered: list[int] = []

        async def watched(message: Message) -> None:
            if message["type"] == "http.response.start":
                answered.append(message["status"])
            await send(message)

        with anyio.move_on_after(MCP_REQUEST_SECONDS):
            await self._manager.handle_request(scope, receive, watched)
        if posted and tools.refused is None and (not answered or answered[0] >= 400):
            # 413 (a body over the bound), 400 (unreadable), or cut in time: what it carried is not known.
            tools.refused = f"refused (HTTP {answered[0]})" if answered else f"cut after {MCP_REQUEST_SECONDS:g} s"

    @asynccontextmanager
    async def running(self) -> AsyncIterator[ToolServer]:
        """Binds (raises OSError when it cannot), serves, and stops when the block ends."""
        family = socket.AF_INET6 if ":" in self.host else socket.AF_INET
        sock = socket.socket(family, socket.SOCK_STREAM)
        try:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            sock.bind((self.host, self.port))
            sock.listen(MCP_MAX_CONNECTIONS)
            sock.setblocking(False)
            self.port = sock.getsockname()[1]
            config = uvicorn.Config(
                self._app,
                interface="asgi3",
                lifespan="off",
                http=_HeadersInTime,
                # No logging setup of its own: its handlers would write to stderr past the console
                # boundary (github/console.py); its records, all but critical ones silenced, go to the root logger.
                log_config=None,
                log_level=logging.CRITICAL,
                access_log=False,
                limit_concurrency=MCP_MAX_CONNECTIONS,
                timeout_keep_alive=5,
                timeout_graceful_shutdown=1,
                proxy_headers=False,
                server_header=False,
            )
            server = uvicorn.Server(config)
            async with self._manager.run():
                # startup/shutdown, not serve(): serve() would take over the process's signal handlers.
                config.load()
                server.lifespan = config.lifespan_class(config)
                await server.startup(sockets=[sock])
                try:
                    yield self
                finally:
                    server.should_exit = True
                    await server.shutdown(sockets=[sock])
        finally:
            sock.close()

    def base_url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}{_PREFIX}"

    def fixed_url(self) -> str:
        """The one URL of ``agent.mcp.url: fixed``."""
        return self.base_url().removesuffix("/")

    @asynccontextmanager
    async def attempt(self, scenario: Scenario) -> AsyncIterator[AttemptTools]:
        """A fresh unguessable path for one attempt (or, fixed, the one path while this attempt
        has it), forgotten when the block ends."""
        if self.agent.mcp_fixed_url:
            if self._fixed is not None:  # one attempt at a time holds the fixed URL (live.py runs them so)
                raise RuntimeError("two attempts at once on a fixed MCP URL")
            tools = self._fixed = AttemptTools(self.agent, scenario, self.fixed_url())
            try:
                yield tools
            finally:
                tools.close()
                self._fixed = None
            return
        token = secrets.token_urlsafe(24)
        tools = AttemptTools(self.agent, scenario, self.base_url() + token)
        self._paths[token] = tools
        try:
            yield tools
        finally:
            tools.close()
            del self._paths[token]


class _HeadersInTime(H11Protocol):
    """uvicorn's h11 protocol, with a deadline for a request's headers: uvicorn bounds an idle
    kept-alive connection and our app bounds a request once its headers are in, but not a
    client that opens a connection and sends its headers slowly (slowloris), which would hold
    one of the MCP_MAX_CONNECTIONS until the run ends."""

    _headers_due: Any = None  # the TimerHandle while a request's headers are awaited

    def connection_made(self, transport: Any) -> None:
        super().connection_made(transport)
        self._await_headers()

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        self._await_headers()

    def connection_lost(self, exc: Exception | None) -> None:
        self._stop_waiting()
        super().connection_lost(exc)

    def _await_headers(self) -> None:
        if self.conn.their_state is not h11.IDLE:  # the headers are in: the app's deadline holds now
            self._stop_waiting()
        elif self._headers_due is None:
            self._headers_due = self.loop.call_later(MCP_HEADER_SECONDS, self._too_slow)

    def _stop_waiting(self) -> None:
        if self._headers_due is not None:
            self._headers_due.cancel()
            self._headers_due = None

    def _too_slow(self) -> None:
        self._headers_due = None
        if self.conn.their_state is h11.IDLE:  # silent since connecting, or part of a request only
            self.transport.close()


async def _plain(send: Send, status: int, body: bytes) -> None:
    headers = [(b"content-type", b"text/plain"), (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})
