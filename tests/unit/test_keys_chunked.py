"""The token tap's reading of chunked framing (openmono_keys._chunked): it passes a replica's
stream on as the replica's own bytes, so where the body ends and what its data is must come out
as h11 (the tap's parser for everything else) reads them, however the bytes arrive."""

from __future__ import annotations

import pytest
from openmono_keys._chunked import MAX_LINE, ChunkedEnd

EVENTS = [b'data: {"a": 1}\n\n', b"x" * 300, b"data: [DONE]\n\n"]
# sizes in both cases, an extension, a trailer: all of what RFC 9112 lets a replica send
BODY = (
    b"%x\r\n%s\r\n" % (len(EVENTS[0]), EVENTS[0])
    + b"%x;name=value\r\n%s\r\n" % (len(EVENTS[1]), EVENTS[1])
    + b"%X\r\n%s\r\n" % (len(EVENTS[2]), EVENTS[2])
    + b"0\r\nX-Trailer: 1\r\n\r\n"
)


def _feed(pieces: list[bytes]) -> tuple[bytes, int | None, int]:
    """The data seen, where the end was found (in its piece) and in which piece."""
    seen: list[bytes] = []
    scan = ChunkedEnd(seen.append)
    for n, piece in enumerate(pieces):
        end = scan.feed(piece)
        if end is not None:
            return b"".join(seen), end, n
    return b"".join(seen), None, -1


@pytest.mark.parametrize("cut", range(1, len(BODY)))
def test_the_end_and_the_data_are_found_wherever_the_reads_split(cut: int) -> None:
    data, end, piece = _feed([BODY[:cut], BODY[cut:]])
    assert data == b"".join(EVENTS)
    assert (piece, end) == (1, len(BODY) - cut)


def test_one_byte_at_a_time() -> None:
    data, end, piece = _feed([BODY[i : i + 1] for i in range(len(BODY))])
    assert data == b"".join(EVENTS) and (piece, end) == (len(BODY) - 1, 1)


def test_bytes_after_the_end_are_not_the_bodys() -> None:
    data, end, _ = _feed([BODY + b"HTTP/1.1 200 OK\r\n"])
    assert end == len(BODY) and data == b"".join(EVENTS)


def test_an_unfinished_body_has_no_end() -> None:
    assert _feed([BODY[:-1]])[1] is None


@pytest.mark.parametrize(
    "body",
    [
        b"zz\r\nab\r\n",  # not a size
        b"2\r\nabc\r\n",  # more data than its size
        b"2\nab\r\n",  # a bare LF
        b"-1\r\n",
        b"1" * 17 + b"\r\n",  # a size past 16 hex digits
        b"2;" + b"e" * MAX_LINE + b"\r\n",  # a line past the bound
    ],
)
def test_bad_framing_is_refused(body: bytes) -> None:
    with pytest.raises(ValueError):
        _feed([body])


def test_nothing_may_follow_the_end() -> None:
    scan = ChunkedEnd(lambda _: None)
    assert scan.feed(b"0\r\n\r\n") == 5
    with pytest.raises(ValueError):
        scan.feed(b"1")
