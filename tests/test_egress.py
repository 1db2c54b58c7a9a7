"""Nothing leaves the run but the allowed endpoint: a tool schema's references
are resolved only within the schema, never fetched (http://, file://)."""

from __future__ import annotations

import contextlib
import json
import sys
import textwrap
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fake_agent import Request, serve

from behavegate.cli import main
from behavegate.judge.argument_schemas import check_calls
from behavegate.model import ToolCall


def argument_errors(call: ToolCall, schemas: dict[str, Any]) -> list[str]:
    return list(check_calls([call], schemas)[0].problems)


def foreign_references(schema: dict[str, Any], path: str) -> list[Any]:
    from behavegate.contract.schema_refs import (
        foreign_references as found,  # imported late: the run tests also pass on older code
    )

    return list(found(schema, path))


# Every file opened and socket connected while a test watches (audit events cannot be unhooked).
_SEEN: list[tuple[str, str]] = []
_WATCHING = threading.Event()


def _audit(event: str, args: tuple[Any, ...]) -> None:
    if _WATCHING.is_set() and event in {"open", "socket.connect", "urllib.Request"}:
        _SEEN.append((event, str(args[0] if event != "socket.connect" else args[1])))


sys.addaudithook(_audit)


@contextlib.contextmanager
def watched() -> Iterator[list[tuple[str, str]]]:
    _SEEN.clear()
    _WATCHING.set()
    try:
        yield _SEEN
    finally:
        _WATCHING.clear()


@contextlib.contextmanager
def schema_server() -> Iterator[tuple[str, list[str]]]:
    """A loopback server that would serve an integer schema, and counts every request."""
    requests: list[str] = []

    def schema(request: Request) -> dict[str, Any]:
        requests.append(request.path)
        return {"type": "integer"}

    with serve(schema, "/schema.json") as url:
        yield url, requests


def contract_with_ref(ref: str) -> str:
    return textwrap.dedent(f"""\
        version: 2
        agent:
          model: m
          tools:
            - name: a
              description: d
              parameters:
                type: object
                properties:
                  x:
                    $ref: '{ref}'  # line 11
        scenarios:
          - id: s
            prompt: p
            expect: {{tools: {{arguments_valid: true}}}}
        """)


OBSERVATIONS = {
    "version": 2,
    "scenarios": [
        {
            "id": "s",
            "response": "ok",
            "finish_reason": "stop",
            "response_complete": True,
            "tool_calls_complete": True,
            "tool_calls": [{"name": "a", "arguments": {"x": "not an int"}}],
        }
    ],
}


def run_offline(tmp_path: Path, ref: str, capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    (tmp_path / "contract.yml").write_text(contract_with_ref(ref))
    (tmp_path / "obs.json").write_text(json.dumps(OBSERVATIONS))
    capsys.readouterr()
    code = main(["test", "contract.yml", "--observations", "obs.json", "--no-artifacts"])
    captured = capsys.readouterr()
    return code, captured.out + captured.err


def test_an_offline_run_with_an_http_ref_sends_no_request_and_names_the_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    with schema_server() as (url, requests), watched() as seen:
        code, output = run_offline(tmp_path, url, capsys)
    assert requests == []
    assert [s for s in seen if s[0] != "open"] == []
    assert code == 2
    assert "agent.tools[0].parameters.properties.x.$ref (line 11): must be a local '#...' reference" in output


def test_an_offline_run_with_a_file_ref_opens_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    target = outside / "schema.json"
    target.write_text(json.dumps({"type": "integer", "description": "OUTSIDE-SECRET"}))
    project = tmp_path / "project"
    project.mkdir()
    monkeypatch.chdir(project)
    with watched() as seen:
        code, output = run_offline(project, target.as_uri(), capsys)
    assert [s for s in seen if "outside" in s[1]] == []
    assert code == 2 and "(line 11)" in output and "OUTSIDE-SECRET" not in output


def test_the_validator_itself_refuses_to_fetch_even_a_schema_the_reader_never_saw() -> None:
    # Defence in depth: a schema reaching the validator some other way still resolves nothing remote.
    with schema_server() as (url, requests), watched() as seen:
        problems = argument_errors(ToolCall("a", {"x": "y"}), {"a": {"properties": {"x": {"$ref": url}}}})
        file_problems = argument_errors(ToolCall("a", {"x": "y"}), {"a": {"properties": {"x": {"$ref": "file:///etc/hostname"}}}})
    assert requests == [] and [s for s in seen if s[0] != "open" or "hostname" in s[1]] == []
    assert problems == [f"the declared parameters schema has a reference that does not resolve locally: {url!r}"]
    assert "does not resolve locally" in file_problems[0]


def test_local_references_still_resolve() -> None:
    schema = {"$defs": {"n": {"type": "integer"}}, "properties": {"x": {"$ref": "#/$defs/n"}}}
    assert argument_errors(ToolCall("a", {"x": 1}), {"a": schema}) == []
    assert argument_errors(ToolCall("a", {"x": "y"}), {"a": schema}) == ["x: 'y' is not of type 'integer'"]
    assert list(foreign_references(schema, "p")) == []


@pytest.mark.parametrize(
    ("schema", "where"),
    [
        ({"$ref": "https://example.com/s.json"}, "p.$ref"),
        ({"items": [{"$dynamicRef": "other.json#meta"}]}, "p.items[0].$dynamicRef"),
        ({"$defs": {"const": {"$recursiveRef": "//host/x"}}}, "p.$defs.const.$recursiveRef"),
        ({"$schema": "http://127.0.0.1:1/meta"}, "p.$schema"),
        ({"properties": {"x": {"not": {"$ref": "file:///etc/passwd"}}}}, "p.properties.x.not.$ref"),
    ],
)
def test_every_non_local_reference_keyword_is_found(schema: dict[str, Any], where: str) -> None:
    assert [found[2] for found in foreign_references(schema, "p")] == [where]


def test_reference_keywords_as_names_or_data_are_not_references() -> None:
    schema = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "properties": {"$ref": {"type": "string"}},
        "const": {"$ref": "http://data.example/not-a-ref"},
        "examples": [{"$ref": "http://x"}],
    }
    assert list(foreign_references(schema, "p")) == []


