"""behavegate inside pytest: one test item per scenario of a contract.

    pytest --behavegate contract.yml --behavegate-observations observations.json
    pytest --behavegate contract.yml --behavegate-agent my_agent:answer
    pytest --behavegate contract.yml --behavegate-endpoint http://127.0.0.1:8000/v1/chat/completions

A scenario that passes is a passed test, one that violates a behavior a failed
test (its text lists each failed assertion, expected vs observed, and the
contract line), one whose evidence is incomplete an error: never a skip. Scenario
tags are markers (``-m injection``). Everything is judged by :mod:`behavegate.api`,
so the verdicts are the command line's.

Offline, the whole contract is judged once per process at collection (cheap, no
network). Live and in-process, each item asks only for its own scenario's attempts
when it runs, so under pytest-xdist every request is made by exactly one worker;
``--behavegate-max-seconds`` is the session's budget, shared by the items. Suite
gates (``gates:``, ``--min-pass-rate``) judge a whole run: they are the command
line's, and an offline run that fails one makes one more item, ``::gates``, fail.

Nothing here prints: pytest reports, from text made inert like every console line.
"""

from __future__ import annotations

import importlib
import sys
import time
from collections.abc import Callable, Generator, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from behavegate.model import Contract, GateResult, Scenario, ScenarioResult
    from behavegate.report.result import Report

# pytest's own markers: a scenario tag with one of these names must not skip or xfail it.
RESERVED_MARKERS = frozenset(
    {"skip", "skipif", "xfail", "parametrize", "usefixtures", "filterwarnings", "tryfirst", "trylast", "no_cover"}
)
SERIALIZED = "behavegate_status"


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("behavegate", "behavegate: test what an AI agent does against a behavior contract")
    group.addoption("--behavegate", default=None, metavar="CONTRACT", help="collect one test per scenario of this contract")
    group.addoption(
        "--behavegate-observations", default=None, metavar="FILE", help="judge a captured observation file (no network)"
    )
    group.addoption(
        "--behavegate-agent",
        default=None,
        metavar="MODULE:CALLABLE",
        help="ask an in-process agent: agent(messages, tools), sync or async (no network)",
    )
    group.addoption(
        "--behavegate-endpoint", default=None, metavar="URL", help="trusted agent endpoint (overrides agent.endpoint)"
    )
    group.addoption("--behavegate-auth-env", default=None, metavar="VAR", help="environment variable holding a bearer token")
    group.addoption("--behavegate-allow-remote", action="store_true", help="allow a non-loopback HTTPS endpoint")
    group.addoption(
        "--behavegate-allow-contract-endpoint", action="store_true", help="allow the contract's own loopback endpoint"
    )
    group.addoption(
        "--behavegate-allow-host",
        action="append",
        default=[],
        metavar="NAME",
        help="allow plain-http endpoints on this service host name (repeatable; CI service containers)",
    )
    group.addoption(
        "--behavegate-judge-endpoint",
        default=None,
        metavar="URL",
        help="trusted judge endpoint for response.judge checks (overrides judge.endpoint)",
    )
    group.addoption("--behavegate-judge-model", default=None, metavar="NAME", help="the judge's model (overrides judge.model)")
    group.addoption(
        "--behavegate-judge-auth-env", default=None, metavar="VAR", help="environment variable holding the judge's bearer token"
    )
    group.addoption("--behavegate-judge-allow-remote", action="store_true", help="allow a non-loopback HTTPS judge endpoint")
    group.addoption(
        "--behavegate-judge-allow-contract-endpoint", action="store_true", help="allow the contract's own loopback judge.endpoint"
    )
    group.addoption("--behavegate-concurrency", type=int, default=None, metavar="N", help="attempts in flight at once")
    group.addoption("--behavegate-runs", type=int, default=None, metavar="N", help="version 2: attempts per scenario")
    group.addoption(
        "--behavegate-min-pass-rate", type=float, default=None, metavar="RATE", help="version 2: suite-wide pass-rate floor, 0-1"
    )
    group.addoption(
        "--behavegate-max-seconds", type=float, default=None, metavar="S", help="wall-time budget of the session's runs"
    )
    group.addoption("--behavegate-max-tokens", type=int, default=None, metavar="N", help="response-token cap sent to the agent")


