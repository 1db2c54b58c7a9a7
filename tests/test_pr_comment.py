"""The sticky pull-request comment against a loopback fake of GitHub's REST endpoints
(the tests' fake, a real loopback server): created once, updated after, found across pages, cut to
GitHub's limit; and through the Action, a refused call is a warning, never a verdict."""

from __future__ import annotations

import json
import re
import shutil
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
from fake_agent import FakeAgent, Reply, Request, empty_reply, json_reply, serve
from helpers import EXAMPLE
from hostile_report import hostile_report

from behavegate.github import action
from behavegate.github.pr_comment import CommentError, comment_body, marker, post
from behavegate.limits import GITHUB_COMMENT_MAX_CHARS
from behavegate.render import summary

REPO = "acme/agent"
PULL = 7


class FakeGitHub:
    """The issue-comment endpoints of one pull request, in memory."""

    def __init__(self) -> None:
        self.comments: list[dict[str, Any]] = []
        self.requests: list[tuple[str, str]] = []
        self.status: int | None = None  # answer every request with this status
        self.tokens: set[str] = set()
        self.lock = threading.Lock()
        self.next_id = 1000

    def add(self, body: str, user_type: str = "User") -> dict[str, Any]:
        self.next_id += 1
        comment = {
            "id": self.next_id,
            "body": body,
            "user": {"login": "x", "type": user_type},
            "html_url": f"https://github.example/{REPO}/pull/{PULL}#issuecomment-{self.next_id}",
        }
        self.comments.append(comment)
        return comment


def answer_for(fake: FakeGitHub) -> Callable[[Request], Reply]:
    comments_path = f"/repos/{REPO}/issues/{PULL}/comments"

    def answer(request: Request) -> Reply:
        url = urlsplit(request.path)
        method = request.method
        with fake.lock:
            fake.requests.append((method, request.path))
            fake.tokens.add(request.header("Authorization"))
            if fake.status is not None:
                return json_reply({"message": "Resource not accessible by integration"}, fake.status)
            if method == "GET" and url.path == comments_path:
                query = parse_qs(url.query)
                per_page, page = int(query["per_page"][0]), int(query["page"][0])
                return json_reply(fake.comments[(page - 1) * per_page : page * per_page])
            if method == "POST" and url.path == comments_path:
                return json_reply(fake.add(json.loads(request.body or b"{}")["body"], "Bot"), 201)
            if method == "PATCH" and (found := re.fullmatch(rf"/repos/{REPO}/issues/comments/(\d+)", url.path)):
                comment = next((c for c in fake.comments if c["id"] == int(found.group(1))), None)
                if comment is None:
                    return json_reply({"message": "Not Found"}, 404)
                comment["body"] = json.loads(request.body or b"{}")["body"]
                return json_reply(comment)
            return json_reply({"message": "Not Found"}, 404)

    return answer


@pytest.fixture
def github() -> Iterator[tuple[FakeGitHub, str]]:
    fake = FakeGitHub()
    with FakeAgent(answer_for(fake), path="") as server:
        yield fake, server.url


def environ(api: str, tmp_path: Path, event: str = "pull_request") -> dict[str, str]:
    path = tmp_path / "event.json"
    path.write_text(json.dumps({"pull_request": {"number": PULL}}))
    return {
        "GITHUB_API_URL": api,
        "GITHUB_REPOSITORY": REPO,
        "GITHUB_EVENT_NAME": event,
        "GITHUB_EVENT_PATH": str(path),
        "GITHUB_WORKFLOW": "agent behavior",
    }


def test_the_first_run_creates_the_comment_and_later_runs_update_it(github: tuple[FakeGitHub, str], tmp_path: Path) -> None:
    fake, api = github
    env = environ(api, tmp_path)
    url = post("## first summary\n", "agent/contract.yml", "t0ken", env)
    assert len(fake.comments) == 1 and url.endswith(f"#issuecomment-{fake.comments[0]['id']}")
    assert fake.comments[0]["body"] == "<!-- behavegate: agent behavior agent/contract.yml -->\n## first summary\n"
    post("## second summary\n", "agent/contract.yml", "t0ken", env)
    assert len(fake.comments) == 1 and fake.comments[0]["body"].endswith("## second summary\n")
    assert [method for method, _ in fake.requests] == ["GET", "POST", "GET", "PATCH"]
    assert fake.tokens == {"Bearer t0ken"}
    post("## other contract\n", "other/contract.yml", "t0ken", env)  # one comment per contract
    assert len(fake.comments) == 2


def test_the_comment_is_found_on_a_later_page(github: tuple[FakeGitHub, str], tmp_path: Path) -> None:
    fake, api = github
    for index in range(230):
        fake.add(f"comment {index}")
    sticky = fake.add(marker("agent behavior", "c.yml") + "\nold", "Bot")
    fake.add("a newer comment")
    post("new", "c.yml", "t0ken", environ(api, tmp_path))
    assert sticky["body"].endswith("\nnew") and len(fake.comments) == 232
    pages = [path for method, path in fake.requests if method == "GET"]
    assert len(pages) == 3 and "page=3" in pages[-1]


