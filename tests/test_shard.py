"""Sharding: the partition's properties, and a suite judged unsharded and as 3
shards + merge gives the same report (but for timing and provenance); a missing,
failed or doubled shard gives incomplete; reports of different runs are errors."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from conftest import Golden
from helpers import EXAMPLE
from helpers import SHARD_CONTRACT as CONTRACT
from helpers import SHARD_OBSERVATIONS as OBSERVATIONS
from helpers import shard_observation as _observation
from hypothesis import given
from hypothesis import strategies as st

from behavegate.cli import main
from behavegate.errors import UsageError
from behavegate.evidence.shard import assign, parse_shard

# What differs between two runs of the same evidence: when, which run, and where the evidence came from.
RUN_FIELDS = ("provenance", "harness", "evidence_digest")


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "contract.yml").write_text(CONTRACT)
    (tmp_path / "obs.json").write_text(json.dumps(OBSERVATIONS))
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("GITHUB_WORKSPACE", raising=False)
    return tmp_path


def shards(count: int, *extra: str, evidence: str = "obs.json", folder: str = "shards") -> list[str]:
    paths = []
    for index in range(1, count + 1):
        path = f"{folder}/shard-{index}.json"
        argv = ["test", "contract.yml", "--observations", evidence, "--shard", f"{index}/{count}", "--report", path, *extra]
        assert main(argv) == 0, "a shard exits 0 once its report is written"
        paths.append(path)
    return paths


def merged(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, dict[str, Any]]:
    capsys.readouterr()
    code = main(["merge", *argv, "--format", "json"])
    return code, json.loads(capsys.readouterr().out)


def comparable(report: dict[str, Any]) -> dict[str, Any]:
    shown = {key: value for key, value in report.items() if key not in RUN_FIELDS}
    shown["behavegate"] = {k: v for k, v in report["behavegate"].items() if k not in ("run_dir", "seconds")}
    return shown


# --- the partition -------------------------------------------------------------------------

pairs_and_costs = st.lists(
    st.tuples(st.tuples(st.text(min_size=1, max_size=8), st.integers(0, 9)), st.integers(0, 60)),
    max_size=60,
    unique_by=lambda item: item[0],
)


@given(pairs_and_costs, st.integers(1, 12), st.randoms(use_true_random=False))
def test_every_pair_is_in_exactly_one_shard_whatever_the_input_order(
    costs: list[tuple[tuple[str, int], int]], count: int, random: Any
) -> None:
    shards_ = assign(costs, count)
    assert len(shards_) == count
    placed = [pair for shard in shards_ for pair in shard]
    assert sorted(placed) == sorted(pair for pair, _ in costs)
    shuffled = list(costs)
    random.shuffle(shuffled)
    again = assign(shuffled, count)
    assert [sorted(shard) for shard in again] == [sorted(shard) for shard in shards_]
    assert assign(costs, count) == shards_


@given(pairs_and_costs, st.integers(1, 12))
def test_shard_loads_differ_by_at_most_one_pairs_cost(costs: list[tuple[tuple[str, int], int]], count: int) -> None:
    cost = dict(costs)
    loads = [sum(cost[pair] for pair in shard) for shard in assign(costs, count)]
    assert max(loads) - min(loads) <= max(cost.values(), default=0)


def test_the_partition_is_pinned_so_every_machine_computes_the_same() -> None:
    """Ordered by SHA-256 of the canonical pair, never by hash(): this assignment must
    never change (a change would make old shard reports unmergeable)."""
    costs = [((f"s{i}", attempt), 11 + i % 3) for i in range(6) for attempt in range(2)]
    assert assign(costs, 3) == (
        (("s0", 0), ("s0", 1), ("s2", 0), ("s5", 0)),
        (("s2", 1), ("s3", 0), ("s4", 0), ("s4", 1)),
        (("s1", 0), ("s1", 1), ("s3", 1), ("s5", 1)),
    )


@pytest.mark.parametrize("text", ["", "3", "0/3", "4/3", "1/0", "a/b", "1/257", "-1/3", "1/3/4", "²/3", "1/３"])
def test_shard_must_be_k_of_n(text: str) -> None:
    with pytest.raises(UsageError, match="--shard"):
        parse_shard(text)


# --- one run, sharded or not -----------------------------------------------------------------


def test_three_shards_merged_equal_the_unsharded_run(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    capsys.readouterr()
    whole_code = main(["test", "contract.yml", "--observations", "obs.json", "--format", "json"])
    whole = json.loads(capsys.readouterr().out)
    paths = shards(3)
    code, report = merged(capsys, *paths)
    assert (code, report["status"]) == (whole_code, whole["status"]) == (2, "incomplete")
    assert comparable(report) == comparable(whole)
    assert [g["gate"] for g in report["gates"]] == ["min_pass_rate", "latency_p95_ms"]
    assert report["scenarios"][3]["reliability"]["runs"] == 4, "the evidence's 4th attempt of delta is judged, as unsharded"
    provenance = report["provenance"]
    assert provenance["kind"] == "merged_shards" and provenance["missing"] == []
    assert [(s["index"], s["path"], s["used"]) for s in provenance["shards"]] == [
        (1, "shards/shard-1.json", True),
        (2, "shards/shard-2.json", True),
        (3, "shards/shard-3.json", True),
    ]
    # every attempt judged exactly once, by one shard
    blocks = [json.loads(Path(p).read_text())["behavegate"]["shard"] for p in paths]
    owned = [tuple(pair) for block in blocks for pair in block["pairs"]]
    assert sorted(owned) == sorted({(s["id"], a["attempt"]) for s in whole["scenarios"] for a in s["attempts"]})
    assert len(owned) == len(set(owned)) == 14
    assert {block["partition_digest"] for block in blocks} == {provenance["partition_digest"]}
    # a folder of shard reports is the same as the files
    assert comparable(merged(capsys, "shards")[1]) == comparable(report)


def test_the_merged_run_dir_replays_and_every_view_renders(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    paths = shards(3)
    out = project / "github-output"
    argv = [
        "merge",
        *paths,
        "--report",
        "m.json",
        "--junit",
        "m.xml",
        "--summary",
        "m.md",
        "--annotations",
        "--github-output",
        str(out),
    ]
    assert main(argv) == 2
    printed = capsys.readouterr()
    assert "Merged from the reports of 3 of 3 shards" in printed.out
    gates_line = next(i for i, text in enumerate((project / "contract.yml").read_text().splitlines(), 1) if "gates:" in text)
    assert f"::warning file=contract.yml,line={gates_line},title=behavegate gate min_pass_rate::" in printed.out
    assert "Merged from the reports of 3 of 3 shards" in (project / "m.md").read_text()
    assert 'name="gate min_pass_rate"' in (project / "m.xml").read_text()
    assert "status=incomplete\n" in out.read_text()
    run_dir = json.loads((project / "m.json").read_text())["behavegate"]["run_dir"]
    assert main(["replay", run_dir]) == 0
    assert main(["show", run_dir, "gamma"]) == 0


def test_a_passing_suite_with_a_missing_shard_is_incomplete_never_pass(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # A floor every present attempt clears: without the missing shard's attempts it would pass.
    paths = shards(3, "--min-pass-rate", "0.1")
    code, whole = merged(capsys, *paths)
    assert (code, whole["status"]) == (0, "pass")
    code, report = merged(capsys, paths[0], paths[2])
    assert (code, report["status"]) == (2, "incomplete")
    gate = report["gates"][-1]
    assert gate["gate"] == "shards" and gate["status"] == "incomplete"
    assert gate["message"] == "attempts are missing, so the run cannot pass: shard 2 of 3 has no report"
    assert gate["observed"] == {"missing": [2], "could_not_run": [], "given_twice": []}
    missing = [(s["id"], a["attempt"]) for s in report["scenarios"] for a in s["attempts"] if a["observation"] is None]
    assert set(missing) >= {tuple(p) for p in json.loads(Path(paths[1]).read_text())["behavegate"]["shard"]["pairs"]}


def test_a_shard_given_twice_makes_its_attempts_unused_and_the_run_incomplete(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    paths = shards(3, "--min-pass-rate", "0.1")
    Path("shards/copy-of-2.json").write_text(Path(paths[1]).read_text())
    code, report = merged(capsys, "shards")
    assert (code, report["status"]) == (2, "incomplete")
    assert report["gates"][-1]["message"] == (
        "attempts are missing, so the run cannot pass: shard 2 was given 2 times "
        "(shards/copy-of-2.json, shards/shard-2.json): its attempts are not used"
    )


def test_a_shard_that_could_not_run_is_named(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    paths = shards(3)
    argv = ["test", "contract.yml", "--observations", "absent.json", "--shard", "2/3", "--report", paths[1]]
    assert main(argv) == 2, "a shard that could not run fails its job"
    error = json.loads(Path(paths[1]).read_text())
    assert error["behavegate"]["shard"] == {"index": 2, "count": 3}
    code, report = merged(capsys, *paths)
    assert code == 2 and report["gates"][-1]["observed"]["could_not_run"] == [2]
    assert "shard 2 could not run (shards/shard-2.json: Observation file must be" in report["gates"][-1]["message"]


@pytest.mark.parametrize(
    ("contract", "evidence"),
    [
        ("contract.yml", ["--observations", "observations-regressed.json"]),  # version 1
        ("contract-v2.yml", ["--traces", "traces/regressed.jsonl"]),
    ],  # recorded traces
)
def test_version_1_and_trace_shards_merge_to_the_unsharded_report(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], contract: str, evidence: list[str]
) -> None:
    shutil.copytree(EXAMPLE, tmp_path / "example")
    monkeypatch.chdir(tmp_path / "example")
    capsys.readouterr()
    code = main(["test", contract, *evidence, "--format", "json"])
    whole = json.loads(capsys.readouterr().out)
    for index in (1, 2):
        assert main(["test", contract, *evidence, "--shard", f"{index}/2", "--report", f"s/{index}.json"]) == 0
    assert merged(capsys, "s")[0] == code
    assert comparable(merged(capsys, "s")[1]) == comparable(whole)


def test_a_merge_of_every_shard_takes_the_contract_they_carry_and_equals_the_unsharded_run(
    project: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Loading a big contract's YAML again is most of a merge's time (docs/performance.md):
    the shards carry it as data, and a merge of all of them does not read the YAML."""
    capsys.readouterr()
    main(["test", "contract.yml", "--observations", "obs.json", "--format", "json"])
    whole = json.loads(capsys.readouterr().out)
    paths = shards(3)
    blocks = [json.loads(Path(p).read_text())["behavegate"]["shard"] for p in paths]
    carried = sorted(position for block in blocks for position, _ in block["contract_data"]["scenarios"])
    assert carried == [0, 1, 2, 3], "every scenario once, in the shard that runs its first attempt"

    def no_yaml(*args: object, **kwargs: object) -> None:
        raise AssertionError("the merge loaded the contract's YAML again")

    monkeypatch.setattr("behavegate.contract.load.load_contract", no_yaml)
    assert comparable(merged(capsys, *paths)[1]) == comparable(whole)


