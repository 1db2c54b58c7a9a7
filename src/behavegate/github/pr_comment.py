"""The sticky pull-request comment (the Action's ``comment: true``).

One comment per workflow and contract, found again by a hidden marker on its
first line, created once and edited on every push: the run's Markdown summary,
cut to GitHub's comment limit with a line saying what was left out. The summary
shows agent text only inside code spans (``render/summary.py``), so a mention,
a link or HTML written by the agent stays text.

It talks to ``$GITHUB_API_URL`` (the runner's REST endpoint, https unless it is
loopback) with the workflow token: each call whole within a deadline and each
answer within a byte cap, no redirects followed, no proxy or netrc read from the
environment. Whatever goes wrong (no pull request, no permission, the
API down) is a warning: a comment never changes the verdict or the exit code.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Callable, Mapping
from typing import Any

import httpx

from behavegate import finite_json
from behavegate.evidence.trust import is_loopback_host
from behavegate.limits import (
    GITHUB_COMMENT_MAX_CHARS,
    PR_COMMENT_PAGES,
    PR_COMMENT_REPLY_MAX_BYTES,
    PR_COMMENT_TIMEOUT_SECONDS,
    PR_COMMENT_TOTAL_SECONDS,
)

PER_PAGE = 100
EVENT_MAX_BYTES = 25 * 1024 * 1024  # the runner's event payload
PULL_REQUEST_EVENTS = ("pull_request", "pull_request_target")
_REPOSITORY = re.compile(r"^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$")
_MARKER_TEXT = re.compile(r"[^A-Za-z0-9_./ @:+=-]")


class CommentError(Exception):
    """Why the comment was not posted (shown as a warning)."""


def marker(workflow: str, contract: str) -> str:
    """``<!-- behavegate: WORKFLOW CONTRACT -->``: names that cannot end the HTML comment early."""

    def clean(text: str) -> str:
        return _MARKER_TEXT.sub("_", text)[:200].replace("--", "-_") or "_"

    return f"<!-- behavegate: {clean(workflow)} {clean(contract)} -->"


def _length(text: str) -> int:
    """Length as GitHub counts it at worst (UTF-16 code units: an emoji is two)."""
    return len(text.encode("utf-16-le")) // 2


def comment_body(summary: str, mark: str, limit: int = GITHUB_COMMENT_MAX_CHARS) -> str:
    """The marker, then the summary, whole lines only, within ``limit``; what was cut is counted."""
    head = mark + "\n"
    if _length(head) + _length(summary) <= limit:
        return head + summary
    lines = summary.splitlines(keepends=True)
    note = (
        "\n\n> ✂️ **{count} more lines of the summary left out** (GitHub's {limit:,}-character comment limit); "
        "the job summary and the JSON report have everything.\n"
    )
    budget = limit - _length(head) - _length(note.format(count=len(lines), limit=limit))
    kept: list[str] = []
    for line in lines:
        cost = _length(line)
        if cost > budget:
            break
        budget -= cost
        kept.append(line)
    return head + "".join(kept).rstrip("\n") + note.format(count=len(lines) - len(kept), limit=limit)


def pull_request_number(environ: Mapping[str, str]) -> int:
    """The pull request this workflow run is for, from the runner's event payload."""
    event_name = environ.get("GITHUB_EVENT_NAME", "")
    if event_name not in PULL_REQUEST_EVENTS:
        raise CommentError(f"comment: skipped, the event is {event_name or 'unknown'!r}, not a pull request")
    path = environ.get("GITHUB_EVENT_PATH")
    if not path:
        raise CommentError("comment: skipped, GITHUB_EVENT_PATH is not set")
    try:
        with open(path, "rb") as handle:
            raw = handle.read(EVENT_MAX_BYTES + 1)
        event = json.loads(raw) if len(raw) <= EVENT_MAX_BYTES else None
    except (OSError, ValueError, RecursionError) as error:
        raise CommentError(f"comment: skipped, the event payload could not be read ({type(error).__name__})") from None
    pull = event.get("pull_request") if isinstance(event, dict) else None
    number = pull.get("number") if isinstance(pull, dict) else None
    if not isinstance(number, int) or isinstance(number, bool) or number < 1:
        raise CommentError("comment: skipped, the event payload names no pull request number")
    return number


def _api(environ: Mapping[str, str]) -> str:
    api = (environ.get("GITHUB_API_URL") or "https://api.github.com").rstrip("/")
    refused = CommentError("comment: skipped, GITHUB_API_URL is not an http(s) URL without credentials")
    try:
        url = httpx.URL(api)
    except httpx.InvalidURL:
        raise refused from None
    if url.scheme not in ("https", "http") or not url.host or url.userinfo:
        raise refused
    if url.scheme == "http" and not is_loopback_host(url.host):
        # Checked before a byte is sent: the token would cross the network in clear.
        raise CommentError("comment: skipped, GITHUB_API_URL must be https (plain http only to a loopback address)")
    return api


def _check(status: int, body: bytes, what: str) -> Any:
    if status // 100 != 2:
        raise CommentError(f"comment: {what} failed: HTTP {status}{_hint(status)}")
    try:
        return finite_json.loads(body)
    except (ValueError, RecursionError):
        raise CommentError(f"comment: {what} failed: the API answered with no JSON") from None


