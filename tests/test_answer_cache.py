"""--cache DIR: answers replayed by the exact request and attempt index, read as live
answers are (the same verdicts), refused wherever a CI verdict is made, and a damaged
entry is a miss, never a crash."""

from __future__ import annotations

import base64
import gzip
import json
from pathlib import Path
from typing import Any, ClassVar

import pytest
from fake_agent import Reply, Request, json_reply, serve, sse_reply

from behavegate.cli import main
from behavegate.evidence.answer_cache import read_entry, request_key
from behavegate.files import Place

CONTRACT = """
version: 2
agent: {model: m}
scenarios:
  - id: greets
    prompt: say hello
    runs: 3
    expect: {response: {contains: [hello]}}
  - id: polite
    prompt: say sorry
    expect: {response: {contains: [sorry]}, latency: {max_ms: 60000}}
"""


class Numbered:
    """Answers "hello N": N counts the requests, so a replayed answer is told from a new one."""

    requests: ClassVar[int] = 0
    gzipped: ClassVar[bool] = False
    seen_auth: ClassVar[list[str]] = []

    @staticmethod
    def answer(request: Request) -> Reply:
        Numbered.requests += 1
        Numbered.seen_auth.append(request.header("Authorization"))
        answer = {"choices": [{"message": {"content": f"hello {Numbered.requests}"}, "finish_reason": "stop"}]}
        if not Numbered.gzipped:
            return json_reply(answer)
        return json_reply(gzip.compress(json.dumps(answer).encode()), headers={"Content-Encoding": "gzip"})


