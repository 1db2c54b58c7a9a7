"""The Action: inputs read like @actions/core, docs in step with action.yml."""

from __future__ import annotations

import importlib.util
import itertools
import json
import re
import shutil
import textwrap
from pathlib import Path
from typing import Any

import pytest
import yaml
from helpers import EXAMPLE

from behavegate.cli import build_parser
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
    assert "--annotations" in argv and argv[argv.index("--summary") + 1] == "behavegate-summary.md"
    assert argv[argv.index("--github-output") + 1] == "/o.txt"
    no_file = build_argv(Inputs({"INPUT_SUMMARY-FILE": ""}), {"GITHUB_STEP_SUMMARY": "/s.md"})
    assert no_file[no_file.index("--summary") + 1] == "/s.md"
    assert "--summary" not in build_argv(
        Inputs({"INPUT_SUMMARY-FILE": "", "INPUT_SUMMARY": "false"}), {"GITHUB_STEP_SUMMARY": "/s.md"}
    )


def test_entrypoint_defaults_are_action_yml_defaults() -> None:
    """`uses: docker://...` has no action.yml: the entrypoint supplies its defaults."""
    declared = {name: spec["default"] for name, spec in ACTION["inputs"].items() if spec.get("default")}
    assert declared == action.DEFAULTS


def test_absent_view_inputs_take_the_actions_defaults_and_empty_ones_stay_empty() -> None:
    argv = build_argv(Inputs({"INPUT_OBSERVATIONS": "obs.json"}), {})
    for flag, value in [
        ("--junit", "behavegate-junit.xml"),
        ("--summary", "behavegate-summary.md"),
        ("--report", "behavegate-report.json"),
    ]:
        assert argv[argv.index(flag) + 1] == value
    assert "--annotations" in argv
    assert "--junit" not in build_argv(Inputs({"INPUT_OBSERVATIONS": "obs.json", "INPUT_JUNIT": ""}), {})


# A valid value for each input that is a CLI flag (switches: "true").
SAMPLES = {
    "observations": "obs.json",
    "traces": "a.json, b.json",
    "trace-format": "otlp-json",
    "trace-bind": "prompt",
    "trace-attribute": "app.case",
    "endpoint": "http://agent:8080/v1/chat/completions",
    "allow-host": "agent\nother",
    "mcp-listen": "10.1.2.3",
    "mcp-port": "8931",
    "tools-mcp": "http://127.0.0.1:8931/mcp",
    "auth-env": "TOKEN",
    "judge-endpoint": "https://judge.example/v1",
    "judge-model": "grader",
    "judge-auth-env": "JUDGE_TOKEN",
    "judge-max-requests": "5",
    "judge-timeout": "2.5",
    "judge-max-tokens": "64",
    "concurrency": "16",
    "save-observations": "seen.json",
    "scenario": "a, b",
    "tag": "x\ny",
    "case": "2\nname, with comma",
    "runs": "3",
    "min-pass-rate": "0.8",
    "threshold-mode": "all",
    "max-scenarios": "300",
    "max-seconds": "60",
    "max-tokens": "256",
    "max-total-tokens": "50000",
    "max-cost": "2",
    "retries": "2",
    "shard": "2/3",
    "baseline": "main.json",
    "fail-on": "fail",
    "allow-remote": "true",
    "allow-contract-endpoint": "true",
    "judge-allow-remote": "True",
    "judge-allow-contract-endpoint": "TRUE",
}
# The Action's own inputs: its views, the merge job and its set-up; none is a test flag.
ACTION_OWN = {
    "contract",
    "merge",
    "report",
    "junit",
    "summary",
    "summary-file",
    "html",
    "sarif",
    "comment",
    "github-token",
    "annotations",
    "artifacts",
    "working-directory",
}


def _cli_values(argv: list[str]) -> dict[str, object]:
    return vars(build_parser().parse_args(argv))


def test_every_action_input_is_a_cli_flag_or_the_actions_own() -> None:
    rows = {row.name for row in (*action.TEST_FLAGS, *action.GATE_FLAGS)}
    assert rows | ACTION_OWN == set(ACTION["inputs"]) and not rows & ACTION_OWN
    assert set(SAMPLES) == rows


