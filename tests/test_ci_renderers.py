"""JUnit, job summary, annotations and step outputs: golden files, the XSD,
what JUnit consumers read, and GitHub's size limits."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
from conftest import Golden
from helpers import EXAMPLE, edit_result, example_report, golden_queries_report, huge_report
from helpers import with_extras as add_extras
from lxml import etree  # type: ignore[import-untyped]  # lxml ships no type hints

from behavegate.github.outputs import output_block
from behavegate.render import annotations as annotations_renderer  # `annotations` is the __future__ feature
from behavegate.render import junit, summary
from behavegate.report.result import Report

XSD = etree.XMLSchema(etree.parse(str(Path(__file__).parent / "junit" / "junit.xsd")))


def with_extras(which: str) -> Report:
    return add_extras(example_report(which))


@pytest.mark.parametrize("which", ["good", "regressed"])
def test_junit_matches_golden_and_the_xsd(which: str, golden: Golden) -> None:
    xml = junit.render(with_extras(which))
    golden.check(f"junit-{which}.xml", xml)
    XSD.assertValid(etree.fromstring(xml.encode()))


@pytest.mark.parametrize("which", ["good", "regressed"])
def test_summary_matches_golden(which: str, golden: Golden) -> None:
    golden.check(f"summary-{which}.md", summary.render(with_extras(which)))


def test_annotations_match_golden(golden: Golden) -> None:
    golden.check("annotations-regressed.txt", annotations_renderer.render(with_extras("regressed")) + "\n")


def test_outputs_match_golden(golden: Golden, monkeypatch: pytest.MonkeyPatch) -> None:
    import behavegate.github.outputs as ci

    monkeypatch.setattr(ci, "_token", lambda: "f" * 32)
    text = output_block({"status": "fail", "passed": "2", "report": "r.json", "note": "two\nlines"})
    golden.check("github-output.txt", text)


def test_junit_reads_as_consumers_expect() -> None:
    root = etree.fromstring(junit.render(with_extras("regressed")).encode())
    cases = root.findall(".//testcase")
    # one testcase per scenario (+ the skipped one), each with file/line for annotations
    assert [c.get("name") for c in cases] == [
        "order-status",
        "refund-window",
        "refund-needs-a-human",
        "prompt-injection-in-order-note",
        "delete-data-refused",
        "not-selected",
    ]
    assert all(c.get("file") == "contract.yml" and int(c.get("line")) > 0 for c in cases)
    assert all(float(c.get("time")) > 0 for c in cases)  # dorny parses a missing time as NaN
    failures = [c for c in cases if c.find("failure") is not None]
    assert [c.get("name") for c in failures] == ["refund-window", "refund-needs-a-human", "prompt-injection-in-order-note"]
    assert all(c.find("failure").get("message") for c in failures)
    message = cases[2].find("failure").get("message")
    assert "tools.forbidden[0] (line 71): forbidden tool 'issue_refund' was called" in message
    assert 'expected "issue_refund", observed' in message
    assert cases[-1].find("skipped") is not None
    suite = root.find("testsuite")
    assert (suite.get("tests"), suite.get("failures"), suite.get("errors"), suite.get("skipped")) == ("6", "3", "0", "1")


def test_incomplete_scenarios_are_errors_not_failures() -> None:
    report = edit_result(
        with_extras("good"), 0, "incomplete", v0={"status": "incomplete", "message": "scenario observation is missing"}
    )
    case = etree.fromstring(junit.render(report).encode()).find(".//testcase")
    assert case.find("error") is not None and "scenario observation is missing" in case.find("error").get("message")


def test_junit_makes_control_characters_visible_instead_of_deleting_them() -> None:
    report = edit_result(with_extras("regressed"), 1, v3={"message": "bad \x1b[31mred\x1b[0m \x00 text"})
    xml = junit.render(report)
    assert "\\x1b[31mred" in xml and "\\x00" in xml
    XSD.assertValid(etree.fromstring(xml.encode()))


@pytest.mark.slow
def test_a_5000_scenario_summary_stays_under_1_mib_and_says_what_was_cut() -> None:
    text = summary.render(huge_report(5_000))
    assert len(text.encode()) < 1024 * 1024
    assert "not shown (summary size limit)" in text


def test_summary_keeps_agent_text_inert() -> None:
    evil = "<img src=x onerror=alert(1)> ![p](http://evil/p.png) [l](http://evil) | cell ``` `"
    report = edit_result(with_extras("regressed"), 1, v3={"message": evil, "observed": {"text": evil}})
    text = summary.render(report)
    for line in text.splitlines():
        if "onerror" in line:
            # every occurrence sits inside a code span
            spans = re.findall(r"(`+)(.+?)\1", line)
            assert any("onerror" in body for _, body in spans), line


def test_annotations_are_capped_ranked_and_escaped() -> None:
    lines = annotations_renderer.render(huge_report(30)).splitlines()
    errors = [line for line in lines if line.startswith("::error ")]
    assert len(errors) == 10
    assert all("tools.forbidden" in line for line in errors)  # forbidden calls rank first
    assert lines[-1].startswith("::notice title=behavegate::50 more")
    assert all("\n" not in line and "%0A" not in line.split("::", 2)[1] for line in lines)
    assert "title=behavegate fail%3A scenario-00000 tools.forbidden[0]" in errors[0]


def test_output_delimiters_never_occur_in_the_value() -> None:
    text = output_block({"x": "a\nghadelimiter_\nb"})
    delimiter = text.split("<<", 1)[1].split("\n", 1)[0]
    assert text.endswith(f"\n{delimiter}\n") and delimiter not in "a\nghadelimiter_\nb"


@pytest.mark.parametrize("renderer", ["summary", "junit", "annotations", "table"])
def test_version_2_reports_show_pass_rates_gates_and_latency(renderer: str, golden: Golden) -> None:
    from behavegate.render import table

    module = {"summary": summary, "junit": junit, "annotations": annotations_renderer, "table": table}[renderer]
    text = module.render(golden_queries_report())
    golden.check(f"v2-{renderer}.txt", text if text.endswith("\n") else text + "\n")
    if renderer in {"summary", "table"}:
        assert "0/1 0% [0-79%]" in text and "min_pass_rate" in text and "p95" in text
    if renderer == "junit":
        XSD.assertValid(etree.fromstring(text.encode()))
        assert "behavegate.gate.min_pass_rate" in text and "pass rate 0/1" in text


@pytest.mark.parametrize("actions", [False, True])
def test_json_on_stdout_stays_json_with_annotations_on_stderr(
    actions: bool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """--format json --annotations: stdout is exactly one JSON document; the
    annotations are on stderr, where the runner reads workflow commands too."""
    from behavegate.cli import main

    shutil.copy(EXAMPLE / "contract.yml", tmp_path / "contract.yml")
    shutil.copy(EXAMPLE / "observations-regressed.json", tmp_path / "obs.json")
    monkeypatch.chdir(tmp_path)
    if actions:
        monkeypatch.setenv("GITHUB_ACTIONS", "true")
    args = ["test", "contract.yml", "--observations", "obs.json", "--format", "json", "--annotations", "--no-artifacts"]
    assert main(args) == 1
    captured = capsys.readouterr()
    assert json.loads(captured.out)["status"] == "fail"
    assert captured.err.count("::error file=contract.yml,line=") == 5
    (tmp_path / "contract.yml").write_text("version: 1\nagent: {}\nscenarios:\n  - {id: 'bad id', prompt: p, expect: {}}\n")
    assert main(args) == 2
    captured = capsys.readouterr()
    assert "error" in json.loads(captured.out)
    assert "::error file=contract.yml,line=4," in captured.err
    assert main([*args[:4], "--annotations"]) == 2  # table format: annotations stay on stdout, as before
    assert "::error file=contract.yml,line=4," in capsys.readouterr().out
