"""Trace files read as the real exporters write them: every format, every
dialect, streamed, and bad input named by file and line."""

from __future__ import annotations

import gzip
import io
import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest
from conftest import Golden
from hypothesis import given
from hypothesis import strategies as st

from behavegate.errors import BehavegateError, InputError, TraceError
from behavegate.evidence.traces import reader, text_formats
from behavegate.evidence.traces.load import TracePath, TraceSet, read_traces, trace_paths
from behavegate.evidence.traces.spans import Keep
from behavegate.frozen import replace
from behavegate.render.traces import render_json, render_table, trace_json

FIXTURES = Path(__file__).parent / "fixtures" / "traces"
EXPECTED: dict[str, Any] = json.loads((FIXTURES / "expected.json").read_text(encoding="utf-8"))
FILES = sorted(name for name in EXPECTED if not name.startswith("_"))
ASSAY = Path(__file__).resolve().parents[2] / "shared" / "peers" / "assay"


def read(*paths: Path, attribute: str = "behavegate.scenario.id", fmt: str | None = None) -> TraceSet:
    return read_traces([TracePath(p, True) for p in paths], fmt=fmt, attribute=attribute)


def otlp_line(*spans: dict[str, Any], resource: dict[str, str] | None = None) -> str:
    attributes = [{"key": k, "value": {"stringValue": v}} for k, v in (resource or {"service.name": "t"}).items()]
    return json.dumps({"resourceSpans": [{"resource": {"attributes": attributes}, "scopeSpans": [{"spans": list(spans)}]}]})


def span(trace: str, span_id: str, name: str, parent: str | None = None, start: int = 1, **attributes: Any) -> dict[str, Any]:
    def value(v: Any) -> dict[str, Any]:
        if isinstance(v, bool):
            return {"boolValue": v}
        if isinstance(v, int):
            return {"intValue": str(v)}
        if isinstance(v, list):
            return {"arrayValue": {"values": [value(x) for x in v]}}
        return {"stringValue": v if isinstance(v, str) else json.dumps(v)}

    raw: dict[str, Any] = {
        "traceId": trace,
        "spanId": span_id,
        "name": name,
        "startTimeUnixNano": str(start * 1_000_000),
        "endTimeUnixNano": str((start + 1) * 1_000_000),
        "attributes": [{"key": k.replace("__", "."), "value": value(v)} for k, v in attributes.items()],
    }
    if parent:
        raw["parentSpanId"] = parent
    return raw


# --- the real SDK's files ---------------------------------------------------------------------------


def _cases() -> list[Any]:
    return [
        pytest.param(name, trace, id=f"{name}:{trace.get('dialect', 'non-genai')}:{trace['trace_id'][:6]}")
        for name in FILES
        for trace in EXPECTED[name]["traces"]
    ]


@pytest.mark.parametrize(("name", "expected"), _cases())
def test_each_trace_the_sdk_wrote_reads_as_the_generator_meant(name: str, expected: dict[str, Any]) -> None:
    found = read(FIXTURES / name)
    by_id = {t.trace_id: t for t in found.traces}
    if not expected["genai"]:
        assert expected["trace_id"] not in by_id
        return
    trace = by_id[expected["trace_id"]]
    shown = trace_json(trace)
    calls = [{key: call[key] for key in ("name", "call_id", "arguments", "error", "executed")} for call in shown["tool_calls"]]
    assert calls == expected["tool_calls"]
    assert shown["parallel_groups"] == expected["parallel_groups"]
    assert len(trace.steps) == expected["model_steps"]
    assert trace.step_count == expected["steps"]
    assert trace.final_answer == expected["final_answer"]
    assert [r for step in trace.steps for r in step.finish_reasons] == expected["finish_reasons"]
    assert shown["usage"]["input_tokens"] == expected["input_tokens"]
    assert shown["usage"]["output_tokens"] == expected["output_tokens"]
    assert (trace.scenario_values or (None,))[0] == expected["scenario"]
    assert (trace.conversation_ids or (None,))[0] == expected["conversation_id"]
    assert trace.first_user_message == expected["first_user_message"]


