"""A request body in pieces (a conversation kept encoded) goes out in writes of up to
64 KiB: small pieces gathered, a large one cut, the bytes exactly the body's."""

from __future__ import annotations

import asyncio

from hypothesis import given
from hypothesis import strategies as st

from behavegate.evidence.transport import _CHUNK, _stream

PIECES = st.lists(st.sampled_from([0, 1, 7, 300, _CHUNK - 1, _CHUNK, _CHUNK + 1, 3 * _CHUNK + 5]), min_size=1, max_size=8)


def writes(pieces: tuple[bytes, ...]) -> list[bytes]:
    async def collect() -> list[bytes]:
        return [chunk async for chunk in _stream(pieces)]

    return asyncio.run(collect())


@given(PIECES)
def test_the_writes_are_the_body_each_at_most_64_kib_and_none_empty(sizes: list[int]) -> None:
    pieces = tuple(bytes([index % 251]) * size for index, size in enumerate(sizes))
    sent = writes(pieces)
    assert b"".join(sent) == b"".join(pieces)
    assert all(0 < len(chunk) <= _CHUNK for chunk in sent)
    # As few writes as 64 KiB allows, give or take one per piece boundary.
    assert len(sent) <= sum(len(p) for p in pieces) // _CHUNK + len(pieces) + 1


def test_a_conversation_of_many_small_messages_goes_in_one_write() -> None:
    messages = tuple(b'{"role": "user", "content": "hi"}' for _ in range(200))
    assert writes((b'{"messages": [', *messages, b"]}")) == [b"".join((b'{"messages": [', *messages, b"]}"))]
