"""The tool protocol: which is chosen, how prompted tools are rendered, what a grammar allows."""

from __future__ import annotations

import json
from typing import Any

import pytest
from openmono.llm import ChatMessage, ToolCall, ToolSpec, recover_tool_calls
from openmono.llm._calltext import call_text
from openmono.llm._examples import SCENES, example_turns
from openmono.llm._grammar import tool_grammar
from openmono.llm._prompted import prompted_messages, prompted_overhead, tool_block, tool_line
from openmono.llm._protocol import ToolSupport, caps_from_props, choose_protocol

from tests.support.builtin_tools import builtin_catalog
from tests.support.gbnf import Grammar

READ = ToolSpec(
    name="FileRead",
    description="Read a text file from the workspace. Returns numbered lines.",
    parameters={
        "type": "object",
        "properties": {
            "file_path": {"type": "string", "minLength": 1},
            "offset": {"anyOf": [{"type": "integer"}, {"type": "null"}], "default": None},
        },
        "required": ["file_path"],
        "additionalProperties": False,
    },
)
MEMO = ToolSpec(
    name="MemorySave",
    description="Save a memory.",
    parameters={
        "type": "object",
        "properties": {
            "name": {"type": "string"},
            "type": {"enum": ["user", "project"], "type": "string"},
            "tags": {"type": "array", "items": {"type": "string"}},
            "pinned": {"type": "boolean", "default": False},
        },
        "required": ["name", "type"],
    },
)
TODO = ToolSpec(
    name="TodoWrite",
    description="Write the todo list.",
    parameters={
        "$defs": {
            "Item": {
                "type": "object",
                "properties": {
                    "content": {"type": "string"},
                    "status": {"enum": ["pending", "done"], "type": "string"},
                },
                "required": ["content", "status"],
            }
        },
        "type": "object",
        "properties": {"todos": {"type": "array", "items": {"$ref": "#/$defs/Item"}}},
        "required": ["todos"],
    },
)
EXIT = ToolSpec(name="ExitPlanMode", parameters={"type": "object", "properties": {}})
TOOLS = [READ, MEMO, TODO, EXIT]


# -- choosing ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("setting", "supports", "protocol", "warns"),
    [
        ("auto", True, "native", False),
        ("auto", False, "prompted", False),
        ("auto", None, "native", False),  # unknown: trust that `tools` is honoured
        ("native", False, "native", True),  # forced on a template without tools: say so
        ("native", True, "native", False),
        ("prompted", True, "prompted", False),
    ],
)
def test_the_protocol_follows_the_setting_and_the_template(
    setting: Any, supports: bool | None, protocol: str, warns: bool
) -> None:
    choice = choose_protocol(setting, ToolSupport(supports, "props"))
    assert choice.protocol == protocol
    assert (choice.warning is not None) == warns
    assert choice.reason


def test_caps_come_from_props_and_are_unknown_when_absent() -> None:
    props = {"chat_template_caps": {"supports_tools": False, "supports_tool_calls": False}}
    assert caps_from_props(props) == ToolSupport(False, "props")
    assert caps_from_props({"chat_template_caps": {"supports_tools": True}}).supports_tools
    assert caps_from_props({}) == ToolSupport(None, "unknown")


# -- rendering -----------------------------------------------------------------------------------


def test_a_tool_is_one_compact_line_with_required_optional_and_enum_marks() -> None:
    assert tool_line(READ) == (
        '- FileRead {"file_path": string, "offset"?: integer}: Read a text file from the workspace.'
    )
    line = tool_line(MEMO)
    assert '"type": "user"|"project"' in line and '"tags"?: [string]' in line
    assert '"todos": [{content, status}]' in tool_line(TODO)
    assert tool_line(EXIT).startswith("- ExitPlanMode {}")


