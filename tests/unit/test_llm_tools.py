"""`PromptedTools`, the tool protocol around a `Model`: out come clean text and whole calls.

The inner model is scripted in-process (`ScriptedModel`): what it is sent (messages, tools,
grammar) and what it streams back are exactly the test's.
"""

from __future__ import annotations

import json
from contextlib import aclosing
from typing import Any

import pytest
from openmono.llm import (
    ChatMessage,
    Done,
    HTTPStatusError,
    LLMSettings,
    ModelInfo,
    Note,
    PromptedTools,
    StreamEvent,
    TextDelta,
    ToolCall,
    ToolCallComplete,
    ToolSpec,
    native_tool_tokens,
)
from openmono.llm._messages import estimate_tokens
from openmono.llm._prompted import prompted_overhead

from tests.support.agents import MakeAgent
from tests.support.scripted_model import ScriptedModel, reply

READ = ToolSpec(
    name="FileRead",
    description="Read a file.",
    parameters={
        "type": "object",
        "properties": {"file_path": {"type": "string"}, "limit": {"type": "integer"}},
        "required": ["file_path"],
    },
)
HI = [ChatMessage(role="system", content="BASE"), ChatMessage(role="user", content="read a.py")]
XML = "<tool_call>\n<function=FileRead>\n<parameter=file_path>\na.py\n</parameter>\n</function>\n"
XML += "</tool_call>"


class Llama(ScriptedModel):
    """A scripted llama.cpp server: its probe says it takes a grammar and what its template does."""

    def __init__(self, script: list[Any], supports_tools: bool | None = False) -> None:
        super().__init__(script)
        self.supports_tools = supports_tools

    async def probe(self) -> ModelInfo:
        known = None if self.supports_tools is None else "props"
        return ModelInfo(
            model="llama",
            n_ctx=4096,
            supports_tools=self.supports_tools,
            tools_known_from=known,
            takes_grammar=True,
        )


def tools_model(inner: ScriptedModel, **settings: Any) -> PromptedTools[ScriptedModel]:
    # one request per reply: these test the one-step rewriting (the pick's own step 1 is
    # test_llm_pick's), so the default `two_step` is set off unless a test asks for it
    return PromptedTools(inner, LLMSettings(**{"tool_pick": "off", **settings}))


def streamed(text: str, chunk: int = 7) -> list[StreamEvent]:
    events: list[StreamEvent] = [
        TextDelta(text=text[i : i + chunk]) for i in range(0, len(text), chunk)
    ]
    return [*events, Done(finish_reason="stop")]


async def collect(model: PromptedTools[Any], tools: list[ToolSpec] | None = None) -> list[Any]:
    async with aclosing(model.stream(HI, tools)) as events:
        return [e async for e in events]


def text_of(events: list[Any]) -> str:
    return "".join(e.text for e in events if isinstance(e, TextDelta))


def calls_of(events: list[Any]) -> list[ToolCallComplete]:
    return [e for e in events if isinstance(e, ToolCallComplete)]


async def test_a_call_written_as_text_becomes_a_call_and_leaves_the_text() -> None:
    inner = ScriptedModel([streamed(f"On it.\n{XML}\nThen I answer.")])
    events = await collect(tools_model(inner), [READ])
    assert text_of(events) == "On it.\n\nThen I answer."
    assert "<" not in text_of(events)
    (call,) = calls_of(events)
    assert (call.index, call.name, call.source) == (0, "FileRead", "text")
    assert json.loads(call.arguments) == {"file_path": "a.py"}
    assert [e.kind for e in events[-3:]] == ["text", "tool_call", "done"]
    assert inner.requests[0][1] == [READ]  # native: the server got the tools


async def test_text_is_text_without_tools_with_server_calls_or_with_recovery_off() -> None:
    no_tools = await collect(tools_model(ScriptedModel([streamed(XML)])))
    assert calls_of(no_tools) == [] and text_of(no_tools) == XML
    native = ToolCallComplete(index=0, id="n1", name="FileRead", arguments='{"file_path": "b"}')
    both = ScriptedModel([[TextDelta(text=XML), native, Done()]])
    served = await collect(tools_model(both), [READ])
    assert [c.id for c in calls_of(served)] == ["n1"] and text_of(served) == XML
    off = await collect(tools_model(ScriptedModel([streamed(XML)]), recover_text_calls=False))
    assert calls_of(off) == [] and text_of(off) == XML