# The entry point's name (autoload, `-p behavegate`, `-p no:behavegate`) and the import name
# (`-p behavegate.pytest_plugin`, `pytest_plugins = [...]`): pluggy refuses a module under two.
NAMES = ("behavegate", __name__)


def pytest_plugin_registered(plugin: object, plugin_name: str, manager: pytest.PytestPluginManager) -> None:
    if plugin is sys.modules[__name__] and plugin_name in NAMES:
        for other in NAMES:
            if other != plugin_name and manager.get_plugin(other) is None:
                manager.set_blocked(other)  # the first name wins: registering the other is skipped, not an error


def pytest_configure(config: pytest.Config) -> None:
    if config.getoption("behavegate"):
        config.stash[_STATE] = _State(config)
        _ensure_collected(config)


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> pytest.Collector | None:
    # Every time: a directory is collected once per argument, each keeping only its own path's nodes.
    state = parent.config.stash.get(_STATE, None)
    if state is None or file_path.resolve() != state.contract_file:
        return None
    return ContractFile.from_parent(parent, path=file_path)


@pytest.hookimpl(tryfirst=True)
def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    """The folders that hold the contract are walked, a dot folder included: ``behavegate init``
    writes ``.behavegate/contract.yml``, and pytest skips ``.*`` folders (norecursedirs).
    Naming the file as an argument is not enough: pytest collects nothing under a skipped folder
    when a parent folder is an argument too (``pytest . .behavegate/contract.yml``)."""
    state = config.stash.get(_STATE, None)
    if state is not None and collection_path.is_dir() and collection_path.resolve() in state.contract_file.parents:
        return False
    return None


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    report = yield
    if isinstance(item, ScenarioItem) and item.result is not None:
        # A plain attribute travels with the report to the xdist controller.
        setattr(report, SERIALIZED, item.result.status)
    return report


@pytest.fixture
def behavegate_run(request: pytest.FixtureRequest) -> Callable[[str], ScenarioResult]:
    """``behavegate_run(scenario_id)``: that scenario judged (its ``attempts``, each with its
    ``observation`` and ``verdicts``; ``status``; ``reliability``), to add your own checks.
    Reuses the item's run when it ran in this process, else runs the scenario once."""
    state = request.config.stash.get(_STATE, None)
    if state is None:
        pytest.fail("behavegate_run needs pytest --behavegate CONTRACT", pytrace=False)
    return state.result_of


# --- the session's state ----------------------------------------------------------------------


