"""Evidence artifacts: written safely, replayed, and any tampering detected."""

from __future__ import annotations

import json
import os
import random
import shutil
from pathlib import Path

import pytest
from helpers import EXAMPLE

from behavegate.cli import main
from behavegate.report.layout import EVENTS, RESULTS, STATE, SUMMARY
from behavegate.report.replay import validate_run


@pytest.fixture
def run_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> Path:
    shutil.copy(EXAMPLE / "contract.yml", tmp_path / "contract.yml")
    shutil.copy(EXAMPLE / "observations-regressed.json", tmp_path / "obs.json")
    monkeypatch.chdir(tmp_path)
    assert main(["test", "contract.yml", "--observations", "obs.json", "--format", "json"]) == 1
    report = json.loads(capsys.readouterr().out)
    path = tmp_path / str(report["behavegate"]["run_dir"])
    assert report["artifacts"]["run_dir"] == "."
    assert report["harness"]["state_path"] == str(path / STATE)
    return path


def test_run_directory_is_private_and_complete(run_dir: Path) -> None:
    assert run_dir.stat().st_mode & 0o777 == 0o700
    assert sorted(p.name for p in run_dir.iterdir()) == sorted([EVENTS, STATE, SUMMARY, RESULTS])
    assert all(p.stat().st_mode & 0o777 == 0o600 for p in run_dir.iterdir())
    assert validate_run(run_dir) == []


def test_replay_command_reports_valid_and_invalid(run_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["replay", str(run_dir)]) == 0
    (run_dir / SUMMARY).write_text("{}")
    assert main(["replay", str(run_dir), "--format", "json"]) == 1
    payload = json.loads(capsys.readouterr().out.split("\n", 1)[1])
    assert payload["valid"] is False and payload["issues"]


@pytest.mark.parametrize("name", [EVENTS, STATE, SUMMARY, RESULTS])
def test_a_one_byte_change_anywhere_is_detected(run_dir: Path, name: str) -> None:
    original = (run_dir / name).read_bytes()
    rng = random.Random(name)
    positions = sorted({0, len(original) - 1, len(original) // 2, *(rng.randrange(len(original)) for _ in range(60))})
    for position in positions:
        for replacement in {original[position] ^ 0x01, ord(" ") if original[position] != ord(" ") else ord("x")}:
            changed = bytearray(original)
            changed[position] = replacement
            (run_dir / name).write_bytes(bytes(changed))
            assert validate_run(run_dir), f"{name}: byte {position} changed to {replacement!r} went unnoticed"
    (run_dir / name).write_bytes(original)
    assert validate_run(run_dir) == []


def _leaves(value: object, path: tuple[object, ...] = ()) -> list[tuple[object, ...]]:
    if isinstance(value, dict):
        return [p for k, v in value.items() for p in _leaves(v, (*path, k))]
    if isinstance(value, list):
        return [p for i, v in enumerate(value) for p in _leaves(v, (*path, i))]
    return [path]


def _tampered(value: object) -> object:
    if isinstance(value, bool):
        return not value
    if isinstance(value, int | float):
        return value + 1
    if isinstance(value, str):
        return value + "x"
    return "x"


@pytest.mark.parametrize("name", [STATE, SUMMARY, RESULTS])
def test_changing_any_field_even_canonically_is_detected(run_dir: Path, name: str) -> None:
    from behavegate.report.artifacts import render_json

    original = (run_dir / name).read_text()
    document = json.loads(original)
    for path in _leaves(document):
        copy = json.loads(original)
        target = copy
        for key in path[:-1]:
            target = target[key]
        target[path[-1]] = _tampered(target[path[-1]])
        (run_dir / name).write_text(render_json(copy))
        assert validate_run(run_dir), f"{name}: field {path} changed went unnoticed"
    (run_dir / name).write_text(original)


def test_changing_any_field_of_any_event_is_detected(run_dir: Path) -> None:
    from behavegate.report.artifacts import render_event

    lines = (run_dir / EVENTS).read_text().splitlines(keepends=True)
    for index, line in enumerate(lines):
        event = json.loads(line)
        for path in _leaves(event):
            copy = json.loads(line)
            target = copy
            for key in path[:-1]:
                target = target[key]
            target[path[-1]] = _tampered(target[path[-1]])
            changed = [*lines[:index], render_event(copy), *lines[index + 1 :]]
            (run_dir / EVENTS).write_text("".join(changed))
            assert validate_run(run_dir), f"event {index} field {path} changed went unnoticed"


def test_truncated_and_missing_artifacts_are_detected(run_dir: Path) -> None:
    data = (run_dir / RESULTS).read_bytes()
    (run_dir / RESULTS).write_bytes(data[: len(data) // 2])
    assert [i.code for i in validate_run(run_dir)] == ["artifact_invalid_json"]
    (run_dir / RESULTS).unlink()
    assert "artifact_missing" in [i.code for i in validate_run(run_dir)]


def test_a_symlinked_artifact_is_refused(run_dir: Path) -> None:
    os.replace(run_dir / SUMMARY, run_dir / "elsewhere.json")
    os.symlink(run_dir / "elsewhere.json", run_dir / SUMMARY)
    assert "artifact_not_regular" in [i.code for i in validate_run(run_dir)]


def test_a_planted_symlink_cannot_redirect_the_write(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    shutil.copy(EXAMPLE / "contract.yml", tmp_path / "contract.yml")
    shutil.copy(EXAMPLE / "observations-good.json", tmp_path / "obs.json")
    (tmp_path / ".behavegate").mkdir()
    (tmp_path / "outside").mkdir()
    os.symlink(tmp_path / "outside", tmp_path / ".behavegate" / "runs")
    monkeypatch.chdir(tmp_path)
    assert main(["test", "contract.yml", "--observations", "obs.json", "--format", "json"]) == 2
    report = json.loads(capsys.readouterr().out)
    assert report["issues"][0]["code"] == "harness_artifact_write_failed"
    assert report["status"] == "incomplete" and report["evidence_digest"] is None
    assert list((tmp_path / "outside").iterdir()) == []
