"""Reproducers from the hostile review of issue 36 (items 4-6 and what was left from the review
before): each test fails on main as it stood (150b45e) and names the behaviour it pins.
Every run is offline or on loopback; nothing leaves the machine."""

from __future__ import annotations

import errno
import json
import os
import socket
import time
from pathlib import Path
from typing import Any

import pytest
from fake_agent import RawServer, serve

from behavegate.cli import main
from behavegate.report.result import Report

PRICED = """
version: 2
agent:
  model: m
  pricing: {input_per_mtok: 3, output_per_mtok: 15}
scenarios:
  - id: one
    prompt: say hello
    expect: {response: {contains: [hello]}}
  - id: two
    prompt: say hello
    expect: {response: {contains: [hello]}}
"""
HUGE = 10**400  # past a float's 1.8e308: float(HUGE) and HUGE * 15.0 raise OverflowError


@pytest.fixture(autouse=True)
def _in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "c.yml").write_text(PRICED)


def _observations(**fields: Any) -> dict[str, Any]:
    base = {
        "response": "hello",
        "finish_reason": "stop",
        "response_complete": True,
        "tool_calls_complete": True,
        "tool_calls": [],
    }
    return {"version": 2, "scenarios": [{"id": "one", **base, **fields}, {"id": "two", **base}]}


def _cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out + captured.err


# --- numbers from outside are checked before arithmetic ----------------------------------------


def test_the_number_shortener_counts_digits_past_what_str_converts() -> None:
    from behavegate.magnitude import decimal_digits, shown

    assert [decimal_digits(n) for n in (0, 9, 10, 99, 100, 10**4000 - 1, 10**4000, -(10**30))] == [1, 1, 2, 2, 3, 4000, 4001, 31]
    assert shown(1_500) == "1500" and shown(10**5000) == "a 5,001-digit number" and shown("9" * 400) == "a 400-digit number"


@pytest.mark.parametrize("usage", [{"total_tokens": HUGE}, {"prompt_tokens": HUGE, "completion_tokens": 1}])
def test_a_live_usage_count_past_a_float_is_unknown_and_the_priced_run_keeps_every_verdict(
    usage: dict[str, int], capsys: pytest.CaptureFixture[str]
) -> None:
    # Answers hello and reports a token count no endpoint could have used.
    with serve(lambda request: {"choices": [{"message": {"content": "hello"}, "finish_reason": "stop"}], "usage": usage}) as url:
        code, log = _cli(
            capsys,
            "test",
            "c.yml",
            "--endpoint",
            url,
            "--no-artifacts",
            "--max-total-tokens",
            "100000",
            "--max-cost",
            "5",
            "--report",
            "r.json",
        )
    report = json.loads(Path("r.json").read_text())
    assert "internal error" not in log and code == 0
    assert [s["status"] for s in report["scenarios"]] == ["pass", "pass"]
    assert report["behavegate"]["usage"]["unreported"] == 2  # no credible count: not counted, said so, never zero
    assert "digit" not in log or "digit number" in log


def test_a_usage_count_past_a_float_in_an_observation_file_is_a_located_error(capsys: pytest.CaptureFixture[str]) -> None:
    Path("o.json").write_text(json.dumps(_observations(total_tokens=10**3999)))
    code, log = _cli(capsys, "test", "c.yml", "--observations", "o.json", "--no-artifacts")
    assert code == 2 and "internal error" not in log
    assert "scenarios[0].total_tokens: must be at most 1,000,000,000,000,000 (got a 4,000-digit number)" in log
    assert "9" * 30 not in log  # the number is never printed whole


@pytest.mark.parametrize("key", ["latency_ms", "total_tokens"])
def test_a_5000_digit_integer_in_an_observation_file_is_a_clear_error(key: str, capsys: pytest.CaptureFixture[str]) -> None:
    # Python's int() refuses past 4,300 digits (ValueError, which JSONDecodeError-only handling missed).
    text = json.dumps(_observations(**{key: 7})).replace(": 7", ": " + "9" * 5000)
    Path("o.json").write_text(text)
    code, log = _cli(capsys, "test", "c.yml", "--observations", "o.json", "--no-artifacts")
    assert code == 2 and "internal error" not in log
    assert "Invalid observation JSON: a 5,000-digit number is too long for an integer" in log


