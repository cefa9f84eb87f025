"""Token counts read off the end of recorded llama-server responses, and the token records."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from openmono_contracts.gatewaykeys import AccessRecord, TokenRecord
from openmono_keys.tokens import TAIL_BYTES, Counts, Tail, TokenLog, counts
from openmono_keys.usage import read_token_records, record_files, summarize

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "llama"


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        # streams that asked for usage: its numbers, the cache from prompt_tokens_details
        ("text.sse", Counts(37, 14, 0)),
        ("tool_call_prefilled.sse", None),
        # a plain body: usage sits between choices and timings
        ("tool_call_prefilled_nostream.json", Counts(229, 1, 199)),
    ],
)
def test_counts_of_recorded_responses(name: str, expected: Counts | None) -> None:
    body = (FIXTURES / name).read_bytes()
    found = counts(body[-TAIL_BYTES:])
    if expected is None:  # compare with the recording's own last usage object
        last = [line for line in body.decode().splitlines() if '"usage"' in line][-1]
        usage = json.loads(last.removeprefix("data: "))["usage"]
        expected = Counts(
            usage["prompt_tokens"],
            usage["completion_tokens"],
            usage["prompt_tokens_details"]["cached_tokens"],
        )
    assert found == expected


def test_timings_alone_give_the_counts() -> None:
    # a stream without include_usage: llama-server's last event has timings only
    last = b'data: {"choices":[],"timings":{"cache_n":24,"prompt_n":17,"prompt_ms":63.9,'
    last += b'"predicted_n":14,"predicted_ms":117.5}}\n\ndata: [DONE]\n\n'
    assert counts(last) == Counts(41, 14, 24)
    # llama-server's own /completion
    own = b'{"content":"x","tokens_predicted":5,"tokens_evaluated":12,"prompt":"p"}'
    assert counts(own) == Counts(12, 5, None)
    assert counts(b"data: [DONE]\n\n") == Counts()


def test_what_the_model_writes_cannot_fake_the_counts() -> None:
    # inside a JSON string every quote is escaped: a reply that spells out a usage object is text
    reply = json.dumps({"choices": [{"delta": {"content": '"prompt_tokens": 999999, '}}]})
    real = json.dumps({"choices": [], "usage": {"prompt_tokens": 7, "completion_tokens": 3}})
    body = f"data: {reply}\n\ndata: {real}\n\n".encode()
    assert counts(body) == Counts(7, 3, None)
    assert counts(f"data: {reply}\n\n".encode()) == Counts()


def test_the_tail_keeps_the_end_of_a_long_body() -> None:
    tail = Tail()
    for i in range(1000):
        tail.add(f"data: {{'n': {i}}}\n\n".encode() * 10)
    tail.add(b'data: {"usage":{"prompt_tokens":5,"completion_tokens":6}}\n\n')
    assert len(tail.bytes()) <= 2 * TAIL_BYTES
    assert counts(tail.bytes()) == Counts(5, 6, None)


def test_the_token_log_rolls_by_size_and_usage_adds_it_to_the_rows(tmp_path: Path) -> None:
    log = TokenLog(tmp_path, roll_bytes=4096, keep=2)
    for i in range(100):
        log.write(
            TokenRecord(
                ts=1000.0 + i,
                key="laptop-anna",
                route="/v1/chat/completions",
                status=200,
                prompt_tokens=10,
                completion_tokens=2,
                cached_tokens=4,
            )
        )
    log.write(TokenRecord(ts=2000.0, key="laptop-anna", route="/v1/chat/completions", status=200))
    log.close()
    with (tmp_path / "tokens.log").open("a") as fh:
        fh.write('{"ts": 3000, "key": "x", "rou\n')  # a line cut by a crash
    files = record_files(tmp_path, "tokens")
    assert [p.name for p in files][-1] == "tokens.log" and len(files) == 3  # keep=2 rolled
    assert all(p.stat().st_mode & 0o777 == 0o600 for p in files)
    kept = [r for r in read_token_records(files) if r is not None]
    assert 0 < len(kept) < 101
    access = [
        AccessRecord(ts=1000.0 + i, status=200, key="laptop-anna", route="/v1/chat/completions")
        for i in range(100)
    ]
    report = summarize(access, since=None, tokens=read_token_records(files))
    (row,) = report.rows
    counted = len(kept) - 1  # the record without counts is not one
    assert row.requests == 100 and row.counted == counted
    assert (row.prompt_tokens, row.completion_tokens, row.cached_tokens) == (
        10 * counted,
        2 * counted,
        4 * counted,
    )
    assert report.unreadable == 1
    # --since applies to the counts too
    late = summarize([], since=1090.0, tokens=read_token_records(files))
    assert late.rows[0].counted == sum(1 for r in kept if r.ts >= 1090 and r.prompt_tokens)


def test_requests_that_miss_together_share_one_lookup_and_none_is_refused() -> None:
    """The compose case: the first requests to replicas found by name arrive at once. A miss that
    came while a lookup ran used to be refused (502) for the rest of that second."""
    import asyncio

    from openmono_keys.tapallow import Allowed

    async def run() -> tuple[list[bool], bool]:
        allowed = Allowed(["localhost:8080"])
        lookups = 0
        resolve = allowed._resolve

        async def counted() -> set[str]:
            nonlocal lookups
            lookups += 1
            await asyncio.sleep(0.05)  # a lookup takes a while; the others arrive meanwhile
            return await resolve()

        allowed._resolve = counted  # type: ignore[method-assign]
        found = await asyncio.gather(*(allowed.check("127.0.0.1:8080") for _ in range(20)))
        assert lookups <= 2
        return list(found), await allowed.check("10.0.0.1:8080")

    found, unlisted = asyncio.run(run())
    assert found == [True] * 20
    assert unlisted is False
