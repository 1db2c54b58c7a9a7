"""scripts/act_check.py reads act's log of the Action's workflow (.github/workflows/action-act.yml)
and fails on every way the Action could go wrong under a real runner. The fixture is act's own
log of that workflow (scripts/act-test.sh, act 0.2.89 over podman); each test edits it the way
a regression would show there. No act, no podman: the log is a file."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
LOG = (ROOT / "tests" / "fixtures" / "act" / "action-act.log").read_text(encoding="utf-8")
CONTRACTS = {
    path: (ROOT / path).read_text(encoding="utf-8")
    for path in ("examples/refund-agent/contract.yml", "examples/mcp-framework-agent/contract.yml")
}


def _checker() -> ModuleType:
    spec = importlib.util.spec_from_file_location("act_check", ROOT / "scripts" / "act_check.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


act_check = _checker()


def _failures(log: str, act_exit: int = 1) -> list[str]:
    return [what for ok, what in act_check.check(act_check.parse(log), act_exit, log, CONTRACTS) if not ok]


def _replace_once(log: str, old: str, new: str) -> str:
    assert log.count(old) >= 1, old
    return log.replace(old, new, 1)


def test_acts_real_log_of_the_workflow_passes_every_check() -> None:
    results = act_check.check(act_check.parse(LOG), 1, LOG, CONTRACTS)
    assert [what for ok, what in results if not ok] == []
    assert len(results) == 50


def test_the_log_is_read_per_job_though_parallel_jobs_interleave() -> None:
    jobs = act_check.parse(LOG)
    assert {name: job.result for name, job in jobs.items()} == {
        "offline": "succeeded",
        "live-service": "succeeded",
        "live-regressed": "failed",
        "mcp-agent": "failed",
    }
    regressed = jobs["offline"].steps["Regressed evidence fails (planted)"]
    assert regressed.outputs["status"] == "fail" and regressed.outputs["report"] == "regressed-report.json"
    # the summary's unprefixed lines belong to the step whose "Summary -" line they follow
    assert regressed.summary.startswith("## ❌ behavegate: fail") and "mode `offline`" in regressed.summary
    assert "mode `live`" not in regressed.summary
    assert jobs["live-service"].steps["Test the running agent"].annotations == ()


@pytest.mark.parametrize(
    ("line", "why"),
    [
        ("69", "line 69 ('tools:') does not hold 'forbidden'"),
        ("72", "line 72 ('') does not hold 'forbidden'"),
        ("82", "outside scenario"),
    ],
)
def test_an_annotation_off_its_contract_line_fails(line: str, why: str) -> None:
    log = _replace_once(
        LOG,
        "::error file=examples/refund-agent/contract.yml,line=71,",
        f"::error file=examples/refund-agent/contract.yml,line={line},",
    )
    failures = _failures(log)
    assert any(why in what for what in failures), failures
    assert any("error annotations at examples/refund-agent/contract.yml lines" in what for what in failures)


def test_an_annotation_path_relative_to_the_working_directory_fails() -> None:
    log = _replace_once(LOG, "::error file=examples/refund-agent/contract.yml,line=64,", "::error file=contract.yml,line=64,")
    assert any("file 'contract.yml' is not the contract's path from the repository root" in what for what in _failures(log))


def test_a_planted_failure_job_that_succeeds_fails_the_check() -> None:
    log = _replace_once(LOG, "[action-act/live-regressed] 🏁  Job failed", "[action-act/live-regressed] 🏁  Job succeeded")
    assert "live-regressed: job succeeded (expected failed)" in _failures(log)
    assert _failures(LOG, act_exit=0) == ["act exited 0 (expected 1: a planted job fails)"]


def test_a_job_act_did_not_run_fails_the_check() -> None:
    log = "\n".join(line for line in LOG.splitlines() if not line.startswith("[action-act/live-service"))
    assert "live-service: act ran the job" in _failures(log)


def test_a_missing_or_wrong_output_fails() -> None:
    log = _replace_once(LOG, "::set-output:: failed=3", "::set-output:: failed=0")
    assert any("outputs differ: {'failed': '0'}" in what for what in _failures(log))


def test_outputs_a_later_step_does_not_read_fail() -> None:
    log = _replace_once(LOG, '"outcome": "failure"', '"outcome": "success"')
    assert any("a later step reads steps." in what for what in _failures(log))


def test_a_job_summary_act_did_not_show_fails() -> None:
    log = _replace_once(LOG, "⚙  Summary - ## ✅ behavegate: pass", "⚙  ## ✅ behavegate: pass")
    assert any("job summary (0 lines) lacks" in what for what in _failures(log))


MCP_REGRESSED = "mcp-agent / The regressed agent's forbidden refund fails (planted)"
MCP_FORBIDDEN = "::error file=examples/mcp-framework-agent/contract.yml,line=58,"


def test_a_forbidden_mcp_call_the_action_did_not_annotate_fails() -> None:
    log = "\n".join(line for line in LOG.splitlines() if MCP_FORBIDDEN not in line)
    want = f"{MCP_REGRESSED}: error annotations at examples/mcp-framework-agent/contract.yml lines [57] (expected [57, 58])"
    assert want in _failures(log)


def test_an_mcp_annotation_at_another_contract_fails() -> None:
    log = _replace_once(LOG, MCP_FORBIDDEN, "::error file=examples/refund-agent/contract.yml,line=58,")
    assert any(
        what.startswith(MCP_REGRESSED) and "is not the contract's path from the repository root" in what
        for what in _failures(log)
    )


def test_mcp_calls_the_summary_does_not_credit_to_behavegates_server_fail() -> None:
    """The agent answers text only: a summary that lost the tool side's provenance is wrong."""
    log = LOG.replace("seen by behavegate's MCP server", "reported by the agent")
    failures = _failures(log)
    assert any(what.startswith(f"{MCP_REGRESSED}: job summary") and "lacks" in what for what in failures)
    assert any(what.startswith("mcp-agent / The framework agent passes") and "lacks" in what for what in failures)


def test_every_job_and_step_the_checker_expects_is_in_the_workflow() -> None:
    workflow = yaml.safe_load((ROOT / ".github" / "workflows" / "action-act.yml").read_text(encoding="utf-8"))
    jobs = workflow["jobs"]
    assert set(jobs) == set(act_check.EXPECTED)
    for name, want in act_check.EXPECTED.items():
        steps = {step.get("name"): step for step in jobs[name]["steps"]}
        for step_name, step_want in want.steps.items():
            assert steps[step_name]["uses"] == "./" and steps[step_name]["id"] == step_want.step_id
            assert steps[step_name]["with"]["contract"] == want.contract


def test_a_cut_step_view_fails_its_check_without_stopping_the_others() -> None:
    log = _replace_once(
        LOG, '[action-act/live-regressed]   | step GATE {"conclusion"', '[action-act/live-regressed]   | step GATE {"conclusion"{'
    )
    failures = _failures(log)
    assert (
        len(failures) == 1
        and "live-regressed / Test the running agent: a later step reads steps.gate: outcome None" in failures[0]
    )
