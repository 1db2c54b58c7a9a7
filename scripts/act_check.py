"""Check act's log of .github/workflows/action-act.yml (scripts/act-test.sh runs it).

    python3 scripts/act_check.py --act-exit CODE ACT_LOG

Reads what act itself printed for each job: the job's result, each step's result, the
Action's outputs (act's "::set-output::" lines), its error annotations, its job summary
(act prints GITHUB_STEP_SUMMARY as "Summary - ..."), and the step contexts a later step
of the job printed. Checks them against EXPECTED; every annotation must name its job's
contract by its path from the repository root and a line, inside its scenario, that holds
the key its title names. Prints one line a check and a short summary; exits 1 on any failure.
Standard library only: it runs before, and without, the project's venv.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import re
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import unquote

ROOT = Path(__file__).resolve().parents[1]
CONTRACT = "examples/refund-agent/contract.yml"
PLANTED_LINES = (64, 70, 71, 82, 84)  # the regressed agent's five violated assertions
MCP_CONTRACT = "examples/mcp-framework-agent/contract.yml"
MCP_PLANTED_LINES = (57, 58)  # the regressed framework agent: escalate_to_human not called, issue_refund called

# act's log: "[workflow/job   ] text"; job names are padded to one width.
_PREFIXED = re.compile(r"^\[(?P<workflow>[^/\]]+)/(?P<job>[^\]]*?)\s*\] (?P<text>.*)$")
_STEP_START = re.compile(r"^⭐ Run Main (?P<step>.+)$")
_STEP_END = re.compile(r"^\s+(?P<mark>✅|❌)\s+(?P<word>Success|Failure) - Main (?P<step>.+?) \[[^\]]*\]$")
_OUTPUT = re.compile(r"^\s+⚙\s+::set-output:: (?P<name>[^=]+)=(?P<value>.*)$")
# Property values escape ":" (%3A), so the first "::" ends the properties.
_ANNOTATION = re.compile(r"^\s+\S+\s+::(?P<level>error|warning|notice) (?P<props>.*?)::(?P<message>.*)$")
_SUMMARY = re.compile(r"^\s+⚙\s+Summary - (?P<first>.*)$")
_JOB_END = re.compile(r"^🏁\s+Job (?P<result>succeeded|failed)$")
_SHOWN = re.compile(r"^\s+\| step (?P<name>[A-Z]+) (?P<json>\{.*\})$")


@dataclass(frozen=True)
class Annotation:
    level: str
    file: str
    line: int
    title: str


@dataclass(frozen=True)
class Step:
    name: str
    result: str  # success, failure, or "" when act printed none
    outputs: Mapping[str, str]
    annotations: tuple[Annotation, ...]
    summary: str


@dataclass(frozen=True)
class Job:
    name: str
    result: str  # succeeded, failed, or "" when act printed none
    steps: Mapping[str, Step]
    shown: Mapping[str, Mapping[str, object]]  # a later step's view: ids upper-cased -> steps.<id>


@dataclass
class _StepDraft:
    result: str = ""
    outputs: dict[str, str] = field(default_factory=dict)
    annotations: list[Annotation] = field(default_factory=list)
    summary: list[str] = field(default_factory=list)


def _annotation(level: str, props: str) -> Annotation:
    # Property values are escaped (%2C, %3A, ...), so a bare comma separates properties.
    values = dict(part.split("=", 1) for part in props.split(",") if "=" in part)
    line = values.get("line", "")
    return Annotation(
        level, unquote(values.get("file", "")), int(line) if line.isdigit() else 0, unquote(values.get("title", ""))
    )


def parse(log: str) -> dict[str, Job]:
    """Jobs by name, from act's plain log; lines of parallel jobs may interleave."""
    steps: dict[str, dict[str, _StepDraft]] = {}
    current: dict[str, str] = {}
    results: dict[str, str] = {}
    shown: dict[str, dict[str, Mapping[str, object]]] = {}
    summary_of: _StepDraft | None = None  # act prints a summary's later lines without a prefix
    for raw in log.splitlines():
        match = _PREFIXED.match(raw)
        if match is None:
            if summary_of is not None:
                summary_of.summary.append(raw)
            continue
        summary_of = None
        job, text = match["job"], match["text"]
        drafts = steps.setdefault(job, {})
        if started := _STEP_START.match(text):
            current[job] = started["step"]
            drafts.setdefault(started["step"], _StepDraft())
            continue
        if ended := _JOB_END.match(text):
            results[job] = ended["result"]
            continue
        draft = drafts.setdefault(current.get(job, ""), _StepDraft())
        if step_end := _STEP_END.match(text):
            drafts.setdefault(step_end["step"], _StepDraft()).result = step_end["word"].lower()
        elif output := _OUTPUT.match(text):
            draft.outputs[output["name"]] = output["value"]
        elif annotation := _ANNOTATION.match(text):
            draft.annotations.append(_annotation(annotation["level"], annotation["props"]))
        elif summary := _SUMMARY.match(text):
            draft.summary.append(summary["first"])
            summary_of = draft
        elif (step_view := _SHOWN.match(text)) is not None:
            with contextlib.suppress(ValueError):  # a cut line is no view: that step's check then fails
                shown.setdefault(job, {})[step_view["name"]] = json.loads(step_view["json"])
    return {
        job: Job(
            job,
            results.get(job, ""),
            {
                name: Step(name, d.result, dict(d.outputs), tuple(d.annotations), "\n".join(d.summary).strip())
                for name, d in drafts.items()
                if name
            },
            shown.get(job, {}),
        )
        for job, drafts in steps.items()
    }


