"""The SSE parser, fed recorded llama.cpp streams in every possible slicing and with edge cases."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from openmono.llm._sse import SSEMessage, SSEParser

HERE = Path(__file__).resolve().parents[1] / "fixtures" / "llama"
SHARED = Path(__file__).resolve().parents[3] / "shared" / "fixtures" / "llama-server"
RECORDED = sorted(HERE.glob("*.sse"))


def parse(raw: bytes, sizes: list[int] | None = None) -> list[SSEMessage]:
    p = SSEParser()
    out: list[SSEMessage] = []
    i = 0
    for size in sizes or [len(raw)]:
        out += p.feed(raw[i : i + size])
        i += size
    out += p.feed(raw[i:])
    return out + p.close()


def test_recorded_fixtures_exist() -> None:
    names = {p.name for p in RECORDED}
    assert {"text.sse", "tool_call_cut.sse", "reasoning.sse", "midstream_error.sse"} <= names


@pytest.mark.parametrize("path", RECORDED, ids=lambda p: p.name)
def test_recorded_stream_parses_the_same_in_any_slicing(path: Path) -> None:
    raw = path.read_bytes()
    whole = parse(raw)
    assert whole, "no message parsed"
    byte_by_byte = parse(raw, [1] * len(raw))
    rng = random.Random(path.name)
    random_cuts = parse(raw, [rng.randint(1, 40) for _ in range(len(raw) // 10)])
    assert byte_by_byte == whole
    assert random_cuts == whole
    for msg in whole:
        if msg.event == "message" and msg.data != "[DONE]":
            assert isinstance(json.loads(msg.data), dict)


def test_text_stream_ends_with_done_and_every_frame_is_json() -> None:
    msgs = parse((HERE / "text.sse").read_bytes())
    assert msgs[-1] == SSEMessage("[DONE]")
    usage = json.loads(msgs[-2].data)
    assert usage["choices"] == [] and "timings" in usage and usage["usage"]["completion_tokens"] > 0


def test_shared_fixture_parses() -> None:
    if not SHARED.is_dir():
        pytest.skip(f"shared fixtures not found at {SHARED}")
    raw = (SHARED / "stream_text.sse").read_bytes()
    msgs = parse(raw, [3] * (len(raw) // 3))
    assert msgs[-1].data == "[DONE]"
    assert len(msgs) == raw.count(b"data: ")


def test_bare_error_line_is_an_error_message() -> None:
    msgs = parse((HERE / "midstream_error.sse").read_bytes())
    assert msgs[-1].event == "error"
    assert json.loads(msgs[-1].data)["error"]["code"] == 500
    assert all(m.event == "message" for m in msgs[:-1])


def test_comments_are_keepalives_and_ignored() -> None:
    raw = b': keep-alive\n\n:ping\ndata: {"a": 1}\n: inside\n\n: bye\n\n'
    assert parse(raw) == [SSEMessage('{"a": 1}')]


def test_multiline_data_is_joined_with_newlines() -> None:
    raw = b'data: {"a":\ndata:  1}\n\n'
    assert parse(raw) == [SSEMessage('{"a":\n 1}')]


@pytest.mark.parametrize("eol", [b"\n", b"\r\n", b"\r"])
def test_every_line_ending(eol: bytes) -> None:
    raw = b"data: one" + eol + eol + b"event: custom" + eol + b"data: two" + eol + eol
    expected = [SSEMessage("one"), SSEMessage("two", "custom")]
    assert parse(raw) == expected
    assert parse(raw, [1] * len(raw)) == expected


def test_crlf_split_across_reads_is_one_line_end() -> None:
    p = SSEParser()
    assert p.feed(b"data: x\r") == []
    assert p.feed(b"\n\r") == []
    assert p.feed(b"\n") == [SSEMessage("x")]


def test_multibyte_utf8_split_across_reads() -> None:
    raw = 'data: {"t": "héllo ✓ 日本"}\n\n'.encode()
    assert parse(raw, [1] * len(raw)) == [SSEMessage('{"t": "héllo ✓ 日本"}')]


def test_unicode_line_separators_inside_json_do_not_split_lines() -> None:
    raw = 'data: {"t": "a\u2028b\x85c"}\n\n'.encode()
    assert parse(raw) == [SSEMessage('{"t": "a\u2028b\x85c"}')]


def test_last_message_without_blank_line_is_flushed_on_close() -> None:
    assert parse(b"data: [DONE]") == [SSEMessage("[DONE]")]
    assert parse(b"data: a\n") == [SSEMessage("a")]


def test_field_without_space_and_without_colon() -> None:
    assert parse(b"data:x\n\ndata\n\n") == [SSEMessage("x"), SSEMessage("")]


def test_id_and_retry_are_ignored() -> None:
    assert parse(b"id: 7\nretry: 100\ndata: z\n\n") == [SSEMessage("z")]
