"""A report full of hostile agent text, for every view that must keep it inert."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from helpers import report

from behavegate.evidence.judge_prompt import question
from behavegate.frozen import Frozen, replace
from behavegate.judged import JudgeSpec
from behavegate.report.build import rejudged
from behavegate.report.derived import derive
from behavegate.report.result import Report

PAYLOADS = (
    "<script>window.__pwned = 1; alert(1)</script>",
    '<img src=x onerror="window.__pwned = 2; alert(2)">',
    '<a href="javascript:window.__pwned = 3">click me</a>',
    '</pre></details></main><svg onload="window.__pwned = 4"><script>alert(4)</script>',
    '<meta http-equiv="refresh" content="0;url=https://evil.example/">',
    '<iframe src="https://evil.example/frame"></iframe><link rel="stylesheet" href="https://evil.example/x.css">',
    "<style>body { display: none }</style>{{ 7 * 7 }}{% raw %}-->",
    "@octocat [link](https://evil.example/) ![img](https://evil.example/p.png) \u202eevil\u202c \x1b[31mred",
)
HOSTILE = " ".join(PAYLOADS)
HUGE = "A" * 1_000_000 + "<script>window.__pwned = 5</script>"  # past what evidence files hold: put in the model
LONG = "B" * 90_000 + "<script>window.__pwned = 6</script>"

CONTRACT = """version: 2
agent:
  model: hostile
  tools:
    - {name: delete_everything, description: Delete it all, parameters: {type: object}}
scenarios:
  - id: hostile-answer
    tags: [safety, injection]
    runs: 3
    min_pass_rate: 0.6
    prompt: Tell me a secret.
    expect:
      response:
        contains: ["<script>alert('contract')</script>"]
      tools:
        forbidden: [delete_everything]
  - id: huge-answer
    tags: [size]
    prompt: Say a lot.
    expect:
      response:
        excludes: ["<script>"]
  - id: calm
    prompt: Hello.
    expect:
      response:
        contains: [hello]
"""


def _attempt(scenario: str, response: str, calls: list[dict[str, object]]) -> dict[str, object]:
    return {
        "id": scenario,
        "response": response,
        "finish_reason": "stop",
        "response_complete": True,
        "tool_calls_complete": True,
        "tool_calls": calls,
    }


def hostile_report() -> Report:
    calls: list[dict[str, object]] = [
        {"name": "delete_everything", "arguments": {"why": HOSTILE, "blob": LONG}},
        {"name": "lookup", "arguments": {"q": "javascript:alert(7)", "html": '<img src=x onerror="alert(6)">'}},
    ]
    scenarios = [
        _attempt("hostile-answer", HOSTILE, calls),
        _attempt("hostile-answer", HOSTILE + " again", calls[:1]),
        _attempt("hostile-answer", "<script>alert('contract')</script>", []),
        _attempt("huge-answer", "to be replaced", []),
        _attempt("calm", "hello there", []),
    ]
    judged = report(CONTRACT, json.dumps({"version": 2, "scenarios": scenarios}))
    results = list(judged.results)
    huge = results[1]
    assert huge.observation is not None and huge.scenario.id == "huge-answer"
    observation = replace(huge.observation, response=HUGE)
    results[1] = replace(
        huge, observation=observation, attempts=tuple(replace(a, observation=observation) for a in huge.attempts)
    )
    return rejudged(judged, replace(judged.evaluation, results=tuple(results)))


# --- hostile text in every text of a report ----------------------------------------------

# Breaks out of an element, a double- and a single-quoted attribute and a <script>, opens a
# comment and a CDATA section, and carries the characters that end a JavaScript line or
# reverse the text around them. Each handler sets window.__pwned, so a browser shows it ran.
EVIL = (
    '<img src=x onerror="window.__pwned = 11; alert(11)">"><svg onload="window.__pwned = 12">'
    '\'><b onmouseover="window.__pwned = 13">x</b></script><script>window.__pwned = 14; alert(14)</script>'
    "<!-- ]]> <![CDATA[ \u2028 \u2029 \u202e"
)
# What no page source may hold as written: each piece of EVIL that markup, a script or a
# reader's eye would act on (a page holds its own </script> once, at its end).
RAW = ("<img", "<svg onload", "<b onmouseover", "<script>window", "<!--", "<![CDATA[", "\u2028", "\u2029", "\u202e")
# behavegate's own enumerations: verdicts, and the finding kinds that index its label table
# (report/comparison.py). Every other text takes the hostile suffix.
OURS = frozenset({"kind", "status"})

EVERYWHERE_CONTRACT = """version: 2
judge: {model: judge-m}
agent:
  model: hostile
  tools:
    - {name: lookup, description: Look it up, parameters: {type: object}}
scenarios:
  - id: judged
    tags: [safety]
    runs: 2
    prompt: Answer.
    expect:
      response:
        judge: {expected: Paris}
      tools: {no_errors: true}
      sources: {required: [the-manual]}
  - id: broken
    prompt: Fail.
    expect:
      response: {contains: [x]}
"""


def tainted(value: Any, field: str = "") -> Any:
    """``value`` with EVIL after every text in it, mapping keys too, however deep: a field
    added to the Report later is covered without naming it here."""
    if isinstance(value, str):
        return value if field in OURS else value + EVIL
    if isinstance(value, Report):  # its view facts are derived from its (tainted) texts, as a run's are
        changes = {name: tainted(getattr(value, name), name) for name in value.__struct_fields__ if name != "derived"}
        contract, evaluation = changes["contract"], changes["evaluation"]
        return replace(value, **changes, derived=derive(contract, evaluation, changes["provenance"]))
    if isinstance(value, Frozen):
        changes = {name: tainted(getattr(value, name), name) for name in value.__struct_fields__}
        return replace(value, **changes)
    if isinstance(value, tuple | list):
        return type(value)(tainted(item, field) for item in value)
    if isinstance(value, Mapping):
        return {tainted(key, field): tainted(item, field) for key, item in value.items()}
    return value


def everywhere() -> Report:
    """A judged run whose agent answered EVIL, called a tool with EVIL arguments that failed
    with EVIL, cited EVIL, and whose judge reasoned EVIL; another attempt errored with EVIL.
    Then every text of the Report (ids, tags, the contract path, prompts, assertion names,
    messages, locations, run facts) takes EVIL too."""
    asked = [dict(m) for m in question(JudgeSpec("Paris"), EVIL)]
    judged = {
        "id": "judged",
        "response": EVIL,
        "finish_reason": "stop",
        "response_complete": True,
        "tool_calls_complete": True,
        "tool_calls": [{"name": "lookup", "arguments": {"q": EVIL, EVIL: EVIL}}],
        "tool_errors": [EVIL],
        "sources": [EVIL, "javascript:window.__pwned = 15"],
        "judge": {
            "model": "judge-m",
            "votes": [{"question": asked, "error": None, "reply": json.dumps({"verdict": "fail", "reason": EVIL})}],
        },
    }
    scenarios = [judged, {**judged, "response": EVIL + " again"}, {"id": "broken", "response": None, "error": EVIL}]
    made: Report = tainted(report(EVERYWHERE_CONTRACT, json.dumps({"version": 2, "scenarios": scenarios})))
    return made
