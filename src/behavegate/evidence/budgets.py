"""What a live run (evidence/live.py) may use: one attempt across its turns, and the whole
run's spend (``--max-total-tokens``, ``--max-cost``): what the finished attempts reported,
and whether the next attempt may still be sent. The rule for an attempt's tokens and cost
is cost.py's."""

from __future__ import annotations

from behavegate.cost import NOT_SENT, attempt_cost, attempt_tokens, dollars
from behavegate.frozen import Frozen
from behavegate.limits import ATTEMPT_MAX_REQUEST_BYTES, ATTEMPT_MAX_RESPONSE_BYTES, ATTEMPT_MAX_TOKENS
from behavegate.model import Observation, Pricing, Scenario


class AttemptBudget(Frozen):
    """What one attempt may use across all its turns (version 2; see limits.py)."""

    request_bytes: int = ATTEMPT_MAX_REQUEST_BYTES
    response_bytes: int = ATTEMPT_MAX_RESPONSE_BYTES
    tokens: int = ATTEMPT_MAX_TOKENS


class SpendLimit(Frozen):
    """The whole run's spend budgets (``--max-total-tokens``, ``--max-cost``): once the
    attempts that finished reported this much, no further attempt is sent."""

    max_total_tokens: int | None = None
    max_cost: float | None = None  # USD, priced by ``pricing`` (cost.py)
    pricing: Pricing | None = None
    # What a suite's earlier contracts reported: the budgets are the whole run's.
    before_tokens: int = 0
    before_cost: float = 0.0


def exceeded(scenario: Scenario, what: str, observed: int, limit: int, turn: int) -> Observation:
    """The attempt stops at its budget: its evidence is incomplete, never judged on a part."""
    reason = f"attempt budget exceeded: {what} {observed:,} > {limit:,} at turn {turn}"
    return Observation(scenario_id=scenario.id, error=reason)


class Spent:
    """What the run's finished attempts reported, tallied on the event loop (one thread).
    An attempt that reported no usage adds nothing: the report says how many there were."""

    def __init__(self, limit: SpendLimit | None) -> None:
        self.limit = limit  # None: no budget (nothing is tallied)
        self.tokens = 0 if limit is None else limit.before_tokens
        self.cost = 0.0 if limit is None else limit.before_cost

    def add(self, observation: Observation) -> None:
        if self.limit is None:
            return
        self.tokens += attempt_tokens(observation) or 0
        if self.limit.pricing is not None:
            self.cost += attempt_cost(self.limit.pricing, observation) or 0.0

    def exhausted(self) -> str | None:
        """Why the next attempt is not sent, and the fix; None: there is budget left (or no budget)."""
        limit = self.limit
        if limit is None:
            return None
        if limit.max_total_tokens is not None and self.tokens >= limit.max_total_tokens:
            return (
                f"{NOT_SENT}the run's token budget (--max-total-tokens {limit.max_total_tokens:,}) was spent "
                f"({self.tokens:,} tokens reported); raise --max-total-tokens"
            )
        if limit.max_cost is not None and self.cost >= limit.max_cost:
            return (
                f"{NOT_SENT}the run's cost budget (--max-cost {limit.max_cost:g}) was spent "
                f"({dollars(self.cost)} reported); raise --max-cost"
            )
        return None


def spend_limits(spend: SpendLimit | None) -> dict[str, object]:
    """The spend budgets the run was given; only those given, so other reports keep their shape."""
    given = {} if spend is None else {"max_total_tokens": spend.max_total_tokens, "max_cost": spend.max_cost}
    return {key: value for key, value in given.items() if value is not None}


def plus_split(split: tuple[int | None, int | None], observation: Observation) -> tuple[int | None, int | None]:
    """Input and output tokens summed over an attempt's turns; one turn without them leaves them unobserved."""
    more = (observation.input_tokens, observation.output_tokens)
    summed = [None if a is None or b is None else a + b for a, b in zip(split, more, strict=True)]
    return summed[0], summed[1]
