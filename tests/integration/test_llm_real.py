"""OpenAICompatModel against the real llama.cpp server (xllamacpp + SmolLM2-135M)."""

from __future__ import annotations

from contextlib import aclosing
from pathlib import Path

import pytest
from openmono.llm import (
    AuthError,
    ChatMessage,
    ContextOverflowError,
    Done,
    LLMSettings,
    OpenAICompatModel,
    StreamEvent,
    TextDelta,
    Usage,
)

from tests.support.llama import LlamaServer

pytestmark = pytest.mark.integration


def settings(llama: LlamaServer, endpoint: str | None = None) -> LLMSettings:
    # A generous first-token guard: other suites share the 2 cores with this tiny model.
    return LLMSettings(
        endpoint=endpoint or llama.url, api_key=llama.api_key, first_token_timeout_s=120
    )


async def test_probe_gives_the_real_model_and_per_slot_context(llama: LlamaServer) -> None:
    async with OpenAICompatModel(settings(llama)) as m:
        info = await m.probe()
    assert info.source == "props"
    assert Path(info.model).name == "SmolLM2-135M-Instruct.Q4_1.gguf"
    assert info.n_ctx == 1024  # the fixture's 2048 tokens over 2 slots


async def test_a_real_answer_streams_as_text_deltas_with_usage(llama: LlamaServer) -> None:
    events: list[StreamEvent] = []
    messages = [ChatMessage(role="user", content="Say hello in one short sentence.")]
    model = OpenAICompatModel(settings(llama, endpoint=llama.url + "/v1/"))
    async with model as m, aclosing(m.stream(messages, max_tokens=12, temperature=0)) as stream:
        async for ev in stream:
            events.append(ev)
    deltas = [e for e in events if isinstance(e, TextDelta)]
    assert len(deltas) >= 2 and "".join(d.text for d in deltas).strip()
    usage, done = events[-2], events[-1]
    assert isinstance(usage, Usage) and isinstance(done, Done)
    assert usage.prompt_tokens > 0 and 0 < usage.completion_tokens <= 12
    assert usage.timings is not None and usage.timings["predicted_n"] == usage.completion_tokens
    assert done.finish_reason in ("stop", "length")


async def test_a_real_context_overflow(llama: LlamaServer) -> None:
    messages = [ChatMessage(role="user", content="word " * 2000)]
    async with OpenAICompatModel(settings(llama)) as m:
        with pytest.raises(ContextOverflowError) as info:
            async with aclosing(m.stream(messages, max_tokens=4)) as stream:
                async for _ in stream:
                    pass
    assert info.value.n_ctx == 1024
    assert info.value.n_prompt_tokens is not None and info.value.n_prompt_tokens > 1024


async def test_a_real_wrong_key(llama: LlamaServer) -> None:
    async with OpenAICompatModel(LLMSettings(endpoint=llama.url, api_key="nope")) as m:
        with pytest.raises(AuthError, match="Invalid API Key"):
            await m.probe()
        with pytest.raises(AuthError):
            async with aclosing(m.stream([ChatMessage(role="user", content="x")])) as stream:
                async for _ in stream:
                    pass
