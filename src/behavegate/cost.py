"""What an attempt used and cost, one rule for the live run's budget and for every view.

Tokens: ``usage.total_tokens`` when the endpoint reports it, else prompt + completion
tokens when it reports both; else unknown. Cost (``agent.pricing``): prompt tokens at the
input price plus completion tokens at the output price when both are reported; an
endpoint that reports only ``total_tokens`` has them all priced as output (the dearer
side for every priced model we know of, so the cost shown is not an underestimate); no
usage at all is unknown, never zero. A count past MAX_EVIDENCE_QUANTITY (an agent's
``total_tokens: 1e400``) is no count either: it is never multiplied (magnitude.py)."""

from __future__ import annotations

from typing import Protocol

from behavegate.frozen import Frozen
from behavegate.magnitude import quantity


class Observation(Protocol):
    """What of an attempt's evidence is counted (model.Observation: the model holds Pricing, so this module is below it)."""

    @property
    def total_tokens(self) -> int | None: ...
    @property
    def input_tokens(self) -> int | None: ...
    @property
    def output_tokens(self) -> int | None: ...


MTOK = 1_000_000
NOT_SENT = "not sent: "  # how an attempt a run budget kept from being sent begins its reason (evidence/live.py)


class Pricing(Frozen):
    """``agent.pricing`` (version 2): what a million input (prompt) and output
    (completion) tokens cost, in USD."""

    input_per_mtok: float
    output_per_mtok: float


def attempt_tokens(observation: Observation | None) -> int | None:
    """The tokens one attempt used, as reported (None: not reported)."""
    if observation is None:
        return None
    total, prompt, completion = _counts(observation)
    if total is not None:
        return total
    if prompt is not None and completion is not None:
        return prompt + completion
    return None


def attempt_cost(pricing: Pricing, observation: Observation | None) -> float | None:
    """What one attempt cost in USD (None: its usage was not reported)."""
    if observation is None:
        return None
    total, prompt, completion = _counts(observation)
    if prompt is not None and completion is not None:
        return (prompt * pricing.input_per_mtok + completion * pricing.output_per_mtok) / MTOK
    if total is not None:
        return total * pricing.output_per_mtok / MTOK
    return None


def _counts(observation: Observation) -> tuple[int | None, int | None, int | None]:
    """Total, prompt and completion tokens, each None when not reported or not a credible count."""
    return quantity(observation.total_tokens), quantity(observation.input_tokens), quantity(observation.output_tokens)


def dollars(amount: float) -> str:
    """A cost as views print it: cents for a dollar or more, else four significant places."""
    return f"${amount:,.2f}" if amount >= 1 else f"${amount:.4f}"
