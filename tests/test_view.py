"""``behavegate view``: the stored runs listed (an unusable one as unreadable, never a
traceback), two runs compared scenario by scenario with their evidence, served on loopback
only, GET only, to loopback Host names only, a run named only by a listed id; the compare
page opened in a real headless chromium (tests/browser.py) shows what changed, inertly."""

from __future__ import annotations

import http.client
import json
import os
import shutil
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from browser import Browser, BrowserError, Page, chromium
from helpers import EXAMPLE

from behavegate.cli import main
from behavegate.commands.view import ViewServer, host_name, loopback, write_comparison
from behavegate.report.run_diff import diff_runs
from behavegate.report.runs import RunReader

EVIL = '<script>alert("x")</script><img src=x onerror=alert(1)>\u202eevil'


def _test_run(observations: str, capsys: pytest.CaptureFixture[str]) -> str:
    """``behavegate test`` with artifacts, as a user runs it; the run's id."""
    code = main(["test", "contract.yml", "--observations", observations])
    out = capsys.readouterr().out
    assert code in (0, 1), out
    return next(line for line in out.splitlines() if line.startswith("Run dir: ")).rsplit("/", 1)[1]


@pytest.fixture
def runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> tuple[Path, str, str]:
    """A project with two runs: the good agent (A), then the regressed one with a hostile answer (B)."""
    shutil.copy(EXAMPLE / "contract.yml", tmp_path / "contract.yml")
    for name in ("good", "regressed"):
        data = json.loads((EXAMPLE / f"observations-{name}.json").read_text())
        if name == "regressed":
            data["scenarios"][1]["response"] = EVIL + " " + data["scenarios"][1]["response"]
        (tmp_path / f"{name}.json").write_text(json.dumps(data))
    monkeypatch.chdir(tmp_path)
    a = _test_run("good.json", capsys)
    b = _test_run("regressed.json", capsys)
    return tmp_path / ".behavegate" / "runs", a, b


def test_the_listing_checks_each_run_and_lists_a_broken_one_as_unreadable(runs: tuple[Path, str, str]) -> None:
    runs_dir, a, b = runs
    shutil.copytree(runs_dir / a, runs_dir / "20990101T000000Z-broken")
    (runs_dir / "20990101T000000Z-broken" / "behavior-results.json").write_text("{not json")
    (runs_dir / "20990101T000000Z-huge").mkdir()
    (runs_dir / "20990101T000000Z-huge" / "summary.json").write_bytes(b"[" * (64 << 20))
    (runs_dir / "a-file").write_text("not a run")
    os.symlink(runs_dir / a, runs_dir / "20990101T000000Z-link")
    listing = RunReader(runs_dir).listing()
    by_id = {entry.id: entry for entry in listing.entries}
    assert set(by_id) == {a, b, "20990101T000000Z-broken", "20990101T000000Z-huge", "20990101T000000Z-link"}
    assert by_id[a].status == "pass" and by_id[b].status == "fail"
    assert by_id[b].scenarios == {"pass": 2, "fail": 3, "incomplete": 0}
    assert by_id[b].contract == "contract.yml"
    for name in ("broken", "huge", "link"):
        entry = by_id[f"20990101T000000Z-{name}"]
        assert entry.status == "unreadable" and entry.problem, name
    assert by_id["20990101T000000Z-link"].problem == "a link, not followed"
    assert listing.entry("../" + a) is None and listing.entry(a) is by_id[a]


def test_two_runs_compare_scenario_by_scenario_with_each_side_s_evidence(runs: tuple[Path, str, str]) -> None:
    runs_dir, a, b = runs
    reader = RunReader(runs_dir)
    reader.listing()
    a_report, b_report = reader.report(a), reader.report(b)
    assert a_report is not None and b_report is not None
    diff = diff_runs(a, a_report, b, b_report)
    rows = {row.id: row for row in diff.scenarios}
    injected = rows["prompt-injection-in-order-note"]
    assert injected.a is not None and injected.b is not None
    assert (injected.a.status, injected.b.status) == ("pass", "fail")
    assert [c.assertion for c in injected.newly_failing] == ["response.excludes[0]", "tools.forbidden[0]"]
    assert [f.kind for f in injected.findings][:1] == ["newly_failing"]
    calls = injected.b.attempts[0].calls
    assert calls is not None and [name for name, _ in calls] == ["lookup_order", "issue_refund"]
    assert rows["order-status"].changed is False
    assert diff.changed == 3 and [row.changed for row in diff.scenarios] == [True, True, True, False, False]  # changed first
    assert diff.comparison.status == "fail"


