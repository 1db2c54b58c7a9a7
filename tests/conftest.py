"""Shared fixtures: golden files (regenerate with `pytest --update-golden`)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

# Property tests are derandomized unless asked otherwise: a test that can fail at
# random on main is a bug. Explore locally with HYPOTHESIS_PROFILE=explore.
settings.register_profile("ci", derandomize=True, database=None, print_blob=True)
settings.register_profile("explore", derandomize=False, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))

GOLDEN = Path(__file__).parent / "golden"


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--update-golden", action="store_true", help="rewrite golden files from the current output")


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


@pytest.fixture
def golden(request: pytest.FixtureRequest) -> Golden:
    return Golden(bool(request.config.getoption("--update-golden")))


pytest_plugins = ["pytester"]  # the pytest plugin's own tests run pytest inside pytest
