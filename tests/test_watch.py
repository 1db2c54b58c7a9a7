"""behavegate watch: test runs again when the contract, an included file or the evidence
changes, each run printing its table; Ctrl-C exits 0; --once and --max-runs stop it."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from helpers import EXAMPLE

from behavegate.cli import build_parser, main
from behavegate.commands import watch
from behavegate.commands.arguments import parsed
from behavegate.commands.invocation import WatchCommand
from behavegate.github.console import Console

GOLDEN_SETS = EXAMPLE.parent / "golden-queries"
LIBRARY = """
version: 2
scenarios:
  - id: from-library
    prompt: say hello
    expect: {response: {contains: [hello]}}
"""
CONTRACT = """
version: 2
agent: {model: m}
include: [library.yml]
scenarios:
  - id: greets
    prompt: say hello
    expect: {response: {contains: [hello]}}
"""


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "c.yml").write_text(CONTRACT)
    (tmp_path / "library.yml").write_text(LIBRARY)
    answer = {"response": "hello", "finish_reason": "stop", "response_complete": True, "tool_calls_complete": True}
    scenarios = [{"id": "greets", **answer}, {"id": "from-library", **answer}]
    (tmp_path / "obs.json").write_text(json.dumps({"version": 1, "scenarios": scenarios}))
    return tmp_path


def _command(*argv: str) -> WatchCommand:
    command = parsed(build_parser().parse_args(["watch", *argv]))
    assert isinstance(command, WatchCommand)
    return command


def _write(path: Path, text: str) -> None:
    path.write_text(text)


def _editing(edits: list[Callable[[], None]], looks: list[int]) -> Callable[[float], None]:
    """A sleep that makes the next edit on every third look (the watch keeps looking until then)."""

    def sleep(seconds: float) -> None:
        assert seconds == 0.05
        looks[0] += 1
        if looks[0] % 3 == 0:
            edits.pop(0)()

    return sleep


def test_a_change_to_the_contract_or_an_included_file_runs_test_again(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    looks = [0]
    edits = [
        lambda: _write(project / "library.yml", LIBRARY.replace("[hello]", "[goodbye]")),
        lambda: _write(project / "c.yml", CONTRACT + "# saved again\n"),
    ]
    command = _command("c.yml", "--observations", "obs.json", "--no-artifacts", "--interval", "0.05", "--max-runs", "3")
    code = watch.run(command, Console(), sleep=_editing(edits, looks))
    out, err = capsys.readouterr()
    assert code == 1 and looks[0] == 6 and not edits  # the last run's status: the library now wants "goodbye"
    assert out.count("Agent behavior test: ") == 3
    assert out.index("Agent behavior test: pass") < out.index("Agent behavior test: fail")
    assert "watching 3 file(s) for changes" in err and err.count("a watched file changed; running again") == 2


def test_nothing_changed_means_no_new_run(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    looks = [0]

    def sleep(seconds: float) -> None:
        looks[0] += 1
        if looks[0] == 20:
            raise KeyboardInterrupt

    command = _command("c.yml", "--observations", "obs.json", "--no-artifacts", "--interval", "0.05")
    assert watch.run(command, Console(), sleep=sleep) == 0  # Ctrl-C: exit 0
    out, err = capsys.readouterr()
    assert out.count("Agent behavior test: ") == 1 and err.rstrip().endswith("behavegate watch: stopped")


def test_once_runs_test_and_exits_with_its_status(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["watch", "c.yml", "--observations", "obs.json", "--no-artifacts", "--once"]) == 0
    assert capsys.readouterr().out.count("Agent behavior test: pass") == 1


def test_the_watched_files_are_the_contract_its_includes_and_the_evidence(project: Path) -> None:
    command = _command("c.yml", "--observations", "obs.json")
    assert [path.name for path in watch.watched(command.test, project)] == ["c.yml", "library.yml", "obs.json"]
    (project / "library.yml").write_text("version: 2\nscenarios: [{id: x}]\n")  # a broken include: still watched
    assert [path.name for path in watch.watched(command.test, project)] == ["c.yml", "library.yml", "obs.json"]
    (project / "c.yml").write_text("version: [")  # a contract that does not load is still watched
    assert [path.name for path in watch.watched(command.test, project)] == ["c.yml", "obs.json"]


def test_a_golden_set_dataset_is_watched(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("queries-csv.yml", "golden.csv"):
        shutil.copy(GOLDEN_SETS / name, tmp_path / name)
    monkeypatch.chdir(tmp_path)
    names = [path.name for path in watch.watched(_command("queries-csv.yml").test, tmp_path)]
    assert names == ["queries-csv.yml", "golden.csv"]


@pytest.mark.parametrize(("flags", "message"), [(["--interval", "0"], "--interval"), (["--max-runs", "0"], "--max-runs")])
def test_bad_watch_options_are_usage_errors(
    project: Path, capsys: pytest.CaptureFixture[str], flags: list[str], message: str
) -> None:
    assert main(["watch", "c.yml", "--observations", "obs.json", *flags]) == 2
    assert message in capsys.readouterr().err


def test_watch_takes_every_test_option_and_cache(project: Path) -> None:
    command = _command("c.yml", "--cache", "answers", "--runs", "3", "--tag", "x")
    assert command.test.live.cache == "answers" and command.test.request.runs == 3 and command.test.request.tags == ("x",)
    assert command.max_runs is None and _command("--once").max_runs == 1


def test_the_example_contract_is_watched_with_its_recording(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    shutil.copy(EXAMPLE / "contract.yml", tmp_path / "contract.yml")
    monkeypatch.chdir(tmp_path)
    assert [p.name for p in watch.watched(_command("contract.yml").test, tmp_path)] == ["contract.yml"]
