"""evidence/http_model.py: the URL a run dials is read once, as evidence/trust.py allowed it,
and it is the URL httpx would have dialled (host, port, Host header, request target); a
request goes out as httpx wrote it (Host first, Content-Length last)."""

from __future__ import annotations

import asyncio

import httpx
import pytest
from hypothesis import given
from hypothesis import strategies as st

from behavegate.evidence import http_model
from behavegate.evidence.http_model import InvalidURL, parse_url

HOSTS = st.one_of(
    st.from_regex(r"[a-z][a-z0-9-]{0,12}(\.[a-z][a-z0-9-]{0,12}){0,3}", fullmatch=True),
    st.ip_addresses(v=4).map(str),
    st.ip_addresses(v=6).map(lambda address: f"[{address}]"),
)
PATHS = st.from_regex(r"(/[A-Za-z0-9._~!$&'()*+,;=:@-]{0,10}){0,4}", fullmatch=True)
QUERIES = st.one_of(st.just(""), st.from_regex(r"\?[A-Za-z0-9._~=&-]{0,16}", fullmatch=True))


@given(
    scheme=st.sampled_from(["http", "https", "HTTP"]),
    host=HOSTS,
    port=st.one_of(st.none(), st.integers(1, 65_535)),
    path=PATHS,
    query=QUERIES,
)
def test_an_ordinary_url_is_read_as_httpx_reads_it(scheme: str, host: str, port: int | None, path: str, query: str) -> None:
    text = f"{scheme}://{host}{'' if port is None else f':{port}'}{path}{query}"
    ours, theirs = parse_url(text), httpx.URL(text)
    assert (ours.scheme, ours.host, ours.port) == (theirs.scheme, theirs.host, theirs.port)
    assert ours.netloc == theirs.netloc
    assert ours.target == theirs.raw_path


@pytest.mark.parametrize(
    "text",
    [
        "http://[::1]evil.example/",  # urlsplit drops the text after the bracket
        "http://[fd00::1%@evil.example:80]:8080/",
        "http://user:pass@agent/",
        "http://agent/#fragment",
        "ftp://agent/",
        "http:///no-host",
        "http://agent:0/",
        "http://agent:70000/",
        "http://agent:port/",
        "http://ag ent/",
        "http://agént/",
        "http://agent\x00/",
        "http://[not-an-address]/",
        "http://a%2Fb/",
    ],
)
def test_what_cannot_be_dialled_as_written_is_refused(text: str) -> None:
    with pytest.raises(InvalidURL):
        parse_url(text)


def test_unsafe_path_characters_are_escaped_and_existing_escapes_kept() -> None:
    assert parse_url('http://h/p?q="<>').target == b"/p?q=%22%3C%3E"
    assert parse_url("http://h/a%2Fb%zz").target == b"/a%2Fb%25zz"
    assert parse_url("http://h").target == b"/"
    assert parse_url("http://h:80/").port is None and parse_url("https://h:443/").netloc == b"h"
    assert parse_url("http://h:/x").netloc == b"h"


def test_a_request_goes_out_with_host_first_and_its_length_last() -> None:
    url = parse_url("http://127.0.0.1:8080/v1/chat/completions")
    request = http_model.Request("POST", url, headers=[(b"Accept", b"application/json")], content=b"{}")
    assert request.headers.raw == [(b"Host", b"127.0.0.1:8080"), (b"Accept", b"application/json"), (b"Content-Length", b"2")]
    pinned = http_model.Request("POST", url, headers=[(b"Host", b"agent:8080")], content=b"{}")
    assert [name for name, _ in pinned.headers.raw] == [b"Host", b"Content-Length"]
    assert pinned.headers.get("host") == "agent:8080" and "HOST" in pinned.headers and "Cookie" not in pinned.headers


def test_a_body_that_can_be_read_once_is_refused_the_second_time() -> None:
    async def pieces() -> object:
        yield b"a"

    async def twice() -> None:
        request = http_model.Request("POST", parse_url("http://h/"), content=pieces())  # type: ignore[arg-type]
        assert [piece async for piece in request.stream] == [b"a"]
        with pytest.raises(http_model.StreamConsumed):
            [piece async for piece in request.stream]

    asyncio.run(twice())
