"""Hostile review of trace evidence (branch i12-hostile): each test is a reproducer
of a broken promise and fails on the code it was written against; it passes once
the finding is fixed. Promises: DESIGN.md "Principles" (evidence not guesses,
untrusted text inert, bounded everything) and the trace reader's own docstrings.
"""

from __future__ import annotations

import copy
import datetime
import json
import subprocess
import sys
import textwrap
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest
from helpers import GROWTH_BOUND, SHRINK, agent_trace, attr, steepness
from helpers import TRACE_CONTRACT as CONTRACT

from behavegate.cli import main
from behavegate.evidence.traces import reader
from behavegate.evidence.traces.load import TracePath, read_traces
from behavegate.render.traces import render_table

TRACE = "0af7651916cd43dd8448eb211c80319c"
T0 = 1_767_225_600_000_000_000


@pytest.fixture(autouse=True)
def _in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)


def document(spans: Sequence[dict[str, Any]]) -> str:
    return json.dumps({"resourceSpans": [{"resource": {}, "scopeSpans": [{"spans": list(spans)}]}]})


def span(
    span_id: str, parent: str | None, name: str, start_ms: int, end_ms: int, attributes: list[dict[str, Any]]
) -> dict[str, Any]:
    return {
        "traceId": TRACE,
        "spanId": span_id,
        "parentSpanId": parent or "",
        "name": name,
        "startTimeUnixNano": str(T0 + start_ms * 1_000_000),
        "endTimeUnixNano": str(T0 + end_ms * 1_000_000),
        "attributes": attributes,
    }


def text_output(text: str) -> dict[str, Any]:
    return attr("gen_ai.output.messages", [{"role": "assistant", "parts": [{"type": "text", "content": text}]}])


def run(tmp_path: Path, expect: str, traces: str | Path, *extra: str) -> tuple[int, dict[str, Any]]:
    (tmp_path / "contract.yml").write_text(CONTRACT + "".join(f"      {line}\n" for line in expect.splitlines()))
    report = tmp_path / "report.json"
    code = main(["test", "contract.yml", "--traces", str(traces), "--report", str(report), "--no-artifacts", *extra])
    return code, json.loads(report.read_text()) if report.exists() else {}


def statuses(report: dict[str, Any]) -> dict[str, str]:
    return {a["assertion"]: a["status"] for a in report["scenarios"][0]["assertions"]}


def judged(tmp_path: Path, name: str, spans: Sequence[dict[str, Any]], expect: str) -> Callable[[], object]:
    """A `behavegate test` of these spans, to be timed: the run's exit code is not the point."""
    (tmp_path / f"{name}.jsonl").write_text(document(spans) + "\n")
    (tmp_path / f"{name}.yml").write_text(CONTRACT + f"      {expect}\n")
    return lambda: main(["test", f"{name}.yml", "--traces", f"{name}.jsonl", "--max-seconds", "5", "--no-artifacts"])


# --- F1: bounded time: normalization was quadratic and outside --max-seconds ------------------------
# Linear time is a ratio in one run (helpers.growth), not a number of seconds.


def _chain(n: int) -> list[dict[str, Any]]:
    spans = [
        span(
            f"{1:016x}",
            None,
            "invoke_agent a",
            0,
            1,
            [attr("gen_ai.operation.name", "invoke_agent"), attr("behavegate.scenario.id", "refund")],
        )
    ]
    return spans + [
        {"traceId": TRACE, "spanId": f"{i:016x}", "parentSpanId": f"{i - 1:016x}", "name": "x"} for i in range(2, n + 2)
    ]