class _State:
    """The evidence source the person running pytest chose, and what was judged so far."""

    def __init__(self, config: pytest.Config) -> None:
        from behavegate.commands.request import run_seconds

        option = config.getoption
        self.config = config
        self.cwd = Path.cwd().resolve()  # where the paths given on the command line are read from
        self.root = _project_root(config, self.cwd)
        self.contract_file = (self.cwd / str(option("behavegate"))).resolve()
        if not self.contract_file.is_file():
            raise pytest.UsageError(f"--behavegate: no contract file at {option('behavegate')}")
        self.observations: str | None = option("behavegate_observations")
        self.agent_name: str | None = option("behavegate_agent")
        live_flags = [
            option(n)
            for n in (
                "behavegate_endpoint",
                "behavegate_auth_env",
                "behavegate_allow_remote",
                "behavegate_allow_contract_endpoint",
                "behavegate_allow_host",
            )
        ]
        if self.observations and self.agent_name:
            raise pytest.UsageError(
                "--behavegate-observations and --behavegate-agent cannot be combined: choose one evidence source"
            )
        if (self.observations or self.agent_name) and any(live_flags):
            raise pytest.UsageError("--behavegate-observations and --behavegate-agent cannot be combined with endpoint options")
        from behavegate.commands.judge_options import JudgeOptions
        from behavegate.commands.request import TestRequest

        # The session's request, the value the command line builds (commands/arguments.py);
        # the endpoint options are refused above unless the run is live.
        self.request = TestRequest(
            endpoint=option("behavegate_endpoint"),
            auth_env=option("behavegate_auth_env"),
            allow_remote=bool(option("behavegate_allow_remote")),
            allow_contract_endpoint=bool(option("behavegate_allow_contract_endpoint")),
            concurrency=option("behavegate_concurrency"),  # None: resolve decides (an Oxy file's), as for the CLI
            max_tokens=option("behavegate_max_tokens"),
            runs=option("behavegate_runs"),
            min_pass_rate=option("behavegate_min_pass_rate"),
            artifacts=False,
            judge=JudgeOptions(
                endpoint=option("behavegate_judge_endpoint"),
                model=option("behavegate_judge_model"),
                auth_env=option("behavegate_judge_auth_env"),
                allow_remote=bool(option("behavegate_judge_allow_remote")),
                allow_contract_endpoint=bool(option("behavegate_judge_allow_contract_endpoint")),
            ),
        )
        self.allow_hosts: tuple[str, ...] = tuple(option("behavegate_allow_host"))
        if self.observations and self.request.judge.given():
            raise pytest.UsageError(
                "--behavegate-observations cannot be combined with judge options: the recorded judge replies are used"
            )
        self.mode = "offline" if self.observations else "callable" if self.agent_name else "live"
        self.max_seconds = run_seconds(option("behavegate_max_seconds"))  # the session's budget
        self.started = time.monotonic()
        self.contract: Contract | None = None
        self.agent: Any = None
        self.report: Report | None = None  # offline: the whole contract, judged at collection
        self.results: dict[str, tuple[Report, ScenarioResult]] = {}

    def prepare(self, contract: Contract) -> None:
        """Every check the command line makes before its first request, for the whole contract."""
        from behavegate import api

        self.contract = contract
        if self.mode == "offline":
            assert self.observations is not None
            request = self.request
            self.report = api.evaluate(
                contract, (self.cwd / self.observations).resolve(), runs=request.runs, min_pass_rate=request.min_pass_rate
            )
            for result in self.report.results:
                self.results[result.scenario.id] = (self.report, result)
            return
        request = self.request
        options, (selected, _, _) = api._prepared(
            contract,
            request.concurrency,
            None,
            (),
            request.runs,
            request.min_pass_rate,
            None,
            None,
            endpoint=request.endpoint,
            auth_env=request.auth_env,
            allow_remote=request.allow_remote,
            allow_contract_endpoint=request.allow_contract_endpoint,
            max_seconds=self.max_seconds,
            max_tokens=request.max_tokens,
            judge=request.judge,
        )
        if self.mode == "live":
            from behavegate.commands.live_run import trusted_settings

            trusted_settings(selected, options, self.allow_hosts, options.concurrency, self.started)
        else:
            from behavegate.commands.judge_options import trusted_judge

            trusted_judge(selected, request.judge, ())  # a judge that is not allowed fails the session before any request
            self.agent = _import_agent(str(self.agent_name), self.cwd)

    def gates_requested(self) -> bool:
        if self.report is not None:
            return bool(self.report.gates)
        gates = self.contract.gates if self.contract is not None else None
        return gates is not None and (
            gates.min_pass_rate is not None or gates.latency_p95_ms is not None or self.request.min_pass_rate is not None
        )

    def gates(self) -> tuple[GateResult, ...]:
        """The suite gates over every scenario judged in this process (all of them, or an error)."""
        from behavegate.commands.options import RunOptions
        from behavegate.judge.evaluate import suite_gates

        if self.report is not None:
            return self.report.gates
        assert self.contract is not None
        missing = [s for s in self.contract.scenario_ids() if s not in self.results]
        if missing:
            pytest.fail(
                f"behavegate: the suite gates judge every scenario, and {len(missing)} did not run in this process "
                "(deselected, or on another pytest-xdist worker): run them all in one process, or use `behavegate test`",
                pytrace=False,
            )
        gates = RunOptions(min_pass_rate=self.request.min_pass_rate).gates(self.contract.gates)
        return suite_gates([self.results[s][1] for s in self.contract.scenario_ids()], gates)

    def result_of(self, scenario_id: str) -> ScenarioResult:
        """The scenario judged, its attempts always listed (version 1: its one attempt)."""
        from behavegate.frozen import replace
        from behavegate.model import Attempt

        result = self.run(scenario_id)[1]
        if result.attempts:
            return result
        return replace(result, attempts=(Attempt(0, result.status, result.verdicts, result.observation),))

    def run(self, scenario_id: str) -> tuple[Report, ScenarioResult]:
        """The scenario judged: looked up (offline, or already run here) or run now, alone."""
        from behavegate import api
        from behavegate.errors import BehavegateError
        from behavegate.text import one_line

        if scenario_id in self.results:
            return self.results[scenario_id]
        if self.contract is None or scenario_id not in self.contract.scenario_ids():
            pytest.fail(f"behavegate: no scenario {one_line(scenario_id)!r} in the contract", pytrace=False)
        if self.mode == "offline":  # every scenario was judged at collection
            pytest.fail(f"behavegate: scenario {one_line(scenario_id)!r} was not judged", pytrace=False)
        remaining = self.max_seconds - (time.monotonic() - self.started)
        if remaining <= 0:
            pytest.fail(
                f"behavegate: not sent: the session's time budget (--behavegate-max-seconds {self.max_seconds:g}) ran out",
                pytrace=False,
            )
        request = self.request
        try:
            if self.mode == "callable":
                report = api.run_callable(
                    self.contract,
                    self.agent,
                    judge=request.judge,
                    scenarios=[scenario_id],
                    max_seconds=remaining,
                    max_tokens=request.max_tokens,
                    concurrency=request.concurrency,
                    runs=request.runs,
                    min_pass_rate=request.min_pass_rate,
                )
            else:
                report = api.run_live(
                    self.contract,
                    endpoint=request.endpoint,
                    allow_remote=request.allow_remote,
                    allow_contract_endpoint=request.allow_contract_endpoint,
                    allow_hosts=self.allow_hosts,
                    auth_env=request.auth_env,
                    judge=request.judge,
                    scenarios=[scenario_id],
                    max_seconds=remaining,
                    max_tokens=request.max_tokens,
                    concurrency=request.concurrency,
                    runs=request.runs,
                    min_pass_rate=request.min_pass_rate,
                )
        except BehavegateError as exc:
            from behavegate.commands.test import error_text

            pytest.fail(_inert(error_text(exc)), pytrace=False)
        self.results[scenario_id] = (report, report.results[0])
        return self.results[scenario_id]


