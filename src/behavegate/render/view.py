"""The pages of ``behavegate view``: the list of runs, one run, two runs compared.

Rendered as the HTML report is (render/html.py): jinja2 with autoescape on, every printed
value through :func:`html.inert` (control, bidi and line-separator characters as escapes),
agent text cut by :func:`html.clip`, and a Content Security Policy that allows only the
page's own stylesheet (by its hash): no script at all, nothing fetched, no form. The
stylesheet is the HTML report's, with the few rules the comparison adds.
"""

from __future__ import annotations

import base64
import hashlib
import itertools
from collections.abc import Mapping
from typing import Any

from jinja2 import Environment, PackageLoader, StrictUndefined, select_autoescape

from behavegate.limits import HTML_TEXT_CHARS, HTML_VALUE_CHARS
from behavegate.limits import VIEW_EVIDENCE_SCENARIOS as EVIDENCE_SHOWN
from behavegate.render.html import clip, inert
from behavegate.report.comparison import Comparison
from behavegate.report.run_diff import RunDiff, attempts_of, side, suite_findings
from behavegate.report.runs import RunEntry, RunListing


def _environment() -> Environment:
    env = Environment(
        loader=PackageLoader("behavegate.render", "templates"),
        autoescape=select_autoescape(enabled_extensions=("html", "html.j2"), default_for_string=True, default=True),
        undefined=StrictUndefined,
        finalize=inert,
    )
    env.filters["clip"] = lambda text, limit=HTML_VALUE_CHARS: clip(str(text), limit)
    return env


def stylesheet() -> str:
    env = _environment()
    assert env.loader is not None
    return "".join(env.loader.get_source(env, name)[0] for name in ("html_report.css", "view.css"))


def policy(header: bool = False) -> str:
    """The page's CSP: its stylesheet, nothing else. The server sends it as a header too, with
    ``frame-ancestors`` (which a ``<meta>`` policy may not carry: the browser would complain)."""
    digest = "sha256-" + base64.b64encode(hashlib.sha256(stylesheet().encode()).digest()).decode()
    framing = "; frame-ancestors 'none'" if header else ""
    return f"default-src 'none'; style-src '{digest}'; base-uri 'none'; form-action 'none'{framing}"


def _page(page: str, title: str, served: bool, **values: Any) -> str:
    return (
        _environment()
        .get_template("view.html.j2")
        .render(
            page=page,
            title=title,
            served=served,
            css=stylesheet(),
            policy=policy(),
            text_chars=HTML_TEXT_CHARS,
            evidence_limit=EVIDENCE_SHOWN,
            **values,
        )
    )


def list_page(listing: RunListing, runs_dir: str) -> str:
    readable = [entry for entry in listing.entries if entry.readable]
    before = {entry.id: older.id for entry, older in itertools.pairwise(readable)}  # newest first
    runs = [{**_entry(entry), "previous": before.get(entry.id)} for entry in listing.entries]
    return _page(
        "list", "behavegate runs", True, runs=runs, runs_dir=runs_dir, not_listed=listing.not_listed, problem=listing.problem
    )


def run_page(entry: RunEntry, report: Mapping[str, Any], served: bool = True) -> str:
    scenarios: list[dict[str, Any]] = []
    for scenario in report["scenarios"]:
        failing = {
            str(v["assertion"]): {"assertion": str(v["assertion"]), "status": str(v["status"]), "message": str(v["message"])}
            for attempt in attempts_of(scenario)
            for v in attempt["assertions"]
            if v["status"] != "pass"
        }
        scenarios.append({"id": str(scenario["id"]), "side": side(scenario), "failing": list(failing.values())})
    scenarios.sort(key=lambda s: {"fail": 0, "incomplete": 1}.get(str(s["side"].status), 2))
    shown = scenarios[:EVIDENCE_SHOWN]
    return _page(
        "run", f"behavegate run {entry.id}", served, run=_entry(entry), scenarios=shown, not_shown=len(scenarios) - len(shown)
    )


def compare_page(diff: RunDiff, a: RunEntry, b: RunEntry, served: bool = True) -> str:
    comparison = diff.comparison
    return _page(
        "compare",
        f"behavegate: {a.id} → {b.id}",
        served,
        diff=diff,
        a=_entry(a),
        b=_entry(b),
        status=_status(comparison),
        changed=diff.changed,
        regressions=len(comparison.regressions),
        suite=suite_findings(diff),
    )


def error_page(title: str, message: str) -> str:
    return _page("error", title, True, message=message)


def _status(comparison: Comparison) -> str:
    return comparison.status


def _entry(entry: RunEntry) -> dict[str, Any]:
    return {
        "id": entry.id,
        "status": entry.status,
        "started_at": entry.started_at,
        "contract": entry.contract,
        "mode": entry.mode,
        "scenarios": entry.scenarios,
        "checks": entry.checks,
        "readable": entry.readable,
        "problem": None if entry.problem is None else clip(entry.problem, 300),
    }
