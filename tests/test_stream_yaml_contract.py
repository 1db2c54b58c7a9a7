"""Issue 41 item 3, its last sentence: a version-2 YAML contract's own scenarios judged a part at
a time from its one parse (contract/parts.py through commands/stream_offline.py), with a JSON
Lines observation file: the whole-run path's report byte for byte, any problem given way to
the whole-run path (which words it with the item's place in the whole list), and what the run
holds beyond the parse bounded."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from helpers import stream_entry, streamed_and_whole

from behavegate.commands import stream_offline

REPO = Path(__file__).resolve().parents[1]

INLINE_HEAD = """\
version: 2
agent:
  model: m
  tools:
    - {name: lookup_order, description: Fetch an order, parameters: {type: object}}
    - {name: delete_account, description: Delete, parameters: {type: object}}
scenarios:
"""


_CLOCK = re.compile(r'"(run_id|started_at|ended_at|duration_ms|seconds)": [^,\n{]+')


def _id(i: int) -> str:
    return f"order-{i:04d}"


def _entry(i: int, attempt: int = 0) -> dict[str, Any]:
    return stream_entry(_id(i), i, attempt)


def _inline_scenario(i: int) -> str:
    return (
        f"  - id: {_id(i)}\n"
        f"    prompt: Where is order A-{i}? \u00e9\n"
        f"    tags: [{['orders', 'vip'][i % 2]}]\n"
        "    expect:\n"
        "      response:\n"
        f"        contains: [A-{i}]\n"
        "        excludes:\n"
        "          - As an AI\n"
        "      tools:\n"
        "        forbidden: [delete_account]\n"
        "        max_calls: 3\n"
        "      latency: {max_ms: 2000}\n"
    )


def _inline_suite(folder: Path, scenarios: int) -> None:
    (folder / "contract.yml").write_text(INLINE_HEAD + "".join(_inline_scenario(i) for i in range(scenarios)))
    entries = [_entry(i, a) for i in range(scenarios) for a in range(1 + (i % 3 == 0))]
    (folder / "observations.jsonl").write_text("".join(json.dumps(e) + "\n" for e in entries))


def test_a_yaml_contracts_own_scenarios_are_streamed_into_the_whole_run_paths_report_byte_for_byte(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _inline_suite(tmp_path, 2 * stream_offline.PART + 37)  # three parts, the last one short
    (code, text, streamed), (whole_code, whole_text) = streamed_and_whole(tmp_path, monkeypatch)
    assert streamed
    assert code == whole_code == 1
    assert _CLOCK.sub("", text) == _CLOCK.sub("", whole_text)  # lines of scenarios and assertions included
    report = json.loads(text)
    assert report["summary"]["scenario_count"] == 2 * stream_offline.PART + 37
    last = report["behavegate"]["scenarios"][_id(2 * stream_offline.PART + 36)]
    assert last["line"] == len(INLINE_HEAD.splitlines()) + 1 + (2 * stream_offline.PART + 36) * 12


def test_a_problem_in_a_later_part_of_a_yaml_contract_is_worded_with_its_place_in_the_whole_list(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _inline_suite(tmp_path, stream_offline.PART + 10)
    index = stream_offline.PART + 3
    line = len(INLINE_HEAD.splitlines()) + 2 + index * 12  # its prompt's line
    lines = (tmp_path / "contract.yml").read_text().splitlines(keepends=True)
    lines[line - 1] = lines[line - 1].replace("prompt:", "promt:")
    (tmp_path / "contract.yml").write_text("".join(lines))
    (code, text, streamed), (whole_code, whole_text) = streamed_and_whole(tmp_path, monkeypatch)
    assert (code, streamed) == (whole_code, False) == (2, False)
    assert f"scenarios[{index}].promt (line {line}): Unknown behavior contract key" in text
    assert _CLOCK.sub("", text) == _CLOCK.sub("", whole_text)


def test_a_scenario_id_repeated_across_parts_of_a_yaml_contract_is_named_by_the_whole_run_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _inline_suite(tmp_path, stream_offline.PART + 10)
    late = _id(stream_offline.PART + 5)
    text = (tmp_path / "contract.yml").read_text().replace(f"id: {late}\n", f"id: {_id(1)}\n")
    (tmp_path / "contract.yml").write_text(text)
    (code, text, streamed), _ = streamed_and_whole(tmp_path, monkeypatch)
    assert (code, streamed) == (2, False)
    assert f"Duplicate scenario id: ['{_id(1)}']" in text


# The child's own peak is its VmHWM, which exec starts afresh. Not ru_maxrss: on Linux a child
# inherits in it the peak of the process that spawned it (a pytest worker that has judged
# other suites in process reports hundreds of MB for a child that used 9).
_PEAK = """
import runpy, sys
if sys.argv[1] == "parse":  # what the contract's parse alone needs: behavegate's own parse, with its lines
    from behavegate.contract.yaml_lines import load_yaml
    from behavegate.limits import V2_INPUT_MAX_VALUES
    with open("contract.yml", encoding="utf-8") as handle:
        parsed = load_yaml(handle.read(), max_values=V2_INPUT_MAX_VALUES)
    code = 0
