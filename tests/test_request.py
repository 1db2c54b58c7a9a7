"""One run request for every door: the command line's argv (and so the Action's inputs),
the Python API and the pytest plugin build the same TestRequest, and `resolve` alone
decides the defaults that depend on the contract."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers import contract

from behavegate import api
from behavegate.cli import build_parser
from behavegate.commands.arguments import parsed
from behavegate.commands.invocation import TestCommand
from behavegate.commands.request import TestRequest, resolve
from behavegate.frozen import replace
from behavegate.limits import DEFAULT_CONCURRENCY, DEFAULT_MAX_SCENARIOS, DEFAULT_MAX_SECONDS, V2_MAX_SCENARIOS

V1 = "version: 1\nagent: {}\nscenarios:\n  - {id: a, prompt: p, expect: {refusal: true}}\n"
V2 = "version: 2\nagent: {model: m}\nscenarios:\n  - {id: a, prompt: p, expect: {refusal: true}}\n"


def test_a_bare_command_line_asks_for_nothing_but_a_run() -> None:
    """argparse gives no default of its own: every option not given is not given."""
    assert parsed(build_parser().parse_args(["test"])) == TestCommand()
    assert TestCommand().request == TestRequest()


def test_the_contract_decides_what_was_not_given() -> None:
    one, two = resolve(TestRequest(), contract(V1), offline=True), resolve(TestRequest(), contract(V2), offline=True)
    assert (one.max_scenarios, two.max_scenarios) == (DEFAULT_MAX_SCENARIOS, V2_MAX_SCENARIOS)
    assert one.concurrency == two.concurrency == DEFAULT_CONCURRENCY and one.max_seconds == DEFAULT_MAX_SECONDS
    given = resolve(TestRequest(max_scenarios=3, concurrency=9, max_seconds=5), contract(V2), offline=True)
    assert (given.max_scenarios, given.concurrency, given.max_seconds) == (3, 9, 5)


def test_an_oxy_files_concurrency_is_the_default_for_every_door(tmp_path: Path) -> None:
    (tmp_path / "ceo.test.yml").write_text("settings: {concurrency: 7}\ncases:\n  - {prompt: Who?, expected: Tim}\n")
    oxy = api.load_contract(tmp_path / "ceo.test.yml", root=tmp_path)
    assert resolve(TestRequest(), oxy, offline=False).concurrency == 7
    assert resolve(TestRequest(concurrency=2), oxy, offline=False).concurrency == 2
    # The API leaves it to the same resolve: no default of its own.
    assert api._run_options(oxy, None, (), None, None, None, None).concurrency == 7


def test_the_api_resolves_exactly_what_the_command_line_does() -> None:
    for text in (V1, V2):
        made = contract(text)
        assert api._run_options(made, None, (), None, None, None, None, offline=True) == resolve(
            replace(TestRequest(), artifacts=False), made, offline=True
        )


def test_values_are_checked_once_whatever_the_door() -> None:
    from behavegate.errors import UsageError

    with pytest.raises(UsageError, match="--concurrency must be between 1 and 64"):
        resolve(TestRequest(concurrency=0), contract(V2), offline=False)
    with pytest.raises(UsageError, match="--concurrency must be between 1 and 64"):
        api._run_options(contract(V2), None, (), None, None, None, None, concurrency=65)