_STATE = pytest.StashKey[_State]()


def _project_root(config: pytest.Config, cwd: Path) -> Path:
    """What the contract, its includes and evidence must stay inside: pytest's rootdir, found
    by a configuration file, when run inside it (e.g. from ``tests/``); else the current directory."""
    rootdir = config.rootpath.resolve()
    if config.inipath is not None and (cwd == rootdir or rootdir in cwd.parents):
        return rootdir
    return cwd


def _ensure_collected(config: pytest.Config) -> None:
    """The contract is collected even when it lies outside the paths pytest walks."""
    state = config.stash[_STATE]
    args = [Path(a.split("::")[0]).resolve() for a in config.args]
    if not any(state.contract_file == a or a in state.contract_file.parents for a in args):
        config.args.append(str(state.contract_file))


def _import_agent(name: str, root: Path) -> Any:
    module_name, _, attribute = name.partition(":")
    if not module_name or not attribute:
        raise pytest.UsageError(f"--behavegate-agent must be MODULE:CALLABLE, got {name!r}")
    if str(root) not in sys.path:
        sys.path.insert(0, str(root))  # as `python -m` would: the agent's module next to the project
    try:
        target: Any = importlib.import_module(module_name)
        for part in attribute.split("."):
            target = getattr(target, part)
    except (ImportError, AttributeError) as exc:
        raise pytest.UsageError(f"--behavegate-agent {name}: {type(exc).__name__}: {exc}") from None
    if not callable(target):
        raise pytest.UsageError(f"--behavegate-agent {name} is not callable")
    return target