def _hint(status: int) -> str:
    if status in (401, 403, 404):
        return " (does the job grant `permissions: pull-requests: write`? a pull request from a fork gets a read-only token)"
    return ""


def _url(comment: Any) -> str:
    return str(comment.get("html_url") or "") if isinstance(comment, dict) else ""


class Session:
    """GitHub REST calls, each whole (connect, send, every byte of the answer) within its own
    deadline and all of them within the comment's, each answer within a byte cap. A read
    timeout alone is per read: an API trickling a byte a second held the step for minutes."""

    def __init__(self, client: httpx.AsyncClient, total_seconds: float = PR_COMMENT_TOTAL_SECONDS) -> None:
        self.client = client
        self.deadline = asyncio.get_running_loop().time() + total_seconds

    async def call(self, method: str, url: str, what: str, **request: Any) -> tuple[int, bytes]:
        """The answer's status and body (read only when 2xx: nothing else is used)."""
        seconds = min(PR_COMMENT_TIMEOUT_SECONDS, self.deadline - asyncio.get_running_loop().time())
        try:
            async with asyncio.timeout(max(seconds, 0.0)):
                response = await self.client.send(self.client.build_request(method, url, **request), stream=True)
                try:
                    return response.status_code, await _read(response, what) if response.is_success else b""
                finally:
                    await response.aclose()
        except TimeoutError:
            raise CommentError(f"comment: {what} failed: the GitHub API did not answer whole within {seconds:.3g} s") from None


async def _read(response: httpx.Response, what: str) -> bytes:
    """The body as sent (identity encoding was asked for: no decompression to bound), capped."""
    cap = PR_COMMENT_REPLY_MAX_BYTES
    too_large = CommentError(f"comment: {what} failed: the answer is over {cap:,} bytes")
    if response.headers.get("content-encoding", "identity").lower() != "identity":
        raise CommentError(f"comment: {what} failed: the answer is compressed, though none was asked for")
    declared = response.headers.get("content-length", "")
    if declared.isdigit() and (len(declared) > 18 or int(declared) > cap):
        raise too_large
    chunks: list[bytes] = []
    size = 0
    async for chunk in response.aiter_raw():
        size += len(chunk)
        if size > cap:
            raise too_large
        chunks.append(chunk)
    return b"".join(chunks)


async def find_comment(session: Session, repository: str, number: int, mark: str) -> dict[str, Any] | None:
    """The sticky comment, if one exists: the first (a bot's first) whose body starts with the marker."""
    found: list[dict[str, Any]] = []
    what = "listing the pull request's comments"
    for page in range(1, PR_COMMENT_PAGES + 1):
        params = {"per_page": PER_PAGE, "page": page}
        comments = _check(*await session.call("GET", f"/repos/{repository}/issues/{number}/comments", what, params=params), what)
        if not isinstance(comments, list):
            raise CommentError(f"comment: {what} failed: not a list")
        found += [c for c in comments if isinstance(c, dict) and str(c.get("body") or "").startswith(mark)]
        if len(comments) < PER_PAGE:
            break
    bots = [c for c in found if isinstance(c.get("user"), dict) and c["user"].get("type") == "Bot"]
    chosen = bots or found
    return chosen[0] if chosen else None


def post(
    summary: str,
    contract: str,
    token: str,
    environ: Mapping[str, str],
    client: Callable[..., httpx.AsyncClient] = httpx.AsyncClient,
) -> str:
    """Create or update the sticky comment; its URL. Raises CommentError on any failure."""
    if not token:
        raise CommentError("comment: skipped, no token (github-token input or GITHUB_TOKEN)")
    number = pull_request_number(environ)
    repository = environ.get("GITHUB_REPOSITORY", "")
    if not _REPOSITORY.match(repository):
        raise CommentError("comment: skipped, GITHUB_REPOSITORY is not owner/name")
    api = _api(environ)
    mark = marker(environ.get("GITHUB_WORKFLOW", ""), contract)
    headers = {
        "Authorization": f"Bearer {token}",
        "Accept": "application/vnd.github+json",
        "Accept-Encoding": "identity",
        "X-GitHub-Api-Version": "2022-11-28",
        "User-Agent": "behavegate",
    }
    options = {"base_url": api, "headers": headers, "timeout": PR_COMMENT_TIMEOUT_SECONDS}
    return asyncio.run(
        _post(client(**options, follow_redirects=False, trust_env=False), comment_body(summary, mark), repository, number, mark)
    )


async def _post(client: httpx.AsyncClient, body: str, repository: str, number: int, mark: str) -> str:
    try:
        async with client:
            session = Session(client)
            existing = await find_comment(session, repository, number, mark)
            if existing is not None and isinstance(existing.get("id"), int):
                what = "updating the comment"
                status, answer = await session.call(
                    "PATCH", f"/repos/{repository}/issues/comments/{existing['id']}", what, json={"body": body}
                )
                if status not in (403, 404):  # not ours to edit (or gone): post a new one
                    return _url(_check(status, answer, what))
            what = "creating the comment"
            return _url(
                _check(
                    *await session.call("POST", f"/repos/{repository}/issues/{number}/comments", what, json={"body": body}), what
                )
            )
    except httpx.HTTPError as error:
        raise CommentError(f"comment: the GitHub API could not be reached ({type(error).__name__})") from None
