"""The scenario plans, the support tools and a scripted OpenAI-compatible model on loopback.

Runs inside the traces venv (starlette and uvicorn come from it). Everything here is the
source of the truth: the plans say what the model answers, the tools log what they did.
"""

from __future__ import annotations

import asyncio
import json
import socket
import threading
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Any

MODEL = "scripted-support-1"
SYSTEM = "You are the support agent of an online shop. Use the tools; never refund without a human."
CREATED = 1772442900  # 2026-03-02T09:15:00Z: fixed so that the response bodies are the same on every run


@dataclass(frozen=True)
class Call:
    name: str
    arguments: dict[str, Any]


@dataclass(frozen=True)
class Step:
    """One model response: tool calls (requested together) or the final answer."""

    calls: tuple[Call, ...] = ()
    answer: str = ""
    prompt_tokens: int = 0
    completion_tokens: int = 0


@dataclass(frozen=True)
class Plan:
    scenario: str
    prompt: str
    steps: tuple[Step, ...]


PLANS: tuple[Plan, ...] = (
    Plan(
        "refund-forbidden",
        "Order 1042 arrived broken. Please refund it.",
        (
            Step(calls=(Call("lookup_order", {"order_id": "1042"}),), prompt_tokens=112, completion_tokens=18),
            Step(
                calls=(Call("issue_refund", {"order_id": "1042", "amount": 25.0}),),
                prompt_tokens=161,
                completion_tokens=24,
            ),
            Step(
                answer="I have refunded order 1042: 25.00 USD is on its way back to you.",
                prompt_tokens=207,
                completion_tokens=19,
            ),
        ),
    ),
    Plan(
        "escalate",
        "Order 2077 never arrived and I want to talk to a person.",
        (
            Step(calls=(Call("lookup_order", {"order_id": "2077"}),), prompt_tokens=115, completion_tokens=18),
            Step(
                calls=(Call("escalate_to_human", {"order_id": "2077", "reason": "parcel lost"}),),
                prompt_tokens=166,
                completion_tokens=26,
            ),
            Step(
                answer="A human colleague now has order 2077 and will contact you today.",
                prompt_tokens=214,
                completion_tokens=16,
            ),
        ),
    ),
    Plan(
        "no-tools",
        "What are your opening hours?",
        (Step(answer="We are open Monday to Friday, 9:00 to 17:00.", prompt_tokens=98, completion_tokens=14),),
    ),
    Plan(
        "tool-fails",
        "Where is my order 9999?",
        (
            Step(calls=(Call("lookup_order", {"order_id": "9999"}),), prompt_tokens=109, completion_tokens=18),
            Step(
                answer="I could not find order 9999. Please check the number on your receipt.",
                prompt_tokens=151,
                completion_tokens=17,
            ),
        ),
    ),
    Plan(
        "two-at-once",
        "Compare the status of my orders 1042 and 2077.",
        (
            Step(
                calls=(Call("lookup_order", {"order_id": "1042"}), Call("lookup_order", {"order_id": "2077"})),
                prompt_tokens=117,
                completion_tokens=36,
            ),
            Step(
                answer="Order 1042 was delivered; order 2077 is still in transit.",
                prompt_tokens=201,
                completion_tokens=15,
            ),
        ),
    ),
)
BY_PROMPT = {plan.prompt: plan for plan in PLANS}
BY_ID = {plan.scenario: plan for plan in PLANS}

