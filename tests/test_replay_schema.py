"""Replay reads a run directory's files by their schema (report/run_schema.py) before it
takes them apart: a missing or mistyped part is named by file and JSON path, and no
edit of any file makes a check stumble ("unexpected structure")."""

from __future__ import annotations

import copy
import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest
from helpers import EXAMPLE
from helpers import SHARD_CONTRACT as CONTRACT
from helpers import SHARD_OBSERVATIONS as OBSERVATIONS
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from behavegate.cli import main
from behavegate.report.artifacts import render_event, render_json
from behavegate.report.layout import EVENTS, RESULTS, STATE, SUMMARY
from behavegate.report.replay import validate_run


def _run(folder: Path, contract: str, observations: str) -> Path:
    (folder / "contract.yml").write_text(contract)
    (folder / "obs.json").write_text(observations)
    cwd = Path.cwd()
    os.chdir(folder)
    try:
        main(["test", "contract.yml", "--observations", "obs.json", "--report", "r.json"])
        run_dir = folder / str(json.loads((folder / "r.json").read_text())["behavegate"]["run_dir"])
    finally:
        os.chdir(cwd)
    assert validate_run(run_dir) == []
    return run_dir


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    v1 = _run(
        tmp_path_factory.mktemp("v1"),
        (EXAMPLE / "contract.yml").read_text(),
        (EXAMPLE / "observations-regressed.json").read_text(),
    )
    v2 = _run(tmp_path_factory.mktemp("v2"), CONTRACT, json.dumps(OBSERVATIONS))
    return {"v1": v1, "v2": v2}


def test_every_missing_or_mistyped_part_is_named_by_file_and_json_path_in_path_order(
    runs: dict[str, Path], tmp_path: Path
) -> None:
    run_dir = Path(shutil.copytree(runs["v2"], tmp_path / "run"))
    state = json.loads((run_dir / STATE).read_text())
    del state["steps"][1]["started_at"]
    state["budget"]["max_steps"] = "25"
    (run_dir / STATE).write_text(render_json(state))
    issues = validate_run(run_dir)
    assert [(i.code, i.message) for i in issues] == [
        ("artifact_structure_invalid", "state.json: budget.max_steps: must be a whole number, got '25'"),
        ("artifact_structure_invalid", "state.json: steps[1].started_at: is missing"),
    ]


def test_an_unknown_event_is_named_by_its_line(runs: dict[str, Path], tmp_path: Path) -> None:
    run_dir = Path(shutil.copytree(runs["v1"], tmp_path / "run"))
    lines = (run_dir / EVENTS).read_text().splitlines(keepends=True)
    event = json.loads(lines[1])
    event["event"] = "step_paused"
    lines[1] = render_event(event)
    (run_dir / EVENTS).write_text("".join(lines))
    message = validate_run(run_dir)[0].message
    assert message.startswith("events.jsonl line 2: event: must be ") and "got 'step_paused'" in message


VALUES = st.one_of(st.none(), st.booleans(), st.integers(-2, 2), st.sampled_from(["", "x", "pass"]), st.just([]), st.just({}))


def _nodes(value: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    found = [path]
    if isinstance(value, dict):
        for key, item in value.items():
            found.extend(_nodes(item, (*path, key)))
    elif isinstance(value, list):
        for index, item in enumerate(value[:3]):
            found.extend(_nodes(item, (*path, index)))
    return found


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data(), which=st.sampled_from(["v1", "v2"]), name=st.sampled_from([EVENTS, STATE, SUMMARY, RESULTS]))
def test_no_edit_of_any_file_makes_a_check_stumble(
    runs: dict[str, Path], tmp_path_factory: pytest.TempPathFactory, data: Any, which: str, name: str
) -> None:
    run_dir = Path(shutil.copytree(runs[which], tmp_path_factory.mktemp("edit") / "run"))
    text = (run_dir / name).read_text()
    documents = [json.loads(line) for line in text.splitlines()] if name == EVENTS else [json.loads(text)]
    document = data.draw(st.sampled_from(documents))
    original = copy.deepcopy(document)
    for _ in range(data.draw(st.integers(1, 3))):
        path = data.draw(st.sampled_from(_nodes(document)[1:] or [()]))
        if not path:
            break
        parent = document
        for step in path[:-1]:
            parent = parent[step]
        if isinstance(parent, dict) and data.draw(st.booleans()):
            del parent[path[-1]]
        else:
            parent[path[-1]] = data.draw(VALUES)
    written = "".join(render_event(e) for e in documents) if name == EVENTS else render_json(document)
    (run_dir / name).write_text(written)
    issues = validate_run(run_dir)
    assert issues or document == original
    assert not [i for i in issues if i.message.startswith("unexpected structure")], issues
