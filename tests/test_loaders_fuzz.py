"""Bad input never escapes as a traceback: every loader refuses what it cannot read with
one of behavegate's own errors (errors.py, exit 2), never an internal error.

Each loader is fuzzed from real seeds (the example contract and observations, the trace
fixtures of every format, a baseline, a shard report, a sealed run directory, the Action's
inputs) by structural mutations (a value replaced by a hostile one: a number past a float,
a 5,000-digit integer, a surrogate, a wrong type, deep nesting; a key dropped or renamed; a
list item repeated) and byte mutations (truncation, raw surrogate or invalid UTF-8 bytes).
``make test`` runs a few cases a loader; ``pytest -m slow`` the large run.

Figures (issue 36, the slow run, derandomized): 600 cases per loader (FUZZ_FIGURES; the
contract and observation cases each read two ways), 0 internal errors. The same run against
main as it was (7324faf) found internal errors in 6 of the 12: observation files (a
5,000-digit integer: ValueError), OTLP JSON, OTLP JSONL, console dumps and Assay rows (an
operation name that is a list: TypeError, unhashable), proto3 JSON (a 5,000-digit integer in
the streamed document reader); contracts, baselines, shard reports, run directories and
Action inputs held. ``make test`` runs 25 cases a loader (under 10 s of CPU for all)."""

from __future__ import annotations

import copy
import hashlib
import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from helpers import EXAMPLE, ROOT, example_report, with_extras
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from behavegate.contract.load import parse_contract_text
from behavegate.errors import BehavegateError, ValidationError
from behavegate.evidence.observation_file import parse_observation_text

FAST, SLOW = 25, 600  # cases a loader in `make test`, and in the slow run
FUZZ_FIGURES = {  # cases the slow variant of each loader's test runs, and the internal errors it found
    "contract": (SLOW, 0),
    "observations": (SLOW, 0),
    "otlp-json": (SLOW, 0),
    "otlp-jsonl": (SLOW, 0),
    "console": (SLOW, 0),
    "proto3-json": (SLOW, 0),
    "assay": (SLOW, 0),
    "baseline": (SLOW, 0),
    "shard-report": (SLOW, 0),
    "run-directory": (SLOW, 0),
    "replay-rejudge": (SLOW, 0),
    "action-inputs": (SLOW, 0),
    "golden-csv": (SLOW, 0),
    "golden-jsonl": (SLOW, 0),
}
SETTINGS = settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
FIXTURES = Path(__file__).parent / "fixtures" / "traces"
BIG = "__BIG_INTEGER__"  # written as a 5,000-digit JSON integer (json.dumps cannot: str() refuses past 4,300 digits)

keys = st.sampled_from(
    [
        "version",
        "agent",
        "scenarios",
        "id",
        "prompt",
        "expect",
        "tools",
        "response",
        "contains",
        "required",
        "name",
        "arguments",
        "allowed",
        "forbidden",
        "exact_sequence",
        "max_calls",
        "refusal",
        "sources",
        "endpoint",
        "model",
        "timeout_seconds",
        "capabilities",
        "parameters",
        "description",
        "available_tools",
        "tool_calls",
        "finish_reason",
        "response_complete",
        "tool_calls_complete",
        "error",
        "x",
    ]
)
scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-5, 300),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=8),
    st.sampled_from(["stop", "length", "tool_calls", "t", "s1", "yes", "NO", "012", "12:30"]),
)
documents = st.recursive(
    scalars, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(keys, inner, max_size=6), max_leaves=40
)

# What a hostile writer puts where a value belongs.
HOSTILE: list[Any] = [
    None,
    True,
    False,
    0,
    -1,
    2**63,
    2**64,
    10**400,
    -(10**400),
    1e308,
    -1e308,
    0.5,
    5e-324,
    BIG,
    "",
    "x" * 300,
    "\ud800",
    "a\udfffb",
    "::error::x",
    "##[error]y",
    "\u2028",
    "9" * 400,
    "-1",
    "1e400",
    "NaN",
    "Infinity",
    [],
    {},
    [[[[[]]]]],
    {"a": {"b": {"c": {}}}},
    [None],
    {"": None},
    {"stringValue": 5},
    {"intValue": "9" * 400},
    {"intValue": 10**400},
    {"doubleValue": "Infinity"},
    {"arrayValue": 5},
    {"kvlistValue": {"values": 5}},
]
RAW_BYTES = [b"\xed\xa0\x80", b"\xed\xb2\x80", b"\xff", b"\x00", b"\xc0\x80", b"\n", b"{", b"]", b'"', b"\\u", b"\\ud800"]