@dataclass(frozen=True)
class StepExpect:
    step_id: str  # as the workflow names it (steps.<id>), upper-cased in the shown lines
    result: str
    outputs: Mapping[str, str]
    annotated: tuple[int, ...]  # contract lines of the error annotations
    summary_has: tuple[str, ...]


@dataclass(frozen=True)
class JobExpect:
    result: str
    steps: Mapping[str, StepExpect]
    log_has: tuple[str, ...] = ()
    contract: str = CONTRACT  # the path the job's annotations name


def _outputs(status: str, passed: str, failed: str, prefix: str = "behavegate") -> dict[str, str]:
    return {
        "status": status,
        "passed": passed,
        "failed": failed,
        "incomplete": "0",
        "report": f"{prefix}-report.json",
        "junit": f"{prefix}-junit.xml",
        "summary": f"{prefix}-summary.md",
    }


_PASS_SUMMARY = ("## ✅ behavegate: pass — 5 scenarios, 14 assertions", "| ✅ passed | 5 | 14 |")
_FAIL_SUMMARY = (
    "## ❌ behavegate: fail — 5 scenarios, 14 assertions",
    "| ❌ failed | 3 | 5 |",
    "### What went wrong",
    "- ❌ `tools.forbidden[0]` (line 71): `forbidden tool 'issue_refund' was called`",
)
_MCP_SEEN = "tool calls seen by behavegate's MCP server (tool-side evidence, agent.mcp) in 2 of 2 attempts"
_MCP_PASS_SUMMARY = ("## ✅ behavegate: pass — 2 scenarios, 9 assertions", "| ✅ passed | 2 | 9 |", _MCP_SEEN, "mode `live`")
_MCP_FAIL_SUMMARY = (
    "## ❌ behavegate: fail — 2 scenarios, 9 assertions",
    "| ❌ failed | 1 | 2 |",
    "- ❌ `tools.forbidden[0]` (line 58): `forbidden tool 'issue_refund' was called`",
    # the agent answers text only: the calls are the tool side's evidence
    "agent: `called (seen by behavegate's MCP server): lookup_order, issue_refund`",
    _MCP_SEEN,
    "mode `live`",
)
EXPECTED: dict[str, JobExpect] = {
    "offline": JobExpect(
        "succeeded",
        {
            "Good evidence passes": StepExpect(
                "gate", "success", _outputs("pass", "5", "0"), (), (*_PASS_SUMMARY, "mode `offline`")
            ),
            "Regressed evidence fails (planted)": StepExpect(
                "regressed", "failure", _outputs("fail", "2", "3", "regressed"), PLANTED_LINES, (*_FAIL_SUMMARY, "mode `offline`")
            ),
        },
    ),
    "live-service": JobExpect(
        "succeeded",
        {
            "Test the running agent": StepExpect(
                "gate", "success", _outputs("pass", "5", "0"), (), (*_PASS_SUMMARY, "mode `live`")
            )
        },
        ("saved observations: live-observations.json",),
    ),
    "live-regressed": JobExpect(
        "failed",
        {
            "Test the running agent": StepExpect(
                "gate", "failure", _outputs("fail", "2", "3"), PLANTED_LINES, (*_FAIL_SUMMARY, "mode `live`")
            )
        },
    ),
    "mcp-agent": JobExpect(
        "failed",
        {
            "The framework agent passes from its MCP calls": StepExpect(
                "gate", "success", _outputs("pass", "2", "0"), (), _MCP_PASS_SUMMARY
            ),
            "The regressed agent's forbidden refund fails (planted)": StepExpect(
                "regressed", "failure", _outputs("fail", "1", "1", "regressed"), MCP_PLANTED_LINES, _MCP_FAIL_SUMMARY
            ),
        },
        ("the good agent answers at http://127.0.0.1:", "the regressed agent answers at http://127.0.0.1:"),
        MCP_CONTRACT,
    ),
}


