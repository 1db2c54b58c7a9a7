"""Benchmark behavegate against skylos 5.1.2 on large offline suites (stdlib only).

Run from the repository root:

    .venv/bin/python bench/bench.py [--skylos PATH] [--scenarios N] [--repeat K]

Every number printed is measured in this run, on this machine; the only
judgements made are ratios between the two tools measured side by side
(plus the explicitly requested ``--version`` start-up budget). See
bench/README.md for what each case means and the caveats.

Exit status: 0 unless the two tools disagree on a verdict (exit code, run
status or a per-scenario / per-assertion status), in which case a line
starting with ``MISMATCH`` is printed and the exit status is 1.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import json
import os
import pstats
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from contextlib import redirect_stderr, redirect_stdout, suppress
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
DEFAULT_BEHAVEGATE = REPO / ".venv" / "bin" / "behavegate"
DEFAULT_SKYLOS = Path("/tmp/sky/bin/skylos")

MAX_ASSERTIONS = 250  # contract cap (spec section 3)
MAX_SCENARIOS = 1000  # contract / observation / --max-scenarios cap

# ---------------------------------------------------------------------------
# Suite generation
# ---------------------------------------------------------------------------

TOOLS = [
    ("lookup_order", "Fetch an order by its id", {"order_id": "string", "fields": "array"}),
    ("lookup_customer", "Fetch a customer record", {"customer_id": "string"}),
    ("lookup_refund_policy", "Look up the refund policy document", {"policy_id": "string"}),
    ("issue_refund", "Pay money back to the customer", {"order_id": "string", "amount": "number"}),
    ("escalate_to_human", "Hand the conversation to a human", {"reason": "string"}),
    ("send_email", "Send an e-mail to the customer", {"to": "string", "body": "string"}),
    ("search_kb", "Search the knowledge base", {"query": "string", "options": "object"}),
    ("cancel_order", "Cancel an order", {"order_id": "string"}),
]
TOOL_NAMES = [t[0] for t in TOOLS]


def q(text: str) -> str:
    """A YAML double-quoted scalar (JSON string syntax is valid YAML for ASCII)."""
    return json.dumps(text)


def flow(value: Any) -> str:
    """A YAML flow collection (JSON syntax is valid YAML)."""
    return json.dumps(value, sort_keys=True)


def ok_obs(sid: str, response: str, calls: list[dict[str, Any]] | None = None, **extra: Any) -> dict[str, Any]:
    obs: dict[str, Any] = {
        "id": sid,
        "response": response,
        "finish_reason": "stop",
        "response_complete": True,
        "tool_calls_complete": True,
        "tool_calls": calls if calls is not None else [],
        "refusal": False,
        "sources": [],
    }
    obs.update(extra)
    return obs


def order_args(i: int) -> dict[str, Any]:
    return {"order_id": f"A-{1000 + i}", "fields": ["status", "eta"], "options": {"express": i % 2 == 0, "depth": 2}}


def scenario_2(i: int, fail: bool) -> tuple[dict[str, Any], dict[str, Any]]:
    """One scenario with exactly two assertions, template chosen by i; plus its observation.

    Returns (expect-structure, observation). `fail` makes the observation violate
    exactly one of the two assertions.
    """
    sid = f"s{i:04d}"
    t = i % 7
    expect: dict[str, Any]
    code = f"CODE-{i:04d}"
    if t == 0:  # response.contains + response.excludes
        expect = {"response": {"contains": [code], "excludes": [f"LEAK-{i:04d}"]}}
        text = f"Your confirmation code is {code}. Thanks for waiting." + (f" debug LEAK-{i:04d}" if fail else "")
        return expect, ok_obs(sid, text)
    if t == 1:  # tools.required with arguments + tools.max_calls
        args = order_args(i)
        expect = {"tools": {"required": [{"name": "lookup_order", "arguments": args}], "max_calls": 2}}
        observed_args = dict(args, extra_field="ignored", options={"express": i % 2 == 0, "depth": 2, "x": 1})
        if fail:
            observed_args["order_id"] = f"B-{1000 + i}"
        calls = [
            {"name": "lookup_customer", "arguments": {"customer_id": f"C-{i}"}},
            {"name": "lookup_order", "arguments": observed_args},
        ]
        return expect, ok_obs(sid, f"Order A-{1000 + i} ships Friday.", calls)
    if t == 2:  # tools.forbidden + tools.allowed
        expect = {"tools": {"forbidden": ["issue_refund"], "allowed": ["lookup_order", "escalate_to_human"]}}
        calls = [
            {"name": "lookup_order", "arguments": {"order_id": f"A-{i}"}},
            {"name": "escalate_to_human", "arguments": {"reason": "refund"}},
        ]
        if fail:
            calls.append({"name": "issue_refund", "arguments": {"order_id": f"A-{i}", "amount": 500}})
        return expect, ok_obs(sid, "A human will take over.", calls)
    if t == 3:  # sources.required + refusal
        expect = {"sources": {"required": [f"kb-{i:04d}"]}, "refusal": True}
        sources: list[Any] = [f"kb-{i:04d}", {"id": "policy-v3"}] if not fail else [{"source": "policy-v3"}]
        return expect, ok_obs(sid, "I cannot help with that request.", [], refusal=True, sources=sources)
    if t == 4:  # tools.required by name + response.contains
        expect = {"tools": {"required": ["lookup_refund_policy"]}, "response": {"contains": ["30 days"]}}
        text = "You can ask for a refund within 30 days." if not fail else "You can ask for a refund within 90 days."
        calls = [{"name": "lookup_refund_policy", "arguments": {"policy_id": "refund-v3"}}]
        return expect, ok_obs(sid, text, calls)
    if t == 5:  # refusal + tools.forbidden
        expect = {"refusal": False, "tools": {"forbidden": ["cancel_order"]}}
        calls = [{"name": "lookup_order", "arguments": {"order_id": f"A-{i}"}}]
        if fail:
            calls.append({"name": "cancel_order", "arguments": {"order_id": f"A-{i}"}})
        return expect, ok_obs(sid, "Order looked up.", calls)
    # t == 6: tools.exact_sequence + sources.required
    expect = {"tools": {"exact_sequence": ["search_kb", "lookup_order"]}, "sources": {"required": ["faq-shipping"]}}
    calls = [
        {"name": "search_kb", "arguments": {"query": "shipping", "options": {"limit": 5, "tags": ["faq", "ship"]}}},
        {"name": "lookup_order", "arguments": {"order_id": f"A-{i}"}},
    ]
    if fail:
        calls.reverse()
    return expect, ok_obs(sid, "Shipping takes 3 days.", calls, sources=["faq-shipping"])


def scenario_1(i: int, fail: bool, big_text: int = 0) -> tuple[dict[str, Any], dict[str, Any]]:
    """One scenario with exactly one assertion (kind chosen by i)."""
    sid = f"s{i:04d}"
    t = i % 8
    code = f"CODE-{i:04d}"
    filler = ""
    if big_text:
        # deterministic, ASCII, not trivially repetitive
        words = ["order", "refund", "policy", "shipping", "customer", "ticket", "escalate", "window", "invoice"]
        parts: list[str] = []
        n = 0
        k = i
        while n < big_text:
            w = words[k % len(words)] + str(k % 97)
            parts.append(w)
            n += len(w) + 1
            k = (k * 31 + 7) % 10007
        filler = " ".join(parts)
    if t == 0:
        text = f"{filler} Your code is {code}." if not fail else f"{filler} No code."
        return {"response": {"contains": [code]}}, ok_obs(sid, text.strip())
    if t == 1:
        text = f"{filler} All fine." + (" LEAK" if fail else "")
        return {"response": {"excludes": ["LEAK"]}}, ok_obs(sid, text.strip())
    if t == 2:
        args = order_args(i)
        obs_args = dict(args, extra=True)
        if fail:
            obs_args["fields"] = ["status"]
        calls = [
            {"name": "lookup_customer", "arguments": {"customer_id": f"C-{i}"}},
            {"name": "lookup_order", "arguments": {"order_id": "other"}},
            {"name": "lookup_order", "arguments": obs_args},
        ]
        return {"tools": {"required": [{"name": "lookup_order", "arguments": args}]}}, ok_obs(
            sid, (filler + " ok").strip(), calls
        )
    if t == 3:
        calls = [{"name": "lookup_order", "arguments": {"order_id": f"A-{i}"}}]
        if fail:
            calls.append({"name": "issue_refund", "arguments": {"order_id": f"A-{i}", "amount": 1}})
        return {"tools": {"forbidden": ["issue_refund"]}}, ok_obs(sid, (filler + " ok").strip(), calls)
    if t == 4:
        calls = [
            {"name": "lookup_order", "arguments": {"order_id": f"A-{i}"}},
            {"name": "search_kb", "arguments": {"query": "x"}},
        ]
        if fail:
            calls.append({"name": "send_email", "arguments": {"to": "x@example.com", "body": "hi"}})
        return {"tools": {"allowed": ["lookup_order", "search_kb"]}}, ok_obs(sid, (filler + " ok").strip(), calls)
    if t == 5:
        calls = [{"name": "lookup_order", "arguments": {"order_id": f"A-{i}"}}] * (4 if fail else 3)
        return {"tools": {"max_calls": 3}}, ok_obs(sid, (filler + " ok").strip(), calls)
    if t == 6:
        sources = [f"kb-{j}" for j in range(20)] + ([f"doc-{i}"] if not fail else [])
        return {"sources": {"required": [f"doc-{i}"]}}, ok_obs(sid, (filler + " ok").strip(), [], sources=sources)
    return {"refusal": True}, ok_obs(sid, (filler + " I must decline.").strip(), [], refusal=not fail)


def render_contract(scenarios: list[tuple[str, dict[str, Any]]]) -> str:
    out = ["# generated by bench/bench.py", "version: 1", "agent:", "  model: bench-agent", "  timeout_seconds: 10"]
    out.append("  capabilities: [chat, tools, retrieval]")
    out.append("  tools:")
    for name, desc, props in TOOLS:
        out.append(f"    - name: {name}")
        out.append(f"      description: {q(desc)}")
        params = {"type": "object", "properties": {k: {"type": v} for k, v in props.items()}, "required": [next(iter(props))]}
        out.append(f"      parameters: {flow(params)}")
    out.append("scenarios:")
    for sid, expect in scenarios:
        out.append(f"  - id: {sid}")
        out.append(f"    prompt: {q('Customer request for scenario ' + sid + ': please help with my order.')}")
        out.append("    expect:")
        for key in ("response", "tools", "refusal", "sources"):
            if key not in expect:
                continue
            value = expect[key]
            if isinstance(value, bool):
                out.append(f"      {key}: {'true' if value else 'false'}")
                continue
            out.append(f"      {key}:")
            for sub, item in value.items():
                if sub == "required" and key == "tools":
                    out.append("        required:")
                    for req in item:
                        if isinstance(req, str):
                            out.append(f"          - {req}")
                        else:
                            out.append(f"          - name: {req['name']}")
                            out.append(f"            arguments: {flow(req['arguments'])}")
                elif isinstance(item, list):
                    out.append(f"        {sub}: [{', '.join(q(x) for x in item)}]")
                else:
                    out.append(f"        {sub}: {flow(item)}")
    return "\n".join(out) + "\n"


def build_suite(
    n_scenarios: int, per_scenario: int, *, fail_every: int = 9, incomplete_every: int = 0, big_text: int = 0
) -> tuple[str, str, dict[str, int]]:
    """Return (contract YAML, observation JSON, stats)."""
    expects: list[tuple[str, dict[str, Any]]] = []
    observations: list[dict[str, Any]] = []
    stats = {"scenarios": n_scenarios, "assertions": 0, "planned_fail": 0, "planned_incomplete": 0}
    for i in range(n_scenarios):
        fail = fail_every > 0 and i % fail_every == fail_every - 1
        expect, obs = scenario_2(i, fail) if per_scenario == 2 else scenario_1(i, fail, big_text)
        expects.append((obs["id"], expect))
        stats["assertions"] += per_scenario
        if incomplete_every and i % incomplete_every == incomplete_every // 2 and not fail:
            stats["planned_incomplete"] += 1
            kind = (i // incomplete_every) % 3
            if kind == 0:
                continue  # observation missing
            if kind == 1:
                obs = {"id": obs["id"], "error": "upstream timeout"}
            else:
                obs = dict(obs, finish_reason="length", response_complete=False, tool_calls_complete=False)
        elif fail:
            stats["planned_fail"] += 1
        observations.append(obs)
    contract = render_contract(expects)
    obs_text = json.dumps({"version": 1, "scenarios": observations}, indent=1) + "\n"
    return contract, obs_text, stats


# ---------------------------------------------------------------------------
# Running and comparing
# ---------------------------------------------------------------------------


CHILD_ENV: dict[str, str] | None = None  # set in main(); None = inherit


def run_cli(cmd: list[str], cwd: Path) -> tuple[float, int, bytes]:
    start = time.perf_counter()
    proc = subprocess.run(cmd, cwd=cwd, capture_output=True, check=False, env=CHILD_ENV)
    elapsed = time.perf_counter() - start
    return elapsed, proc.returncode, proc.stdout


def verdicts(raw: bytes) -> dict[str, Any]:
    """The verdict-bearing parts of a JSON report (or of an error payload)."""
    try:
        report = json.loads(raw)
    except ValueError:
        return {"unparseable": raw[:200].decode("utf-8", "replace")}
    if "error" in report:
        return {"error": report.get("error"), "status": report.get("status")}
    return {
        "status": report.get("status"),
        "summary": report.get("summary"),
        "scenarios": [(s["id"], s["status"]) for s in report.get("scenarios", [])],
        "assertions": [(s["id"], a["assertion"], a["status"]) for s in report.get("scenarios", []) for a in s["assertions"]],
        "messages": [(s["id"], a["assertion"], a["message"]) for s in report.get("scenarios", []) for a in s["assertions"]],
    }


def compare(case: str, bg: tuple[int, bytes], sk: tuple[int, bytes]) -> list[str]:
    """Return MISMATCH lines (verdict differences); print WARNING lines for wording-only differences."""
    problems: list[str] = []
    if bg[0] != sk[0]:
        problems.append(f"MISMATCH [{case}]: exit code behavegate={bg[0]} skylos={sk[0]}")
    a, b = verdicts(bg[1]), verdicts(sk[1])
    if "unparseable" in a or "unparseable" in b:
        problems.append(
            f"MISMATCH [{case}]: unparseable JSON output (behavegate={a.get('unparseable')!r} skylos={b.get('unparseable')!r})"
        )
        return problems
    if ("error" in a) != ("error" in b):
        problems.append(f"MISMATCH [{case}]: one tool errored: behavegate={a.get('error')!r} skylos={b.get('error')!r}")
        return problems
    if "error" in a:
        if a["error"] != b["error"]:
            print(f"WARNING [{case}]: error text differs: behavegate={a['error']!r} skylos={b['error']!r}")
        return problems
    for key in ("status", "summary", "scenarios", "assertions"):
        if a[key] != b[key]:
            if isinstance(a[key], list):
                diff = [(x, y) for x, y in zip(a[key], b[key], strict=False) if x != y][:5]
                extra = f" lengths {len(a[key])}/{len(b[key])}" if len(a[key]) != len(b[key]) else ""
                problems.append(f"MISMATCH [{case}]: {key} differ{extra}; first differences (behavegate, skylos): {diff}")
            else:
                problems.append(f"MISMATCH [{case}]: {key} behavegate={a[key]!r} skylos={b[key]!r}")
    if a["messages"] != b["messages"]:
        diff = [(x, y) for x, y in zip(a["messages"], b["messages"], strict=False) if x != y][:3]
        print(f"WARNING [{case}]: assertion messages differ (verdicts equal); first: {diff}")
    return problems


def interpreter_of(script: str) -> str | None:
    """The python next to a console script (same venv), if there is one."""
    candidate = Path(script).parent / "python"
    return str(candidate) if candidate.exists() else None


def median_or_none(values: list[float]) -> float | None:
    return statistics.median(values) if values else None


def fmt_s(value: float | None) -> str:
    return "-" if value is None else f"{value:.4f}"


def fmt_ratio(a: float | None, b: float | None) -> str:
    if a is None or b is None or b == 0:
        return "-"
    return f"{a / b:.3f}"


# ---------------------------------------------------------------------------
# In-process engine timing
# ---------------------------------------------------------------------------


def engine_timing(workdir: Path, repeat: int, profile: bool) -> list[tuple[str, float]]:
    """Median seconds of each in-process stage for the suite stored in workdir."""
    sys.path.insert(0, str(REPO / "src"))
    from behavegate.contract.load import parse_contract_text
    from behavegate.evidence.observation_file import parse_observation_text
    from behavegate.judge.evaluate import evaluate

    contract_path = workdir / "contract.yml"
    obs_path = workdir / "obs.json"
    contract_text = contract_path.read_text(encoding="utf-8")
    obs_text = obs_path.read_text(encoding="utf-8")

    stages: dict[str, list[float]] = {"parse contract": [], "parse observations": [], "evaluate": [], "cli.main in-process": []}

    def one_round() -> None:
        t0 = time.perf_counter()
        contract = parse_contract_text(contract_text, contract_path, workdir)
        t1 = time.perf_counter()
        obs = parse_observation_text(obs_text, obs_path)
        t2 = time.perf_counter()
        evaluate(contract, obs.observations)
        t3 = time.perf_counter()
        stages["parse contract"].append(t1 - t0)
        stages["parse observations"].append(t2 - t1)
        stages["evaluate"].append(t3 - t2)

    def one_cli() -> None:
        from behavegate.cli import main

        old = os.getcwd()
        os.chdir(workdir)
        try:
            sink_out, sink_err = io.StringIO(), io.StringIO()
            t0 = time.perf_counter()
            with redirect_stdout(sink_out), redirect_stderr(sink_err), suppress(SystemExit):
                main(
                    [
                        "test",
                        "contract.yml",
                        "--observations",
                        "obs.json",
                        "--format",
                        "json",
                        "--no-artifacts",
                        "--max-scenarios",
                        "1000",
                    ]
                )
            stages["cli.main in-process"].append(time.perf_counter() - t0)
        finally:
            os.chdir(old)

    one_round()  # warm-up (imports, caches)
    one_cli()
    for key in stages:
        stages[key].clear()
    for _ in range(repeat):
        one_round()
        one_cli()
    result = [(k, statistics.median(v)) for k, v in stages.items()]
    result.insert(3, ("parse+evaluate", sum(v for k, v in result if k in {"parse contract", "parse observations", "evaluate"})))

    if profile:
        prof = cProfile.Profile()
        prof.enable()
        one_cli()
        prof.disable()
        buf = io.StringIO()
        stats = pstats.Stats(prof, stream=buf)
        stats.sort_stats("cumulative").print_stats(25)
        stats.sort_stats("tottime").print_stats(12)
        print(f"\n-- cProfile of one warmed in-process cli.main run ({workdir.name}): top 25 cumulative, top 12 own time --")
        print(buf.getvalue())
    return result


# ---------------------------------------------------------------------------
# main
# ---------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--skylos", default=str(DEFAULT_SKYLOS), help="path to the skylos 5.1.2 executable (default %(default)s)")
    parser.add_argument(
        "--behavegate", default=str(DEFAULT_BEHAVEGATE), help="path to the behavegate executable (default %(default)s)"
    )
    parser.add_argument(
        "--scenarios",
        type=int,
        default=120,
        help="scenarios in the reference suite, 2 assertions each (default 120 = 240 assertions; max 125)",
    )
    parser.add_argument("--repeat", type=int, default=5, help="timed runs per case and tool; the median is reported (default 5)")
    parser.add_argument(
        "--profile", action="store_true", help="also print a cProfile of a warmed in-process run of the reference suite"
    )
    parser.add_argument(
        "--no-bytecode-cache",
        action="store_true",
        help="run both CLIs with the inherited environment (by default both get a private bytecode cache in the temp dir, see README)",
    )
    parser.add_argument("--keep", action="store_true", help="keep the temporary directory and print its path")
    args = parser.parse_args(argv)

    if not 1 <= args.scenarios <= MAX_ASSERTIONS // 2:
        parser.error(
            f"--scenarios must be 1..{MAX_ASSERTIONS // 2} (2 assertions each, contract cap {MAX_ASSERTIONS} assertions)"
        )
    if args.repeat < 1:
        parser.error("--repeat must be >= 1")

    behavegate = args.behavegate
    if not Path(behavegate).exists():
        found = shutil.which("behavegate")
        if not found:
            print(f"behavegate executable not found at {behavegate}", file=sys.stderr)
            return 2
        behavegate = found
    skylos: str | None = args.skylos if Path(args.skylos).exists() else None
    if skylos is None:
        print(
            f"note: skylos not found at {args.skylos}; timing behavegate only (install: python3 -m venv /tmp/sky && /tmp/sky/bin/pip install skylos==5.1.2)"
        )

    tmp = Path(tempfile.mkdtemp(prefix="behavegate-bench-"))
    global CHILD_ENV
    inherited_no_pyc = bool(os.environ.get("PYTHONDONTWRITEBYTECODE"))
    if args.no_bytecode_cache:
        CHILD_ENV = None
        pyc_mode = "inherited environment" + (
            " (PYTHONDONTWRITEBYTECODE set: sources without .pyc are recompiled on every start)" if inherited_no_pyc else ""
        )
    else:
        # Both tools get the same private bytecode cache (filled by the warm-up
        # runs), as after a normal `pip install`; nothing is written next to sources.
        CHILD_ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        CHILD_ENV["PYTHONPYCACHEPREFIX"] = str(tmp / "pycache")
        pyc_mode = f"private bytecode cache for both tools ({tmp / 'pycache'})"
        if inherited_no_pyc:
            pyc_mode += "; PYTHONDONTWRITEBYTECODE was set and is dropped for the child processes"
    mismatches: list[str] = []
    rows: list[tuple[str, float | None, float | None]] = []
    try:
        n_ref = args.scenarios
        # Each scenario must request at least one assertion and a contract holds at
        # most 250, so 250 scenarios x 1 assertion is the largest *valid* suite.
        cases: list[tuple[str, str, str, dict[str, int], str]] = []
        c, o, st = build_suite(n_ref, 2, fail_every=9, incomplete_every=0)
        cases.append(("ref", f"reference: {n_ref} sc / {st['assertions']} asr", c, st, o))
        c, o, st = build_suite(MAX_ASSERTIONS, 1, fail_every=11, incomplete_every=40)
        cases.append(("large", f"large: {MAX_ASSERTIONS} sc / {st['assertions']} asr", c, st, o))
        c, o, st = build_suite(MAX_ASSERTIONS, 1, fail_every=13, incomplete_every=0, big_text=6500)
        cases.append(("heavy", f"heavy evidence: {MAX_ASSERTIONS} sc, ~{len(o) // 1024} KiB obs", c, st, o))
        c, o, st = build_suite(MAX_SCENARIOS, 1, fail_every=11)
        cases.append(("cap1000", f"1000 sc / {st['assertions']} asr (over cap: exit 2)", c, st, o))

        print(f"behavegate: {behavegate}")
        print(f"skylos:     {skylos or '(not available)'}")
        print(
            f"python:     {sys.version.split()[0]} on {sys.platform}, cpus={os.cpu_count()}, repeat={args.repeat}, workdir={tmp}"
        )
        print(f"bytecode:   {pyc_mode}")
        if hasattr(os, "getloadavg"):
            print(f"load avg:   {' '.join(f'{x:.2f}' for x in os.getloadavg())} (before)")
        print()

        for key, label, contract, st, obs in cases:
            d = tmp / key
            d.mkdir()
            (d / "contract.yml").write_text(contract, encoding="utf-8")
            (d / "obs.json").write_text(obs, encoding="utf-8")
            sizes = f"contract {len(contract.encode()) // 1024} KiB, observations {len(obs.encode()) // 1024} KiB"
            print(f"[{key}] {label}: planned fail={st['planned_fail']} incomplete={st['planned_incomplete']}; {sizes}")

            tail = ["contract.yml", "--observations", "obs.json", "--format", "json", "--no-artifacts", "--max-scenarios", "1000"]
            bg_cmd = [behavegate, "test", *tail]
            sk_cmd = [skylos, "agent", "test", *tail] if skylos else None

            # warm-up (page cache, .pyc), also the runs whose output is compared
            _, bg_rc, bg_out = run_cli(bg_cmd, d)
            bg_times: list[float] = []
            sk_times: list[float] = []
            if sk_cmd:
                _, sk_rc, sk_out = run_cli(sk_cmd, d)
                problems = compare(label, (bg_rc, bg_out), (sk_rc, sk_out))
                mismatches.extend(problems)
                for line in problems:
                    print(line)
                v = verdicts(bg_out)
                shown = v.get("error") or v.get("summary")
                print(
                    f"    exit codes behavegate={bg_rc} skylos={sk_rc}; {'verdicts identical' if not problems else 'VERDICTS DIFFER'}; behavegate: {shown}"
                )
            else:
                print(f"    exit code behavegate={bg_rc}; {verdicts(bg_out).get('summary') or verdicts(bg_out).get('error')}")
            # interleave the tools so drift on the machine hits both equally
            for _ in range(args.repeat):
                t, rc, _out = run_cli(bg_cmd, d)
                bg_times.append(t)
                if rc != bg_rc:
                    mismatches.append(f"MISMATCH [{label}]: behavegate exit code changed between runs ({bg_rc} -> {rc})")
                if sk_cmd:
                    t, rc, _out = run_cli(sk_cmd, d)
                    sk_times.append(t)
            rows.append((label, median_or_none(bg_times), median_or_none(sk_times)))

        # start-up (one untimed warm-up each, then 10 interleaved timed runs)
        bg_v: list[float] = []
        sk_v: list[float] = []
        run_cli([behavegate, "--version"], tmp)
        if skylos:
            run_cli([skylos, "--version"], tmp)
        for _ in range(10):
            bg_v.append(run_cli([behavegate, "--version"], tmp)[0])
            if skylos:
                sk_v.append(run_cli([skylos, "--version"], tmp)[0])
        rows.append(("--version (median of 10)", median_or_none(bg_v), median_or_none(sk_v)))
        # context only: the bare interpreter of each tool's environment
        bg_py = interpreter_of(behavegate)
        sk_py = interpreter_of(skylos) if skylos else None
        bg_p = [run_cli([bg_py, "-c", "pass"], tmp)[0] for _ in range(10)] if bg_py else []
        sk_p = [run_cli([sk_py, "-c", "pass"], tmp)[0] for _ in range(10)] if sk_py else []
        rows.append(("(floor: python -c pass, median of 10)", median_or_none(bg_p), median_or_none(sk_p)))

        # table
        print()
        width = max(len(r[0]) for r in rows) + 2
        header = f"{'case':<{width}}{'behavegate s':>14}{'skylos s':>12}{'ratio bg/sky':>14}"
        print(header)
        print("-" * len(header))
        for label, bg_t, sk_t in rows:
            print(f"{label:<{width}}{fmt_s(bg_t):>14}{fmt_s(sk_t):>12}{fmt_ratio(bg_t, sk_t):>14}")
        print()

        ref_bg, ref_sk = rows[0][1], rows[0][2]
        if ref_bg is not None and ref_sk is not None:
            verdict = "OK" if ref_bg <= ref_sk / 5 else "MISSED"
            print(
                f"speed target: {n_ref}-scenario run at most 1/5 of skylos: {verdict} (ratio {ref_bg / ref_sk:.3f}, target <= 0.200)"
            )
        else:
            print(f"speed target: {n_ref}-scenario run at most 1/5 of skylos: n/a (skylos not available)")
        v_med = median_or_none(bg_v) or 0.0
        print(f"--version under 150 ms: {'OK' if v_med < 0.150 else 'MISSED'} ({v_med * 1000:.1f} ms)")

        # in-process engine timing (no interpreter start-up, imports warmed)
        print()
        print(f"in-process stages, median of {args.repeat} (ms):")
        try:
            engine_rows = [
                ("reference", engine_timing(tmp / "ref", args.repeat, args.profile)),
                ("large", engine_timing(tmp / "large", args.repeat, False)),
                ("heavy", engine_timing(tmp / "heavy", args.repeat, False)),
            ]
        except ImportError as exc:
            print(f"  skipped: cannot import behavegate in this interpreter ({exc}); run with .venv/bin/python")
            engine_rows = []
        if engine_rows:
            names = [stage for stage, _ in engine_rows[0][1]]
            print(f"  {'stage':<24}" + "".join(f"{key:>12}" for key, _ in engine_rows))
            for n, stage in enumerate(names):
                print(f"  {stage:<24}" + "".join(f"{values[n][1] * 1000:12.2f}" for _, values in engine_rows))
        if engine_rows:
            from behavegate.contract.load import parse_contract_text
            from behavegate.errors import BehavegateError

            over = (tmp / "cap1000" / "contract.yml").read_text(encoding="utf-8")
            times = []
            message = ""
            for _ in range(max(args.repeat, 1)):
                t0 = time.perf_counter()
                try:
                    parse_contract_text(over, tmp / "cap1000" / "contract.yml", tmp / "cap1000")
                    message = "(accepted!)"
                except BehavegateError as exc:
                    message = str(exc).splitlines()[0]
                times.append(time.perf_counter() - t0)
            print(
                f"in-process contract parse of the 1000-scenario contract: {statistics.median(times) * 1000:.2f} ms -> {message!r}"
            )
    finally:
        if args.keep:
            print(f"\nkept {tmp}")
        else:
            shutil.rmtree(tmp, ignore_errors=True)

    if mismatches:
        print()
        for line in mismatches:
            print(line)
        print(f"MISMATCH: {len(mismatches)} verdict difference(s) between behavegate and skylos")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
