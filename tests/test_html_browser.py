"""The HTML report in a real browser: Debian's chromium, headless, over the DevTools
protocol (tests/browser.py). The example's report renders with no console error and
no network request; the hostile fixture's script tags, event handlers, javascript:
links and megabyte strings stay text: no dialog opens, no script of theirs runs.

Skipped only where chromium is not installed; .ci/run installs it, so CI runs these."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from browser import Browser, Page, chromium
from helpers import EXAMPLE, TEMPLATE_TAGS, huge_report, report, showcase
from hostile_report import EVIL, everywhere, hostile_report, tainted

from behavegate.render import html
from behavegate.render.suite import html as suite_html
from behavegate.report.result import Report
from behavegate.report.suite import SuiteRun

BINARY = chromium()
# Skipped on a developer's machine without chromium; in CI (CI=true) a missing browser is a failure.
pytestmark = pytest.mark.skipif(
    BINARY is None and not os.environ.get("CI"),
    reason="chromium is not installed (apt-get install chromium; .ci/run installs it)",
)


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    assert BINARY is not None, "CI must run the browser tests: .ci/run installs chromium"
    with Browser(BINARY) as opened:
        yield opened


def example() -> Report:
    """The refund agent's version-2 contract judged from its regressed evidence."""
    return report((EXAMPLE / "contract-v2.yml").read_text(), _observations())


def _observations() -> str:
    import json

    data = json.loads((EXAMPLE / "observations-regressed.json").read_text())
    data["scenarios"] = [s for s in data["scenarios"] if s["id"] != "delete-data-refused"]
    return json.dumps(data)


def opened(browser: Browser, tmp_path: Path, made: Report) -> Page:
    path = tmp_path / "report.html"
    path.write_text(html.render(made), encoding="utf-8")
    return browser.open(path.as_uri())


def test_the_example_report_renders_with_no_console_error_and_no_request(browser: Browser, tmp_path: Path) -> None:
    page = opened(browser, tmp_path, example())
    assert page.console_errors() == []
    assert page.requests() == []
    assert page.evaluate("document.querySelectorAll('details.scenario').length") == 4
    assert page.evaluate("document.getElementById('filters').hidden") is False  # the filter script ran (allowed by its hash)


def test_the_filters_hide_and_show_scenarios(browser: Browser, tmp_path: Path) -> None:
    page = opened(browser, tmp_path, example())
    shown = "document.querySelectorAll('details.scenario:not([hidden])').length"
    assert page.evaluate(shown) == 4
    page.click("input[value=incomplete]")
    remaining = page.evaluate(shown)
    assert (
        remaining < 4
        and page.evaluate("document.getElementById('filter-count').textContent") == f"{remaining} of 4 scenarios shown"
    )
    page.evaluate("const t = document.getElementById('filter-tag'); t.value = 'safety'; t.dispatchEvent(new Event('change'))")
    assert page.evaluate(
        "[...document.querySelectorAll('details.scenario:not([hidden])')].every(d => d.dataset.tags.includes('safety'))"
    )
    page.evaluate("const q = document.getElementById('filter-text'); q.value = 'no-such-id'; q.dispatchEvent(new Event('input'))")
    assert page.evaluate(shown) == 0


def test_hostile_agent_text_renders_inert(browser: Browser, tmp_path: Path) -> None:
    page = opened(browser, tmp_path, hostile_report())
    page.evaluate("document.querySelectorAll('details').forEach(d => d.open = true)")  # everything laid out
    page.settle()
    assert page.dialogs() == []
    assert page.evaluate("typeof window.__pwned") == "undefined"
    assert page.evaluate("document.scripts.length") == 1
    assert (
        page.evaluate("document.querySelectorAll('a, img, iframe, link, object, embed, form, style:not(head > style)').length")
        == 0
    )
    assert page.evaluate("document.querySelectorAll('meta[http-equiv=refresh]').length") == 0
    assert (
        page.evaluate("[...document.querySelectorAll('*')].some(e => [...e.attributes].some(a => a.name.startsWith('on')))")
        is False
    )
    body = page.evaluate("document.body.innerText")
    assert "<script>window.__pwned = 1; alert(1)</script>" in body and "javascript:alert(7)" in body
    assert page.requests() == [] and page.console_errors() == []
    assert page.evaluate("location.href") == page.url  # no refresh or navigation happened