def _paths(value: Any, path: tuple[Any, ...] = (), limit: int = 4000) -> list[tuple[Any, ...]]:
    found: list[tuple[Any, ...]] = []
    stack = [(value, path)]
    while stack and len(found) < limit:
        item, where = stack.pop()
        found.append(where)
        if isinstance(item, dict):
            stack.extend((child, (*where, key)) for key, child in item.items())
        elif isinstance(item, list):
            stack.extend((child, (*where, index)) for index, child in enumerate(item))
    return found


def _at(document: Any, path: tuple[Any, ...]) -> Any:
    for step in path:
        document = document[step]
    return document


@st.composite
def mutated_json(draw: st.DrawFn, seed: Any) -> bytes:
    """``seed`` changed in one to three places, then written, then perhaps changed as bytes."""
    document = json.loads(json.dumps(seed))
    for _ in range(draw(st.integers(1, 3))):
        paths = [p for p in _paths(document) if p]
        if not paths:
            break
        path = draw(st.sampled_from(paths))
        parent, last = _at(document, path[:-1]), path[-1]
        how = draw(st.sampled_from(["replace", "replace", "replace", "drop", "rename", "repeat", "wrap"]))
        if how == "replace":
            parent[last] = copy.deepcopy(draw(st.sampled_from(HOSTILE)))  # later mutations must not change HOSTILE
        elif how == "drop":
            del parent[last]
        elif how == "rename" and isinstance(parent, dict):
            parent[draw(st.sampled_from(["\ud800", "", "x" * 200, "id", "name", "__proto__", "1"]))] = parent.pop(last)
        elif how == "repeat" and isinstance(parent, list):
            parent.insert(last, json.loads(json.dumps(parent[last])))
        else:
            parent[last] = [parent[last]]
    text = json.dumps(document).replace(f'"{BIG}"', "9" * 5000).encode("utf-8", "surrogatepass")
    if draw(st.integers(0, 4)) == 0:  # a byte mutation: cut, or raw bytes no UTF-8 writer emits
        at = draw(st.integers(0, len(text)))
        text = text[:at] if draw(st.booleans()) else text[:at] + draw(st.sampled_from(RAW_BYTES)) + text[at:]
    return text


def _text(data: bytes) -> str:
    """How the project's file readers hand text to a parser: UTF-8, or their own error first."""
    return data.decode("utf-8")


FUZZED: list[str] = []


def fuzz(name: str, seed: Callable[[], Any], check: Callable[[bytes, Path], None]) -> tuple[Any, Any]:
    """The loader's fast test and its slow one (``-m slow``), each on fresh mutations of ``seed``."""
    FUZZED.append(name)

    def make(examples: int) -> Any:
        @settings(max_examples=examples, deadline=None, suppress_health_check=list(HealthCheck))
        @given(data=st.data())
        def test(data: st.DataObject, tmp_path_factory: pytest.TempPathFactory) -> None:
            mutated = data.draw(mutated_json(seed()), label=name)
            check(mutated, tmp_path_factory.mktemp(name.replace("/", "-")))

        return test

    return make(FAST), pytest.mark.slow(make(SLOW))


# --- contracts and observation files (text and structure) ------------------------------------------


def _contract(text: str) -> None:
    try:
        parse_contract_text(text, ROOT / "contract.yml", ROOT)
    except ValidationError as error:
        assert error.problems and all(p.text for p in error.problems)


def _observations(text: str, attempts: bool = False) -> None:
    try:
        parse_observation_text(text, ROOT / "observations.json", attempts=attempts)
    except ValidationError as error:
        assert error.problems and all(p.text for p in error.problems)


@SETTINGS
@given(st.text(max_size=300))
def test_contract_reader_survives_arbitrary_text(text: str) -> None:
    _contract(text)


@SETTINGS
@given(documents)
def test_contract_reader_survives_arbitrary_structures(document: Any) -> None:
    _contract(yaml.safe_dump(document))
    _contract(yaml.safe_dump({"version": 1, "agent": {}, "scenarios": [document]}))
    _contract(yaml.safe_dump({"version": 1, "agent": {}, "scenarios": [{"id": "s", "prompt": "p", "expect": document}]}))


@SETTINGS
@given(st.text(max_size=300))
def test_observation_reader_survives_arbitrary_text(text: str) -> None:
    _observations(text)


