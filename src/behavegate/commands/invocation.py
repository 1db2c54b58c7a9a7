"""Each command as it was invoked: frozen values, grouped as ``--help`` groups the options,
built once from argparse (``commands/arguments.py``) and handed to the command. Nothing
below the command line reads argparse; a suite derives each contract's value with
``replace`` (its own scenarios, what is left of the shared budget), never by rewriting one."""

from __future__ import annotations

from behavegate.commands.request import TestRequest
from behavegate.frozen import Frozen, field
from behavegate.gating import FailOn
from behavegate.github.views import Format, Views


class Evidence(Frozen):
    """Where the evidence comes from when no agent is called: a captured observation file
    or recorded traces (and how a trace names its scenario)."""

    observations: str | None = None
    traces: tuple[str, ...] = ()
    trace_format: str | None = None  # None: told from each file
    trace_bind: str = "auto"
    trace_attribute: str = "behavegate.scenario.id"


class LiveAccess(Frozen):
    """What a live run may reach besides the request's endpoint: service hosts allowed
    over plain http, and where the scripted MCP tool server listens."""

    allow_hosts: tuple[str, ...] = ()
    mcp_listen: str | None = None
    mcp_port: int | None = None
    tools_mcp: str | None = None  # --tools-mcp: the trusted server agent.tools_from lists tools from
    cache: str | None = None  # --cache DIR: answers replayed from and stored in DIR (authoring; commands/cache_policy.py)

    def given(self) -> bool:
        """Flags only a live run reads (--tools-mcp is read offline too)."""
        return bool(self.allow_hosts or self.mcp_listen or self.mcp_port is not None)


class Gating(Frozen):
    """What fails the run, and the baseline report it is compared with."""

    baseline: str | None = None
    fail_on: FailOn = FailOn.INCOMPLETE


class SuiteShare(Frozen):
    """What a suite's earlier contracts left this one: the shared budgets they spent, and
    whether the suite holds the floor of its Oxy files (on the mean of their scores)."""

    spent_tokens: int = 0
    spent_cost: float = 0.0
    oxy_floor: bool = False


class TestCommand(Frozen):
    """``behavegate test``."""

    __test__ = False  # not a pytest test class, whatever its name says

    contracts: tuple[str, ...] = ()  # as named on the command line (none: discovered)
    contract: str | None = None  # the one this value runs: the CI error annotations name it
    request: TestRequest = field(default_factory=TestRequest)
    evidence: Evidence = field(default_factory=Evidence)
    live: LiveAccess = field(default_factory=LiveAccess)
    cases: tuple[str, ...] | None = None  # --case: an Oxy test file's cases
    shard: str | None = None  # --shard K/N, as written (evidence/shard.py reads it)
    gating: Gating = field(default_factory=Gating)
    views: Views = field(default_factory=Views)
    suite: SuiteShare = field(default_factory=SuiteShare)


class WatchCommand(Frozen):
    """``behavegate watch``: ``test`` run again whenever its files change."""

    test: TestCommand = field(default_factory=TestCommand)
    interval: float = 0.5  # seconds between looks at the watched files
    max_runs: int | None = None  # stop after this many runs (--once: 1); None: until Ctrl-C


class MergeCommand(Frozen):
    """``behavegate merge``."""

    reports: tuple[str, ...]
    contract: str | None = None
    artifacts: bool = True
    gating: Gating = field(default_factory=Gating)
    views: Views = field(default_factory=Views)


class ReplayCommand(Frozen):
    """``behavegate replay``."""

    run_dir: str
    format: Format = "table"


class ShowCommand(Frozen):
    """``behavegate show``."""

    run_dir: str
    scenario: str | None = None
    format: Format = "table"
    max_chars: int = 2000


class ListCommand(Frozen):
    """``behavegate list``."""

    library: str | None = None
    format: Format = "table"


class InitCommand(Frozen):
    """``behavegate init``."""

    path: str = ".behavegate/contract.yml"
    force: bool = False
    contract_version: int = 1


class TracesCommand(Frozen):
    """``behavegate traces ACTION``."""

    action: str | None  # None: no action named
    files: tuple[str, ...] = ()
    format: Format = "table"
    trace_format: str | None = None
    trace_attribute: str = "behavegate.scenario.id"


class ValidateCommand(Frozen):
    """``behavegate validate``."""

    contracts: tuple[str, ...] = ()  # none: what ``test`` discovers
    format: Format = "table"


class ViewCommand(Frozen):
    """``behavegate view``."""

    runs_dir: str = ".behavegate/runs"
    host: str = "127.0.0.1"
    port: int = 0  # 0: a free port
    compare: tuple[str, str] | None = None  # the static mode: these two runs, written to ``html``
    html: str | None = None


Command = (
    ViewCommand
    | ValidateCommand
    | TestCommand
    | WatchCommand
    | MergeCommand
    | ReplayCommand
    | ShowCommand
    | ListCommand
    | InitCommand
    | TracesCommand
)