def test_the_conversation_is_rewritten_without_tool_roles_or_tool_calls() -> None:
    messages = [
        ChatMessage(role="system", content="BASE"),
        ChatMessage(role="user", content="read a.py and b.py"),
        ChatMessage(
            role="assistant",
            content="Reading both.",
            tool_calls=[
                ToolCall(id="c1", name="FileRead", arguments={"file_path": "a.py"}),
                ToolCall(id="c2", name="FileRead", arguments='{"file_path": "b.py"}'),
            ],
        ),
        ChatMessage(role="tool", content="1\talpha", tool_call_id="c1"),
        ChatMessage(role="tool", content="Error: no such file", tool_call_id="c2"),
        ChatMessage(role="user", content="and now?"),
    ]
    out = prompted_messages(messages, [READ])
    assert out[0].role == "system" and out[0].content.startswith("# Tools")
    assert out[0].content.endswith("\n\nBASE")
    assert "- FileRead" in out[0].content
    examples = example_turns([READ])
    assert out[1 : 1 + len(examples)] == examples
    rest = out[1 + len(examples) :]
    assert [m.role for m in rest] == ["user", "assistant", "user"]
    assert all(not m.tool_calls and m.role != "tool" for m in out)
    calls = recover_tool_calls(rest[1].content or "", [READ])
    assert [c.arguments["file_path"] for c in calls.calls] == ["a.py", "b.py"]
    assert calls.text == "Reading both."
    # both results and the user's next words in one user turn, each result marked and named
    joined = rest[2].content or ""
    assert joined.count('<tool_response name="FileRead">') == 2
    assert "1\talpha" in joined and "Error: no such file" in joined
    assert joined.endswith("and now?")


def test_without_tools_only_the_history_is_rewritten() -> None:
    messages = [
        ChatMessage(role="system", content="BASE"),
        ChatMessage(
            role="assistant", tool_calls=[ToolCall(id="c", name="X", arguments="{not json")]
        ),
        ChatMessage(role="tool", content="Error: bad", tool_call_id="c"),
    ]
    out = prompted_messages(messages, None)
    assert out[0].content == "BASE"
    assert '"arguments": "{not json"' in (out[1].content or "")  # shown as it was sent
    assert out[2].role == "user" and '<tool_response name="X">' in (out[2].content or "")


def test_examples_use_only_offered_tools_and_their_calls_parse() -> None:
    assert example_turns([EXIT]) == []
    catalog = builtin_catalog()
    tools = list(catalog.specs.values())
    turns = example_turns(tools)
    shown = [m.content or "" for m in turns if m.role == "assistant"]
    calls = [c for text in shown for c in recover_tool_calls(text, tools).calls]
    assert len({c.name for c in calls}) == len(calls) >= 3  # a different tool each time
    for c in calls:
        assert c.arguments == SCENES[c.name].arguments
    # each example's values come from its own request: the model is shown where to take them
    for scene in SCENES.values():
        first = next(iter(scene.arguments.values()))
        assert str(first).strip() in scene.request


def test_the_core_tools_block_is_compact() -> None:
    catalog = builtin_catalog()
    core = [s for n, s in catalog.specs.items() if catalog.facts_of(n).core]
    text = tool_block(core) + "".join(m.content or "" for m in example_turns(core))
    # ~3.2 characters a token on this text; the real count is in the llama-server test
    assert len(text) < 3_000
    assert prompted_overhead([]) == []


# -- the grammar ---------------------------------------------------------------------------------


def call(name: str, args: dict[str, Any] | str) -> str:
    body = args if isinstance(args, str) else json.dumps(args)
    return f'<tool_call>\n{{"name": "{name}", "arguments": {body}}}\n</tool_call>'


@pytest.fixture(scope="module")
def grammar() -> Grammar:
    return Grammar(tool_grammar(TOOLS))