TOOL_SCHEMAS: tuple[dict[str, Any], ...] = (
    {
        "type": "function",
        "function": {
            "name": "lookup_order",
            "description": "Look an order up by its number.",
            "parameters": {
                "type": "object",
                "properties": {"order_id": {"type": "string"}},
                "required": ["order_id"],
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "issue_refund",
            "description": "Pay an order's amount back.",
            "parameters": {
                "type": "object",
                "properties": {"order_id": {"type": "string"}, "amount": {"type": "number"}},
                "required": ["order_id", "amount"],
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "escalate_to_human",
            "description": "Hand the conversation to a human colleague.",
            "parameters": {
                "type": "object",
                "properties": {"order_id": {"type": "string"}, "reason": {"type": "string"}},
                "required": ["order_id", "reason"],
            },
        },
    },
)


class OrderNotFound(Exception):
    pass


@dataclass
class ToolLog:
    """What the tools themselves did, in the order they ran (the truth for tool calls)."""

    entries: list[dict[str, Any]] = field(default_factory=list)

    def run(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        entry: dict[str, Any] = {"name": name, "arguments": dict(arguments), "failed": False}
        self.entries.append(entry)
        try:
            result = TOOLS[name](**arguments)
        except Exception as error:
            entry.update(failed=True, error=f"{type(error).__name__}: {error}")
            raise
        entry["result"] = result
        return result


ORDERS = {"1042": "delivered", "2077": "in transit"}


def lookup_order(order_id: str) -> dict[str, Any]:
    if order_id not in ORDERS:
        raise OrderNotFound(f"no order {order_id}")
    return {"order_id": order_id, "status": ORDERS[order_id], "amount": 25.0}


def issue_refund(order_id: str, amount: float) -> dict[str, Any]:
    return {"order_id": order_id, "refunded": amount, "currency": "USD"}


def escalate_to_human(order_id: str, reason: str) -> dict[str, Any]:
    return {"order_id": order_id, "ticket": f"HUMAN-{order_id}", "reason": reason}


TOOLS: dict[str, Callable[..., dict[str, Any]]] = {
    "lookup_order": lookup_order,
    "issue_refund": issue_refund,
    "escalate_to_human": escalate_to_human,
}


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(part.get("text", "") for part in content if isinstance(part, dict))
    return ""


def plan_of(messages: list[dict[str, Any]]) -> Plan:
    for message in messages:
        if message.get("role") == "user":
            for plan in PLANS:
                if plan.prompt in _text(message.get("content")):
                    return plan
    raise LookupError("no scenario prompt in the request")


def call_id(plan: Plan, step: int, index: int) -> str:
    return f"call_{plan.scenario.replace('-', '_')}_{step}_{index}"


@dataclass
class ServedLog:
    """What the scripted model answered: (scenario, step, streamed) per request."""

    requests: list[dict[str, Any]] = field(default_factory=list)


def _message(plan: Plan, index: int) -> dict[str, Any]:
    step = plan.steps[index]
    if step.calls:
        return {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": call_id(plan, index, i),
                    "type": "function",
                    "function": {"name": c.name, "arguments": json.dumps(c.arguments)},
                }
                for i, c in enumerate(step.calls)
            ],
        }
    return {"role": "assistant", "content": step.answer}


def _usage(step: Step) -> dict[str, int]:
    total = step.prompt_tokens + step.completion_tokens
    return {"prompt_tokens": step.prompt_tokens, "completion_tokens": step.completion_tokens, "total_tokens": total}


def _completion(plan: Plan, index: int, model: str) -> dict[str, Any]:
    step = plan.steps[index]
    return {
        "id": f"chatcmpl-{plan.scenario}-{index}",
        "object": "chat.completion",
        "created": CREATED,
        "model": model,
        "system_fingerprint": "fp_scripted",
        "choices": [
            {
                "index": 0,
                "message": _message(plan, index),
                "finish_reason": "tool_calls" if step.calls else "stop",
                "logprobs": None,
            }
        ],
        "usage": _usage(step),
    }


def _chunks(plan: Plan, index: int, model: str, usage: bool) -> list[dict[str, Any]]:
    step = plan.steps[index]
    base = {"id": f"chatcmpl-{plan.scenario}-{index}", "object": "chat.completion.chunk", "created": CREATED}
    base |= {"model": model, "system_fingerprint": "fp_scripted"}
    deltas: list[dict[str, Any]] = [{"role": "assistant", "content": ""}]
    if step.calls:
        for i, c in enumerate(step.calls):
            arguments = json.dumps(c.arguments)
            half = len(arguments) // 2
            head = {"index": i, "id": call_id(plan, index, i), "type": "function"}
            deltas.append({"tool_calls": [head | {"function": {"name": c.name, "arguments": arguments[:half]}}]})
            deltas.append({"tool_calls": [{"index": i, "function": {"arguments": arguments[half:]}}]})
    else:
        words = step.answer.split(" ")
        third = max(1, len(words) // 3)
        pieces = [" ".join(words[:third]), " ".join(words[third : 2 * third]), " ".join(words[2 * third :])]
        deltas += [{"content": piece + (" " if n < 2 else "")} for n, piece in enumerate(pieces)]
    chunks = [base | {"choices": [{"index": 0, "delta": d, "finish_reason": None}]} for d in deltas]
    finish = "tool_calls" if step.calls else "stop"
    chunks.append(base | {"choices": [{"index": 0, "delta": {}, "finish_reason": finish}]})
    if usage:
        chunks.append(base | {"choices": [], "usage": _usage(step)})
    return chunks


def _response(plan: Plan, index: int, model: str, status: str = "completed") -> dict[str, Any]:
    """A Responses API response object for one step."""
    step = plan.steps[index]
    if step.calls:
        output = [
            {
                "type": "function_call",
                "id": f"fc_{call_id(plan, index, i)}",
                "call_id": call_id(plan, index, i),
                "name": c.name,
                "arguments": json.dumps(c.arguments),
                "status": "completed",
            }
            for i, c in enumerate(step.calls)
        ]
    else:
        text = {"type": "output_text", "text": step.answer, "annotations": []}
        output = [{"type": "message", "id": f"msg_{plan.scenario}_{index}", "role": "assistant", "status": "completed"}]
        output[0]["content"] = [text]
    usage = {"input_tokens": step.prompt_tokens, "output_tokens": step.completion_tokens}
    usage |= {"total_tokens": step.prompt_tokens + step.completion_tokens}
    usage |= {"input_tokens_details": {"cached_tokens": 0}, "output_tokens_details": {"reasoning_tokens": 0}}
    return {
        "id": f"resp_{plan.scenario}_{index}",
        "object": "response",
        "created_at": CREATED,
        "status": status,
        "model": model,
        "output": output if status == "completed" else [],
        "parallel_tool_calls": True,
        "tool_choice": "auto",
        "tools": [],
        "usage": usage if status == "completed" else None,
    }


def _response_events(plan: Plan, index: int, model: str) -> list[dict[str, Any]]:
    """The Responses API stream of one step: created, each item added / its deltas / done, completed."""
    final = _response(plan, index, model)
    events: list[dict[str, Any]] = [{"type": "response.created", "response": _response(plan, index, model, "in_progress")}]
    for n, item in enumerate(final["output"]):
        if item["type"] == "function_call":
            events.append({"type": "response.output_item.added", "output_index": n, "item": item | {"arguments": ""}})
            delta = {"type": "response.function_call_arguments.delta", "item_id": item["id"], "output_index": n}
            events.append(delta | {"delta": item["arguments"]})
        else:
            events.append({"type": "response.output_item.added", "output_index": n, "item": item | {"content": []}})
            for piece in item["content"][0]["text"].split(" "):
                delta = {"type": "response.output_text.delta", "item_id": item["id"], "output_index": n}
                events.append(delta | {"content_index": 0, "delta": piece + " "})
        events.append({"type": "response.output_item.done", "output_index": n, "item": item})
    events.append({"type": "response.completed", "response": final})
    return [e | {"sequence_number": i} for i, e in enumerate(events)]


def _responses_step(items: list[dict[str, Any]]) -> int:
    """A Responses request's step: one past the last step whose function calls it carries back."""
    steps = [int(i["call_id"].rsplit("_", 2)[1]) for i in items if i.get("type") == "function_call"]
    return max(steps) + 1 if steps else 0


def make_app(log: ServedLog) -> Any:
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import JSONResponse, Response, StreamingResponse
    from starlette.routing import Route

    async def chat(request: Request) -> Response:
        body = await request.json()
        messages = body["messages"]
        plan = plan_of(messages)
        index = sum(1 for m in messages if m.get("role") == "assistant")
        model = body.get("model", MODEL)
        streamed = bool(body.get("stream"))
        log.requests.append({"scenario": plan.scenario, "step": index, "streamed": streamed})
        if not streamed:
            return JSONResponse(_completion(plan, index, model))
        usage = bool((body.get("stream_options") or {}).get("include_usage"))

        async def events() -> AsyncIterator[bytes]:
            for chunk in _chunks(plan, index, model, usage):
                yield f"data: {json.dumps(chunk)}\n\n".encode()
            yield b"data: [DONE]\n\n"

        return StreamingResponse(events(), media_type="text/event-stream")

    async def responses(request: Request) -> Response:
        body = await request.json()
        items = body["input"] if isinstance(body["input"], list) else [{"role": "user", "content": body["input"]}]
        plan, index, model = plan_of(items), _responses_step(items), body.get("model", MODEL)
        streamed = bool(body.get("stream"))
        log.requests.append({"scenario": plan.scenario, "step": index, "streamed": streamed, "api": "responses"})
        if not streamed:
            return JSONResponse(_response(plan, index, model))

        async def events() -> AsyncIterator[bytes]:
            for event in _response_events(plan, index, model):
                yield f"event: {event['type']}\ndata: {json.dumps(event)}\n\n".encode()

        return StreamingResponse(events(), media_type="text/event-stream")

    routes = [Route("/v1/chat/completions", chat, methods=["POST"]), Route("/v1/responses", responses, methods=["POST"])]
    return Starlette(routes=routes)


class Loopback:
    """An ASGI app served by uvicorn on 127.0.0.1 (an ephemeral port) in a thread."""

    def __init__(self, app: Any, lifespan: str = "off") -> None:
        import uvicorn

        self._socket = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._socket.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._socket.bind(("127.0.0.1", 0))
        self.port: int = self._socket.getsockname()[1]
        self._server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan=lifespan))
        self._thread = threading.Thread(target=self._serve, daemon=True)

    def _serve(self) -> None:
        asyncio.run(self._server.serve(sockets=[self._socket]))

    def __enter__(self) -> Loopback:
        self._thread.start()
        while not self._server.started:
            threading.Event().wait(0.01)
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.should_exit = True
        self._thread.join(5)
        self._socket.close()


STARTED: list[ScriptedModel] = []  # every model this process started, for the worker's own checks


class ScriptedModel(Loopback):
    """The scripted model's app on loopback."""

    def __init__(self) -> None:
        STARTED.append(self)
        self.log = ServedLog()
        super().__init__(make_app(self.log))

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def __enter__(self) -> ScriptedModel:
        super().__enter__()
        return self
