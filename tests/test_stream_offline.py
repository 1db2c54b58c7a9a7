"""Issue 41 item 3: a JSON Lines golden set judged against a JSON Lines observation file a
part at a time (commands/stream_offline.py): the same report, byte for byte, as the
whole-run path; memory bounded however many rows; anything it does not carry given way to
the whole-run path."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
from helpers import offline_path_run, stream_entry, streamed_and_whole
from hypothesis import given
from hypothesis import strategies as st

from behavegate.cli import main
from behavegate.commands import stream_offline

REPO = Path(__file__).resolve().parents[1]
HEAD = """\
version: 2
agent:
  model: m
  tools:
    - {name: lookup_order, description: Fetch an order, parameters: {type: object}}
    - {name: delete_account, description: Delete, parameters: {type: object}}
queries: golden.jsonl
"""
_CLOCK = re.compile(r'"(run_id|started_at|ended_at|duration_ms|seconds)": [^,\n{]+')


def _row(i: int) -> dict[str, Any]:
    expect = {
        "response": {"contains": [f"A-{i}"], "excludes": ["As an AI"]},
        "tools": {"forbidden": ["delete_account"], "max_calls": 3, "sequence": {"mode": "in_order", "calls": ["lookup_order"]}},
        "latency": {"max_ms": 2000},
    }
    row: dict[str, Any] = {"query": f"Where is order A-{i}? \u00e9", "category": ["orders", "vip"][i % 2], "expect": expect}
    if i % 5:
        row["id"] = f"order-{i:04d}"
    return row


def _entry(i: int, attempt: int = 0) -> dict[str, Any]:
    return stream_entry(f"order-{i:04d}" if i % 5 else f"query-{i + 1:03d}", i, attempt)


def _suite(folder: Path, rows: int, entries: list[dict[str, Any]] | None = None) -> None:
    (folder / "contract.yml").write_text(HEAD)
    (folder / "golden.jsonl").write_text("".join(json.dumps(_row(i)) + "\n" for i in range(rows)))
    found = entries if entries is not None else [_entry(i, a) for i in range(rows) for a in range(1 + (i % 3 == 0))]
    (folder / "observations.jsonl").write_text("".join(json.dumps(e) + "\n" for e in found))


def test_a_jsonl_run_is_streamed_and_writes_the_whole_run_paths_report_byte_for_byte(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _suite(tmp_path, 2 * stream_offline.PART + 37)  # three parts, the last one short
    (code, text, streamed), (whole_code, whole_text) = streamed_and_whole(tmp_path, monkeypatch)
    assert streamed
    assert code == whole_code == 1
    assert _CLOCK.sub("", text) == _CLOCK.sub("", whole_text)  # all but the clock's readings
    report = json.loads(text)
    assert report["summary"]["scenario_count"] == 2 * stream_offline.PART + 37
    assert report["behavegate"]["scores"]["tags"].keys() == {"orders", "vip"}
    # Each row points at its own line of the golden set, in every part.
    where = report["behavegate"]["scenarios"]
    assert (where["order-0001"]["file"], where["order-0001"]["line"]) == ("golden.jsonl", 2)
    assert (where["query-2036"]["file"], where["query-2036"]["line"]) == ("golden.jsonl", 2036)


_STAMP = re.compile(r' timestamp="[^"]*"')


def _views(folder: Path, out: str, monkeypatch: pytest.MonkeyPatch, *, whole: bool) -> tuple[int, str, str, bool]:
    """(exit, JUnit, summary, streamed) of a run by the default path, or by the whole-run one."""
    monkeypatch.chdir(folder)
    args = ["test", "contract.yml", "--observations", "observations.jsonl", "--format", "json", "--no-artifacts"]
    views = ["--output", f"{out}/report.json", "--junit", f"{out}/junit.xml", "--summary", f"{out}/summary.md"]
    code, took = offline_path_run(monkeypatch, [*args, *views], whole=whole)
    return code, (folder / out / "junit.xml").read_text(), (folder / out / "summary.md").read_text(), took


# A table of every row (at most 50); of those that did not pass; its details, then its rows, cut by the size limit.
@pytest.mark.parametrize(("rows", "limit"), [(40, None), (300, None), (300, 20_000), (300, 9_000)])
def test_junit_and_the_summary_are_streamed_and_are_the_whole_run_paths_files_byte_for_byte(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, rows: int, limit: int | None
) -> None:
    from behavegate.render import summary as summary_view

    monkeypatch.setattr(stream_offline, "PART", 64)  # several parts, the last one short
    if limit is not None:
        monkeypatch.setattr(summary_view.render, "__defaults__", (limit,))
        monkeypatch.setattr(summary_view.SummaryParts.__init__, "__defaults__", (limit,))
    _suite(tmp_path, rows)
    code, junit, summary, streamed = _views(tmp_path, "stream", monkeypatch, whole=False)
    whole_code, whole_junit, whole_summary, _ = _views(tmp_path, "whole", monkeypatch, whole=True)
    assert streamed and code == whole_code == 1
    assert _STAMP.sub("", junit) == _STAMP.sub("", whole_junit)  # all but the clock's reading
    assert summary == whole_summary
    assert 'failures="0"' not in junit and 'errors="0"' not in junit  # failed and incomplete scenarios both
    assert ("### What went wrong" in summary) == (limit != 9_000)  # 9,000 bytes: the rows take the budget
    assert ("more failing or incomplete scenarios not shown" in summary) == (limit is not None)
    assert ("more scenario rows not shown" in summary) == (limit == 9_000)


def test_observations_out_of_the_rows_order_give_way_to_the_whole_run_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    entries = [_entry(i) for i in range(40)]
    entries[3], entries[30] = entries[30], entries[3]
    _suite(tmp_path, 40, entries)
    (code, text, streamed), (whole_code, whole_text) = streamed_and_whole(tmp_path, monkeypatch)
    assert not streamed
    assert code == whole_code and _CLOCK.sub("", text) == _CLOCK.sub("", whole_text)


def test_an_observation_of_no_scenario_is_refused_as_the_whole_run_path_refuses_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _suite(tmp_path, 10, [*(_entry(i) for i in range(10)), {**_entry(1), "id": "stranger"}])
    (code, text, streamed), _ = streamed_and_whole(tmp_path, monkeypatch)
    assert (code, streamed) == (2, False)
    assert "observations contain scenarios not defined by the contract: ['stranger']" in text


def _values(value: Any) -> int:
    """What check_shape counts: a node each, keys and list indexes included."""
    if isinstance(value, dict):
        return 1 + sum(1 + _values(child) for child in value.values())
    if isinstance(value, list):
        return 1 + sum(1 + _values(child) for child in value)
    return 1


def test_a_file_past_the_value_cap_only_as_a_whole_is_refused_as_the_whole_run_path_refuses_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from behavegate import limits
    from behavegate.evidence import observation_file

    _suite(tmp_path, 40)
    lines = (tmp_path / "observations.jsonl").read_text().splitlines()
    total = _values({"version": 2, "scenarios": [json.loads(line) for line in lines]})
    cap = total - 1  # every line far within it, the file one value past it
    monkeypatch.setattr(limits, "V2_INPUT_MAX_VALUES", cap)
    monkeypatch.setattr(observation_file, "V2_INPUT_MAX_VALUES", cap)
    (code, text, streamed), (whole_code, whole_text) = streamed_and_whole(tmp_path, monkeypatch)
    assert (code, streamed, whole_code) == (2, False, 2)
    assert f"Observation file exceeds {cap} values" in text and text == whole_text


@given(
    st.recursive(
        st.none() | st.booleans() | st.integers() | st.text(), lambda inner: st.lists(inner) | st.dictionaries(st.text(), inner)
    )
)
def test_the_text_bound_on_a_values_count_is_never_below_the_count(value: Any) -> None:
    from behavegate.contract.rules import values_at_most

    for text in (json.dumps(value), json.dumps(value, separators=(",", ":"))):
        assert values_at_most(text) >= _values(value)


def test_a_jsonl_observation_file_means_what_its_json_form_means(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _suite(tmp_path, 12)
    entries = [json.loads(line) for line in (tmp_path / "observations.jsonl").read_text().splitlines()]
    (tmp_path / "observations.json").write_text(json.dumps({"version": 2, "scenarios": entries}))
    monkeypatch.chdir(tmp_path)
    reports = []
    for name in ("observations.jsonl", "observations.json"):
        main(["test", "contract.yml", "--observations", name, "--format", "json", "--no-artifacts", "--output", "r.json"])
        reports.append(json.loads((tmp_path / "r.json").read_text())["scenarios"])
    assert reports[0] == reports[1]


def test_a_jsonl_observation_file_with_a_bad_line_names_the_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    _suite(tmp_path, 3)
    with (tmp_path / "observations.jsonl").open("a") as out:
        out.write("{not json\n")
    monkeypatch.chdir(tmp_path)
    code = main(["test", "contract.yml", "--observations", "observations.jsonl", "--format", "json", "--no-artifacts"])
    assert code == 2
    assert "Invalid observation JSON: line 5:" in capsys.readouterr().out


# The child's own peak is its VmHWM, which exec starts afresh. Not ru_maxrss: on Linux a child
# inherits in it the peak of the process that spawned it, so under xdist a worker that had
# judged big suites in process made this run look like the whole-run path's (the old xfail).
_PEAK = """
import runpy, sys
sys.argv = ["behavegate", *sys.argv[1:]]
try:
    runpy.run_module("behavegate", run_name="__main__")