@pytest.mark.parametrize(
    "text",
    [
        "",
        "Plain answer, with <b>tags</b>, a <tool and <tools> and <toolbox too.",
        call("FileRead", {"file_path": "a.py"}),
        call("FileRead", {"file_path": "a.py", "offset": 10}),
        call("FileRead", {"file_path": 'a "q" \n b \\ é', "offset": None}),
        "Let me look.\n" + call("FileRead", {"file_path": "a.py"}),
        call("MemorySave", {"name": "n", "type": "user", "tags": ["a", "b"], "pinned": True}),
        call("MemorySave", {"name": "n", "type": "project", "pinned": False}),
        call("TodoWrite", {"todos": [{"content": "x", "status": "done"}]}),
        call("ExitPlanMode", {}),
        call("FileRead", {"file_path": "a"}) + "\n" + call("ExitPlanMode", {}),
    ],
)
def test_the_grammar_accepts_prose_and_well_formed_calls(grammar: Grammar, text: str) -> None:
    assert grammar.accepts(text), text


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("Here it is: <tool_call> inside prose", "the tag outside a call"),
        ('<tool_response name="Bash">\ntrue\n</tool_response>', "a made-up result"),
        (call("Bash", {"command": "ls"}), "a tool that is not offered"),
        (call("FileRead", {}), "a required key missing"),
        (call("FileRead", {"path": "a.py"}), "a key the schema does not have"),
        (call("FileRead", {"file_path": 3}), "a number where a string is wanted"),
        (call("FileRead", {"file_path": "a", "offset": "ten"}), "a string for an integer"),
        (call("MemorySave", {"name": "n", "type": "team"}), "a value outside the enum"),
        (call("TodoWrite", {"todos": [{"content": "x"}]}), "a nested required key missing"),
        (call("FileRead", '{"file_path": "a"'), "cut-off JSON"),
        (call("FileRead", {"file_path": "a"}) + "\nDone.", "text after the calls"),
        (
            call("FileRead", {"file_path": "a"}) + "\n<tool_response>x</tool_response>",
            "a fake result",
        ),
    ],
)
def test_the_grammar_refuses_what_would_not_parse_or_validate(
    grammar: Grammar, text: str, why: str
) -> None:
    assert not grammar.accepts(text), why


def test_the_grammar_of_every_builtin_tool_is_well_formed() -> None:
    tools = list(builtin_catalog().specs.values())
    g = Grammar(tool_grammar(tools))
    for tool in tools:
        required = tool.parameters.get("required") or []
        assert not required or not g.accepts(call(tool.name, {})), tool.name
    assert g.accepts(call("Bash", {"command": "ls -la", "timeout_ms": 5000, "background": False}))
    assert g.accepts(call("FileEdit", {"file_path": "a", "edits": [
        {"old_string": "x", "new_string": "y", "replace_all": True}]}))  # fmt: skip
    assert not g.accepts(call("Bash", {"command": "ls", "timeout_ms": 1.5}))


# -- reading calls back under the grammar --------------------------------------------------------


def test_under_the_grammar_only_tagged_blocks_are_calls() -> None:
    text = 'See ```json\n{"name": "FileRead", "arguments": {"file_path": "x"}}\n```'
    assert recover_tool_calls(text, [READ]).calls  # unconstrained: a fenced call is recovered
    assert not recover_tool_calls(text, [READ], tagged_only=True).found  # prose under the grammar
    tagged = call_text("FileRead", {"file_path": "y"})
    got = recover_tool_calls(text + "\n" + tagged, [READ], tagged_only=True)
    assert [c.arguments for c in got.calls] == [{"file_path": "y"}]


@pytest.mark.parametrize(
    ("request_text", "closest"),
    [
        ("Run the command: make lint", "Bash"),
        ("List the files in the docs folder.", "ListDirectory"),
        ("Which module contains the word retry?", "Grep"),
        ("In setup.cfg, change alpha to beta.", "FileEdit"),
        ("Create notes.md containing: hi", "FileWrite"),
    ],
)
def test_the_example_closest_to_the_request_comes_last(request_text: str, closest: str) -> None:
    tools = list(builtin_catalog().specs.values())
    turns = example_turns(tools, request_text)
    last_call = [m for m in turns if m.role == "assistant"][-2].content or ""
    assert f'"name": "{closest}"' in last_call
    # the same number of examples whatever the request: the prompt's size does not jump
    assert len(turns) == len(example_turns(tools, "something else entirely"))


def test_a_template_may_declare_the_protocol_auto_then_follows() -> None:
    template = "{#- ... openmono:tool_protocol=prompted (why) -#}{{ messages }}"
    props = {"chat_template": template, "chat_template_caps": {"supports_tools": True}}
    support = caps_from_props(props)
    assert support == ToolSupport(True, "props", "prompted")
    auto = choose_protocol("auto", support)
    assert auto.protocol == "prompted" and "asks for prompted" in auto.reason
    assert auto.warning is None
    # a set protocol wins over the template's wish
    assert choose_protocol("native", support).protocol == "native"
    # no comment, or another word: no wish
    assert caps_from_props({"chat_template": "openmono:tool_protocol=maybe"}).declared is None


def test_the_shipped_smollm2_template_asks_for_prompted() -> None:
    from openmono.stack import SMOLLM2_TEMPLATE

    props = {"chat_template": SMOLLM2_TEMPLATE.read_text()}
    assert caps_from_props(props).declared == "prompted"
