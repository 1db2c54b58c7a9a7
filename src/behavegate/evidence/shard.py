"""Sharding: a stable partition of a run's (scenario, attempt) pairs over N jobs.

The pairs are every selected scenario × its planned attempts (version 1: one).
Each pair's expected cost is ``SHARD_REQUEST_COST`` per request it may send
(``max_turns``) plus one per assertion it asks for. The pairs are ordered by
cost, most expensive first, then by the SHA-256 of their canonical JSON
``["scenario id", attempt]`` (never Python's ``hash()``, which changes between
processes), and each in turn goes to the least-loaded shard, ties to the lowest
index. The result depends on nothing but the pairs and their costs: it is the
same on every machine, Python version and input order, every pair lands in
exactly one shard, and the shards' loads differ by at most one pair's cost.

Pure functions; ``commands/shard_run.py`` runs a shard, ``commands/merge.py``
recomputes the partition to check the shard reports it is given.
"""

from __future__ import annotations

import hashlib
import heapq
import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

from behavegate.contract.assertion_keys import scenario_assertions
from behavegate.errors import UsageError
from behavegate.frozen import Frozen, field
from behavegate.limits import MAX_SHARDS, SHARD_REQUEST_COST
from behavegate.magnitude import shown
from behavegate.model import Contract, Observation, Scenario

_PLAIN_ID = re.compile(r"[A-Za-z0-9._-]*")
Pair = tuple[str, int]  # (scenario id, attempt index from 0); shown as attempt number index + 1

NOT_THE_VERDICT = (
    "one shard of a sharded run: its status is not the run's verdict; behavegate merge of every shard report gives that verdict"
)


def parse_shard(text: str) -> tuple[int, int]:
    """``K/N`` (1 ≤ K ≤ N ≤ MAX_SHARDS) as (K, N)."""
    index, slash, count = text.strip().partition("/")
    if not (slash and f"{index}{count}".isascii() and index.isdigit() and count.isdigit()):
        raise UsageError(f"--shard must be K/N, e.g. 2/3 (shard 2 of 3), got {text[:40]!r}")
    k, n = int(index[-30:]), int(count[-30:])  # int() refuses past 4,300 digits: a longer one is out of range anyway
    if not 1 <= n <= MAX_SHARDS or len(count.lstrip("0")) > 30:
        raise UsageError(f"--shard N (the shard count) must be between 1 and {MAX_SHARDS}, got {shown(count.lstrip('0') or '0')}")
    if not 1 <= k <= n or len(index.lstrip("0")) > 30:
        raise UsageError(f"--shard K must be between 1 and N ({n}), got {shown(index.lstrip('0') or '0')}")
    return k, n


def pair_cost(scenario: Scenario) -> int:
    return SHARD_REQUEST_COST * scenario.max_turns + scenario_assertions(scenario)


def planned_attempts(contract: Contract, runs: int | None, extra: Mapping[str, int]) -> dict[str, int]:
    """Attempts per selected scenario: version 1 one; version 2 ``runs`` (or the
    scenario's), or more where the evidence holds more (``extra``, as one run judges them)."""
    if contract.version < 2:
        return {s.id: 1 for s in contract.scenarios}
    return {s.id: max(runs or s.runs, extra.get(s.id, 0)) for s in contract.scenarios}


def _order(pair: Pair) -> bytes:
    if _PLAIN_ID.fullmatch(pair[0]):  # every contract's ids: JSON writes them as they are
        encoded = f'["{pair[0]}",{int(pair[1])}]'
    else:
        encoded = json.dumps([pair[0], pair[1]], ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(encoded.encode("utf-8")).digest()


def assign(costs: Sequence[tuple[Pair, int]], count: int) -> tuple[tuple[Pair, ...], ...]:
    """The pairs of each of ``count`` shards (pairs unique; costs ≥ 0), each shard's
    pairs in the order given."""
    ordered = sorted(((-cost, _order(pair), position) for position, (pair, cost) in enumerate(costs)))
    loads = [(0, index) for index in range(count)]  # a heap: least load first, then lowest index
    owner = [0] * len(costs)
    for negative_cost, _, position in ordered:
        load, index = heapq.heappop(loads)
        owner[position] = index
        heapq.heappush(loads, (load - negative_cost, index))
    shards: list[list[Pair]] = [[] for _ in range(count)]
    for position, (pair, _) in enumerate(costs):
        shards[owner[position]].append(pair)
    return tuple(tuple(shard) for shard in shards)


class Partition(Frozen):
    count: int
    shards: tuple[tuple[Pair, ...], ...]  # shard K's pairs at index K - 1, in contract order
    planned: Mapping[str, int]  # attempts per selected scenario
    digest: str

    def owner(self) -> dict[Pair, int]:
        """The shard (1-based) of every pair."""
        return {pair: index + 1 for index, shard in enumerate(self.shards) for pair in shard}


def partition(contract: Contract, count: int, runs: int | None = None, extra: Mapping[str, int] | None = None) -> Partition:
    """The selected scenarios' pairs over ``count`` shards (see the module's rule)."""
    planned = planned_attempts(contract, runs, extra or {})
    costs = [((s.id, attempt), cost) for s in contract.scenarios for cost in (pair_cost(s),) for attempt in range(planned[s.id])]
    shards = assign(costs, count)
    shown = {"version": 1, "count": count, "shards": [[[sid, attempt + 1] for sid, attempt in shard] for shard in shards]}
    digest = hashlib.sha256(json.dumps(shown, ensure_ascii=False, separators=(",", ":")).encode("utf-8")).hexdigest()
    return Partition(count, shards, planned, digest)


def owned_attempts(
    attempts: Mapping[str, Sequence[Observation]], owned: frozenset[Pair]
) -> dict[str, tuple[Observation | None, ...]]:
    """Evidence narrowed to a shard's pairs: the other attempts are not this shard's (None)."""
    return {sid: tuple(o if (sid, i) in owned else None for i, o in enumerate(group)) for sid, group in attempts.items()}


class ShardBlock(Frozen):
    """The ``behavegate.shard`` block of a shard report: which shard of which run it is."""

    index: int  # K, from 1
    count: int  # N
    contract_digest: str
    partition_digest: str
    pairs: tuple[Pair, ...]
    plan: Mapping[str, Any] = field(default_factory=dict)  # what the partition and the judging depend on
    # The contract as data (contract/as_data.py): this shard's scenarios, so a merge need not load its YAML.
    contract_data: Mapping[str, Any] | None = None
    included: Mapping[str, str] = field(default_factory=dict)  # the SHA-256 of each file the contract includes

    def as_dict(self) -> dict[str, Any]:
        return {
            "index": self.index,
            "count": self.count,
            "contract_digest": self.contract_digest,
            "partition_digest": self.partition_digest,
            "pairs": [[sid, attempt + 1] for sid, attempt in self.pairs],
            "plan": dict(self.plan),
            "note": NOT_THE_VERDICT,
            **({} if self.contract_data is None else {"contract_data": self.contract_data}),
            **({"included": dict(self.included)} if self.included else {}),
        }
