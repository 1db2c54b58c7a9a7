"""A bounded fuzzer through the whole CLI: mutated contracts, observation files
and endpoint bodies never end in an internal error, and a bad string spoils one
scenario, not the run. Derandomized in CI (see conftest); under a minute."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from helpers import EXAMPLE
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from behavegate.cli import main
from behavegate.evidence.chat import EndpointError, decode_body
from behavegate.limits import MAX_EVIDENCE_QUANTITY

FUZZ = settings(
    max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow]
)
CONTRACT = (EXAMPLE / "contract.yml").read_text(encoding="utf-8")
GOOD = json.loads((EXAMPLE / "observations-good.json").read_text(encoding="utf-8"))

# Things that broke a run before: YAML tags that fail to convert, impossible
# dates, huge integers, unpaired surrogate escapes, control characters.
HOSTILE_SCALARS = [
    "!!int abc",
    "2001-02-30",
    "0x_",
    "1" * 5000,
    "!!float xyz",
    "!!timestamp 2001-13-01",
    '!!binary "###"',
    '"\\uD800"',
    '"a\\udfffb"',
    '"\\x00"',
    '"::error::x"',
    '"##[set-output name=a;]b"',
    "!!python/object:os.system x",
    "!!set {a, b}",
    "!!omap [a: 1]",
    '"\\u2028::warning::y"',
    "&a x",
    "*a",
    "~",
    "[",
    "{",
    "'",
    "1e-12",
    ".inf",
    "-.nan",
]
HOSTILE_JSON: list[object] = [
    "\ud800",
    "a\udfffb",
    "\x00",
    "::error::x",
    "##[error]y",
    "\u2028::notice::z",
    "\U0001f600",
    "x" * 300,
    None,
    1e308,
    -1,
    {},
    [],
    10**400,  # past a float: an OverflowError once it was priced or divided (issue 36)
    -(10**400),
]


def _lines() -> list[int]:
    return [i for i, line in enumerate(CONTRACT.splitlines()) if ": " in line and not line.strip().startswith("#")]


def _run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    code = main(argv)
    captured = capsys.readouterr()
    return code, captured.out + captured.err


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    shutil.copy(EXAMPLE / "observations-good.json", tmp_path / "obs.json")
    return tmp_path


@FUZZ
@given(line=st.sampled_from(_lines()), scalar=st.sampled_from(HOSTILE_SCALARS))
def test_a_hostile_scalar_anywhere_in_a_contract_is_a_located_error_or_a_verdict(
    line: int, scalar: str, project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lines = CONTRACT.splitlines()
    key, _, _ = lines[line].partition(": ")
    lines[line] = f"{key}: {scalar}"
    (project / "c.yml").write_text("\n".join(lines) + "\n", encoding="utf-8")
    code, log = _run(["test", "c.yml", "--observations", "obs.json", "--no-artifacts", "--report", "r.json"], capsys)
    assert "internal error" not in log
    assert code in (0, 1, 2)
    assert json.loads((project / "r.json").read_text(encoding="utf-8"))["status"] in {"pass", "fail", "incomplete"}


def _paths(value: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    found = [path]
    if isinstance(value, dict):
        for key, child in value.items():
            found += _paths(child, (*path, key))
    elif isinstance(value, list):
        for index, child in enumerate(value):
            found += _paths(child, (*path, index))
    return found


OBSERVATION_PATHS = [p for p in _paths(GOOD) if len(p) >= 3]


@FUZZ
@given(path=st.sampled_from(OBSERVATION_PATHS), value=st.sampled_from(HOSTILE_JSON), as_key=st.booleans())
def test_a_hostile_value_or_key_in_an_observation_file_never_ends_the_run(
    path: tuple[Any, ...], value: Any, as_key: bool, project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    document = json.loads(json.dumps(GOOD))
    parent = document
    for step in path[:-1]:
        parent = parent[step]
    if as_key and isinstance(parent, dict) and isinstance(value, str):
        parent[value] = parent.pop(path[-1])
    else:
        parent[path[-1]] = value
    (project / "o.json").write_text(json.dumps(document), encoding="utf-8")
    shutil.copy(EXAMPLE / "contract.yml", project / "contract.yml")
    argv = ["test", "contract.yml", "--observations", "o.json", "--report", "r.json", "--junit", "j.xml", "--summary", "s.md"]
    code, log = _run(argv, capsys)
    assert "internal error" not in log
    assert code in (0, 1, 2)
    report = json.loads((project / "r.json").read_text(encoding="utf-8"))
    if "scenarios" in report and isinstance(value, str) and "\ud800" <= value[:1] <= "\udfff":
        # one bad string, one incomplete scenario: every other scenario is still judged
        statuses = [s["status"] for s in report["scenarios"]]
        assert statuses.count("incomplete") <= 1 and len(statuses) == 5


bodies = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats()
    | st.text(max_size=20)
    | st.sampled_from(HOSTILE_JSON[:6])
    | st.sampled_from([10**400, 2**64, -(2**63)]),
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(
            st.sampled_from(
                [
                    "choices",
                    "message",
                    "content",
                    "tool_calls",
                    "function",
                    "name",
                    "arguments",
                    "finish_reason",
                    "refusal",
                    "sources",
                    "usage",
                    "total_tokens",
                    "id",
                    "x",
                ]
            ),
            inner,
            max_size=5,
        )
    ),
    max_leaves=25,
)


@settings(max_examples=400, deadline=None)
@given(bodies)
def test_any_endpoint_body_is_an_observation_or_an_endpoint_error(body: Any) -> None:
    for raw in (json.dumps(body).encode(), json.dumps({"choices": [{"message": body, "finish_reason": "stop"}]}).encode()):
        try:
            observation = decode_body(raw, "s")
        except EndpointError:
            continue
        json.dumps(observation.as_dict(), ensure_ascii=False).encode("utf-8")  # every field can be written
        counts = (observation.total_tokens, observation.input_tokens, observation.output_tokens)
        assert all(n is None or 0 <= n <= MAX_EVIDENCE_QUANTITY for n in counts)  # never priced past a float


def test_a_surrogate_in_one_observation_leaves_the_others_judged(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    document = json.loads(json.dumps(GOOD))
    document["scenarios"][0]["response"] = "bad \ud800 text"
    document["scenarios"][0]["tool_calls"][0]["arguments"] = {"order_id": "\udfff"}
    (project / "o.json").write_text(json.dumps(document), encoding="utf-8")
    shutil.copy(EXAMPLE / "contract.yml", project / "contract.yml")
    code, log = _run(["test", "contract.yml", "--observations", "o.json", "--report", "r.json"], capsys)
    report = json.loads((project / "r.json").read_text(encoding="utf-8"))
    statuses = {s["id"]: s["status"] for s in report["scenarios"]}
    assert code == 2 and "internal error" not in log
    assert statuses.pop("order-status") == "incomplete"
    assert set(statuses.values()) == {"pass"}
    assert "not valid Unicode" in log


@pytest.mark.parametrize(
    "url", ["http://127.0.0.1:9/v1\nx", "http://127.0.0.1:9/v1\tx", "http://127.0.0.1:9/a b", "http://127.0.0.1:9/é"]
)
def test_an_endpoint_url_with_control_characters_is_a_clear_error(
    url: str, project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    shutil.copy(EXAMPLE / "contract.yml", project / "contract.yml")
    code, log = _run(["test", "contract.yml", "--endpoint", url, "--no-artifacts"], capsys)
    assert code == 2
    assert "internal error" not in log and "printable ASCII" in log
