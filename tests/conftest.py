"""Shared fixtures: golden files (regenerate with `pytest --update-golden`); slow tests
left out unless asked for (`pytest -m slow`, or named by node id)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

# Property tests are derandomized unless asked otherwise: a test that can fail at
# random on main is a bug. Explore locally with HYPOTHESIS_PROFILE=explore. No per-example
# deadline (200 ms by default) and no too-slow health check: both are wall-clock limits,
# which a loaded machine breaks.
TIMELESS = settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("ci", TIMELESS, derandomize=True, database=None, print_blob=True)
settings.register_profile("explore", TIMELESS, derandomize=False)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))

GOLDEN = Path(__file__).parent / "golden"


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--update-golden", action="store_true", help="rewrite golden files from the current output")


def _named(item: pytest.Item, config: pytest.Config) -> bool:
    """Whether a command-line argument names this test (or its parametrized family) by node id."""
    for arg in config.args:
        path, sep, rest = arg.partition("::")
        if not sep:
            continue
        try:
            relative = Path(path).resolve().relative_to(config.rootpath).as_posix()
        except ValueError:
            continue
        if item.nodeid == f"{relative}::{rest}" or item.nodeid.startswith(f"{relative}::{rest}["):
            return True
    return False


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    # A `-m` expression decides for itself (`-m slow`, `-m "slow or not slow"`); without one the
    # slow tests wait for `make test-slow`, unless a test is named on the command line.
    if config.option.markexpr:
        return
    slow = [item for item in items if item.get_closest_marker("slow") and not _named(item, config)]
    if slow:
        config.hook.pytest_deselected(items=slow)
        left_out = {id(item) for item in slow}
        items[:] = [item for item in items if id(item) not in left_out]


class Golden:
    def __init__(self, update: bool) -> None:
        self.update = update

    def check(self, name: str, text: str) -> None:
        path = GOLDEN / name
        if self.update:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
            return
        assert path.exists(), f"golden file {name} is missing; run `make golden`"
        assert text == path.read_text(encoding="utf-8"), f"{name} differs; if intended, run `make golden`"


RUNNER_VARIABLES = ("CI", "GITHUB_", "RUNNER_", "BEHAVEGATE_", "ACTIONS_")


@pytest.fixture(autouse=True)
def outside_a_runner(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every test starts as on a developer's machine: the project's own CI (GitHub Actions,
    or any that sets CI=true) would otherwise turn on the runner's behaviour (stop-commands
    around stdout, --cache refused, the job summary) in tests that did not ask for it. A
    test about the runner sets what it needs."""
    for name in list(os.environ):
        if name == "CI" or name.startswith(RUNNER_VARIABLES[1:]):
            monkeypatch.delenv(name)


@pytest.fixture
def golden(request: pytest.FixtureRequest) -> Golden:
    return Golden(bool(request.config.getoption("--update-golden")))


pytest_plugins = ["pytester"]  # the pytest plugin's own tests run pytest inside pytest