@SETTINGS
@given(documents)
def test_observation_reader_survives_arbitrary_structures(document: Any) -> None:
    _observations(json.dumps(document))
    _observations(json.dumps({"version": 1, "scenarios": [document]}))
    _observations(json.dumps({"version": 1, "scenarios": [{"id": "s", "tool_calls": [document], "sources": document}]}))


def test_deep_nesting_is_an_error_not_a_crash() -> None:
    _contract("[" * 5000 + "]" * 5000)
    _observations("[" * 100000 + "]" * 100000)


def _v2_contract() -> Any:
    return yaml.safe_load((EXAMPLE / "contract-v2.yml").read_text(encoding="utf-8"))


def _check_contract(data: bytes, _: Path) -> None:
    try:
        text = _text(data)
    except UnicodeDecodeError:
        return  # the file reader refuses it (files.read_project_text), before any parser
    _contract(text)  # JSON, as YAML reads it
    try:
        document = json.loads(text)
    except ValueError:
        return
    _contract(yaml.safe_dump(document, allow_unicode=True))  # and as block YAML, with its own lines


def _check_observations(data: bytes, _: Path) -> None:
    try:
        text = _text(data)
    except UnicodeDecodeError:
        return
    _observations(text)
    _observations(text, attempts=True)


test_mutated_contract_is_a_contract_or_a_contract_error, test_mutated_contract_slow = fuzz(
    "contract", _v2_contract, _check_contract
)
test_mutated_observation_file_is_read_or_refused, test_mutated_observation_file_slow = fuzz(
    "observations", lambda: json.loads((EXAMPLE / "observations-good.json").read_text(encoding="utf-8")), _check_observations
)


# --- trace files, every format ----------------------------------------------------------------------


def _check_traces(name: str, fmt: str) -> Callable[[bytes, Path], None]:
    def check(data: bytes, where: Path) -> None:
        from behavegate.evidence.traces.load import TracePath, read_traces
        from behavegate.render.traces import render_json, render_table

        path = where / name
        path.write_bytes(data)
        for named in (fmt, None):  # as named, and as sniffed
            try:
                found = read_traces([TracePath(path, True)], fmt=named, attribute="behavegate.scenario.id")
            except BehavegateError as error:
                assert error.details()[0]
                continue
            render_table(found)
            render_json(found)

    return check


def _lines(path: Path) -> list[Any]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


ASSAY_ROWS = [
    {
        "trace_id": "t-1",
        "span_id": "a",
        "name": "chat",
        "startTimeUnixNano": "100",
        "endTimeUnixNano": "200",
        "attributes": {"gen_ai.operation.name": "chat", "gen_ai.prompt": "Add 2 and 3", "behavegate.scenario.id": "s"},
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
            "gen_ai.tool.args": '{"a": 2}',
            "gen_ai.usage.input_tokens": 5,
        },
    },
]


def _check_line_format(name: str, fmt: str) -> Callable[[bytes, Path], None]:
    inner = _check_traces(name, fmt)

    def check(data: bytes, where: Path) -> None:
        try:
            rows = json.loads(data)
        except ValueError:
            inner(data, where)  # cut or spoiled: the bytes as they are
            return
        if isinstance(rows, list):
            data = b"\n".join(json.dumps(row).encode("utf-8", "surrogatepass") for row in rows) + b"\n"
        inner(data, where)

    return check


test_mutated_otlp_json_is_read_or_a_trace_error, test_mutated_otlp_json_slow = fuzz(
    "otlp-json",
    lambda: json.loads((FIXTURES / "otlp_genai_latest.json").read_text(encoding="utf-8")),
    _check_traces("t.json", "otlp-json"),
)
test_mutated_proto3_json_is_read_or_a_trace_error, test_mutated_proto3_json_slow = fuzz(
    "proto3-json",
    lambda: json.loads((FIXTURES / "proto3_openinference.json").read_text(encoding="utf-8")),
    _check_traces("t.json", "otlp-json"),
)
test_mutated_otlp_jsonl_is_read_or_a_trace_error, test_mutated_otlp_jsonl_slow = fuzz(
    "otlp-jsonl", lambda: _lines(FIXTURES / "otlp_file_exporter.jsonl")[:3], _check_line_format("t.jsonl", "otlp-jsonl")
)
test_mutated_assay_rows_are_read_or_a_trace_error, test_mutated_assay_rows_slow = fuzz(
    "assay", lambda: ASSAY_ROWS, _check_line_format("t.jsonl", "assay")
)


