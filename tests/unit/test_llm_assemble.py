"""Chunks to events: fragment assembly per index, reasoning, usage, errors, truncation."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from openmono.llm import (
    ContextOverflowError,
    Done,
    ReasoningDelta,
    StreamError,
    StreamEvent,
    TextDelta,
    ToolCallComplete,
    ToolCallDelta,
    ToolSpec,
    Usage,
)
from openmono.llm._assemble import TurnAssembler
from openmono.llm._jsoncut import json_cut_off
from openmono.llm._sse import SSEParser
from openmono.llm._wire import frame_error

FIX = Path(__file__).resolve().parents[1] / "fixtures" / "llama"
READ = ToolSpec(
    name="FileRead",
    parameters={
        "type": "object",
        "properties": {"file_path": {"type": "string"}, "limit": {"type": "integer"}},
    },
)
WRITE = ToolSpec(
    name="FileWrite",
    parameters={
        "type": "object",
        "properties": {"file_path": {"type": "string"}, "content": {"type": "string"}},
    },
)


def run_sse(raw: bytes, tools: list[ToolSpec] | None = None) -> list[StreamEvent]:
    """What the client does with a body: parse, feed, finish (error frames raise)."""
    asm = TurnAssembler(tools)
    parser = SSEParser()
    events: list[StreamEvent] = []
    for msg in parser.feed(raw) + parser.close():
        if msg.event == "error":
            raise frame_error(msg.data)
        if msg.data == "[DONE]":
            break
        events += asm.feed(json.loads(msg.data))
    return events + asm.finish()


def chunk(delta: dict[str, Any], finish: str | None = None, **top: Any) -> dict[str, Any]:
    return {"choices": [{"index": 0, "delta": delta, "finish_reason": finish}], **top}


def frag(index: int | None, args: str, id: str | None = None, name: str | None = None) -> dict:
    tc: dict[str, Any] = {"function": {"arguments": args}}
    if index is not None:
        tc["index"] = index
    if id:
        tc["id"] = id
    if name:
        tc["function"]["name"] = name
    return chunk({"tool_calls": [tc]})


def feed_all(chunks: list[dict[str, Any]], tools: list[ToolSpec] | None = None) -> list[Any]:
    asm = TurnAssembler(tools)
    out: list[Any] = []
    for c in chunks:
        out += asm.feed(c)
    return out + asm.finish()


def completes(events: list[Any]) -> list[ToolCallComplete]:
    return [e for e in events if isinstance(e, ToolCallComplete)]


def test_recorded_text_stream() -> None:
    events = run_sse((FIX / "text.sse").read_bytes())
    text = "".join(e.text for e in events if isinstance(e, TextDelta))
    assert text.startswith("Hello") and text.endswith(".")
    usage, done = events[-2], events[-1]
    assert isinstance(usage, Usage) and isinstance(done, Done)
    deltas = sum(isinstance(e, TextDelta) for e in events)
    assert usage.completion_tokens in (deltas, deltas + 1)  # + the end-of-generation token
    assert usage.prompt_tokens > 0
    assert usage.timings is not None and usage.timings["predicted_per_second"] > 0
    assert done.finish_reason == "stop"


def test_recorded_length_stream() -> None:
    events = run_sse((FIX / "text_length.sse").read_bytes())
    assert events[-1] == Done(finish_reason="length")


def test_recorded_reasoning_stream_separates_thinking() -> None:
    events = run_sse((FIX / "reasoning.sse").read_bytes())
    kinds = [e.kind for e in events if isinstance(e, TextDelta | ReasoningDelta)]
    assert kinds[:5] == ["reasoning"] * 5
    assert "reasoning" not in kinds[5:] and "text" in kinds[5:]


def test_recorded_prefilled_call_streams_name_without_arguments() -> None:
    # llama.cpp quirk (see fixtures README): the prefilled arguments are never streamed.
    events = run_sse((FIX / "tool_call_prefilled.sse").read_bytes(), [READ])
    (call,) = completes(events)
    assert call.name == "FileRead" and call.arguments == "{}" and call.error is None
    assert call.id and events[-1] == Done(finish_reason="length")


def test_recorded_cut_call_is_flagged_truncated_never_run() -> None:
    events = run_sse((FIX / "tool_call_cut.sse").read_bytes(), [READ])
    deltas = [e for e in events if isinstance(e, ToolCallDelta)]
    assert deltas[0].name == "FileRead" and deltas[0].id
    assert all(d.name is None and d.id is None for d in deltas[1:])
    (call,) = completes(events)
    assert call.truncated and call.error and "NOT run" in call.error


def test_recorded_midstream_errors_raise_after_the_tokens() -> None:
    for name in ("midstream_error.sse", "midstream_error_data.sse"):
        with pytest.raises(StreamError, match="decode error") as info:
            run_sse((FIX / name).read_bytes())
        assert info.value.code == 500


def test_fragments_assembled_per_index_even_interleaved() -> None:
    events = feed_all(
        [
            frag(0, '{"file_', id="a", name="FileRead"),
            frag(1, "", id="b", name="FileRead"),
            frag(1, '{"file_path": "two.py"'),
            frag(0, 'path": "one.py"'),
            frag(0, ', "limit": "3"}'),
            frag(1, "}"),
            chunk({}, "tool_calls"),
        ],
        [READ],
    )
    calls = completes(events)
    assert [(c.index, c.id, c.name) for c in calls] == [(0, "a", "FileRead"), (1, "b", "FileRead")]
    assert json.loads(calls[0].arguments) == {"file_path": "one.py", "limit": 3}  # coerced
    assert json.loads(calls[1].arguments) == {"file_path": "two.py"}
    assert all(c.source == "native" and c.error is None for c in calls)
    assert sum(isinstance(e, ToolCallDelta) for e in events) == 6


def test_fragment_without_index_uses_its_position_and_missing_id_is_generated() -> None:
    events = feed_all([frag(None, '{"file_path": "x"}', name="FileRead"), chunk({}, "stop")])
    (call,) = completes(events)
    assert call.index == 0 and call.id.startswith("call_") and len(call.id) > 10


def test_arguments_sent_as_object_are_accepted() -> None:
    c = chunk(
        {
            "tool_calls": [
                {"index": 0, "id": "i", "function": {"name": "FileRead", "arguments": {"a": 1}}}
            ]
        }
    )
    (call,) = completes(feed_all([c, chunk({}, "tool_calls")]))
    assert json.loads(call.arguments) == {"a": 1}


def test_invalid_but_finished_arguments_are_an_error_not_truncation() -> None:
    events = feed_all([frag(0, "{'a': 1} trailing", id="x", name="FileRead"), chunk({}, "stop")])
    (call,) = completes(events)
    assert not call.truncated and call.error and "not valid JSON" in call.error


def test_unfinished_json_is_truncated_even_with_stop() -> None:
    events = feed_all([frag(0, '{"file_path": "a', id="x", name="FileWrite"), chunk({}, "stop")])
    (call,) = completes(events)
    assert call.truncated and call.error


def test_non_object_arguments_and_nameless_calls_are_errors() -> None:
    calls = completes(feed_all([frag(0, "[1]", id="x", name="FileRead"), frag(1, "{}", id="y")]))
    assert "JSON object" in (calls[0].error or "")
    assert "without a tool name" in (calls[1].error or "")


def test_usage_timings_and_cached_tokens() -> None:
    last = {
        "choices": [],
        "usage": {
            "prompt_tokens": 9,
            "completion_tokens": 2,
            "prompt_tokens_details": {"cached_tokens": 4},
        },
        "timings": {"predicted_ms": 1.5},
    }
    events = feed_all([chunk({"content": "hi"}), chunk({}, "stop"), last])
    assert events[-2] == Usage(
        prompt_tokens=9, completion_tokens=2, cached_tokens=4, timings={"predicted_ms": 1.5}
    )


def test_no_usage_no_usage_event() -> None:
    events = feed_all([chunk({"content": "hi"}), chunk({}, "stop")])
    assert [e.kind for e in events] == ["text", "done"]


def test_reasoning_alias_key() -> None:
    events = feed_all([chunk({"reasoning": "hmm"}), chunk({"content": "ok"}, "stop")])
    assert events[0] == ReasoningDelta(text="hmm")


def test_started_only_after_a_token() -> None:
    asm = TurnAssembler(None)
    asm.feed(chunk({"role": "assistant", "content": None}))
    assert not asm.started
    asm.feed(chunk({"content": "x"}))
    assert asm.started


def test_error_object_in_a_data_frame_raises() -> None:
    asm = TurnAssembler(None)
    with pytest.raises(StreamError):
        asm.feed({"error": {"code": 503, "message": "busy"}})


def test_overflow_error_frame_is_a_context_overflow() -> None:
    err = json.loads((FIX / "context_overflow.http").read_text().split("\n", 1)[1])
    exc = frame_error(json.dumps(err))
    assert isinstance(exc, ContextOverflowError)
    assert (exc.n_prompt_tokens, exc.n_ctx) == (3031, 512)


def test_text_is_text_to_the_client() -> None:
    # a call written into the answer is the tool protocol's to read (PromptedTools), not ours
    text = '<tool_call>{"name": "FileRead", "arguments": {}}</tool_call>'
    events = feed_all([chunk({"content": text}), chunk({}, "stop")], [READ])
    assert [e.kind for e in events] == ["text", "done"]


@pytest.mark.parametrize(
    ("text", "cut"),
    [
        ('{"a": "b', True),
        ('{"a": [1, 2', True),
        ('{"a": "x\\"', True),  # an escaped quote does not close the string
        ('{"a": "}"', True),  # a brace inside a string does not close the object
        ('{"a": 1}', False),
        ("{'a': 1}", False),  # wrong, but complete: an error, not a cut
        ("", False),
    ],
)
def test_json_cut_off(text: str, cut: bool) -> None:
    assert json_cut_off(text) is cut
