"""The command line as a user meets it: discovery, paths, errors, init."""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from helpers import EXAMPLE

from behavegate.cli import COMMAND_NAMES, build_parser, main


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / ".behavegate").mkdir()
    shutil.copy(EXAMPLE / "contract.yml", tmp_path / ".behavegate" / "contract.yml")
    shutil.copy(EXAMPLE / "observations-good.json", tmp_path / "good.json")
    shutil.copy(EXAMPLE / "observations-regressed.json", tmp_path / "regressed.json")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_discovers_the_contract_from_a_subdirectory(
    project: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (project / "sub" / "deeper").mkdir(parents=True)
    monkeypatch.chdir(project / "sub" / "deeper")
    # --observations is relative to the project root, not the cwd
    assert main(["test", "--observations", "good.json", "--format", "json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["contract"]["path"] == str(project / ".behavegate" / "contract.yml")


def test_a_skylos_project_is_discovered_too(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / ".skylos").mkdir()
    shutil.copy(EXAMPLE / "contract.yml", tmp_path / ".skylos" / "agent-test.yml")
    shutil.copy(EXAMPLE / "observations-regressed.json", tmp_path / "obs.json")
    monkeypatch.chdir(tmp_path)
    assert main(["test", "--observations", "obs.json"]) == 1


def test_missing_contract_is_explained(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["test", "--observations", "x.json"]) == 2
    assert "run behavegate init" in capsys.readouterr().err


def test_regressed_agent_fails_with_exit_1_and_names_the_line(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["test", "--observations", "regressed.json"]) == 1
    out = capsys.readouterr().out
    assert "FAIL tools.forbidden[0] [.behavegate/contract.yml:" in out


def test_output_file_is_written_inside_the_project_only(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["test", "--observations", "good.json", "--format", "json", "--output", "reports/r.json"]) == 0
    written = project / "reports" / "r.json"
    assert json.loads(written.read_text())["status"] == "pass"
    assert written.stat().st_mode & 0o777 == 0o600
    assert main(["test", "--observations", "good.json", "--format", "json", "--output", "../r.json"]) == 2
    assert json.loads(capsys.readouterr().out)["error"] == "output path must stay inside the project"


def test_every_contract_problem_is_listed_with_its_line(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (project / "bad.yml").write_text(
        textwrap.dedent("""\
            version: 1
            agent: {}
            scenarios:
              - id: a b
                prompt: ' '
                expect:
                  refusal: maybe
                  colour: red
            """)
    )
    assert main(["test", "bad.yml", "--observations", "good.json"]) == 2
    err = capsys.readouterr().err
    assert "scenarios[0].id (line 4): must use 1-96 letters" in err
    assert "scenarios[0].prompt (line 5): must be a non-empty string" in err
    assert "scenarios[0].expect.refusal (line 7): must be true or false" in err
    assert "Unknown behavior contract key: scenarios[0].expect.colour" in err


def test_json_error_keeps_skylos_first_message_and_adds_all_problems(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (project / "bad.yml").write_text(
        textwrap.dedent("""\
            version: 3
            agent: []
            scenarios: []
            """)
    )
    assert main(["test", "bad.yml", "--observations", "good.json", "--format", "json"]) == 2
    payload = json.loads(capsys.readouterr().out)
    assert payload["error"] == "version must be 1, got 3"
    assert len(payload["behavegate"]["problems"]) == 3


def test_init_writes_a_valid_starter_and_refuses_to_overwrite(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["init"]) == 0
    assert main(["init"]) == 2
    assert "already exists" in capsys.readouterr().err
    assert main(["init", "--force"]) == 0
    (tmp_path / "obs.json").write_text('{"version": 1, "scenarios": []}')
    assert main(["test", "--observations", "obs.json"]) == 2  # valid contract, evidence missing


def test_init_keeps_run_evidence_out_of_git(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """.behavegate/runs/ holds unmasked agent output: init ignores it, once."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / ".gitignore").write_text("node_modules")  # no final newline
    assert main(["init"]) == 0
    assert main(["init", "--force"]) == 0
    assert (tmp_path / ".gitignore").read_text() == (
        "node_modules\n# behavegate: run evidence (agent output, unmasked)\n.behavegate/runs/\n"
    )
    assert "Added .behavegate/runs/ to" in capsys.readouterr().out
    if shutil.which("git"):
        subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
        (tmp_path / ".behavegate" / "runs" / "r1").mkdir(parents=True)
        (tmp_path / ".behavegate" / "runs" / "r1" / "behavior-results.json").write_text("{}")
        status = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=all"], cwd=tmp_path, capture_output=True, text=True, check=True
        ).stdout
        assert ".behavegate/contract.yml" in status and "runs" not in status


@pytest.mark.parametrize("existing", ["/.behavegate/\n", ".behavegate/runs\n"])
def test_init_leaves_a_gitignore_that_already_ignores_runs(
    existing: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / ".gitignore").write_text(existing)
    assert main(["init"]) == 0
    assert (tmp_path / ".gitignore").read_text() == existing


def test_init_creates_a_gitignore_and_warns_when_it_cannot(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["init"]) == 0
    assert (tmp_path / ".gitignore").read_text().endswith("\n.behavegate/runs/\n")
    other = tmp_path / "other"
    other.mkdir()
    (other / "elsewhere").write_text("x\n")
    (other / ".gitignore").symlink_to(other / "elsewhere")
    monkeypatch.chdir(other)
    assert main(["init"]) == 0  # the contract is written; the link is not followed
    assert (other / "elsewhere").read_text() == "x\n"
    assert "add it yourself" in capsys.readouterr().err


def test_unexpected_errors_never_show_a_traceback(
    project: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import behavegate.commands.test as command

    def explode(*args: object) -> int:
        raise RuntimeError("boom")

    monkeypatch.setattr(command, "run", explode)
    assert main(["test"]) == 2
    err = capsys.readouterr().err
    assert "internal error: RuntimeError: boom" in err and "Traceback" not in err


def test_version_starts_without_heavy_imports() -> None:
    code = "import sys; from behavegate.cli import main\ntry: main(['--version'])\nexcept SystemExit: pass\nprint(sorted(m for m in ('yaml', 'httpx', 'jinja2') if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip().endswith("[]")


def test_init_version_2_writes_a_starter_that_loads_with_the_payload_library(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from behavegate.contract.load import load_contract

    monkeypatch.chdir(tmp_path)
    assert main(["init", "--version", "2"]) == 0
    contract = load_contract(".behavegate/contract.yml", tmp_path)
    assert contract.version == 2 and len(contract.scenarios) > 40
    assert any(s.id.startswith("inj-") for s in contract.scenarios)


def test_starters_link_only_what_exists() -> None:
    """The starters name docs by their path in this repository, never a placeholder
    domain; every path they name exists, and their only URLs are loopback endpoints."""
    from behavegate.contract.starter import STARTER_CONTRACT, STARTER_CONTRACT_V2

    repo = Path(__file__).resolve().parents[1]
    assert (repo / "src" / "behavegate" / "contract" / "contract.schema.json").is_file()  # named by the v2 starter
    for text in (STARTER_CONTRACT, STARTER_CONTRACT_V2):
        for path in re.findall(r"\bdocs/[\w./-]+\w", text):
            assert (repo / path).is_file(), path
        assert {url.split("/")[2] for url in re.findall(r"https?://[^\s\"']+", text)} <= {"127.0.0.1:8000"}
    if shutil.which("git") and (repo / ".git").exists():
        command = ["git", "grep", "-lF", "behavegate.dev", "--", ".", ":!tests"]
        tracked = subprocess.run(command, cwd=repo, capture_output=True, text=True).stdout
        assert tracked == "", f"placeholder domain in {tracked.split()}"


@pytest.mark.parametrize("name", sorted(COMMAND_NAMES))
def test_a_command_parsed_alone_has_the_same_options_and_help_as_in_the_whole_parser(name: str) -> None:
    # A run builds only the parser of the command it names (start-up, issue 41): nothing may differ.
    def helps(parser: argparse.ArgumentParser) -> dict[str, str]:
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                return {key: sub.format_help() for key, sub in action.choices.items()}
        return {}

    alone, whole = helps(build_parser(argv=[name])), helps(build_parser())
    assert list(alone) == [name] and alone[name] == whole[name]
