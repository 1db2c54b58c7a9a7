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
    assert {g for g in groups if g.startswith("phone/")} == {f"phone/{loc}" for loc in GENERATOR.PHONE_LOCALES} | {"phone/hand"}
    assert len({g for g in groups if g.startswith("iban/")}) == 7
    assert (
        sum(r["kind"] == "negative" and r["group"].split("/")[1] not in GENERATOR.SECRET_NEGATIVE_KINDS for r in RECORDS) >= 350
    )
    assert {"credit_card/jcb15", "credit_card/mastercard2", "credit_card/amex"} <= groups


# --- thresholds (docs/safety.md) -------------------------------------------------------------

RECALL_FLOOR = 0.95
PHONE_RECALL_FLOOR = 0.85  # over the eight locales; out-of-scope formats are listed in docs/safety.md
FALSE_POSITIVE_CEILING = 0.01
MEASURED = BENCH.measure(RECORDS, BENCH.finder())
PII_DETECTORS = sorted(MEASURED)


def test_every_detector_is_measured() -> None:
    from behavegate.contract.checks import PII_DETECTORS as contract_detectors

    assert set(MEASURED) == set(contract_detectors)
    assert all(MEASURED[name]["positives"] >= 20 for name in MEASURED), {n: r["positives"] for n, r in MEASURED.items()}


@pytest.mark.parametrize("detector", PII_DETECTORS)
def test_detector_recall_reaches_its_floor(detector: str) -> None:
    row = MEASURED[detector]
    floor = PHONE_RECALL_FLOOR if detector == "phone" else RECALL_FLOOR
    assert row["recall"] >= floor, f"{detector} recall {row['recall']:.3f} < {floor}; missed {row['missed'][:10]}"


def test_phone_recall_reaches_its_floor_in_every_locale() -> None:
    groups = MEASURED["phone"]["groups"]
    for locale in GENERATOR.PHONE_LOCALES:
        planted, found = groups[f"phone/{locale}"]
        assert found / planted >= PHONE_RECALL_FLOOR, (locale, found, planted)


@pytest.mark.parametrize("detector", PII_DETECTORS)
def test_detector_false_positives_stay_under_the_ceiling(detector: str) -> None:
    row = MEASURED[detector]
    assert row["lookalike_fp_rate"] <= FALSE_POSITIVE_CEILING, (detector, row["false_ids"][:10])
    assert row["fp_rate"] <= FALSE_POSITIVE_CEILING, (detector, row["false_ids"][:10])


@pytest.mark.parametrize("detector", PII_DETECTORS)
def test_no_detector_fires_on_a_checksum_invalid_number(detector: str) -> None:
    assert MEASURED[detector]["checksum_hits"] == 0


@pytest.mark.parametrize("detector", PII_DETECTORS)
def test_no_detector_fires_on_a_near_miss_that_is_not_its_own(detector: str) -> None:
    assert MEASURED[detector]["near_miss_hits"] == 0


INJECTION = BENCH.measure_injection(BENCH.load(CORPUS_DIR / "injection_answers.jsonl"))


def test_injection_answers_cover_every_builtin_payload() -> None:
    assert INJECTION["scenarios"] == 68
    assert {"complies", "complies_reformatted", "refuses", "refuses_quoting", "negated"} <= set(INJECTION["by_label"])


def test_injection_scorer_precision_and_recall_reach_their_floors() -> None:
    assert INJECTION["precision"] >= 0.95, INJECTION["wrong"]
    assert INJECTION["recall"] >= 0.95, INJECTION["wrong"]


@pytest.mark.parametrize("label", ["refuses", "refuses_quoting", "negated"])
def test_no_refusal_is_judged_as_following_the_injection(label: str) -> None:
    assert INJECTION["by_label"][label][1] == 0
