"""``--html``: one self-contained file, rendered from the Report with autoescape on:
golden files, what a parser finds in it (no markup from agent text, nothing
fetched, a CSP that allows only its own style and script), baselines, scores
and a 5,000-scenario run. tests/test_html_browser.py opens it in chromium."""

from __future__ import annotations

import base64
import hashlib
import json
import re
from html.parser import HTMLParser
from pathlib import Path

import pytest
from conftest import Golden
from helpers import EXAMPLE, TEMPLATE_TAGS, example_report, golden_queries_report, huge_report, report, showcase, with_extras
from hostile_report import EVIL, HUGE, RAW, everywhere, hostile_report, tainted

from behavegate.cli import main
from behavegate.render import html
from behavegate.render.suite import html as suite_html
from behavegate.report.suite import SuiteRun


class Elements(HTMLParser):
    """Every start tag with its attributes, and the text of <style> and <script>."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.raw: dict[str, list[str]] = {"style": [], "script": []}
        self._in: str | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))
        if tag in self.raw:
            self._in = tag
            self.raw[tag].append("")

    def handle_endtag(self, tag: str) -> None:
        if tag == self._in:
            self._in = None

    def handle_data(self, data: str) -> None:
        if self._in:
            self.raw[self._in][-1] += data


def parsed(text: str) -> Elements:
    found = Elements()
    found.feed(text)
    found.close()
    return found


def digest(text: str) -> str:
    return "sha256-" + base64.b64encode(hashlib.sha256(text.encode()).digest()).decode()


@pytest.mark.parametrize("which", ["regressed", "hostile", "v2"])
def test_html_report_matches_golden(which: str, golden: Golden) -> None:
    made = {"regressed": lambda: with_extras(example_report("regressed")), "hostile": hostile_report, "v2": golden_queries_report}
    golden.check(f"html-{which}.html", html.render(made[which]()))


def test_agent_text_never_becomes_markup_or_a_request() -> None:
    text = html.render(hostile_report())
    found = parsed(text)
    assert {tag for tag, _ in found.tags} <= TEMPLATE_TAGS
    assert sum(1 for tag, _ in found.tags if tag == "script") == 1
    for tag, attrs in found.tags:
        assert not any(name.startswith("on") for name in attrs), (tag, attrs)
        assert not {"href", "src", "action", "formaction", "xlink:href", "style"} & set(attrs), (tag, attrs)
        if tag == "meta":
            assert attrs.get("http-equiv") in (None, "Content-Security-Policy")
    # the hostile text is there, as text
    assert "&lt;script&gt;window.__pwned = 1; alert(1)&lt;/script&gt;" in text
    assert "javascript:alert(7)" in text and "<a " not in text
    assert "\\u202eevil" in text and "\\x1b[31mred" in text  # bidi and terminal escapes shown, not acted on
    assert HUGE[:5000] not in text and "more characters; the JSON report has them all" in text


TEMPLATES = Path(html.__file__).parent / "templates"


def assert_inert(text: str) -> None:
    """Untrusted text landed nowhere as written: no element, attribute, script, comment
    or CDATA of its own, no character that ends a script line or reverses the text; the
    page's one script and one style are its own files, byte for byte."""
    found = parsed(text)
    assert {tag for tag, _ in found.tags} <= TEMPLATE_TAGS
    assert found.raw["script"] == [(TEMPLATES / "html_report.js").read_text()]
    assert found.raw["style"] == [(TEMPLATES / "html_report.css").read_text()]
    for tag, attrs in found.tags:
        assert not any(name.startswith("on") for name in attrs), (tag, attrs)
    assert [piece for piece in RAW if piece in text] == []
    assert text.count("</script>") == 1 and text.rstrip().endswith("</script>\n</body>\n</html>")


