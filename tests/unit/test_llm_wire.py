"""Wire details: endpoint normalisation, Retry-After, error bodies, request message shapes."""

from __future__ import annotations

import email.utils
import json
from pathlib import Path

import openmono.llm as llm
import pytest
from openmono.llm import (
    ChatMessage,
    ContextOverflowError,
    EndpointError,
    LLMError,
    StreamError,
    ToolCall,
    ToolSpec,
    normalize_endpoint,
)
from openmono.llm._wire import error_message, frame_error, overflow_error, parse_retry_after

FIX = Path(__file__).resolve().parents[1] / "fixtures" / "llama"


@pytest.mark.parametrize(
    ("given", "root"),
    [
        ("http://127.0.0.1:7474", "http://127.0.0.1:7474"),
        ("http://127.0.0.1:7474/", "http://127.0.0.1:7474"),
        ("http://127.0.0.1:7474/v1", "http://127.0.0.1:7474"),
        ("http://127.0.0.1:7474/v1/", "http://127.0.0.1:7474"),
        ("http://h:1/v1/chat/completions", "http://h:1"),
        ("https://relay.example/llm/v1", "https://relay.example/llm"),
        ("  https://relay.example/llm  ", "https://relay.example/llm"),
        ("http://h:1/v1?x=1", "http://h:1"),
    ],
)
def test_normalize_endpoint(given: str, root: str) -> None:
    assert normalize_endpoint(given) == root


@pytest.mark.parametrize("bad", ["127.0.0.1:7474", "ftp://h/", "", "http://"])
def test_bad_endpoints_are_refused(bad: str) -> None:
    with pytest.raises(EndpointError):
        normalize_endpoint(bad)


def test_retry_after_seconds_and_dates() -> None:
    assert parse_retry_after("3") == 3.0
    assert parse_retry_after("0.5") == 0.5
    assert parse_retry_after("-4") == 0.0
    assert parse_retry_after(None) is None
    assert parse_retry_after("soon") is None
    date = email.utils.formatdate(1_000_010, usegmt=True)
    assert parse_retry_after(date, now=1_000_000) == pytest.approx(10.0)


def test_recorded_overflow_body_gives_the_numbers() -> None:
    status, body = (FIX / "context_overflow.http").read_text().split("\n", 1)
    assert status == "HTTP 400"
    exc = overflow_error(json.loads(body)["error"], body)
    assert isinstance(exc, ContextOverflowError)
    assert (exc.n_prompt_tokens, exc.n_ctx) == (3031, 512)


def test_overflow_numbers_from_the_message_alone() -> None:
    msg = "request (900 tokens) exceeds the available context size (512 tokens), try increasing it"
    exc = overflow_error({"message": msg}, "")
    assert exc is not None and (exc.n_prompt_tokens, exc.n_ctx) == (900, 512)


def test_openai_style_overflow_without_numbers() -> None:
    exc = overflow_error({"code": "context_length_exceeded", "message": "too long"}, "")
    assert exc is not None and exc.n_ctx is None


def test_other_errors_are_not_overflows() -> None:
    assert overflow_error({"type": "invalid_request_error", "message": "bad grammar"}, "") is None


def test_frame_error_shapes() -> None:
    e1 = frame_error('{"error": {"code": 500, "message": "boom"}}')
    e2 = frame_error({"message": "boom", "type": "server_error"})
    e3 = frame_error("plain words")
    assert isinstance(e1, StreamError) and e1.code == 500 and "boom" in str(e1)
    assert isinstance(e2, StreamError) and e2.code == "server_error"
    assert isinstance(e3, StreamError) and "plain words" in str(e3)


def test_error_message_of_the_recorded_401() -> None:
    body = (FIX / "unauthorized.http").read_text().split("\n", 1)[1]
    assert error_message(body) == "Invalid API Key"
    assert error_message("") == "(empty body)"


def test_messages_to_wire() -> None:
    call = ToolCall(id="c1", name="FileRead", arguments={"file_path": "a.py"})
    assert call.arguments == '{"file_path": "a.py"}'
    msgs = [
        ChatMessage(role="system", content="be brief"),
        ChatMessage(role="assistant", content=None, reasoning_content="hm", tool_calls=[call]),
        ChatMessage(role="tool", content="print(1)", tool_call_id="c1", name="FileRead"),
    ]
    wire = [m.to_wire() for m in msgs]
    assert wire[0] == {"role": "system", "content": "be brief"}
    assert wire[1] == {
        "role": "assistant",
        "content": "",
        "reasoning_content": "hm",
        "tool_calls": [
            {
                "id": "c1",
                "type": "function",
                "function": {"name": "FileRead", "arguments": '{"file_path": "a.py"}'},
            }
        ],
    }
    assert wire[2] == {
        "role": "tool",
        "content": "print(1)",
        "tool_call_id": "c1",
        "name": "FileRead",
    }


def test_tool_spec_to_wire() -> None:
    spec = ToolSpec(name="Glob", description="find files")
    assert spec.to_wire() == {
        "type": "function",
        "function": {
            "name": "Glob",
            "description": "find files",
            "parameters": {"type": "object", "properties": {}},
        },
    }


def test_public_surface() -> None:
    for name in llm.__all__:
        assert hasattr(llm, name), name
    errors = [getattr(llm, n) for n in llm.__all__ if n.endswith(("Error", "Timeout"))]
    assert all(issubclass(e, LLMError) for e in errors)
    assert len(errors) >= 9
