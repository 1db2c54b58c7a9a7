"""Version 1 keeps skylos's caps exactly; version 2 is sized for real suites; the
docs' table states the code's numbers."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from behavegate import limits
from behavegate.cli import main
from behavegate.contract.load import declares_version_2, load_contract
from behavegate.errors import ContractError, InputError

DOC = (Path(__file__).resolve().parents[1] / "docs" / "limits.md").read_text(encoding="utf-8")


def _row(label: str) -> tuple[str, str]:
    match = re.search(rf"^\| {re.escape(label)} \| (.*?) \| (.*?) \|$", DOC, re.M)
    assert match, f"docs/limits.md lost its row {label!r}"
    return match.group(1), match.group(2)


def test_the_docs_state_the_report_limits() -> None:
    n = "{:,}".format
    for label, value in [
        ("one agent answer in the HTML report (`--html`)", f"{n(limits.HTML_TEXT_CHARS)} characters"),
        ("one expected/observed value or tool-call argument text in the HTML report", f"{n(limits.HTML_VALUE_CHARS)} characters"),
        ("tool calls listed per attempt in the HTML report", n(limits.HTML_TOOL_CALLS)),
        ("agent text in one HTML report", f"{n(limits.HTML_AGENT_TEXT_BUDGET)} characters"),
        ("findings in one SARIF file (`--sarif`)", n(limits.SARIF_MAX_RESULTS)),
        ("one SARIF finding's message", f"{n(limits.SARIF_MESSAGE_CHARS)} characters"),
        ("the sticky pull-request comment (`comment: true`)", f"{n(limits.GITHUB_COMMENT_MAX_CHARS)} characters"),
        ("comments read to find the sticky comment", f"{limits.PR_COMMENT_PAGES} pages of 100"),
        ("each GitHub API call of the comment", f"{limits.PR_COMMENT_TIMEOUT_SECONDS:g} seconds"),
        ("problems of a refused run listed on the console", n(limits.CONSOLE_MAX_PROBLEMS)),
        (
            "problems reported from one golden set (CSV, JSONL; [contract.md](contract.md#golden-sets-in-csv-and-json-lines))",
            n(limits.DATASET_MAX_PROBLEMS),
        ),
    ]:
        assert _row(label)[0] == value, label


def test_the_docs_table_states_the_codes_limits() -> None:
    n = "{:,}".format
    assert _row("contract file (and each included file)") == (
        f"{n(limits.MAX_CONTRACT_BYTES)} bytes",
        f"{n(limits.V2_MAX_INPUT_BYTES)} bytes",
    )
    assert _row("observation file") == (f"{n(limits.MAX_OBSERVATION_BYTES)} bytes", f"{n(limits.V2_MAX_INPUT_BYTES)} bytes")
    assert _row("values in one contract or observation file") == (n(limits.INPUT_MAX_VALUES), n(limits.V2_INPUT_MAX_VALUES))
    assert _row("scenarios in a contract (includes included)") == (n(limits.MAX_RUN_SCENARIOS), n(limits.V2_MAX_SCENARIOS))
    assert _row("assertions in a contract") == (
        n(limits.MAX_ASSERTIONS),
        f"{n(limits.V2_MAX_ASSERTIONS)} (`--max-assertions` up to {n(limits.MAX_ASSERTIONS_CEILING)})",
    )
    assert _row("entries of an observation file")[1] == n(limits.V2_MAX_OBSERVATION_ENTRIES)
    assert _row("the JSON report") == (f"{n(limits.MAX_REPORT_BYTES)} bytes", f"{n(limits.V2_MAX_REPORT_BYTES)} bytes")
    assert _row("shards of a run (`--shard K/N`)")[0] == str(limits.MAX_SHARDS)
    assert _row("one shard report, read whole")[0] == f"{n(limits.SHARD_REPORT_MAX_BYTES)} bytes"
    assert _row("the contract as data in one shard report, as written")[0] == f"{n(limits.CARRIED_MAX_BYTES)} bytes"


def _contract(version: int, scenarios: int, pad: int = 0) -> str:
    head = f"version: {version}\nagent: {{}}\nscenarios:\n"
    body = "".join(f"  - id: s{i}\n    prompt: p{i}\n    expect: {{response: {{contains: [x]}}}}\n" for i in range(scenarios))
    return head + body + f"# {'x' * pad}\n"


def test_a_version_2_suite_past_version_1s_caps_loads(tmp_path: Path) -> None:
    (tmp_path / "c.yml").write_text(_contract(2, 3_000, pad=300_000))
    contract = load_contract(tmp_path / "c.yml", tmp_path)
    assert len(contract.scenarios) == 3_000


def test_version_1_keeps_skylos_caps_and_words(tmp_path: Path) -> None:
    (tmp_path / "big.yml").write_text(_contract(1, 2, pad=300_000))
    with pytest.raises(InputError, match="no larger than 262144 bytes"):
        load_contract(tmp_path / "big.yml", tmp_path)
    (tmp_path / "many.yml").write_text(_contract(1, 1_001))
    with pytest.raises(ContractError, match="scenarios cannot exceed 1000 entries"):
        load_contract(tmp_path / "many.yml", tmp_path)


def test_max_assertions_raises_the_version_2_cap_and_only_that(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "c.yml").write_text(_contract(2, 10))
    with pytest.raises(
        ContractError, match=r"contract assertions cannot exceed 5 \(this contract has 10\); raise it with --max-assertions 10$"
    ):
        load_contract(tmp_path / "c.yml", tmp_path, max_assertions=5)
    assert len(load_contract(tmp_path / "c.yml", tmp_path, max_assertions=10).scenarios) == 10
    (tmp_path / "v1.yml").write_text(_contract(1, 2))
    assert main(["test", "v1.yml", "--max-assertions", "500", "--observations", "o.json"]) == 2
    assert "--max-assertions needs a version 2 contract" in capsys.readouterr().err


@pytest.mark.parametrize("output", [False, True])
@pytest.mark.parametrize("format_", ["table", "json"])
def test_a_run_refused_over_the_assertion_cap_prints_why_on_the_console(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, format_: str, output: bool
) -> None:
    # With --output the refusal went only to the file: exit 2 and a silent console (issue 27).
    monkeypatch.chdir(tmp_path)
    (tmp_path / "c.yml").write_text(_contract(2, 10))
    (tmp_path / "o.json").write_text(json.dumps({"version": 2, "scenarios": []}))
    args = ["test", "c.yml", "--observations", "o.json", "--no-artifacts", "--max-assertions", "5", "--format", format_]
    assert main(args + (["--output", "r.out"] if output else [])) == 2
    reason = "contract assertions cannot exceed 5 (this contract has 10); raise it with --max-assertions 10"
    captured = capsys.readouterr()
    assert reason in captured.err
    if format_ == "json":
        written = (tmp_path / "r.out").read_text() if output else captured.out
        assert json.loads(written)["error"] == reason


def test_a_refusal_with_many_problems_lists_a_screenful_and_counts_the_rest(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "c.yml").write_text(_contract(2, 2))
    entries = [{"id": "s0", "bogus": i} for i in range(limits.CONSOLE_MAX_PROBLEMS + 7)]
    (tmp_path / "o.json").write_text(json.dumps({"version": 2, "scenarios": entries}))
    assert main(["test", "c.yml", "--observations", "o.json", "--no-artifacts"]) == 2
    err = capsys.readouterr().err
    assert sum(line.startswith("  scenarios[") for line in err.splitlines()) == limits.CONSOLE_MAX_PROBLEMS
    assert "... and 7 more (--format json lists every one)" in err
    assert main(["test", "c.yml", "--observations", "o.json", "--no-artifacts", "--format", "json"]) == 2
    assert len(json.loads(capsys.readouterr().out)["behavegate"]["problems"]) == limits.CONSOLE_MAX_PROBLEMS + 7


@pytest.mark.parametrize(
    ("text", "v2"),
    [
        ("version: 2\n", True),
        ("version: '2'\n", True),
        ("queries:\n  - query: q\n", True),
        ("version: 1\n", False),
        ("agent:\n  version: 2\n", False),
        ("# version: 2\n", False),
    ],
)
def test_the_version_is_told_from_the_text_before_parsing(text: str, v2: bool) -> None:
    assert declares_version_2(text) is v2
