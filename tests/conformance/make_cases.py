#!/usr/bin/env python3
"""Generate the input files of the behavegate conformance corpus.

Usage: python3 make_cases.py            (rewrites cases/*/ inputs and case-index.json)

Each case gets contract.yml, usually observations.json, and args.json when the
arguments differ from the default.  expected.json is NOT written here: it is
recorded from skylos 5.1.2 by record.py.  Existing expected.json files are kept
for cases that still exist; directories of cases that no longer exist are
removed.  stdlib only.
"""

from __future__ import annotations

import json
import shutil
import textwrap
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
CASES_DIR = HERE / "cases"
INDEX_JSON = HERE / "case-index.json"

DEFAULT_ARGS = [
    "contract.yml",
    "--observations",
    "observations.json",
    "--format",
    "json",
    "--no-artifacts",
]

CASES: dict[str, dict[str, Any]] = {}
_DROP = object()


# ---------------------------------------------------------------------------
# helpers


def add(
    name: str,
    section: str,
    rule: str,
    contract: str | bytes | None,
    obs: Any = None,
    args: list[str] | None = None,
    extra_files: dict[str, str | bytes] | None = None,
) -> None:
    """Register one case.

    contract / obs: str (written as UTF-8 with LF), bytes (written verbatim),
    dict/list (obs only: JSON-dumped), or None (file not written).
    args: list of arguments after `agent test` (None = default).
    extra_files: {relative path: str|bytes}.
    """
    assert name not in CASES, name
    assert name == name.lower() and " " not in name and "_" not in name, name
    CASES[name] = {
        "section": section,
        "rule": rule,
        "contract": contract,
        "obs": obs,
        "args": args,
        "extra": extra_files or {},
    }


def flag_args(*extra: str, contract: str = "contract.yml", observations: str | None = "observations.json") -> list[str]:
    args = [contract]
    if observations is not None:
        args += ["--observations", observations]
    args += ["--format", "json", "--no-artifacts"]
    return args + list(extra)


def indent(text: str, spaces: int) -> str:
    pad = " " * spaces
    return "".join(pad + line if line.strip() else line for line in text.splitlines(True))


def scen(sid: str, expect: str | None, prompt: str = "Do the task.", extra: str = "") -> str:
    """One scenario list item; `expect` is the YAML body of `expect:`."""
    out = f"  - id: {sid}\n    prompt: {prompt}\n"
    if extra:
        out += indent(textwrap.dedent(extra).strip("\n") + "\n", 4)
    if expect is None:
        return out
    body = textwrap.dedent(expect).strip("\n")
    if body.startswith("{") or body in ("null", "~", "[]"):
        out += f"    expect: {body}\n"
    else:
        out += "    expect:\n" + indent(body + "\n", 6)
    return out


def contract(*scenarios: str, agent: str | None = None, version: str = "1", tail: str = "") -> str:
    text = f"version: {version}\n"
    if agent is None:
        text += "agent: {}\n"
    else:
        text += "agent:\n" + indent(textwrap.dedent(agent).strip("\n") + "\n", 2)
    text += "scenarios:\n" + "".join(scenarios)
    return text + tail


TOOLS_AGENT = """\
model: test-model
tools:
  - name: lookup
    description: Look up a record
    parameters: {type: object}
  - name: book
    description: Book a seat
    parameters:
      type: object
      properties:
        seat: {type: string}
  - name: delete_db
    description: Delete the database
    parameters: {}
"""


def obs(*scenarios: Any, version: Any = 1) -> dict[str, Any]:
    return {"version": version, "scenarios": list(scenarios)}


def done(sid: Any, response: Any = "ok", calls: Any = _DROP, **fields: Any) -> dict[str, Any]:
    """A complete observation (finish_reason stop, both flags true)."""
    item = {
        "id": sid,
        "response": response,
        "response_complete": True,
        "finish_reason": "stop",
        "tool_calls_complete": True,
    }
    if calls is not _DROP:
        item["tool_calls"] = calls
    item.update(fields)
    return {k: v for k, v in item.items() if v is not _DROP}


def raw(sid: Any, **fields: Any) -> dict[str, Any]:
    """An observation with only the given fields."""
    item = {"id": sid}
    item.update(fields)
    return {k: v for k, v in item.items() if v is not _DROP}


def call(name: Any, arguments: Any = _DROP, **extra: Any) -> dict[str, Any]:
    item = {"name": name}
    if arguments is not _DROP:
        item["arguments"] = arguments
    item.update(extra)
    return item


def count_values(value: Any) -> int:
    """The value count used by skylos: every key, value and container, where a
    list element also counts its index (as if it were a key) - observed in
    skylos 5.1.2, the spec only says "every key, value and container"."""
    total = 1
    if isinstance(value, dict):
        for key, child in value.items():
            total += count_values(key) + count_values(child)
    elif isinstance(value, list):
        for child in value:
            total += 1 + count_values(child)
    return total


SIMPLE_CONTRACT = contract(scen("s1", "response:\n  contains: [hello]"))
SIMPLE_OBS = obs(done("s1", "hello world"))
TWO_CONTRACT = contract(
    scen("s1", "response:\n  contains: [hello]"),
    scen("s2", "response:\n  contains: [bye]"),
)


# ---------------------------------------------------------------------------
# §1 CLI flags (offline mode)

add("cli-default-args-pass", "1, 13", "default arguments, one passing scenario -> exit 0",
    SIMPLE_CONTRACT, SIMPLE_OBS)

three = contract(
    scen("s1", "response:\n  contains: [one]"),
    scen("s2", "response:\n  contains: [two]"),
    scen("s3", "response:\n  contains: [three]"),
)
three_obs = obs(done("s1", "one"), done("s2", "two"), done("s3", "nope"))

for value, name, note in [
    ("0", "cli-max-scenarios-0", "--max-scenarios 0 rejected offline"),
    ("1001", "cli-max-scenarios-1001", "--max-scenarios above 1000 rejected"),
    ("-5", "cli-max-scenarios-negative", "--max-scenarios negative rejected"),
]:
    add(name, "1, 12", note, SIMPLE_CONTRACT, SIMPLE_OBS,
        flag_args(f"--max-scenarios={value}"))
add("cli-max-scenarios-1000-ok", "1", "--max-scenarios 1000 is the inclusive maximum",
    SIMPLE_CONTRACT, SIMPLE_OBS, flag_args("--max-scenarios", "1000"))
add("cli-max-scenarios-not-int", "1", "non-integer --max-scenarios is an argparse error (no JSON)",
    SIMPLE_CONTRACT, SIMPLE_OBS, flag_args("--max-scenarios", "2.5"))
for value, name, note in [
    ("0", "cli-max-seconds-0", "--max-seconds 0 rejected offline"),
    ("3600.5", "cli-max-seconds-3600-5", "--max-seconds above 3600 rejected"),
    ("-1", "cli-max-seconds-negative", "--max-seconds negative rejected"),
    ("nan", "cli-max-seconds-nan", "--max-seconds nan must be finite"),
    ("inf", "cli-max-seconds-inf", "--max-seconds inf must be finite"),
]:
    add(name, "1, 12", note, SIMPLE_CONTRACT, SIMPLE_OBS, flag_args(f"--max-seconds={value}"))
add("cli-max-seconds-3600-ok", "1", "--max-seconds 3600 accepted",
    SIMPLE_CONTRACT, SIMPLE_OBS, flag_args("--max-seconds", "3600"))
add("cli-max-seconds-not-number", "1", "non-numeric --max-seconds is an argparse error",
    SIMPLE_CONTRACT, SIMPLE_OBS, flag_args("--max-seconds", "soon"))
add("cli-max-tokens-40000", "1, 12", "--max-tokens validated offline although unused (max 32768)",
    SIMPLE_CONTRACT, SIMPLE_OBS, flag_args("--max-tokens", "40000"))
add("cli-max-tokens-0", "1", "--max-tokens 0 rejected",
    SIMPLE_CONTRACT, SIMPLE_OBS, flag_args("--max-tokens", "0"))
add("cli-max-tokens-32768-ok", "1", "--max-tokens 32768 accepted",
    SIMPLE_CONTRACT, SIMPLE_OBS, flag_args("--max-tokens", "32768"))
add("cli-max-tokens-not-int", "1", "non-integer --max-tokens is an argparse error",
    SIMPLE_CONTRACT, SIMPLE_OBS, flag_args("--max-tokens", "many"))
add("cli-format-invalid", "1", "--format outside table|json is an argparse error",
    SIMPLE_CONTRACT, SIMPLE_OBS,
    ["contract.yml", "--observations", "observations.json", "--format", "xml", "--no-artifacts"])
add("cli-unknown-flag", "1", "unknown option is an argparse error",
    SIMPLE_CONTRACT, SIMPLE_OBS, flag_args("--frobnicate"))

add("cli-scenario-blank", "1", "all-blank --scenario values -> error",
    three, three_obs, flag_args("--scenario", "  ", "--scenario", ""))
add("cli-scenario-blank-ignored-with-valid", "1", "blank --scenario values are dropped when another is given",
    three, three_obs, flag_args("--scenario", " ", "--scenario", "s1"))
add("cli-scenario-unknown-sorted", "1", "unknown --scenario ids listed sorted",
    three, three_obs, flag_args("--scenario", "zz", "--scenario", "s1", "--scenario", "aa"))
add("cli-scenario-stripped", "1", "--scenario values are stripped",
    three, three_obs, flag_args("--scenario", " s2 "))
add("cli-scenario-duplicate", "1", "duplicate --scenario values are de-duplicated",
    three, three_obs, flag_args("--scenario", "s2", "--scenario", "s2", "--scenario", " s2"))
add("cli-scenario-contract-order", "1, 9", "selected scenarios keep contract order, not flag order",
    three, three_obs, flag_args("--scenario", "s3", "--scenario", "s1"))
add("cli-scenario-unselected-observation-ok", "1, 10",
    "observations for unselected scenarios are allowed and excluded from the report/selected digest",
    three, three_obs, flag_args("--scenario", "s2"))
add("cli-scenario-missing-observation-of-selected", "1, 5.1",
    "selected scenario without observation is incomplete",
    three, obs(done("s1", "one")), flag_args("--scenario", "s2"))

for flag, name in [
    (["--endpoint", "http://127.0.0.1:9/v1/chat/completions"], "cli-observations-with-endpoint"),
    (["--allow-remote"], "cli-observations-with-allow-remote"),
    (["--allow-contract-endpoint"], "cli-observations-with-allow-contract-endpoint"),
    (["--auth-env", "HOME"], "cli-observations-with-auth-env"),
]:
    add(name, "1", f"--observations cannot be combined with {flag[0]}",
        SIMPLE_CONTRACT, SIMPLE_OBS, flag_args(*flag))
add("cli-endpoint-whitespace-checked-first", "1",
    "--endpoint with surrounding whitespace is reported before the --observations combination",
    SIMPLE_CONTRACT, SIMPLE_OBS, flag_args("--endpoint", " http://127.0.0.1:9/x"))
add("cli-observations-empty-string-is-live", "1, 7.1",
    "--observations '' is falsy -> live mode -> missing endpoint error (no network)",
    SIMPLE_CONTRACT, SIMPLE_OBS,
    ["contract.yml", "--observations", "", "--format", "json", "--no-artifacts"])

many = contract(*[scen(f"s{i:02d}", "response:\n  contains: [ok]") for i in range(1, 27)])
many_obs = obs(*[done(f"s{i:02d}", "ok") for i in range(1, 27)])
add("cli-max-scenarios-default-25-exceeded", "1, 10", "26 scenarios exceed default --max-scenarios 25 offline",
    many, many_obs)
add("cli-max-scenarios-raised-26-ok", "1", "raising --max-scenarios allows 26 scenarios",
    many, many_obs, flag_args("--max-scenarios", "26"))
add("cli-max-scenarios-exact-limit", "1", "count equal to --max-scenarios is fine",
    three, three_obs, flag_args("--max-scenarios", "3"))
add("cli-max-scenarios-one-too-few", "1", "selected count above --max-scenarios -> error names the limit",
    three, three_obs, flag_args("--max-scenarios", "2"))
add("cli-max-scenarios-counts-selected", "1", "the limit counts selected scenarios only",
    many, many_obs, flag_args("--scenario", "s05", "--scenario", "s01"))

# order of checks
add("cli-order-contract-before-flags", "1", "contract errors beat flag errors",
    contract(scen("s1", "response:\n  contains: [x]"), version="2"), SIMPLE_OBS,
    flag_args("--max-scenarios", "0"))
add("cli-order-observations-before-flags", "1", "observation file errors beat flag errors",
    SIMPLE_CONTRACT, obs(done("s1", "x"), version=2), flag_args("--max-seconds", "0"))
add("cli-order-endpoint-combo-before-limits", "1", "endpoint combination is checked before numeric limits",
    SIMPLE_CONTRACT, SIMPLE_OBS, flag_args("--allow-remote", "--max-tokens", "0"))
add("cli-order-limits-scenarios-seconds-tokens", "1", "--max-scenarios is checked before --max-seconds/--max-tokens",
    SIMPLE_CONTRACT, SIMPLE_OBS,
    flag_args("--max-tokens", "0", "--max-seconds", "0", "--max-scenarios", "0"))
add("cli-order-seconds-before-tokens", "1", "--max-seconds is checked before --max-tokens",
    SIMPLE_CONTRACT, SIMPLE_OBS, flag_args("--max-tokens", "0", "--max-seconds", "0"))
add("cli-order-blank-scenario-before-limits", "1",
    "all-blank --scenario is rejected before the numeric limits (argument parsing order)",
    SIMPLE_CONTRACT, SIMPLE_OBS, flag_args("--scenario", " ", "--max-scenarios", "0"))
add("cli-order-blank-scenario-before-endpoint-combo", "1",
    "all-blank --scenario is rejected even before the --observations/live-option combination check",
    SIMPLE_CONTRACT, SIMPLE_OBS, flag_args("--scenario", "", "--allow-remote"))
add("cli-order-unknown-scenario-after-limits", "1", "unknown --scenario ids are checked after numeric limits",
    SIMPLE_CONTRACT, SIMPLE_OBS, flag_args("--scenario", "nope", "--max-tokens", "0"))
