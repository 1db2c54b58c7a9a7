"""Reproducers from the hostile review of issue 9's fixes (branch i10-review).

Each test fails on main as merged (8053dde) and states what should happen instead.
Every run is offline (``--observations``) or on loopback; nothing leaves the machine.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from helpers import PEAK_RSS_SCRIPT

from behavegate.evidence.trust import is_isolated_address


def _obs(calls: list[dict[str, Any]] | None = None, response: str = "ok") -> dict[str, Any]:
    return {
        "version": 2,
        "scenarios": [
            {
                "id": "s",
                "response": response,
                "finish_reason": "stop",
                "response_complete": True,
                "tool_calls_complete": True,
                "tool_calls": calls or [],
            }
        ],
    }


def _tool_contract(parameters: dict[str, Any]) -> str:
    return json.dumps(
        {
            "version": 2,
            "agent": {"tools": [{"name": "t", "description": "d", "parameters": parameters}]},
            "scenarios": [{"id": "s", "prompt": "p", "available_tools": ["t"], "expect": {"tools": {"arguments_valid": True}}}],
        }
    )


def _behavegate(cwd: Path, *args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "BEHAVEGATE_DEBUG": ""}
    env.pop("BEHAVEGATE_DEBUG")
    return subprocess.run(
        [sys.executable, "-m", "behavegate", *args], cwd=cwd, capture_output=True, text=True, timeout=timeout, env=env
    )


def _offline(
    tmp_path: Path, contract: str, observations: dict[str, Any], *extra: str, timeout: float = 60
) -> subprocess.CompletedProcess[str]:
    (tmp_path / "c.yml").write_text(contract, encoding="utf-8")
    (tmp_path / "o.json").write_text(json.dumps(observations), encoding="utf-8")
    return _behavegate(tmp_path, "test", "c.yml", "--observations", "o.json", "--no-artifacts", *extra, timeout=timeout)


# --- 3. CPU: a catastrophic JSON Schema `pattern` runs under Python's `re`, with no budget ---------


@pytest.mark.parametrize(
    "parameters",
    [
        {"type": "object", "properties": {"x": {"type": "string", "pattern": "^(a|a)*$"}}},
        {"type": "object", "patternProperties": {"^(a|a)*$": {"type": "integer"}}},
        {"type": "object", "propertyNames": {"pattern": "^(a|a)*$"}},
    ],
    ids=["pattern", "patternProperties", "propertyNames"],
)
def test_a_backtracking_schema_pattern_cannot_outlive_max_seconds(tmp_path: Path, parameters: dict[str, Any]) -> None:
    # The agent controls the argument: 34 "a" and a "b" take hours in `re`. The run must stop
    # within its --max-seconds (the pattern judged incomplete), not hang the CI job.
    hostile = "a" * 34 + "b"
    arguments = {"x": hostile} if "properties" in parameters else {hostile: 1}
    try:
        result = _offline(
            tmp_path, _tool_contract(parameters), _obs([{"name": "t", "arguments": arguments}]), "--max-seconds", "3", timeout=20
        )
    except subprocess.TimeoutExpired:
        pytest.fail("arguments_valid ran a user schema pattern for over 20 s despite --max-seconds 3")
    assert result.returncode == 2
    assert "internal error" not in result.stdout + result.stderr


# --- 3. Memory: `regex.compile` expands nested bounded repeats at contract load ------------------


def test_a_short_matches_pattern_cannot_allocate_gigabytes(tmp_path: Path) -> None:
    # 26 characters of contract: ~1.1 GB RSS here; "{20}" instead of "{3}" takes 5.5 GB and 10 s,
    # all inside contract validation (contract/v2.py regex.compile), before any budget applies.
    contract = (
        "version: 2\nagent: {model: m}\nscenarios:\n  - id: s\n    prompt: p\n"
        "    expect:\n      response:\n        matches: ['(?:(?:a{1000}){1000}){3}']\n"
    )
    (tmp_path / "c.yml").write_text(contract)
    (tmp_path / "o.json").write_text(json.dumps(_obs()))
    (tmp_path / "rss.py").write_text(PEAK_RSS_SCRIPT)
    rss_file = tmp_path / "rss.txt"
    subprocess.run(
        [sys.executable, "rss.py", str(rss_file), "test", "c.yml", "--observations", "o.json", "--no-artifacts"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    peak_mb = int(rss_file.read_text()) / 1024
    assert peak_mb < 300, f"peak RSS {peak_mb:.0f} MB for a 26-character regex"


# --- 4. Bad strings: a `$ref` cycle in a declared schema is an "internal error" -------------------


@pytest.mark.parametrize(
    "parameters",
    [
        {"$ref": "#"},
        {"type": "object", "properties": {"x": {"$ref": "#/properties/x"}}},
        {
            "type": "object",
            "properties": {"x": {"$ref": "#/$defs/a"}},
            "$defs": {"a": {"$ref": "#/$defs/b"}, "b": {"$ref": "#/$defs/a"}},
        },
        {"type": "object", "properties": {"x": {"$id": "http://127.0.0.1:9/x", "$ref": "#"}}},
    ],
    ids=["root", "self", "mutual", "id-hash"],
)
def test_a_reference_cycle_is_a_contract_error_not_an_internal_error(tmp_path: Path, parameters: dict[str, Any]) -> None:
    result = _offline(tmp_path, _tool_contract(parameters), _obs([{"name": "t", "arguments": {"x": "v"}}]))
    out = result.stdout + result.stderr
    assert "internal error" not in out, out  # today: RecursionError, the whole run lost
    assert "parameters" in out  # named by its YAML path (or the scenario judged incomplete)


# --- 4. Bad strings: YAML scalars PyYAML cannot convert crash the loader --------------------------


@pytest.mark.parametrize("scalar", ["!!bool maybe", '!!bool ""', '!!int ""', '!!int "+"', '!!float ""', "!!timestamp abc"])
def test_every_unconvertible_yaml_scalar_is_a_contract_error_with_its_line(tmp_path: Path, scalar: str) -> None:
    contract = f"version: 1\nscenarios:\n  - id: s\n    prompt: {scalar}\n    expect:\n      response:\n        contains: [ok]\n"
    result = _offline(tmp_path, contract, _obs(), "--report", "r.json")
    out = result.stdout + result.stderr
    assert result.returncode == 2
    assert "internal error" not in out, out  # today: KeyError / IndexError / AttributeError
    assert "line 4" in out


# --- 4. Bad strings: a NUL in an include name ------------------------------------------------------


def test_a_nul_in_an_include_name_is_a_contract_error(tmp_path: Path) -> None:
    contract = json.dumps(
        {
            "version": 2,
            "agent": {"model": "m"},
            "include": ["lib\u0000.yml"],
            "scenarios": [{"id": "s", "prompt": "p", "expect": {"response": {"contains": ["ok"]}}}],
        }
    )
    result = _offline(tmp_path, contract, _obs())
    out = result.stdout + result.stderr
    assert "internal error" not in out, out  # today: ValueError: embedded null byte
    assert "include" in out


# --- 7. The Action masks a different string than the token ---------------------------------------


def _runner_unescape(data: str) -> str:
    return data.replace("%0D", "\r").replace("%0A", "\n").replace("%25", "%")


@pytest.mark.parametrize("token", ["tok##[en-secret-1", "tok\u0085en-secret-2", "tok\u2028en-secret-3", " ::tok-secret-4"])
def test_the_add_mask_value_is_the_token_itself(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], token: str
) -> None:
    from behavegate.github import action

    (tmp_path / "contract.yml").write_text((Path(__file__).parents[1] / "examples/refund-agent/contract.yml").read_text())
    monkeypatch.chdir(tmp_path)
    environ = {
        "GITHUB_WORKSPACE": str(tmp_path),
        "INPUT_CONTRACT": "contract.yml",
        "INPUT_ENDPOINT": "http://127.0.0.1:9/v1/chat/completions",
        "INPUT_AUTH-ENV": "AGENT_TOKEN",
        "AGENT_TOKEN": token,
        "INPUT_MAX-SECONDS": "2",
    }
    for key, value in environ.items():
        monkeypatch.setenv(key, value)
    action.main(environ)
    first = capsys.readouterr().out.split("\n", 1)[0]
    assert first.startswith("::add-mask::")
    # The runner masks exactly the unescaped data; today it is e.g. "tok##\[en-secret-1" or
    # "tok\x85en..." (backslash text), so the real token is never masked. Either mask the raw
    # token (it is the whole command line) or refuse such a token before the run.
    assert _runner_unescape(first.removeprefix("::add-mask::")) == token


# --- 5. Output files: a refused artifacts directory is silent on the console ----------------------


def test_a_planted_artifacts_link_is_named_on_the_console(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    project = tmp_path / "project"
    outside.mkdir()
    project.mkdir()
    (project / ".behavegate").symlink_to(outside)
    example = Path(__file__).parents[1] / "examples" / "refund-agent"
    (project / "c.yml").write_text((example / "contract.yml").read_text())
    (project / "o.json").write_text((example / "observations-good.json").read_text())
    result = _behavegate(project, "test", "c.yml", "--observations", "o.json")
    assert not list(outside.iterdir())  # held: nothing written through the link
    assert result.returncode == 2
    # Today the table says "incomplete" with every assertion passing and no reason; the reason
    # (harness_artifact_write_failed) is only inside the JSON report.
    assert "symlink" in result.stdout + result.stderr


# --- 6. --allow-host: a scope id is accepted whatever it holds -------------------------------------


def test_a_scope_id_with_url_delimiters_is_not_an_isolated_address() -> None:
    # getaddrinfo never returns this, so it is not reachable through DNS today; but the pinned
    # connect URL becomes "http://[fd00::1%@evil.example:80]:8080/..." (httpx: InvalidURL), and
    # a zone id is never percent-encoded (RFC 6874 "%25").
    assert not is_isolated_address("fd00::1%@evil.example:80")


@pytest.mark.parametrize(
    ("pattern", "steps"),
    [
        ("abc", 3),
        ("a{3}", 3),
        ("(?:ab){10}", 20),
        ("(?:(?:a{1000}){1000}){3}", 3_000_000),
        ("a|b{5}", 6),
        (r"\d{1,5}", 5),
        ("(?<=a{4})b", 5),
        ("a*", 1),
        ("(?:a{2,}){3}", 6),
    ],
)
def test_pattern_expansion_multiplies_nested_counted_repeats(pattern: str, steps: int) -> None:
    from behavegate.contract.patterns import expansion

    assert expansion(pattern) == steps or (steps > 100_000 and expansion(pattern) > 100_000)


def test_a_pattern_only_the_regex_engine_reads_gets_the_product_of_its_counts() -> None:
    from behavegate.contract.patterns import expansion, pattern_problem

    assert expansion(r"(?<=a+)b{5}") >= 5  # variable-width lookbehind: re cannot parse it
    assert pattern_problem(r"(?<=a+)b{5}") is None
    assert pattern_problem(r"(?<=a+)(?:b{1000}){1000}") is not None


def test_a_contract_file_name_that_is_not_utf8_is_shown_escaped_in_every_view(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A name with a byte that is no UTF-8 (os.fsdecode gives a surrogate) was an internal error."""
    import os

    monkeypatch.chdir(tmp_path)
    name = os.fsdecode(b"c\xff.yml")
    (tmp_path / name).write_text("version: 1\nagent: {}\nscenarios:\n  - {id: a, prompt: p, expect: {refusal: true}}\n")
    (tmp_path / "obs.json").write_text(
        '{"version": 1, "scenarios": [{"id": "a", "response": "no", "refusal": true, "finish_reason": "stop", '
        '"response_complete": true, "tool_calls": [], "tool_calls_complete": true}]}'
    )
    from behavegate.cli import main

    code = main(
        [
            "test",
            name,
            "--observations",
            "obs.json",
            "--junit",
            "j.xml",
            "--html",
            "h.html",
            "--sarif",
            "s.sarif",
            "--summary",
            "s.md",
            "--format",
            "json",
            "--output",
            "r.json",
        ]
    )
    assert code == 0, capsys.readouterr().err
    assert '"contract_path": "c\\\\xff.yml"' in (tmp_path / "r.json").read_text()
    for view in ("j.xml", "h.html", "s.md"):
        assert "c\\xff.yml" in (tmp_path / view).read_text(encoding="utf-8"), view
    assert "c\\\\xff.yml" in (tmp_path / "s.sarif").read_text()  # JSON text: the backslash escaped
