"""``behavegate validate`` (issue 40 item 3): contracts, includes and golden sets checked without
running anything; every problem with its file and line; "did you mean" for unknown keys, in
``test``'s contract errors too."""

from __future__ import annotations

import json
import shutil
import textwrap
from pathlib import Path

import pytest
from helpers import EXAMPLE

from behavegate.cli import main

EXAMPLES = EXAMPLE.parent
TYPOS = textwrap.dedent("""\
    version: 2
    defaults: {runs: 2, min_pass_rat: 0.5}
    agent:
      model: m
      endpoint: http://127.0.0.1:9/v1/chat/completions
      tools: [{name: lookup_order, description: d, parameters: {type: object}}]
    scenarios:
      - id: one
        prompt: Where is A-1?
        expect:
          tools: {required: [lookup_order], argument_valid: true}
    include: [builtin:injectoin]
    """)


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    for name in ("GITHUB_WORKSPACE", "GITHUB_OUTPUT", "GITHUB_STEP_SUMMARY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_every_problem_is_listed_with_its_line_and_the_closest_allowed_key(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (project / "contract.yml").write_text(TYPOS)
    assert main(["validate", "contract.yml"]) == 2
    assert capsys.readouterr().out.splitlines() == [
        "contract.yml: 3 problems",
        "  contract.yml:2: Unknown behavior contract key: defaults.min_pass_rat (did you mean min_pass_rate?)",
        "  contract.yml:11: Unknown behavior contract key: scenarios[0].expect.tools.argument_valid "
        "(did you mean arguments_valid?)",
        "  contract.yml:12: include[0]: unknown builtin library 'injectoin' (did you mean builtin:injection?); "
        "available: ['injection']",
    ]
    assert main(["validate", "contract.yml", "--format", "json"]) == 2
    found = json.loads(capsys.readouterr().out)
    assert found["valid"] is False
    assert found["contracts"][0]["problems"][0] == {
        "path": "defaults.min_pass_rat",
        "line": 2,
        "message": "Unknown behavior contract key: defaults.min_pass_rat (did you mean min_pass_rate?)",
    }


def test_test_s_contract_errors_say_did_you_mean_and_keep_skylos_words_as_the_json_error(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (project / "contract.yml").write_text(TYPOS)
    (project / "obs.json").write_text('{"version": 2, "scenarios": []}')
    assert main(["test", "contract.yml", "--observations", "obs.json", "--format", "json", "--no-artifacts"]) == 2
    captured = capsys.readouterr()
    assert "defaults.min_pass_rat (line 2): Unknown behavior contract key: defaults.min_pass_rat (did you mean " in captured.err
    assert json.loads(captured.out)["error"] == "Unknown behavior contract key: defaults.min_pass_rat"


def test_valid_contracts_and_golden_sets_pass_and_nothing_is_called_or_written(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    shutil.copy(EXAMPLE / "contract-v2.yml", project / "contract.yml")  # its endpoint is never called
    for name in ("queries-csv.yml", "golden.csv"):
        shutil.copy(EXAMPLES / "golden-queries" / name, project / name)
    before = sorted(p.name for p in project.iterdir())
    assert main(["validate", "contract.yml", "queries-csv.yml"]) == 0
    assert capsys.readouterr().out.splitlines() == [
        "contract.yml: valid (version 2, 4 scenario(s))",
        "queries-csv.yml: valid (version 2, 4 scenario(s), 1 included file(s))",
    ]
    assert sorted(p.name for p in project.iterdir()) == before  # no .behavegate/runs, no report


def test_a_bad_golden_set_row_is_named_by_file_row_and_column(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    shutil.copy(EXAMPLES / "golden-queries" / "queries-csv.yml", project / "golden.yml")
    rows = (EXAMPLES / "golden-queries" / "golden.csv").read_text()
    (project / "golden.csv").write_text(rows.replace(",What is the capital of France?,[],", ',What is the capital?,"[lookup",'))
    assert main(["validate", "golden.yml"]) == 2
    assert capsys.readouterr().out.splitlines() == [
        "golden.yml: 1 problem",
        "  golden.csv:4:expected_tools: not valid JSON: Expecting value: line 1 column 2 (char 1)",
    ]


def test_without_a_path_it_checks_what_test_discovers_and_says_when_there_is_none(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["validate"]) == 2
    assert "No .behavegate/contract.yml" in capsys.readouterr().out
    assert main(["init"]) == 0
    capsys.readouterr()
    assert main(["validate"]) == 0
    assert capsys.readouterr().out == ".behavegate/contract.yml: valid (version 1, 3 scenario(s))\n"
