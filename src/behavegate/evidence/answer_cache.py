"""``--cache DIR``: the agent's answers kept on disk while a contract is being written.

An entry is keyed by the exact request (method, URL without credentials, the body as
canonical JSON) and the attempt index, so ``runs: 3`` keeps three independent answers.
Only the request's shape is in the key: no header is, so no token is (nor is one ever
written to an entry). A hit replays the recorded response bytes (before decoding, with the
Content-Type and Content-Encoding they came with) as a response: the same status
check, byte caps, decoding, event-stream assembly and parsing read them as read a live
answer, so a verdict from the cache is the verdict the answer got live.

What is stored: a 2xx answer the reading path read without error (an error, a retryable
status or a cut body is asked again next time). Entries are bounded (``MAX_RESPONSE_BYTES``
of body, in base64, and a few small fields), written to a temporary name and renamed into place, and read
back checked (size, digest, key): anything else is a miss, never a crash. The folder
follows the rule of every file behavegate writes (files.py): inside the project or under
``$RUNNER_TEMP``, never through a link. This is an
authoring aid: commands/cache_policy.py refuses it wherever a CI verdict is made.
"""

from __future__ import annotations

import base64
import hashlib
import json
import time
from collections.abc import AsyncIterator
from typing import Any

from behavegate.errors import BehavegateError
from behavegate.evidence import http_model
from behavegate.files import Place, read_placed, write_file
from behavegate.limits import MAX_RESPONSE_BYTES

