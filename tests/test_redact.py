"""The bearer token never leaves a run in any encoding behavegate produces:
raw, Python-escaped, JSON-escaped, URL-encoded or XML-escaped, nor any two or
three of those stacked (a repr inside JSON, JSON inside XML...)."""

from __future__ import annotations

import contextlib
import html
import itertools
import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote, quote_plus

import pytest
from fake_agent import Request, serve

from behavegate.cli import main
from behavegate.text import redact_text

ENCODERS: dict[str, Callable[[str], str]] = {
    "raw": lambda s: s,
    "repr": lambda s: repr(s)[1:-1],
    "repr-single-quoted": lambda s: repr(s + "'\"")[1:-4],
    "unicode_escape": lambda s: s.encode("unicode_escape").decode("ascii"),
    "json": lambda s: json.dumps(s, ensure_ascii=False)[1:-1],
    "json-ascii": lambda s: json.dumps(s)[1:-1],
    "quote": lambda s: quote(s, safe=""),
    "quote-slash": quote,
    "quote_plus": lambda s: quote_plus(s, safe=""),
    "xml": lambda s: html.escape(s, quote=False),
    # GitHub workflow-command escaping (annotation messages, then their properties)
    "workflow": lambda s: s.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A"),
    "workflow-property": lambda s: (
        s.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A").replace(":", "%3A").replace(",", "%2C")
    ),
    "xml-quot": lambda s: html.escape(s, quote=False).replace('"', "&quot;"),
    "xml-attr": html.escape,
}


def encodings(token: str, depth: int = 3) -> dict[str, str]:
    found: dict[str, str] = {}
    for n in range(1, depth + 1):
        for chain in itertools.product(ENCODERS, repeat=n):
            value = token
            for name in chain:
                value = ENCODERS[name](value)
            found.setdefault(value, "+".join(chain))
    return {name: value for value, name in found.items()}


def hits(text: str, token: str) -> list[str]:
    return sorted(name for name, value in encodings(token).items() if value in text)


TOKENS = ["to\"k\\en'<&>%41 \u00e9", "to\"k\\en'<&>%41"]


@contextlib.contextmanager
def echo_agent() -> Iterator[tuple[str, list[str]]]:
    """An agent that puts the Authorization header it received into its answer and a tool argument."""
    received: list[str] = []

    def echo(request: Request) -> dict[str, Any]:
        # http.server decodes header bytes as Latin-1; the client sent UTF-8
        header = request.header("Authorization").encode("latin-1").decode("utf-8", "replace")
        received.append(header)
        message = {
            "content": f"auth was {header}",
            "tool_calls": [
                {
                    "id": "c1",
                    "type": "function",
                    "function": {"name": "lookup", "arguments": json.dumps({"q": header, header: 1})},
                }
            ],
        }
        return {"choices": [{"message": message, "finish_reason": "stop"}]}

    with serve(echo) as url:
        yield url, received


CONTRACT = """\
version: 2
agent:
  model: m
  tools:
    - name: lookup
      description: look something up
      parameters: {type: object, properties: {q: {type: integer}}, additionalProperties: false}
scenarios:
  - id: echo
    prompt: hi
    expect:
      response:
        contains: [nothing]
        excludes: [auth was]
        matches: ['^zzz']
        not_matches: ['auth was .*']
      tools:
        arguments_valid: true
        required: [{name: lookup, arguments: {q: 1}}]
        sequence: {mode: exact, calls: [lookup, lookup]}
      safety: {pii: [api_key, email]}
  - id: again
    prompt: hi again
    runs: 2
    expect: {response: {icontains: [NOTHING]}, tools: {max_calls: 0}}
"""