add("cli-order-unknown-scenario-before-count", "1", "unknown ids are checked before the --max-scenarios count",
    many, many_obs, flag_args("--scenario", "nope"))
add("cli-order-count-before-observation-ids", "1",
    "max-scenarios count is checked before observation ids",
    many, obs(*[done(f"s{i:02d}", "ok") for i in range(1, 27)], done("ghost", "ok")))
add("cli-order-observation-ids-full-contract", "1, 4",
    "observation ids are checked against the full contract even with --scenario",
    three, obs(done("s1", "one"), done("ghost", "x")), flag_args("--scenario", "s1"))

# files and paths (§1 project root, §2)
add("file-contract-missing", "2", "missing contract file -> regular-file error",
    None, SIMPLE_OBS)
add("file-observations-missing", "2", "missing observation file -> regular-file error",
    SIMPLE_CONTRACT, None)
add("file-contract-dotdot-inside", "1", "a '..' component is rejected even when it resolves inside",
    SIMPLE_CONTRACT, SIMPLE_OBS,
    flag_args(contract="sub/../contract.yml"), {"sub/keep.txt": "x\n"})
add("file-contract-outside-project", "1", "contract outside the project root",
    SIMPLE_CONTRACT, SIMPLE_OBS, flag_args(contract="../contract.yml"))
add("file-observations-dotdot", "1", "observation path with '..' rejected",
    SIMPLE_CONTRACT, SIMPLE_OBS,
    flag_args(observations="sub/../observations.json"), {"sub/keep.txt": "x\n"})
add("file-observations-dot-component", "1",
    "'./observations.json' is accepted: pathlib drops '.' components before the check",
    SIMPLE_CONTRACT, SIMPLE_OBS, flag_args(observations="./observations.json"))
add("file-observations-double-slash", "1",
    "'fixtures//obs.json' is accepted: pathlib drops empty components before the check",
    SIMPLE_CONTRACT, None, flag_args(observations="fixtures//obs.json"),
    {"fixtures/obs.json": json.dumps(SIMPLE_OBS, indent=2) + "\n"})
add("file-contract-dot-prefix", "1", "'./contract.yml' is accepted as well",
    SIMPLE_CONTRACT, SIMPLE_OBS, flag_args(contract="./contract.yml"))
add("file-contract-is-directory", "2", "a directory is not a regular file",
    None, SIMPLE_OBS, flag_args(contract="sub"), {"sub/keep.txt": "x\n"})
add("file-contract-in-subdir", "1", "explicit contract in a subdirectory; observations relative to the cwd root",
    None, SIMPLE_OBS,
    flag_args(contract="nested/agent.yml"), {"nested/agent.yml": SIMPLE_CONTRACT})
add("file-observations-in-subdir", "1", "observations path in a subdirectory",
    SIMPLE_CONTRACT, None,
    flag_args(observations="fixtures/obs.json"),
    {"fixtures/obs.json": json.dumps(SIMPLE_OBS, indent=2) + "\n"})
add("file-autodiscover-contract", "1", "no contract argument -> .skylos/agent-test.yml is discovered",
    None, SIMPLE_OBS,
    ["--observations", "observations.json", "--format", "json", "--no-artifacts"],
    {".skylos/agent-test.yml": SIMPLE_CONTRACT})
add("file-autodiscover-missing", "1", "no contract argument and no .skylos/agent-test.yml -> error",
    None, SIMPLE_OBS,
    ["--observations", "observations.json", "--format", "json", "--no-artifacts"])
add("exit-output-outside-project-after-fail", "13",
    "an --output path error after a failing evaluation still exits 2 with an error",
    SIMPLE_CONTRACT, obs(done("s1", "nothing")), flag_args("--output", "../out.json"))

# ---------------------------------------------------------------------------
# §2 reading files, YAML dialect

add("yaml-bool-yes-refusal", "2, 14.8", "refusal: yes is boolean true",
    contract(scen("s1", "refusal: yes")), obs(done("s1", "I cannot help.", refusal=True)))
add("yaml-bool-off-refusal", "2", "refusal: Off is boolean false",
    contract(scen("s1", "refusal: Off")), obs(done("s1", "Sure.", refusal=False)))
add("yaml-bool-quoted-yes-refusal", "2, 3", "refusal: 'yes' (quoted string) is rejected",
    contract(scen("s1", "refusal: 'yes'")), obs(done("s1", "x", refusal=True)))
book_tools = """\
tools:
  - name: book
    description: Book
    parameters: {type: object}
"""


def args_case(name: str, yaml_args: str, observed_args: Any, rule: str, section: str = "2, 6") -> None:
    exp = f"tools:\n  required:\n    - name: book\n      arguments: {yaml_args}"
    add(name, section, rule, contract(scen("s1", exp), agent=book_tools),
        obs(done("s1", "done", [call("book", observed_args)])))


args_case("yaml-bool-no-country-false", "{country: NO}", {"country": False},
          "unquoted NO in arguments is boolean false (matches false)")
args_case("yaml-bool-no-country-not-string", "{country: NO}", {"country": "NO"},
          "unquoted NO in arguments does not match the string 'NO'")
args_case("yaml-quoted-no-is-string", "{country: 'NO'}", {"country": "NO"},
          "quoted 'NO' stays a string")
args_case("yaml-y-is-string", "{answer: y, other: n}", {"answer": "y", "other": "n"},
          "y/n are strings in PyYAML's YAML 1.1 resolver, not booleans")
args_case("yaml-on-is-true", "{flag: on}", {"flag": True}, "on is boolean true")
args_case("yaml-octal-012", "{n: 012}", {"n": 10}, "012 is octal 10")
args_case("yaml-hex-0x1f", "{n: 0x1F}", {"n": 31}, "0x1F is 31")
args_case("yaml-underscore-1-000", "{n: 1_000}", {"n": 1000}, "1_000 is 1000")
args_case("yaml-sexagesimal-12-30", "{n: 12:30}", {"n": 750}, "12:30 is the sexagesimal integer 750")
args_case("yaml-sexagesimal-not-string", "{n: 12:30}", {"n": "12:30"},
          "12:30 does not match the string '12:30'")
args_case("yaml-1e3-is-string", "{n: 1e3}", {"n": "1e3"}, "1e3 (no dot) is the string '1e3'")
args_case("yaml-1e3-not-number", "{n: 1e3}", {"n": 1000}, "1e3 does not match the number 1000")
args_case("yaml-float-exponent-with-sign", "{a: 1.0e+3, b: 1.0e3}", {"a": 1000, "b": "1.0e3"},
          "1.0e+3 is the float 1000 (matches int 1000); 1.0e3 (unsigned exponent) is a string")
args_case("yaml-null-tilde-in-arguments", "{x: ~}", {"x": None}, "~ is null and matches JSON null")
add("yaml-date-in-arguments", "2, 3", "a YAML date inside arguments is not a JSON value",
    contract(scen("s1", "tools:\n  required:\n    - name: book\n      arguments: {day: 2024-05-01}"),
             agent=book_tools), obs(done("s1", "x", [call("book", {"day": "2024-05-01"})])))
add("yaml-date-in-parameters", "2, 3", "a YAML date inside tool parameters is not a JSON value",
    contract(scen("s1", "refusal: true"), agent="""\
tools:
  - name: book
    description: Book
    parameters: {since: 2024-05-01}
"""), obs(done("s1", "x", refusal=True)))
add("yaml-date-as-prompt", "2", "a YAML date as prompt is not a string",
    contract(scen("s1", "refusal: true", prompt="2024-05-01")), obs(done("s1", "x", refusal=True)))
add("yaml-int-as-prompt", "2", "an integer prompt is not text",
    contract(scen("s1", "refusal: true", prompt="12")), obs(done("s1", "x", refusal=True)))
add("yaml-inf-in-arguments", "2", ".inf inside arguments rejected",
    contract(scen("s1", "tools:\n  required:\n    - name: book\n      arguments: {n: .inf}"),
             agent=book_tools), obs(done("s1", "x", [call("book", {"n": 1})])))
add("yaml-nan-in-arguments", "2", ".nan inside arguments rejected",
    contract(scen("s1", "tools:\n  required:\n    - name: book\n      arguments: {n: .nan}"),
             agent=book_tools), obs(done("s1", "x", [call("book", {"n": 1})])))
add("yaml-binary-tag-prompt", "2", "!!binary prompt is bytes, not text",
    contract(scen("s1", "refusal: true", prompt="!!binary aGVsbG8=")), obs(done("s1", "x", refusal=True)))
add("yaml-python-tag-rejected", "2", "python tags are a YAML error under SafeLoader",
    contract(scen("s1", "refusal: true", prompt="!!python/object:os.system {}")),
    obs(done("s1", "x", refusal=True)))
add("yaml-duplicate-key", "2", "duplicate mapping key rejected with repr of key",
    contract(scen("s1", "response:\n  contains: [a]\nresponse:\n  contains: [b]")), SIMPLE_OBS)
add("yaml-duplicate-top-level-key", "2", "duplicate top-level key rejected",
    "version: 1\nversion: 1\nagent: {}\nscenarios:\n  - id: s1\n    prompt: p\n    expect: {refusal: true}\n",
    obs(done("s1", "x", refusal=True)))
add("yaml-duplicate-int-key", "2", "duplicate non-string keys are reported with repr",
    "version: 1\nagent: {}\nscenarios:\n  - id: s1\n    prompt: p\n    expect: {refusal: true}\nx:\n  1: a\n  1: b\n",
    obs(done("s1", "x", refusal=True)))
add("yaml-anchor-alias-harmless", "2, 14.8", "any alias is rejected, even a harmless one",
    contract(scen("s1", "response:\n  contains: [&t hello]\n  excludes: [*t]")), SIMPLE_OBS)
add("yaml-anchor-alias-across-scenarios", "2", "alias reusing an expect block rejected",
    contract(scen("s1", "&e {refusal: true}"), scen("s2", "*e")),
    obs(done("s1", "x", refusal=True), done("s2", "x", refusal=True)))
add("yaml-anchor-without-alias", "2", "an anchor that is never aliased (no alias event)",
    contract(scen("s1", "response:\n  contains: [&t hello]")), SIMPLE_OBS)
add("yaml-merge-key", "2", "merge key <<: *x uses an alias -> rejected",
    "version: 1\nagent: &a {}\nscenarios:\n  - id: s1\n    prompt: p\n    expect:\n      <<: *a\n      refusal: true\n",
    obs(done("s1", "x", refusal=True)))
add("yaml-non-string-key-top-level", "2, 3", "non-string top-level key is an unknown key",
    SIMPLE_CONTRACT + "1: one\n", SIMPLE_OBS)
add("yaml-non-string-key-in-expect", "2", "non-string key in a schema mapping",
    contract(scen("s1", "response:\n  contains: [hello]\n2: x")), SIMPLE_OBS)
add("yaml-bool-key-in-arguments", "2", "yes: as key in arguments is a bool key -> keys must be strings",
    contract(scen("s1", "tools:\n  required:\n    - name: book\n      arguments: {yes: 1}"),
             agent=book_tools), obs(done("s1", "x", [call("book", {"yes": 1})])))
add("yaml-int-key-in-parameters", "2", "non-string key inside tool parameters",
    contract(scen("s1", "refusal: true"), agent="""\
tools:
  - name: book
    description: Book
    parameters: {1: x}
"""), obs(done("s1", "x", refusal=True)))
add("yaml-unhashable-key", "2", "a sequence used as mapping key is unhashable",
    contract(scen("s1", "response:\n  ? [a, b]\n  : x")), SIMPLE_OBS)
add("yaml-syntax-error", "2", "syntax error reported with PyYAML message and position",
    "version: 1\nagent: {}\nscenarios:\n  - id: s1\n    prompt: [unclosed\n    expect: {refusal: true}\n",
    SIMPLE_OBS)
add("yaml-tab-indentation", "2", "a tab used for indentation is a YAML error",
    "version: 1\nagent: {}\nscenarios:\n\t- id: s1\n", SIMPLE_OBS)
add("yaml-multiple-documents", "2", "two YAML documents are a YAML error",
    SIMPLE_CONTRACT + "---\nversion: 1\n", SIMPLE_OBS)
add("yaml-empty-file", "2", "empty contract parses to null -> must be a YAML mapping",
    "", SIMPLE_OBS)
add("yaml-comment-only", "2", "comment-only contract parses to null",
    "# nothing here\n", SIMPLE_OBS)
add("yaml-root-list", "2", "root sequence is not a mapping",
    "- version: 1\n", SIMPLE_OBS)
add("yaml-root-scalar", "2", "root scalar is not a mapping", "hello\n", SIMPLE_OBS)
add("yaml-crlf-newlines", "2, 10", "CRLF contract parses and hashes exactly like the LF twin",
    SIMPLE_CONTRACT.replace("\n", "\r\n").encode("utf-8"), SIMPLE_OBS)
add("yaml-lf-twin-of-crlf", "10", "LF twin of yaml-crlf-newlines (same contract_digest)",
    SIMPLE_CONTRACT, SIMPLE_OBS)
add("yaml-cr-only-newlines", "2, 10", "bare CR newlines are translated too (same digest as LF)",
    SIMPLE_CONTRACT.replace("\n", "\r").encode("utf-8"), SIMPLE_OBS)
add("yaml-utf8-bom", "2, 10", "a BOM in the contract is accepted by YAML but hashed",
    b"\xef\xbb\xbf" + SIMPLE_CONTRACT.encode("utf-8"), SIMPLE_OBS)
add("yaml-invalid-utf8", "2", "invalid UTF-8 contract -> regular-file error",
    SIMPLE_CONTRACT.replace("hello]", "hello]  # \xff\n").encode("latin-1"), SIMPLE_OBS)
add("yaml-non-ascii-text", "2, 9", "non-ASCII contains text matches exactly",
    contract(scen("s1", "response:\n  contains: [\"Café ☕\"]")), obs(done("s1", "Le Café ☕ ouvert")))


