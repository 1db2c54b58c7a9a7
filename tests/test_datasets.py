"""Golden sets from CSV and JSON Lines (issue 40 item 2): the same verdicts as the YAML golden
queries; every problem named by file, line and column; a row's scenario and problems placed
at the line the row starts on."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from behavegate.cli import main
from behavegate.contract.load import load_contract
from behavegate.errors import ContractError
from behavegate.limits import DATASET_MAX_PROBLEMS

EXAMPLES = Path(__file__).resolve().parents[1] / "examples" / "golden-queries"
HEAD = "agent: {model: m, tools: []}\nqueries: {name}\n"


def problems(tmp_path: Path, name: str, text: str, head: str = HEAD) -> list[str]:
    (tmp_path / name).write_text(text)
    (tmp_path / "golden.yml").write_text(head.replace("{name}", name))
    with pytest.raises(ContractError) as refused:
        load_contract(tmp_path / "golden.yml", tmp_path)
    return [problem.located() for problem in refused.value.problems]


@pytest.mark.parametrize("dataset", ["golden.csv", "golden.jsonl"])
def test_a_csv_or_jsonl_golden_set_gives_the_yaml_golden_querys_verdicts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], dataset: str
) -> None:
    for name in ("queries.yml", "golden.csv", "golden.jsonl", "observations.json"):
        shutil.copy(EXAMPLES / name, tmp_path / name)
    (tmp_path / "rows.yml").write_text((EXAMPLES / "queries-csv.yml").read_text().replace("golden.csv", dataset))
    monkeypatch.chdir(tmp_path)
    verdicts = []
    for contract in ("queries.yml", "rows.yml"):
        code = main(["test", contract, "--observations", "observations.json", "--format", "json", "--no-artifacts"])
        report = json.loads(capsys.readouterr().out)
        rows = [(s["id"], s["status"], [(a["assertion"], a["status"]) for a in s["assertions"]]) for s in report["scenarios"]]
        verdicts.append((code, report["status"], rows))
    assert verdicts[0] == verdicts[1]
    assert len(verdicts[0][2]) == 4 and verdicts[0][2][3][:2] == ("refund-escalation", "fail")


def test_a_csv_golden_set_with_one_bad_row_names_the_row_and_the_column(tmp_path: Path) -> None:
    text = (
        (EXAMPLES / "golden.csv").read_text().replace(",What is the capital of France?,[],", ',What is the capital?,"[lookup",')
    )
    assert problems(tmp_path, "golden.csv", text) == [
        "golden.csv:4:expected_tools: not valid JSON: Expecting value: line 1 column 2 (char 1)"
    ]


def test_the_contract_readers_later_problems_are_named_on_the_row_too(tmp_path: Path) -> None:
    text = 'query,expect\nhello,\nhi,"{""tools"": {""max_call"": 2}}"\nhey,"{""response"": {""contains"": [1]}}"\n'
    assert problems(tmp_path, "golden.csv", text) == [
        "golden.csv:2:expect: expect must request at least one assertion",
        "golden.csv:3:expect: Unknown behavior contract key: expect.tools.max_call (did you mean max_calls?)",
        "golden.csv:4:expect: expect.response.contains[0] must be a non-empty string",
    ]


def test_csv_header_cells_and_rows_are_each_checked(tmp_path: Path) -> None:
    text = "qeury,category,expect\nhi,a,[1]\n,b,\nhi,c\n"
    assert problems(tmp_path, "golden.csv", text) == [
        "golden.csv:1:qeury: unknown column (did you mean query?); columns: id, query, expected_tools, expected_elements, "
        "category, expect",
        "golden.csv:1:query: no query column: the header must name it (and may name expected_tools, expected_elements, "
        "category, expect)",
        'golden.csv:2:expect: must be a JSON object, e.g. {"safety": {"injection": true}}',
        "golden.csv:4: has 2 cells, the header has 3",
    ]


def test_jsonl_rows_are_typed_by_msgspec_and_named_by_line(tmp_path: Path) -> None:
    rows = [
        '{"query": "hi", "expected_tools": ["a"]}',
        "",
        '{"qurey": "hi"}',
        '{"query": "hi", "expected_elements": "paris"}',
        '{"query": "hi", "expect": {"response": {"contains": ["x"]}}',
        '{"category": "x"}',
    ]
    assert problems(tmp_path, "golden.jsonl", "\n".join(rows) + "\n") == [
        "golden.jsonl:3:qurey: unknown key (did you mean query?); keys: id, query, expected_tools, expected_elements, "
        "category, expect",
        "golden.jsonl:4:expected_elements: Expected `array | null`, got `str`",
        "golden.jsonl:5: not valid JSON: Input data was truncated",
        "golden.jsonl:6:query: missing: every row asks one query",
    ]


def test_a_golden_set_is_read_inside_the_project_and_only_as_csv_or_jsonl(tmp_path: Path) -> None:
    assert problems(tmp_path, "golden.txt", "query\nhi\n") == [
        "queries (line 2): names a golden set file: a .csv or .jsonl file, got 'golden.txt'"
    ]
    (tmp_path / "project").mkdir()
    (tmp_path / "outside.csv").write_text("query\nhi\n")
    (tmp_path / "project" / "golden.yml").write_text(HEAD.replace("{name}", "../outside.csv"))
    with pytest.raises(ContractError, match="outside"):
        load_contract(tmp_path / "project" / "golden.yml", tmp_path / "project")
    assert problems(tmp_path, "empty.csv", "query\n") == ["queries (line 2): the golden set empty.csv holds no rows"]


def test_reading_stops_after_the_problem_limit(tmp_path: Path) -> None:
    text = "query,expect\n" + "hi,[]\n" * (DATASET_MAX_PROBLEMS * 3)
    found = problems(tmp_path, "golden.csv", text)
    assert len(found) == DATASET_MAX_PROBLEMS and found[-1].startswith(f"golden.csv:{DATASET_MAX_PROBLEMS + 1}:expect:")


def test_the_golden_sets_digest_is_kept_with_the_included_files(tmp_path: Path) -> None:
    shutil.copy(EXAMPLES / "golden.csv", tmp_path / "golden.csv")
    (tmp_path / "golden.yml").write_text((EXAMPLES / "queries-csv.yml").read_text())
    first = load_contract(tmp_path / "golden.yml", tmp_path)
    (tmp_path / "golden.csv").write_text((tmp_path / "golden.csv").read_text().replace("paris", "lyon"))
    second = load_contract(tmp_path / "golden.yml", tmp_path)
    assert set(first.included) == {"golden.csv"} and first.included != second.included
    assert first.digest == second.digest  # the YAML file itself is unchanged


def test_the_editor_schema_takes_a_golden_set_file_as_queries() -> None:
    import jsonschema
    import yaml

    from behavegate.contract.json_schema import schema

    validator = jsonschema.Draft202012Validator(schema())
    document = yaml.safe_load((EXAMPLES / "queries-csv.yml").read_text())
    validator.validate(document)
    validator.validate({**document, "queries": "rows.JSONL"})
    assert not validator.is_valid({**document, "queries": "golden.txt"})


# A quoted cell spanning two lines: the failing row "late" starts on line 4 (a spreadsheet's row 3).
_CSV_ROWS = 'id,query,expected_elements\nearly,"Where is\nmy order?",friday\nlate,When does it ship?,tomorrow\n'
_JSONL_ROWS = '{"id": "early", "query": "Where is my order?", "expected_elements": ["friday"]}\n\n\n'
_JSONL_ROWS += '{"id": "late", "query": "When does it ship?", "expected_elements": ["tomorrow"]}\n'
_OBSERVED = {"early": "It arrives on Friday.", "late": "It ships next week."}


def _row_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str, text: str) -> tuple[int, Path]:
    (tmp_path / "rows").mkdir()
    (tmp_path / "rows" / name).write_text(text)
    (tmp_path / "rows" / "golden.yml").write_text(HEAD.replace("{name}", name))
    observed = [
        {"id": key, "response": answer, "finish_reason": "stop", "response_complete": True, "tool_calls_complete": True}
        for key, answer in _OBSERVED.items()
    ]
    (tmp_path / "observations.json").write_text(json.dumps({"version": 2, "scenarios": observed}))
    monkeypatch.chdir(tmp_path)
    args = ["test", "rows/golden.yml", "--observations", "observations.json", "--no-artifacts", "--annotations"]
    return main([*args, "--sarif", "out.sarif", "--summary", "summary.md", "--format", "json", "--output", "out.json"]), tmp_path


@pytest.mark.parametrize(("name", "text", "first"), [("golden.csv", _CSV_ROWS, 2), ("golden.jsonl", _JSONL_ROWS, 1)])
def test_a_failing_golden_set_row_is_annotated_on_its_own_file_and_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], name: str, text: str, first: int
) -> None:
    code, folder = _row_run(tmp_path, monkeypatch, name, text)
    annotations = [line for line in capsys.readouterr().err.splitlines() if line.startswith("::error")]
    assert code == 1
    assert len(annotations) == 1 and annotations[0].startswith(f"::error file=rows/{name},line=4,title=behavegate fail%3A late ")
    sarif = json.loads((folder / "out.sarif").read_text())
    located = [r["locations"][0]["physicalLocation"] for r in sarif["runs"][0]["results"] if r["level"] == "error"]
    assert [(p["artifactLocation"]["uri"], p["region"]["startLine"]) for p in located] == [(f"rows/{name}", 4)]
    assert f"rows/{name}:4" in (folder / "summary.md").read_text()
    where = json.loads((folder / "out.json").read_text())["behavegate"]["scenarios"]
    assert where["early"] == {"file": f"rows/{name}", "line": first, "assertion_lines": {"response.icontains[0]": first}}
    assert where["late"]["file"] == f"rows/{name}" and where["late"]["line"] == 4


def test_a_row_problem_is_named_and_annotated_at_the_rows_physical_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    text = _CSV_ROWS.replace(",tomorrow\n", ',"[tomorrow"\n')
    assert problems(tmp_path, "golden.csv", text) == [
        "golden.csv:4:expected_elements: not valid JSON: Expecting value: line 1 column 2 (char 1)"
    ]
    (tmp_path / "run").mkdir()
    code, _ = _row_run(tmp_path / "run", monkeypatch, "golden.csv", text)
    annotations = [line for line in capsys.readouterr().err.splitlines() if line.startswith("::error")]
    assert code == 2
    assert annotations == [
        "::error file=rows/golden.csv,line=4,title=behavegate%3A invalid contract::golden.csv:4:expected_elements: "
        "not valid JSON: Expecting value: line 1 column 2 (char 1)"
    ]


def test_a_scenario_id_repeated_among_rows_names_both_rows_lines(tmp_path: Path) -> None:
    text = 'id,query,expected_elements\nsame,"two\nlines",x\nother,hi,x\nsame,hello,x\n'
    assert problems(tmp_path, "golden.csv", text) == ["golden.csv:5:id: Duplicate scenario id: ['same'], also on line 2"]
    rows = [f'{{"id": "a", "query": "{query}", "expected_elements": ["x"]}}' for query in "xyz"]
    assert problems(tmp_path, "golden.jsonl", "\n".join(rows) + "\n") == [
        "golden.jsonl:2:id: Duplicate scenario id: ['a'], also on line 1",
        "golden.jsonl:3:id: Duplicate scenario id: ['a'], also on lines 1, 2",
    ]


def test_a_csv_syntax_error_is_named_at_the_line_its_record_starts_on(tmp_path: Path) -> None:
    text = 'query\n"one\ncell"\n"never closed\n'
    found = problems(tmp_path, "golden.csv", text)
    assert len(found) == 1 and found[0].startswith("golden.csv:4: not readable as CSV: ")