@pytest.mark.parametrize("row", [*action.TEST_FLAGS, *action.GATE_FLAGS], ids=lambda row: row.name)
def test_an_absent_input_is_an_absent_flag_and_a_written_one_is_that_flag(row: action.FlagInput) -> None:
    """The Action restates no CLI default: absent (or empty) parses as the bare command does,
    written parses as the CLI given the same flag by hand."""
    assert not ACTION["inputs"][row.name].get("default"), f"{row.name}: action.yml restates a default"
    bare = _cli_values(build_argv(Inputs({}), {}))
    for absent in ({}, {f"INPUT_{row.name.upper()}": ""}):
        assert _cli_values(build_argv(Inputs(absent), {})) == bare
    value = SAMPLES[row.name]
    written = _cli_values(build_argv(Inputs({f"INPUT_{row.name.upper()}": value}), {}))
    if row.kind is action.Kind.SWITCH:
        by_hand = ["--" + row.name]
    elif row.kind is action.Kind.ITEMS:
        by_hand = [arg for item in re.split(r"[,\n]", value) for arg in (row.cli_flag, item.strip())]
    elif row.kind is action.Kind.LINES:
        by_hand = [f"{row.cli_flag}={line.strip()}" for line in value.split("\n")]
    else:
        by_hand = [row.cli_flag, value]
    views = action._views(Inputs({}), {}, verdict=row.name != "shard")  # the Action's own, the same in both
    assert written == _cli_values(["test", *by_hand, *views])
    assert written != bare


def test_the_cli_decides_what_the_action_used_to_restate() -> None:
    """No --max-scenarios 25 or --concurrency 4 unless the workflow wrote them: a version-2
    contract's cap and an Oxy file's concurrency are the CLI's to decide."""
    argv = build_argv(Inputs({"INPUT_CONTRACT": "c.yml", "INPUT_ENDPOINT": "http://agent:8080/v1/chat/completions"}), {})
    assert not {"--max-scenarios", "--concurrency", "--max-seconds", "--max-tokens", "--fail-on"} & set(argv)


def test_oxy_cases_reach_the_cli_one_per_line_keeping_their_commas() -> None:
    lines = "apple-ceo\n What's new, and why? \n\n2\n--help\r\nsplit\u2028not"
    argv = build_argv(Inputs({"INPUT_CONTRACT": "sales.agentic.test.yml", "INPUT_CASE": lines}), {})
    cases = [a for a in argv if a.startswith("--case")]
    assert cases == ["--case=apple-ceo", "--case=What's new, and why?", "--case=2", "--case=--help", "--case=split\u2028not"]
    assert build_parser().parse_args(["test", *cases]).case == [
        "apple-ceo",
        "What's new, and why?",
        "2",
        "--help",
        "split\u2028not",
    ]
    with pytest.raises(ActionInputError, match="case belong to the shard jobs"):
        build_argv(Inputs({"INPUT_MERGE": "shards", "INPUT_CASE": "2"}), {})


def test_the_documented_case_input_selects_those_oxy_cases() -> None:
    from doc_examples import examples

    step = yaml.safe_load(examples("oxy.md")["action-case"])[0]
    inputs = Inputs({f"INPUT_{name.upper()}": str(value) for name, value in step["with"].items()})
    argv = build_argv(inputs, {})
    assert [a for a in argv if a.startswith("--case")] == ["--case=apple-ceo", "--case=What's the revenue trend for Q4?"]
    assert argv[-2:] == ["--", "tests/sales.agentic.test.yml"]


def test_a_sharded_runs_baseline_gates_the_merge_job_and_a_shard_job_refuses_it() -> None:
    merge = build_argv(Inputs({"INPUT_MERGE": "shards", "INPUT_BASELINE": "main.json", "INPUT_FAIL-ON": "regression"}), {})
    assert merge[:2] == ["merge", "shards"] and merge[merge.index("--baseline") + 1] == "main.json"
    assert merge[merge.index("--fail-on") + 1] == "regression"
    shard = build_argv(Inputs({"INPUT_OBSERVATIONS": "obs.json", "INPUT_SHARD": "1/2", "INPUT_FAIL-ON": "regression"}), {})
    assert ("--fail-on", "regression") in itertools.pairwise(shard)  # the CLI refuses it (test_shard.py), in its words
    assert not {"--junit", "--summary", "--annotations"} & set(shard)  # the merge job renders the verdict