def _console_objects() -> list[Any]:
    """The console dump's span objects (it prints them one after another, indented)."""
    decoder, text, at = json.JSONDecoder(), (FIXTURES / "console_exporter.log").read_text(encoding="utf-8"), 0
    found: list[Any] = []
    while (start := text.find("{", at)) != -1 and len(found) < 4:
        try:
            value, at = decoder.raw_decode(text, start)
        except ValueError:
            at = start + 1
            continue
        found.append(value)
    return found


def _check_console(data: bytes, where: Path) -> None:
    try:
        objects = json.loads(data)
    except ValueError:
        objects = None
    if isinstance(objects, list):
        data = b"\n".join(json.dumps(o, indent=4).encode("utf-8", "surrogatepass") for o in objects) + b"\n"
    _check_traces("t.log", "console")(data, where)


test_mutated_console_dump_is_read_or_a_trace_error, test_mutated_console_dump_slow = fuzz(
    "console", _console_objects, _check_console
)


# --- baselines, shard reports, run directories ------------------------------------------------------


def _report_json() -> Any:
    return json.loads("".join(with_extras(example_report("regressed")).json_chunks()))


def _check_baseline(data: bytes, _: Path) -> None:
    from behavegate.report.baseline_file import parse_baseline

    try:
        parse_baseline(_text(data), "baseline.json")
    except UnicodeDecodeError:
        return
    except BehavegateError as error:
        assert error.details()[0]


SHARD_SEED: list[Any] = []


def _shard_report() -> Any:
    """A real shard report: shard 1 of 2 of the example, written by the CLI (once)."""
    if not SHARD_SEED:
        import contextlib
        import io
        import tempfile

        from behavegate.cli import main

        with tempfile.TemporaryDirectory() as scratch:
            here = os.getcwd()
            (Path(scratch) / "c.yml").write_text((EXAMPLE / "contract-v2.yml").read_text(encoding="utf-8"))
            (Path(scratch) / "o.json").write_text((EXAMPLE / "observations-good.json").read_text(encoding="utf-8"))
            os.chdir(scratch)
            try:
                with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
                    main(["test", "c.yml", "--observations", "o.json", "--shard", "1/2", "--report", "r.json", "--no-artifacts"])
                SHARD_SEED.append(json.loads((Path(scratch) / "r.json").read_text(encoding="utf-8")))
            finally:
                os.chdir(here)
    return SHARD_SEED[0]


def _check_shard_report(data: bytes, _: Path) -> None:
    from behavegate.report.shard_reports import parse_shard_report

    try:
        parse_shard_report(_text(data), "shard.json", hashlib.sha256(data).hexdigest())
    except UnicodeDecodeError:
        return
    except BehavegateError as error:
        assert error.details()[0]


test_mutated_baseline_is_read_or_a_baseline_error, test_mutated_baseline_slow = fuzz("baseline", _report_json, _check_baseline)
test_mutated_shard_report_is_read_or_a_shard_error, test_mutated_shard_report_slow = fuzz(
    "shard-report", _shard_report, _check_shard_report
)


RUN_SEED: dict[str, str] = {}


def _run_files() -> dict[str, str]:
    if not RUN_SEED:
        from behavegate.report.artifacts import build_files

        RUN_SEED.update(build_files(with_extras(example_report("regressed"))))
    return RUN_SEED


def _check_run_directory(data: bytes, where: Path) -> None:
    """One of the four files mutated (the mutation's seed is the whole set); replay says why, never raises."""
    from behavegate.report.layout import EVENTS
    from behavegate.report.replay import validate_run

    run = where / "run"
    run.mkdir()
    try:
        files = json.loads(data)
    except ValueError:
        files = None
    if not isinstance(files, dict):
        files = {**_run_files(), EVENTS: data.decode("utf-8", "surrogateescape")}
    for name, text in _run_files().items():
        value = files.get(name, text)
        (run / name).write_bytes(value.encode("utf-8", "surrogatepass") if isinstance(value, str) else json.dumps(value).encode())
    issues = validate_run(run)
    assert all(issue.code and issue.message for issue in issues)


def _check_rejudge(data: bytes, _: Path) -> None:
    """Replay's last check on a report whose seal was forged too (read and shape-checked as replay does first)."""
    from behavegate import json_formats
    from behavegate.report import run_schema
    from behavegate.report.layout import RESULTS
    from behavegate.report.replay import rejudged
    from behavegate.report.run_files import Invalid, parse

    try:
        report = parse(RESULTS, data.decode("utf-8", "surrogatepass"))
    except (Invalid, UnicodeDecodeError):
        return
    if json_formats.problems(report, run_schema.Report, 1):
        return
    issues = rejudged(report)
    assert all(issue.code and issue.message for issue in issues)