def test_hostile_text_in_every_field_stays_text_in_chromium(browser: Browser, tmp_path: Path) -> None:
    """EVIL in every text of a judged run and of a baseline comparison (tests/hostile_report.py):
    the DOM chromium built holds only the template's elements, no handler, no comment, no
    script but the page's own; nothing ran, opened or was fetched, and EVIL reads as text."""
    path = tmp_path / "suite.html"
    path.write_text(suite_html(SuiteRun((everywhere(), tainted(showcase())))), encoding="utf-8")
    page = browser.open(path.as_uri())
    page.evaluate("document.querySelectorAll('details').forEach(d => d.open = true)")
    page.evaluate("document.querySelectorAll('*').forEach(e => e.dispatchEvent(new MouseEvent('mouseover')))")
    page.settle()
    assert page.dialogs() == [] and page.evaluate("typeof window.__pwned") == "undefined"
    assert set(page.evaluate("[...new Set([...document.querySelectorAll('*')].map(e => e.localName))]")) <= TEMPLATE_TAGS
    assert page.evaluate("document.scripts.length") == 1
    assert (
        page.evaluate("[...document.querySelectorAll('*')].some(e => [...e.attributes].some(a => a.name.startsWith('on')))")
        is False
    )
    comments = "(() => { const w = document.createTreeWalker(document, NodeFilter.SHOW_COMMENT); let n = 0; while (w.nextNode()) n++; return n; })()"
    assert page.evaluate(comments) == 0
    body = page.evaluate("document.body.innerText")
    assert EVIL.replace("\u2028", "\\u2028").replace("\u2029", "\\u2029").replace("\u202e", "\\u202e") in body
    assert not any(char in body for char in "\u2028\u2029\u202e")
    assert page.requests() == [] and page.console_errors() == [] and page.evaluate("location.href") == page.url
    # the filter script reads the hostile ids and tags as data: filtering by them runs nothing
    total = page.evaluate("document.querySelectorAll('details.scenario').length")
    shown = "document.querySelectorAll('details.scenario:not([hidden])').length"
    query = json.dumps('"><svg onload')
    page.evaluate(
        f"{{ const q = document.getElementById('filter-text'); q.value = {query}; q.dispatchEvent(new Event('input')); }}"
    )
    assert page.evaluate(shown) == total  # every id carries it
    page.evaluate(
        "{ const t = document.getElementById('filter-tag'); t.value = t.options[1].value; t.dispatchEvent(new Event('change')); }"
    )
    assert 0 < page.evaluate(shown) < total
    page.settle()
    assert page.dialogs() == [] and page.evaluate("typeof window.__pwned") == "undefined" and page.console_errors() == []


def test_light_and_dark_mode_follow_the_system(browser: Browser, tmp_path: Path) -> None:
    page = opened(browser, tmp_path, example())
    background = "getComputedStyle(document.body).backgroundColor"
    page.emulate_dark(False)
    light = page.evaluate(background)
    page.emulate_dark(True)
    dark = page.evaluate(background)
    assert light == "rgb(255, 255, 255)" and dark != light
    page.emulate_dark(False)


@pytest.mark.slow
def test_a_5000_scenario_report_opens_and_filters(browser: Browser, tmp_path: Path) -> None:
    page = opened(browser, tmp_path, huge_report(5_000))
    assert page.console_errors() == [] and page.requests() == []
    assert page.evaluate("document.querySelectorAll('details.scenario').length") == 5_000
    assert page.evaluate("document.querySelectorAll('details.scenario[open]').length") == 0
    page.evaluate(
        "const q = document.getElementById('filter-text'); q.value = 'scenario-04999'; q.dispatchEvent(new Event('input'))"
    )
    assert page.evaluate("document.getElementById('filter-count').textContent") == "1 of 5000 scenarios shown"