def test_a_latency_past_a_float_in_an_observation_file_is_a_located_error(capsys: pytest.CaptureFixture[str]) -> None:
    Path("o.json").write_text(json.dumps(_observations(latency_ms=HUGE)))
    code, log = _cli(capsys, "test", "c.yml", "--observations", "o.json", "--no-artifacts")
    assert code == 2 and "internal error" not in log and "scenarios[0].latency_ms" in log and "401-digit number" in log


def test_the_budget_and_views_never_price_an_in_process_count_past_a_float() -> None:
    from helpers import contract

    from behavegate.api import Reply, run_callable

    report = run_callable(contract(PRICED), lambda m, t: Reply(answer="hello", total_tokens=HUGE), max_total_tokens=1000)
    assert [r.status for r in report.results] == ["pass", "pass"]
    usage = report.derived.usage
    assert usage is not None and usage.unreported == 2 and usage.cost == 0.0


def test_a_5000_digit_shard_count_is_a_usage_error_not_an_internal_one(capsys: pytest.CaptureFixture[str]) -> None:
    Path("o.json").write_text(json.dumps(_observations()))
    code, log = _cli(capsys, "test", "c.yml", "--observations", "o.json", "--no-artifacts", "--shard", "1/" + "9" * 5000)
    assert code == 2 and "internal error" not in log
    assert "--shard N (the shard count) must be between 1 and 256, got a 5,000-digit number" in log


@pytest.mark.parametrize("where", ["contract", "observations"])
def test_a_4000_digit_version_is_named_short_not_printed_whole(where: str, capsys: pytest.CaptureFixture[str]) -> None:
    big = "9" * 4000
    Path("o.json").write_text(json.dumps(_observations()).replace('"version": 2', f'"version": {big}', 1))
    if where == "contract":
        Path("c.yml").write_text(PRICED.replace("version: 2", f"version: {big}", 1))
    code, log = _cli(capsys, "test", "c.yml", "--observations", "o.json", "--no-artifacts")
    assert code == 2 and "got a 4,000-digit number" in log and "9" * 100 not in log


# --- an endpoint URL httpx cannot read is refused as the run starts --------------------------------


def test_an_endpoint_with_text_after_the_ipv6_bracket_is_a_clear_error(capsys: pytest.CaptureFixture[str]) -> None:
    code, log = _cli(capsys, "test", "c.yml", "--endpoint", "http://[::1]evil.example/", "--no-artifacts")
    assert code == 2 and "internal error" not in log
    assert "Invalid agent endpoint" in log and "evil.example" in log


# --- trace loaders: four shapes that were internal errors ------------------------------------------

ROW = {
    "trace_id": "t-1",
    "span_id": "a",
    "name": "chat",
    "startTimeUnixNano": "100",
    "endTimeUnixNano": "200",
    "attributes": {"gen_ai.operation.name": "chat", "gen_ai.prompt": "say hello", "gen_ai.completion": "hello"},
}


def _otlp(span_attributes: Any = (), resource_attributes: Any = ()) -> bytes:
    span = {
        "traceId": "0" * 31 + "1",
        "spanId": "0" * 15 + "1",
        "name": "chat",
        "startTimeUnixNano": "1",
        "endTimeUnixNano": "2",
        "attributes": span_attributes,
    }
    document = {"resourceSpans": [{"resource": {"attributes": resource_attributes}, "scopeSpans": [{"spans": [span]}]}]}
    return json.dumps(document, default=list).encode() + b"\n"


def _row(**changes: Any) -> bytes:
    row = json.loads(json.dumps(ROW))
    row.update(changes)
    return json.dumps(row).encode() + b"\n"