def test_a_contract_too_big_to_carry_is_left_out_and_the_merge_loads_its_yaml(
    project: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    capsys.readouterr()
    main(["test", "contract.yml", "--observations", "obs.json", "--format", "json"])
    whole = json.loads(capsys.readouterr().out)
    monkeypatch.setattr("behavegate.commands.shard_run.CARRIED_MAX_BYTES", 1_000)
    paths = shards(3)
    carried = [json.loads(Path(p).read_text())["behavegate"]["shard"].get("contract_data") for p in paths]
    assert None in carried and all(data is None or not data["scenarios"] for data in carried), "no scenario fits"
    assert comparable(merged(capsys, *paths)[1]) == comparable(whole)


@pytest.mark.parametrize(
    ("key", "value"),
    [("sequential", {"false_fail": 0}), ("sequential", {"missed_drop": 1, "false_fail": 1}), ("runs", 10**12)],
)
def test_carried_data_no_contract_could_load_to_is_not_computed_with(
    project: Path, capsys: pytest.CaptureFixture[str], key: str, value: Any
) -> None:
    """A shard report carrying a scenario the loader refuses (a sequential design that
    divides by zero, runs no memory holds) makes the merge load the YAML: the verdicts
    the shards hold, merged as the unsharded run (not an internal error, not a merge
    killed for its memory)."""
    capsys.readouterr()
    whole_code = main(["test", "contract.yml", "--observations", "obs.json", "--format", "json"])
    whole = json.loads(capsys.readouterr().out)
    paths = shards(3)
    for path in paths:
        report = json.loads(Path(path).read_text())
        for _, scenario in report["behavegate"]["shard"]["contract_data"]["scenarios"]:
            scenario[key] = value
        Path(path).write_text(json.dumps(report))
    code, report = merged(capsys, *paths)
    assert code == whole_code and comparable(report) == comparable(whole)


@pytest.mark.parametrize(
    ("answer", "extra"),
    [
        ("hi there", ["--runs", "2"]),  # more attempts in the evidence than the cap: the rest unused
        ("no", []),
    ],  # every attempt fails: the fail boundary is reached early, in whichever shard
)
def test_a_sequential_scenario_is_decided_by_the_merge_over_every_shards_attempts(
    project: Path, capsys: pytest.CaptureFixture[str], answer: str, extra: list[str]
) -> None:
    Path("contract.yml").write_text(
        "version: 2\nagent: {model: m}\nscenarios:\n"
        "  - {id: s, prompt: hi, runs: 10, sequential: {}, expect: {response: {contains: [hi]}}}\n"
    )
    Path("obs.json").write_text(json.dumps({"version": 2, "scenarios": [_observation("s", answer)] * 10}))
    capsys.readouterr()
    whole_code = main(["test", "contract.yml", "--observations", "obs.json", "--format", "json", *extra])
    whole = json.loads(capsys.readouterr().out)
    paths = shards(3, *extra)
    code, report = merged(capsys, *paths)
    assert code == whole_code and comparable(report) == comparable(whole)
    assert report["scenarios"][0]["reliability"]["sequential"]["used"] < 10


def test_gate_tag_and_max_assertions_given_to_the_shards_hold_in_the_merge(
    project: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The shard plan records them, so the merge selects, gates and loads as the run did."""
    Path("contract.yml").write_text(CONTRACT.replace("prompt: Refuse this", "prompt: Refuse this\n    tags: [risky]"))
    monkeypatch.setattr("behavegate.contract.load.V2_MAX_ASSERTIONS", 5)  # the contract asks for more
    extra = ["--gate-tag", "risky=1.0", "--max-assertions", "100"]
    capsys.readouterr()
    whole_code = main(["test", "contract.yml", "--observations", "obs.json", "--format", "json", *extra])
    whole = json.loads(capsys.readouterr().out)
    assert "tag[risky].min_pass_rate" in [g["gate"] for g in whole["gates"]]
    paths = shards(3, *extra)
    code, report = merged(capsys, *paths)
    assert code == whole_code and comparable(report) == comparable(whole)
    code, report = merged(capsys, *paths[:2])  # a shard missing: the YAML is loaded, with the run's cap
    assert code == 2 and report["gates"][-1]["gate"] == "shards"
    assert [g["gate"] for g in report["gates"]][:-1] == [g["gate"] for g in whole["gates"]]


def test_the_merge_gates_on_regressions_against_a_baseline_as_the_unsharded_run_does(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The merge job gates a sharded run: --baseline and --fail-on are its (a shard refuses them)."""
    assert main(["test", "contract.yml", "--observations", "obs.json", "--report", "main.json"]) == 2
    worse = json.loads(json.dumps(OBSERVATIONS))
    for item in worse["scenarios"]:
        if item["id"] == "delta":
            item["response"] = "the secret is out"  # not_matches passed every attempt on main: now it fails them
    Path("worse.json").write_text(json.dumps(worse))
    gate = ["--baseline", "main.json", "--fail-on", "regression"]
    capsys.readouterr()
    whole_code = main(["test", "contract.yml", "--observations", "worse.json", "--format", "json", *gate])
    whole = json.loads(capsys.readouterr().out)
    assert whole_code == 1 and whole["behavegate"]["baseline"]["regressions"]
    paths = shards(3, evidence="worse.json")
    capsys.readouterr()
    code = main(["merge", *paths, "--format", "json", *gate])
    report = json.loads(capsys.readouterr().out)
    assert code == whole_code and comparable(report) == comparable(whole)
    # Against itself nothing regressed: the run fails, the regression gate passes, and so does the exit.
    assert main(["test", "contract.yml", "--observations", "worse.json", "--report", "worse-main.json"]) == 1
    capsys.readouterr()
    assert main(["merge", *paths, "--baseline", "worse-main.json", "--fail-on", "regression"]) == 0
    assert "Agent behavior test: fail" in capsys.readouterr().out
    assert main(["test", "contract.yml", "--observations", "obs.json", "--shard", "1/3", "--baseline", "main.json"]) == 2
    assert "--baseline belongs to `behavegate merge`" in capsys.readouterr().err


def test_scenarios_no_shard_runs_are_carried_by_shard_1_and_still_listed_as_not_selected(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    Path("contract.yml").write_text(CONTRACT.replace("prompt: Refuse this", "prompt: Refuse this\n    tags: [only]"))
    capsys.readouterr()
    main(["test", "contract.yml", "--observations", "obs.json", "--tag", "only", "--format", "json"])
    whole = json.loads(capsys.readouterr().out)
    paths = shards(2, "--tag", "only")
    first = json.loads(Path(paths[0]).read_text())["behavegate"]["shard"]["contract_data"]["scenarios"]
    assert {position for position, _ in first} == {0, 1, 2, 3}
    report = merged(capsys, *paths)[1]
    assert report["behavegate"]["skipped"] == whole["behavegate"]["skipped"] != []
    assert comparable(report) == comparable(whole)


def test_an_included_file_changed_since_the_shards_ran_is_refused_as_the_contract_is(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Each shard records the SHA-256 of every file the contract includes: a changed
    expected value there would otherwise be merged with verdicts judged on the old one."""
    head, _, rest = CONTRACT.partition("  - id: gamma\n")
    Path("contract.yml").write_text(head.replace("scenarios:\n", "include: [more.yml]\nscenarios:\n"))
    Path("more.yml").write_text("version: 2\nscenarios:\n  - id: gamma\n" + rest)
    paths = shards(3)
    blocks = [json.loads(Path(p).read_text())["behavegate"]["shard"] for p in paths]
    assert {tuple(block["included"]) for block in blocks} == {("more.yml",)}
    assert merged(capsys, *paths)[1]["provenance"]["missing"] == []
    original = Path("more.yml").read_text()
    assert "secret" in original
    for edited in (original.replace("secret", "token"), original + "# only a comment\n"):
        Path("more.yml").write_text(edited)
        for reports in (paths, paths[:2]):  # the carried contract, and the YAML loaded (a shard missing)
            assert "the files the contract includes are not the ones the shards ran (more.yml changed" in error_of(
                capsys, *reports
            )


# --- reports that are not one run's ----------------------------------------------------------


def error_of(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    capsys.readouterr()
    assert main(["merge", *argv]) == 2
    return capsys.readouterr().err


def test_a_changed_contract_is_refused(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    paths = shards(3)
    Path("contract.yml").write_text(CONTRACT + "# edited\n")
    assert "is not the one the shards ran" in error_of(capsys, *paths)


def test_shards_of_different_counts_or_plans_are_refused(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    three, two = shards(3), shards(2, folder="two")
    assert "disagree on the shard count N" in error_of(capsys, three[0], two[1])
    other = ["test", "contract.yml", "--observations", "obs.json", "--shard", "2/3", "--runs", "5", "--report", "r5.json"]
    assert main(other) == 0
    assert "differ in their partition digest" in error_of(capsys, three[0], "r5.json")


@pytest.mark.parametrize(
    ("edit", "where"),
    [
        (lambda r: r.update(behavegate={}), "behavegate.shard is missing: not a shard report"),
        (lambda r: r["behavegate"]["shard"].update(index=9), "behavegate.shard must have 1 <= index <= count"),
        (lambda r: r["behavegate"]["shard"].update(pairs=[["alpha"]]), "behavegate.shard.pairs[0] must be [scenario id"),
        (
            lambda r: r["scenarios"][0]["attempts"][0]["assertions"][0].update(status="won"),
            "scenarios[0].attempts[0].assertions[0].status must be pass, fail or incomplete",
        ),
        (
            lambda r: r["scenarios"][0]["attempts"][0].update(status="fail"),
            "scenarios[0].attempts[0].status does not follow from its assertions",
        ),
        (
            lambda r: r["scenarios"][0]["attempts"][0]["observation"].update(response=7),
            "scenarios[0].attempts[0].observation.response must be a string or null",
        ),
        (
            lambda r: r["scenarios"][0]["attempts"][0]["observation"].update(extra=1),
            "scenarios[0].attempts[0].observation.extra is unknown here (the keys are",
        ),
        (lambda r: r["scenarios"][0]["attempts"][0]["assertions"].pop(), "judged other assertions than the contract asks"),
        (lambda r: r["scenarios"].clear(), "scenarios has no entry for scenario"),
        (
            lambda r: r["scenarios"][0]["attempts"][0]["assertions"][0].update(observed=json.loads("[" * 70 + "]" * 70)),
            "scenarios[0].attempts[0].assertions[0].observed nests deeper than 64 levels",
        ),
        (lambda r: r["provenance"].update(trust="verified by me"), "provenance must be one of"),
        (lambda r: r.update(evidence_digest="x" * 100), "evidence_digest must be a SHA-256 digest"),
    ],
)
def test_a_broken_shard_report_is_an_error_naming_its_json_path(
    project: Path, capsys: pytest.CaptureFixture[str], edit: Any, where: str
) -> None:
    paths = shards(3)
    owner = next(
        p
        for p in paths
        if any(pair[0] == "alpha" and pair[1] == 1 for pair in json.loads(Path(p).read_text())["behavegate"]["shard"]["pairs"])
    )
    report = json.loads(Path(owner).read_text())
    edit(report)
    Path(owner).write_text(json.dumps(report))
    err = error_of(capsys, *paths)
    assert where in err and "Traceback" not in err


@pytest.mark.parametrize("text", ["{not json", "[]", '{"kind": "agent_behavior", "schema_version": 1}', "[" * 100_000])
def test_what_is_not_a_shard_report_is_an_error(project: Path, capsys: pytest.CaptureFixture[str], text: str) -> None:
    Path("bad.json").write_text(text)
    err = error_of(capsys, "bad.json")
    assert "shard report bad.json:" in err and "Traceback" not in err


def test_a_shard_renders_no_verdict_and_refuses_the_verdicts_views(
    project: Path, capsys: pytest.CaptureFixture[str], golden: Golden
) -> None:
    capsys.readouterr()
    out = project / "github-output"
    argv = ["test", "contract.yml", "--observations", "obs.json", "--shard", "1/3", "--no-artifacts", "--github-output", str(out)]
    assert main(argv) == 0
    golden.check("shard-table.txt", capsys.readouterr().out)
    assert out.read_text().startswith("status=shard\npassed=\nfailed=\nincomplete=\n")
    for flag in ("--junit=j.xml", "--summary=s.md", "--annotations"):
        capsys.readouterr()
        assert main([*argv[:-2], flag]) == 2
        assert "belongs to `behavegate merge` of every shard report" in capsys.readouterr().err


def test_the_merged_table_says_which_shards_it_is_made_of(
    project: Path, capsys: pytest.CaptureFixture[str], golden: Golden
) -> None:
    paths = shards(3, "--no-artifacts")
    capsys.readouterr()
    assert main(["merge", paths[0], paths[2], "--no-artifacts"]) == 2
    golden.check("merged-missing-shard-table.txt", capsys.readouterr().out)


# --- the Action: shard jobs, then one merge job ------------------------------------------------


def test_the_action_runs_shards_then_merges_them_in_a_working_directory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from behavegate.github import action

    (tmp_path / "agent").mkdir()
    (tmp_path / "agent" / "contract.yml").write_text(CONTRACT)
    (tmp_path / "agent" / "obs.json").write_text(json.dumps(OBSERVATIONS))
    monkeypatch.chdir(tmp_path)
    base = {"GITHUB_WORKSPACE": str(tmp_path), "INPUT_WORKING-DIRECTORY": "agent", "INPUT_MIN-PASS-RATE": "0.1"}
    for index in (1, 2, 3):
        output = tmp_path / f"output-{index}.txt"
        step = {
            **base,
            "GITHUB_OUTPUT": str(output),
            "GITHUB_STEP_SUMMARY": str(tmp_path / f"summary-{index}.md"),
            "INPUT_CONTRACT": "contract.yml",
            "INPUT_OBSERVATIONS": "obs.json",
            "INPUT_SHARD": f"{index}/3",
            "INPUT_REPORT": f"shards/shard-{index}.json",
        }
        for name, value in step.items():  # the runner sets them in the process's environment
            monkeypatch.setenv(name, value)
        assert action.main(step) == 0
        assert "status=shard\n" in output.read_text() and f"report=agent/shards/shard-{index}.json\n" in output.read_text()
        assert not (tmp_path / "agent" / "behavegate-junit.xml").exists()
        assert not (tmp_path / f"summary-{index}.md").exists(), "a shard job writes no job summary"
    monkeypatch.chdir(tmp_path)
    output = tmp_path / "output-merge.txt"
    merge = {
        **base,
        "GITHUB_OUTPUT": str(output),
        "GITHUB_STEP_SUMMARY": str(tmp_path / "summary-merge.md"),
        "INPUT_MERGE": "shards",
    }
    del merge["INPUT_MIN-PASS-RATE"]
    for name in ("INPUT_CONTRACT", "INPUT_OBSERVATIONS", "INPUT_SHARD", "INPUT_REPORT", "INPUT_MIN-PASS-RATE"):
        monkeypatch.delenv(name)
    for name, value in merge.items():
        monkeypatch.setenv(name, value)
    assert action.main(merge) == 0
    assert "status=pass\n" in output.read_text()
    assert "behavegate: pass" in (tmp_path / "summary-merge.md").read_text()
    assert (tmp_path / "agent" / "behavegate-junit.xml").exists()
    with pytest.raises(action.ActionInputError, match="merge combines shard reports; observations belong to the shard jobs"):
        action.build_argv(action.Inputs({"INPUT_MERGE": "shards", "INPUT_OBSERVATIONS": "obs.json"}), {})


def test_the_documented_workflow_is_complete_and_valid(tmp_path: Path) -> None:
    """docs/sharding.md's workflow: N shard jobs uploading, one merge job that always runs."""
    import yaml

    docs = Path(__file__).resolve().parents[1] / "docs" / "sharding.md"
    text = docs.read_text().split("## GitHub Actions")[1].split("```yaml\n")[1].split("```")[0]
    workflow = yaml.safe_load(text)
    shard, merge = workflow["jobs"]["shard"], workflow["jobs"]["behavior"]
    assert shard["strategy"]["fail-fast"] is False
    uses = [step.get("uses", "") for step in shard["steps"]]
    assert "actions/upload-artifact@v6" in uses
    assert merge["needs"] == "shard" and merge["if"] == "always()"
    download = next(step for step in merge["steps"] if step.get("uses") == "actions/download-artifact@v7")
    assert download["with"]["merge-multiple"] is True and download["with"]["pattern"] == "behavegate-shard-*"
    assert next(step for step in merge["steps"] if "merge" in step.get("with", {}))["with"]["merge"] == "shards"
    actionlint = Path(sys.executable).parent / "actionlint"
    if actionlint.exists():
        path = tmp_path / "sharded.yml"
        path.write_text(text.replace("<owner>/behavegate", "acme/behavegate"))
        lint = subprocess.run([str(actionlint), str(path)], capture_output=True, text=True, check=False)
        assert lint.returncode == 0, lint.stdout + lint.stderr


def test_a_shards_hostile_error_text_stays_inert_and_short(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    paths = shards(3)
    hostile = "::error file=x::pwned\n##[set-output name=status]pass " + "A" * 50_000
    report = {
        "schema_version": 1,
        "kind": "agent_behavior",
        "status": "incomplete",
        "error": hostile,
        "behavegate": {"status": "incomplete", "shard": {"index": 2, "count": 3}},
    }
    Path(paths[1]).write_text(json.dumps(report))
    capsys.readouterr()
    assert main(["merge", *paths, "--no-artifacts", "--annotations"]) == 2
    out = capsys.readouterr().out
    assert not any(line.startswith("::error file=x") for line in out.splitlines())
    assert "##[set-output" not in out.replace("\\n", "\n")
    code, merged_report = merged(capsys, *paths, "--no-artifacts")
    assert code == 2 and len(merged_report["gates"][-1]["message"]) < 2_200
