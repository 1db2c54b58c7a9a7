"""The trace fixtures are what the real OpenTelemetry SDK and exporters write, and expected.json covers each."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "tests" / "fixtures" / "traces"
SCRIPT = ROOT / "scripts" / "make_trace_fixtures.py"


def _generator() -> ModuleType:
    spec = importlib.util.spec_from_file_location("make_trace_fixtures", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up while the class is made
    spec.loader.exec_module(module)
    return module


def test_committed_fixtures_are_what_the_sdk_writes() -> None:
    pytest.importorskip("opentelemetry.sdk.trace", reason="the OpenTelemetry SDK is not installed (pip install -e '.[test]')")
    pytest.importorskip("opentelemetry.exporter.otlp.json.file", reason="opentelemetry-exporter-otlp-json-file is not installed")
    pytest.importorskip(
        "opentelemetry.exporter.otlp.proto.common", reason="opentelemetry-exporter-otlp-proto-common is not installed"
    )
    problems = _generator().check(FIXTURES)
    assert problems == [], "regenerate with .venv/bin/python scripts/make_trace_fixtures.py"


def test_expected_lists_every_fixture_and_only_those() -> None:
    expected = json.loads((FIXTURES / "expected.json").read_text(encoding="utf-8"))
    listed = {name for name in expected if not name.startswith("_")}
    present = {p.name for p in FIXTURES.iterdir() if p.is_file() and p.name != "expected.json"}
    assert listed == present
    assert isinstance(expected["_rules"], str)
    for name in listed:
        entry = expected[name]
        assert entry["format"] in {"otlp-json", "otlp-jsonl", "console", "proto3-json"}, name
        assert entry["traces"], name
        for trace in entry["traces"]:
            assert len(trace["trace_id"]) == 32 and trace["trace_id"] == trace["trace_id"].lower(), name
            if trace["genai"]:
                assert trace["steps"] == trace["model_steps"] + len(trace["tool_calls"]), name
