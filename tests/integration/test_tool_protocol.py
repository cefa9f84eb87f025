"""The tool protocol against the scripted server (real HTTP + SSE) and the real tools.

Which protocol `/props` (or a probe) leads to and what goes on the wire for each; a grammar the
server refuses; and bad model output (an unknown tool, unreadable JSON, wrong argument types),
which must get one corrective message each while the turn goes on, in both protocols.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from openmono.config import LLMSettings
from openmono.llm import OpenAICompatModel, PromptedTools
from openmono.loop import LoopEvent, Notice, ToolFinished

from tests.support.agents import OpenAgent
from tests.support.scripted_llm import Call, ScriptedLLM, Turn

pytestmark = pytest.mark.integration

KEY = "scripted-key"
Factory = Callable[..., ScriptedLLM]


@pytest.fixture
def ws(tmp_path: Path, clean_env: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "notes.txt").write_text("the meeting is on Thursday\n")
    return root


@pytest.fixture
def agent_overrides() -> dict[str, Any]:
    # the scripted turns are one request each: the one-step prompted protocol; the default pick's
    # step 1 is test_llm_pick's, and test_tool_grammar_llama runs it on a real server
    return {"llm.api_key": KEY, "tool_timeout_s": 60, "llm.tool_pick": "off"}


def text_call(name: str, arguments: dict[str, Any] | str) -> str:
    args = arguments if isinstance(arguments, str) else json.dumps(arguments)
    return f'<tool_call>\n{{"name": "{name}", "arguments": {args}}}\n</tool_call>'


class Events(list[LoopEvent]):
    def __call__(self, event: LoopEvent) -> None:
        self.append(event)

    def of(self, kind: type) -> list[Any]:
        return [e for e in self if isinstance(e, kind)]


def roles(request: dict[str, Any]) -> list[str]:
    return [m["role"] for m in request["messages"]]


# -- which protocol, and what goes on the wire ---------------------------------------------------


async def test_a_template_without_tools_gets_them_in_the_prompt(
    scripted_llm: Factory, open_with: OpenAgent
) -> None:
    llm = scripted_llm(
        [
            Turn(text="Let me read it.\n" + text_call("FileRead", {"file_path": "notes.txt"})),
            Turn(text="The meeting is on Thursday."),
        ],
        api_key=KEY,
        supports_tools=False,
    )
    agent = await open_with(llm)
    assert agent.tool_protocol == "prompted"
    assert agent.info is not None and agent.info.supports_tools is False
    events = Events()
    done = await agent.run_turn("When is the meeting? See notes.txt", events)
    assert (done.reason, done.text) == ("stop", "The meeting is on Thursday.")
    assert [(e.name, e.ok) for e in events.of(ToolFinished)] == [("FileRead", True)]
    first, second = (r.json for r in llm.chat_requests)
    assert "tools" not in first  # the template would drop them silently
    system = first["messages"][0]["content"]
    assert "# Tools" in system and "- FileRead {" in system and "<tool_call>" in system
    assert '"\\"FileRead\\""' in first["grammar"] and "prose-0" in first["grammar"]
    # the call and its result went back in a shape a template without tools can render
    assert "tool" not in roles(second)
    assert all("tool_calls" not in m for m in second["messages"])
    assert second["messages"][-2]["role"] == "assistant"
    assert text_call("FileRead", {"file_path": "notes.txt"}) in second["messages"][-2]["content"]
    result = second["messages"][-1]
    assert result["role"] == "user"
    assert result["content"].startswith('<tool_response name="FileRead">\n')
    assert "the meeting is on Thursday" in result["content"]
    # the session keeps the native shape: resuming it with a tool-aware template just works
    assert [m.role for m in agent.loop.conv.messages] == ["user", "assistant", "tool", "assistant"]


async def test_a_template_with_tools_stays_native(
    scripted_llm: Factory, open_with: OpenAgent
) -> None:
    llm = scripted_llm(
        [Turn(tool_calls=[Call("FileRead", {"file_path": "notes.txt"})]), Turn(text="Thursday.")],
        api_key=KEY,
    )
    agent = await open_with(llm)
    assert agent.tool_protocol == "native"
    await agent.run_turn("When is the meeting?")
    first, second = (r.json for r in llm.chat_requests)
    assert any(t["function"]["name"] == "FileRead" for t in first["tools"])
    assert "grammar" not in first and "# Tools" not in first["messages"][0]["content"]
    assert roles(second)[-1] == "tool"


async def test_native_forced_on_a_template_without_tools_warns_once(
    scripted_llm: Factory, open_with: OpenAgent
) -> None:
    llm = scripted_llm([Turn(text="a"), Turn(text="b")], api_key=KEY, supports_tools=False)
    agent = await open_with(llm, settings={"llm.tool_protocol": "native"})
    events = Events()
    await agent.run_turn("one", events)
    await agent.run_turn("two", events)
    warnings = [n.message for n in events.of(Notice) if "cannot see them" in n.message]
    assert len(warnings) == 1 and "supports_tools is false" in warnings[0]
    assert "tools" in llm.chat_requests[0].json  # forced: sent as asked


async def test_prompted_can_be_forced_and_the_grammar_switched_off(
    scripted_llm: Factory, open_with: OpenAgent
) -> None:
    llm = scripted_llm([Turn(text="hi")], api_key=KEY)
    settings = {"llm.tool_protocol": "prompted", "llm.tool_grammar": False}
    agent = await open_with(llm, settings=settings)
    await agent.run_turn("hello")
    sent = llm.chat_requests[0].json
    assert "tools" not in sent and "grammar" not in sent
    assert "# Tools" in sent["messages"][0]["content"]


async def test_a_refused_grammar_falls_back_unconstrained_and_says_so_once(
    scripted_llm: Factory, open_with: OpenAgent
) -> None:
    refusal = {"error": {"code": 400, "message": "Failed to initialize samplers: failed to "
                         "parse grammar", "type": "invalid_request_error"}}  # fmt: skip

    def answer(request: dict[str, Any]) -> Turn:
        return Turn.http_error(400, body=refusal) if "grammar" in request else Turn(text="ok")

    llm = scripted_llm([answer] * 4, api_key=KEY, supports_tools=False)
    agent = await open_with(llm)
    events = Events()
    first = await agent.run_turn("one", events)
    second = await agent.run_turn("two", events)
    assert (first.reason, first.text, second.text) == ("stop", "ok", "ok")
    notes = [n.message for n in events.of(Notice) if "grammar" in n.message]
    assert len(notes) == 1 and "failed to parse grammar" in notes[0]
    assert ["grammar" in r.json for r in llm.chat_requests] == [True, False, False]


@pytest.mark.parametrize(
    ("turns", "protocol", "supports"),
    [
        ([Turn.completion(31), Turn.completion(31)], "prompted", False),  # the tool changed nothing
        ([Turn.completion(31), Turn.completion(97)], "native", True),
        ([Turn.completion(31), Turn.http_error(400)], "prompted", False),  # tools refused
        ([Turn.http_error(500)], "native", None),  # no answer: unknown, trust `tools`
    ],
)
async def test_without_props_a_probe_decides(
    scripted_llm: Factory, turns: list[Turn], protocol: str, supports: bool | None
) -> None:
    llm = scripted_llm(turns, api_key=KEY, props=False)
    settings = LLMSettings(endpoint=llm.url, api_key=KEY, max_retries=0)
    async with OpenAICompatModel(settings) as m:
        info = await PromptedTools(m, settings).probe()
    assert (info.tool_protocol, info.supports_tools) == (protocol, supports)
    sent = [r.json for r in llm.chat_requests]
    assert all(r["max_tokens"] == 1 and r["stream"] is False for r in sent)
    if len(sent) == 2:
        assert "tools" not in sent[0] and sent[1]["tools"][0]["type"] == "function"


async def test_a_set_protocol_is_not_probed(scripted_llm: Factory) -> None:
    llm = scripted_llm([], api_key=KEY, props=False)
    settings = LLMSettings(endpoint=llm.url, api_key=KEY, tool_protocol="prompted")
    async with OpenAICompatModel(settings) as m:
        info = await PromptedTools(m, settings).probe()
    assert info.tool_protocol == "prompted" and llm.chat_requests == []


# -- bad model output: one corrective message each, and the turn goes on ------------------------

BAD = {
    "unknown_tool": (Call("Teleport", {"to": "mars"}), text_call("Teleport", {"to": "mars"})),
    "malformed": (
        Call("FileRead", '{"file_path": "notes.txt",, }'),
        text_call("FileRead", '{"file_path": }'),
    ),
    "wrong_types": (
        Call("FileRead", {"file_path": ["notes.txt"], "limit": "all"}),
        text_call("FileRead", {"file_path": ["notes.txt"], "limit": "all"}),
    ),
}
EXPECT = {
    "unknown_tool": ("unknown_tool", "Teleport"),
    "malformed": ("invalid", "JSON"),
    "wrong_types": ("invalid", "file_path"),
}


@pytest.mark.parametrize("protocol", ["native", "prompted"])
@pytest.mark.parametrize("bad", list(BAD))
async def test_bad_output_gets_one_correction_and_the_turn_goes_on(
    scripted_llm: Factory, open_with: OpenAgent, protocol: str, bad: str
) -> None:
    native_call, text = BAD[bad]
    first = Turn(tool_calls=[native_call]) if protocol == "native" else Turn(text=text)
    ok = Turn(text="Read it: Thursday.")
    fixed = (
        Turn(tool_calls=[Call("FileRead", {"file_path": "notes.txt"})])
        if protocol == "native"
        else Turn(text=text_call("FileRead", {"file_path": "notes.txt"}))
    )
    llm = scripted_llm([first, fixed, ok], api_key=KEY, supports_tools=protocol == "native")
    agent = await open_with(llm)
    events = Events()
    done = await agent.run_turn("When is the meeting? See notes.txt", events)
    assert (done.reason, done.text, done.iterations) == ("stop", "Read it: Thursday.", 3)
    finished = events.of(ToolFinished)
    problem, hint = EXPECT[bad]
    assert [(f.ok, f.problem) for f in finished] == [(False, problem), (True, None)]
    assert hint in (finished[0].error or "")
    # exactly one message answers the bad call, and it says what was wrong
    second = llm.chat_requests[1].json["messages"]
    answers = [m for m in second if "Error:" in (m["content"] or "")]
    assert len(answers) == 1
    assert answers[0]["role"] == ("tool" if protocol == "native" else "user")
    assert answers[0]["content"].count("Error:") == 1 and hint in answers[0]["content"]