SHAPES = {
    "assay-400-digit-end-time": (
        "t.jsonl",
        _row(endTimeUnixNano="9" * 400),
        "endTimeUnixNano is a 400-digit number, not a 64-bit integer",
    ),
    "assay-400-digit-end-time-number": (
        "t.jsonl",
        _row(endTimeUnixNano=int("9" * 400)),
        "endTimeUnixNano is a 400-digit number, not a 64-bit integer",
    ),
    "assay-raw-surrogate-bytes-in-an-id": (
        "t.jsonl",
        _row().replace(b'"t-1"', b'"t-1\xed\xb2\x80"'),
        "not UTF-8 text: byte 0xed",
    ),
    "otlp-span-attributes-a-number": (
        "t.json",
        _otlp(span_attributes=5),
        "attributes must be a list of key-value objects, not int",
    ),
    "otlp-resource-attributes-a-number": (
        "t.json",
        _otlp(resource_attributes=5),
        "unreadable resource: attributes must be a list of key-value objects, not int",
    ),
}


@pytest.mark.parametrize("name", SHAPES)
@pytest.mark.parametrize("command", ["inspect", "test"])
def test_a_malformed_trace_is_a_located_trace_error(name: str, command: str, capsys: pytest.CaptureFixture[str]) -> None:
    file, data, words = SHAPES[name]
    Path(file).write_bytes(data)
    argv = ["traces", "inspect", file] if command == "inspect" else ["test", "c.yml", "--traces", file, "--no-artifacts"]
    code, log = _cli(capsys, *argv)
    assert code == 2 and "internal error" not in log
    assert f"{file} (line 1)" in log and words in log


def test_an_operation_name_that_is_an_object_names_no_kind(capsys: pytest.CaptureFixture[str]) -> None:
    attributes = {**ROW["attributes"], "gen_ai.operation.name": {"x": 1}}  # type: ignore[dict-item]
    Path("t.jsonl").write_bytes(_row(attributes=attributes))
    code, log = _cli(capsys, "traces", "inspect", "t.jsonl")
    assert code == 0 and "internal error" not in log and "0 GenAI traces" in log


# --- the PR comment client: a deadline per call, a byte cap, https unless loopback ----------------


def _comment_environ(api: str, tmp_path: Path) -> dict[str, str]:
    (tmp_path / "event.json").write_text(json.dumps({"pull_request": {"number": 7}}))
    return {
        "GITHUB_API_URL": api,
        "GITHUB_REPOSITORY": "acme/agent",
        "GITHUB_EVENT_NAME": "pull_request",
        "GITHUB_EVENT_PATH": str(tmp_path / "event.json"),
        "GITHUB_WORKFLOW": "w",
    }


class Trickle(RawServer):
    """Answers 200 and then one byte of its JSON every 50 ms, for up to 15 s."""

    def answer(self, connection: socket.socket, body: bytes) -> bool:
        connection.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 300\r\n\r\n")
        for _ in range(300):
            connection.sendall(b" ")
            time.sleep(0.05)
        return False


class Flood(RawServer):
    """Answers 200 with an endless chunked body (stops after 64 MiB)."""

    sent = 0

    def answer(self, connection: socket.socket, body: bytes) -> bool:
        connection.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n")
        piece = b"%x\r\n%s\r\n" % (1 << 20, b"[" * (1 << 20))
        for _ in range(64):
            connection.sendall(piece)
            type(self).sent += 1 << 20
        return False


def test_a_trickling_github_api_is_cut_at_the_calls_deadline_not_per_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from behavegate.github import pr_comment

    monkeypatch.setattr(pr_comment, "PR_COMMENT_TIMEOUT_SECONDS", 1.0)  # the per-read timeout main had was also this
    server = Trickle()
    started = time.monotonic()
    try:
        with pytest.raises(pr_comment.CommentError, match="did not answer whole within 1 s"):
            pr_comment.post("x", "c.yml", "t0ken", _comment_environ(server.url.removesuffix("/v1/chat/completions"), tmp_path))
    finally:
        server.close()
    assert time.monotonic() - started < 3  # main: 15 s, every read well within its timeout


