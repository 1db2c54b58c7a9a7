"""The safety scorers measured like classifiers, on the committed labelled corpus.

Run from the repository root:

    .venv/bin/python bench/bench_safety.py [--corpus FILE] [--groups] [--misses N] [--json]

For each ``safety.pii`` detector it prints, over tests/safety_corpus/corpus.jsonl:

  recall          the share of the sentences planted with a value of that detector where the
                  detector reports a finding overlapping the value (the verdict a user sees fails)
  false pos.      the share of all other sentences (other detectors' values, look-alikes,
                  near-misses) where it reports anything
  look-alikes     the same, over the look-alike negatives only (ISBN, EAN, dates, IPs, UUIDs, ...)
  near-miss hits  sentences among the hand-made and adversarial near-misses where it fires
                  though the case is not its own
  bad checksum    hits on checksum-invalid cards and IBANs (must be 0)

and then the injection-compliance scorer's precision and recall on the labelled answers of
tests/safety_corpus/injection_answers.jsonl, judged by the builtin payload library's own
expectations. It reads only the corpus files and prints only to stdout; deterministic.
"""

from __future__ import annotations

import argparse
import base64
import json
import sys
from collections import defaultdict
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
CORPUS = ROOT / "tests" / "safety_corpus" / "corpus.jsonl"
ANSWERS = ROOT / "tests" / "safety_corpus" / "injection_answers.jsonl"
LIBRARY_CONTRACT = """\
version: 2
agent: {model: m}
scenarios: [{id: own, prompt: hi, expect: {refusal: false}}]
include: [builtin:injection]
"""
CHECKSUM_GROUPS = ("near_miss/card_luhn_invalid", "near_miss/iban_checksum_invalid")

Finder = Callable[[str], dict[str, list[str]]]


def load(path: Path) -> list[dict[str, Any]]:
    """JSON lines; records stored base64-encoded (secret-shaped text) decoded."""
    records = []
    for line in path.read_text(encoding="utf-8").splitlines():
        record = json.loads(line) if line else None
        if record and record.get("encoding") == "base64":
            record["text"], record["value"] = (base64.b64decode(record[k]).decode() for k in ("text", "value"))
            del record["encoding"]
        if record:
            records.append(record)
    return records


def finder() -> Finder:
    """What each detector reports for one text, as the judge would report it."""
    from behavegate.judge import safety

    find_all = getattr(safety, "find_all", None)
    if find_all is not None:
        return lambda text: {name: list(found) for name, found in find_all(text).items()}
    return lambda text: {name: detect(text) for name, detect in safety.DETECTORS.items()}  # before: one by one


def _spans(text: str, found: str) -> list[tuple[int, int]]:
    spans, at = [], text.find(found)
    while at >= 0:
        spans.append((at, at + len(found)))
        at = text.find(found, at + 1)
    return spans


def hits_value(text: str, value: str, findings: Iterable[str]) -> bool:
    """Does some finding overlap where ``value`` stands in ``text``?"""
    start = text.find(value)
    if start < 0:
        return False
    end = start + len(value)
    return any(a < end and start < b for found in findings for a, b in _spans(text, found))


def measure(records: list[dict[str, Any]], find: Finder) -> dict[str, dict[str, Any]]:
    """Per detector: counts, rates and the ids of misses and false positives."""
    rows: dict[str, dict[str, Any]] = defaultdict(
        lambda: {"positives": 0, "found": 0, "others": 0, "false": 0, "lookalikes": 0, "lookalike_false": 0,
                 "near_miss_hits": 0, "checksum_hits": 0, "missed": [], "false_ids": [], "groups": defaultdict(lambda: [0, 0])}
    )  # fmt: skip
    for record in records:
        findings = find(record["text"])
        for detector, found in findings.items():
            row = rows[detector]
            if record["detector"] == detector:
                row["positives"] += 1
                hit = hits_value(record["text"], record["value"], found)
                row["found"] += hit
                row["groups"][record["group"]][0] += 1
                row["groups"][record["group"]][1] += hit
                if not hit:
                    row["missed"].append(record["id"])
                continue
            row["others"] += 1
            row["false"] += bool(found)
            if found:
                row["false_ids"].append(record["id"])
            if record["kind"] == "negative":
                row["lookalikes"] += 1
                row["lookalike_false"] += bool(found)
            if record["kind"] == "near_miss":
                row["near_miss_hits"] += bool(found)
                row["checksum_hits"] += bool(found) and record["group"] in CHECKSUM_GROUPS
    for row in rows.values():
        row["recall"] = row["found"] / row["positives"] if row["positives"] else None
        row["fp_rate"] = row["false"] / row["others"] if row["others"] else 0.0
        row["lookalike_fp_rate"] = row["lookalike_false"] / row["lookalikes"] if row["lookalikes"] else 0.0
    return dict(rows)


# --- injection compliance -----------------------------------------------------------------------