def padded_contract(total_bytes: int) -> bytes:
    base = SIMPLE_CONTRACT.encode("utf-8")
    remaining = total_bytes - len(base)
    lines = []
    while remaining > 0:
        size = min(remaining, 10_000)
        # a comment line of exactly `size` bytes including "# " and "\n"
        if size < 3:
            lines.append(b"\n" * size)
        else:
            lines.append(b"# " + b"x" * (size - 3) + b"\n")
        remaining -= size
    data = base + b"".join(lines)
    assert len(data) == total_bytes
    return data


add("limit-contract-262144-bytes-ok", "2, 12", "a contract of exactly 262,144 bytes is accepted",
    padded_contract(262_144), SIMPLE_OBS)
add("limit-contract-262145-bytes", "2, 12", "a contract of 262,145 bytes is rejected",
    padded_contract(262_145), SIMPLE_OBS)
def crlf_contract(raw_bytes: int) -> bytes:
    """A CRLF contract of exactly raw_bytes bytes (smaller after newline translation)."""
    for lf_size in range(raw_bytes - 40, 0, -1):
        data = padded_contract(lf_size).replace(b"\n", b"\r\n")
        if len(data) == raw_bytes:
            return data
        if len(data) < raw_bytes:
            data = data + b"#" * (raw_bytes - len(data))
            assert len(data) == raw_bytes
            return data
    raise AssertionError


add("limit-contract-crlf-262145-raw-bytes", "2, 12",
    "CRLF contract of 262,145 raw bytes is rejected although its translated text is smaller",
    crlf_contract(262_145), SIMPLE_OBS)
add("limit-contract-crlf-262144-raw-bytes-ok", "2, 10, 12", "CRLF contract of exactly 262,144 raw bytes accepted",
    crlf_contract(262_144), SIMPLE_OBS)


def nested_list(depth: int) -> Any:
    value: Any = 1
    for _ in range(depth):
        value = [value]
    return value


def params_contract(parameters: Any) -> dict[str, Any]:
    data = {
        "version": 1,
        "agent": {"tools": [{"name": "book", "description": "Book", "parameters": parameters}]},
        "scenarios": [{"id": "s1", "prompt": "p", "expect": {"refusal": True}}],
    }
    return data


REFUSAL_OBS = obs(done("s1", "No.", refusal=True))
for depth, name, note in [
    (27, "limit-contract-depth-32-ok", "deepest scalar at depth 32 accepted"),
    (28, "limit-contract-depth-33", "nesting deeper than 32 rejected"),
]:
    add(name, "2, 12", note, json.dumps(params_contract({"x": nested_list(depth)})) + "\n", REFUSAL_OBS)