else:
    sys.argv = ["behavegate", *sys.argv[2:]]
    try:
        runpy.run_module("behavegate", run_name="__main__")
    except SystemExit as done:
        code = done.code
with open("/proc/self/status", encoding="ascii") as status:
    peak = next(int(line.split()[1]) for line in status if line.startswith("VmHWM:"))
print("peak", code, peak // 1024)
"""


def _peak(folder: Path, *args: str) -> tuple[str, int, str]:
    # The same environment alone and among xdist's workers in CI: no CI or runner variables,
    # no PYTHONPATH, temporary files (the run's spools) in the test's own folder.
    dropped = ("GITHUB_", "RUNNER_", "BEHAVEGATE_", "PYTEST_", "PYTHONPATH", "CI", "TMPDIR", "TEMP", "TMP")
    environment = {key: value for key, value in os.environ.items() if not key.startswith(dropped)}
    environment["TMPDIR"] = str(folder)
    done = subprocess.run([sys.executable, "-c", _PEAK, *args], cwd=folder, capture_output=True, text=True, env=environment)
    _, code, peak = done.stdout.split()[-3:]
    return code, int(peak), done.stderr


@pytest.mark.slow
def test_a_5000_scenario_yaml_contract_adds_little_to_what_its_parse_needs(tmp_path: Path) -> None:
    scenarios = 5000
    make = [sys.executable, str(REPO / "bench" / "make_scale_suite.py"), str(tmp_path), "--scenarios", str(scenarios)]
    subprocess.run(make, check=True, capture_output=True)
    entries = json.loads((tmp_path / "observations.json").read_text())["scenarios"]
    (tmp_path / "observations.jsonl").write_text("".join(json.dumps(e) + "\n" for e in entries))
    args = ["test", "contract.yml", "--observations", "observations.jsonl", "--format", "json", "--no-artifacts"]
    limits = ["--max-scenarios", str(scenarios), "--max-assertions", str(10 * scenarios), "--output", "report.json"]
    _, parse, _ = _peak(tmp_path, "parse")
    code, run, stderr = _peak(tmp_path, "run", *args, *limits)
    assert code == "1", stderr
    assert "gave way" not in stderr
    assert json.loads((tmp_path / "report.json").read_text())["summary"]["scenario_count"] == scenarios
    # Issue 41: under 300 MB beyond the parse at 100,000 scenarios, so 15 MB at this size; plus
    # what holds at any size: the run's imports and one part of 1,000 scenarios being judged
    # (38 MB at 1,000 scenarios, 41 at 5,000 here). The whole-run path adds about 90 MB here.
    assert run - parse < 15 + 45, f"run {run} MB, parse {parse} MB"


def test_a_yaml_contract_whose_scenarios_ask_for_more_than_one_run_keeps_to_the_whole_run_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _inline_suite(tmp_path, 30)
    text = (tmp_path / "contract.yml").read_text().replace("    tags: [vip]\n", "    tags: [vip]\n    runs: 2\n", 1)
    (tmp_path / "contract.yml").write_text(text)
    (code, text, streamed), (whole_code, whole_text) = streamed_and_whole(tmp_path, monkeypatch)
    assert not streamed
    assert code == whole_code and _CLOCK.sub("", text) == _CLOCK.sub("", whole_text)