def measure_injection(answers: list[dict[str, Any]]) -> dict[str, Any]:
    """Each labelled answer judged by its payload scenario's own expectations, as ``behavegate
    test`` would judge it: a failing scenario is a detection. ``complies`` true = the agent
    followed the injection (a positive)."""
    from behavegate.contract.load import parse_contract_text
    from behavegate.judge.evaluate import evaluate_scenario
    from behavegate.model import Observation, ToolCall

    contract = parse_contract_text(LIBRARY_CONTRACT, ROOT / "library.yml", ROOT)
    library = {s.id: s for s in contract.scenarios}
    counts = {"tp": 0, "fp": 0, "fn": 0, "tn": 0}
    by_label: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    wrong: list[str] = []
    for answer in answers:
        scenario = library.get(answer["scenario"])
        if scenario is None:
            raise SystemExit(f"{answer['id']}: no scenario {answer['scenario']!r} in the builtin library")
        calls = tuple(ToolCall(c["name"], c["arguments"]) for c in answer["tool_calls"])
        observation = Observation(scenario.id, response=answer["response"], finish_reason="stop", response_complete=True,
                                  tool_calls=calls, tool_calls_complete=True)  # fmt: skip
        flagged = evaluate_scenario(scenario, observation, contract.agent).status == "fail"
        key = ("tp" if flagged else "fn") if answer["complies"] else ("fp" if flagged else "tn")
        counts[key] += 1
        by_label[answer["label"]][0] += 1
        by_label[answer["label"]][1] += flagged
        if key in ("fp", "fn"):
            wrong.append(f"{answer['id']} ({key})")
    positives, flagged_all = counts["tp"] + counts["fn"], counts["tp"] + counts["fp"]
    return {
        **counts,
        "precision": counts["tp"] / flagged_all if flagged_all else None,
        "recall": counts["tp"] / positives if positives else None,
        "by_label": dict(by_label),
        "wrong": wrong,
        "answers": len(answers),
        "scenarios": len({a["scenario"] for a in answers}),
    }


# --- output -----------------------------------------------------------------------------------


def _pct(value: float | None) -> str:
    return "n/a" if value is None else f"{100 * value:.1f}%"


def table(rows: dict[str, dict[str, Any]]) -> str:
    lines = ["| detector | positives | recall | false pos. (all others) | false pos. (look-alikes) | near-miss hits | bad checksum hits |",
             "|---|---:|---:|---:|---:|---:|---:|"]  # fmt: skip
    for name, row in sorted(rows.items()):
        lines.append(f"| {name} | {row['positives']} | {_pct(row['recall'])} | {_pct(row['fp_rate'])} ({row['false']}/{row['others']}) "
                     f"| {_pct(row['lookalike_fp_rate'])} ({row['lookalike_false']}/{row['lookalikes']}) | {row['near_miss_hits']} | {row['checksum_hits']} |")  # fmt: skip
    return "\n".join(lines)


def group_table(rows: dict[str, dict[str, Any]]) -> str:
    lines = ["| group | planted | found | recall |", "|---|---:|---:|---:|"]
    for name, row in sorted(rows.items()):
        for group, (planted, found) in sorted(row["groups"].items()):
            lines.append(f"| {group} ({name}) | {planted} | {found} | {_pct(found / planted)} |")
    return "\n".join(lines)


def injection_table(result: dict[str, Any]) -> str:
    lines = [f"{result['answers']} labelled answers over {result['scenarios']} payload scenarios: "
             f"precision {_pct(result['precision'])}, recall {_pct(result['recall'])} "
             f"(tp {result['tp']}, fp {result['fp']}, fn {result['fn']}, tn {result['tn']})", "",
             "| answer label | answers | judged as following the injection |", "|---|---:|---:|"]  # fmt: skip
    for label, (total, flagged) in sorted(result["by_label"].items()):
        lines.append(f"| {label} | {total} | {flagged} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Recall and false positives of the safety scorers on the labelled corpus.")
    parser.add_argument("--corpus", type=Path, default=CORPUS)
    parser.add_argument("--answers", type=Path, default=ANSWERS)
    parser.add_argument("--groups", action="store_true", help="also print recall per planted group (locale, brand, country)")
    parser.add_argument(
        "--misses", type=int, default=0, metavar="N", help="list up to N missed and N falsely flagged ids a detector"
    )
    parser.add_argument("--json", action="store_true", help="print the numbers as JSON instead of tables")
    args = parser.parse_args(argv)
    records = load(args.corpus)
    rows = measure(records, finder())
    injection = measure_injection(load(args.answers)) if args.answers.exists() else None
    if args.json:
        slim = {n: {k: v for k, v in r.items() if k not in ("missed", "false_ids", "groups")} for n, r in rows.items()}
        print(json.dumps({"detectors": slim, "injection": injection}, indent=2, sort_keys=True, default=str))
        return 0
    kinds = defaultdict(int)
    for record in records:
        kinds[record["kind"]] += 1
    print(f"corpus: {args.corpus.name}, {len(records)} sentences ({', '.join(f'{n} {k}' for k, n in sorted(kinds.items()))})\n")
    print(table(rows))
    if args.groups:
        print("\n" + group_table(rows))
    if args.misses:
        for name, row in sorted(rows.items()):
            if row["missed"] or row["false_ids"]:
                print(f"\n{name}: missed {row['missed'][: args.misses]}\n{name}: false {row['false_ids'][: args.misses]}")
    if injection is not None:
        print("\ninjection compliance (builtin:injection):\n" + injection_table(injection))
        if args.misses and injection["wrong"]:
            print("wrong: " + ", ".join(injection["wrong"][: args.misses]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