def test_a_planted_marker_in_someone_elses_comment_is_not_edited(github: tuple[FakeGitHub, str], tmp_path: Path) -> None:
    fake, api = github
    planted = fake.add(marker("agent behavior", "c.yml") + "\nplanted by a user")
    ours = fake.add(marker("agent behavior", "c.yml") + "\nours", "Bot")
    post("fresh", "c.yml", "t0ken", environ(api, tmp_path))
    assert planted["body"].endswith("planted by a user") and ours["body"].endswith("fresh")


def test_a_refused_call_raises_a_comment_error(github: tuple[FakeGitHub, str], tmp_path: Path) -> None:
    fake, api = github
    fake.status = 403
    with pytest.raises(CommentError, match=r"HTTP 403.*pull-requests: write"):
        post("x", "c.yml", "t0ken", environ(api, tmp_path))


def test_only_pull_request_events_get_a_comment(tmp_path: Path) -> None:
    with pytest.raises(CommentError, match="not a pull request"):
        post("x", "c.yml", "t0ken", environ("http://127.0.0.1:9", tmp_path, event="push"))
    with pytest.raises(CommentError, match="no token"):
        post("x", "c.yml", "", environ("http://127.0.0.1:9", tmp_path))


def test_redirects_are_not_followed(tmp_path: Path) -> None:
    redirect = serve(lambda request: empty_reply(302, Location="http://example.invalid/steal"), path="")
    with redirect as api, pytest.raises(CommentError, match="HTTP 302"):
        post("x", "c.yml", "t0ken", environ(api, tmp_path))


def test_a_long_summary_is_cut_to_githubs_limit_saying_what_was_left_out() -> None:
    text = "".join(f"| `row {index}` | ✅ pass |\n" for index in range(20_000))
    body = comment_body(text, marker("w", "c.yml"))
    assert len(body.encode("utf-16-le")) // 2 <= GITHUB_COMMENT_MAX_CHARS
    kept = body.count("| `row ")
    assert f"**{20_000 - kept} more lines of the summary left out**" in body
    assert body.startswith("<!-- behavegate: w c.yml -->\n") and kept > 1000


def test_the_marker_cannot_be_closed_early() -> None:
    made = marker("x --> <script>", "a-->b\n<!--")
    assert made.count("-->") == 1 and made.endswith(" -->") and "<script>" not in made and "\n" not in made


def test_agent_text_in_the_comment_is_inert() -> None:
    """What the comment posts is the summary: agent text only inside code spans, so a
    mention, a link, an image or HTML stays text."""
    body = comment_body(summary.render(hostile_report()), marker("w", "c.yml"))
    for line in body.splitlines()[1:]:
        outside = re.sub(r"(`+)(.+?)\1", "", line)
        assert "@octocat" not in outside and "<script" not in outside and "](" not in outside and "<img" not in outside, line


def test_the_action_posts_the_summary_and_a_refusal_is_only_a_warning(
    github: tuple[FakeGitHub, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    fake, api = github
    for name in ("contract.yml", "observations-regressed.json"):
        shutil.copy(EXAMPLE / name, tmp_path / name)
    (tmp_path / "out.txt").write_text("")
    env = {
        **environ(api, tmp_path),
        "GITHUB_WORKSPACE": str(tmp_path),
        "GITHUB_OUTPUT": str(tmp_path / "out.txt"),
        "INPUT_CONTRACT": "contract.yml",
        "INPUT_OBSERVATIONS": "observations-regressed.json",
        "INPUT_COMMENT": "true",
        "INPUT_GITHUB-TOKEN": "ghs_secret",
        "INPUT_ARTIFACTS": "false",
    }
    code = action.main(env)
    out = capsys.readouterr().out
    assert code == 1 and len(fake.comments) == 1
    assert fake.comments[0]["body"].startswith("<!-- behavegate: agent behavior contract.yml -->\n## ❌ behavegate: fail")
    assert out.startswith("::add-mask::ghs_secret\n") and out.count("ghs_secret") == 1
    assert "comment-url=https://github.example/" in (tmp_path / "out.txt").read_text()
    fake.status = 403
    assert action.main(env) == code  # the same verdict, the same exit code
    out = capsys.readouterr().out
    assert re.search(r"^::warning title=behavegate%3A PR comment::comment: listing .* HTTP 403", out, re.M)


def test_comment_needs_a_summary_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    env = {"GITHUB_WORKSPACE": str(tmp_path), "INPUT_COMMENT": "true", "INPUT_SUMMARY-FILE": ""}
    assert action.main(env) == 2
    assert "comment: true posts the summary file" in capsys.readouterr().out