def test_version_2_inputs_reach_the_cli() -> None:
    argv = build_argv(
        Inputs(
            {
                "INPUT_RUNS": "8",
                "INPUT_TAG": "orders\n policy, smalltalk",
                "INPUT_MIN-PASS-RATE": "0.75",
                "INPUT_THRESHOLD-MODE": "all",
            }
        ),
        {},
    )
    pairs = list(itertools.pairwise(argv))
    assert [v for f, v in pairs if f == "--tag"] == ["orders", "policy", "smalltalk"]
    assert ("--runs", "8") in pairs and ("--min-pass-rate", "0.75") in pairs and ("--threshold-mode", "all") in pairs
    assert not {"--runs", "--tag", "--min-pass-rate", "--threshold-mode"} & set(build_argv(Inputs({}), {}))
    with pytest.raises(
        ActionInputError, match=r"input threshold-mode: invalid choice: 'median' \(choose from 'average', 'all'\)"
    ):
        action.check_argv(build_argv(Inputs({"INPUT_THRESHOLD-MODE": "median"}), {}))


def test_mcp_inputs_reach_the_cli_and_a_merge_job_refuses_them() -> None:
    inputs = {"INPUT_MCP-LISTEN": "10.0.0.5", "INPUT_MCP-PORT": "8931", "INPUT_TOOLS-MCP": "http://127.0.0.1:9/mcp"}
    pairs = list(itertools.pairwise(build_argv(Inputs(inputs), {})))
    assert ("--mcp-listen", "10.0.0.5") in pairs and ("--mcp-port", "8931") in pairs
    assert ("--tools-mcp", "http://127.0.0.1:9/mcp") in pairs
    assert not {"--mcp-listen", "--mcp-port", "--tools-mcp"} & set(build_argv(Inputs({}), {}))
    # the CLI checks the port's type, in its words, under the input's name
    with pytest.raises(ActionInputError, match=r"input mcp-port: invalid int value: 'any'"):
        action.check_argv(build_argv(Inputs({"INPUT_MCP-PORT": "any"}), {}))
    # the tool server serves a live run: a merge job has none
    with pytest.raises(ActionInputError, match="mcp-listen belong to the shard jobs"):
        build_argv(Inputs({"INPUT_MERGE": "shards", "INPUT_MCP-LISTEN": "10.0.0.5"}), {})


def test_the_retries_input_reaches_the_cli_and_absent_means_no_flag() -> None:
    assert ("--retries", "3") in list(itertools.pairwise(build_argv(Inputs({"INPUT_RETRIES": " 3 "}), {})))
    assert "--retries" not in build_argv(Inputs({}), {})
    assert "--retries" not in build_argv(Inputs({"INPUT_RETRIES": ""}), {})
    assert ACTION["inputs"]["retries"]["default"] == ""


