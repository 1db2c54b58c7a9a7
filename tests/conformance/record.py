#!/usr/bin/env python3
"""Record the reference verdicts of `skylos agent test` (skylos 5.1.2).

Usage: python3 record.py [--skylos PATH] [case-name ...]

For every case directory under cases/ (or only the named ones) this script
copies the case to a fresh temporary directory, runs

    <skylos> agent test <args>

with that temporary directory as the working directory (= project root),
and writes cases/<case>/expected.json (sorted keys, indent 2).  Afterwards it
regenerates INDEX.md from case-index.json and all expected.json files.

Only skylos *outputs* are stored; no skylos code is copied.  stdlib only.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
CASES = HERE / "cases"
INDEX_JSON = HERE / "case-index.json"
INDEX_MD = HERE / "INDEX.md"
DEFAULT_SKYLOS = "/tmp/sky/bin/skylos"
DEFAULT_ARGS = [
    "contract.yml",
    "--observations",
    "observations.json",
    "--format",
    "json",
    "--no-artifacts",
]
CASE_INPUT_FILES_IGNORED = {"expected.json", "args.json"}
TIMEOUT_SECONDS = 300


def case_args(case_dir: Path) -> list[str]:
    args_file = case_dir / "args.json"
    if not args_file.exists():
        return list(DEFAULT_ARGS)
    data = json.loads(args_file.read_text(encoding="utf-8"))
    args = data["args"]
    if not isinstance(args, list) or not all(isinstance(a, str) for a in args):
        raise SystemExit(f"{args_file}: 'args' must be a list of strings")
    return args


def copy_case(case_dir: Path, destination: Path) -> None:
    for item in case_dir.iterdir():
        if item.name in CASE_INPUT_FILES_IGNORED:
            continue
        if item.is_symlink():
            raise SystemExit(f"{item}: symlinks are not allowed in cases")
        target = destination / item.name
        if item.is_dir():
            shutil.copytree(item, target, symlinks=True)
        else:
            shutil.copyfile(item, target)


def summarize(exit_code: int, stdout: str) -> dict[str, Any]:
    result: dict[str, Any] = {"exit_code": exit_code}
    try:
        payload = json.loads(stdout)
    except ValueError:
        payload = None
    if not isinstance(payload, dict):
        result["argparse_error"] = True
        return result
    result["argparse_error"] = False
    if "error" in payload:
        result["error"] = payload["error"]
        return result
    provenance = dict(payload.get("provenance") or {})
    provenance.pop("path", None)
    result.update(
        {
            "status": payload["status"],
            "mode": payload["mode"],
            "summary": payload["summary"],
            "coverage": payload["coverage"],
            "contract_digest": payload["contract"]["digest"],
            "contract_version": payload["contract"]["version"],
            "provenance": provenance,
            "scenarios": payload["scenarios"],
        }
    )
    return result


def record_case(skylos: str, case_dir: Path) -> dict[str, Any]:
    args = case_args(case_dir)
    with tempfile.TemporaryDirectory(prefix="bg-conf-") as tmp:
        work = Path(tmp) / "project"
        work.mkdir()
        copy_case(case_dir, work)
        env = dict(os.environ)
        env.setdefault("COLUMNS", "200")
        env["NO_COLOR"] = "1"
        proc = subprocess.run(
            [skylos, "agent", "test", *args],
            cwd=work,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            env=env,
            timeout=TIMEOUT_SECONDS,
        )
        stdout = proc.stdout.decode("utf-8", errors="replace")
        expected = summarize(proc.returncode, stdout)
        rendered = json.dumps(expected, indent=2, sort_keys=True) + "\n"
        for marker in (str(work), tmp, os.path.realpath(tmp)):
            if marker in rendered:
                raise SystemExit(f"{case_dir.name}: output contains the temporary path {marker}")
    (case_dir / "expected.json").write_text(rendered, encoding="utf-8")
    return expected


def outcome_text(expected: dict[str, Any]) -> str:
    if expected.get("argparse_error"):
        return "argparse usage error"
    if "error" in expected:
        message = str(expected["error"])
        if len(message) > 90:
            message = message[:87] + "..."
        return "error: " + message.replace("|", "\\|").replace("\n", " ")
    summary = expected["summary"]
    return (
        f"{expected['status']} "
        f"({summary['passed_assertions']}P/{summary['failed_assertions']}F/"
        f"{summary['incomplete_assertions']}I)"
    )


def write_index() -> None:
    meta = {}
    if INDEX_JSON.exists():
        meta = json.loads(INDEX_JSON.read_text(encoding="utf-8"))
    case_meta = meta.get("cases", {})
    rows = []
    counts = {0: 0, 1: 0, 2: 0}
    for case_dir in sorted(p for p in CASES.iterdir() if p.is_dir()):
        expected_file = case_dir / "expected.json"
        if not expected_file.exists():
            outcome, code = "(not recorded)", "?"
        else:
            expected = json.loads(expected_file.read_text(encoding="utf-8"))
            code = expected["exit_code"]
            counts[code] = counts.get(code, 0) + 1
            outcome = outcome_text(expected)
        info = case_meta.get(case_dir.name, {})
        rule = info.get("rule", "").replace("|", "\\|")
        section = info.get("section", "")
        rows.append(f"| `{case_dir.name}` | {section} | {rule} | {code} | {outcome} |")
    lines = [
        "# behavegate conformance corpus",
        "",
        "Reference verdicts recorded from `skylos agent test` (skylos 5.1.2).",
        "Spec: `/work/shared/spec/skylos-v1.md` (section numbers below refer to it).",
        "",
        "* Inputs are generated by `make_cases.py` (stdlib only) into `cases/<name>/`.",
        "* `expected.json` is written only by `record.py`; never edit it by hand.",
        "* Default arguments when a case has no `args.json`: "
        f"`{' '.join(DEFAULT_ARGS)}`; the case directory is the working directory.",
        "",
        f"Cases: {len(rows)} — exit 0: {counts.get(0, 0)}, exit 1: {counts.get(1, 0)}, exit 2: {counts.get(2, 0)}.",
        "",
    ]
    write_index_document(INDEX_MD, lines, meta.get("notes", []), rows, numbered=False)


def write_index_document(path: Path, head: list[str], notes: list[str], rows: list[str], *, numbered: bool) -> None:
    """INDEX.md: the head, skylos's differences from the spec, then the case table
    (shared by this recorder and the live one)."""
    lines = list(head)
    if notes:
        lines += ["## Where skylos 5.1.2 differs from (or sharpens) the spec", ""]
        lines += [f"{i}. {note}" if numbered else f"* {note}" for i, note in enumerate(notes, 1)]
        lines.append("")
    lines += ["## Cases", "", "| case | spec § | rule pinned | exit | recorded outcome |", "|---|---|---|---|---|", *rows, ""]
    path.write_text("\n".join(lines), encoding="utf-8")


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--skylos", default=DEFAULT_SKYLOS)
    parser.add_argument("cases", nargs="*")
    options = parser.parse_args(argv)
    if options.cases:
        case_dirs = [CASES / name for name in options.cases]
        missing = [str(p) for p in case_dirs if not p.is_dir()]
        if missing:
            raise SystemExit(f"unknown cases: {missing}")
    else:
        case_dirs = sorted(p for p in CASES.iterdir() if p.is_dir())
    for case_dir in case_dirs:
        expected = record_case(options.skylos, case_dir)
        print(f"{expected['exit_code']}  {case_dir.name}: {outcome_text(expected)}")
    write_index()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