FORMAT = "behavegate-answer-cache/1"
HEADER_MAX_BYTES = 4096  # an entry's fields but the body: status, two headers, digests, timing
ENTRY_MAX_BYTES = HEADER_MAX_BYTES + 4 * (MAX_RESPONSE_BYTES // 3 + 1)  # the body in base64
KEPT_HEADERS = ("content-type", "content-encoding")  # what the reading path reads of a 2xx answer


class Tally:
    """One attempt's use of the cache: answers replayed, and how long they took when recorded
    (added to the attempt's measured latency, so ``latency.max_ms`` judges the agent's time)."""

    def __init__(self) -> None:
        self.hits = 0
        self.replayed_ms = 0.0


class AnswerCache:
    """The run's cache directory and its counts (the report's provenance and note). One event
    loop uses it: counts need no lock."""

    def __init__(self, folder: Place) -> None:
        self.folder = folder  # placed by the project's output rule (commands/cache_policy.py)
        self.hits = 0
        self.asked = 0  # answers that came from the agent (stored or not)
        self.stored = 0
        self.tallies: dict[tuple[str, int], Tally] = {}

    def tally(self, scenario_id: str, attempt: int) -> Tally:
        return self.tallies.setdefault((scenario_id, attempt), Tally())

    def provenance(self) -> dict[str, object]:
        return {
            "answer_cache": {
                "answers_from_cache": self.hits,
                "answers": self.hits + self.asked,
                "stored": self.stored,
                "key": "method, URL without credentials, canonical JSON body, attempt index",
                "judge_replies": "not cached",
            }
        }

    def note(self) -> str | None:
        """Said on every view of a run that read the cache."""
        if not self.hits and not self.asked:
            return None
        return (
            f"answers from cache: {self.hits} of {self.hits + self.asked} (--cache; {self.stored} new stored): "
            "replayed answers were recorded by an earlier run, not asked of the agent now; an authoring aid, never a CI verdict"
        )


def request_key(method: str, url: str, body: bytes, attempt: int) -> str:
    """The entry's name: a digest of the request's shape and the attempt index. Credentials
    in the URL (refused before any run) and every header are left out."""
    from behavegate.evidence.lean_httpx import httpx  # its URL normalization names the entries written so far

    parsed = httpx.URL(url)
    bare = parsed.copy_with(username=None, password=None, fragment=None)
    try:  # the same request written with its keys in another order is the same request
        canonical = json.dumps(json.loads(body), sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()
    except (UnicodeError, ValueError, RecursionError):
        canonical = body
    digest = hashlib.sha256()
    for part in (method.upper().encode(), str(bare).encode(), str(attempt).encode()):
        digest.update(len(part).to_bytes(8, "big") + part)
    digest.update(canonical)
    return digest.hexdigest()


def _where(url: str) -> str:
    """The endpoint as an entry names it, for a person reading the folder: no credentials, no query."""
    from behavegate.evidence.lean_httpx import httpx

    parsed = httpx.URL(url)
    return str(parsed.copy_with(username=None, password=None, query=None, fragment=None))


def _place(folder: Place, key: str) -> Place:
    return Place(folder.base, (*folder.parts, f"{key}.answer"), append=False)


def read_entry(folder: Place, key: str) -> tuple[int, dict[str, str], bytes, float] | None:
    """The recorded status, headers, raw body and milliseconds; None for a miss (absent,
    too large, a link, unreadable, or not what it says it is)."""
    text = read_placed(_place(folder, key), ENTRY_MAX_BYTES)
    if text is None:
        return None
    try:
        entry: Any = json.loads(text)
        if not isinstance(entry, dict) or entry.get("format") != FORMAT or entry.get("key") != key:
            return None
        status, headers, size, sha, elapsed = (
            entry["status"],
            entry["headers"],
            entry["body_bytes"],
            entry["body_sha256"],
            entry["elapsed_ms"],
        )
        body = base64.b64decode(entry["body_base64"], validate=True)
    except (UnicodeError, ValueError, RecursionError, KeyError, TypeError):
        return None
    if not (isinstance(status, int) and 200 <= status < 300 and isinstance(headers, dict)):
        return None
    if size != len(body) or sha != hashlib.sha256(body).hexdigest() or not isinstance(elapsed, int | float):
        return None
    if not all(
        isinstance(k, str) and k in KEPT_HEADERS and isinstance(v, str) and max(v, default="") <= "\xff"
        for k, v in headers.items()
    ):
        return None
    return status, headers, body, float(elapsed)


def write_entry(folder: Place, key: str, url: str, attempt: int, response: http_model.Response, body: bytes, ms: float) -> bool:
    """Stored by the project's one writer (files.write_file: a temporary name renamed into
    place, no link followed); False when it could not be (the run goes on, uncached)."""
    if len(body) > MAX_RESPONSE_BYTES:
        return False
    entry = {
        "format": FORMAT,
        "key": key,
        "endpoint": _where(url),
        "attempt": attempt,
        "status": response.status_code,
        "headers": {name: response.headers.get(name) for name in KEPT_HEADERS if name in response.headers},
        "body_bytes": len(body),
        "body_sha256": hashlib.sha256(body).hexdigest(),
        "elapsed_ms": round(ms, 3),
        "body_base64": base64.b64encode(body).decode("ascii"),  # as it came off the wire: maybe gzip
    }
    text = json.dumps(entry, sort_keys=True, ensure_ascii=True)
    if len(text) > ENTRY_MAX_BYTES:
        return False
    try:
        write_file(_place(folder, key), text, "--cache")
    except (BehavegateError, OSError):
        return False
    return True


class _Recorded:
    """A live answer's raw bytes, kept as the reading path takes them (up to the cap)."""

    def __init__(self, stream: http_model.Body) -> None:
        self.stream = stream
        self.chunks: list[bytes] = []
        self.size = 0

    async def __aiter__(self) -> AsyncIterator[bytes]:
        async for chunk in self.stream:
            self.size += len(chunk)
            if self.size <= MAX_RESPONSE_BYTES:
                self.chunks.append(chunk)
            yield chunk

    async def aclose(self) -> None:
        await self.stream.aclose()


class CachedTransport:
    """One attempt's transport with the cache in front: a hit never reaches ``inner``."""

    def __init__(self, inner: http_model.Transport, cache: AnswerCache, attempt: int, tally: Tally) -> None:
        self.inner = inner
        self.cache = cache
        self.attempt = attempt
        self.tally = tally
        self.pending: tuple[str, str, http_model.Response, _Recorded, float] | None = None

    async def handle_async_request(self, request: http_model.Request) -> http_model.Response:
        body = b"".join([piece async for piece in request.stream])  # the key needs the whole body
        request.body = body  # and it is sent from these bytes on a miss
        url = request.url.text
        key = request_key(request.method.decode("ascii"), url, body, self.attempt)
        self.pending = None
        found = read_entry(self.cache.folder, key)
        if found is not None:
            status, headers, raw, elapsed = found
            self.cache.hits += 1
            self.tally.hits += 1
            self.tally.replayed_ms += elapsed
            fields = [(name.encode("latin-1"), value.encode("latin-1")) for name, value in headers.items()]
            return http_model.Response(status, headers=fields, stream=http_model.BytesBody(raw))
        started = time.monotonic()
        response = await self.inner.handle_async_request(request)
        self.cache.asked += 1
        if 200 <= response.status_code < 300:
            recorded = _Recorded(response.stream)
            response.stream = recorded
            self.pending = (key, url, response, recorded, started)
        return response

    def commit(self) -> None:
        """The answer just read was read without error: kept for the next run."""
        if self.pending is None:
            return
        key, url, response, recorded, started = self.pending
        self.pending = None
        if recorded.size > MAX_RESPONSE_BYTES:
            return
        ms = (time.monotonic() - started) * 1000
        if write_entry(self.cache.folder, key, url, self.attempt, response, b"".join(recorded.chunks), ms):
            self.cache.stored += 1

    async def aclose(self) -> None:
        await self.inner.aclose()
