"""Live progress: a live line on a terminal, a line per scenario in CI logs,
never agent text."""

from __future__ import annotations

import io

from helpers import contract

from behavegate.github.console import Console
from behavegate.model import Observation
from behavegate.render.progress import Progress

CONTRACT = contract("version: 1\nagent: {}\nscenarios:\n  - {id: s1, prompt: p, expect: {response: {contains: [ok]}}}\n")


def done(progress: Progress, response: str) -> None:
    progress.scenario_done(
        CONTRACT.scenarios[0],
        Observation("s1", response=response, finish_reason="stop", response_complete=True, tool_calls_complete=True),
    )


def test_ci_logs_get_one_line_per_scenario_with_its_status() -> None:
    stream = io.StringIO()
    progress = Progress(2, Console(stream, stream, environ={}), 0.0, interactive=False)
    done(progress, "ok then")
    done(progress, "::error::secret agent text")
    progress.finish()
    lines = stream.getvalue().splitlines()
    assert [line.split(" (")[0] for line in lines] == ["behavegate: [1/2] s1: pass", "behavegate: [2/2] s1: fail"]
    assert "secret agent text" not in stream.getvalue()


def test_a_terminal_gets_one_rewritten_line_and_a_final_newline() -> None:
    stream = io.StringIO()
    progress = Progress(2, Console(stream, stream, environ={}), 0.0, interactive=True)
    done(progress, "ok")
    done(progress, "nope")
    progress.finish()
    text = stream.getvalue()
    assert text.count("\r\x1b[2K") == 2 and text.endswith("\n")
    assert "[2/2] 1 failing, 0 incomplete" in text