def test_a_github_reply_over_the_byte_cap_is_refused_before_it_is_held(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from behavegate.github import pr_comment

    monkeypatch.setattr(pr_comment, "PR_COMMENT_REPLY_MAX_BYTES", 4 << 20)
    server = Flood()
    try:
        with pytest.raises(pr_comment.CommentError, match="the answer is over 4,194,304 bytes"):
            pr_comment.post("x", "c.yml", "t0ken", _comment_environ(server.url.removesuffix("/v1/chat/completions"), tmp_path))
    finally:
        server.close()


@pytest.mark.parametrize("api", ["http://api.github.example", "http://10.0.0.8:8080", "http://[::ffff:8.8.8.8]"])
def test_a_plain_http_github_api_that_is_not_loopback_is_refused_before_a_byte_is_sent(api: str, tmp_path: Path) -> None:
    from behavegate.github import pr_comment

    clients: list[object] = []

    def client(**options: Any) -> Any:
        clients.append(options)
        raise AssertionError("a client was opened")

    with pytest.raises(pr_comment.CommentError, match="must be https"):
        pr_comment.post("x", "c.yml", "t0ken", _comment_environ(api, tmp_path), client=client)
    assert clients == []


# --- replay judges every attempt again: a run flipped to pass and re-sealed is not valid ----------


def _sealed(report: Report, root: Path) -> Path:
    from behavegate.report.artifacts import build_files, write_run

    write_run(root, report.facts.run_id, build_files(report))
    return root.joinpath(".behavegate", "runs", report.facts.run_id)


def test_a_version_1_run_flipped_to_pass_and_resealed_fails_replay_naming_each_assertion(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from helpers import edit_result, example_report, with_extras

    from behavegate.frozen import replace
    from behavegate.report.build import rejudged

    honest = with_extras(example_report("regressed"))
    flipped = honest
    for index, result in enumerate(honest.results):
        flipped = edit_result(flipped, index, "pass", **{f"v{k}": {"status": "pass"} for k in range(len(result.verdicts))})
    flipped = rejudged(flipped, replace(flipped.evaluation, status="pass"))
    run_dir = _sealed(flipped, tmp_path)  # sealed by the writer itself: every digest and count agrees
    code, log = _cli(capsys, "replay", str(run_dir))
    assert code == 1 and "INVALID (5 issue(s))" in log
    assert (
        "verdict_mismatch: scenario 'refund-needs-a-human': tools.forbidden[0] was recorded pass, its evidence judges fail" in log
    )


def test_a_version_2_attempt_whose_evidence_was_swapped_after_judging_fails_replay(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from helpers import contract, observations, with_extras

    from behavegate.commands.offline import run_offline
    from behavegate.commands.options import RunOptions
    from behavegate.frozen import replace
    from behavegate.report.build import rejudged

    text = PRICED.replace("    prompt: say hello\n", "    prompt: say hello\n    runs: 2\n", 1)
    good = _observations()
    good["scenarios"].insert(1, {**good["scenarios"][0]})
    bad = json.loads(json.dumps(good))
    bad["scenarios"][1]["response"] = "goodbye"  # the second attempt of 'one' fails its contains
    from helpers import FACTS

    honest = with_extras(
        run_offline(contract(text), observations(good, attempts=True), RunOptions(), FACTS, display_path="c.yml")
    )
    swapped = observations(bad, attempts=True).attempts["one"]
    first = honest.results[0]
    attempts = tuple(replace(a, observation=swapped[a.index]) for a in first.attempts)
    forged = rejudged(honest, replace(honest.evaluation, results=(replace(first, attempts=attempts), *honest.results[1:])))
    assert forged.status == "pass"
    code, log = _cli(capsys, "replay", str(_sealed(forged, tmp_path)), "--format", "json")
    payload = json.loads(log[log.index("{") :])
    assert code == 1 and payload["valid"] is False
    assert [i["message"] for i in payload["issues"]] == [
        "scenario 'one' attempt 2: response.contains[0] was recorded pass, its evidence judges fail"
    ]


def test_an_honest_run_replays_valid_after_being_judged_again(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from helpers import example_report, with_extras

    run_dir = _sealed(with_extras(example_report("regressed")), tmp_path)
    code, log = _cli(capsys, "replay", str(run_dir))
    assert code == 0 and log.strip().endswith(": valid")


# --- a full disk leaves one JSON document on stdout -----------------------------------------------


class _FullDisk:
    """A file on a full disk: opened, and every write refused with ENOSPC."""

    def __init__(self, fd: int) -> None:
        os.close(fd)

    def __enter__(self) -> _FullDisk:
        return self

    def __exit__(self, *exc: object) -> None:
        pass

    def write(self, text: str) -> int:
        raise OSError(errno.ENOSPC, "No space left on device")


@pytest.mark.parametrize("flag", ["--report", "--sarif", "--html"])
def test_a_full_disk_leaves_only_the_errors_json_document_on_stdout(
    flag: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    Path("o.json").write_text(json.dumps(_observations()))
    real = os.fdopen

    def fdopen(fd: int, *args: Any, **kwargs: Any) -> Any:  # the output file's only: stdout is written as ever
        return _FullDisk(fd) if "out.file" in os.readlink(f"/proc/self/fd/{fd}") else real(fd, *args, **kwargs)

    monkeypatch.setattr(os, "fdopen", fdopen)  # the one os module behavegate.files writes with
    code = main(["test", "c.yml", "--observations", "o.json", "--no-artifacts", "--format", "json", flag, "out.file"])
    out = capsys.readouterr().out
    document = json.loads(out)  # main: the report, then the error's document (json.loads: "Extra data")
    assert code == 2 and "No space left on device" in document["error"]


# --- an Action input the CLI refuses still writes the status output --------------------------------


@pytest.mark.parametrize(
    "name, value", [("RUNS", "abc"), ("CONCURRENCY", "four"), ("MAX-SECONDS", "1e400x"), ("FAIL-ON", "sometimes")]
)
def test_a_refused_action_input_still_writes_status_error(
    name: str, value: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from behavegate.github import action

    environ = {
        "GITHUB_WORKSPACE": str(tmp_path),
        "GITHUB_OUTPUT": str(tmp_path / "output.txt"),
        "INPUT_CONTRACT": "c.yml",
        "INPUT_OBSERVATIONS": "o.json",
        f"INPUT_{name}": value,
    }
    assert action.main(environ) == 2
    assert "title=behavegate%3A invalid input" in capsys.readouterr().out
    outputs = dict(line.split("=", 1) for line in (tmp_path / "output.txt").read_text().splitlines())
    assert outputs["status"] == "error" and outputs["passed"] == "0"


def test_an_honest_run_whose_token_was_redacted_from_the_evidence_still_replays_valid(tmp_path: Path) -> None:
    """The verdicts were reached on the raw answer (it leaked the token: fail); the sealed copy
    holds [REDACTED] in its place, which judged again passes. Stricter than its evidence now
    shows is no forged pass: the run replays valid. The other way round it never would."""
    from helpers import FACTS, contract, observations

    from behavegate.judge.evaluate import evaluate
    from behavegate.model import Timing
    from behavegate.report.build import build_report
    from behavegate.report.replay import validate_run

    token = "sk-live-0123456789abcdefghij"
    text = PRICED.replace(
        "expect: {response: {contains: [hello]}}", 'expect: {response: {not_matches: ["sk-live-[a-z0-9]+"]}}', 1
    )
    parsed = contract(text)
    evidence = observations(_observations(response=f"hello, your key is {token}"), attempts=True)
    evaluation = evaluate(parsed, evidence.observations, attempts=evidence.attempts)
    assert evaluation.results[0].status == "fail"
    report = build_report(
        parsed,
        evaluation,
        mode="offline",
        provenance={"kind": "observation_file", "trust": "unverified_fixture"},
        facts=FACTS,
        contract_display_path="c.yml",
        version="t",
        secrets=(token,),
        artifacts=True,
        timings=(Timing("", "", 1),) * 2,
    )
    assert validate_run(_sealed(report, tmp_path)) == []