def test_version_1_passes_parameters_on_untouched_as_skylos_does(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from helpers import contract

    parsed = contract(
        contract_with_ref("http://127.0.0.1:1/x")
        .replace("version: 2", "version: 1")
        .replace("    expect: {tools: {arguments_valid: true}}\n", "    expect: {refusal: false}\n")
    )
    assert parsed.agent.tools[0].parameters["properties"]["x"] == {"$ref": "http://127.0.0.1:1/x"}


# --- the audit of every other library call that could open a file or socket -----------------


@pytest.mark.parametrize(
    "text",
    [
        'a: !!python/object/apply:os.system ["true"]',
        "a: !!python/name:os.system",
        "a: !include /etc/passwd",
        "a: !!python/object/new:socket.socket []",
    ],
)
def test_yaml_tags_cannot_construct_objects_or_include_files(text: str) -> None:
    from behavegate.contract.yaml_lines import YamlRefused, load_yaml

    with watched() as seen, pytest.raises(YamlRefused, match="could not determine a constructor"):
        load_yaml(text, "Contract")
    assert seen == []


@pytest.mark.parametrize("name", ["../outside.yml", "/etc/hostname", "builtin:../../outside", "file:///etc/hostname"])
def test_includes_stay_in_the_project_or_the_builtin_libraries(tmp_path: Path, name: str) -> None:
    from behavegate.contract.load import parse_contract_text
    from behavegate.errors import ContractError

    (tmp_path / "outside.yml").write_text(
        textwrap.dedent("""\
            version: 2
            scenarios: []
            """)
    )
    root = tmp_path / "project"
    root.mkdir()
    text = textwrap.dedent(f"""\
        version: 2
        include: ['{name}']
        agent: {{model: m}}
        scenarios:
          - {{id: s, prompt: p, expect: {{refusal: false}}}}
        """)
    with pytest.raises(ContractError) as raised:
        parse_contract_text(text, root / "contract.yml", root)
    assert any("include" in line for line in raised.value.details())


def test_summary_templates_are_package_files_that_include_nothing() -> None:
    from importlib import resources

    from jinja2 import PackageLoader

    from behavegate.render.summary import _environment

    env = _environment()
    assert isinstance(env.loader, PackageLoader) and env.loader.package_name == "behavegate.render"
    folder = resources.files("behavegate.render") / "templates"
    for template in folder.iterdir():
        text = template.read_text(encoding="utf-8")
        for tag in ("include", "import", "extends", "from"):
            assert f"{{% {tag}" not in text and f"{{%- {tag}" not in text, template.name