except SystemExit as done:
    code = done.code
with open("/proc/self/status", encoding="ascii") as status:
    peak = next(int(line.split()[1]) for line in status if line.startswith("VmHWM:"))
print("peak", code, peak // 1024)
"""


def _child_environment(folder: Path) -> dict[str, str]:
    """The run's environment, the same alone and among xdist's workers: no CI variables (no
    runner directories), no PYTHONPATH (xdist's workers put the checkout on it), and its
    spools in a folder of its own (TMPDIR) rather than a /tmp other tests fill meanwhile."""
    spools = folder / "spools"
    spools.mkdir()
    dropped = ("GITHUB_", "RUNNER_", "BEHAVEGATE_", "PYTEST_", "PYTHONPATH", "CI", "TMPDIR", "TEMP", "TMP")
    kept = {key: value for key, value in os.environ.items() if not key.startswith(dropped)}
    return {**kept, "TMPDIR": str(spools)}


def _summary_of(report: Path) -> dict[str, Any]:
    """The report's ``summary`` from its tail (its keys sort last): the 180 MiB report is never loaded."""
    with report.open("rb") as handle:
        handle.seek(max(report.stat().st_size - 65536, 0))
        text = handle.read().decode("utf-8", "replace")
    summary: dict[str, Any] = json.loads("{" + text[text.rindex('\n  "schema_version": ') :])["summary"]
    return summary


@pytest.mark.slow
def test_a_20000_row_jsonl_run_is_streamed_and_stays_within_bounded_memory(tmp_path: Path) -> None:
    make = [sys.executable, str(REPO / "bench" / "make_scale_suite.py"), str(tmp_path), "--scenarios", "20000", "--jsonl"]
    subprocess.run(make, check=True, capture_output=True)
    args = [
        "test",
        "contract.yml",
        "--observations",
        "observations.jsonl",
        "--format",
        "json",
        "--no-artifacts",
        "--max-scenarios",
        "20000",
        "--output",
        "report.json",
    ]
    program = [sys.executable, "-c", textwrap.dedent(_PEAK), *args]
    done = subprocess.run(program, cwd=tmp_path, capture_output=True, text=True, env=_child_environment(tmp_path))
    # Had it given way, the run would have held every row (the whole-run path: near 500 MB here), and says why.
    assert "gave way" not in done.stderr, done.stderr[-1000:]
    _, code, peak = done.stdout.split()[-3:]
    assert code == "1", done.stderr
    assert _summary_of(tmp_path / "report.json")["scenario_count"] == 20_000
    assert int(peak) < 150, f"peak RSS {peak} MB; stderr: {done.stderr[-500:]}"


def test_a_key_written_twice_in_an_observation_line_is_refused_by_the_whole_run_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _suite(tmp_path, 4)
    lines = (tmp_path / "observations.jsonl").read_text().splitlines()
    lines[1] = lines[1][:-1] + ', "refusal": false, "refusal": true}'
    (tmp_path / "observations.jsonl").write_text("\n".join(lines) + "\n")
    (code, text, streamed), _ = streamed_and_whole(tmp_path, monkeypatch)
    assert (code, streamed) == (2, False)
    assert "Duplicate observation mapping key: 'refusal'" in text