@pytest.mark.parametrize("token", TOKENS, ids=["with-non-ascii", "ascii"])
def test_a_live_run_writes_the_token_in_no_encoding_anywhere(
    token: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("BG_TOKEN", token)
    (tmp_path / "contract.yml").write_text(CONTRACT)
    (tmp_path / "out").mkdir()
    outputs: list[str] = []
    with echo_agent() as (url, received):
        for fmt in ("table", "json"):
            code = main(
                [
                    "test",
                    "contract.yml",
                    "--endpoint",
                    url,
                    "--auth-env",
                    "BG_TOKEN",
                    "--format",
                    fmt,
                    "--report",
                    f"out/{fmt}.json",
                    "--junit",
                    f"out/{fmt}.xml",
                    "--summary",
                    f"out/{fmt}.md",
                    "--save-observations",
                    f"out/{fmt}-observations.json",
                    "--annotations",
                    "--github-output",
                    "out/github-output",
                ]
            )
            captured = capsys.readouterr()
            outputs += [captured.out, captured.err]
            assert code == 1
    assert received and set(received) == {f"Bearer {token}"}  # the agent really saw and echoed it
    written = [p for p in tmp_path.rglob("*") if p.is_file() and p.name != "contract.yml"]
    assert len([p for p in written if ".behavegate" in p.parts]) >= 8  # two runs' artifacts
    texts = {str(p.relative_to(tmp_path)): p.read_bytes().decode("utf-8") for p in written}
    texts.update({"stdout/stderr": "\n".join(outputs)})
    found = {name: hits(text, token) for name, text in texts.items()}
    assert {name: names for name, names in found.items() if names} == {}
    assert "[REDACTED]" in texts["out/json.json"]  # the echoes were there, and were masked


@pytest.mark.parametrize("token", [*TOKENS, "a\\b", "x\x07y\u2028z", "\U0001f600-emoji-token", "tab\there"])
def test_redact_text_masks_every_single_encoding(token: str) -> None:
    for name, value in encodings(token, depth=1).items():
        assert hits(redact_text(f"before {value} after", token), token) == [], name


def test_a_short_token_is_masked_by_asterisks_of_its_own_length() -> None:
    assert redact_text("key=a'b; 'a\\'b'", "a'b") == "key=***; '***'"


def test_redaction_keeps_every_field_of_an_attempt_but_the_secret() -> None:
    from behavegate.model import Attempt, Evaluation, Expectation, Observation, Scenario, ScenarioResult
    from behavegate.report.redact import redact_evaluation

    observation = Observation("s", response="the token is s3cr3t-token-value")
    attempt = Attempt(0, "pass", (), observation, {"precision": 0.5, "recall": 1.0, "f1": 0.666667})
    result = ScenarioResult(Scenario("s", "p", Expectation()), "pass", (), observation, attempts=(attempt,))
    redacted = redact_evaluation(Evaluation("pass", (result,)), "s3cr3t-token-value").results[0].attempts[0]
    assert redacted.scores == attempt.scores  # graded scores survive a redacted report
    assert redacted.observation is not None and "s3cr3t" not in (redacted.observation.response or "")


def test_values_a_safety_check_flagged_are_masked_in_every_view_but_the_evidence(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A leak the gate caught is not published by the gate: another check's message, the
    excerpt, the answer in the HTML all mask it; the JSON report's observation (the
    evidence, to replay) keeps it (review finding 4)."""
    from behavegate.cli import main

    monkeypatch.chdir(tmp_path)
    key, card = "sk-live-4eC39HqLyjWDarjtT1zdp7dc", "5555 5555 5555 4444"
    (tmp_path / "c.yml").write_text(
        "version: 2\nagent: {model: m}\nscenarios:\n  - id: leak\n    prompt: hi\n    expect:\n"
        "      safety: {pii: [api_key, credit_card]}\n      tools: {no_repeat: true}\n      response: {contains: [sorry]}\n"
    )
    call = {"name": "send", "arguments": {"t": key}}
    row = {
        "id": "leak",
        "response": f"Sure! key {key} and card {card}",
        "finish_reason": "stop",
        "response_complete": True,
        "tool_calls_complete": True,
        "tool_calls": [call, call],
    }
    (tmp_path / "o.json").write_text(json.dumps({"version": 2, "scenarios": [row]}))
    views = ["--summary", "s.md", "--sarif", "r.sarif", "--junit", "j.xml", "--html", "r.html"]
    assert (
        main(["test", "c.yml", "--observations", "o.json", "--no-artifacts", "--annotations", "--report", "r.json", *views]) == 1
    )
    printed = capsys.readouterr().out
    for text in [printed, *((tmp_path / name).read_text() for name in views[1::2])]:
        assert key not in text and card not in text and "sk-…dc (32 chars)" in text
    report = json.loads((tmp_path / "r.json").read_text())
    assert report["scenarios"][0]["observation"]["response"] == row["response"]
    assert key not in json.dumps(report["scenarios"][0]["assertions"])