@pytest.fixture
def agent(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    monkeypatch.chdir(tmp_path)
    for name in ("CI", "GITHUB_ACTIONS"):
        monkeypatch.delenv(name, raising=False)
    (tmp_path / "c.yml").write_text(CONTRACT)
    Numbered.requests, Numbered.gzipped, Numbered.seen_auth = 0, False, []
    with serve(Numbered.answer) as url:
        yield url


def _run(url: str, capsys: pytest.CaptureFixture[str], *more: str) -> tuple[int, dict[str, Any]]:
    code = main(["test", "c.yml", "--endpoint", url, "--no-artifacts", "--cache", "answers", "--format", "json", *more])
    return code, json.loads(capsys.readouterr().out)


def _answers(data: dict[str, Any]) -> dict[str, list[Any]]:
    return {s["id"]: [a["observation"].get("response") for a in s["attempts"]] for s in data["scenarios"]}


def _verdicts(data: dict[str, Any]) -> list[Any]:
    return [(s["id"], s["status"], [a["status"] for a in s["attempts"]]) for s in data["scenarios"]]


def test_a_miss_asks_the_agent_and_stores_each_attempt_apart(agent: str, capsys: pytest.CaptureFixture[str]) -> None:
    code, data = _run(agent, capsys)
    assert code == 1 and Numbered.requests == 4  # "polite" wants "sorry": a failure, cached like any answer
    assert len(list(Path("answers").glob("*.answer"))) == 4  # runs: 3 kept three independent entries
    assert sorted(a for answers in _answers(data).values() for a in answers) == [f"hello {n}" for n in range(1, 5)]
    cache = data["provenance"]["answer_cache"]
    assert cache["answers_from_cache"] == 0 and cache["answers"] == 4 and cache["stored"] == 4


def test_a_hit_replays_each_attempts_own_answer_without_asking(agent: str, capsys: pytest.CaptureFixture[str]) -> None:
    _, first = _run(agent, capsys)
    Numbered.requests = 0
    _, again = _run(agent, capsys)
    assert Numbered.requests == 0
    assert _answers(again) == _answers(first)  # attempt by attempt: repeats stay independent
    assert again["provenance"]["answer_cache"]["answers_from_cache"] == 4
    assert any(note.startswith("answers from cache: 4 of 4") for note in again["behavegate"]["notes"])


def test_verdicts_from_the_cache_are_the_live_verdicts(agent: str, capsys: pytest.CaptureFixture[str]) -> None:
    Numbered.gzipped = True  # recorded as sent: decoded by the same reader on replay
    live_code, live = _run(agent, capsys)
    cached_code, cached = _run(agent, capsys)
    assert (cached_code, _verdicts(cached)) == (live_code, _verdicts(live))
    # A replayed answer took no time now: the attempt is timed as its answer took when recorded.
    folder = Place(Path.cwd(), ("answers",))
    recorded = [entry[3] for path in Path("answers").glob("*.answer") if (entry := read_entry(folder, path.stem))]
    timed = [a["observation"]["latency_ms"] for s in cached["scenarios"] for a in s["attempts"]]
    assert len(recorded) == len(timed) == 4
    assert all(any(0 <= ms - took < 5000 for took in recorded) for ms in timed)


def test_every_view_says_how_many_answers_came_from_the_cache(
    agent: str, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    _run(agent, capsys)
    views = ["--summary", "s.md", "--junit", "j.xml", "--html", "r.html"]
    main(["test", "c.yml", "--endpoint", agent, "--no-artifacts", "--cache", "answers", *views])
    table = capsys.readouterr().out
    for text in (table, *((tmp_path / name).read_text() for name in ("s.md", "j.xml", "r.html"))):
        assert "answers from cache: 4 of 4" in text


def test_the_key_is_the_request_and_attempt_never_a_header(
    agent: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AGENT_TOKEN", "s3cret-token-value")
    _run(agent, capsys, "--auth-env", "AGENT_TOKEN")
    assert Numbered.seen_auth[0] == "Bearer s3cret-token-value"
    for path in Path("answers").iterdir():
        assert b"s3cret" not in path.read_bytes()
    monkeypatch.setenv("AGENT_TOKEN", "another-token")
    Numbered.requests = 0
    _run(agent, capsys, "--auth-env", "AGENT_TOKEN")
    assert Numbered.requests == 0  # another token, the same requests: the same entries


def test_the_key_reads_the_body_as_json_and_keeps_the_attempt() -> None:
    url = "http://user:pw@127.0.0.1:1/v1/chat/completions"
    key = request_key("POST", url, b'{"a": 1, "b": 2}', 0)
    assert key == request_key("post", "http://127.0.0.1:1/v1/chat/completions", b'{"b":2,"a":1}', 0)
    assert key != request_key("POST", url, b'{"a": 1, "b": 2}', 1)
    assert key != request_key("POST", url, b'{"a": 1, "b": 3}', 0)


def _edited(data: bytes, **changes: Any) -> bytes:
    return json.dumps({**json.loads(data), **changes}).encode()


@pytest.mark.parametrize(
    "damage",
    [
        lambda data: data[: len(data) // 2],  # cut short
        lambda data: b"not json" + data,
        lambda data: _edited(data, body_base64=base64.b64encode(b'{"choices": []}').decode()),  # not its digest
        lambda data: _edited(data, body_base64="%%%"),
        lambda data: _edited(data, key="0" * 64),  # another request's entry under this name
        lambda data: _edited(data, status=500),
        lambda data: b"",
        lambda data: data + b"x" * (3 * 1024 * 1024),  # past the size cap
    ],
    ids=["truncated", "garbage", "tampered-body", "not-base64", "other-key", "not-2xx", "empty", "oversized"],
)
def test_a_damaged_entry_is_a_miss_and_is_stored_again(agent: str, capsys: pytest.CaptureFixture[str], damage: Any) -> None:
    _run(agent, capsys)
    for path in Path("answers").glob("*.answer"):
        path.write_bytes(damage(path.read_bytes()))
    Numbered.requests = 0
    code, data = _run(agent, capsys)
    assert code == 1 and Numbered.requests == 4  # each asked again, the run judged as before
    assert data["provenance"]["answer_cache"]["stored"] == 4
    Numbered.requests = 0
    _run(agent, capsys)
    assert Numbered.requests == 0


def test_an_answer_that_was_not_read_whole_is_not_stored(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    for name in ("CI", "GITHUB_ACTIONS"):
        monkeypatch.delenv(name, raising=False)
    (tmp_path / "c.yml").write_text(CONTRACT)

    def broken(request: Request) -> Reply:
        return json_reply(b"{not json")

    with serve(broken) as url:
        code = main(["test", "c.yml", "--endpoint", url, "--no-artifacts", "--cache", "answers"])
    assert code == 2 and not list(Path("answers").glob("*.answer"))


@pytest.mark.parametrize("variable", ["CI", "GITHUB_ACTIONS"])
def test_refused_in_a_ci_environment(
    agent: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, variable: str
) -> None:
    monkeypatch.setenv(variable, "true")
    code = main(["test", "c.yml", "--endpoint", agent, "--no-artifacts", "--cache", "answers"])
    assert code == 2 and Numbered.requests == 0
    assert f"--cache is refused under {variable}=true: a CI verdict never rests on a cached answer" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("flags", "named"),
    [
        (["--baseline", "base.json"], "--baseline"),
        (["--shard", "1/2"], "--shard"),
        (["--github-output", "out.txt"], "--github-output"),
        (["--annotations"], "--annotations"),
    ],
)
def test_refused_with_a_gate_that_makes_a_ci_verdict(
    agent: str, capsys: pytest.CaptureFixture[str], flags: list[str], named: str, tmp_path: Path
) -> None:
    _run(agent, capsys)  # a baseline report to name
    main(["test", "c.yml", "--endpoint", agent, "--no-artifacts", "--report", "base.json"])
    capsys.readouterr()
    Numbered.requests = 0
    code = main(["test", "c.yml", "--endpoint", agent, "--no-artifacts", "--cache", "answers", *flags])
    assert code == 2 and Numbered.requests == 0
    assert f"--cache cannot be combined with {named}: a CI verdict never rests on a cached answer" in capsys.readouterr().err


def test_refused_with_recorded_evidence(agent: str, capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    (tmp_path / "obs.json").write_text("{}")
    code = main(["test", "c.yml", "--observations", "obs.json", "--cache", "answers"])
    assert code == 2
    assert "--cache" in capsys.readouterr().err


def test_the_folder_follows_the_output_rule(agent: str, capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    outside = tmp_path.parent / f"{tmp_path.name}-outside"
    outside.mkdir()
    (tmp_path / "linked").symlink_to(outside)
    for folder, problem in ((str(outside), "is outside the project"), ("linked/answers", "must not use symlink parent")):
        code = main(["test", "c.yml", "--endpoint", agent, "--no-artifacts", "--cache", folder])
        assert code == 2 and Numbered.requests == 0
        assert problem in capsys.readouterr().err
    assert not list(outside.iterdir())


class Streaming:
    """Answers as an event stream, sent unasked (a version-2 contract reads it by its Content-Type)."""

    requests: ClassVar[int] = 0

    @staticmethod
    def answer(request: Request) -> Reply:
        Streaming.requests += 1
        deltas = [{"content": "hel"}, {"content": f"lo {Streaming.requests}"}]
        events = [json.dumps({"choices": [{"delta": d, "finish_reason": None}]}) for d in deltas]
        events.append(json.dumps({"choices": [{"delta": {}, "finish_reason": "stop"}]}))
        return sse_reply("".join(f"data: {event}\n\n" for event in [*events, "[DONE]"]))


def test_a_streamed_answer_is_replayed_through_the_stream_reader(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    for name in ("CI", "GITHUB_ACTIONS"):
        monkeypatch.delenv(name, raising=False)
    (tmp_path / "c.yml").write_text(CONTRACT)
    with serve(Streaming.answer) as url:
        live_code, live = _run(url, capsys)
        Streaming.requests = 0
        cached_code, cached = _run(url, capsys)
    assert Streaming.requests == 0 and live_code == cached_code == 1
    assert _answers(cached) == _answers(live) and _verdicts(cached) == _verdicts(live)
    assert sorted(a for answers in _answers(live).values() for a in answers) == [f"hello {n}" for n in range(1, 5)]


SERVED_TOOLS = """version: 2
agent:
  model: m
  mcp: {serve: true}
  tools:
    - {name: lookup_order, description: Look an order up., parameters: {type: object}}
scenarios:
  - id: a-1
    prompt: A-1
    tool_results: {lookup_order: {status: shipped}}
    expect: {tools: {max_calls: 1}}
"""


def test_refused_for_an_agent_whose_tool_calls_land_on_behavegates_mcp_server(
    agent: str, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    (tmp_path / "c.yml").write_text(SERVED_TOOLS)
    code = main(["test", "c.yml", "--endpoint", agent, "--no-artifacts", "--cache", "answers"])
    assert code == 2 and Numbered.requests == 0
    assert "tool-side evidence is not replayed" in capsys.readouterr().err
