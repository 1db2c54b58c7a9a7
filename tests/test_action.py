"""The Action: inputs read like @actions/core, docs in step with action.yml."""

from __future__ import annotations

import json
import re
import shutil
import textwrap
from pathlib import Path

import pytest
import yaml
from helpers import EXAMPLE

from behavegate.github import action
from behavegate.github.action import ActionInputError, Inputs, build_argv

ROOT = Path(__file__).resolve().parents[1]
ACTION = yaml.safe_load((ROOT / "action.yml").read_text())


def test_every_input_and_output_is_documented_with_its_default() -> None:
    doc = (ROOT / "docs" / "action.md").read_text()
    for name, spec in ACTION["inputs"].items():
        default = spec.get("default", "")
        row = re.search(rf"^\| `{re.escape(name)}` \| (.*?) \|", doc, re.M)
        assert row, f"input {name} is not documented"
        assert row.group(1) == (f"`{default}`" if default else "—"), f"documented default of {name} differs"
    for name in ACTION["outputs"]:
        assert re.search(rf"^\| `{re.escape(name)}` \|", doc, re.M), f"output {name} is not documented"
    documented = set(re.findall(r"^\| `([a-z-]+)` \|", doc, re.M))
    assert documented == set(ACTION["inputs"]) | set(ACTION["outputs"]), "docs/action.md lists something action.yml lacks"


def test_the_action_runs_in_docker_from_the_dockerfile() -> None:
    assert ACTION["runs"] == {"using": "docker", "image": "Dockerfile"}
    dockerfile = (ROOT / "Dockerfile").read_text()
    assert not re.search(r"^\s*(USER|WORKDIR)\b", dockerfile, re.M)
    assert re.search(r"^ARG PYTHON_IMAGE=python:[0-9.]+-slim@sha256:[0-9a-f]{64}$", dockerfile, re.M)


def env(**inputs: str) -> dict[str, str]:
    return {f"INPUT_{k.upper()}": v for k, v in inputs.items()}


def test_inputs_keep_hyphens_and_are_trimmed() -> None:
    inputs = Inputs({"INPUT_ALLOW-HOST": "  agent \n other, third ", "INPUT_MAX-SECONDS": " 60 "})
    assert inputs.items("allow-host") == ["agent", "other", "third"]
    assert inputs.text("max-seconds") == "60"


@pytest.mark.parametrize("value", ["yes", "1", "on", "tRue"])
def test_booleans_are_strict(value: str) -> None:
    with pytest.raises(ActionInputError, match="Core Schema"):
        Inputs(env(annotations=value)).flag("annotations")


def test_argv_for_a_live_run_with_a_service_host() -> None:
    argv = build_argv(
        Inputs({"INPUT_ENDPOINT": "http://agent:8080/v1/chat/completions", "INPUT_ALLOW-HOST": "agent", "INPUT_JUNIT": "j.xml"}),
        {"GITHUB_STEP_SUMMARY": "/s.md", "GITHUB_OUTPUT": "/o.txt"},
    )
    assert argv[:3] == ["test", "--endpoint", "http://agent:8080/v1/chat/completions"]
    assert argv[argv.index("--allow-host") : argv.index("--allow-host") + 2] == ["--allow-host", "agent"]
    assert "--annotations" in argv and argv[argv.index("--summary") + 1] == "/s.md"
    assert argv[argv.index("--github-output") + 1] == "/o.txt"


def test_the_token_is_masked_before_anything_else_is_printed(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    shutil.copy(EXAMPLE / "contract.yml", tmp_path / "contract.yml")
    environ = {
        "GITHUB_WORKSPACE": str(tmp_path),
        "INPUT_CONTRACT": "contract.yml",
        "INPUT_ENDPOINT": "http://127.0.0.1:9/v1/chat/completions",
        "INPUT_AUTH-ENV": "AGENT_TOKEN",
        "AGENT_TOKEN": "s3cr3t-token-value%",
        "INPUT_MAX-SECONDS": "5",
    }
    action.main(environ)
    out = capsys.readouterr().out
    assert out.startswith("::add-mask::s3cr3t-token-value%25\n")
    assert out.count("s3cr3t-token-value") == 1


def test_offline_run_writes_reports_outputs_and_exits_by_fail_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    shutil.copy(EXAMPLE / "contract.yml", tmp_path / "contract.yml")
    shutil.copy(EXAMPLE / "observations-regressed.json", tmp_path / "obs.json")
    monkeypatch.chdir(tmp_path)
    base = {
        "GITHUB_WORKSPACE": str(tmp_path),
        "GITHUB_ACTIONS": "true",
        "GITHUB_OUTPUT": str(tmp_path / "output.txt"),
        "GITHUB_STEP_SUMMARY": str(tmp_path / "summary.md"),
        "INPUT_CONTRACT": "contract.yml",
        "INPUT_OBSERVATIONS": "obs.json",
        "INPUT_JUNIT": "junit.xml",
    }
    assert action.main(base) == 1
    outputs = (tmp_path / "output.txt").read_text()
    assert "status=fail\n" in outputs and "failed=3\n" in outputs and "junit=junit.xml\n" in outputs
    assert (tmp_path / "summary.md").read_text().startswith("## ❌ behavegate: fail")
    assert json.loads((tmp_path / "behavegate-report.json").read_text())["status"] == "fail"
    out = capsys.readouterr().out
    assert "::error file=contract.yml,line=" in out
    assert action.main({**base, "INPUT_FAIL-ON": "never"}) == 0
    assert action.main({**base, "INPUT_FAIL-ON": "sometimes"}) == 2


def test_an_invalid_contract_is_annotated_on_its_lines_and_still_sets_outputs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "contract.yml").write_text(
        textwrap.dedent("""\
            version: 1
            agent: {}
            scenarios:
              - id: bad id
                prompt: p
                expect: {refusal: maybe}
            """)
    )
    (tmp_path / "obs.json").write_text('{"version": 1, "scenarios": []}')
    environ = {
        "GITHUB_WORKSPACE": str(tmp_path),
        "GITHUB_OUTPUT": str(tmp_path / "output.txt"),
        "GITHUB_STEP_SUMMARY": str(tmp_path / "summary.md"),
        "INPUT_CONTRACT": "contract.yml",
        "INPUT_OBSERVATIONS": "obs.json",
        "INPUT_FAIL-ON": "never",
    }
    assert action.main(environ) == 2  # invalid input fails the step whatever fail-on says
    out = capsys.readouterr().out
    assert "::error file=contract.yml,line=4,title=behavegate%3A invalid contract::scenarios[0].id (line 4)" in out
    assert "::error file=contract.yml,line=6," in out
    assert "status=error\n" in (tmp_path / "output.txt").read_text()
    assert "could not be judged" in (tmp_path / "summary.md").read_text()
    assert json.loads((tmp_path / "behavegate-report.json").read_text())["error"].startswith("scenarios[0].id")
