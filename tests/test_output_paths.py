"""Every file behavegate writes follows one rule: inside the project, under
$RUNNER_TEMP or the runner's own GITHUB_* files, never through a symlink."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from helpers import EXAMPLE

from behavegate.cli import main
from behavegate.github import action

SECRET = "do not touch\n"
FLAGS = ("--report", "--junit", "--summary", "--github-output")


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "work"
    root.mkdir()
    shutil.copy(EXAMPLE / "contract.yml", root / "contract.yml")
    shutil.copy(EXAMPLE / "observations-good.json", root / "obs.json")
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "target").write_text(SECRET)
    for name in ("GITHUB_OUTPUT", "GITHUB_STEP_SUMMARY", "RUNNER_TEMP", "GITHUB_ACTIONS"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.chdir(root)
    return root


def _plant(project: Path, how: str) -> str:
    """A path inside the project that leads to ../outside/target."""
    outside = project.parent / "outside"
    if how == "final":
        os.symlink(outside / "target", project / "planted")
        return "planted"
    os.symlink(outside, project / "linkdir")
    return "linkdir/target"


def _args(flag: str, path: str) -> list[str]:
    others = {f: f"ok{f}.out" for f in FLAGS if f != flag}
    return ["test", "contract.yml", "--observations", "obs.json", flag, path, *[x for f, p in others.items() for x in (f, p)]]


@pytest.mark.parametrize("how", ["final", "parent"])
@pytest.mark.parametrize("flag", FLAGS)
def test_a_planted_symlink_is_refused_before_the_run_and_the_others_say_why(
    flag: str, how: str, project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _plant(project, how)
    assert main(_args(flag, path)) == 2
    err = capsys.readouterr().err
    assert (project.parent / "outside" / "target").read_text() == SECRET
    assert f"{flag} {project / path}" in err and "symlink" in err
    assert "never through a symlink" in err  # the rule is named
    for other in (f for f in FLAGS if f not in {flag, "--junit"}):  # no JUnit for a run that was not judged
        assert (project / f"ok{other}.out").stat().st_size > 0, other
    if flag != "--report":  # checked before judging: a configuration error, in skylos's shape
        payload = json.loads((project / "ok--report.out").read_text())
        assert payload["status"] == "incomplete" and payload["behavegate"]["status"] == "error" and "symlink" in payload["error"]
    if flag != "--github-output":
        assert "status=error\n" in (project / "ok--github-output.out").read_text()


@pytest.mark.parametrize("flag", FLAGS)
def test_an_output_outside_the_project_is_refused_naming_path_and_rule(
    flag: str, project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = project.parent / "outside" / "new"
    assert main(_args(flag, str(target))) == 2
    err = capsys.readouterr().err
    assert f"{flag} {target} is outside the project ({project})" in err and "$RUNNER_TEMP" in err
    assert not target.exists()


def test_runner_temp_and_the_runner_files_are_allowed_and_the_runner_files_appended(
    project: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    runner = project.parent / "runner"
    (runner / "temp").mkdir(parents=True)
    (runner / "summary.md").write_text("earlier step\n")
    (runner / "output.txt").write_text("x=1\n")
    monkeypatch.setenv("RUNNER_TEMP", str(runner / "temp"))
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(runner / "summary.md"))
    monkeypatch.setenv("GITHUB_OUTPUT", str(runner / "output.txt"))
    code = main(
        [
            "test",
            "contract.yml",
            "--observations",
            "obs.json",
            "--report",
            str(runner / "temp" / "r" / "report.json"),
            "--summary",
            str(runner / "summary.md"),
            "--github-output",
            str(runner / "output.txt"),
        ]
    )
    assert code == 0, capsys.readouterr()
    assert json.loads((runner / "temp" / "r" / "report.json").read_text())["status"] == "pass"
    assert (runner / "summary.md").read_text().startswith("earlier step\n## ")
    assert (runner / "output.txt").read_text().startswith("x=1\nstatus=pass\n")


@pytest.mark.parametrize("name", ["GITHUB_OUTPUT", "GITHUB_STEP_SUMMARY"])
def test_a_runner_file_that_is_a_symlink_or_not_regular_is_refused(
    name: str, project: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    runner = project.parent / "runner"
    runner.mkdir()
    os.symlink(project.parent / "outside" / "target", runner / "file")
    os.mkfifo(runner / "fifo")
    flag = "--github-output" if name == "GITHUB_OUTPUT" else "--summary"
    for path, why in ((runner / "file", "must not be a symlink"), (runner / "fifo", "must be a regular file")):
        monkeypatch.setenv(name, str(path))
        assert main(["test", "contract.yml", "--observations", "obs.json", flag, str(path)]) == 2
        assert why in capsys.readouterr().err
    assert (project.parent / "outside" / "target").read_text() == SECRET


def test_output_and_init_refuse_symlinked_parents(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _plant(project, "parent")
    assert main(["test", "contract.yml", "--observations", "obs.json", "--format", "json", "-o", "linkdir/new.json"]) == 2
    assert "symlink parent directories" in json.loads(capsys.readouterr().out)["output_error"]
    assert main(["init", "--path", "linkdir/contract.yml"]) == 2
    assert "symlink parent directories" in capsys.readouterr().err
    assert sorted(p.name for p in (project.parent / "outside").iterdir()) == ["target"]


@pytest.mark.parametrize("how", ["final", "parent"])
def test_the_action_defaults_never_write_through_a_planted_symlink(
    how: str, project: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # A pull request plants the Action's default report name (or its directory) as a link.
    target = project.parent / "outside" / "target"
    if how == "final":
        os.symlink(target, project / "behavegate-report.json")
        report = {}
    else:
        os.symlink(project.parent / "outside", project / "reports")
        report = {"INPUT_REPORT": "reports/target", "INPUT_JUNIT": "reports/junit.xml"}
    target.write_text(json.dumps({"status": "pass"}))  # would flip the step's verdict if read back
    runner = project.parent / "runner"
    runner.mkdir()
    environ = {
        "GITHUB_WORKSPACE": str(project),
        "GITHUB_ACTIONS": "true",
        "GITHUB_OUTPUT": str(runner / "output.txt"),
        "GITHUB_STEP_SUMMARY": str(runner / "summary.md"),
        "INPUT_CONTRACT": "contract.yml",
        "INPUT_OBSERVATIONS": "obs.json",
        "INPUT_FAIL-ON": "never",
        **report,
    }
    (runner / "output.txt").touch()
    for name in ("GITHUB_OUTPUT", "GITHUB_STEP_SUMMARY"):  # the runner sets them in the container's environment
        monkeypatch.setenv(name, environ[name])
    assert action.main(environ) == 2
    assert target.read_text() == json.dumps({"status": "pass"})
    assert sorted(p.name for p in (project.parent / "outside").iterdir()) == ["target"]
    assert "status=error\n" in (runner / "output.txt").read_text()
    assert "could not be judged" in (runner / "summary.md").read_text()
    assert "symlink" in capsys.readouterr().err
