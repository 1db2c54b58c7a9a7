"""Every recorded skylos 5.1.2 live-mode verdict is reproduced exactly.

Each case in tests/conformance/live/cases/ holds a contract, the canned replies
of an OpenAI-compatible loopback server (responses.json), optional CLI
arguments/environment (args.json) and ``expected.json``, recorded by running the
real skylos against the same canned server (tests/conformance/live/record.py).
The test starts that server, runs ``behavegate test`` in-process inside a copy
of the case and compares the same summary: exit code, error or report
(status, summary, coverage, scenarios with assertions and observations,
provenance minus the port-dependent endpoint fingerprint) and the exact request
bodies/headers the server received (compared order-free, because behavegate
may send scenarios concurrently). No skylos or network access is needed.

Cases flagged slow in case-index.json wait for a real (1-2 s) deadline: they are
marked ``slow`` (run by ``make test-slow``, ``pytest -m slow``); BEHAVEGATE_SKIP_SLOW=1
skips them even there.
"""

from __future__ import annotations

import importlib.util
import json
import os
import sys
import tomllib
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from behavegate.cli import main

ROOT = Path(__file__).resolve().parent.parent
LIVE = Path(__file__).resolve().parent / "conformance" / "live"
CASES = LIVE / "cases"


def _load(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"behavegate_live_conformance_{name}", LIVE / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


harness = _load("harness")
server = _load("server")

INDEX_FILE = LIVE / "case-index.json"
CASE_INDEX: dict[str, Any] = json.loads(INDEX_FILE.read_text(encoding="utf-8")).get("cases", {}) if INDEX_FILE.exists() else {}
CASE_NAMES = sorted(p.name for p in CASES.iterdir() if (p / "expected.json").exists()) if CASES.exists() else []


def _slow_marks() -> list[pytest.MarkDecorator]:
    marks = [
        pytest.mark.skipif(os.environ.get("BEHAVEGATE_SKIP_SLOW") == "1", reason="slow deadline case (BEHAVEGATE_SKIP_SLOW=1)")
    ]
    try:
        ini = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["pytest"]["ini_options"]
        if any(str(marker).split(":")[0].strip() == "slow" for marker in ini.get("markers", [])):
            marks.append(pytest.mark.slow)
    except (OSError, KeyError, tomllib.TOMLDecodeError):
        pass
    return marks


def _params() -> list[Any]:
    slow = _slow_marks()
    return [pytest.param(name, id=name, marks=slow if CASE_INDEX.get(name, {}).get("slow") else ()) for name in CASE_NAMES]


def run_case(case: Path, workdir: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> dict[str, Any]:
    url, stop, log = server.start(harness.case_responses(case))
    try:
        args, env = harness.materialize(case, workdir, harness.placeholders(url, server.dead_port()))
        for name, value in env.items():
            if value is None:
                monkeypatch.delenv(name, raising=False)
            else:
                monkeypatch.setenv(name, value)
        monkeypatch.chdir(workdir)
        capsys.readouterr()
        try:
            code = main(["test", *args])
        except SystemExit as exit_:
            code = exit_.code if isinstance(exit_.code, int) else (0 if exit_.code is None else 1)
        stdout = capsys.readouterr().out
    finally:
        stop()
    summary: dict[str, Any] = harness.summarize(code, stdout, list(log))
    return summary


def test_the_live_corpus_is_large_enough() -> None:
    assert CASES.exists(), "tests/conformance/live/cases is missing"
    assert len(CASE_NAMES) >= 45
    assert set(CASE_NAMES) == {p.name for p in CASES.iterdir() if p.is_dir()}, "a case has no expected.json; run record.py"


@pytest.mark.parametrize("name", _params())
def test_live_case_matches_skylos(
    name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    case = CASES / name
    expected = json.loads((case / "expected.json").read_text(encoding="utf-8"))
    observed = run_case(case, tmp_path, monkeypatch, capsys)
    assert harness.order_free(observed) == harness.order_free(expected)
