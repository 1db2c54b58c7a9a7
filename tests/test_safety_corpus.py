"""The safety detectors measured on the committed labelled corpus (tests/safety_corpus/), with
the thresholds of docs/safety.md pinned. The corpus is a committed file: no randomness at
test time; the generator is checked to still write exactly that file."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]
CORPUS_DIR = ROOT / "tests" / "safety_corpus"


def _module(name: str, path: Path) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


GENERATOR = _module("make_safety_corpus", CORPUS_DIR / "make_corpus.py")
BENCH = _module("bench_safety", ROOT / "bench" / "bench_safety.py")
RECORDS: list[dict[str, Any]] = GENERATOR.load()


def test_committed_corpus_is_what_the_generator_writes() -> None:
    faker = pytest.importorskip("faker", reason="Faker is not installed (pip install -e '.[test]')")
    phonenumbers = pytest.importorskip("phonenumbers")
    if faker.VERSION != "40.54.0" or phonenumbers.__version__ != "9.0.43":
        pytest.skip("the corpus is written with the Faker and phonenumbers versions pinned in the test extras")
    assert GENERATOR.render(GENERATOR.build()) == (CORPUS_DIR / "corpus.jsonl").read_text(encoding="utf-8"), (
        "regenerate with .venv/bin/python tests/safety_corpus/make_corpus.py"
    )


def test_corpus_records_are_well_formed() -> None:
    ids = [r["id"] for r in RECORDS]
    assert len(ids) == len(set(ids))
    for record in RECORDS:
        assert record["kind"] in ("positive", "negative", "near_miss"), record["id"]
        if record["detector"] is not None:
            assert record["value"] and record["value"] in record["text"], record["id"]
        assert (record["kind"] == "positive") <= (record["detector"] is not None), record["id"]


def test_corpus_has_the_promised_size() -> None:
    groups = {r["group"] for r in RECORDS}
    assert {g for g in groups if g.startswith("phone/")} == {f"phone/{loc}" for loc in GENERATOR.PHONE_LOCALES}
    assert len({g for g in groups if g.startswith("iban/")}) == 7
    assert (
        sum(r["kind"] == "negative" and r["group"].split("/")[1] not in GENERATOR.SECRET_NEGATIVE_KINDS for r in RECORDS) >= 350
    )
    assert {"credit_card/jcb15", "credit_card/mastercard2", "credit_card/amex"} <= groups
