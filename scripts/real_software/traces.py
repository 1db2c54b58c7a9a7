"""Trace fixtures written by REAL instrumentation packages, and what behavegate must conclude from them.

    python3 scripts/real_software/traces.py [--venv DIR] [--check]

It creates (or reuses) its own venv (default ~/.cache/behavegate-real-software/traces-venv) with the
exact pins of requirements-traces.txt (uv when there is one, else pip), then runs one worker process
per source inside it (`_traces_worker.py SOURCE DIR`: an instrumentor patches its client library for
the whole process). Each worker starts the scripted model (`_traces_llm.py`: a starlette app under
uvicorn on 127.0.0.1, an ephemeral port, Chat Completions plain and SSE-streamed, answering each
scenario's plan step by step), runs the support agent of every scenario through the real client and
instrumentation, with the real tools executed in-process (or behind a real MCP server), and writes the
spans with the SDK's real exporters into tests/fixtures/real/traces/:

  openinference_openai.jsonl        openinference-instrumentation-openai LLM spans + AGENT and TOOL spans
                                    from openinference's OITracer; session.id (using_session) = scenario id.
                                    SimpleSpanProcessor + FileSpanExporter: one OTLP JSON document a span.
  openinference_openai_stream.json  the same instrumentor on stream=True calls; tools uninstrumented; under
                                    the app's plain span; bound only by the first user prompt. One OTLP
                                    JSON document (FileSpanExporter behind a BatchSpanProcessor flushed once).
  openinference_openai_responses_stream.json
                                    the same instrumentor on stream=True Responses API calls (the scripted
                                    model serves /v1/responses too): no llm.input_messages, the prompt only
                                    in input.value; bound by prompt.
  openllmetry_openai_console.log    traceloop's opentelemetry-instrumentation-openai (content on, its
                                    default); ConsoleSpanExporter; behavegate.scenario.id on the app span.
  openai_v2_content.jsonl           opentelemetry-instrumentation-openai-v2 with
                                    OTEL_SEMCONV_STABILITY_OPT_IN=gen_ai_latest_experimental and content
                                    capture span_only; behavegate.scenario.id on the app span.
  openai_v2_no_content.json         the same instrumentor with its defaults (1.30 conventions, no content).
  pydantic_ai.json                  pydantic-ai Agent with three real tools, Agent.instrument_all(True) (its
                                    invoke_agent / chat / execute_tool spans); no span of ours: bound by prompt.
  openai_agents_openinference.json  the OpenAI Agents SDK (chat completions model, three function_tools),
                                    its tracing sent to openinference-instrumentation-openai-agents only
                                    (set_trace_processors([]): nothing to OpenAI); bound by prompt.
  litellm_otel.json                 litellm.completion with litellm.callbacks = ["otel"] (its own
                                    litellm_request / raw_gen_ai_request spans, USE_OTEL_LITELLM_REQUEST_SPAN).
  mcp_sdk_client.json               the tools behind an mcp SDK MCPServer (stdio subprocess): the SDK's own
                                    client spans ("MCP send tools/call NAME", mcp.method.name) + openai-v2
                                    model spans (content span_only); behavegate.scenario.id on the app span.
  mcp_sdk_client_no_content.json    the same with openai-v2's defaults (no content): the MCP client spans are
                                    the only record of which tools ran (their names only in the span names).
  mcp_sdk_both_sides.json           the MCPServer in-process over streamable HTTP on loopback: the SDK's server
                                    spans (SERVER, gen_ai.operation.name execute_tool, gen_ai.tool.name,
                                    error.type tool_error) under its client spans; openai-v2 without content.

Which package and version wrote each file is in truth.json (`versions`). Scenarios (every file has
one trace of each, in this order): refund-forbidden (lookup_order, then the forbidden issue_refund),
escalate (lookup_order, escalate_to_human), no-tools, tool-fails (lookup_order raises), two-at-once
(two lookup_order calls requested in one step).

truth.json is written from the plans and from what the tools logged when they ran (the MCP server
process logs its own calls), never by reading a trace file back. expected.json is derived from
truth.json and contract.yml by `expected()` below: the right verdict of every assertion, incomplete
only where the file's instrumentation cannot show the fact (`why` says which).

Deterministic output: seeded IdGenerator, the SDK clock replaced by one that advances 1 ms a read, the
scripted model's fixed ids and `created`. What the packages themselves draw from the machine is then
rewritten in ONE pass over each written file (`normalise`): UUIDs (LiteLLM call ids, pydantic-ai's
UUIDv7 agent call and conversation ids) become 00000000-0000-4000-8000-<n> by first appearance, the
scripted model's port becomes 8000, HTTP dates a fixed one, the venv and checkout paths in stack
traces /venv and /checkout; LiteLLM and the Agents SDK stamp their spans with their own wall-clock
times, so in their files (only) every time becomes BASE + its rank in milliseconds. Everything else is the exporters' bytes.

Regenerate:  python3 scripts/real_software/traces.py
Check (CI):  python3 scripts/real_software/traces.py --check   (exit 1 if a committed file differs)
After editing contract.yml or the rules below:  traces.py --expected-only  (expected.json from truth.json)
Score:       .venv/bin/python scripts/real_software/score.py   (behavegate's verdicts vs expected.json)

Not here: traceloop's opentelemetry-instrumentation-mcp 0.62.4 cannot instrument mcp 2.x (it wraps
mcp.client.streamable_http.streamablehttp_client, which mcp 2 renamed: wrapt PathResolutionError).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
FIXTURES = ROOT / "tests" / "fixtures" / "real" / "traces"
REQUIREMENTS = HERE / "requirements-traces.txt"
DEFAULT_VENV = Path.home() / ".cache" / "behavegate-real-software" / "traces-venv"
SOURCES = (
    "openinference",
    "openinference-stream",
    "openinference-responses",
    "openllmetry",
    "openai-v2",
    "openai-v2-no-content",
    "pydantic-ai",
    "openai-agents",
    "litellm",
    "mcp-sdk",
    "mcp-sdk-no-content",
    "mcp-sdk-both-sides",
)
BASE_NS = 1_772_442_900_000_000_000
# Sources whose spans carry the package's own wall-clock times (not the SDK clock): ranked in `normalise`.
WALL_CLOCK = ("litellm", "openai-agents")


def ensure_venv(venv: Path) -> Path:
    """The venv's python, with the pins installed (again only when requirements-traces.txt changed)."""
    python = venv / "bin" / "python"
    digest = hashlib.sha256(REQUIREMENTS.read_bytes()).hexdigest()
    stamp = venv / ".requirements-sha256"
    if python.exists() and stamp.exists() and stamp.read_text() == digest:
        return python
    if not python.exists():
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    uv = shutil.which("uv") or next((str(p) for p in [ROOT / ".venv" / "bin" / "uv"] if p.exists()), None)
    if uv:  # sync: exactly the pins, whatever an earlier requirements file left behind
        subprocess.run([uv, "pip", "sync", "--quiet", "--python", str(python), str(REQUIREMENTS)], check=True)
    else:
        pip = [str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check"]
        subprocess.run([*pip, "-r", str(REQUIREMENTS)], check=True)
    stamp.write_text(digest)
    return python


# --- the one normalising pass -----------------------------------------------------------------------------

UUID = re.compile(r"\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b")
HTTP_DATE = re.compile(r"\b(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun), \d\d \w{3} \d{4} \d\d:\d\d:\d\d GMT\b")
# LiteLLM's measured overhead, in its hidden_params attribute (JSON inside a JSON string).
OVERHEAD = re.compile(r'(\\"(?:litellm_overhead_time_ms|_response_ms)\\": )[0-9.e-]+')
OTLP_TIME = re.compile(r'"(startTimeUnixNano|endTimeUnixNano|timeUnixNano)":"(\d+)"')


def normalise(text: str, ports: dict[str, int], venv: Path, rank_times: bool) -> str:
    seen: dict[str, str] = {}
    text = UUID.sub(lambda m: seen.setdefault(m[0], f"00000000-0000-4000-8000-{len(seen) + 1:012d}"), text)
    for port, fixed in ports.items():
        text = text.replace(f"127.0.0.1:{port}", f"127.0.0.1:{fixed}").replace(f'"intValue":"{port}"', f'"intValue":"{fixed}"')
        text = text.replace(f'"server.port": {port}', f'"server.port": {fixed}')
    text = OVERHEAD.sub(r"\g<1>0.0", text)
    text = HTTP_DATE.sub("Mon, 02 Mar 2026 09:15:00 GMT", text)
    text = text.replace(str(venv.resolve()), "/venv").replace(str(venv), "/venv").replace(str(ROOT), "/checkout")
    if rank_times:
        times = sorted({int(m[2]) for m in OTLP_TIME.finditer(text)})
        rank = {t: BASE_NS + (i + 1) * 1_000_000 for i, t in enumerate(times)}
        text = OTLP_TIME.sub(lambda m: f'"{m[1]}":"{rank[int(m[2])]}"', text)
    return text


def generate(python: Path, venv: Path, out: Path, only: list[str]) -> dict[str, Any]:
    """Runs every source's worker into ``out``; returns the truth of every file written."""
    files: dict[str, Any] = {}
    for source in only:
        with tempfile.TemporaryDirectory() as scratch:
            done = subprocess.run(
                [str(python), str(HERE / "_traces_worker.py"), source, scratch],
                check=True,
                stdout=subprocess.PIPE,
                text=True,
                env={k: v for k, v in os.environ.items() if not k.startswith(("OTEL_", "TRACELOOP_"))},
            )
            result = json.loads(done.stdout)
            for name, truth in result.items():
                ports = truth.pop("ports")
                text = (Path(scratch) / name).read_text(encoding="utf-8")
                (out / name).write_text(normalise(text, ports, venv, source in WALL_CLOCK), encoding="utf-8")
                files[name] = truth
    return files


# --- what the contract's assertions must conclude --------------------------------------------------------

CALLS_NOT_SHOWN = "content capture is off: the model steps record no tool call names or arguments"
ARGUMENTS_NOT_SHOWN = "the MCP client spans name the tool (in the span name) but record no arguments, and content capture is off"
ERRORS_NOT_SHOWN = {
    "requested": "the tools ran uninstrumented: no tool span, so whether a call failed is not recorded",
    "none": "the tools ran uninstrumented and content capture is off: no record of any call, let alone a failure",
    "mcp": "the mcp SDK's client span stays OK when the tool's result is an error (isError): no failure recorded",
    "mcp-names": "the mcp SDK's client span stays OK when the tool's result is an error (isError): no failure recorded",
}
ANSWER_NOT_SHOWN = "content capture is off: no output text is recorded"

# What each source's file can show: calls ("executed": tool spans; "requested": the model's requested
# calls only; "mcp": MCP client spans plus the model's requests; "mcp-names": MCP client spans only,
# names without arguments; "none"), failures, the answer.
SHOWS: dict[str, dict[str, Any]] = {
    "openinference-openai": {"calls": "executed", "errors": True, "answer": True},
    "openinference-openai-stream": {"calls": "requested", "errors": False, "answer": True},
    "openinference-openai-responses-stream": {"calls": "requested", "errors": False, "answer": True},
    "openllmetry-openai": {"calls": "requested", "errors": False, "answer": True},
    "openai-v2": {"calls": "requested", "errors": False, "answer": True},
    "openai-v2-no-content": {"calls": "none", "errors": False, "answer": False},
    "pydantic-ai": {"calls": "executed", "errors": True, "answer": True},
    "openai-agents-openinference": {"calls": "executed", "errors": True, "answer": True},
    "litellm-otel": {"calls": "requested", "errors": False, "answer": True},
    "mcp-sdk": {"calls": "mcp", "errors": False, "answer": True},
    "mcp-sdk-no-content": {"calls": "mcp-names", "errors": False, "answer": False},
    "mcp-sdk-both-sides": {"calls": "mcp-names", "errors": True, "answer": False},
}


def _subset(expected: Any, observed: Any) -> bool:
    if isinstance(expected, dict):
        return isinstance(observed, dict) and all(k in observed and _subset(v, observed[k]) for k, v in expected.items())
    return bool(expected == observed)


def _matches(item: Any, call: dict[str, Any]) -> bool:
    if isinstance(item, str):
        return call["name"] == item
    return call["name"] == item["name"] and _subset(item.get("arguments", {}), call["arguments"])


def _in_order(items: list[Any], calls: list[dict[str, Any]]) -> bool:
    position = 0
    for item in items:
        while position < len(calls) and not _matches(item, calls[position]):
            position += 1
        if position == len(calls):
            return False
        position += 1
    return True


def _verdicts(expect: dict[str, Any], trace: dict[str, Any], shows: dict[str, Any]) -> dict[str, dict[str, str]]:
    """Every assertion id of one scenario (as behavegate names them) with its right verdict."""
    calls = trace["tool_calls"]
    # Every step that asked for tools asked for at least one; a step that stopped asked for none.
    known = shows["calls"] != "none" or not any(trace["requested"])
    arguments = shows["calls"] != "mcp-names"

    def needs_arguments(items: list[Any]) -> bool:
        return not arguments and any(isinstance(i, dict) and i.get("arguments") for i in items)

    out: dict[str, dict[str, str]] = {}

    def put(key: str, ok: bool, shown: bool = True, why: str = "") -> None:
        out[key] = {"verdict": "pass" if ok else "fail"} if shown else {"verdict": "incomplete", "why": why}

    response = expect.get("response", {})
    for i, text in enumerate(response.get("contains", [])):
        put(f"response.contains[{i}]", text in trace["answer"], shows["answer"], ANSWER_NOT_SHOWN)
    tools = expect.get("tools", {})
    for i, item in enumerate(tools.get("required", [])):
        shown, why = (False, ARGUMENTS_NOT_SHOWN) if needs_arguments([item]) else (known, CALLS_NOT_SHOWN)
        put(f"tools.required[{i}]", any(_matches(item, c) for c in calls), shown, why)
    for i, name in enumerate(tools.get("forbidden", [])):
        put(f"tools.forbidden[{i}]", all(c["name"] != name for c in calls), known, CALLS_NOT_SHOWN)
    for name, bounds in tools.get("calls", {}).items():
        count = sum(c["name"] == name for c in calls)
        put(f"tools.calls.{name}", bounds.get("min", 0) <= count <= bounds.get("max", count), known, CALLS_NOT_SHOWN)
    if "sequence" in tools:
        items, mode = tools["sequence"]["calls"], tools["sequence"]["mode"]
        if mode == "exact":
            ok = len(items) == len(calls) and all(_matches(i, c) for i, c in zip(items, calls, strict=False))
        else:
            ok = _in_order(items, calls)
        shown, why = (False, ARGUMENTS_NOT_SHOWN) if needs_arguments(items) else (known, CALLS_NOT_SHOWN)
        put("tools.sequence", ok, shown, why)
    if tools.get("no_errors"):
        shown = shows["errors"] or not calls
        put("tools.no_errors", not any(c["failed"] for c in calls), shown, ERRORS_NOT_SHOWN.get(shows["calls"], ""))
    if "steps" in expect:
        steps = trace["model_steps"] + len(calls)
        put("steps.max", steps <= expect["steps"]["max"], known, CALLS_NOT_SHOWN + ": the tool calls cannot be counted")
    return out


def expected(truth: dict[str, Any], contract: dict[str, Any]) -> dict[str, Any]:
    scenarios = {s["id"]: s["expect"] for s in contract["scenarios"]}
    out: dict[str, Any] = {}
    for name, file in truth["files"].items():
        shows = SHOWS[file["source"]]
        per = {t["scenario"]: _verdicts(scenarios[t["scenario"]], t, shows) for t in file["traces"]}
        out[name] = {"source": file["source"], "bind": file["bind"], "scenarios": per}
    return out


def _dump(value: Any) -> str:
    return json.dumps(value, indent=1, sort_keys=True, ensure_ascii=False) + "\n"


def _read_contract(python: Path) -> dict[str, Any]:
    # contract.yml is YAML: read by the venv's PyYAML (this script runs on a bare python3).
    load = "import json, sys, yaml; json.dump(yaml.safe_load(open(sys.argv[1])), sys.stdout)"
    argv = [str(python), "-c", load, str(FIXTURES / "contract.yml")]
    return dict(json.loads(subprocess.run(argv, check=True, stdout=subprocess.PIPE, text=True).stdout))


def write_all(python: Path, venv: Path, out: Path) -> None:
    files = generate(python, venv, out, list(SOURCES))
    truth = {
        "_rules": (
            "Per file: the source and the packages that wrote it, the binding flags, and per trace (one per "
            "scenario, in run order) the scenario, its first user prompt, the tool calls in the order they ran "
            "as the tools logged them (name, arguments, failed, error or result), the calls the model requested "
            "per step, the final answer, the tokens the scripted model reported per step and summed."
        ),
        "files": dict(sorted(files.items())),
    }
    (out / "truth.json").write_text(_dump(truth), encoding="utf-8")
    (out / "expected.json").write_text(_dump(expected(truth, _read_contract(python))), encoding="utf-8")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--venv", type=Path, default=DEFAULT_VENV)
    parser.add_argument("--check", action="store_true", help="regenerate into a temp dir; exit 1 on a difference")
    parser.add_argument(
        "--expected-only", action="store_true", help="only derive expected.json again from truth.json and contract.yml"
    )
    args = parser.parse_args()
    python = ensure_venv(args.venv)
    if args.expected_only:
        truth = json.loads((FIXTURES / "truth.json").read_text(encoding="utf-8"))
        (FIXTURES / "expected.json").write_text(_dump(expected(truth, _read_contract(python))), encoding="utf-8")
        return 0
    if not args.check:
        for stale in FIXTURES.iterdir():
            if stale.name != "contract.yml":
                stale.unlink()
        write_all(python, args.venv, FIXTURES)
        return 0
    with tempfile.TemporaryDirectory() as scratch:
        write_all(python, args.venv, Path(scratch))
        fresh = {p.name: p.read_bytes() for p in Path(scratch).iterdir()}
    committed = {p.name: p.read_bytes() for p in FIXTURES.iterdir() if p.name != "contract.yml"}
    differ = sorted(n for n in fresh.keys() | committed.keys() if fresh.get(n) != committed.get(n))
    for name in differ:
        print(f"differs: tests/fixtures/real/traces/{name}", file=sys.stderr)
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