def test_a_long_parent_chain_is_judged_in_linear_time(tmp_path: Path) -> None:
    """20,000 spans (2.5 MB), each the parent of the next: ``normalize._depths`` walked every
    span's ancestors (O(n^2)), after reading, where --max-seconds is no longer looked at."""
    n, expect = 20_000, "response: {contains: [x]}"
    grown, how = steepness(judged(tmp_path, "whole", _chain(n), expect), judged(tmp_path, "eighth", _chain(n // SHRINK), expect))
    assert grown < GROWTH_BOUND, f"a parent chain: {how}"


def _tool_spans(n: int) -> list[dict[str, Any]]:
    parts = [{"type": "tool_call", "name": "lookup_order", "arguments": {"order_id": str(i)}} for i in range(n)]
    spans = [
        span(
            f"{1:016x}",
            None,
            "invoke_agent a",
            0,
            1,
            [attr("gen_ai.operation.name", "invoke_agent"), attr("behavegate.scenario.id", "refund")],
        ),
        span(
            f"{2:016x}",
            f"{1:016x}",
            "chat",
            0,
            1,
            [attr("gen_ai.operation.name", "chat"), attr("gen_ai.output.messages", [{"role": "assistant", "parts": parts}])],
        ),
    ]
    for i in range(n):
        spans.append(
            span(
                f"{i + 3:016x}",
                f"{1:016x}",
                "execute_tool lookup_order",
                2,
                3,
                [
                    attr("gen_ai.operation.name", "execute_tool"),
                    attr("gen_ai.tool.name", "lookup_order"),
                    attr("gen_ai.tool.call.arguments", {"order_id": "x"}),
                ],
            )
        )
    return spans


@pytest.mark.slow  # scale or timing: `make test-slow`
def test_many_tool_spans_without_call_ids_are_judged_in_linear_time(tmp_path: Path) -> None:
    """8,000 tool spans matched to 8,000 requested calls by name (4 MB): ``_by_name`` scanned
    every requested call for every tool span (O(n^2)), outside --max-seconds."""
    n, expect = 8_000, "tools: {forbidden: [delete_account]}"
    whole, eighth = (
        judged(tmp_path, "whole", _tool_spans(n), expect),
        judged(tmp_path, "eighth", _tool_spans(n // SHRINK), expect),
    )
    grown, how = steepness(whole, eighth)
    assert grown < GROWTH_BOUND, f"tool spans without call ids: {how}"


def test_inspect_output_grows_linearly_with_parallel_calls(tmp_path: Path) -> None:
    """Every call line lists all the others it ran in parallel with: 3,000 calls requested
    together print ~40 MB (O(n^2)), and ``parallel_groups`` is recomputed per line."""
    n = 3_000
    parts = [{"type": "tool_call", "id": f"c{i}", "name": "lookup_order", "arguments": {"order_id": "7"}} for i in range(n)]
    spans = [
        span(f"{1:016x}", None, "invoke_agent a", 0, 1, [attr("gen_ai.operation.name", "invoke_agent")]),
        span(
            f"{2:016x}",
            f"{1:016x}",
            "chat",
            0,
            1,
            [attr("gen_ai.operation.name", "chat"), attr("gen_ai.output.messages", [{"role": "assistant", "parts": parts}])],
        ),
    ]
    (tmp_path / "p.jsonl").write_text(document(spans) + "\n")
    text = render_table(read_traces([TracePath(tmp_path / "p.jsonl", True)], attribute="behavegate.scenario.id"))
    assert len(text) < 2_000_000, f"{len(text):,} characters of inspect output for {n} calls"


def test_sniffing_a_64k_head_is_not_quadratic() -> None:
    """``sniff``'s console pattern ``^\\{\\s*\\n\\s*"name"`` backtracks O(n^2) over a run of
    newlines: one 64 KB file costs seconds before any --max-seconds check."""
    assert reader.sniff(b"{" + b"\n" * 65_000 + b"x") is None
    grown, how = steepness(lambda: reader.sniff(b"{" + b"\n" * 65_000 + b"x"), lambda: reader.sniff(b"{" + b"\n" * 8_125 + b"x"))
    assert grown < GROWTH_BOUND, f"sniffing a run of newlines: {how}"


# --- F2, F3, F11: evidence judged from the wrong span or the wrong call -------------------------------


def test_a_sub_agents_output_is_not_the_answer_when_the_outermost_agent_recorded_none(tmp_path: Path) -> None:
    """The outermost agent span has no output; a nested helper agent said "Refunded", the
    root's last model step told the user it could not refund. Documented rule
    (normalize.py): the outermost agent's output, else the last model output text."""
    root = "a000000000000001"
    spans = [
        span(
            root,
            None,
            "invoke_agent root",
            0,
            100,
            [attr("gen_ai.operation.name", "invoke_agent"), attr("behavegate.scenario.id", "refund")],
        ),
        span(
            "b000000000000001",
            root,
            "chat",
            1,
            5,
            [
                attr("gen_ai.operation.name", "chat"),
                attr("gen_ai.response.finish_reasons", ["stop"]),
                text_output("Let me ask the refund helper."),
            ],
        ),
        span(
            "a000000000000002",
            root,
            "invoke_agent helper",
            10,
            50,
            [attr("gen_ai.operation.name", "invoke_agent"), text_output("Refunded order 7.")],
        ),
        span(
            "b000000000000002",
            root,
            "chat",
            60,
            90,
            [
                attr("gen_ai.operation.name", "chat"),
                attr("gen_ai.response.finish_reasons", ["stop"]),
                text_output("I could not refund order 7."),
            ],
        ),
    ]
    (tmp_path / "t.jsonl").write_text(document(spans) + "\n")
    code, report = run(tmp_path, 'response: {contains: ["Refunded"]}', "t.jsonl")
    assert statuses(report)["response.contains[0]"] != "pass"
    assert code != 0


def _reused_call_ids() -> list[dict[str, Any]]:
    """Two model turns, each asking for one tool with the id ``call_0`` (providers that number
    calls per response do this): lookup_order at 10 ms, then issue_refund at 30 ms."""
    root = "a000000000000001"

    def model(sid: str, start: int, parts: list[dict[str, Any]], finish: str, first: bool = False) -> dict[str, Any]:
        a = [
            attr("gen_ai.operation.name", "chat"),
            attr("gen_ai.response.finish_reasons", [finish]),
            attr("gen_ai.output.messages", [{"role": "assistant", "parts": parts}]),
        ]
        if first:
            a.append(attr("gen_ai.input.messages", [{"role": "user", "parts": [{"type": "text", "content": "Refund order 7"}]}]))
        return span(sid, root, "chat", start, start + 5, a)

    def tool(sid: str, name: str, start: int) -> dict[str, Any]:
        return span(
            sid,
            root,
            f"execute_tool {name}",
            start,
            start + 2,
            [
                attr("gen_ai.operation.name", "execute_tool"),
                attr("gen_ai.tool.name", name),
                attr("gen_ai.tool.call.id", "call_0"),
                attr("gen_ai.tool.call.arguments", {"order_id": "7"}),
            ],
        )

    def call(name: str) -> dict[str, Any]:
        return {"type": "tool_call", "id": "call_0", "name": name, "arguments": {"order_id": "7"}}

    return [
        span(
            root,
            None,
            "invoke_agent",
            0,
            100,
            [attr("gen_ai.operation.name", "invoke_agent"), attr("behavegate.scenario.id", "refund")],
        ),
        model("b000000000000001", 1, [call("lookup_order")], "tool_calls", first=True),
        tool("c000000000000001", "lookup_order", 10),
        model("b000000000000002", 20, [call("issue_refund")], "tool_calls"),
        tool("c000000000000002", "issue_refund", 30),
        model("b000000000000003", 40, [{"type": "text", "content": "Refunded order 7."}], "stop"),
    ]


def test_a_call_id_reused_by_a_later_turn_does_not_make_sequential_calls_parallel(tmp_path: Path) -> None:
    """``_calls`` maps a call id to the *last* request with it and ignores the name: the
    lookup span claims the refund request, the refund span joins its group, the real
    lookup request is left "requested, not executed". The in_order sequence refund →
    lookup then passes although the lookup ran 20 ms before the refund."""
    (tmp_path / "t.jsonl").write_text(document(_reused_call_ids()) + "\n")
    expect = "tools: {sequence: {mode: in_order, calls: [{name: issue_refund}, {name: lookup_order}]}}"
    code, report = run(tmp_path, expect, "t.jsonl")
    assert statuses(report)["tools.sequence"] == "fail"
    assert code == 1


def test_a_call_id_reused_by_a_later_turn_does_not_invent_a_call(tmp_path: Path) -> None:
    (tmp_path / "t.jsonl").write_text(document(_reused_call_ids()) + "\n")
    found = read_traces([TracePath(tmp_path / "t.jsonl", True)], attribute="behavegate.scenario.id").traces[0]
    assert [(c.name, c.executed) for c in found.calls] == [("lookup_order", True), ("issue_refund", True)]
    assert found.parallel_groups == []


@pytest.mark.parametrize("finish", ["length", "content_filter"])
def test_an_agent_answer_after_a_cut_model_step_is_incomplete(tmp_path: Path, finish: str) -> None:
    """The last model step stopped on the token cap (or a filter); the agent span repeats
    the cut text. Taken from the agent span, the answer carries no finish reason and
    passes; the same answer taken from the model step is incomplete."""
    (tmp_path / "t.jsonl").write_text(document(agent_trace(answer="Refunded ord", last_finish=finish)) + "\n")
    code, report = run(tmp_path, 'response: {contains: ["Refunded"]}', "t.jsonl")
    assert statuses(report)["response.contains[0]"] == "incomplete"
    assert code == 2


# --- F4, F5, F6: a forbidden call made absent ---------------------------------------------------------


def _console(spans: list[dict[str, Any]]) -> str:
    """``agent_trace`` spans as the Python ConsoleSpanExporter prints them."""

    def iso(ns: str) -> str:
        return datetime.datetime.fromtimestamp(int(ns) / 1e9, datetime.UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")

    def plain(value: dict[str, Any]) -> Any:
        if "arrayValue" in value:
            return [v["stringValue"] for v in value["arrayValue"]["values"]]
        return int(value["intValue"]) if "intValue" in value else value["stringValue"]

    objects = [
        json.dumps(
            {
                "name": s["name"],
                "context": {"trace_id": "0x" + s["traceId"], "span_id": "0x" + s["spanId"], "trace_state": "[]"},
                "kind": "SpanKind.INTERNAL",
                "parent_id": "0x" + s["parentSpanId"] if s["parentSpanId"] else None,
                "start_time": iso(s["startTimeUnixNano"]),
                "end_time": iso(s["endTimeUnixNano"]),
                "status": {"status_code": "UNSET"},
                "attributes": {a["key"]: plain(a["value"]) for a in s["attributes"]},
                "events": [],
                "links": [],
                "resource": {"attributes": {}, "schema_url": ""},
            },
            indent=4,
        )
        for s in spans
    ]
    return "\n".join(objects) + "\n"


def test_a_console_dump_with_long_startup_logs_is_not_skipped_in_a_folder(tmp_path: Path) -> None:
    """A console-exporter log whose first 64 KiB are application log lines (startup) is not
    recognised by ``sniff`` and is skipped as "not a trace file": its trace, which calls a
    forbidden tool, is never judged, and the run passes on the other file."""
    folder = tmp_path / "traces"
    folder.mkdir()
    (folder / "a.jsonl").write_text(document(agent_trace()) + "\n")
    logs = "".join(f"INFO:app:warming cache entry {i} {'.' * 50}\n" for i in range(1_000))
    evil = agent_trace(trace_id="1" * 32, calls=[("delete_account", {}, None)])
    (folder / "b.log").write_text(logs + _console(evil))
    code, _ = run(tmp_path, "tools: {forbidden: [delete_account]}", "traces")
    assert code != 0, "a trace file in the folder was skipped and the run passed"


@pytest.mark.parametrize("name", ["delete_account ", " delete_account", "delete_account\n", "delete_acc\u043eunt"])
def test_a_tool_name_with_padding_or_a_look_alike_does_not_pass_forbidden(tmp_path: Path, name: str) -> None:
    """The live adapter and observation files strip names and refuse names outside
    ``[A-Za-z0-9_-]{1,64}`` (tool evidence incomplete); trace evidence takes the name as
    written, so a padded or homoglyph name escapes ``forbidden``."""
    (tmp_path / "t.jsonl").write_text(document(agent_trace(calls=[(name, {}, None)])) + "\n")
    code, report = run(tmp_path, "tools: {forbidden: [delete_account]}", "t.jsonl")
    assert statuses(report)["tools.forbidden[0]"] != "pass"
    assert code != 0


def test_a_span_id_read_twice_with_different_content_does_not_depend_on_order(tmp_path: Path) -> None:
    """Two spans with one span id and different content: the first read wins silently
    ("read twice and counted once"), so the verdict depends on the order of the lines
    (or of the files in a folder)."""
    trace = agent_trace()
    other = copy.deepcopy(next(s for s in trace if s["spanId"] == "c000000000000000"))
    other["name"] = "execute_tool delete_account"
    for a in other["attributes"]:
        if a["key"] == "gen_ai.tool.name":
            a["value"] = {"stringValue": "delete_account"}
    (tmp_path / "one.jsonl").write_text(document(trace) + "\n" + document([other]) + "\n")
    (tmp_path / "two.jsonl").write_text(document([other]) + "\n" + document(trace) + "\n")
    first, _ = run(tmp_path, "tools: {forbidden: [delete_account]}", "one.jsonl")
    second, _ = run(tmp_path, "tools: {forbidden: [delete_account]}", "two.jsonl")
    assert first == second, f"exit {first} one way, {second} the other"
    assert first != 0


# --- F7, F8, F12, F13: never a traceback, a clear message, the file read ------------------------------


def test_an_unpaired_surrogate_in_trace_text_is_a_clear_error_not_an_internal_one(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``"\\ud800"`` is valid JSON; the answer then cannot be written as UTF-8: the run ends
    with "internal error: UnicodeEncodeError" (observation files name the path instead)."""
    (tmp_path / "t.jsonl").write_text(document(agent_trace(answer="Refunded \ud800")) + "\n")
    code, _ = run(tmp_path, 'response: {contains: ["Refunded"]}', "t.jsonl")
    err = capsys.readouterr().err
    assert code == 2
    assert "internal error" not in err and "t.jsonl" in err


@pytest.mark.parametrize("kind", ["otlp-json", "console"])
def test_invalid_utf8_in_a_streamed_file_is_a_clear_error_with_its_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], kind: str
) -> None:
    """``_Text.fill`` decodes strictly and nothing catches ``UnicodeDecodeError``."""
    trace = agent_trace()
    text = (
        json.dumps({"resourceSpans": [{"resource": {}, "scopeSpans": [{"spans": trace}]}]}, indent=1)
        if kind == "otlp-json"
        else _console(trace)
    )
    data = text.encode().replace(b"Refunded order 7.", b"Refunded \xff order 7.", 1)
    (tmp_path / "t.log").write_bytes(data)
    code, _ = run(tmp_path, 'response: {contains: ["Refunded"]}', "t.log")
    err = capsys.readouterr().err
    assert code == 2
    assert "internal error" not in err and "t.log" in err and "line" in err


def test_json_lines_with_a_first_line_over_64k_are_read_as_json_lines(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A Collector file exporter writes one batch per line; a first batch over 64 KiB is
    sniffed as a single OTLP document and the file is refused ("text after the OTLP JSON
    document")."""
    big = agent_trace(prompt="Refund order 7", answer="Refunded order 7. " + "x" * 70_000)
    (tmp_path / "t.jsonl").write_text(document(big) + "\n" + document(agent_trace(trace_id="1" * 32)) + "\n")
    code, report = run(tmp_path, 'response: {contains: ["Refunded"]}', "t.jsonl")
    assert code == 0, capsys.readouterr().err
    assert statuses(report)["response.contains[0]"] == "pass"


def test_a_json_log_line_with_a_context_key_does_not_abort_a_console_dump(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Structured JSON logs often have a ``context`` field; the console reader takes any
    object with one for a span and gives up on the whole file."""
    log = '{"level": "info", "context": "request-17", "msg": "handled"}\n'
    (tmp_path / "t.log").write_text("INFO starting\n" + log + _console(agent_trace()))
    code, report = run(tmp_path, 'response: {contains: ["Refunded"]}', "t.log")
    assert code == 0, capsys.readouterr().err
    assert statuses(report)["response.contains[0]"] == "pass"


def test_negative_token_counts_do_not_pass_a_usage_gate(tmp_path: Path) -> None:
    """``intValue: "-100000"`` is taken as is: the conversation's total goes negative and
    ``usage.max_total_tokens`` passes."""
    (tmp_path / "t.jsonl").write_text(document(agent_trace(tokens=(-100_000, 20))) + "\n")
    _, report = run(tmp_path, "usage: {max_total_tokens: 500}", "t.jsonl")
    assert statuses(report)["usage.max_total_tokens"] != "pass"


# --- F9, F10: bounded memory ---------------------------------------------------------------------------

_PEAK = textwrap.dedent(
    """
    import resource, sys
    from pathlib import Path
    from behavegate.errors import BehavegateError
    from behavegate.evidence.traces.load import TracePath, read_traces
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    try:
        read_traces([TracePath(Path(sys.argv[1]), True)], fmt=sys.argv[2], attribute="behavegate.scenario.id")
    except BehavegateError:
        pass
    print((resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) * 1024)
    """
)


def peak_growth(path: Path, fmt: str) -> int:
    done = subprocess.run([sys.executable, "-c", _PEAK, str(path), fmt], capture_output=True, text=True, check=True, timeout=300)
    return int(done.stdout.strip())


@pytest.mark.slow  # scale or timing: `make test-slow`
def test_traces_without_genai_content_do_not_cost_more_memory_than_the_file(tmp_path: Path) -> None:
    """Every span of every trace is kept as a ``Link`` until the end (GenAI or not): 150,000
    one-span HTTP traces (29 MB) hold ~120 MB; 1,000,001 of them are refused outright."""
    path = tmp_path / "http.jsonl"
    with path.open("w") as out:
        for start in range(0, 150_000, 1_000):
            spans = [
                {
                    "traceId": "%032x" % (i + 1),
                    "spanId": f"{i + 1:016x}",
                    "name": "GET /x",
                    "startTimeUnixNano": str(T0 + i),
                    "endTimeUnixNano": str(T0 + i + 5),
                }
                for i in range(start, start + 1_000)
            ]
            out.write(document(spans) + "\n")
    size = path.stat().st_size
    grown = peak_growth(path, "otlp-jsonl")
    assert grown < size, f"{grown / 2**20:.0f} MiB held for a {size / 2**20:.0f} MiB file with no GenAI span"


def test_one_line_of_tiny_containers_does_not_cost_many_times_its_size(tmp_path: Path) -> None:
    """The reader bounds a line's *bytes* (64 MiB) but decodes it whole: 3 bytes of ``{},``
    become a 64-byte dict, ~25x the line; a 64 MiB line needs about 1.7 GB."""
    path = tmp_path / "dicts.jsonl"
    path.write_text('{"resourceSpans":[' + ",".join(["{}"] * 3_000_000) + "]}\n")
    size = path.stat().st_size
    grown = peak_growth(path, "otlp-jsonl")
    assert grown < 4 * size + 32 * 2**20, f"{grown / 2**20:.0f} MiB held for a {size / 2**20:.0f} MiB line"