def _lands_on_contract(annotation: Annotation, contract: str, contract_lines: list[str]) -> str:
    """Empty when the annotation points into its scenario at a line holding its key, else why not."""
    if annotation.file != contract or not (ROOT / annotation.file).is_file():
        return f"file {annotation.file!r} is not the contract's path from the repository root"
    if not 1 <= annotation.line <= len(contract_lines):
        return f"line {annotation.line} is outside the contract"
    # title: "behavegate fail: <scenario> <assertion path>", e.g. "... refund-window sources.required[0]"
    parts = annotation.title.split()
    if len(parts) < 4:
        return f"title {annotation.title!r} names no scenario and assertion"
    scenario, path = parts[-2], parts[-1]
    key = re.sub(r"\[\d+\]$", "", path).rsplit(".", 1)[-1]
    starts = [n for n, text in enumerate(contract_lines, 1) if re.match(r"^\s*- id: ", text)]
    own = [n for n in starts if contract_lines[n - 1].split("id:", 1)[1].strip() == scenario]
    if not own:
        return f"scenario {scenario!r} is not in the contract"
    end = min([n for n in starts if n > own[0]], default=len(contract_lines) + 1)
    if not own[0] < annotation.line < end:
        return f"line {annotation.line} is outside scenario {scenario!r} (lines {own[0]}-{end - 1})"
    if f"{key}:" not in contract_lines[annotation.line - 1]:
        return f"line {annotation.line} ({contract_lines[annotation.line - 1].strip()!r}) does not hold {key!r}"
    return ""


def check(jobs: Mapping[str, Job], act_exit: int, log: str, contracts: Mapping[str, str]) -> list[tuple[bool, str]]:
    """One (passed, what) a check; ``contracts``: each contract's text by its path."""
    results: list[tuple[bool, str]] = []

    def expect(ok: bool, what: str) -> None:
        results.append((ok, what))

    failing = any(job.result == "failed" for job in EXPECTED.values())
    expect(act_exit == (1 if failing else 0), f"act exited {act_exit} (expected {1 if failing else 0}: a planted job fails)")
    for name, want in EXPECTED.items():
        job = jobs.get(name)
        if job is None:
            expect(False, f"{name}: act ran the job")
            continue
        expect(job.result == want.result, f"{name}: job {job.result or 'gave no result'} (expected {want.result})")
        contract_lines = contracts[want.contract].splitlines()
        for needle in want.log_has:
            job_lines = [m["text"] for m in map(_PREFIXED.match, log.splitlines()) if m and m["job"] == name]
            expect(any(needle in text for text in job_lines), f"{name}: log shows {needle!r}")
        for step_name, step_want in want.steps.items():
            where = f"{name} / {step_name}"
            step = job.steps.get(step_name)
            if step is None:
                expect(False, f"{where}: step ran")
                continue
            expect(
                step.result == step_want.result, f"{where}: step {step.result or 'gave no result'} (expected {step_want.result})"
            )
            wrong = {k: step.outputs.get(k) for k, v in step_want.outputs.items() if step.outputs.get(k) != v}
            run_dir = step.outputs.get("run-dir", "")
            listed = " ".join(f"{k}={v}" for k, v in step_want.outputs.items())
            expect(
                not wrong and run_dir.startswith(".behavegate/runs/"),
                f"{where}: outputs {listed} run-dir={run_dir}"
                if not wrong
                else f"{where}: outputs differ: {wrong} (run-dir={run_dir!r})",
            )
            seen = job.shown.get(step_want.step_id.upper(), {})
            shown_outputs = seen.get("outputs")
            later = dict(shown_outputs) if isinstance(shown_outputs, dict) else {}
            continue_on_error = step_want.result == "failure" and want.result == "succeeded"
            conclusion = "success" if continue_on_error else step_want.result
            expect(
                later == dict(step.outputs) and seen.get("outcome") == step_want.result and seen.get("conclusion") == conclusion,
                f"{where}: a later step reads steps.{step_want.step_id}: outcome {seen.get('outcome')}, "
                f"conclusion {seen.get('conclusion')}, the same {len(later)} outputs",
            )
            errors = [a for a in step.annotations if a.level == "error"]
            lines = tuple(sorted(a.line for a in errors))
            expect(
                lines == step_want.annotated,
                f"{where}: error annotations at {want.contract} lines {list(lines)} (expected {list(step_want.annotated)})",
            )
            for annotation in errors:
                why = _lands_on_contract(annotation, want.contract, contract_lines)
                expect(
                    not why, f"{where}: {annotation.file}:{annotation.line} {annotation.title!r} " + (why or "lands on its key")
                )
            missing = [s for s in step_want.summary_has if s not in step.summary]
            expect(
                not missing,
                f"{where}: job summary ({len(step.summary.splitlines())} lines) "
                + (f"lacks {missing}" if missing else "as expected"),
            )
    return results


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--act-exit", type=int, required=True, help="act's exit code")
    parser.add_argument("log", type=Path, help="act's log")
    args = parser.parse_args(argv)
    log = args.log.read_text(encoding="utf-8", errors="replace")
    contracts = {want.contract: (ROOT / want.contract).read_text(encoding="utf-8") for want in EXPECTED.values()}
    results = check(parse(log), args.act_exit, log, contracts)
    for ok, what in results:
        print(f"  {'ok' if ok else 'FAILED'}: {what}")
    failed = sum(not ok for ok, _ in results)
    jobs = ", ".join(f"{name} {want.result}" for name, want in EXPECTED.items())
    print(f"act-check: {len(results) - failed}/{len(results)} checks passed ({jobs})")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
