"""The run's token use and cost, summed once from the judged attempts (report/derived.py)
for every view to show. Shown when the contract prices tokens (``agent.pricing``) or the
run had a spend budget (``--max-total-tokens``, ``--max-cost``); other reports keep their shape."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from behavegate.cost import NOT_SENT, attempt_cost, attempt_tokens, dollars
from behavegate.frozen import Frozen
from behavegate.magnitude import quantity
from behavegate.model import Contract, Observation, ScenarioResult


class RunUsage(Frozen):
    attempts: int  # attempts sent (those a budget kept back are not counted)
    unreported: int  # sent attempts whose usage the endpoint did not report: neither counted nor priced
    total_tokens: int  # over the attempts that reported usage (cost.attempt_tokens)
    input_tokens: int | None  # prompt tokens, over the attempts that reported them; None: none did
    output_tokens: int | None
    cost: float | None  # USD; None: the contract has no agent.pricing
    max_total_tokens: int | None = None  # the run's budgets, as given
    max_cost: float | None = None
    not_sent: int = 0  # attempts a run budget (tokens, cost, time) kept from being sent

    def as_dict(self) -> dict[str, Any]:
        return {
            "attempts": self.attempts,
            "unreported": self.unreported,
            "total_tokens": self.total_tokens,
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "cost_usd": None if self.cost is None else round(self.cost, 6),
            "max_total_tokens": self.max_total_tokens,
            "max_cost_usd": self.max_cost,
            "not_sent": self.not_sent,
        }

    def line(self) -> str:
        """One sentence every text view prints: the cost (when priced), the tokens, what is unknown."""
        tokens = f"{self.total_tokens:,} tokens"
        if self.input_tokens is not None or self.output_tokens is not None:
            tokens += f" ({self.input_tokens or 0:,} in, {self.output_tokens or 0:,} out)"
        parts = [f"cost {dollars(self.cost)}" if self.cost is not None else "", tokens]
        budgets = [
            f"--max-total-tokens {self.max_total_tokens:,}" if self.max_total_tokens is not None else "",
            f"--max-cost {self.max_cost:g}" if self.max_cost is not None else "",
        ]
        if any(budgets):
            parts.append("budget " + ", ".join(b for b in budgets if b))
        if self.not_sent:
            parts.append(f"{self.not_sent} attempt{'s' * (self.not_sent != 1)} not sent")
        text = "; ".join(part for part in parts if part)
        if self.unreported:
            some = f"{self.unreported} of {self.attempts} attempt{'s' * (self.attempts != 1)}"
            text += f"; usage not reported by {some}: not counted" + (
                ", so the budget could not count them" if any(budgets) else ""
            )
        return text


def run_usage(contract: Contract, results: tuple[ScenarioResult, ...], provenance: Mapping[str, Any]) -> RunUsage | None:
    limits = provenance.get("request_limits")
    limits = limits if isinstance(limits, Mapping) else {}
    pricing = contract.agent.pricing
    max_tokens, max_cost = limits.get("max_total_tokens"), limits.get("max_cost")
    if pricing is None and max_tokens is None and max_cost is None:
        return None
    observations = [o for result in results for o in _observations(result) if o is not None]
    sent = [o for o in observations if not (o.error or "").startswith(NOT_SENT)]
    unreported = sum(1 for o in sent if attempt_tokens(o) is None)
    inputs = [n for o in sent if (n := quantity(o.input_tokens)) is not None]  # cost.py's rule: no credible count, none
    outputs = [n for o in sent if (n := quantity(o.output_tokens)) is not None]
    return RunUsage(
        attempts=len(sent),
        unreported=unreported,
        total_tokens=sum(attempt_tokens(o) or 0 for o in sent),
        input_tokens=sum(inputs) if inputs else None,
        output_tokens=sum(outputs) if outputs else None,
        cost=None if pricing is None else sum(attempt_cost(pricing, o) or 0.0 for o in sent),
        max_total_tokens=max_tokens,
        max_cost=max_cost,
        not_sent=len(observations) - len(sent),
    )


def _observations(result: ScenarioResult) -> tuple[Observation | None, ...]:
    return tuple(a.observation for a in result.attempts) if result.attempts else (result.observation,)