test_mutated_run_directory_replays_with_issues_never_a_crash, test_mutated_run_directory_slow = fuzz(
    "run-directory",
    lambda: {name: json.loads(text) for name, text in _run_files().items() if name.endswith(".json")},
    _check_run_directory,
)
test_a_forged_and_resealed_report_is_rejudged_without_a_crash, test_rejudge_slow = fuzz(
    "replay-rejudge", lambda: json.loads(_run_files()["behavior-results.json"]), _check_rejudge
)


# --- the Action's inputs ----------------------------------------------------------------------------


def _action_inputs() -> Any:
    action = yaml.safe_load((Path(__file__).resolve().parents[1] / "action.yml").read_text(encoding="utf-8"))
    return {name: str(spec.get("default", "")) for name, spec in action["inputs"].items()}


def _check_action_inputs(data: bytes, where: Path) -> None:
    """Every input becomes a CLI call the CLI's parser accepts, or an invalid-input error."""
    from behavegate.github.action import ActionInputError, Inputs, build_argv, check_argv

    try:
        values = json.loads(data)
    except ValueError:
        return
    if not isinstance(values, dict):
        return
    environ = {f"INPUT_{str(k).upper()}": v if isinstance(v, str) else json.dumps(v) for k, v in values.items()}
    environ = {k: v for k, v in environ.items() if "\x00" not in k + v and not _surrogate(k + v)}  # no env var holds these
    inputs = Inputs(environ)
    try:
        argv = build_argv(inputs, {"GITHUB_OUTPUT": str(where / "out.txt")})
        check_argv(argv)
        for name in ("summary", "annotations", "artifacts", "comment"):
            inputs.flag(name)
    except ActionInputError as error:
        assert str(error)


def _surrogate(text: str) -> bool:
    return any("\ud800" <= char <= "\udfff" for char in text)


test_mutated_action_inputs_are_a_cli_call_or_an_input_error, test_mutated_action_inputs_slow = fuzz(
    "action-inputs", _action_inputs, _check_action_inputs
)


# --- golden sets (CSV, JSON Lines) --------------------------------------------------------------------


def _golden_rows() -> Any:
    import csv

    with (EXAMPLE.parent / "golden-queries" / "golden.csv").open(newline="", encoding="utf-8") as handle:
        rows = list(csv.reader(handle))
    rows[2][5] = '{"safety": {"injection": true}, "response": {"matches": ["(?i)days"]}}'  # an expect cell to spoil
    return rows


def _check_golden_set(name: str) -> Callable[[bytes, Path], None]:
    def check(data: bytes, where: Path) -> None:
        import csv
        import io

        from behavegate.contract.load import load_contract

        try:
            rows = json.loads(data)
        except ValueError:
            rows = None  # cut or spoiled: the bytes as they are
        if isinstance(rows, list) and name.endswith(".csv") and all(isinstance(row, list) for row in rows):
            text = io.StringIO()
            csv.writer(text).writerows([[json.dumps(c) if not isinstance(c, str) else c for c in row] for row in rows])
            data = text.getvalue().encode("utf-8", "surrogatepass")
        elif isinstance(rows, list) and name.endswith(".jsonl"):
            data = b"\n".join(json.dumps(row).encode("utf-8", "surrogatepass") for row in rows) + b"\n"
        (where / name).write_bytes(data)
        (where / "golden.yml").write_text(f"agent: {{model: m, tools: []}}\nqueries: {name}\n")
        try:
            load_contract(where / "golden.yml", where)
        except BehavegateError as error:
            assert error.details()[0]

    return check


test_mutated_golden_csv_is_a_contract_or_a_contract_error, test_mutated_golden_csv_slow = fuzz(
    "golden-csv", _golden_rows, _check_golden_set("golden.csv")
)
test_mutated_golden_jsonl_is_a_contract_or_a_contract_error, test_mutated_golden_jsonl_slow = fuzz(
    "golden-jsonl",
    lambda: _lines(EXAMPLE.parent / "golden-queries" / "golden.jsonl"),
    _check_golden_set("golden.jsonl"),
)


def test_every_fuzzed_loader_has_its_figures_recorded() -> None:
    assert sorted(FUZZED) == sorted(FUZZ_FIGURES)