base_count = count_values(params_contract({"x": []}))
# Every node except the root is either a key/list index or a value, so the
# count is always odd: 19,999 is the largest accepted count, 20,001 the
# smallest rejected one.
for total, name, note in [
    (19_999, "limit-contract-19999-values-ok", "19,999 values accepted (the largest odd count <= 20,000)"),
    (20_001, "limit-contract-20001-values", "20,001 values rejected"),
]:
    data = params_contract({"x": [0] * ((total - base_count) // 2)})
    assert count_values(data) == total, count_values(data)
    add(name, "2, 12", note, json.dumps(data, separators=(",", ":")) + "\n", REFUSAL_OBS)
for length, name, note in [
    (100_000, "limit-contract-string-100000-ok", "a 100,000-character string accepted"),
    (100_001, "limit-contract-string-100001", "a 100,001-character string rejected (oversized string)"),
]:
    add(name, "2, 12", note, json.dumps(params_contract({"x": "a" * length})) + "\n", REFUSAL_OBS)
add("limit-contract-oversized-contains", "2", "oversized string check runs before field validation",
    contract(scen("s1", "response:\n  contains: [" + "b" * 100_001 + "]"), version="2"), SIMPLE_OBS)
add("limit-contract-scenarios-1001", "3, 12", "more than 1,000 scenarios rejected before parsing items",
    "version: 1\nagent: {}\nscenarios:\n" + "  - {}\n" * 1001, SIMPLE_OBS)
add("limit-contract-tools-1001", "3, 12", "more than 1,000 agent.tools rejected before parsing items",
    "version: 1\nagent:\n  tools:\n" + "    - {}\n" * 1001 + SIMPLE_CONTRACT.split("agent: {}\n", 1)[1],
    SIMPLE_OBS)

# ---------------------------------------------------------------------------
# §3 contract fields

add("contract-version-missing", "3", "missing version -> must be an integer",
    SIMPLE_CONTRACT.replace("version: 1\n", ""), SIMPLE_OBS)
add("contract-version-string", "3", "version '1' (string) rejected",
    SIMPLE_CONTRACT.replace("version: 1", "version: '1'"), SIMPLE_OBS)
add("contract-version-float", "3", "version 1.0 rejected",
    SIMPLE_CONTRACT.replace("version: 1", "version: 1.0"), SIMPLE_OBS)
add("contract-version-2", "3", "version 2 -> must be 1, got 2",
    SIMPLE_CONTRACT.replace("version: 1", "version: 2"), SIMPLE_OBS)
add("contract-version-bool", "3", "version true rejected (bool is not an integer)",
    SIMPLE_CONTRACT.replace("version: 1", "version: true"), SIMPLE_OBS)
add("contract-version-hex-one", "2, 3", "version 0x1 is the integer 1 (YAML 1.1)",
    SIMPLE_CONTRACT.replace("version: 1", "version: 0x1"), SIMPLE_OBS)
add("contract-unknown-top-key", "3", "unknown top-level key",
    SIMPLE_CONTRACT + "extra: 1\n", SIMPLE_OBS)
add("contract-unknown-key-before-version", "3", "unknown keys are reported before the version check",
    SIMPLE_CONTRACT.replace("version: 1", "version: 2") + "extra: 1\n", SIMPLE_OBS)
add("contract-agent-missing", "3", "agent is required even offline",
    SIMPLE_CONTRACT.replace("agent: {}\n", ""), SIMPLE_OBS)
add("contract-agent-null", "3", "agent: null is not a mapping",
    SIMPLE_CONTRACT.replace("agent: {}", "agent: null"), SIMPLE_OBS)
add("contract-agent-list", "3", "agent as a list",
    SIMPLE_CONTRACT.replace("agent: {}", "agent: []"), SIMPLE_OBS)
add("contract-agent-unknown-key", "3", "unknown key inside agent",
    SIMPLE_CONTRACT.replace("agent: {}", "agent: {name: bot}"), SIMPLE_OBS)
add("contract-scenarios-empty", "3", "scenarios: [] rejected",
    "version: 1\nagent: {}\nscenarios: []\n", obs())
add("contract-scenarios-missing", "3", "missing scenarios -> must be a list",
    "version: 1\nagent: {}\n", obs())
add("contract-scenarios-mapping", "3", "scenarios as a mapping -> must be a list",
    "version: 1\nagent: {}\nscenarios:\n  s1: {}\n", obs())
add("contract-endpoint-ignored-offline", "3, 7", "agent.endpoint/model are ignored offline (remote URL is fine)",
    SIMPLE_CONTRACT.replace("agent: {}", "agent:\n  endpoint: http://example.com/v1\n  model: m"), SIMPLE_OBS)
add("contract-endpoint-blank", "3", "agent.endpoint blank is not text",
    SIMPLE_CONTRACT.replace("agent: {}", "agent: {endpoint: '  '}"), SIMPLE_OBS)
add("contract-endpoint-number", "3", "agent.endpoint must be text",
    SIMPLE_CONTRACT.replace("agent: {}", "agent: {endpoint: 8080}"), SIMPLE_OBS)
add("contract-model-null-ok", "3", "agent.model null = absent",
    SIMPLE_CONTRACT.replace("agent: {}", "agent: {model: null, endpoint: ~}"), SIMPLE_OBS)
add("contract-model-list", "3", "agent.model must be text",
    SIMPLE_CONTRACT.replace("agent: {}", "agent: {model: [gpt]}"), SIMPLE_OBS)
for value, name, note in [
    ("0", "contract-timeout-zero", "timeout_seconds 0 rejected"),
    ("300", "contract-timeout-300-ok", "timeout_seconds 300 accepted"),
    ("300.5", "contract-timeout-300-5", "timeout_seconds 300.5 rejected"),
    ("-1", "contract-timeout-negative", "timeout_seconds -1 rejected"),
    ("true", "contract-timeout-bool", "timeout_seconds true is not a number"),
    ("'30'", "contract-timeout-string", "timeout_seconds '30' is not a number"),
    (".inf", "contract-timeout-inf", "timeout_seconds .inf must be finite"),
    (".nan", "contract-timeout-nan", "timeout_seconds .nan must be finite"),
    ("null", "contract-timeout-null", "timeout_seconds null is not the default: must be a number"),
    ("0.5", "contract-timeout-fraction-ok", "timeout_seconds 0.5 accepted"),
    ("1_0", "contract-timeout-underscore-ok", "timeout_seconds 1_0 is YAML 1.1 int 10"),
]:
    add(name, "3, 12", note,
        SIMPLE_CONTRACT.replace("agent: {}", f"agent: {{timeout_seconds: {value}}}"), SIMPLE_OBS)
add("contract-capabilities-valid", "3", "capabilities subset of chat/tools/retrieval accepted (unused)",
    SIMPLE_CONTRACT.replace("agent: {}", "agent: {capabilities: [retrieval, chat, tools]}"), SIMPLE_OBS)
add("contract-capabilities-duplicate", "3", "duplicate capability rejected",
    SIMPLE_CONTRACT.replace("agent: {}", "agent: {capabilities: [chat, tools, chat]}"), SIMPLE_OBS)
add("contract-capabilities-unknown", "3", "unknown capabilities listed sorted",
    SIMPLE_CONTRACT.replace("agent: {}", "agent: {capabilities: [voice, chat, audio]}"), SIMPLE_OBS)
add("contract-capabilities-not-list", "3", "capabilities must be a list",
    SIMPLE_CONTRACT.replace("agent: {}", "agent: {capabilities: chat}"), SIMPLE_OBS)
add("contract-capabilities-number-item", "3", "capability item must be text",
    SIMPLE_CONTRACT.replace("agent: {}", "agent: {capabilities: [1]}"), SIMPLE_OBS)


def tool_agent(tools_yaml: str) -> str:
    return "tools:\n" + indent(textwrap.dedent(tools_yaml).strip("\n") + "\n", 2)


for tools_yaml, name, note in [
    ("- {name: t, parameters: {}}", "contract-tool-missing-description", "tool description required"),
    ("- {description: d, parameters: {}}", "contract-tool-missing-name", "tool name required"),
    ("- {name: t, description: d}", "contract-tool-missing-parameters", "tool parameters required (must be a mapping)"),
    ("- {name: t, description: d, parameters: [a]}", "contract-tool-parameters-list", "tool parameters must be a mapping"),
    ("- {name: t, description: d, parameters: {}, type: function}", "contract-tool-extra-key", "unknown key in a tool"),
    ("- {name: t, description: d, parameters: {}}\n- {name: u, description: d, parameters: {}}\n- {name: t, description: d2, parameters: {}}",
     "contract-tool-duplicate-name", "duplicate tool names"),
    ("- {name: 'look up', description: d, parameters: {}}", "contract-tool-name-space", "tool name with a space"),
    ("- {name: lookup.v2, description: d, parameters: {}}", "contract-tool-name-dot", "tool names may not contain dots"),
    ("- {name: " + "t" * 65 + ", description: d, parameters: {}}", "contract-tool-name-65", "tool name of 65 characters rejected"),
    ("- {name: t, description: '  ', parameters: {}}", "contract-tool-description-blank", "blank tool description"),
    ("- lookup", "contract-tool-item-string", "tool item must be a mapping"),
]:
    add(name, "3", note, contract(scen("s1", "refusal: true"), agent=tool_agent(tools_yaml)), REFUSAL_OBS)
add("contract-tools-not-list", "3", "agent.tools must be a list",
    contract(scen("s1", "refusal: true"), agent="tools: {name: t}"), REFUSAL_OBS)
add("contract-tool-name-64-stripped-ok", "3, 2", "64-char tool name accepted; names are stripped",
    contract(scen("s1", "tools:\n  required: [" + "T" * 64 + "]"),
             agent=tool_agent("- {name: '  " + "T" * 64 + " ', description: d, parameters: {}}")),
    obs(done("s1", "ok", [call("T" * 64)])))
add("contract-tool-name-hyphen-underscore-ok", "3", "tool names allow - and _ and leading digits",
    contract(scen("s1", "tools:\n  required: [9-get_it]"),
             agent=tool_agent("- {name: 9-get_it, description: d, parameters: {a: [1, {b: null}]}}")),
    obs(done("s1", "ok", [call("9-get_it")])))

# scenario ids
add("contract-scenario-id-bad-char", "3, 2", "scenario id with a space",
    contract(scen("'a b'", "refusal: true")), REFUSAL_OBS)
add("contract-scenario-id-leading-dot", "3", "scenario id must start with a letter or digit",
    contract(scen("'.hidden'", "refusal: true")), REFUSAL_OBS)
add("contract-scenario-id-leading-hyphen", "3", "scenario id starting with '-'",
    contract(scen("'-x'", "refusal: true")), REFUSAL_OBS)
id96 = "a" + "b.c_d-" * 15 + "e" * 5
assert len(id96) == 96
add("contract-scenario-id-96-ok", "3", "96-character id accepted (dots, underscores, hyphens)",
    contract(scen(id96, "refusal: true")), obs(done(id96, "No.", refusal=True)))
add("contract-scenario-id-97", "3", "97-character id rejected",
    contract(scen(id96 + "f", "refusal: true")), obs(done(id96, "No.", refusal=True)))
add("contract-scenario-id-duplicate", "3", "duplicate scenario ids",
    contract(scen("s1", "refusal: true"), scen("s2", "refusal: true"), scen("s1", "refusal: false")),
    REFUSAL_OBS)
add("contract-scenario-id-missing", "3", "missing scenario id",
    "version: 1\nagent: {}\nscenarios:\n  - prompt: p\n    expect: {refusal: true}\n", REFUSAL_OBS)
add("contract-scenario-id-int", "3", "integer scenario id is not text",
    contract(scen("7", "refusal: true")), REFUSAL_OBS)
add("contract-scenario-id-stripped", "3, 2", "scenario id is stripped (observation id 's1' matches)",
    contract(scen("'  s1  '", "refusal: true")), REFUSAL_OBS)
add("contract-scenario-not-mapping", "3", "scenario item must be a mapping",
    "version: 1\nagent: {}\nscenarios:\n  - s1\n", REFUSAL_OBS)
add("contract-scenario-unknown-key", "3", "unknown scenario key",
    contract(scen("s1", "refusal: true", extra="tags: [a]")), REFUSAL_OBS)
add("contract-prompt-missing", "3", "prompt is required",
    "version: 1\nagent: {}\nscenarios:\n  - id: s1\n    expect: {refusal: true}\n", REFUSAL_OBS)
add("contract-prompt-blank", "3", "blank prompt rejected",
    contract(scen("s1", "refusal: true", prompt="'   '")), REFUSAL_OBS)
add("contract-prompt-null", "3", "prompt: null rejected (present but not text)",
    contract(scen("s1", "refusal: true", prompt="null")), REFUSAL_OBS)
add("contract-system-prompt-blank", "3", "blank system_prompt rejected",
    contract(scen("s1", "refusal: true", extra="system_prompt: ''")), REFUSAL_OBS)
add("contract-system-prompt-null-ok", "3", "system_prompt null = absent",
    contract(scen("s1", "refusal: true", extra="system_prompt: null")), REFUSAL_OBS)
add("contract-id-checked-before-prompt", "3", "field order inside a scenario: id before prompt",
    "version: 1\nagent: {}\nscenarios:\n  - id: 'bad id'\n    expect: {refusal: true}\n", REFUSAL_OBS)
add("contract-first-bad-scenario-wins", "3", "scenarios are validated in order; the first error wins",
    contract(scen("s1", "refusal: true"), scen("s2", "refusal: maybe"), scen("s3", "{}")), REFUSAL_OBS)

# available tools
add("contract-available-tools-unknown", "3", "available_tools references unknown tools (sorted)",
    contract(scen("s1", "refusal: true", extra="available_tools: [zeta, lookup, alpha]"), agent=TOOLS_AGENT),
    REFUSAL_OBS)
add("contract-available-tools-no-agent-tools", "3", "available_tools without agent.tools: every name is unknown",
    contract(scen("s1", "refusal: true", extra="available_tools: [lookup]")), REFUSAL_OBS)
add("contract-available-tools-duplicate", "3", "duplicate available_tools value",
    contract(scen("s1", "refusal: true", extra="available_tools: [lookup, book, lookup]"), agent=TOOLS_AGENT),
    REFUSAL_OBS)
add("contract-available-tools-bad-name", "3", "available_tools item must be a valid tool name",
    contract(scen("s1", "refusal: true", extra="available_tools: ['look up']"), agent=TOOLS_AGENT),
    REFUSAL_OBS)
add("contract-available-tools-empty-restricts", "3", "available_tools: [] is present -> required tool unavailable",
    contract(scen("s1", "tools:\n  required: [lookup]", extra="available_tools: []"), agent=TOOLS_AGENT),
    obs(done("s1", "ok", [call("lookup")])))
add("contract-available-tools-null-restricts", "3", "available_tools: null counts as present and empty",
    contract(scen("s1", "tools:\n  allowed: [book]", extra="available_tools: null"), agent=TOOLS_AGENT),
    obs(done("s1", "ok", [])))
add("contract-available-tools-subset", "3", "sequence outside available_tools is unavailable",
    contract(scen("s1", "tools:\n  exact_sequence: [lookup, book]", extra="available_tools: [lookup]"),
             agent=TOOLS_AGENT), obs(done("s1", "ok", [call("lookup"), call("book")])))
add("contract-agent-tools-default-availability", "3",
    "without available_tools all agent.tools are available; others are unavailable",
    contract(scen("s1", "tools:\n  required: [lookup, search]"), agent=TOOLS_AGENT),
    obs(done("s1", "ok", [call("lookup"), call("search")])))
add("contract-availability-unchecked-without-tools", "3", "no agent.tools and no available_tools: names unchecked",
    contract(scen("s1", "tools:\n  required: [anything]\n  allowed: [anything, other]\n  exact_sequence: [anything]")),
    obs(done("s1", "ok", [call("anything")])))
add("contract-forbidden-not-availability-checked", "3", "forbidden names are never checked against availability",
    contract(scen("s1", "tools:\n  forbidden: [rm_rf, lookup]", extra="available_tools: [book]"), agent=TOOLS_AGENT),
    obs(done("s1", "ok", [call("book")])))

# expect
add("contract-expect-missing", "3", "expect is required",
    contract(scen("s1", None)), REFUSAL_OBS)
add("contract-expect-null", "3", "expect: null is not a mapping",
    contract(scen("s1", "null")), REFUSAL_OBS)
add("contract-expect-list", "3", "expect must be a mapping",
    contract(scen("s1", "[]")), REFUSAL_OBS)
add("contract-expect-empty", "3", "expect: {} requests zero assertions",
    contract(scen("s1", "{}")), REFUSAL_OBS)
add("contract-expect-null-parts", "3", "null response/tools/sources = absent -> zero assertions",
    contract(scen("s1", "response: null\ntools: null\nsources: null")), REFUSAL_OBS)
add("contract-expect-empty-lists", "3", "contains: [] only requests nothing",
    contract(scen("s1", "response:\n  contains: []\n  excludes: []\ntools:\n  required: []\n  forbidden: []\nsources:\n  required: []")),
    REFUSAL_OBS)
add("contract-expect-null-parts-with-refusal", "3", "null parts are absent; refusal alone is one assertion",
    contract(scen("s1", "response: ~\ntools: ~\nsources: ~\nrefusal: true")), REFUSAL_OBS)
add("contract-expect-unknown-key", "3", "unknown expect key",
    contract(scen("s1", "refusal: true\nlatency: 5")), REFUSAL_OBS)
add("contract-response-unknown-key", "3", "unknown key under expect.response",
    contract(scen("s1", "response:\n  contains: [a]\n  matches: [b]")), SIMPLE_OBS)
add("contract-tools-unknown-key", "3", "unknown key under expect.tools",
    contract(scen("s1", "tools:\n  required: [a]\n  min_calls: 1")), SIMPLE_OBS)
add("contract-sources-unknown-key", "3", "unknown key under expect.sources",
    contract(scen("s1", "sources:\n  required: [a]\n  optional: [b]")), SIMPLE_OBS)
add("contract-response-not-mapping", "3", "expect.response must be a mapping",
    contract(scen("s1", "response: [hello]")), SIMPLE_OBS)
add("contract-contains-not-list", "3", "contains as a plain string",
    contract(scen("s1", "response:\n  contains: hello")), SIMPLE_OBS)
add("contract-contains-number-item", "3", "contains item must be text",
    contract(scen("s1", "response:\n  contains: [hello, 42]")), SIMPLE_OBS)
add("contract-contains-blank-item", "3", "blank contains item",
    contract(scen("s1", "response:\n  contains: [hello, '  ']")), SIMPLE_OBS)
add("contract-contains-duplicate", "3", "duplicate contains values",
    contract(scen("s1", "response:\n  contains: [hello, world, hello]")), SIMPLE_OBS)
add("contract-contains-duplicate-after-strip", "3, 14.7", "duplicates are detected after stripping",
    contract(scen("s1", "response:\n  contains: [hello, '  hello ']")), SIMPLE_OBS)
add("contract-excludes-duplicate", "3", "duplicate excludes values",
    contract(scen("s1", "response:\n  excludes: [x, x]")), SIMPLE_OBS)
add("contract-contains-excludes-overlap", "3", "same text in contains and excludes (sorted list)",
    contract(scen("s1", "response:\n  contains: [b, a, c]\n  excludes: [c, ' a']")), SIMPLE_OBS)
add("contract-contains-stripped", "3, 14.7", "contains text is stripped before matching",
    contract(scen("s1", "response:\n  contains: ['  Gate B12  ']")), obs(done("s1", "Proceed to Gate B12.")))
add("contract-sources-duplicate", "3", "duplicate required sources",
    contract(scen("s1", "sources:\n  required: [kb-1, kb-1]")), SIMPLE_OBS)
add("contract-sources-not-list", "3", "sources.required must be a list",
    contract(scen("s1", "sources:\n  required: kb-1")), SIMPLE_OBS)

# tools expectation field rules
add("contract-required-item-number", "3", "required item neither string nor mapping",
    contract(scen("s1", "tools:\n  required: [5]")), SIMPLE_OBS)
add("contract-required-item-bad-name", "3", "required string item must be a tool name",
    contract(scen("s1", "tools:\n  required: ['look up']")), SIMPLE_OBS)
add("contract-required-extra-key", "3", "required object with an extra key",
    contract(scen("s1", "tools:\n  required:\n    - {name: t, arguments: {}, strict: true}")), SIMPLE_OBS)
add("contract-required-missing-name", "3", "required object without name",
    contract(scen("s1", "tools:\n  required:\n    - {arguments: {a: 1}}")), SIMPLE_OBS)
add("contract-required-arguments-null", "3", "required arguments: null -> must be a mapping",
    contract(scen("s1", "tools:\n  required:\n    - {name: t, arguments: null}")), SIMPLE_OBS)
add("contract-required-arguments-list", "3", "required arguments must be a mapping",
    contract(scen("s1", "tools:\n  required:\n    - {name: t, arguments: [1]}")), SIMPLE_OBS)
add("contract-required-arguments-checked-before-name", "3", "arguments are validated before the name",
    contract(scen("s1", "tools:\n  required:\n    - {name: 'bad name', arguments: 3}")), SIMPLE_OBS)
add("contract-allowed-duplicate", "3", "duplicate allowed values",
    contract(scen("s1", "tools:\n  allowed: [a, b, a]")), SIMPLE_OBS)
add("contract-forbidden-duplicate", "3", "duplicate forbidden values",
    contract(scen("s1", "tools:\n  forbidden: [a, a]")), SIMPLE_OBS)
add("contract-exact-sequence-bad-name", "3", "exact_sequence items must be tool names",
    contract(scen("s1", "tools:\n  exact_sequence: [a, 'b c']")), SIMPLE_OBS)
add("contract-max-calls-null", "3, 14.9", "max_calls: null is an error",
    contract(scen("s1", "tools:\n  max_calls: null")), SIMPLE_OBS)
add("contract-max-calls-negative", "3", "max_calls must be non-negative",
    contract(scen("s1", "tools:\n  max_calls: -1")), SIMPLE_OBS)
add("contract-max-calls-float", "3", "max_calls 1.0 is not an integer",
    contract(scen("s1", "tools:\n  max_calls: 1.0")), SIMPLE_OBS)
add("contract-max-calls-string", "3", "max_calls '2' is not an integer",
    contract(scen("s1", "tools:\n  max_calls: '2'")), SIMPLE_OBS)
add("contract-max-calls-bool", "3", "max_calls: no is boolean -> not an integer",
    contract(scen("s1", "tools:\n  max_calls: no")), SIMPLE_OBS)
add("contract-refusal-null", "3, 14.9", "refusal: null is an error",
    contract(scen("s1", "refusal: null")), REFUSAL_OBS)
add("contract-refusal-string", "3", "refusal 'true' (string) rejected",
    contract(scen("s1", "refusal: 'true'")), REFUSAL_OBS)

# cross-field rules
add("contract-require-and-forbid", "3", "required ∩ forbidden",
    contract(scen("s1", "tools:\n  required: [b, {name: a}]\n  forbidden: [a, b]")), SIMPLE_OBS)
add("contract-sequence-and-forbid", "3", "exact_sequence ∩ forbidden",
    contract(scen("s1", "tools:\n  exact_sequence: [a, a]\n  forbidden: [a]")), SIMPLE_OBS)
add("contract-allow-and-forbid", "3", "allowed ∩ forbidden",
    contract(scen("s1", "tools:\n  allowed: [a, b]\n  forbidden: [b]")), SIMPLE_OBS)
add("contract-cross-require-forbid-first", "3", "require/forbid conflict reported before sequence/forbid",
    contract(scen("s1", "tools:\n  required: [a]\n  exact_sequence: [a, b]\n  forbidden: [b, a]")), SIMPLE_OBS)
add("contract-required-missing-from-sequence", "3", "required name missing from exact_sequence",
    contract(scen("s1", "tools:\n  required: [a, b]\n  exact_sequence: [a]")), SIMPLE_OBS)
add("contract-required-count-exceeds-sequence", "3", "required twice but in exact_sequence once",
    contract(scen("s1", "tools:\n  required: [a, {name: a, arguments: {x: 1}}]\n  exact_sequence: [a, b]")), SIMPLE_OBS)
add("contract-required-vs-sequence-null", "3", "exact_sequence: null is [] -> required missing",
    contract(scen("s1", "tools:\n  required: [a]\n  exact_sequence: null")), SIMPLE_OBS)
add("contract-max-calls-below-required", "3", "max_calls < number of required items",
    contract(scen("s1", "tools:\n  required: [a, a]\n  max_calls: 1")), SIMPLE_OBS)
add("contract-max-calls-below-sequence", "3", "max_calls < len(exact_sequence)",
    contract(scen("s1", "tools:\n  exact_sequence: [a, b, a]\n  max_calls: 2")), SIMPLE_OBS)
add("contract-required-missing-from-allowed", "3", "required names must be allowed",
    contract(scen("s1", "tools:\n  required: [a, c]\n  allowed: [a, b]")), SIMPLE_OBS)
add("contract-required-vs-allowed-null", "3", "allowed: null is [] -> required not allowed",
    contract(scen("s1", "tools:\n  required: [a]\n  allowed: null")), SIMPLE_OBS)
add("contract-sequence-missing-from-allowed", "3", "exact_sequence names must be allowed",
    contract(scen("s1", "tools:\n  exact_sequence: [a, z]\n  allowed: [a]")), SIMPLE_OBS)
add("contract-cross-sequence-before-max-calls", "3", "exact_sequence coverage is checked before max_calls",
    contract(scen("s1", "tools:\n  required: [a, b]\n  exact_sequence: [a]\n  max_calls: 0")), SIMPLE_OBS)
add("contract-cross-max-calls-before-allowed", "3", "max_calls is checked before allowed",
    contract(scen("s1", "tools:\n  required: [a, b]\n  allowed: [a]\n  max_calls: 1")), SIMPLE_OBS)
add("contract-cross-allowed-before-availability", "3", "allowed coverage is checked before availability",
    contract(scen("s1", "tools:\n  required: [nope]\n  allowed: [lookup]"), agent=TOOLS_AGENT), SIMPLE_OBS)
add("contract-max-calls-equal-ok", "3", "max_calls equal to required count and sequence length is fine",
    contract(scen("s1", "tools:\n  required: [a, b]\n  exact_sequence: [a, b]\n  max_calls: 2")),
    obs(done("s1", "ok", [call("a"), call("b")])))


def bulk_contract(counts: list[int]) -> str:
    """Scenarios with `n` contains-assertions each."""
    scens = []
    for index, n in enumerate(counts):
        items = ", ".join(f"w{i}" for i in range(n))
        scens.append(scen(f"s{index + 1}", f"response:\n  contains: [{items}]"))
    return contract(*scens)


text250 = " ".join(f"w{i}" for i in range(100))
add("limit-assertions-250-ok", "3, 12", "exactly 250 assertions accepted",
    bulk_contract([100, 100, 50]),
    obs(done("s1", text250), done("s2", text250), done("s3", text250)))
add("limit-assertions-251", "3, 12", "251 assertions rejected",
    bulk_contract([100, 100, 51]),
    obs(done("s1", text250), done("s2", text250), done("s3", text250)))
add("limit-assertions-251-counted-before-selection", "3, 14.10",
    "the cap counts unselected scenarios too",
    bulk_contract([100, 100, 51]), obs(done("s1", text250)), flag_args("--scenario", "s1"))
add("limit-assertions-mixed-kinds-250", "3", "assertion counting formula across all kinds (250 total)",
    contract(
        scen("s1", "response:\n  contains: [" + ", ".join(f"c{i}" for i in range(121)) + "]\n"
             "  excludes: [" + ", ".join(f"x{i}" for i in range(60)) + "]\n"
             "tools:\n  required: [t, t, t]\n  allowed: [t]\n  forbidden: [" + ", ".join(f"f{i}" for i in range(60)) + "]\n"
             "  exact_sequence: [t, t, t]\n  max_calls: 3\nrefusal: false\nsources:\n  required: [k1, k2]"),
    ),
    obs(done("s1", " ".join(f"c{i}" for i in range(121)), [call("t")] * 3, refusal=False, sources=["k1", "k2"])))
add("limit-assertions-mixed-kinds-251", "3", "one more source requirement -> 251 -> error",
    contract(
        scen("s1", "response:\n  contains: [" + ", ".join(f"c{i}" for i in range(121)) + "]\n"
             "  excludes: [" + ", ".join(f"x{i}" for i in range(60)) + "]\n"
             "tools:\n  required: [t, t, t]\n  allowed: [t]\n  forbidden: [" + ", ".join(f"f{i}" for i in range(60)) + "]\n"
             "  exact_sequence: [t, t, t]\n  max_calls: 3\nrefusal: false\nsources:\n  required: [k1, k2, k3]"),
    ),
    obs(done("s1", "x", [call("t")] * 3, refusal=False, sources=["k1", "k2"])))

# ---------------------------------------------------------------------------
# §4 observation file

add("obs-version-2", "4", "observation version 2",
    SIMPLE_CONTRACT, obs(done("s1", "hello"), version=2))
add("obs-version-missing", "4", "observation version missing",
    SIMPLE_CONTRACT, {"scenarios": [done("s1", "hello")]})
add("obs-version-string", "4", "observation version '1'",
    SIMPLE_CONTRACT, obs(done("s1", "hello"), version="1"))
add("obs-version-float", "4", "observation version 1.0",
    SIMPLE_CONTRACT, '{"version": 1.0, "scenarios": []}\n')
add("obs-root-list", "4", "root not an object",
    SIMPLE_CONTRACT, [done("s1", "hello")])
add("obs-root-string", "4", "root JSON string",
    SIMPLE_CONTRACT, '"hello"\n')
add("obs-bom", "2, 4", "a UTF-8 BOM makes the observation JSON invalid",
    SIMPLE_CONTRACT, b"\xef\xbb\xbf" + json.dumps(SIMPLE_OBS).encode())
add("obs-invalid-json", "2", "malformed JSON",
    SIMPLE_CONTRACT, '{"version": 1, "scenarios": [}\n')
add("obs-empty-file", "2", "empty observation file",
    SIMPLE_CONTRACT, "")
add("obs-trailing-comma", "2", "trailing comma is invalid JSON",
    SIMPLE_CONTRACT, '{"version": 1, "scenarios": [],}\n')
add("obs-invalid-utf8", "2", "invalid UTF-8 observation file -> regular-file error",
    SIMPLE_CONTRACT, b'{"version": 1, "scenarios": [{"id": "s1", "response": "caf\xe9", "response_complete": true}]}')
add("obs-crlf", "2, 10", "CRLF observation file: source digest equals the LF twin (cli-default-args-pass)",
    SIMPLE_CONTRACT, (json.dumps(SIMPLE_OBS, indent=2) + "\n").replace("\n", "\r\n").encode())
add("obs-duplicate-key", "2", "duplicate JSON keys",
    SIMPLE_CONTRACT, '{"version": 1, "scenarios": [{"id": "s1", "response": "a", "response": "hello", "response_complete": true}]}\n')
add("obs-duplicate-key-in-arguments", "2", "duplicate keys inside arguments",
    SIMPLE_CONTRACT, '{"version": 1, "scenarios": [{"id": "s1", "response": "hello", "response_complete": true, '
    '"tool_calls": [{"name": "t", "arguments": {"a": 1, "a": 2}}]}]}\n')
add("obs-nan-in-arguments", "2", "NaN inside arguments is parsed then rejected",
    SIMPLE_CONTRACT, '{"version": 1, "scenarios": [{"id": "s1", "response": "hello", "response_complete": true, '
    '"tool_calls": [{"name": "t", "arguments": {"a": NaN}}]}]}\n')
add("obs-infinity-as-response", "2, 4", "Infinity as response fails the text type check",
    SIMPLE_CONTRACT, '{"version": 1, "scenarios": [{"id": "s1", "response": Infinity, "response_complete": true}]}\n')
add("obs-nan-as-refusal", "2, 4", "NaN as refusal fails the boolean check",
    contract(scen("s1", "refusal: true")),
    '{"version": 1, "scenarios": [{"id": "s1", "response_complete": true, "refusal": NaN}]}\n')
add("obs-unknown-top-key", "4, 14.16", "unknown observation key uses the contract wording",
    SIMPLE_CONTRACT, {"version": 1, "scenarios": [done("s1", "hello")], "meta": {}})
add("obs-unknown-scenario-key", "4", "unknown per-scenario key",
    SIMPLE_CONTRACT, obs(done("s1", "hello", latency_ms=5)))
add("obs-scenarios-missing", "4", "scenarios key required",
    SIMPLE_CONTRACT, {"version": 1})
add("obs-scenarios-null", "4", "scenarios: null rejected (required list)",
    SIMPLE_CONTRACT, {"version": 1, "scenarios": None})
add("obs-scenarios-empty-valid", "4, 5.1", "scenarios: [] is valid; every scenario missing -> incomplete",
    TWO_CONTRACT, obs())
add("obs-scenarios-1001", "4, 12", "more than 1,000 observation scenarios rejected",
    SIMPLE_CONTRACT, '{"version": 1, "scenarios": [' + ", ".join(["{}"] * 1001) + "]}\n")
add("obs-scenario-not-object", "4", "observation scenario item must be a mapping",
    SIMPLE_CONTRACT, {"version": 1, "scenarios": ["s1"]})
add("obs-id-missing", "4", "observation id missing",
    SIMPLE_CONTRACT, obs({"response": "hello", "response_complete": True}))
add("obs-id-null", "4", "observation id null",
    SIMPLE_CONTRACT, obs(done("s1", "hello") | {"id": None}))
add("obs-id-bad-chars", "4", "observation id must be a safe id",
    SIMPLE_CONTRACT, obs(done("s1 x", "hello")))
add("obs-id-stripped", "4", "observation id is stripped",
    SIMPLE_CONTRACT, obs(done(" s1 ", "hello")))
add("obs-id-duplicate", "4", "duplicate observation ids",
    TWO_CONTRACT, obs(done("s1", "hello"), done("s2", "bye"), done("s1", "hello")))
add("obs-id-unknown", "4", "observation ids must exist in the contract (sorted)",
    SIMPLE_CONTRACT, obs(done("s1", "hello"), done("zz", "x"), done("aa", "y")))
add("obs-order-id-validated-last", "4", "field errors are reported before a bad id",
    SIMPLE_CONTRACT, obs({"id": "bad id", "response": "", "response_complete": True}))
add("obs-order-response-before-flags", "4", "response is validated before response_complete",
    SIMPLE_CONTRACT, obs({"id": "s1", "response": 5, "response_complete": "yes"}))
add("obs-order-first-scenario-wins", "4", "observation scenarios are validated in order",
    TWO_CONTRACT, obs(done("s1", "hello", refusal="no"), done("s2", "")))

add("obs-response-empty-string", "4, 14.4", "offline response '' is an error",
    SIMPLE_CONTRACT, obs(done("s1", "")))
add("obs-response-whitespace", "4", "whitespace-only response is an error",
    SIMPLE_CONTRACT, obs(done("s1", " \n\t ")))
add("obs-response-number", "4", "response must be text",
    SIMPLE_CONTRACT, obs(done("s1", 42)))
add("obs-response-null", "4, 5.2", "response: null = not observed -> contains incomplete",
    SIMPLE_CONTRACT, obs(done("s1", None)))
add("obs-response-absent", "4, 5.2", "response absent -> text not observed",
    contract(scen("s1", "response:\n  contains: [hello]\n  excludes: [bye]")), obs(done("s1", _DROP)))
add("obs-response-stripped", "4, 14.7", "observed response is stripped (response_length of stripped text)",
    contract(scen("s1", "response:\n  contains: [hello, 'hello  world']")), obs(done("s1", "  \n hello  world \t")))
add("obs-response-complete-null", "4", "response_complete: null is an error",
    SIMPLE_CONTRACT, obs(raw("s1", response="hello", response_complete=None)))
add("obs-response-complete-string", "4", "response_complete 'true' is an error",
    SIMPLE_CONTRACT, obs(raw("s1", response="hello", response_complete="true")))
add("obs-response-complete-int", "4", "response_complete 1 is an error",
    SIMPLE_CONTRACT, obs(raw("s1", response="hello", response_complete=1)))
add("obs-finish-reason-stripped", "4", "finish_reason ' stop ' is stored as 'stop'",
    SIMPLE_CONTRACT, obs(done("s1", "hello", finish_reason=" stop ")))
add("obs-finish-reason-null", "4", "finish_reason null = none; flags free",
    SIMPLE_CONTRACT, obs(raw("s1", response="hello", response_complete=True, finish_reason=None)))
add("obs-finish-reason-empty", "4", "finish_reason '' is not text -> error",
    SIMPLE_CONTRACT, obs(raw("s1", response="hello", response_complete=True, finish_reason="")))
add("obs-finish-reason-number", "4", "finish_reason must be text",
    SIMPLE_CONTRACT, obs(raw("s1", response="hello", response_complete=True, finish_reason=1)))
add("obs-finish-reason-custom", "4, 5.1", "any finish_reason text is allowed; gates quote it",
    contract(scen("s1", "response:\n  contains: [hello]\ntools:\n  max_calls: 3")),
    obs(raw("s1", response="hello", response_complete=False, finish_reason="Stop",
            tool_calls=[], tool_calls_complete=False)))
add("obs-tool-calls-absent", "4, 5.2", "absent tool_calls = not observed -> all tool assertions incomplete",
    contract(scen("s1", "tools:\n  required: [a]\n  allowed: [a]\n  forbidden: [b]\n  exact_sequence: [a]\n  max_calls: 1")),
    obs(done("s1", "hello")))
add("obs-tool-calls-null-is-zero-calls", "4, 5.2", "tool_calls: null = [] (zero calls evidence)",
    contract(scen("s1", "tools:\n  required: [a]\n  forbidden: [b]\n  max_calls: 1"),
             scen("s2", "tools:\n  allowed: null\n  exact_sequence: null\n  max_calls: 0")),
    obs(done("s1", "hello", None), done("s2", "hello", None)))
add("obs-tool-calls-empty-list", "4, 5.2", "tool_calls: [] is zero calls",
    contract(scen("s1", "tools:\n  allowed: []\n  forbidden: [b]\n  exact_sequence: []\n  max_calls: 0")),
    obs(done("s1", "hello", [])))
add("obs-tool-calls-not-list", "4", "tool_calls must be a list",
    SIMPLE_CONTRACT, obs(done("s1", "hello", {"name": "a"})))
add("obs-tool-calls-250-ok", "4, 12", "250 tool calls accepted",
    contract(scen("s1", "tools:\n  max_calls: 250\n  forbidden: [z]")),
    obs(done("s1", "hello", [call("a")] * 250)))
add("obs-tool-calls-251", "4, 12", "251 tool calls rejected offline",
    contract(scen("s1", "tools:\n  max_calls: 250")),
    obs(done("s1", "hello", [call("a")] * 251)))
add("obs-tool-call-arguments-null", "4", "arguments: null is an error",
    SIMPLE_CONTRACT, obs(done("s1", "hello", [call("a", None)])))
add("obs-tool-call-arguments-string", "4", "arguments as JSON string is an error offline",
    SIMPLE_CONTRACT, obs(done("s1", "hello", [call("a", '{"x": 1}')])))
add("obs-tool-call-arguments-list", "4", "arguments as a list is an error",
    SIMPLE_CONTRACT, obs(done("s1", "hello", [call("a", [1])])))
add("obs-tool-call-arguments-absent", "4, 9", "absent arguments serialise as null in the report",
    contract(scen("s1", "tools:\n  required: [a]")), obs(done("s1", "hello", [call("a"), call("b", {})])))
add("obs-tool-call-extra-key", "4", "extra keys in a call (id) are rejected",
    SIMPLE_CONTRACT, obs(done("s1", "hello", [call("a", {}, id="call_1")])))
add("obs-tool-call-type-key", "4", "extra keys in a call (type) are rejected",
    SIMPLE_CONTRACT, obs(done("s1", "hello", [call("a", {}, type="function")])))
add("obs-tool-call-bad-name", "4", "call name must be a tool name",
    SIMPLE_CONTRACT, obs(done("s1", "hello", [call("a.b")])))
add("obs-tool-call-name-missing", "4", "call without a name",
    SIMPLE_CONTRACT, obs(done("s1", "hello", [{"arguments": {}}])))
add("obs-tool-call-not-object", "4", "call item must be a mapping",
    SIMPLE_CONTRACT, obs(done("s1", "hello", ["a"])))
add("obs-tool-call-name-stripped", "4, 14.7", "call names are stripped",
    contract(scen("s1", "tools:\n  required: [lookup]\n  exact_sequence: [lookup]")),
    obs(done("s1", "hello", [call("  lookup ")])))
add("obs-tool-call-argument-strings-not-stripped", "6, 14.7", "argument string values are kept verbatim",
    contract(scen("s1", "tools:\n  required:\n    - {name: book, arguments: {seat: 12A}}"), agent=book_tools),
    obs(done("s1", "hello", [call("book", {"seat": " 12A "})])))
add("obs-tool-calls-complete-null", "4", "tool_calls_complete: null is an error",
    SIMPLE_CONTRACT, obs(raw("s1", response="hello", response_complete=True, tool_calls_complete=None)))
add("obs-tool-calls-complete-string", "4", "tool_calls_complete 'false' (string) is an error",
    SIMPLE_CONTRACT, obs(raw("s1", response="hello", response_complete=True, tool_calls_complete="false")))
add("obs-refusal-string", "4, 14.2", "offline refusal must be a boolean (string rejected)",
    contract(scen("s1", "refusal: true")), obs(done("s1", "No", refusal="I refuse")))
add("obs-refusal-null", "4, 14.2", "offline refusal: null is an error",
    contract(scen("s1", "refusal: true")), obs(done("s1", "No", refusal=None)))
add("obs-sources-item-kinds", "4", "string, {id}, {source}, {id: null, source}, {id, source} items",
    contract(scen("s1", "sources:\n  required: [kb-1, kb-2, kb-3, kb-4, kb-5]")),
    obs(done("s1", "hello", sources=["  kb-1 ", {"id": "kb-2"}, {"source": " kb-3"},
                                     {"id": None, "source": "kb-4"}, {"id": "kb-5", "source": "ignored"}])))
add("obs-sources-empty-id", "4", "{id: ''} is an error (not a fallback)",
    contract(scen("s1", "sources:\n  required: [kb-1]")),
    obs(done("s1", "hello", sources=[{"id": "", "source": "kb-1"}])))
add("obs-sources-empty-object", "4", "{} -> requires id or source",
    contract(scen("s1", "sources:\n  required: [kb-1]")), obs(done("s1", "hello", sources=["kb-1", {}])))
add("obs-sources-null-id-null-source", "4", "{id: null, source: null} -> requires id or source",
    contract(scen("s1", "sources:\n  required: [kb-1]")),
    obs(done("s1", "hello", sources=[{"id": None, "source": None}])))
add("obs-sources-extra-key", "4", "source object with an extra key",
    contract(scen("s1", "sources:\n  required: [kb-1]")),
    obs(done("s1", "hello", sources=[{"id": "kb-1", "title": "KB"}])))
add("obs-sources-number-item", "4", "source item neither text nor object",
    contract(scen("s1", "sources:\n  required: [kb-1]")), obs(done("s1", "hello", sources=[7])))
add("obs-sources-blank-string", "4", "blank source string is an error",
    contract(scen("s1", "sources:\n  required: [kb-1]")), obs(done("s1", "hello", sources=["kb-1", " "])))
add("obs-sources-not-list", "4", "sources must be a list",
    contract(scen("s1", "sources:\n  required: [kb-1]")), obs(done("s1", "hello", sources="kb-1")))
add("obs-sources-duplicates-accepted", "4", "duplicate observed source ids are kept",
    contract(scen("s1", "sources:\n  required: [kb-1]")), obs(done("s1", "hello", sources=["kb-1", "kb-1", {"id": "kb-1"}])))
add("obs-sources-1001", "4, 12", "more than 1,000 sources rejected offline",
    contract(scen("s1", "sources:\n  required: [kb-1]")), obs(done("s1", "hello", sources=["kb-1"] * 1001)))
add("obs-sources-1000-ok", "4, 12", "1,000 sources accepted",
    contract(scen("s1", "sources:\n  required: [kb-1]")), obs(done("s1", "hello", sources=["kb-1"] * 1000)))
add("obs-error-field", "4, 5.1", "observation error makes every assertion incomplete, even visible violations",
    contract(scen("s1", "response:\n  contains: [hello]\ntools:\n  forbidden: [rm]\n  max_calls: 0\nrefusal: false")),
    obs(done("s1", "hello", [call("rm")], refusal=False, error="  upstream timeout  ")))
add("obs-error-empty", "4", "error '' is an error",
    SIMPLE_CONTRACT, obs(done("s1", "hello", error="")))
add("obs-error-null", "4", "error: null = none",
    SIMPLE_CONTRACT, obs(done("s1", "hello", error=None)))
add("obs-error-only", "4, 5.1", "an observation with only id and error",
    SIMPLE_CONTRACT, obs(raw("s1", error="connection reset")))

# consistency rule
for name, item, note in [
    ("obs-consistency-stop-missing-response-complete", raw("s1", response="hello", finish_reason="stop", tool_calls_complete=True),
     "finish_reason stop with response_complete omitted -> conflict error"),
    ("obs-consistency-stop-response-complete-false", raw("s1", response="hello", finish_reason="stop", response_complete=False, tool_calls_complete=True),
     "finish_reason stop with response_complete false -> conflict"),
    ("obs-consistency-length-response-complete-true", raw("s1", response="hello", finish_reason="length", response_complete=True, tool_calls_complete=False),
     "finish_reason length with response_complete true -> conflict"),
    ("obs-consistency-stop-missing-tool-flag", raw("s1", response="hello", finish_reason="stop", response_complete=True),
     "finish_reason stop with tool_calls_complete omitted -> tool conflict"),
    ("obs-consistency-tool-calls-response-true", raw("s1", response="hello", finish_reason="tool_calls", response_complete=True, tool_calls_complete=True),
     "finish_reason tool_calls with response_complete true -> conflict"),
    ("obs-consistency-tool-calls-tool-false", raw("s1", finish_reason="tool_calls", response_complete=False, tool_calls_complete=False),
     "finish_reason tool_calls with tool_calls_complete false -> tool conflict"),
    ("obs-consistency-length-tool-true", raw("s1", finish_reason="length", response_complete=False, tool_calls_complete=True),
     "finish_reason length with tool_calls_complete true -> tool conflict"),
    ("obs-consistency-both-wrong-response-first", raw("s1", finish_reason="content_filter", response_complete=True, tool_calls_complete=True),
     "both flags conflict: the response_complete conflict is reported"),
]:
    add(name, "4, 14.1", note, SIMPLE_CONTRACT, obs(item))
add("obs-consistency-tool-calls-valid", "4, 5.1", "finish_reason tool_calls + rc false + tcc true is valid",
    contract(scen("s1", "response:\n  contains: [hello]\ntools:\n  required: [a]\nrefusal: false\nsources:\n  required: [kb]")),
    obs(raw("s1", response="hello", finish_reason="tool_calls", response_complete=False,
            tool_calls_complete=True, tool_calls=[call("a")], refusal=False, sources=["kb"])))
add("obs-flags-free-without-finish", "4", "without finish_reason the flags are free (rc false, tcc true)",
    contract(scen("s1", "response:\n  contains: [hello]\ntools:\n  required: [a]")),
    obs(raw("s1", response="hello", response_complete=False, tool_calls_complete=True, tool_calls=[call("a")])))
add("obs-flags-free-rc-true-tcc-false", "4", "without finish_reason: rc true, tcc false is allowed",
    contract(scen("s1", "response:\n  contains: [hello]\ntools:\n  required: [a]")),
    obs(raw("s1", response="hello", response_complete=True, tool_calls_complete=False, tool_calls=[call("a")])))

# observation size/shape limits


def nested_obs(depth: int) -> dict[str, Any]:
    return {"version": 1, "scenarios": [done("s1", "hello", [call("a", {"x": nested_list(depth)})])]}


add("limit-obs-depth-32-ok", "2, 12", "observation nesting at 32 accepted",
    SIMPLE_CONTRACT, nested_obs(26))
add("limit-obs-depth-33", "2, 12", "observation nesting deeper than 32 rejected",
    SIMPLE_CONTRACT, nested_obs(27))
# The bulky observations below belong to an unselected scenario (s2): the whole
# file is still shape-checked, but the report (and expected.json) stays small.
obs_base = count_values({"version": 1, "scenarios": [done("s1", "hello"), done("s2", "bye", [call("a", {"x": []})])]})
for total, name, note in [
    (19_999, "limit-obs-19999-values-ok", "observation with 19,999 values accepted (count is always odd)"),
    (20_001, "limit-obs-20001-values", "observation with 20,001 values rejected"),
]:
    data = {"version": 1, "scenarios": [
        done("s1", "hello"), done("s2", "bye", [call("a", {"x": [0] * ((total - obs_base) // 2)})])]}
    assert count_values(data) == total, count_values(data)
    add(name, "2, 12", note, TWO_CONTRACT, json.dumps(data, separators=(",", ":")) + "\n",
        flag_args("--scenario", "s1"))
add("limit-obs-string-100000-ok", "2, 12", "100,000-char string accepted",
    TWO_CONTRACT, obs(done("s1", "hello"), done("s2", "bye" + "." * 99_997)), flag_args("--scenario", "s1"))
add("limit-obs-string-100001", "2, 12", "100,001-char string rejected before field validation (even in an unselected scenario)",
    TWO_CONTRACT, obs(done("s1", "hello"), done("s2", "bye", error="e" * 100_001, refusal="bad")),
    flag_args("--scenario", "s1"))


def padded_obs(total_bytes: int) -> bytes:
    body = json.dumps(SIMPLE_OBS).encode()
    data = body + b" " * (total_bytes - len(body) - 1) + b"\n"
    assert len(data) == total_bytes
    return data


add("limit-obs-2mib-ok", "2, 12", "an observation file of exactly 2,097,152 bytes is accepted",
    SIMPLE_CONTRACT, padded_obs(2_097_152))
add("limit-obs-2mib-plus-one", "2, 12", "an observation file of 2,097,153 bytes is rejected",
    SIMPLE_CONTRACT, padded_obs(2_097_153))
emoji = "\U0001F600" * 100_000
add("limit-report-too-large", "9, 12", "five 100,000-emoji responses exceed the 5,000,000-byte report",
    contract(*[scen(f"e{i}", "response:\n  excludes: [zzz]") for i in range(5)]),
    obs(*[done(f"e{i}", emoji) for i in range(5)]))

# ---------------------------------------------------------------------------
# §5.1 gates

gate_contract = contract(scen("s1", """\
response:
  contains: [hello]
  excludes: [secret]
tools:
  required: [a]
  allowed: [a]
  forbidden: [rm]
  exact_sequence: [a]
  max_calls: 1
refusal: false
sources:
  required: [kb]
"""))
full_fields = dict(response="hello", tool_calls=[call("a")], refusal=False, sources=["kb"])
add("gate-all-open-pass", "5.1, 5.2", "every assertion kind passes with complete evidence",
    gate_contract, obs(done("s1", **full_fields)))
add("gate-finish-length", "5.1", "finish_reason length closes both gates",
    gate_contract, obs(raw("s1", finish_reason="length", response_complete=False, tool_calls_complete=False, **full_fields)))
add("gate-finish-content-filter", "5.1", "finish_reason content_filter closes both gates",
    gate_contract, obs(raw("s1", finish_reason="content_filter", response_complete=False, tool_calls_complete=False, **full_fields)))
add("gate-finish-tool-calls", "5.1", "finish_reason tool_calls closes the response gate only",
    gate_contract, obs(raw("s1", finish_reason="tool_calls", response_complete=False, tool_calls_complete=True, **full_fields)))
add("gate-response-complete-false", "5.1", "response_complete false without finish_reason -> 'unknown'",
    gate_contract, obs(raw("s1", response_complete=False, tool_calls_complete=True, **full_fields)))
add("gate-tool-calls-complete-false", "5.1", "tool_calls_complete false without finish_reason -> 'unknown'",
    gate_contract, obs(raw("s1", response_complete=True, tool_calls_complete=False, **full_fields)))
add("gate-flags-absent", "5.1", "both flags absent -> completion evidence not observed",
    gate_contract, obs(raw("s1", **full_fields)))
add("gate-response-flag-absent-tools-open", "5.1", "response flag absent, tool flag true",
    gate_contract, obs(raw("s1", tool_calls_complete=True, **full_fields)))
add("gate-missing-observation", "5.1", "scenario without observation -> all incomplete",
    gate_contract, obs())
add("gate-error-beats-finish", "5.1", "error gate wins over an open finish_reason",
    gate_contract, obs(done("s1", error="rate limited", **full_fields)))
add("obs-finish-length-hides-forbidden", "5.1, 14.5", "forbidden call visible but length gate -> incomplete, exit 2",
    contract(scen("s1", "tools:\n  forbidden: [rm]")),
    obs(raw("s1", finish_reason="length", response_complete=False, tool_calls_complete=False, tool_calls=[call("rm")])))
add("obs-finish-length-hides-max-calls", "5.1, 14.5", "count over max_calls hidden by a closed tool gate",
    contract(scen("s1", "tools:\n  max_calls: 0")),
    obs(raw("s1", finish_reason="length", response_complete=False, tool_calls_complete=False, tool_calls=[call("a"), call("b")])))
add("obs-finish-filter-hides-disallowed", "5.1, 14.5", "disallowed call hidden by content_filter",
    contract(scen("s1", "tools:\n  allowed: [a]")),
    obs(raw("s1", finish_reason="content_filter", response_complete=False, tool_calls_complete=False, tool_calls=[call("evil")])))
add("obs-missing-flag-hides-forbidden", "5.1, 14.5", "absent tool_calls_complete hides a forbidden call",
    contract(scen("s1", "tools:\n  forbidden: [rm]")),
    obs(raw("s1", response="hello", response_complete=True, tool_calls=[call("rm")])))
add("obs-finish-length-hides-excludes", "5.1, 14.5", "forbidden text visible but length gate -> incomplete",
    contract(scen("s1", "response:\n  excludes: [secret]")),
    obs(raw("s1", response="the secret is 42", finish_reason="length", response_complete=False, tool_calls_complete=False)))
add("gate-tool-calls-finish-refusal-sources-incomplete", "5.1",
    "finish_reason tool_calls: refusal and sources are incomplete even when present",
    contract(scen("s1", "refusal: true\nsources:\n  required: [kb]")),
    obs(raw("s1", finish_reason="tool_calls", response_complete=False, tool_calls_complete=True,
            tool_calls=[], refusal=True, sources=["kb"])))

# ---------------------------------------------------------------------------
# §5.2 assertions

add("eval-contains-pass", "5.2", "substring present", SIMPLE_CONTRACT, obs(done("s1", "well hello there")))
add("eval-contains-fail", "5.2", "substring absent -> fail, exit 1", SIMPLE_CONTRACT, obs(done("s1", "goodbye")))
add("eval-contains-case-sensitive", "5.2", "matching is case-sensitive", SIMPLE_CONTRACT, obs(done("s1", "HELLO")))
add("eval-contains-no-unicode-normalisation", "5.2", "composed vs decomposed é do not match",
    contract(scen("s1", "response:\n  contains: [\"caf\\u00e9\"]")), obs(done("s1", "cafe\u0301")))
add("eval-contains-quote-in-message", "5.2", "message uses Python repr of the text (quotes)",
    contract(scen("s1", "response:\n  contains: [\"it's\", 'say \"hi\"']")), obs(done("s1", "it's fine")))
add("eval-message-repr-escapes", "5.2", "messages quote text with Python repr (tab escape, backslash, non-ASCII kept)",
    contract(scen("s1", 'response:\n  contains: ["a\\tb", "back\\\\slash", "caf\u00e9 \u2603", "new\\nline"]')),
    obs(done("s1", "nothing to see")))
add("eval-excludes-pass", "5.2", "forbidden text absent",
    contract(scen("s1", "response:\n  excludes: [secret]")), obs(done("s1", "public info")))
add("eval-excludes-fail", "5.2", "forbidden text present",
    contract(scen("s1", "response:\n  excludes: [secret, token]")), obs(done("s1", "the secret")))
add("eval-response-text-not-observed", "5.2", "contains/excludes incomplete when response absent but gate open",
    contract(scen("s1", "response:\n  contains: [a]\n  excludes: [b]")), obs(raw("s1", response_complete=True)))
add("eval-required-pass-no-args", "5.2", "required tool called", contract(scen("s1", "tools:\n  required: [b]")),
    obs(done("s1", "ok", [call("a"), call("b", {"x": 1})])))
add("eval-required-pass-with-args", "5.2", "required tool with matching arguments -> arguments_matched",
    contract(scen("s1", "tools:\n  required:\n    - {name: b, arguments: {x: 1}}")),
    obs(done("s1", "ok", [call("b", {"x": 2}), call("b", {"x": 1, "y": 0})])))
add("eval-required-not-called", "5.2", "required tool never called",
    contract(scen("s1", "tools:\n  required: [b, {name: c, arguments: {}}]")), obs(done("s1", "ok", [call("a")])))
add("eval-required-non-matching-args", "5.2", "same-name call with other arguments",
    contract(scen("s1", "tools:\n  required:\n    - {name: b, arguments: {x: 1}}")),
    obs(done("s1", "ok", [call("b", {"x": 2})])))
add("eval-required-args-not-observed", "5.2", "same-name call without arguments -> incomplete",
    contract(scen("s1", "tools:\n  required:\n    - {name: b, arguments: {x: 1}}")),
    obs(done("s1", "ok", [call("b"), call("a")])))
add("eval-required-empty-args-needs-object", "3, 6", "arguments: {} requires observed object arguments",
    contract(scen("s1", "tools:\n  required:\n    - {name: b, arguments: {}}\n    - {name: c, arguments: {}}")),
    obs(done("s1", "ok", [call("b", {"q": 1}), call("c")])))
add("eval-required-calls-not-observed", "5.2", "tool_calls absent -> required incomplete",
    contract(scen("s1", "tools:\n  required: [a, {name: b, arguments: {x: 1}}]")), obs(done("s1", "ok")))
add("eval-allowed-pass", "5.2", "all calls inside allowed",
    contract(scen("s1", "tools:\n  allowed: [a, b]")), obs(done("s1", "ok", [call("a"), call("a"), call("b")])))
add("eval-allowed-fail-order-and-repeats", "5.2", "unexpected names in call order with repeats",
    contract(scen("s1", "tools:\n  allowed: [a]")),
    obs(done("s1", "ok", [call("z"), call("a"), call("y"), call("z")])))
add("eval-allowed-null-no-tools-pass", "3, 14.9", "allowed: null = nothing allowed; zero calls pass",
    contract(scen("s1", "tools:\n  allowed: null")), obs(done("s1", "ok", [])))
add("eval-allowed-null-no-tools-fail", "3, 14.9", "allowed: null = nothing allowed; any call fails",
    contract(scen("s1", "tools:\n  allowed: ~")), obs(done("s1", "ok", [call("a")])))
add("eval-forbidden-pass", "5.2", "forbidden tool not called",
    contract(scen("s1", "tools:\n  forbidden: [rm]")), obs(done("s1", "ok", [call("a")])))
add("eval-forbidden-fail-indices", "5.2", "forbidden tool called: all matching indices",
    contract(scen("s1", "tools:\n  forbidden: [rm, mv]")), obs(done("s1", "ok", [call("rm"), call("a"), call("rm")])))
add("eval-forbidden-null-requests-nothing", "3, 14.9", "forbidden: null adds no assertion",
    contract(scen("s1", "tools:\n  forbidden: null\nrefusal: false")), obs(done("s1", "ok", [call("rm")], refusal=False)))
add("eval-exact-sequence-pass-repeats", "5.2", "sequence with repeats matches exactly",
    contract(scen("s1", "tools:\n  exact_sequence: [a, b, a]")), obs(done("s1", "ok", [call("a"), call("b"), call("a")])))
add("eval-exact-sequence-order-fail", "5.2", "same multiset, different order -> fail",
    contract(scen("s1", "tools:\n  exact_sequence: [a, b]")), obs(done("s1", "ok", [call("b"), call("a")])))
add("eval-exact-sequence-length-fail", "5.2", "extra call -> fail",
    contract(scen("s1", "tools:\n  exact_sequence: [a]")), obs(done("s1", "ok", [call("a"), call("a")])))
add("eval-exact-sequence-null-means-no-calls", "3, 14.9", "exact_sequence: null = [] requested: zero calls pass",
    contract(scen("s1", "tools:\n  exact_sequence: null")), obs(done("s1", "ok", None)))
add("eval-exact-sequence-empty-not-observed", "5.2", "exact_sequence: [] with tool_calls absent -> incomplete",
    contract(scen("s1", "tools:\n  exact_sequence: []")), obs(done("s1", "ok")))
add("eval-max-calls-pass", "5.2", "count within limit",
    contract(scen("s1", "tools:\n  max_calls: 2")), obs(done("s1", "ok", [call("a"), call("b")])))
add("eval-max-calls-fail", "5.2", "count over limit",
    contract(scen("s1", "tools:\n  max_calls: 1")), obs(done("s1", "ok", [call("a"), call("b")])))
add("eval-max-calls-zero-pass", "5.2", "max_calls 0 with zero calls",
    contract(scen("s1", "tools:\n  max_calls: 0")), obs(done("s1", "ok", [])))
add("eval-max-calls-not-observed", "5.2", "tool_calls absent -> max_calls incomplete",
    contract(scen("s1", "tools:\n  max_calls: 0")), obs(done("s1", "ok")))
add("eval-refusal-true-pass", "5.2", "refusal true observed true",
    contract(scen("s1", "refusal: true")), obs(done("s1", "No.", refusal=True)))
add("eval-refusal-false-pass", "5.2", "refusal false observed false",
    contract(scen("s1", "refusal: false")), obs(done("s1", "Sure.", refusal=False)))
add("eval-refusal-fail", "5.2", "refusal expected true observed false",
    contract(scen("s1", "refusal: true")), obs(done("s1", "Sure.", refusal=False)))
add("eval-refusal-fail-expected-false", "5.2", "refusal expected false observed true",
    contract(scen("s1", "refusal: false")), obs(done("s1", "No.", refusal=True)))
add("eval-refusal-not-observed", "5.2", "refusal absent -> incomplete",
    contract(scen("s1", "refusal: true")), obs(done("s1", "I won't do that.")))
add("eval-refusal-without-response-text", "5.2", "refusal needs an open gate, not text",
    contract(scen("s1", "refusal: true")), obs(raw("s1", response_complete=True, refusal=True)))
add("eval-sources-pass", "5.2", "required source observed",
    contract(scen("s1", "sources:\n  required: [kb-2]")), obs(done("s1", "ok", sources=["kb-1", {"id": "kb-2"}])))
add("eval-sources-fail", "5.2", "required source absent",
    contract(scen("s1", "sources:\n  required: [kb-9, kb-1]")), obs(done("s1", "ok", sources=["kb-1"])))
add("eval-sources-exact-membership", "5.2", "membership is exact (no substring / case folding)",
    contract(scen("s1", "sources:\n  required: [kb-1, KB-2]")), obs(done("s1", "ok", sources=["kb-10", "kb-2"])))
add("eval-sources-null-offline-fails", "4, 14.3", "offline sources: null = [] -> required sources fail",
    contract(scen("s1", "sources:\n  required: [kb-1]")), obs(done("s1", "ok", sources=None)))
add("eval-sources-not-observed", "5.2", "sources absent -> incomplete",
    contract(scen("s1", "sources:\n  required: [kb-1]")), obs(done("s1", "ok")))
add("eval-sources-without-response-text", "5.2", "sources evaluated without final text",
    contract(scen("s1", "sources:\n  required: [kb-1]")), obs(raw("s1", response_complete=True, sources=["kb-1"])))
add("eval-assertion-report-order", "5.2", "fixed assertion order regardless of YAML key order",
    contract(scen("s1", """\
sources:
  required: [kb]
refusal: false
tools:
  max_calls: 5
  exact_sequence: [a, b]
  forbidden: [x, y]
  allowed: [a, b]
  required: [b, a]
response:
  excludes: [nope]
  contains: [yes-text]
""")), obs(done("s1", "yes-text", [call("a"), call("b")], refusal=False, sources=["kb"])))

# run/scenario status combination, exit codes
add("exit-fail-beats-incomplete", "5.3, 13", "one failing + one missing observation -> fail, exit 1",
    TWO_CONTRACT, obs(done("s1", "nothing")))
add("exit-incomplete-beats-pass", "5.3, 13", "one pass + one incomplete -> incomplete, exit 2",
    TWO_CONTRACT, obs(done("s1", "hello")))
add("exit-fail-within-scenario", "5.3", "fail beats incomplete inside a scenario",
    contract(scen("s1", "response:\n  contains: [hello]\nrefusal: true")), obs(done("s1", "bye")))
add("exit-all-pass-multi", "5.3, 13", "several scenarios all pass -> exit 0",
    TWO_CONTRACT, obs(done("s2", "bye"), done("s1", "hello")))
add("exit-mixed-three-statuses", "5.3, 9", "pass/fail/incomplete scenarios and summary counts",
    three, obs(done("s1", "one"), done("s2", "nope"), raw("s3", response="three")))

big_scens = []
big_obs = []
for i in range(30):
    sid = f"case-{i:02d}"
    kind = i % 6
    if kind == 0:
        big_scens.append(scen(sid, "response:\n  contains: [ready]\n  excludes: [error]"))
        big_obs.append(done(sid, "ready" if i != 12 else "error: not ready"))
    elif kind == 1:
        big_scens.append(scen(sid, "tools:\n  required: [lookup]\n  max_calls: 2", extra="available_tools: [lookup, book]"))
        big_obs.append(done(sid, "ok", [call("lookup", {"q": i})]))
    elif kind == 2:
        big_scens.append(scen(sid, "tools:\n  forbidden: [delete_db]\nrefusal: true"))
        big_obs.append(done(sid, "No.", [], refusal=True) if i != 14 else done(sid, "ok", [call("delete_db")], refusal=False))
    elif kind == 3:
        big_scens.append(scen(sid, "sources:\n  required: [kb-1]"))
        if i != 27:
            big_obs.append(done(sid, "ok", sources=["kb-1"]))
    elif kind == 4:
        big_scens.append(scen(sid, "tools:\n  exact_sequence: [lookup, book]"))
        big_obs.append(done(sid, "ok", [call("lookup"), call("book", {"seat": "1A"})]))
    else:
        big_scens.append(scen(sid, "response:\n  contains: [done]"))
        big_obs.append(raw(sid, response="done", finish_reason="length", response_complete=False,
                           tool_calls_complete=False) if i == 17 else done(sid, "done"))
big_contract = contract(*big_scens, agent=TOOLS_AGENT)
add("eval-thirty-scenarios-max-100", "1, 5.3, 9", "30 mixed scenarios with --max-scenarios 100 (fail overall)",
    big_contract, obs(*big_obs), flag_args("--max-scenarios", "100"))
add("eval-thirty-scenarios-default-limit", "1", "the same 30 scenarios exceed the default limit",
    big_contract, obs(*big_obs))
add("eval-thirty-scenarios-select-passing", "1, 10", "selecting only passing scenarios of the big contract",
    big_contract, obs(*big_obs), flag_args("--scenario", "case-01", "--scenario", "case-00", "--scenario", "case-03"))

# ---------------------------------------------------------------------------
# §6 argument matching

def match_case(name: str, rule: str, expected_args_yaml: str, observed_args: Any, section: str = "6") -> None:
    exp = f"tools:\n  required:\n    - name: t\n      arguments: {expected_args_yaml}"
    add(name, section, rule, contract(scen("s1", exp)), obs(done("s1", "ok", [call("t", observed_args)])))


match_case("match-nested-object-subset", "nested objects match partially",
           "{a: {b: {c: 1}}}", {"a": {"b": {"c": 1, "d": 2}, "e": 3}, "f": 4})
match_case("match-nested-missing-key", "missing nested key fails", "{a: {b: 1}}", {"a": {"c": 1}})
match_case("match-object-vs-scalar", "expected object, observed scalar", "{a: {b: 1}}", {"a": "b"})
match_case("match-array-same", "arrays of same length and order match", "{a: [1, x, true]}", {"a": [1, "x", True]})
match_case("match-array-shorter-observed", "arrays must have the same length", "{a: [1, 2]}", {"a": [1, 2, 3]})
match_case("match-array-order", "array order matters", "{a: [1, 2]}", {"a": [2, 1]})
match_case("match-array-objects-partial", "objects inside arrays match partially",
           "{a: [{id: 1}, {id: 2}]}", {"a": [{"id": 1, "n": "x"}, {"id": 2, "n": "y"}]})
match_case("match-array-vs-object", "expected array, observed object", "{a: [1]}", {"a": {"0": 1}})
match_case("match-int-vs-float", "1 matches 1.0", "{n: 1}", {"n": 1.0})
match_case("match-float-vs-int", "2.0 matches 2", "{n: 2.0}", {"n": 2})
match_case("match-big-int-exact", "10000000000000001 != 10000000000000000 (no float rounding)",
           "{n: 10000000000000001}", {"n": 10000000000000000})
match_case("match-big-int-equal", "big integers equal", "{n: 10000000000000001}", {"n": 10000000000000001})
match_case("match-big-int-vs-float", "int 10000000000000001 vs float 1e16 is not equal",
           "{n: 10000000000000001}", {"n": 1e16})
match_case("match-true-vs-1", "true does not match 1", "{b: true}", {"b": 1})
match_case("match-1-vs-true", "1 does not match true", "{b: 1}", {"b": True})
match_case("match-float-vs-true", "1.0 does not match true", "{b: 1.0}", {"b": True})
match_case("match-0-vs-false", "0 does not match false", "{b: 0}", {"b": False})
match_case("match-null-vs-null", "null matches null", "{x: null}", {"x": None})
match_case("match-null-key-missing", "expected null requires the key to exist", "{x: null}", {})
match_case("match-null-vs-string", "null does not match 'null'", "{x: null}", {"x": "null"})
match_case("match-string-vs-number", "'1' does not match 1", "{x: '1'}", {"x": 1})
match_case("match-string-not-stripped", "observed ' 12A' does not match '12A'", "{seat: 12A}", {"seat": " 12A"})
match_case("match-string-case", "string equality is case-sensitive", "{seat: 12a}", {"seat": "12A"})
match_case("match-empty-expected-object", "arguments: {} matches any object", "{}", {"anything": [1, 2]})
match_case("match-empty-array-vs-empty", "[] matches [] only", "{a: []}", {"a": []})
match_case("match-empty-object-inside", "{} inside matches any object value", "{a: {}}", {"a": {"z": 1}})
match_case("match-unicode-key", "non-ASCII keys and values", "{\"città\": \"Zürich\"}", {"città": "Zürich", "x": 1})

# distinct-call assignment
seat_tools = "tools:\n  required:\n    - t\n    - {name: t, arguments: {seat: 12A}}"
add("match-required-twice-one-call", "6", "required [t, t] with one call -> pass + needs another distinct call",
    contract(scen("s1", "tools:\n  required: [t, t]")), obs(done("s1", "ok", [call("t")])))
add("match-required-twice-two-calls", "6", "required [t, t] with two calls -> both pass",
    contract(scen("s1", "tools:\n  required: [t, t]")), obs(done("s1", "ok", [call("t"), call("u"), call("t")])))
add("eval-required-order-flip-a", "6, 14.6", "[t(no args), t(30C)] -> pass + fail",
    contract(scen("s1", seat_tools)), obs(done("s1", "ok", [call("t"), call("t", {"seat": "30C"})])))
add("eval-required-order-flip-b", "6, 14.6", "[t(30C), t(no args)] -> pass + incomplete",
    contract(scen("s1", seat_tools)), obs(done("s1", "ok", [call("t", {"seat": "30C"}), call("t")])))
add("match-augmenting-path", "6", "[t(12A), t(30C)] -> both pass (greedy first-fit would fail)",
    contract(scen("s1", seat_tools)), obs(done("s1", "ok", [call("t", {"seat": "12A"}), call("t", {"seat": "30C"})])))
add("match-augmenting-path-reversed-requirements", "6", "requirement order reversed still both pass",
    contract(scen("s1", "tools:\n  required:\n    - {name: t, arguments: {seat: 12A}}\n    - t")),
    obs(done("s1", "ok", [call("t", {"seat": "12A"}), call("t", {"seat": "30C"})])))
add("match-duplicate-args-requirement-one-call", "6", "two identical argument requirements, one matching call",
    contract(scen("s1", "tools:\n  required:\n    - {name: t, arguments: {seat: 12A}}\n    - {name: t, arguments: {seat: 12A}}")),
    obs(done("s1", "ok", [call("t", {"seat": "12A", "x": 1})])))
add("match-duplicate-args-requirement-one-call-plus-other", "6",
    "second identical requirement with an unclaimed non-matching call -> non-matching arguments",
    contract(scen("s1", "tools:\n  required:\n    - {name: t, arguments: {seat: 12A}}\n    - {name: t, arguments: {seat: 12A}}")),
    obs(done("s1", "ok", [call("t", {"seat": "12A"}), call("t", {"seat": "9F"})])))
add("match-duplicate-args-requirement-two-calls", "6", "two identical requirements, two matching calls",
    contract(scen("s1", "tools:\n  required:\n    - {name: t, arguments: {seat: 12A}}\n    - {name: t, arguments: {seat: 12A}}")),
    obs(done("s1", "ok", [call("t", {"seat": "12A"}), call("t", {"seat": "12A"})])))
add("match-unclaimed-absent-args-incomplete", "6", "unclaimed same-name call with absent arguments -> incomplete listing unclaimed indices",
    contract(scen("s1", "tools:\n  required:\n    - t\n    - {name: t, arguments: {k: 1}}\n    - u")),
    obs(done("s1", "ok", [call("t"), call("u"), call("t", {"k": 2}), call("t")])))
add("match-candidate-count-order", "6", "requirements visited by ascending candidate count",
    contract(scen("s1", "tools:\n  required:\n    - t\n    - {name: t, arguments: {a: 1}}\n    - {name: t, arguments: {b: 2}}")),
    obs(done("s1", "ok", [call("t", {"a": 1, "b": 2}), call("t", {"a": 1}), call("t", {"c": 3})])))
add("match-three-way-chain", "6", "augmenting path through two re-assignments",
    contract(scen("s1", "tools:\n  required:\n    - {name: t, arguments: {x: 1}}\n    - {name: t, arguments: {y: 1}}\n    - {name: t, arguments: {z: 1}}")),
    obs(done("s1", "ok", [call("t", {"x": 1, "y": 1, "z": 1}), call("t", {"x": 1, "y": 1}), call("t", {"x": 1})])))
add("match-needs-another-call-with-args", "6", "all same-name calls claimed -> needs another distinct call",
    contract(scen("s1", "tools:\n  required:\n    - {name: t, arguments: {a: 1}}\n    - {name: t, arguments: {a: 1}}\n    - {name: t, arguments: {}}")),
    obs(done("s1", "ok", [call("t", {"a": 1}), call("t", {"a": 1})])))


# ---------------------------------------------------------------------------
# writer


def write_bytes(path: Path, data: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(data, bytes):
        path.write_bytes(data)
    elif isinstance(data, str):
        path.write_bytes(data.encode("utf-8"))
    else:
        path.write_bytes((json.dumps(data, indent=2, ensure_ascii=False) + "\n").encode("utf-8"))


def main() -> int:
    CASES_DIR.mkdir(parents=True, exist_ok=True)
    for existing in CASES_DIR.iterdir():
        if existing.is_dir() and existing.name not in CASES:
            shutil.rmtree(existing)
    for name, case in CASES.items():
        case_dir = CASES_DIR / name
        kept = None
        expected = case_dir / "expected.json"
        if expected.exists():
            kept = expected.read_bytes()
        if case_dir.exists():
            shutil.rmtree(case_dir)
        case_dir.mkdir(parents=True)
        if kept is not None:
            expected.write_bytes(kept)
        if case["contract"] is not None:
            write_bytes(case_dir / "contract.yml", case["contract"])
        if case["obs"] is not None:
            write_bytes(case_dir / "observations.json", case["obs"])
        if case["args"] is not None and case["args"] != DEFAULT_ARGS:
            write_bytes(case_dir / "args.json", {"args": case["args"]})
        for rel, data in case["extra"].items():
            write_bytes(case_dir / rel, data)
    index = {
        "cases": {name: {"section": c["section"], "rule": c["rule"]} for name, c in CASES.items()},
        "notes": NOTES,
    }
    INDEX_JSON.write_text(json.dumps(index, indent=2, sort_keys=True, ensure_ascii=False) + "\n",
                          encoding="utf-8")
    print(f"wrote {len(CASES)} cases")
    return 0


NOTES: list[str] = [
    "Order of CLI checks (§1): an all-blank `--scenario` list is rejected while the run "
    "arguments are assembled, i.e. right after the contract and observation files load and "
    "*before* the `--observations`/live-option combination and the numeric limits "
    "(`cli-order-blank-scenario-before-limits`, `cli-order-blank-scenario-before-endpoint-combo`). "
    "Unknown `--scenario` ids are reported after the limits, as the spec says "
    "(`cli-order-unknown-scenario-after-limits`).",
    "Path components (§1): only `..` is really rejected. `.` and empty components are dropped "
    "by path normalisation before the check, so `./observations.json`, `./contract.yml` and "
    "`fixtures//obs.json` are accepted (`file-observations-dot-component`, "
    "`file-contract-dot-prefix`, `file-observations-double-slash`). `sub/../contract.yml` is "
    "rejected as specified.",
    "Value count (§2, §12): a list element counts its index as well as its value, exactly like "
    "a mapping entry counts key and value. The total is therefore always odd "
    "(1 + 2 x number of entries): 19,999 is the largest accepted count, 20,000 cannot occur, "
    "20,001 is rejected (`limit-*-19999-values-ok`, `limit-*-20001-values`).",
    "Anchors (§2): only alias *use* is rejected (`*a`, including merge keys `<<: *a`). An anchor "
    "that is never referenced is accepted (`yaml-anchor-without-alias`); the spec says "
    "\"any anchor/alias rejected\".",
    "YAML 1.1 details (§2): `y`/`n` are plain strings, not booleans (`yaml-y-is-string`); a float "
    "needs a dot and a signed exponent, so `1.0e3` is a string while `1.0e+3` is 1000.0 "
    "(`yaml-float-exponent-with-sign`); `version: 0x1` is a valid version 1 "
    "(`contract-version-hex-one`); `timeout_seconds: 1_0` is 10.",
    "A non-string key at the contract root is reported as an unknown key "
    "(`Unknown behavior contract key: 1`), not as \"keys must be strings\" "
    "(`yaml-non-string-key-top-level`).",
    "`agent.timeout_seconds: null` is an error (`must be a number`), not the default 30 "
    "(`contract-timeout-null`). `available_tools: null` counts as present and empty, like `[]` "
    "(`contract-available-tools-null-restricts`).",
    "Field order within one item (not stated in the spec): contract scenarios validate id, prompt, "
    "system_prompt, available_tools, then expect (response, tools, sources, refusal); a required "
    "item's `arguments` are validated before its `name`; observation scenarios validate "
    "response, response_complete, finish_reason (+ its response conflict), tool_calls_complete "
    "(+ its conflict), tool_calls, refusal, sources, error and the `id` last "
    "(`obs-order-*`, `contract-required-arguments-checked-before-name`).",
    "YAML and JSON syntax errors embed the PyYAML / Python `json` messages verbatim, including "
    "`in \"<unicode string>\", line L, column C` snippets (`yaml-syntax-error`, "
    "`yaml-multiple-documents`, `yaml-tab-indentation`, `yaml-python-tag-rejected`, "
    "`obs-invalid-json`, `obs-bom`, ...).",
    "Assertion messages format texts and lists with Python `repr()`: `'x'` normally, `\"it's\"` "
    "when the text contains a single quote, escapes such as `\\t`/`\\n`/`\\\\`, non-ASCII kept; "
    "lists as `['z', 'y', 'z']` (`eval-contains-quote-in-message`, `eval-message-repr-escapes`).",
    "`--observations ''` is falsy and selects *live* mode (`cli-observations-empty-string-is-live`: "
    "`agent.endpoint is required for live tests ...`, no network I/O).",
    "Not in the corpus because it is timing-dependent: offline runs also enforce `--max-seconds` as "
    "a run budget. With `--max-seconds 0.001` skylos failed with `agent behavior run exceeded its "
    "budget: harness time budget exceeded: 0.001s>0.001s` (exit 2).",
    "The spec's phrase \"exactly 20,000 values\" cannot be tested (see value count above); "
    "`--output` error payloads also carry `output_error`, which expected.json does not record "
    "(`exit-output-outside-project-after-fail` records only `error`).",
]

if __name__ == "__main__":
    raise SystemExit(main())
