#!/usr/bin/env python3
"""Record the reference live-mode verdicts of `skylos agent test` (skylos 5.1.2).

Usage: python3 record.py [--skylos PATH] [-j N] [case-name ...]

For every case under cases/ (or only the named ones): start the canned server
(server.py) with the case's responses.json, copy the case to a fresh temporary
directory (placeholders filled in, see harness.py), run

    <skylos> agent test <args>

there (cwd = that directory; env = os.environ plus the case's env, a null value
unsets the variable) and write cases/<case>/expected.json (sorted keys, indent 2):
exit_code, argparse_error, then error or status/mode/summary/coverage/scenarios/
provenance (minus endpoint_fingerprint, which depends on the port), plus
``requests`` (the parsed request bodies the server received, in arrival order)
and ``request_meta`` (method, path, Accept, Content-Type, Authorization).
Afterwards INDEX.md is regenerated from case-index.json and the expected files.

Only skylos *outputs* are stored; no skylos code is copied.  stdlib only.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import harness  # noqa: E402
import server  # noqa: E402


def _offline_recorder() -> Any:
    """The offline recorder (same module name as this one, so loaded by path)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("offline_record", HERE.parent / "record.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


CASES = HERE / "cases"
INDEX_JSON = HERE / "case-index.json"
INDEX_MD = HERE / "INDEX.md"
DEFAULT_SKYLOS = "/tmp/sky/bin/skylos"
TIMEOUT_SECONDS = 120


def record_case(skylos: str, case_dir: Path) -> tuple[dict[str, Any], float]:
    started = time.monotonic()
    url, stop, log = server.start(harness.case_responses(case_dir))
    try:
        with tempfile.TemporaryDirectory(prefix="bg-live-") as tmp:
            work = Path(tmp) / "project"
            work.mkdir()
            args, case_env = harness.materialize(case_dir, work, harness.placeholders(url, server.dead_port()))
            env = dict(os.environ)
            env["NO_COLOR"] = "1"
            for name, value in case_env.items():
                if value is None:
                    env.pop(name, None)
                else:
                    env[name] = value
            proc = subprocess.run(
                [skylos, "agent", "test", *args],
                cwd=work,
                stdin=subprocess.DEVNULL,
                capture_output=True,
                env=env,
                timeout=TIMEOUT_SECONDS,
            )
            expected = harness.summarize(proc.returncode, proc.stdout.decode("utf-8", errors="replace"), list(log))
            rendered = json.dumps(expected, indent=2, sort_keys=True) + "\n"
            for marker in (str(work), tmp, os.path.realpath(tmp), url):
                if marker in rendered:
                    raise SystemExit(f"{case_dir.name}: output contains the run-specific text {marker!r}")
    finally:
        stop()
    (case_dir / "expected.json").write_text(rendered, encoding="utf-8")
    return expected, time.monotonic() - started


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


def observation_errors(expected: dict[str, Any]) -> str:
    errors = []
    for scenario in expected.get("scenarios") or []:
        observation = scenario.get("observation") or {}
        if observation.get("error"):
            errors.append(observation["error"])
    return "; ".join(dict.fromkeys(errors)).replace("|", "\\|")


def write_index() -> None:
    meta = json.loads(INDEX_JSON.read_text(encoding="utf-8")) if INDEX_JSON.exists() else {}
    case_meta = meta.get("cases", {})
    rows = []
    counts: dict[int, int] = {}
    for case_dir in sorted(p for p in CASES.iterdir() if p.is_dir()):
        info = case_meta.get(case_dir.name, {})
        expected_file = case_dir / "expected.json"
        if expected_file.exists():
            expected = json.loads(expected_file.read_text(encoding="utf-8"))
            code: Any = expected["exit_code"]
            counts[code] = counts.get(code, 0) + 1
            outcome = outcome_text(expected)
            errors = observation_errors(expected)
            if errors:
                outcome += f"; observation error: {errors}"
            outcome += f"; {len(expected['requests'])} request(s)"
        else:
            code, outcome = "?", "(not recorded)"
        rule = info.get("rule", "").replace("|", "\\|")
        slow = " (slow)" if info.get("slow") else ""
        rows.append(f"| `{case_dir.name}`{slow} | {info.get('section', '')} | {rule} | {code} | {outcome} |")
    lines = [
        "# behavegate live-mode conformance corpus",
        "",
        "Reference verdicts recorded from `skylos agent test` (skylos 5.1.2) against a canned",
        "OpenAI-compatible loopback server (`server.py`). Spec: `/work/shared/spec/skylos-v1.md`",
        "(section numbers below refer to it). Checked by `tests/test_live_conformance.py`.",
        "",
        "* Inputs are generated by `make_cases.py` into `cases/<name>/` (`contract.yml`,",
        "  `responses.json` = prompt -> canned reply, optional `args.json` and extra files).",
        "* `expected.json` is written only by `record.py` (`python3 record.py [-j 8] [case ...]`); never edit it by hand.",
        f"* Default arguments: `{' '.join(harness.DEFAULT_ARGS)}`; `{{endpoint}}`, `{{host_port}}` and",
        "  `{dead_endpoint}` are filled in at run time (also inside `contract.yml`).",
        "* `expected.json` pins the report minus `provenance.endpoint_fingerprint` (port-dependent),",
        "  plus the exact request bodies (`requests`) and method/path/Accept/Content-Type/Authorization",
        "  (`request_meta`). The test compares the request lists order-free (behavegate may send",
        "  scenarios concurrently; skylos sends them sequentially in contract order).",
        "* The elapsed time in the `--max-seconds` budget error is masked as `<elapsed>`.",
        "* Cases marked (slow) wait for a real deadline (about 1-2 s each).",
        "",
        f"Cases: {len(rows)} — exit 0: {counts.get(0, 0)}, exit 1: {counts.get(1, 0)}, exit 2: {counts.get(2, 0)}.",
        "",
    ]
    _offline_recorder().write_index_document(INDEX_MD, lines, meta.get("notes", []), rows, numbered=True)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--skylos", default=DEFAULT_SKYLOS)
    parser.add_argument("-j", "--jobs", type=int, default=8)
    parser.add_argument("--index-only", action="store_true", help="only regenerate INDEX.md")
    parser.add_argument("cases", nargs="*")
    options = parser.parse_args(argv)
    if not options.index_only:
        if not Path(options.skylos).exists():
            print(f"skylos not found at {options.skylos}", file=sys.stderr)
            return 2
        names = options.cases or sorted(p.name for p in CASES.iterdir() if p.is_dir())
        started = time.monotonic()
        with ThreadPoolExecutor(max_workers=max(1, options.jobs)) as pool:
            futures = {name: pool.submit(record_case, options.skylos, CASES / name) for name in names}
            for name, future in futures.items():
                expected, seconds = future.result()
                print(f"{name:55s} {seconds:5.1f}s  exit {expected['exit_code']}  {outcome_text(expected)[:80]}")
        print(f"recorded {len(names)} cases in {time.monotonic() - started:.1f}s")
    write_index()
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