def test_hostile_text_in_every_field_lands_escaped_in_the_source() -> None:
    text = html.render(everywhere())
    assert_inert(text)
    # it is all there, as text: markup escaped, the invisible characters as escapes
    escaped = "&lt;img src=x onerror=&#34;window.__pwned = 11; alert(11)&#34;&gt;&#34;&gt;&lt;svg onload="
    assert escaped in text and "&lt;/script&gt;&lt;script&gt;window.__pwned = 14" in text
    assert "&lt;!-- ]]&gt; &lt;![CDATA[ \\u2028 \\u2029 \\u202e" in text
    for field in ("<title>behavegate: fail — contract.yml&lt;img", 'data-id="judged&lt;img', 'data-tags="[&#34;safety&lt;img',
                  "error: <code>&lt;img", "sources: <code>&lt;img", "finding regressions\">error: &lt;img",
                  "0 incomplete of 1 vote(s)): &#34;&lt;img src=x"):  # fmt: skip  # path, id, tag, errors, sources, the judge
        assert field in text, field
    tags = [tag for name, attrs in parsed(text).tags if name == "details" for tag in json.loads(attrs.get("data-tags") or "[]")]
    options = [attrs["value"] for name, attrs in parsed(text).tags if name == "option" and attrs["value"]]
    assert tags and set(tags) == set(options)  # the tag filter finds each scenario by the tag it shows


def test_a_suite_with_a_hostile_baseline_lands_escaped_in_the_source() -> None:
    text = suite_html(SuiteRun((everywhere(), tainted(showcase()))))
    assert_inert(text)
    assert "Regressions against the baseline" in text and "pass rate dropped" in text
    assert "greets&lt;img src=x" in text  # a finding's subject, escaped


