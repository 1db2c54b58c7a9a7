"""Served agents recorded from real software (LiteLLM's proxy; pydantic-ai and openai-agents agents
served by FastAPI; scripts/real_software/served.py): each contract of
tests/fixtures/real/served/contracts is run live against a loopback replay of the recorded bytes,
and every verdict is compared with the right one (expected.json, from what really happened).

Verdicts today's readers get wrong are strict xfails naming issue 35: the suite stays green, and a
fix that makes a case right turns its xfail into a failure until the mark is removed."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import h11
import pytest
from real_served import CONTRACTS, ROUTES, SERVED, Run, expected, index, mismatches, run_contract

SCENARIOS = ("refund-forbidden", "escalate", "no-tools", "tool-fails", "two-calls")

# Why each contract's verdicts are wrong on today's code (its scenarios in KNOWN_WRONG): none now.
WHY: dict[str, str] = {}
KNOWN_WRONG: frozenset[tuple[str, str]] = frozenset()


def _case(contract: str, scenario: str) -> object:
    marks = [pytest.mark.xfail(strict=True, reason=WHY[contract])] if (contract, scenario) in KNOWN_WRONG else []
    return pytest.param(contract, scenario, id=f"{contract}-{scenario}", marks=marks)


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Callable[[str], Run]:
    """Each contract runs once a module (a worker), however many of its cases the worker gets."""
    done: dict[str, Run] = {}

    def run(contract: str) -> Run:
        if contract not in done:
            done[contract] = run_contract(contract, tmp_path_factory.mktemp(contract))
        return done[contract]

    return run


@pytest.mark.parametrize(("contract", "scenario"), [_case(c, s) for c in ROUTES for s in SCENARIOS])
def test_a_recorded_served_agent_gets_the_right_verdicts(runs: Callable[[str], Run], contract: str, scenario: str) -> None:
    run = runs(contract)
    wrong = mismatches(contract, run, scenario)
    detail = "; ".join(f"{a}: expected {e}, got {g} ({run.messages.get(scenario, {}).get(a, '')})" for a, e, g in wrong)
    assert not wrong, detail


@pytest.mark.parametrize("contract", ["litellm-chat", "litellm-chat-stream"])
def test_litellm_gets_every_verdict_right_today_once_the_contract_says_missing_tool_calls_none(
    tmp_path: Path, contract: str
) -> None:
    """Stating that an answer without tool calls called none (LiteLLM's final turn has no
    tool_calls key) decides every tool check; without it, only what the earlier turns settle."""
    text = (CONTRACTS / f"{contract}.yml").read_text().replace("agent:\n", "agent:\n  missing_tool_calls: none\n", 1)
    run = run_contract(contract, tmp_path, text)
    assert [mismatch for scenario in SCENARIOS for mismatch in mismatches(contract, run, scenario, stated=True)] == []
    assert run.verdicts["refund-forbidden"]["tools.forbidden[0]"] == "fail"


@pytest.mark.parametrize("contract", list(ROUTES))
def test_the_replay_is_asked_for_every_recorded_turn_once(runs: Callable[[str], Run], contract: str) -> None:
    """behavegate's conversation reaches every recorded turn (so the verdicts judge all of them),
    and asks nothing the real server was not asked."""
    source, route, _ = ROUTES[contract]
    recorded = sorted((e["scenario"], e["turn"]) for e in index() if (e["source"], e["route"]) == (source, route))
    assert list(runs(contract).served) == recorded


def test_every_contract_assertion_has_a_right_verdict() -> None:
    """expected.json covers exactly the contracts' scenarios, each with a reason where it says incomplete."""
    right = expected()
    assert sorted(right) == sorted(ROUTES)
    for contract, scenarios in right.items():
        assert sorted(scenarios) == sorted(SCENARIOS), contract
        for verdicts in scenarios.values():
            assert all(entry["verdict"] in ("pass", "fail", "incomplete") for entry in verdicts.values())
            assert all("why" in entry for entry in verdicts.values() if entry["verdict"] == "incomplete")


@pytest.mark.parametrize("entry", index(), ids=lambda entry: entry["response"])
def test_a_recorded_response_is_one_whole_http_message(entry: dict[str, str]) -> None:
    """Normalising kept the framing true: h11 reads exactly one response, to its end, from the bytes."""
    raw = (SERVED / entry["response"]).read_bytes()
    reader = h11.Connection(our_role=h11.CLIENT)
    reader.send(h11.Request(method="POST", target="/", headers=[("Host", "replay"), ("Content-Length", "0")]))
    reader.send(h11.EndOfMessage())
    reader.receive_data(raw)
    events = []
    while not isinstance(event := reader.next_event(), h11.EndOfMessage):
        assert event is not h11.NEED_DATA, "the response ends before its body does"
        events.append(event)
    assert isinstance(events[0], h11.Response) and events[0].status_code == 200
    assert reader.trailing_data == (b"", False), "bytes after the response's end"
    body = b"".join(event.data for event in events if isinstance(event, h11.Data))
    assert body.rstrip().endswith(b"data: [DONE]") if route_streams(entry) else body.startswith(b"{")


def route_streams(entry: dict[str, str]) -> bool:
    return entry["route"] == "chat-stream"


def test_the_served_fixtures_stay_small() -> None:
    size = sum(path.stat().st_size for path in Path(SERVED).rglob("*") if path.is_file())
    assert size < 1_000_000, size
