"""OpenAICompatModel against the scripted OpenAI-compatible server (real HTTP + SSE on loopback)."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from contextlib import aclosing
from pathlib import Path
from typing import Any

import pytest
from openmono.llm import (
    AuthError,
    ChatMessage,
    ContextOverflowError,
    FirstTokenTimeout,
    HTTPStatusError,
    LLMSettings,
    Model,
    OpenAICompatModel,
    PromptedTools,
    ReasoningDelta,
    StallTimeout,
    StreamError,
    StreamEvent,
    TextDelta,
    ToolCallComplete,
    ToolSpec,
    TransportError,
    Usage,
)

from tests.support.procs import free_port
from tests.support.scripted_llm import Call, ScriptedLLM, Turn

pytestmark = pytest.mark.integration

FIX = Path(__file__).resolve().parents[1] / "fixtures" / "llama"
KEY = "sk-scripted"
HI = [ChatMessage(role="user", content="hi")]
READ = ToolSpec(
    name="FileRead",
    description="Read a file",
    parameters={
        "type": "object",
        "properties": {"file_path": {"type": "string"}, "limit": {"type": "integer"}},
        "required": ["file_path"],
    },
)
Factory = Callable[..., ScriptedLLM]


def model(llm: ScriptedLLM, **kw: Any) -> OpenAICompatModel:
    settings: dict[str, Any] = {
        "endpoint": llm.url + "/v1",
        "api_key": KEY,
        "backoff_initial_s": 0.05,
        "backoff_max_s": 0.2,
    }
    settings.update(kw)
    return OpenAICompatModel(LLMSettings(**settings))


async def collect(
    m: Model, tools: Sequence[ToolSpec] | None = None, **kw: Any
) -> list[StreamEvent]:
    out: list[StreamEvent] = []
    async with aclosing(m.stream(HI, tools, **kw)) as events:
        async for ev in events:
            out.append(ev)
    return out


def text_of(events: list[Any]) -> str:
    return "".join(e.text for e in events if isinstance(e, TextDelta))


async def test_text_reasoning_usage_and_the_request_sent(scripted_llm: Factory) -> None:
    llm = scripted_llm([Turn(reasoning="think hard", text="Hello there, world.")], api_key=KEY)
    async with model(llm) as m:
        assert isinstance(m, Model)
        events = await collect(m, [READ], max_tokens=64, temperature=0.2)
    assert text_of(events) == "Hello there, world."
    assert "".join(e.text for e in events if isinstance(e, ReasoningDelta)) == "think hard"
    assert isinstance(events[-2], Usage) and events[-2].timings
    assert events[-1].kind == "done" and events[-1].finish_reason == "stop"
    (req,) = llm.chat_requests
    assert req.headers["authorization"] == f"Bearer {KEY}"
    assert req.path == "/v1/chat/completions"
    body = req.json
    assert body["stream"] is True and body["stream_options"] == {"include_usage": True}
    assert body["messages"] == [{"role": "user", "content": "hi"}]
    assert body["tools"][0]["function"]["name"] == "FileRead"
    assert (body["max_tokens"], body["temperature"]) == (64, 0.2)


async def test_native_tool_calls_assembled_from_fragments(scripted_llm: Factory) -> None:
    calls = [
        Call("FileRead", {"file_path": "a.py", "limit": "10"}, id="c-1", fragments=5),
        Call("FileRead", {"file_path": "b.py"}, fragments=2),
    ]
    llm = scripted_llm([Turn(text="Reading both.", tool_calls=calls)], api_key=KEY)
    async with model(llm) as m:
        events = await collect(m, [READ])
    done = [e for e in events if isinstance(e, ToolCallComplete)]
    assert [(c.index, c.name) for c in done] == [(0, "FileRead"), (1, "FileRead")]
    assert done[0].id == "c-1" and done[1].id
    assert json.loads(done[0].arguments) == {"file_path": "a.py", "limit": 10}
    assert json.loads(done[1].arguments) == {"file_path": "b.py"}
    assert events[-1].finish_reason == "tool_calls"  # type: ignore[union-attr]


async def test_text_written_calls_are_recovered_by_the_tool_protocol(scripted_llm: Factory) -> None:
    text = "On it.\n<tool_call>\n<function=FileRead>\n<parameter=file_path>\na.py\n</parameter>\n"
    text += "</function>\n</tool_call>"
    llm = scripted_llm(
        [Turn(text=text, chunk_chars=5), Turn(text=text, chunk_chars=5)], api_key=KEY
    )
    async with model(llm) as m:
        plain = await collect(m, [READ])
        wrapped = await collect(PromptedTools(m, m.settings), [READ])
    assert text_of(plain) == text and not any(isinstance(e, ToolCallComplete) for e in plain)
    kinds = [e.kind for e in wrapped]
    assert kinds[-3:] == ["tool_call", "usage", "done"] and text_of(wrapped) == "On it.\n"
    call = wrapped[-3]
    assert isinstance(call, ToolCallComplete) and call.source == "text"
    assert json.loads(call.arguments) == {"file_path": "a.py"}


async def test_recorded_llama_streams_replayed_over_http(scripted_llm: Factory) -> None:
    llm = scripted_llm(
        [
            Turn.replay(FIX / "text.sse", replay_chunk_bytes=17),
            Turn.replay(FIX / "tool_call_cut.sse", replay_chunk_bytes=5),
        ],
        api_key=KEY,
    )
    async with model(llm) as m:
        events = await collect(m)
        assert text_of(events).startswith("Hello") and isinstance(events[-2], Usage)
        events = await collect(m, [READ])
    (call,) = [e for e in events if isinstance(e, ToolCallComplete)]
    assert call.truncated and call.error


async def test_retry_on_429_honours_retry_after(scripted_llm: Factory) -> None:
    llm = scripted_llm([Turn.http_error(429, retry_after=1), Turn(text="ok")], api_key=KEY)
    async with model(llm) as m:
        t0 = time.monotonic()
        events = await collect(m)
    assert text_of(events) == "ok"
    first, second = llm.chat_requests
    gap = second.at - first.at
    assert 0.9 <= gap < 10, gap  # the server's 1 s, not our 0.05 s backoff
    assert time.monotonic() - t0 >= 0.9


async def test_retry_on_503_and_500_with_backoff(scripted_llm: Factory) -> None:
    llm = scripted_llm(
        [Turn.http_error(503), Turn.http_error(500), Turn(text="third time")], api_key=KEY
    )
    async with model(llm) as m:
        events = await collect(m)
    assert text_of(events) == "third time"
    assert len(llm.chat_requests) == 3


async def test_retries_are_capped(scripted_llm: Factory) -> None:
    llm = scripted_llm([Turn.http_error(503)] * 5, api_key=KEY)
    async with model(llm, max_retries=2) as m:
        with pytest.raises(HTTPStatusError) as info:
            await collect(m)
    assert info.value.status == 503
    assert len(llm.chat_requests) == 3


async def test_retry_after_a_dropped_connection_before_the_first_token(
    scripted_llm: Factory,
) -> None:
    # Headers and the role chunk arrive, then the connection is cut: nothing was shown yet.
    llm = scripted_llm([Turn(text="lost", drop_after=1), Turn(text="found")], api_key=KEY)
    async with model(llm) as m:
        events = await collect(m)
    assert text_of(events) == "found"
    assert len(llm.chat_requests) == 2


async def test_no_retry_once_a_token_was_yielded(scripted_llm: Factory) -> None:
    llm = scripted_llm(
        [Turn(text="partial answer here", chunk_chars=4, drop_after=3), Turn(text="never")],
        api_key=KEY,
    )
    got: list[StreamEvent] = []
    async with model(llm) as m:
        with pytest.raises(TransportError, match="mid-stream"):
            async with aclosing(m.stream(HI)) as events:
                async for ev in events:
                    got.append(ev)
    assert text_of(got) == "partial "  # role chunk, "part", "ial ", then the cut
    assert len(llm.chat_requests) == 1


async def test_no_retry_after_the_first_token_even_for_an_error_frame(
    scripted_llm: Factory,
) -> None:
    llm = scripted_llm(
        [Turn(text="abcdefgh", chunk_chars=2, error_after=3, error_style="bare"), Turn(text="x")],
        api_key=KEY,
    )
    got: list[StreamEvent] = []
    async with model(llm) as m:
        with pytest.raises(StreamError, match="scripted failure") as info:
            async with aclosing(m.stream(HI)) as events:
                async for ev in events:
                    got.append(ev)
    assert info.value.code == 500
    assert text_of(got) == "abcd"
    assert len(llm.chat_requests) == 1


async def test_data_error_frame_before_any_token_is_not_retried(scripted_llm: Factory) -> None:
    llm = scripted_llm([Turn(text="x", error_after=0), Turn(text="y")], api_key=KEY)
    async with model(llm) as m:
        with pytest.raises(StreamError):
            await collect(m)
    assert len(llm.chat_requests) == 1


async def test_first_token_timeout_before_headers(scripted_llm: Factory) -> None:
    llm = scripted_llm([Turn(text="late", delay_s=30)], api_key=KEY)
    async with model(llm, first_token_timeout_s=0.5) as m:
        t0 = time.monotonic()
        with pytest.raises(FirstTokenTimeout) as info:
            await collect(m)
    assert 0.4 < time.monotonic() - t0 < 10
    assert info.value.timeout_s == 0.5
    assert len(llm.chat_requests) == 1  # a timeout is not retried


async def test_first_token_timeout_covers_keepalives_before_the_first_token(
    scripted_llm: Factory,
) -> None:
    # Keep-alive bytes before any token do not extend the first-token deadline.
    turn = Turn(text="late", stall_after=1, stall_s=30, stall_keepalive_s=0.1)
    llm = scripted_llm([turn], api_key=KEY)
    async with model(llm, first_token_timeout_s=0.8, stall_timeout_s=0.3) as m:
        with pytest.raises(FirstTokenTimeout):
            await collect(m)


async def test_stall_timeout_after_tokens(scripted_llm: Factory) -> None:
    llm = scripted_llm(
        [Turn(text="one two three", chunk_chars=4, stall_after=3, stall_s=30)], api_key=KEY
    )
    got: list[StreamEvent] = []
    async with model(llm, stall_timeout_s=0.5) as m:
        t0 = time.monotonic()
        with pytest.raises(StallTimeout) as info:
            async with aclosing(m.stream(HI)) as events:
                async for ev in events:
                    got.append(ev)
    assert 0.4 < time.monotonic() - t0 < 10
    assert text_of(got) == "one two "
    assert info.value.timeout_s == 0.5


async def test_keepalives_keep_a_slow_stream_alive(scripted_llm: Factory) -> None:
    # Silent for 2.5 s in all, but a keep-alive every 0.1 s: well inside the 1 s stall limit.
    turn = Turn(text="slow but alive", chunk_chars=5, stall_after=2, stall_s=2.5)
    turn.stall_keepalive_s = 0.1
    llm = scripted_llm([turn], api_key=KEY)
    async with model(llm, stall_timeout_s=1.0) as m:
        events = await collect(m)
    assert text_of(events) == "slow but alive"


async def test_context_overflow_gives_the_numbers_and_is_not_retried(
    scripted_llm: Factory,
) -> None:
    llm = scripted_llm([Turn.context_overflow(9000, 4096), Turn(text="x")], api_key=KEY)
    async with model(llm) as m:
        with pytest.raises(ContextOverflowError) as info:
            await collect(m)
    assert (info.value.n_prompt_tokens, info.value.n_ctx) == (9000, 4096)
    assert len(llm.chat_requests) == 1


async def test_wrong_key_is_a_clear_auth_error(scripted_llm: Factory) -> None:
    llm = scripted_llm([Turn(text="x")], api_key=KEY)
    async with model(llm, api_key="wrong") as m:
        with pytest.raises(AuthError) as info:
            await collect(m)
    msg = str(info.value)
    assert info.value.status == 401
    assert "Invalid API Key" in msg and "not the one the server expects" in msg
    assert llm.served == 0 and len(llm.chat_requests) == 1  # no retry


async def test_missing_key_says_so(scripted_llm: Factory) -> None:
    llm = scripted_llm([], api_key=KEY)
    async with model(llm, api_key=None) as m:
        with pytest.raises(AuthError, match="no API key is configured"):
            await collect(m)
        with pytest.raises(AuthError):
            await m.probe()


async def test_other_4xx_is_an_http_status_error_without_retry(scripted_llm: Factory) -> None:
    llm = scripted_llm([Turn.http_error(422, body={"error": {"message": "bad field"}})])
    async with model(llm) as m:
        with pytest.raises(HTTPStatusError, match="bad field") as info:
            await collect(m)
    assert info.value.status == 422 and len(llm.chat_requests) == 1


async def test_connection_refused_is_retried_then_a_transport_error() -> None:
    port = free_port()
    settings = LLMSettings(
        endpoint=f"http://127.0.0.1:{port}", max_retries=2, backoff_initial_s=0.01
    )
    async with OpenAICompatModel(settings) as m:
        with pytest.raises(TransportError, match="cannot reach"):
            await collect(m)
        with pytest.raises(TransportError):
            await m.probe()


async def test_stream_closed_without_finish_is_an_error(scripted_llm: Factory) -> None:
    # A token, then a clean close: no finish_reason, no [DONE]. The answer is incomplete.
    frame = b'data: {"choices":[{"index":0,"delta":{"content":"abc"},"finish_reason":null}]}\n\n'
    llm = scripted_llm([lambda request: Turn.replay(frame)], api_key=KEY)
    async with model(llm) as m:
        with pytest.raises(StreamError, match="before the model finished"):
            await collect(m)
    assert llm.chat_requests[0].json["messages"] == [{"role": "user", "content": "hi"}]


async def test_breaking_out_early_closes_the_stream(scripted_llm: Factory) -> None:
    llm = scripted_llm(
        [Turn(text="x" * 400, chunk_chars=1, chunk_delay_s=0.01), Turn(text="next")],
        api_key=KEY,
    )
    async with model(llm) as m:
        async with aclosing(m.stream(HI)) as events:
            async for ev in events:
                if isinstance(ev, TextDelta):
                    break
        # The same client keeps working for the next turn.
        assert text_of(await collect(m)) == "next"


async def test_probe_reads_props_with_the_bearer(scripted_llm: Factory) -> None:
    llm = scripted_llm([Turn(text="x")], api_key=KEY, n_ctx=8192, model="/m/qwen.gguf")
    async with model(llm) as m:
        info = await m.probe()
        assert (info.model, info.n_ctx, info.source) == ("/m/qwen.gguf", 8192, "props")
        await collect(m)
    props = [r for r in llm.requests if r.path == "/props"]
    assert props and props[0].headers["authorization"] == f"Bearer {KEY}"
    assert llm.chat_requests[0].json["model"] == "/m/qwen.gguf"  # the probed name is sent


async def test_probe_falls_back_to_v1_models(scripted_llm: Factory) -> None:
    llm = scripted_llm([], api_key=KEY, n_ctx=2048, props=False)
    async with model(llm) as m:
        info = await m.probe()
    assert (info.model, info.n_ctx, info.source) == (llm.model, 2048, "models")
    # then the tool-support probe (no /props to say it): it failed here, so support is unknown
    paths = [r.path for r in llm.requests]
    assert paths == ["/props", "/v1/models", "/v1/chat/completions"]
    assert (info.supports_tools, info.tool_protocol) == (None, "native")


async def test_configured_model_name_wins(scripted_llm: Factory) -> None:
    llm = scripted_llm([Turn(text="x")], api_key=KEY)
    async with model(llm, model="my-alias") as m:
        await m.probe()
        await collect(m)
    assert llm.chat_requests[0].json["model"] == "my-alias"


async def test_probe_on_recorded_llama_bodies(scripted_llm: Factory) -> None:
    props = json.loads((FIX / "props.json").read_text())
    llm = scripted_llm([], api_key=KEY, props_json=props)
    async with model(llm) as m:
        info = await m.probe()
    assert (info.model, info.n_ctx) == ("/models/SmolLM2-135M-Instruct.Q4_1.gguf", 512)
    shared = FIX.parents[3] / "shared" / "fixtures" / "llama-server" / "v1_models.json"
    if not shared.is_file():
        pytest.skip(f"shared fixtures not found at {shared}")
    llm = scripted_llm([], api_key=KEY, props=False, models_json=json.loads(shared.read_text()))
    async with model(llm) as m:
        info = await m.probe()
    assert (info.model, info.n_ctx, info.source) == (
        "/models/SmolLM2-135M-Instruct.Q4_1.gguf",
        512,
        "models",
    )
