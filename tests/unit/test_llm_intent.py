"""`llm.tool_intent`: in a request that only reads, the prompted protocol leaves writers out of
everything the model sees (`narrow`: tool block, grammar, worked examples); any other
request sees every tool. The inner model is scripted in-process, so what it was sent is exact.
"""

from __future__ import annotations

from contextlib import aclosing

from openmono.llm import (
    ChatMessage,
    LLMSettings,
    ModelInfo,
    PromptedTools,
    ToolCall,
    ToolSpec,
)
from openmono.llm._intent import latest_request, shown_tools

from tests.support.scripted_model import ScriptedModel, reply


def _tool(name: str, writes: bool, key: str) -> ToolSpec:
    schema = {"type": "object", "properties": {key: {"type": "string"}}, "required": [key]}
    return ToolSpec(name=name, description=f"{name}.", parameters=schema, writes=writes)


READ = _tool("FileRead", False, "file_path")
WRITE = _tool("FileWrite", True, "file_path")
BASH = _tool("Bash", False, "command")
TOOLS = [READ, WRITE, BASH]
ASK = "What port does server.ini set?"
CHANGE = "Create notes.txt containing: hello"


class Llama(ScriptedModel):
    async def probe(self) -> ModelInfo:
        return ModelInfo(model="llama", n_ctx=4096, supports_tools=False,
                         tools_known_from="props", takes_grammar=True)  # fmt: skip


async def _sent(intent: str, request: str) -> tuple[str, str, str]:
    """The tool block, the examples' text and the grammar the server got for `request`."""
    inner = Llama([reply("ok")])
    # the one-step request (tool_pick off): what narrow shows, not what the pick then narrows
    settings = LLMSettings(tool_protocol="prompted", tool_intent=intent, tool_pick="off")  # type: ignore[arg-type]
    model = PromptedTools(inner, settings)
    await model.probe()
    messages = [
        ChatMessage(role="system", content="BASE"),
        ChatMessage(role="user", content=request),
    ]
    async with aclosing(model.stream(messages, TOOLS)) as events:
        [e async for e in events]
    sent = inner.requests[0][0]
    examples = "\n".join(m.content or "" for m in sent[1:-1])
    assert sent[-1].content == request
    return sent[0].content or "", examples, inner.grammars[0] or ""


async def test_narrow_shows_no_writer_to_a_read_only_request() -> None:
    block, examples, grammar = await _sent("narrow", ASK)
    assert "- FileRead " in block and "- Bash " in block and "FileWrite" not in block
    assert "FileWrite" not in examples and '"FileRead"' in examples
    assert "call-filewrite" not in grammar and "call-fileread" in grammar


async def test_a_change_and_the_lever_off_see_every_tool() -> None:
    for intent, request in (("narrow", CHANGE), ("off", ASK)):
        block, examples, grammar = await _sent(intent, request)
        assert "- FileWrite " in block and "call-filewrite" in grammar, (intent, request)
    _, examples, _ = await _sent("narrow", CHANGE)
    assert '"FileWrite"' in examples  # the example nearest "create ... containing" is a write


def test_only_writers_offered_are_left_as_they_are() -> None:
    shown = shown_tools([WRITE], ASK, "narrow")
    assert shown.block == [WRITE] and not shown.read_only


def test_the_request_is_the_users_latest_words_not_a_tool_result() -> None:
    turn = [
        ChatMessage(role="user", content=ASK),
        ChatMessage(role="assistant", tool_calls=[ToolCall(id="c", name="FileRead")]),
        ChatMessage(role="tool", content=CHANGE, tool_call_id="c"),
    ]
    assert latest_request(turn) == ASK
    assert latest_request(turn[1:]) is None
    # a reply cut off mid-call is asked again by the loop: still the user's read-only request
    # (measured: Gemma's cut FileRead was asked again and, shown every tool, became FileWrite)
    again = ChatMessage(role="user", content="[Send that call again; FileEdit ...]", from_loop=True)
    assert latest_request([*turn, again]) == ASK
    assert shown_tools(TOOLS, None, "narrow").block == TOOLS
