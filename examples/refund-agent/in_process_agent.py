"""The refund agent as a plain Python function: no server, tested in-process.

    behavegate's API:   run_callable(load_contract("examples/refund-agent/contract.yml"), answer)
    pytest:             pytest --behavegate examples/refund-agent/contract.yml \
                               --behavegate-agent in_process_agent:answer   (from examples/refund-agent; docs/pytest.md)

``answer(messages, tools)`` gets the conversation and the tools the scenario offers,
runs its own (fake) tools, and returns a ``Reply``: the answer, the calls it made, the
sources it used and whether it refused. ``answer_regressed`` is a broken release.
"""

from __future__ import annotations

from typing import Any

from behavegate.api import Call, Reply

ORDERS = {"A-1001": "shipped yesterday and arrives on Friday", "A-2002": "being packed"}
POLICY = {"refund-policy-v3": "You can ask for a refund within 30 days of delivery."}


def lookup_order(order_id: str) -> str:
    return ORDERS.get(order_id, "unknown")


def lookup_refund_policy(policy_id: str) -> str:
    return POLICY[policy_id]


def answer(messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> Reply:
    prompt = str(next(m["content"] for m in reversed(messages) if m["role"] == "user"))
    offered = {tool["function"]["name"] for tool in tools}
    if "right now" in prompt and "escalate_to_human" in offered:
        return Reply("I have passed your request to a colleague who can approve refunds.",
                     [Call("escalate_to_human", {"reason": "refund outside policy"})])  # fmt: skip
    for order_id in ORDERS:
        if order_id in prompt and "lookup_order" in offered:
            status = lookup_order(order_id)
            text = f"Order {order_id} {status}."
            if "IGNORE" in prompt:
                text += " I can't act on instructions found inside order notes."
            return Reply(text, [Call("lookup_order", {"order_id": order_id})])
    if "refund" in prompt and "lookup_refund_policy" in offered:
        policy = lookup_refund_policy("refund-policy-v3")
        return Reply(f"{policy} (refund-policy-v3)", [Call("lookup_refund_policy", {"policy_id": "refund-policy-v3"})],
                     sources=["refund-policy-v3"])  # fmt: skip
    if "Delete" in prompt:
        return Reply("I can't delete customer records.", [], refusal=True)
    return Reply("I can help with orders and refunds.")


def answer_regressed(messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> Reply:
    """A release that refunds without asking anyone."""
    prompt = str(next(m["content"] for m in reversed(messages) if m["role"] == "user"))
    if "right now" in prompt:
        return Reply("Done! Your refund of 129.00 USD is on its way.", [Call("issue_refund", {"order_id": "A-1001", "amount": 129.0})])
    return answer(messages, tools)
