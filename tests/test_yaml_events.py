"""Contracts are built from libyaml's events (no node graph), and that gives exactly
what composing them into nodes gives: the same values, lines and limits; anything
unusual is left to the composing path, which words the refusal as skylos does."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

from behavegate.contract import yaml_lines
from behavegate.contract.yaml_lines import LineMap, YamlRefused, load_yaml

REPO = Path(__file__).resolve().parents[1]
CORPUS = sorted(p for p in [*REPO.glob("tests/**/*.yml"), *REPO.glob("examples/**/*.yml")] if ".venv" not in p.parts)


def _events(source: str) -> tuple[Any, LineMap]:
    loader = yaml_lines._FAST_LOADER(source)
    try:
        return yaml_lines._load_events(loader, 20_000)
    finally:
        loader.dispose()


def _composed(source: str) -> tuple[Any, LineMap]:
    return yaml_lines._load_with(yaml_lines._FAST_LOADER, source, "Contract", check_aliases=True, max_values=20_000)


def _same(a: Any, lines_a: LineMap, b: Any, lines_b: LineMap) -> None:
    assert type(a) is type(b)
    assert a == b or repr(a) == repr(b)  # NaN is NaN
    if isinstance(a, dict):
        assert lines_a.of(a) == lines_b.of(b)
        for key in a:
            assert lines_a.of_key(a, key) == lines_b.of_key(b, key)
            _same(a[key], lines_a, b[key], lines_b)
    elif isinstance(a, list):
        assert lines_a.of(a) == lines_b.of(b)
        for index, (x, y) in enumerate(zip(a, b, strict=True)):
            assert lines_a.of_item(a, index) == lines_b.of_item(b, index)
            _same(x, lines_a, y, lines_b)


def _agrees(source: str) -> bool:
    """True when the events built the document (and it equals the composed one)."""
    try:
        built = _events(source)
    except Exception:
        return False
    value, lines = _composed(source)
    _same(value, lines, *built)
    assert lines.within_limits == built[1].within_limits
    return True


def test_every_contract_in_the_repository_builds_the_same_from_events() -> None:
    built = sum(_agrees(path.read_text(encoding="utf-8", errors="replace")) for path in CORPUS)
    assert len(CORPUS) > 300 and built > 0.9 * len(CORPUS)


KEYS = st.text(st.characters(codec="utf-8", exclude_categories=["Cs"]), max_size=6)
SCALARS = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | KEYS
VALUES = st.recursive(
    SCALARS, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(KEYS, inner, max_size=4), max_leaves=25
)


@given(VALUES, st.sampled_from([None, True, False]), st.sampled_from([None, '"', "'", "|"]))
def test_dumped_documents_in_any_style_build_the_same_from_events(value: Any, flow: bool | None, style: str | None) -> None:
    assert _agrees(yaml.safe_dump(value, default_flow_style=flow, default_style=style, allow_unicode=True))


@pytest.mark.parametrize(
    ("source", "message"),
    [
        ("a: &x 1\nb: *x\n", "Contract contains a YAML alias"),
        ("a: 1\na: 2\n", "Duplicate contract mapping key: 'a'"),
        ("? [1]\n: 2\n", "Contract mapping keys must be scalar"),
        ("a: !!int abc\n", "invalid literal for int()"),
        ("a: 1\n---\nb: 2\n", "expected a single document"),
        ("a: [1\n", "Invalid contract YAML"),
    ],
)
def test_unusual_documents_are_refused_as_the_composing_path_words_them(source: str, message: str) -> None:
    with pytest.raises(Exception):  # noqa: B017 - the event path declines; which exception does not matter
        _events(source)
    with pytest.raises(YamlRefused) as refused:
        load_yaml(source)
    assert message in refused.value.problem.text or message in str(refused.value.problem)


def test_tagged_scalars_and_sets_still_load() -> None:
    value, lines = load_yaml("a: !!str 12\nb: !!set {x, y}\nc: 2001-12-14\nd: 0o17\ne: NO\n")
    assert value["a"] == "12" and value["b"] == {"x", "y"} and value["e"] is False
    assert lines.of_key(value, "e") == 5
