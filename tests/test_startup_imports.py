"""A live run imports only what it uses (issue 41 item 2): its fixed cost before the first
request is mostly imports, so what it must not import is pinned here, without timing,
on a real loopback agent in a fresh interpreter."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from fake_agent import Request, serve

# Each of these was imported by a plain live run before issue 41 (or is heavy and never needed by one).
NOT_IMPORTED = (
    "jinja2",  # the Markdown summary and HTML renderers
    "jsonschema",  # only the baseline reader and arguments_valid use it
    "referencing",
    "attrs",
    "click",  # httpx's command-line tool (httpx._main)
    "pygments",
    "httpx",  # the exchange's types are evidence/http_model.py's; httpx only for a PR comment and --cache keys
    "urllib.request",  # what httpx brought: about 40 ms before the first request
    "http.cookiejar",
    "email.utils",  # a Retry-After date only
    "certifi",  # an https endpoint only
    "difflib",  # did-you-mean, on a contract error
    "uvicorn",  # the MCP tool server: agent.mcp only
    "mcp",
    "starlette",
    "phonenumbers",
    "behavegate.render.summary",
    "behavegate.render.html",
    "behavegate.render.junit",
    "behavegate.render.sarif",
    "behavegate.render.annotations",
    "behavegate.report.baseline_file",
    "behavegate.report.comparison",  # --baseline only
    "behavegate.evidence.shard",  # --shard only
    "behavegate.evidence.observation_file",
    "behavegate.commands.offline",
    "behavegate.commands.stream_offline",  # observation files only
    "behavegate.evidence.mcp_server",
    "behavegate.evidence.traces.load",  # the trace readers
    "behavegate.evidence.traces.reader",
    "behavegate.evidence.traces.line_formats",
    "behavegate.evidence.traces.text_formats",
    "behavegate.contract.datasets",  # CSV/JSONL golden sets
    "behavegate.contract.golden_queries",
    "behavegate.judge.safety",  # the PII/secret detectors: a contract asking for safety.pii
)

CONTRACT = """\
version: 1
agent:
  model: m
scenarios:
  - id: greets
    prompt: Say hello
    expect:
      response: {contains: [hello]}
      tools: {max_calls: 0}
"""

RUN = """
import json, sys
import behavegate.evidence.h11_transport as wire
first = []
send = wire._send
async def noted(connection, request):
    first.append(first or sorted(sys.modules))
    return await send(connection, request)
wire._send = noted
from behavegate.cli import main
code = main(sys.argv[1:])
print(json.dumps({"code": code, "modules": sorted(sys.modules), "first": first[0] if first else []}))
"""

# Needed only once answers come (judged on the judging thread) or after the run: each is
# imported after the first request is written, not before.
AFTER_THE_FIRST_REQUEST = (
    "behavegate.judge.evaluate",
    "behavegate.judge.assertions",
    "behavegate.report.result",
    "behavegate.report.build",
    "behavegate.report.suite",
)


def _hello(request: Request) -> dict[str, Any]:
    return {"choices": [{"message": {"role": "assistant", "content": "hello", "tool_calls": []}, "finish_reason": "stop"}]}


def _live_run_modules(tmp_path: Path, *flags: str) -> tuple[int, set[str], set[str]]:
    (tmp_path / "contract.yml").write_text(CONTRACT)
    with serve(_hello) as url:
        argv = ["test", "contract.yml", "--endpoint", url, "--no-artifacts", *flags]
        proc = subprocess.run(
            [sys.executable, "-c", RUN, *argv], cwd=tmp_path, capture_output=True, text=True, check=False, timeout=120
        )
    assert proc.stdout.strip(), proc.stderr
    facts = json.loads(proc.stdout.strip().splitlines()[-1])
    return facts["code"], set(facts["modules"]), set(facts["first"])


def test_a_plain_live_run_imports_no_renderer_reader_or_library_it_does_not_use(tmp_path: Path) -> None:
    code, modules, first = _live_run_modules(tmp_path)
    assert code == 0  # the run judged the agent's answer: the list below is a real run's
    assert {"behavegate.commands.live_run", "behavegate.evidence.h11_transport", "yaml", "h11"} <= modules
    assert sorted(name for name in NOT_IMPORTED if name in modules) == []
    assert "behavegate.contract.load" in first and set(AFTER_THE_FIRST_REQUEST) <= modules
    assert sorted(name for name in AFTER_THE_FIRST_REQUEST if name in first) == []


def test_a_json_report_imports_its_own_renderer_and_still_not_the_others(tmp_path: Path) -> None:
    code, modules, _ = _live_run_modules(tmp_path, "--format", "json", "--output", "out.json")
    assert code == 0 and json.loads((tmp_path / "out.json").read_text())["status"] == "pass"
    assert "behavegate.render.json" in modules
    assert sorted(name for name in NOT_IMPORTED if name in modules) == []