@pytest.mark.parametrize("name", FILES)
def test_each_file_is_told_apart_and_its_traces_keep_their_order(name: str) -> None:
    found = read(FIXTURES / name)
    assert [f.format for f in found.files] == [EXPECTED[name]["format"]]
    genai = [t["trace_id"] for t in EXPECTED[name]["traces"] if t["genai"]]
    assert [t.trace_id for t in found.traces] == genai
    assert found.ignored == len(EXPECTED[name]["traces"]) - len(genai)


def test_inspect_output_of_every_fixture_is_golden(golden: Golden) -> None:
    root = FIXTURES.parents[2]
    paths = [TracePath(FIXTURES / name, True) for name in FILES]
    found = read_traces(paths, attribute="behavegate.scenario.id", shown=lambda p: p.relative_to(root).as_posix())
    golden.check("traces-inspect.json", render_json(found) + "\n")
    golden.check("traces-inspect.txt", render_table(found) + "\n")


def test_inspect_json_has_the_documented_shape() -> None:
    data = json.loads(render_json(read(FIXTURES / "otlp_genai_latest.json")))
    trace = data["traces"][0]
    assert {"trace_id", "tool_calls", "steps", "final_answer"} <= set(trace)
    assert {"name", "call_id", "arguments", "error"} <= set(trace["tool_calls"][0])
    assert isinstance(trace["steps"], int)


# --- Assay's rows --------------------------------------------------------------------------------

ASSAY_ROWS = "\n".join(
    json.dumps(row)
    for row in [
        {
            "trace_id": "t-1",
            "span_id": "a",
            "name": "chat",
            "startTimeUnixNano": "100",
            "endTimeUnixNano": "200",
            "attributes": {"gen_ai.operation.name": "chat", "gen_ai.prompt": "Add 2 and 3"},
        },
        {
            "trace_id": "t-1",
            "span_id": "b",
            "parent_span_id": "a",
            "name": "tool",
            "startTimeUnixNano": "300",
            "endTimeUnixNano": "400",
            "attributes": {
                "gen_ai.operation.name": "execute_tool",
                "gen_ai.tool.name": "add",
                "gen_ai.tool.args": '{"a": 2, "b": 3}',
                "gen_ai.tool.result": "5",
            },
        },
        {
            "trace_id": "t-1",
            "span_id": "c",
            "parent_span_id": "a",
            "name": "chat",
            "startTimeUnixNano": "500",
            "endTimeUnixNano": "600",
            "attributes": {"gen_ai.operation.name": "chat", "gen_ai.completion": "It is 5."},
        },
    ]
)


def test_assay_rows_read_with_free_form_ids_and_plain_text_content(tmp_path: Path) -> None:
    path = tmp_path / "rows.jsonl"
    path.write_text(ASSAY_ROWS + "\n")
    (trace,) = read(path).traces
    assert read(path).files[0].format == "assay"
    assert trace.trace_id == "t-1"
    assert [(c.name, dict(c.arguments or {}), c.result) for c in trace.calls] == [("add", {"a": 2, "b": 3}, "5")]
    assert (trace.step_count, trace.final_answer, trace.first_user_message) == (3, "It is 5.", "Add 2 and 3")


@pytest.mark.skipif(not ASSAY.is_dir(), reason="Assay's sample data lives in ../shared/peers/assay (not in a bare clone)")
def test_assay_sample_data_tool_sequence_steps_errors_and_answer() -> None:
    found = read(
        ASSAY / "agent-function-calling" / "otel_trace.jsonl",
        ASSAY / "fixtures" / "otel_genai_trace.jsonl",
        ASSAY / "fixtures" / "runner_vs_otel_arm_c_trace.json",
        ASSAY / "fixtures" / "mcp_client_tools_call.json",
    )
    summary = {t.trace_id: ([c.name for c in t.calls], t.step_count, t.errors, t.final_answer) for t in found.traces}
    assert summary["fc-trace-01"] == (["web_search", "calculator"], 4, [], "It is 40 degrees.")
    assert summary["trace-123"] == (["search"], 2, [], None)
    assert summary["fff3b214d95c8ad4cc2bf5d5c2598fae"] == (["read_file"], 1, [], None)
    assert summary["b18fab63dd8f1d4d78179e2f7b5f7114"] == (["read_file"], 1, [], None)
    # A trace with only an agent span: which tools ran cannot be told.
    assert summary["55d0593fac7b5ddbdf32d04d1ecfcedb"][1] is None
    assert [f.format for f in found.files] == ["assay", "assay", "otlp-json", "otlp-json"]