def _inert(text: str) -> str:
    from behavegate.text import neutralize

    return neutralize(text)


# --- collection and items -----------------------------------------------------------------------


class ContractFile(pytest.File):
    def collect(self) -> Iterator[pytest.Item]:
        from behavegate import api
        from behavegate.errors import BehavegateError

        state = self.config.stash[_STATE]
        try:
            contract = api.load_contract(self.path, root=state.root)
            state.prepare(contract)
        except BehavegateError as exc:
            from behavegate.commands.test import error_text

            raise self.CollectError(_inert(error_text(exc))) from None
        registered = {line.split(":")[0].split("(")[0].strip() for line in self.config.getini("markers")}
        for scenario in contract.scenarios:
            item = ScenarioItem.from_parent(self, name=scenario.id, scenario=scenario)
            for tag in scenario.tags:
                if tag in RESERVED_MARKERS or tag.startswith("_") or not tag.isprintable():
                    continue
                if tag not in registered:
                    self.config.addinivalue_line("markers", f"{tag}: behavegate scenario tag")
                    registered.add(tag)
                item.add_marker(tag)
            yield item
        if state.gates_requested():
            yield GatesItem.from_parent(self, name="gates")


class ScenarioItem(pytest.Item):
    def __init__(self, *, scenario: Scenario, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.scenario = scenario
        self.result: ScenarioResult | None = None
        self.report: Report | None = None
        file, line = _where(self, scenario)
        self.user_properties.extend([("behavegate.contract", file), ("behavegate.line", str(line or ""))])
        self.user_properties.extend(("behavegate.tag", tag) for tag in scenario.tags)

    def setup(self) -> None:
        state = self.config.stash[_STATE]
        self.report, self.result = state.run(self.scenario.id)
        self.user_properties.append(("behavegate.status", self.result.status))
        if self.result.status == "incomplete":  # missing evidence is an error, never a pass or a skip
            pytest.fail(self.failure_text(), pytrace=False)

    def runtest(self) -> None:
        if self.result is not None and self.result.status == "fail":
            pytest.fail(self.failure_text(), pytrace=False)

    def failure_text(self) -> str:
        from behavegate.render.table import attempts_not_sent, pass_rate, scenario_problems

        assert self.report is not None and self.result is not None
        lines = scenario_problems(self.report, self.result)
        if self.result.reliability is not None:
            lines.insert(1, f"  attempts passed: {pass_rate(self.result.reliability, attempts_not_sent(self.result))}")
        return _inert("\n".join(lines))

    def reportinfo(self) -> tuple[Path, int | None, str]:
        file, line = _where(self, self.scenario)
        return (
            self.config.rootpath / file,
            (line - 1 if line else None),
            f"{self.parent.name if self.parent else ''}::{self.name}",
        )


class GatesItem(pytest.Item):
    """The suite gates (version 2 ``gates:``, ``--behavegate-min-pass-rate``), judged after the scenarios."""

    def runtest(self) -> None:
        from behavegate.text import one_line

        bad = [g for g in self.config.stash[_STATE].gates() if g.status != "pass"]
        if bad:
            pytest.fail(_inert("\n".join(f"Gate {g.gate}: {g.status}: {one_line(g.message)}" for g in bad)), pytrace=False)

    def reportinfo(self) -> tuple[Path, int | None, str]:
        return self.path, None, f"{self.name}"


def _where(item: pytest.Item, scenario: Scenario) -> tuple[str, int | None]:
    """The scenario's file (relative to pytest's rootdir; an include's own file) and line."""
    import posixpath

    contract = (
        item.path.relative_to(item.config.rootpath).as_posix()
        if item.path.is_relative_to(item.config.rootpath)
        else str(item.path)
    )
    if not scenario.file:
        return contract, scenario.line
    return posixpath.normpath(posixpath.join(posixpath.dirname(contract), scenario.file)), scenario.line
