"""docs/traces.md is true: every `traces inspect` sample is the real output for its
file (a line "…" stands for lines left out), the way-in example gives the output it
shows, and the Assay example binds by its prompt."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
from doc_examples import DOCS, examples

from behavegate.cli import main

ROOT = DOCS.parent
PAGE = (DOCS / "traces.md").read_text(encoding="utf-8")
INSPECT = re.compile(r"<!-- inspect:(?P<path>\S+) -->\n```text\n(?P<body>.*?)```\n", re.S)
WAY_IN = re.compile(r"<!-- output:way-in -->\n```console\n\$ behavegate (?P<command>[^\n]+)\n(?P<body>.*?)```\n", re.S)


def shown_in(sample: str, output: str) -> None:
    """Each run of sample lines between "…" lines is a run of output lines, in order."""
    lines = output.splitlines()
    position = 0
    for part in re.split(r"(?m)^…\n", sample):
        wanted = part.splitlines()
        if not wanted:
            continue
        found = next((i for i in range(position, len(lines) - len(wanted) + 1) if lines[i : i + len(wanted)] == wanted), None)
        assert found is not None, f"not in the real output (in order):\n{part}\n--- real output ---\n{output}"
        position = found + len(wanted)


def test_the_page_has_a_sample_for_every_fixture() -> None:
    fixtures = {p.name for p in (ROOT / "tests" / "fixtures" / "traces").iterdir() if p.name != "expected.json"}
    sampled = {Path(m["path"]).name for m in INSPECT.finditer(PAGE)}
    assert fixtures <= sampled and "assay_rows.jsonl" in sampled


@pytest.mark.parametrize("path", [m["path"] for m in INSPECT.finditer(PAGE)])
def test_each_inspect_sample_is_the_real_output(
    path: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    if path.startswith("tests/"):
        monkeypatch.chdir(ROOT)
    else:  # a file the page writes out in full
        (tmp_path / path).write_text(examples("traces.md")["assay-rows"], encoding="utf-8")
        monkeypatch.chdir(tmp_path)
    assert main(["traces", "inspect", path]) == 0
    sample = next(m["body"] for m in INSPECT.finditer(PAGE) if m["path"] == path)
    shown_in(sample, capsys.readouterr().out)


def test_the_way_in_example_gives_the_output_shown(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "contract.yml").write_text(examples("traces.md")["contract"], encoding="utf-8")
    (tmp_path / "traces").mkdir()
    shutil.copy(ROOT / "tests" / "fixtures" / "traces" / "otlp_genai_latest.json", tmp_path / "traces")
    monkeypatch.chdir(tmp_path)
    way_in = WAY_IN.search(PAGE)
    assert way_in, "docs/traces.md lost its way-in output"
    assert main(way_in["command"].split()) == 1
    shown_in(way_in["body"], capsys.readouterr().out)


def test_the_assay_rows_bind_by_their_prompt(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "assay_rows.jsonl").write_text(examples("traces.md")["assay-rows"], encoding="utf-8")
    (tmp_path / "contract.yml").write_text(
        "version: 2\nagent: {}\nscenarios:\n  - id: fx-convert\n    prompt: How much is 120 USD in EUR?\n"
        "    expect:\n      tools: {calls: {get_rate: {min: 1}}, forbidden: [delete_account]}\n"
        "      response: {contains: [110.40 EUR]}\n"
    )
    monkeypatch.chdir(tmp_path)
    command = re.search(r"\$ behavegate (test contract\.yml --traces assay_rows\.jsonl [^\n]+)", PAGE)
    assert command, "docs/traces.md lost its Assay command"
    assert main([*command[1].split(), "--no-artifacts"]) == 0
    assert "1 bound to the selected scenarios" in capsys.readouterr().out
    # Assay rows have no span status: a failed call would look like a success, so no_errors cannot pass.
    contract = (tmp_path / "contract.yml").read_text().replace("forbidden: [delete_account]", "no_errors: true")
    (tmp_path / "contract.yml").write_text(contract)
    assert main([*command[1].split(), "--no-artifacts"]) == 2
    assert "INCOMPLETE tools.no_errors" in capsys.readouterr().out
