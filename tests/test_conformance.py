"""Every recorded skylos 5.1.2 verdict is reproduced exactly.

Each case in tests/conformance/cases/ holds a contract, an observation file,
optional CLI arguments and ``expected.json``, recorded by running the real
skylos (tests/conformance/record.py). The test run needs no skylos.
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest

from behavegate.cli import main

sys.path.insert(0, str(Path(__file__).parent / "conformance"))
from record import summarize  # the recorder's own summary: one definition for both sides

CASES = Path(__file__).parent / "conformance" / "cases"
DEFAULT_ARGS = ["contract.yml", "--observations", "observations.json", "--format", "json", "--no-artifacts"]
# Documented in docs/compatibility.md. Discovery: only the message differs (the exit
# code must agree). Version 2: skylos refuses what behavegate reads as its extension.
DEVIATIONS = {
    "file-autodiscover-missing": "contract discovery",
    "contract-version-2": "version 2 contracts",
    "cli-order-contract-before-flags": "version 2 contracts",
}
# What behavegate gives instead of skylos's refusal for a version 2 contract.
AS_EXTENSION: dict[str, dict[str, object]] = {
    "contract-version-2": {"exit_code": 0, "status": "pass", "contract_version": 2},
    # The contract is valid here, so the flag is the first problem (same exit code).
    "cli-order-contract-before-flags": {"exit_code": 2, "error": "--max-scenarios must be between 1 and 100000"},
}
CASE_NAMES = sorted(p.name for p in CASES.iterdir() if (p / "expected.json").exists()) if CASES.exists() else []


def run_case(case: Path, workdir: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    for item in case.iterdir():
        if item.name in {"expected.json", "args.json"}:
            continue
        if item.is_dir():
            shutil.copytree(item, workdir / item.name)
        else:
            shutil.copyfile(item, workdir / item.name)
    args = DEFAULT_ARGS
    if (case / "args.json").exists():
        args = json.loads((case / "args.json").read_text())["args"]
    monkeypatch.chdir(workdir)
    try:
        code = main(["test", *args])
    except SystemExit as exit_:
        code = int(exit_.code or 0)
    return code, capsys.readouterr().out


def test_the_corpus_is_large_enough() -> None:
    assert len(CASE_NAMES) >= 120


@pytest.mark.parametrize("name", CASE_NAMES)
def test_case_matches_skylos(
    name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    case = CASES / name
    expected = json.loads((case / "expected.json").read_text())
    code, stdout = run_case(case, tmp_path, monkeypatch, capsys)
    observed = summarize(code, stdout)
    if DEVIATIONS.get(name) == "contract discovery":
        assert observed["exit_code"] == expected["exit_code"]
        return
    if DEVIATIONS.get(name) == "version 2 contracts":
        # skylos refuses version 2 before anything else (flags included) ...
        assert expected == {"argparse_error": False, "exit_code": 2, "error": "version must be 1, got 2"}
        # ... behavegate reads it as its extension, and does what it documents instead ...
        assert {key: observed.get(key) for key in AS_EXTENSION[name]} == AS_EXTENSION[name]
        # ... while any other version gets skylos's verdict: exit code and message.
        bumped = tmp_path / "version-3"
        shutil.copytree(case, bumped)
        text = (bumped / "contract.yml").read_text()
        (bumped / "contract.yml").write_text(text.replace("version: 2\n", "version: 3\n", 1))
        workdir = tmp_path / "work-3"
        workdir.mkdir()
        code, stdout = run_case(bumped, workdir, monkeypatch, capsys)
        assert summarize(code, stdout) == {**expected, "error": "version must be 1, got 3"}
        return
    wanted = {key: expected[key] for key in observed if key in expected}
    assert observed == wanted
    assert set(expected) <= set(observed) | {"argparse_error"}


def test_every_deviation_is_documented() -> None:
    text = (Path(__file__).resolve().parents[1] / "docs" / "compatibility.md").read_text()
    for reason in DEVIATIONS.values():
        assert reason in text
