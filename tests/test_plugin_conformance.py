"""The plugin and the command line give the same verdicts on the conformance cases:
each scenario's status is its test's outcome (pass → passed, fail → failed,
incomplete → error), and a run the command line refuses (exit 2 before judging)
is a collection error, never a passing session."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from behavegate.cli import main

CASES = Path(__file__).parent / "conformance" / "cases"
# Cases run with the default arguments (a contract and an observation file): the plugin's flags.
NAMES = sorted(p.name for p in CASES.iterdir() if (p / "expected.json").exists() and not (p / "args.json").exists())
OUTCOME = {"pass": "passed", "fail": "failed", "incomplete": "error"}
# `make test` compares every 20th case (a fixed stride, so the same cases each run and every
# part of the sorted corpus is sampled); `make test-slow` compares them all.
STRIDE = 20
SAMPLE = NAMES[::STRIDE]


def test_enough_cases_are_compared() -> None:
    assert len(NAMES) >= 300 and len(SAMPLE) >= 15


def test_the_plugin_and_the_cli_agree_on_a_fixed_sample_of_the_conformance_cases(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    assert disagreements(SAMPLE, pytester, monkeypatch, capsys) == []


@pytest.mark.slow
def test_the_plugin_and_the_cli_agree_on_every_conformance_case(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    assert disagreements(NAMES, pytester, monkeypatch, capsys) == []


def disagreements(
    names: list[str], pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> list[tuple[str, int, dict[str, str] | None, dict[str, str], bool]]:
    found = []
    for name in names:
        work = pytester.path / name
        shutil.copytree(CASES / name, work)
        monkeypatch.chdir(work)
        capsys.readouterr()  # the previous case's pytest output
        code = main(["test", "contract.yml", "--observations", "observations.json", "--format", "json", "--no-artifacts"])
        out = capsys.readouterr().out
        cli = json.loads(out) if out.strip().startswith("{") else {}
        expected = {s["id"]: OUTCOME[s["status"]] for s in cli.get("scenarios", [])} if "error" not in cli else None
        run = pytester.inline_run(
            "--behavegate", "contract.yml", "--behavegate-observations", "observations.json", "-p", "no:cacheprovider", str(work)
        )
        outcomes: dict[str, str] = {}
        usage_error = run.ret == pytest.ExitCode.USAGE_ERROR  # refused before collection: no reports at all
        for report in [] if usage_error else run.getreports("pytest_runtest_logreport"):
            scenario = report.nodeid.split("::", 1)[-1]
            if report.when == "setup" and report.failed:
                outcomes[scenario] = "error"
            elif report.when == "call":
                outcomes[scenario] = report.outcome
        collection_failed = not usage_error and any(r.failed for r in run.getreports("pytest_collectreport"))
        if expected is None:
            refused = collection_failed or usage_error  # usage error: a contract that is not there
            agree = code == 2 and refused and not outcomes
        else:
            agree = outcomes == expected and not collection_failed and (code == 0) == (run.ret == 0)
        if not agree:
            found.append((name, code, expected, outcomes, collection_failed))
    return found