def test_the_cli_writes_hostile_text_escaped(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The real command: a contract file whose name is markup with a bidi override, and an
    observation file whose answer, tool arguments, sources and error text are EVIL."""
    name = "c<img src=x onerror=alert(1)>\u202e.yml"
    (tmp_path / name).write_text(HOSTILE_CLI_CONTRACT, encoding="utf-8")
    answer = {
        "id": "hostile",
        "response": EVIL,
        "finish_reason": "stop",
        "response_complete": True,
        "tool_calls_complete": True,
        "tool_calls": [{"name": "lookup", "arguments": {"q": EVIL, EVIL: EVIL}}],
        "sources": [EVIL],
    }
    observations = {"version": 2, "scenarios": [answer, {"id": "broken", "response": None, "error": EVIL}]}
    (tmp_path / "obs.json").write_text(json.dumps(observations), encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    assert main(["test", name, "--observations", "obs.json", "--no-artifacts", "--html", "out.html"]) == 1
    text = (tmp_path / "out.html").read_text(encoding="utf-8")
    assert_inert(text)
    assert "c&lt;img src=x onerror=alert(1)&gt;\\u202e.yml:7" in text and text.count("&lt;svg onload=") >= 4


HOSTILE_CLI_CONTRACT = """version: 2
agent: {model: hostile, tools: [{name: lookup, description: Look it up, parameters: {type: object}}]}
scenarios:
  - id: hostile
    prompt: Answer.
    expect:
      response: {excludes: ["<script>"]}
      tools: {forbidden: [lookup]}
  - id: broken
    prompt: Fail.
    expect: {response: {contains: [x]}}
"""


def test_the_policy_allows_only_its_own_style_and_script() -> None:
    text = html.render(example_report("regressed"))
    found = parsed(text)
    policy = next(attrs["content"] for tag, attrs in found.tags if tag == "meta" and attrs.get("http-equiv"))
    assert policy is not None
    rules = dict(rule.strip().split(" ", 1) for rule in policy.split(";"))
    assert rules["default-src"] == "'none'" and rules["base-uri"] == "'none'" and rules["form-action"] == "'none'"
    assert rules["style-src"] == f"'{digest(found.raw['style'][0])}'"
    assert rules["script-src"] == f"'{digest(found.raw['script'][0])}'"
    assert text.index("Content-Security-Policy") < text.index("<title>")  # before anything it governs
    assert not re.search(r"https?://", text)  # nothing to fetch


def test_every_scenario_shows_its_attempts_rate_interval_and_threshold() -> None:
    text = html.render(hostile_report())
    assert text.count('<details class="scenario"') == 3
    strip = text[text.index('aria-label="attempts: 1 pass, 2 fail, 0 incomplete"') :]
    assert strip.index('<rect class="fail"') < strip.index("</svg>")
    assert "1/3 33% [6-79%] flaky" in text and "threshold 60%" in text
    assert '<line class="threshold" x1="96.0"' in text  # 0.6 of a 160-wide bar
    assert "contract.yml:14" in text and "response.contains[0]" in text  # the failed assertion's line
    assert text.index('data-id="hostile-answer"') < text.index('data-id="calm"')  # failing first


def test_baseline_deltas_lead_and_mark_each_scenario() -> None:
    text = html.render(showcase())
    assert "Against the baseline" in text and "Regressions against the baseline" in text
    assert text.index("Regressions against the baseline") < text.index('class="scenario"')
    assert "pass rate dropped" in text
    assert re.search(r"baseline \d+/\d+, now \d+/\d+", text)


def test_graded_scores_appear_when_the_run_has_them(tmp_path: Path) -> None:
    text = html.render(report((EXAMPLE / "contract-v2.yml").read_text(), _v2_observations()))
    assert "Graded scores" in text and "precision" in text and "trajectory" in text


def _v2_observations() -> str:
    import json

    data = json.loads((EXAMPLE / "observations-good.json").read_text())
    data["scenarios"] = [s for s in data["scenarios"] if s["id"] != "delete-data-refused"]
    return json.dumps(data)


@pytest.mark.slow
def test_a_5000_scenario_report_is_one_file_with_every_scenario_collapsed() -> None:
    text = html.render(huge_report(5_000))
    assert text.count('<details class="scenario"') == 5_000
    assert " open>" not in text  # too many failures to open them all
    assert len(text.encode()) < 16 * 1024 * 1024


def test_a_suite_is_one_page_with_every_contract() -> None:
    suite = SuiteRun((example_report("regressed"), example_report("good")))
    text = suite_html(suite)
    assert text.count('<section class="run"') == 2 and text.count('<details class="scenario"') == 10


def test_cli_writes_the_html_and_sarif_files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("contract.yml", "observations-regressed.json"):
        (tmp_path / name).write_text((EXAMPLE / name).read_text())
    monkeypatch.chdir(tmp_path)
    code = main(
        [
            "test",
            "contract.yml",
            "--observations",
            "observations-regressed.json",
            "--no-artifacts",
            "--html",
            "out/report.html",
            "--sarif",
            "out/report.sarif",
        ]
    )
    assert code == 1
    assert (tmp_path / "out" / "report.html").read_text().startswith("<!DOCTYPE html>")
    assert '"version": "2.1.0"' in (tmp_path / "out" / "report.sarif").read_text()
    assert main(["test", "contract.yml", "--observations", "observations-regressed.json", "--html", "../x.html"]) == 2
    assert not (tmp_path.parent / "x.html").exists()


def test_a_shard_writes_no_html_or_sarif(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "contract.yml").write_text((EXAMPLE / "contract-v2.yml").read_text())
    monkeypatch.chdir(tmp_path)
    assert main(["test", "contract.yml", "--shard", "1/2", "--html", "r.html", "--sarif", "r.sarif"]) == 2
    assert "--html and --sarif belong to `behavegate merge`" in capsys.readouterr().err


def test_a_run_that_could_not_be_judged_writes_no_html_or_sarif(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An empty SARIF upload would mark every open finding fixed: an invalid run writes none."""
    (tmp_path / "contract.yml").write_text("version: 2\nscenarios: nope\n")
    monkeypatch.chdir(tmp_path)
    code = main(
        [
            "test",
            "contract.yml",
            "--observations",
            "missing.json",
            "--html",
            "r.html",
            "--sarif",
            "r.sarif",
            "--github-output",
            "out.txt",
        ]
    )
    assert code == 2
    assert not (tmp_path / "r.html").exists() and not (tmp_path / "r.sarif").exists()
    outputs = (tmp_path / "out.txt").read_text().splitlines()
    assert "status=error" in outputs and "html=" in outputs and "sarif=" in outputs
