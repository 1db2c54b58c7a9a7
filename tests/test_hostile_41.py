"""A hostile review of issue 41's changes (records as frozen msgspec Structs, the streamed
offline path with its JUnit and summary): each test pins a finding, as an attacker or a
careless user would meet it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from behavegate.cli import main

CONTRACT = """\
version: 2
agent:
  model: m
queries: golden.jsonl
"""


@pytest.fixture(autouse=True)
def _in_project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)


def _suite(folder: Path, rows: int = 3) -> None:
    (folder / "contract.yml").write_text(CONTRACT)
    golden = ({"id": f"s{i}", "query": f"q{i}", "expect": {"response": {"contains": [f"A{i}"]}}} for i in range(rows))
    (folder / "golden.jsonl").write_text("".join(json.dumps(row) + "\n" for row in golden))
    entries = (
        {"id": f"s{i}", "response": f"A{i}", "response_complete": True, "tool_calls_complete": True, "tool_calls": []}
        for i in range(rows)
    )
    (folder / "observations.jsonl").write_text("".join(json.dumps(entry) + "\n" for entry in entries))


def _test(*flags: str) -> int:
    return main(["test", "contract.yml", "--observations", "observations.jsonl", "--format", "json", "--no-artifacts", *flags])


# --- two output flags, or an output flag and an input, naming one file -----------------------


@pytest.mark.parametrize(
    ("flags", "named"),
    [
        (["--output", "r.json", "--junit", "x.txt", "--summary", "x.txt"], "--summary x.txt names the same file as --junit"),
        (["--output", "x.txt", "--junit", "x.txt"], "--junit x.txt names the same file as --output"),
        (["--output", "out/../r.json"], "must not contain '..'"),
        (["--output", "r.json", "--summary", "./r.json"], "--summary ./r.json names the same file as --output"),
    ],
)
def test_two_output_flags_naming_one_file_are_refused_before_anything_is_written(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], flags: list[str], named: str
) -> None:
    # Before: exit 1 with x.txt holding the summary only; the JUnit file CI was told to read was gone.
    _suite(tmp_path)
    assert _test(*flags) == 2
    assert named in capsys.readouterr().err
    assert not (tmp_path / "x.txt").exists()  # neither clashing file is written, not even with the error
    if (tmp_path / "r.json").exists():  # an --output no other flag names still says why
        assert json.loads((tmp_path / "r.json").read_text())["error"].startswith(named)


def test_a_hard_link_to_another_output_is_the_same_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _suite(tmp_path)
    (tmp_path / "junit.xml").write_text("old")
    (tmp_path / "summary.md").hardlink_to(tmp_path / "junit.xml")
    assert _test("--output", "r.json", "--junit", "junit.xml", "--summary", "summary.md") == 2
    assert "--summary summary.md names the same file as --junit" in capsys.readouterr().err
    assert (tmp_path / "junit.xml").read_text() == "old"


@pytest.mark.parametrize(("flag", "named"), [("--junit", "--observations"), ("--output", "the contract")])
def test_an_output_flag_naming_a_file_the_run_reads_is_refused_and_the_file_kept(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], flag: str, named: str
) -> None:
    # Before: exit 1, and the observation file (or the contract) replaced by the JUnit file (or the report).
    _suite(tmp_path)
    target = "observations.jsonl" if named == "--observations" else "contract.yml"
    before = (tmp_path / target).read_bytes()
    flags = ["--output", "r.json"] if flag == "--junit" else []
    assert _test(*flags, flag, target) == 2
    assert f"{flag} {target} names the file of {named}: the run would write over what it reads" in capsys.readouterr().err
    assert (tmp_path / target).read_bytes() == before


def test_distinct_output_files_are_all_written(tmp_path: Path) -> None:
    _suite(tmp_path)
    assert _test("--output", "r.json", "--junit", "junit.xml", "--summary", "summary.md") == 0
    assert json.loads((tmp_path / "r.json").read_text())["status"] == "pass"
    assert (tmp_path / "junit.xml").read_text().startswith("<?xml")
    assert (tmp_path / "summary.md").read_text().startswith("## ")


# --- records: a field left out of the repr stays out of every printed form --------------------


def test_a_token_left_out_of_the_repr_is_not_given_to_pretty_printers() -> None:
    # rich (a user's traceback with show_locals, pretty.pprint) prints a Struct by __rich_repr__,
    # which msgspec fills with every field: before, the judge's and the agent's tokens were shown.
    from behavegate.evidence.judge_client import JudgeSettings
    from behavegate.evidence.trust import Credentials

    credentials = Credentials("tok-SECRET")
    settings = JudgeSettings(None, credentials, "m", 1.0, 10, 1, hidden=("tok-SECRET", "agent-SECRET"))
    for record in (credentials, settings):
        for text in (repr(record), str(record), f"{record!r}", repr(list(record.__rich_repr__()))):
            assert "SECRET" not in text
    assert dict(settings.__rich_repr__())["model"] == "m"  # the rest is shown as before


def test_a_record_leaving_a_field_out_of_equality_still_equals_itself_holding_nan() -> None:
    # A Struct's own __eq__ and a dataclass's (a tuple comparison) take identity first; the
    # replacement not_compared installs compared with == alone, so Q(nan) != Q(nan).
    from behavegate.frozen import Frozen, not_compared

    @not_compared("note")
    class Measured(Frozen):
        value: float
        note: str = ""

    nan = float("nan")
    one = Measured(nan, "a")
    assert one == one and one == Measured(nan, "b") and hash(one) == hash(Measured(nan, "b"))
    assert Measured(1.0) != Measured(2.0) and Measured(1.0, "a") == Measured(1.0, "b")


def test_a_request_exchange_never_shows_its_authorization_header() -> None:
    # The headers an Exchange carries hold "Bearer <token>": a traceback with locals
    # (pytest --showlocals, rich) printed them with the rest of the record.
    from behavegate.evidence.transport import Exchange, endpoint_target
    from behavegate.evidence.trust import Credentials, Endpoint

    endpoint = Endpoint("http://127.0.0.1:9/v1", "cli_override", "f", False, "127.0.0.1")
    url, headers = endpoint_target(endpoint, Credentials("tok-SECRET"))
    exchange = Exchange(url, (b"{}",), headers, 0.0)
    assert headers["Authorization"] == "Bearer tok-SECRET"
    assert "SECRET" not in repr(exchange) and "SECRET" not in repr(list(exchange.__rich_repr__()))
    assert "127.0.0.1:9" in repr(exchange)


def test_step_outputs_are_never_appended_to_the_observation_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # --github-output appends wherever it points: at the evidence, it added "status=..." lines to it.
    _suite(tmp_path)
    before = (tmp_path / "observations.jsonl").read_bytes()
    assert _test("--output", "r.json", "--github-output", "observations.jsonl") == 2
    assert "--github-output observations.jsonl names the file of --observations" in capsys.readouterr().err
    assert (tmp_path / "observations.jsonl").read_bytes() == before


def test_the_runners_step_summary_may_take_the_summary_and_the_step_outputs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _suite(tmp_path)
    runner = tmp_path / "runner"
    runner.mkdir()
    (runner / "step_summary").write_text("before\n")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(runner / "step_summary"))
    monkeypatch.setenv("GITHUB_OUTPUT", str(runner / "step_summary"))
    summary = str(runner / "step_summary")
    assert _test("--output", "r.json", "--summary", summary, "--github-output", summary) == 0
    text = (runner / "step_summary").read_text()
    assert text.startswith("before\n") and "## " in text and "status=pass" in text


@pytest.mark.parametrize("flag", ["--output", "--junit"])
def test_an_output_flag_naming_the_golden_set_is_refused_and_the_golden_set_kept(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], flag: str
) -> None:
    # Before: exit 0, and golden.jsonl replaced by the report (or JUnit) it was judged into.
    _suite(tmp_path)
    before = (tmp_path / "golden.jsonl").read_bytes()
    flags = [] if flag == "--output" else ["--output", "r.json"]
    assert _test(*flags, flag, "golden.jsonl") == 2
    err = capsys.readouterr().err
    assert f"{flag} golden.jsonl names the file of the contract's golden.jsonl: the run would write over what it reads" in err
    assert (tmp_path / "golden.jsonl").read_bytes() == before


# --- the streamed path: the observation file's value limit is the whole file's ----------------


def test_an_observation_file_past_the_value_limit_only_in_total_is_refused_as_the_whole_run_path_refuses_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # Each line alone is within the limit, the file is not: the whole-run path refuses the file
    # (exit 2), where the streamed one checked line by line and wrote a passing report (exit 0).
    # At the real limit (10,000,000) that is 7 lines of 800,000-item arguments, 11 MB.
    from behavegate import limits
    from behavegate.commands import stream_offline
    from behavegate.evidence import observation_file

    _suite(tmp_path, rows=7)
    entries = [json.loads(line) for line in (tmp_path / "observations.jsonl").read_text().splitlines()]
    for entry in entries:
        entry["tool_calls"] = [{"name": "t", "arguments": {"x": [0] * 30}}]
    (tmp_path / "observations.jsonl").write_text("".join(json.dumps(e) + "\n" for e in entries))
    for module in (limits, observation_file):
        monkeypatch.setattr(module, "V2_INPUT_MAX_VALUES", 400)  # a line is about 80 values, the file about 570
    gave: list[int | None] = []
    real = stream_offline.run_streaming

    def spy(*args: Any) -> int | None:
        gave.append(real(*args))
        return gave[-1]

    monkeypatch.setattr(stream_offline, "run_streaming", spy)
    assert _test("--output", "r.json", "--summary", "s.md") == 2
    assert gave == [None]  # the streamed path gave way
    assert "Observation file exceeds 400 values" in capsys.readouterr().err
    assert not (tmp_path / "s.md").read_text().startswith("## ✅")


@pytest.mark.parametrize("ci", ["", "true"])
def test_cache_with_an_observation_file_is_refused_on_the_streamed_path_too(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, ci: str
) -> None:
    # The streamed path read no --cache: it judged the file (exit 0) where the whole-run path
    # refuses the flag (exit 2), under CI=true or not. CI itself is pinned: the CI that runs this
    # test sets it, and the refusal then names CI rather than the evidence.
    monkeypatch.delenv("GITHUB_ACTIONS", raising=False)
    monkeypatch.setenv("CI", ci)
    _suite(tmp_path)
    assert _test("--output", "r.json", "--cache", "answers") == 2
    expected = (
        "--cache is refused under CI=true"
        if ci
        else "--cache keeps a live agent's answers: --observations and --traces are already recorded evidence"
    )
    assert expected in capsys.readouterr().err
    assert json.loads((tmp_path / "r.json").read_text())["behavegate"]["status"] == "error"


def test_fail_on_regression_without_a_baseline_is_refused_on_the_streamed_path_too(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # The streamed path checked only that no --baseline was given: it judged the run (exit 0)
    # where the whole-run path refuses --fail-on regression without one (exit 2).
    _suite(tmp_path)
    assert _test("--output", "r.json", "--junit", "j.xml", "--fail-on", "regression") == 2
    assert "--fail-on regression needs --baseline REPORT" in capsys.readouterr().err
    assert json.loads((tmp_path / "r.json").read_text())["behavegate"]["status"] == "error"


@pytest.mark.parametrize("most", ["0", "999999999"])
def test_max_assertions_out_of_its_range_is_refused_on_the_streamed_path_too(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], most: str
) -> None:
    # 0 read as "no cap" and a cap past the ceiling were taken on the streamed path (exit 0),
    # where the whole-run path refuses both (exit 2).
    _suite(tmp_path)
    assert _test("--output", "r.json", "--max-assertions", most) == 2
    assert "--max-assertions must be between 1 and" in capsys.readouterr().err