def test_a_golden_query_workflow_runs_from_the_action(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    golden = ROOT / "examples" / "golden-queries"
    shutil.copy(golden / "queries.yml", tmp_path / "queries.yml")
    shutil.copy(golden / "observations.json", tmp_path / "obs.json")
    monkeypatch.chdir(tmp_path)
    environ = {
        "GITHUB_WORKSPACE": str(tmp_path),
        "GITHUB_OUTPUT": str(tmp_path / "output.txt"),
        "INPUT_CONTRACT": "queries.yml",
        "INPUT_OBSERVATIONS": "obs.json",
        "INPUT_TAG": "policy",
        "INPUT_MIN-PASS-RATE": "0.5",
    }
    action.main(environ)
    report = json.loads((tmp_path / "behavegate-report.json").read_text())
    assert "error" not in report
    assert "passed=" in (tmp_path / "output.txt").read_text()


def test_path_outputs_are_workspace_relative_and_the_summary_is_a_workspace_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An upload step with the workspace root finds every path output, whatever
    working-directory is; the summary output is a file a later step can read."""
    (tmp_path / "agent").mkdir()
    shutil.copy(EXAMPLE / "contract.yml", tmp_path / "agent" / "contract.yml")
    shutil.copy(EXAMPLE / "observations-regressed.json", tmp_path / "agent" / "obs.json")
    monkeypatch.chdir(tmp_path)
    environ = {
        "GITHUB_WORKSPACE": str(tmp_path),
        "GITHUB_OUTPUT": str(tmp_path / "output.txt"),
        "GITHUB_STEP_SUMMARY": str(tmp_path / "step-summary.md"),
        "INPUT_WORKING-DIRECTORY": "agent",
        "INPUT_CONTRACT": "contract.yml",
        "INPUT_OBSERVATIONS": "obs.json",
    }
    for name, value in environ.items():
        monkeypatch.setenv(name, value)  # the CLI reads the process environment
    assert action.main(environ) == 1
    outputs = dict(line.split("=", 1) for line in (tmp_path / "output.txt").read_text().splitlines())
    assert outputs["report"] == "agent/behavegate-report.json"
    assert outputs["junit"] == "agent/behavegate-junit.xml"
    assert outputs["summary"] == "agent/behavegate-summary.md"
    assert outputs["run-dir"].startswith("agent/.behavegate/runs/")
    for name in ("report", "junit", "summary", "run-dir"):
        assert (tmp_path / outputs[name]).exists(), name
    summary = (tmp_path / outputs["summary"]).read_text()
    assert summary.startswith("## ❌ behavegate: fail")
    assert (tmp_path / "step-summary.md").read_text() == summary


def test_a_stale_summary_file_is_never_shown_as_this_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A committed behavegate-summary.md is not copied into the job summary when
    the run wrote none (here: the CLI refuses --runs before judging anything)."""
    shutil.copy(EXAMPLE / "contract.yml", tmp_path / "contract.yml")
    (tmp_path / "behavegate-summary.md").write_text("## ✅ behavegate: pass (planted)\n")
    (tmp_path / "step-summary.md").write_text("")
    monkeypatch.chdir(tmp_path)
    environ = {
        "GITHUB_WORKSPACE": str(tmp_path),
        "GITHUB_STEP_SUMMARY": str(tmp_path / "step-summary.md"),
        "INPUT_CONTRACT": "contract.yml",
        "INPUT_OBSERVATIONS": "contract.yml",
        "INPUT_RUNS": "many",
    }
    assert action.main(environ) == 2
    assert "planted" not in (tmp_path / "step-summary.md").read_text()


def test_the_release_workflow_publishes_the_image_the_docs_name() -> None:
    release = yaml.safe_load((ROOT / ".github" / "workflows" / "release.yml").read_text())
    assert release[True]["push"]["tags"] == ["v*"]  # PyYAML reads the key `on` as True
    job = release["jobs"]["image"]
    assert job["permissions"]["packages"] == "write" and job["needs"] == "test"
    script = "\n".join(step.get("run", "") for step in job["steps"])
    envs = {k: v for step in job["steps"] for k, v in step.get("env", {}).items()}
    assert envs["OWNER"] == "${{ github.repository_owner }}" and envs["TAG"] == "${{ github.ref_name }}"
    assert "ghcr.io/${OWNER,,}/behavegate:${version}" in script and 'docker push "$IMAGE"' in script
    assert "src/behavegate/__init__.py" in script  # a tag that is not the package version is refused
    doc = (ROOT / "docs" / "action.md").read_text()
    assert "uses: docker://ghcr.io/<owner>/behavegate:" in doc


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


def test_contract_errors_under_a_working_directory_are_annotated_at_the_workspace_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """As failure annotations are: the runner places an annotation by its workspace path, so a
    contract under working-directory is named with it; the summary lists each problem on its own line."""
    (tmp_path / "sub" / "agent").mkdir(parents=True)
    (tmp_path / "sub" / "agent" / "bad.yml").write_text(
        "version: 1\nagent: {}\nscenarios:\n  - id: bad id\n    prompt: p\n    expect: {refusal: maybe}\n"
    )
    (tmp_path / "sub" / "obs.json").write_text('{"version": 1, "scenarios": []}')
    monkeypatch.chdir(tmp_path)
    environ = {
        "GITHUB_WORKSPACE": str(tmp_path),
        "GITHUB_STEP_SUMMARY": str(tmp_path / "summary.md"),
        "INPUT_WORKING-DIRECTORY": "sub",
        "INPUT_CONTRACT": "agent/bad.yml",
        "INPUT_OBSERVATIONS": "obs.json",
    }
    for name, value in environ.items():
        monkeypatch.setenv(name, value)  # the CLI reads the process environment
    assert action.main(environ) == 2
    out = capsys.readouterr().out
    assert "::error file=sub/agent/bad.yml,line=4,title=behavegate%3A invalid contract::" in out
    assert "::error file=sub/agent/bad.yml,line=6," in out
    assert "file=agent/bad.yml" not in out
    summary = (tmp_path / "summary.md").read_text()
    assert "\\n" not in summary  # no literal backslash-n: each problem is a line of its own
    items = [line for line in summary.splitlines() if line.startswith("- `")]
    assert len(items) == 2 and items[0].startswith("- `scenarios[0].id (line 4):")


def test_judge_inputs_reach_the_cli_and_the_judge_token_is_masked(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    argv = build_argv(
        Inputs(
            {
                "INPUT_JUDGE-ENDPOINT": "https://judge.example/v1/chat/completions",
                "INPUT_JUDGE-MODEL": "grader",
                "INPUT_JUDGE-AUTH-ENV": "JUDGE_TOKEN",
                "INPUT_JUDGE-ALLOW-REMOTE": "true",
                "INPUT_JUDGE-MAX-REQUESTS": "50",
                "INPUT_JUDGE-TIMEOUT": "12.5",
                "INPUT_JUDGE-MAX-TOKENS": "256",
            }
        ),
        {},
    )
    joined = " ".join(argv)
    for expected in (
        "--judge-endpoint https://judge.example/v1/chat/completions",
        "--judge-model grader",
        "--judge-auth-env JUDGE_TOKEN",
        "--judge-allow-remote",
        "--judge-max-requests 50",
        "--judge-timeout 12.5",
        "--judge-max-tokens 256",
    ):
        assert expected in joined
    assert "--judge-allow-contract-endpoint" not in argv
    from behavegate.github.action import main as action_main

    env = {
        "INPUT_JUDGE-AUTH-ENV": "JUDGE_TOKEN",
        "JUDGE_TOKEN": "judge-secret-value",
        "INPUT_CONTRACT": "missing.yml",
        "GITHUB_WORKSPACE": str(tmp_path),
    }
    action_main(env)
    assert capsys.readouterr().out.startswith("::add-mask::judge-secret-value")


def test_an_input_value_that_looks_like_a_flag_stays_a_value() -> None:
    """A contract named "--allow-remote" or an endpoint starting with "-" never becomes an option."""
    argv = build_argv(Inputs({"INPUT_CONTRACT": "--allow-remote", "INPUT_ENDPOINT": "-x", "INPUT_SCENARIO": "--help"}), {})
    parsed = build_parser().parse_args(argv)
    assert parsed.contract == ["--allow-remote"] and not parsed.allow_remote
    assert parsed.endpoint == "-x" and parsed.scenarios == ["--help"]


def _release_script() -> Any:
    spec = importlib.util.spec_from_file_location("release_action_yml", ROOT / "scripts" / "release_action_yml.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_a_release_points_action_yml_at_the_published_image_and_changes_nothing_else() -> None:
    script = _release_script()
    source = (ROOT / "action.yml").read_text()
    released = script.pinned(source, "ghcr.io/acme/behavegate:1.2.0")
    before, after = yaml.safe_load(source), yaml.safe_load(released)
    assert before["runs"] == {"using": "docker", "image": "Dockerfile"}
    assert after["runs"] == {"using": "docker", "image": "docker://ghcr.io/acme/behavegate:1.2.0"}
    assert {k: v for k, v in after.items() if k != "runs"} == {k: v for k, v in before.items() if k != "runs"}
    assert len(released.splitlines()) == len(source.splitlines())
    for bad in ("ghcr.io/Acme/behavegate:1.2.0", "behavegate", "ghcr.io/acme/behavegate:1.2.0\n  args: [x]"):
        with pytest.raises(script.ReleaseError):
            script.pinned(source, bad)
    with pytest.raises(script.ReleaseError, match="found 0"):
        script.pinned(released, "ghcr.io/acme/behavegate:1.2.1")  # a released action.yml is never rewritten twice


def test_the_release_job_moves_its_tags_to_the_commit_that_runs_the_image() -> None:
    release = yaml.safe_load((ROOT / ".github" / "workflows" / "release.yml").read_text())
    job = release["jobs"]["image"]
    assert job["permissions"]["contents"] == "write"
    steps = [step.get("run", "") for step in job["steps"]]
    push = next(i for i, run in enumerate(steps) if 'docker push "$IMAGE"' in run)
    pin = next(i for i, run in enumerate(steps) if "scripts/release_action_yml.py" in run)
    assert push < pin  # the tags move only once the image they name exists
    assert 'git tag -f "$major"' in steps[pin] and 'git push -f origin "refs/tags/${TAG}"' in steps[pin]
