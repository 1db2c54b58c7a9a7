"""What an Oxy test file says beyond its scenarios (read by contract/oxy.py): kept on
the :class:`~behavegate.model.Contract` so that its run, score and views follow Oxy."""

from __future__ import annotations

from behavegate.frozen import Frozen

__all__ = ["OxyCase", "OxyFile"]


class OxyCase(Frozen):
    """One case of an Oxy test file as written: its label for ``--case`` and reports."""

    index: int  # 0-based, as ``oxy test --case N`` counts
    name: str | None
    prompt: str
    scenario_id: str


class OxyFile(Frozen):
    """What an Oxy ``*.test.yml`` says beyond its scenarios (contract/oxy.py)."""

    name: str | None
    target: str | None
    runs: int
    concurrency: int
    judge_model: str | None
    cases: tuple[OxyCase, ...]