# --- streaming ---------------------------------------------------------------------------------


class Trickle(io.RawIOBase):
    """A stream that hands out at most ``size`` bytes a read (values cut anywhere)."""

    def __init__(self, data: bytes, size: int) -> None:
        self.data, self.size, self.pos = data, size, 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        chunk = self.data[self.pos : self.pos + min(self.size, len(buffer))]
        buffer[: len(chunk)] = chunk
        self.pos += len(chunk)
        return len(chunk)


def _spans(read_function: Any, data: bytes, size: int, monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    monkeypatch.setattr(text_formats, "TRACE_READ_CHUNK", size)
    problems = reader.new_problems("file")
    found = list(read_function(io.BufferedReader(Trickle(data, size), buffer_size=size), Keep(), problems))
    problems.raise_found()
    return found


@given(size=st.integers(min_value=1, max_value=300))
def test_a_document_cut_into_any_chunks_reads_the_same(size: int) -> None:
    data = (FIXTURES / "otlp_genai_latest_pretty.json").read_bytes()
    with pytest.MonkeyPatch.context() as monkeypatch:
        whole = _spans(text_formats.read_document, data, len(data) + 1, monkeypatch)
        assert _spans(text_formats.read_document, data, size, monkeypatch) == whole
    assert len(whole) == 4


@given(size=st.integers(min_value=1, max_value=300))
def test_console_output_cut_into_any_chunks_reads_the_same(size: int) -> None:
    data = (FIXTURES / "console_exporter.log").read_bytes()
    with pytest.MonkeyPatch.context() as monkeypatch:
        whole = _spans(text_formats.read_console, data, len(data) + 1, monkeypatch)
        assert _spans(text_formats.read_console, data, size, monkeypatch) == whole
    assert len(whole) == 4


def test_the_document_reader_never_holds_more_than_a_chunk_and_one_span(monkeypatch: pytest.MonkeyPatch) -> None:
    spans = [
        span("ab" * 16, f"{i:016x}", "execute_tool t", gen_ai__operation__name="execute_tool", gen_ai__tool__name="t")
        for i in range(400)
    ]
    data = otlp_line(*spans).encode()
    held: list[int] = []
    original = text_formats._Text.fill

    def fill(self: Any, at_least: int = 0) -> None:
        original(self, at_least)
        held.append(len(self.buf))

    monkeypatch.setattr(text_formats._Text, "fill", fill)
    assert len(_spans(text_formats.read_document, data, 512, monkeypatch)) == 400
    assert max(held) < 512 + 2 * len(json.dumps(spans[0])) < len(data) / 20


def test_gzip_is_read_through_and_the_digest_is_of_the_file(tmp_path: Path) -> None:
    plain = (FIXTURES / "otlp_file_exporter.jsonl").read_bytes()
    path = tmp_path / "traces.jsonl.gz"
    path.write_bytes(gzip.compress(plain, mtime=0))
    found = read(path)
    assert [t.trace_id for t in found.traces] == [t.trace_id for t in read(FIXTURES / "otlp_file_exporter.jsonl").traces]
    import hashlib

    assert found.files[0].digest == hashlib.sha256(path.read_bytes()).hexdigest()


def test_a_span_exported_twice_counts_once(tmp_path: Path) -> None:
    line = (FIXTURES / "otlp_file_exporter.jsonl").read_text().splitlines()[0]
    path = tmp_path / "retried.jsonl"
    path.write_text(line + "\n" + line + "\n")
    once = tmp_path / "once.jsonl"
    once.write_text(line + "\n")
    assert [replace(t, file="") for t in read(path).traces] == [replace(t, file="") for t in read(once).traces]
    assert read(path).duplicates == len(read(once).files) * read(once).files[0].spans


# --- bad input: named, with its line, nothing lost silently ----------------------------------------


def _error(*paths: Path, fmt: str | None = None) -> list[str]:
    with pytest.raises(BehavegateError) as caught:
        read(*paths, fmt=fmt)
    return caught.value.details()


def test_a_truncated_last_line_is_named_with_its_line(tmp_path: Path) -> None:
    text = (FIXTURES / "otlp_file_exporter.jsonl").read_text()
    path = tmp_path / "cut.jsonl"
    path.write_text(text[: len(text) - 40])
    (detail,) = _error(path)
    assert f"cut.jsonl (line {text.count(chr(10))})" in detail and "truncated JSON" in detail


def test_a_truncated_document_and_a_truncated_console_dump_are_errors(tmp_path: Path) -> None:
    document = tmp_path / "doc.json"
    document.write_text((FIXTURES / "otlp_genai_latest_pretty.json").read_text()[:-300])
    assert "invalid JSON" in _error(document)[0]
    console = tmp_path / "console.log"
    console.write_text((FIXTURES / "console_exporter.log").read_text()[:-200])
    assert "truncated span object" in _error(console)[0]


def test_several_problems_are_collected(tmp_path: Path) -> None:
    path = tmp_path / "bad.jsonl"
    good = otlp_line(span("ab" * 16, "cd" * 8, "chat", gen_ai__operation__name="chat"))
    path.write_text(
        "\n".join([good, "{not json", good, '{"resourceSpans": [{"scopeSpans": [{"spans": [{"name": "x"}]}]}]}', "[1]"]) + "\n"
    )
    details = _error(path)
    assert [d.split(": ", 1)[0] for d in details] == [f"{path} (line {n})" for n in (2, 4, 5)]


@pytest.mark.parametrize(
    ("content", "words"),
    [
        (b"(\xb5/\xfd" + b"\x00" * 20, "zstd"),
        (b"\x0a\x8c\x01\x12\x89\x01" + bytes(range(200)), "binary"),
        (b"hello\nworld\n", "could not tell the trace format"),
    ],
)
def test_files_that_are_not_json_traces_say_what_they_seem_to_be(tmp_path: Path, content: bytes, words: str) -> None:
    path = tmp_path / "x.json"
    path.write_bytes(content)
    assert words in _error(path)[0]


def test_a_folder_skips_and_lists_what_is_not_traces_but_a_named_file_must_read(tmp_path: Path) -> None:
    found = read_traces(trace_paths([str(FIXTURES)], FIXTURES.parents[2]), attribute="behavegate.scenario.id")
    assert [path for path, _ in found.skipped] == [str(FIXTURES / "expected.json")]
    assert len(found.files) == len(FILES)
    with pytest.raises(TraceError):
        read(FIXTURES / "expected.json")


def test_named_format_overrides_sniffing(tmp_path: Path) -> None:
    path = tmp_path / "one.txt"
    path.write_text(otlp_line(span("ab" * 16, "cd" * 8, "chat", gen_ai__operation__name="chat")) + "\n")
    assert read(path, fmt="otlp-jsonl").files[0].format == "otlp-jsonl"
    assert "resourceSpans" in _error(path, fmt="assay")[0] or "Assay" in _error(path, fmt="assay")[0]


def test_paths_stay_inside_the_project_and_never_follow_links(tmp_path: Path) -> None:
    inside = tmp_path / "project"
    inside.mkdir()
    (inside / "real.jsonl").write_text("")
    os.symlink(inside / "real.jsonl", inside / "link.jsonl")
    with pytest.raises(InputError, match="inside the project"):
        trace_paths(["../elsewhere.jsonl"], inside)
    with pytest.raises(InputError, match="symlink"):
        trace_paths(["link.jsonl"], inside)
    assert [p.path.name for p in trace_paths(["."], inside)] == ["real.jsonl"]  # the link in the folder is not followed


def test_a_named_format_that_reads_no_span_is_an_error_not_an_empty_run(tmp_path: Path) -> None:
    assert "no spans read as console" in _error(FIXTURES / "otlp_genai_latest.json", fmt="console")[0]


def test_a_compressed_file_the_reader_cannot_open_is_listed_when_found_in_a_folder(tmp_path: Path) -> None:
    (tmp_path / "old.jsonl.zst").write_bytes(b"(\xb5/\xfd" + b"\x00" * 20)
    shutil.copy(FIXTURES / "console_exporter.log", tmp_path)
    found = read_traces(trace_paths(["."], tmp_path), attribute="behavegate.scenario.id")
    assert [(Path(path).name, "zstd" in why) for path, why in found.skipped] == [("old.jsonl.zst", True)]
    assert len(found.traces) == 1


def test_an_mcp_client_span_and_the_server_span_under_it_naming_different_tools_leave_the_calls_not_known(
    tmp_path: Path,
) -> None:
    trace = "ab" * 16
    path = tmp_path / "mcp.jsonl"
    client = {"mcp__method__name": "tools/call", "gen_ai__tool__name": "delete_all"}
    server = {"mcp__method__name": "tools/call", "gen_ai__operation__name": "execute_tool", "gen_ai__tool__name": "lookup"}
    path.write_text(
        otlp_line(
            span(trace, "01" * 8, "invoke_agent a", gen_ai__operation__name="invoke_agent"),
            span(trace, "02" * 8, "MCP send tools/call delete_all", "01" * 8, 2, **client),
            span(trace, "03" * 8, "tools/call lookup", "02" * 8, 3, **server),
        )
        + "\n"
    )
    (found,) = read(path).traces
    # Dropping the client span would leave only 'lookup': a forbidden delete_all would pass.
    assert found.calls_gap is not None and "called 'delete_all'" in found.calls_gap and "ran 'lookup'" in found.calls_gap
    server["gen_ai__tool__name"] = "delete_all"
    path.write_text(
        otlp_line(
            span(trace, "01" * 8, "invoke_agent a", gen_ai__operation__name="invoke_agent"),
            span(trace, "02" * 8, "MCP send tools/call delete_all", "01" * 8, 2, **client),
            span(trace, "03" * 8, "tools/call delete_all", "02" * 8, 3, **server),
        )
        + "\n"
    )
    (agreed,) = read(path).traces
    assert agreed.calls_gap is None and [c.name for c in agreed.calls] == ["delete_all"]


@pytest.mark.parametrize("index", ["\u00b2", "9" * 5000])
def test_a_flattened_index_int_cannot_read_is_a_trace_error_not_an_internal_error(tmp_path: Path, index: str) -> None:
    path = tmp_path / "t.jsonl"
    chat: dict[str, Any] = {
        "gen_ai__operation__name": "chat",
        "gen_ai__prompt__0__role": "user",
        "gen_ai__prompt__0__content": "hi",
    }
    chat[f"gen_ai__completion__{index}__content"] = "Done."
    path.write_text(otlp_line(span("ab" * 16, "01" * 8, "chat m", **chat)) + "\n")
    with pytest.raises(TraceError, match="not an index"):
        read(path)


def test_a_token_count_in_digits_int_cannot_read_is_no_count(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    chat: dict[str, Any] = {
        "gen_ai__operation__name": "chat",
        "gen_ai__usage__input_tokens": "\u00b2",
        "gen_ai__usage__output_tokens": "3",
    }
    path.write_text(otlp_line(span("ab" * 16, "01" * 8, "chat m", **chat)) + "\n")
    (found,) = read(path).traces
    assert found.total_tokens is None


def test_a_model_span_that_writes_its_output_two_ways_counts_each_call_and_the_text_once(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    parts: list[dict[str, Any]] = [{"type": "text", "content": "Done."}]
    parts += [{"type": "tool_call", "id": f"c{i}", "name": name, "arguments": {}} for i, name in enumerate(["a", "b", "a"])]
    chat: dict[str, Any] = {
        "gen_ai__operation__name": "chat",
        "gen_ai__output__messages": json.dumps([{"role": "assistant", "parts": parts, "finish_reason": "tool_calls"}]),
        # The same output as OpenLLMetry's indexed attributes (LiteLLM's function_call form: N counts the calls)
        "gen_ai__completion__0__content": "Done.",
        "gen_ai__completion__0__function_call__name": "a",
        "gen_ai__completion__1__function_call__name": "b",
        "gen_ai__completion__2__function_call__name": "a",
        "gen_ai__completion__3__function_call__name": "c",  # listed one way only: still a call
    }
    path.write_text(otlp_line(span("ab" * 16, "01" * 8, "chat m", **chat)) + "\n")
    (found,) = read(path).traces
    assert [c.name for c in found.calls] == ["a", "b", "a", "c"]
    assert found.final_answer == "Done."