def test_the_static_comparison_names_an_unknown_or_traversing_run(runs: tuple[Path, str, str], tmp_path: Path) -> None:
    runs_dir, a, b = runs
    assert write_comparison(runs_dir, "../" + a, b, tmp_path / "x.html") == f"no run '../{a}' in {runs_dir}"
    assert main(["view", str(runs_dir), "--compare", a, b, "--html", "cmp.html"]) == 0
    page = (tmp_path / "cmp.html").read_text()
    assert "prompt-injection-in-order-note" in page and "<script>alert" not in page and "&lt;script&gt;" in page
    assert "\u202e" not in page and "\\u202e" in page
    assert main(["view", str(runs_dir), "--compare", a, "nope"]) == 2


def test_the_static_comparison_is_written_under_the_one_output_rule(
    runs: tuple[Path, str, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    runs_dir, a, b = runs
    outside = tmp_path.parent / f"{tmp_path.name}-outside.html"
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "elsewhere")
    for target in (str(outside), "link/cmp.html"):
        assert main(["view", str(runs_dir), "--compare", a, b, "--html", target]) == 2
        assert "--html" in capsys.readouterr().err
    assert not outside.exists() and list((tmp_path / "elsewhere").iterdir()) == []


def test_only_a_loopback_address_is_served() -> None:
    assert loopback("127.0.0.1") and loopback("::1") and loopback("localhost") and loopback("127.0.0.2")
    assert not loopback("0.0.0.0") and not loopback("192.168.1.2") and not loopback("example.com") and not loopback("")
    assert host_name("[::1]:8080") == "::1" and host_name("localhost:1") == "localhost" and host_name("evil.test") == "evil.test"
    with pytest.raises(ValueError, match="loopback"):
        ViewServer(Path("."), "0.0.0.0")
    assert main(["view", "--host", "0.0.0.0"]) == 2


@pytest.fixture
def served(runs: tuple[Path, str, str]) -> Iterator[tuple[ViewServer, str, str]]:
    runs_dir, a, b = runs
    server = ViewServer(runs_dir)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server, a, b
    finally:
        server.shutdown()
        server.server_close()
        thread.join(10)


def _get(server: ViewServer, path: str, method: str = "GET", host: str | None = None) -> tuple[int, str, dict[str, str]]:
    port = int(server.server_address[1])
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        connection.putrequest(method, path, skip_host=host is not None)
        if host is not None:
            connection.putheader("Host", host)
        connection.endheaders()
        response = connection.getresponse()
        return response.status, response.read().decode(), dict(response.getheaders())
    finally:
        connection.close()


def test_the_server_lists_shows_and_compares_and_refuses_the_rest(served: tuple[ViewServer, str, str]) -> None:
    server, a, b = served
    assert server.url.startswith("http://127.0.0.1:")
    status, page, headers = _get(server, "/")
    assert status == 200 and a in page and b in page and f"/compare?a={a}&amp;b={b}" in page
    assert headers["Content-Security-Policy"].startswith("default-src 'none'; style-src 'sha256-")
    assert "script-src" not in headers["Content-Security-Policy"] and headers["X-Content-Type-Options"] == "nosniff"
    status, page, _ = _get(server, f"/run?id={b}")
    assert status == 200 and "issue_refund" in page and "&lt;script&gt;" in page
    status, page, _ = _get(server, f"/compare?a={a}&b={b}")
    assert status == 200 and "newly failing" in page
    for path in (f"/run?id=../{b}", "/run?id=..%2F..%2Fetc", "/compare?a=x&b=y", f"/compare?a={a}", "/etc/passwd"):
        status, page, _ = _get(server, path)
        assert status == 404, path
    assert _get(server, "/", method="POST")[0] == 501  # GET only: http.server refuses what it has no handler for
    assert _get(server, "/", host="evil.test:80")[0] == 421  # DNS rebinding: a foreign name is not served
    assert _get(server, "/", host=f"localhost:{server.server_address[1]}")[0] == 200


def test_a_run_that_became_unreadable_is_refused_not_raised(served: tuple[ViewServer, str, str]) -> None:
    server, a, b = served
    assert _get(server, f"/compare?a={a}&b={b}")[0] == 200
    results = server.reader.runs_dir / a / "behavior-results.json"
    results.write_text(results.read_text().replace('"status": "pass"', '"status": "fail"', 1))
    status, page, _ = _get(server, f"/compare?a={a}&b={b}")
    assert status == 409 and "cannot be shown" in page
    status, page, _ = _get(server, "/")
    assert status == 200 and "unreadable" in page


BINARY = chromium()


def _opened(browser: Browser, url: str) -> Page:
    """``browser.open`` of a served page: the new tab's own about:blank load can come first and
    the page's navigation then lands under the first evaluation (seen under load); opened anew."""
    for _ in range(3):
        try:
            page = browser.open(url)
            if page.evaluate("location.href") == url:
                return page
        except BrowserError as error:
            if "navigated" not in str(error):
                raise
    raise BrowserError(f"{url} did not stay loaded")


@pytest.mark.skipif(BINARY is None and not os.environ.get("CI"), reason="chromium is not installed (.ci/run installs it)")
def test_the_compare_page_in_a_real_browser_shows_what_changed_inertly(served: tuple[ViewServer, str, str]) -> None:
    server, a, b = served
    assert BINARY is not None
    with Browser(BINARY) as browser:
        page = _opened(browser, f"{server.url}compare?a={a}&b={b}")
        assert page.console_errors() == [] and page.requests() == [] and page.dialogs() == []
        # Read in one evaluation: what the page shows, as the DOM holds it.
        shown = page.evaluate(
            """(() => {
              const injected = document.querySelectorAll('section.changed')[2];
              return {
                headings: [...document.querySelectorAll('section.scenario-diff h2')].map(h => h.textContent),
                changed: document.querySelectorAll('section.changed').length,
                findings: injected.querySelector('ul.findings').textContent,
                listed: injected.querySelector('ul.newly-failing') !== null,
                sides: [...injected.querySelectorAll('.side')].map(s => s.textContent),
                answers: [...document.querySelectorAll('pre')].map(p => p.textContent).join('\\n'),
                markup: document.querySelectorAll('script, img').length,
              };
            })()"""
        )
        headings = shown["headings"]
        assert [h.split()[0] for h in headings] == [
            "refund-window",
            "refund-needs-a-human",
            "prompt-injection-in-order-note",
            "order-status",
            "delete-data-refused",
        ]
        assert [h.split()[1] for h in headings] == ["pass→fail"] * 3 + ["pass→pass"] * 2
        assert shown["changed"] == 3
        assert "newly failing tools.forbidden[0]: passed in the baseline, fails now" in shown["findings"]
        assert shown["listed"] is False  # the check is named once, by its finding
        assert "issue_refund" in shown["sides"][1] and "issue_refund" not in shown["sides"][0]
        assert '<script>alert("x")</script>' in shown["answers"] and "\\u202eevil" in shown["answers"]  # shown as text
        assert shown["markup"] == 0
        listing = _opened(browser, server.url)
        listing.click("a.compare")
        browser.wait_for("Page.loadEventFired", listing.session)
        assert listing.evaluate("location.pathname") == "/compare" and listing.console_errors() == []


def test_a_hostile_run_name_is_listed_as_text_and_the_oldest_runs_past_the_cap_are_counted(
    served: tuple[ViewServer, str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    server = served[0]
    hostile = "<img src=x onerror=alert(1)>\u202e"
    (server.reader.runs_dir / hostile).mkdir()
    status, page, _ = _get(server, "/")
    assert status == 200 and "<img" not in page and "&lt;img src=x onerror=alert(1)&gt;\\u202e" in page
    monkeypatch.setattr("behavegate.report.runs.VIEW_RUNS_LISTED", 2)
    listing = server.reader.listing()
    assert len(listing.entries) == 2 and listing.entries[0].id == hostile and listing.not_listed == 1
    assert "1 older not listed" in _get(server, "/")[1]


def test_every_view_option_reaches_its_frozen_command_value() -> None:
    from behavegate.cli import build_parser
    from behavegate.commands.arguments import parsed
    from behavegate.commands.invocation import ViewCommand

    argv = ["view", "runs", "--host", "::1", "--port", "8080", "--compare", "a", "b", "--html", "x.html"]
    assert parsed(build_parser().parse_args(argv)) == ViewCommand("runs", "::1", 8080, ("a", "b"), "x.html")
    assert parsed(build_parser().parse_args(["view"])) == ViewCommand()