async def test_prompted_rewrites_the_conversation_and_constrains_the_reply() -> None:
    inner = Llama([streamed(f"Reading.\n{XML}"), streamed("done")])
    model = tools_model(inner, tool_protocol="auto")
    info = await model.probe()
    assert (info.tool_protocol, model.protocol) == ("prompted", "prompted")
    assert "no tool support (from props)" in info.protocol_reason
    events = await collect(model, [READ])
    sent, tools = inner.requests[0]
    assert tools == [] and (sent[0].content or "").startswith("# Tools")
    assert "- FileRead " in (sent[0].content or "") and (sent[0].content or "").endswith("BASE")
    assert inner.grammars[0] is not None and "call-fileread" in inner.grammars[0]
    assert text_of(events) == "Reading.\n" and [c.name for c in calls_of(events)] == ["FileRead"]
    # earlier calls go back as text, their results as user turns
    history = [
        *HI,
        ChatMessage(role="assistant", tool_calls=[ToolCall(id="c", name="FileRead")]),
        ChatMessage(role="tool", content="alpha", tool_call_id="c"),
    ]
    async with aclosing(model.stream(history, None)) as events_:
        [e async for e in events_]
    roles = [m.role for m in inner.requests[1][0]]
    assert "tool" not in roles and inner.grammars[1] is None  # no tools offered: no grammar


async def test_under_the_grammar_only_tagged_blocks_are_calls() -> None:
    fenced = '```json\n{"name": "FileRead", "arguments": {"file_path": "x"}}\n```'
    model = tools_model(Llama([streamed(fenced)]), tool_protocol="prompted")
    await model.probe()
    events = await collect(model, [READ])
    assert calls_of(events) == [] and text_of(events) == fenced


async def test_a_server_call_is_executed_while_prompted(make_agent: MakeAgent) -> None:
    """A call the server returns as a structured call, although it was shown no `tools`, runs
    (its arguments coerced with the tool's schema, as the client would have)."""
    agent, inner = await make_agent(
        [reply(calls=[("FileRead", {"file_path": "a.txt", "limit": "3"})]), reply("alpha it is")]
    )
    model = tools_model(inner, tool_protocol="prompted")
    await agent.switch_model(model)
    done = await agent.run_turn("what does a.txt say?")
    assert done.reason == "stop" and agent.tool_protocol == "prompted"
    assert inner.requests[0][1] == []  # prompted: the server got no tools
    result = inner.requests[1][0][-1].content or ""
    assert result.startswith('<tool_response name="FileRead">') and "alpha" in result
    (call,) = next(m for m in agent.loop.conv.messages if m.tool_calls).tool_calls
    assert json.loads(call.arguments) == {"file_path": "a.txt", "limit": 3}


async def test_a_refused_grammar_is_dropped_for_good_and_said_once() -> None:
    refused = HTTPStatusError("the LLM endpoint answered HTTP 400", 400, '{"error": "grammar"}')
    inner = Llama([refused, streamed("plain"), streamed("again")])
    model = tools_model(inner, tool_protocol="prompted")
    await model.probe()
    first = await collect(model, [READ])
    notes = [e for e in first if isinstance(e, Note)]
    assert len(notes) == 1 and "refused the tool-call grammar" in notes[0].message
    assert text_of(first) == "plain"
    second = await collect(model, [READ])
    assert not any(isinstance(e, Note) for e in second)
    assert inner.grammars[0] is not None and inner.grammars[1:] == [None, None]


async def test_a_blind_native_setting_is_said_once() -> None:
    model = tools_model(Llama([streamed("a"), streamed("b")]), tool_protocol="native")
    await model.probe()
    first, second = await collect(model, [READ]), await collect(model, [READ])
    assert [type(e) for e in first].count(Note) == 1 and Note not in [type(e) for e in second]


def test_what_the_tools_cost_depends_on_the_protocol() -> None:
    native = tools_model(ScriptedModel())
    prompted = tools_model(ScriptedModel(), tool_protocol="prompted")
    assert native.tool_tokens([READ]) == native_tool_tokens([READ])
    assert prompted.tool_tokens([READ]) == estimate_tokens(prompted_overhead([READ]))
    assert prompted.tool_tokens([]) == 0


@pytest.mark.parametrize("protocol", ["native", "prompted"])
async def test_the_loop_gets_the_same_clean_reply_either_way(
    make_agent: MakeAgent, protocol: str
) -> None:
    text = f"Let me look.\n{XML}"
    agent, inner = await make_agent([streamed(text), reply("a.py holds code")])
    await agent.switch_model(tools_model(inner, tool_protocol=protocol))
    shown: list[str] = []
    await agent.run_turn("read a.py", lambda e: shown.append(getattr(e, "text", "")))
    first = agent.loop.conv.messages[1]
    assert first.content == "Let me look.\n" and [c.name for c in first.tool_calls] == ["FileRead"]
    assert "<tool_call>" not in "".join(shown)
