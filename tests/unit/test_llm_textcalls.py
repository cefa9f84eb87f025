"""Text tool-call recovery: Qwen3 XML, Hermes JSON, fenced JSON; malformed, unknown, cut off."""

from __future__ import annotations

from typing import Any

import pytest
from openmono.llm import ToolSpec, recover_tool_calls

TOOLS = [
    ToolSpec(
        name="FileRead",
        parameters={
            "type": "object",
            "properties": {
                "file_path": {"type": "string"},
                "offset": {"anyOf": [{"type": "integer"}, {"type": "null"}], "default": None},
                "limit": {"anyOf": [{"type": "integer"}, {"type": "null"}], "default": None},
            },
            "required": ["file_path"],
        },
    ),
    ToolSpec(
        name="FileWrite",
        parameters={
            "type": "object",
            "properties": {"file_path": {"type": "string"}, "content": {"type": "string"}},
            "required": ["file_path", "content"],
        },
    ),
    ToolSpec(
        name="Grep",
        parameters={
            "type": "object",
            "properties": {
                "pattern": {"type": "string"},
                "case_insensitive": {"type": "boolean", "default": False},
                "context_lines": {"type": "integer", "default": 0},
            },
        },
    ),
    ToolSpec(
        name="TodoWrite",
        parameters={
            "$defs": {
                "Todo": {
                    "type": "object",
                    "properties": {
                        "content": {"type": "string"},
                        "status": {"type": "string"},
                    },
                }
            },
            "type": "object",
            "properties": {"todos": {"type": "array", "items": {"$ref": "#/$defs/Todo"}}},
        },
    ),
    ToolSpec(name="ExitPlanMode", parameters={"type": "object", "properties": {}}),
]


def qwen(name: str, **params: str) -> str:
    body = "".join(f"<parameter={k}>\n{v}\n</parameter>\n" for k, v in params.items())
    return f"<tool_call>\n<function={name}>\n{body}</function>\n</tool_call>"


# (text, expected calls [(name, args)], expected problems [(kind, name)], expected cleaned text)
CASES: list[tuple[str, list[tuple[str, dict[str, Any]]], list[tuple[str, str | None]], str]] = [
    # --- Qwen3 XML -------------------------------------------------------------------------------
    (
        "I'll read it.\n" + qwen("FileRead", file_path="a.py"),
        [("FileRead", {"file_path": "a.py"})],
        [],
        "I'll read it.",
    ),
    (
        qwen("FileRead", file_path="a.py", offset="10", limit="20"),
        [("FileRead", {"file_path": "a.py", "offset": 10, "limit": 20})],
        [],
        "",
    ),
    (  # multi-line value: inner newlines kept, the template's own newline each side dropped
        qwen("FileWrite", file_path="x.py", content="def f():\n    return 1\n"),
        [("FileWrite", {"file_path": "x.py", "content": "def f():\n    return 1\n"})],
        [],
        "",
    ),
    (  # no <tool_call> wrapper
        "<function=Grep>\n<parameter=pattern>\nTODO\n</parameter>\n</function>",
        [("Grep", {"pattern": "TODO"})],
        [],
        "",
    ),
    (  # booleans and ints from strings
        qwen("Grep", pattern="x", case_insensitive="true", context_lines="3"),
        [("Grep", {"pattern": "x", "case_insensitive": True, "context_lines": 3})],
        [],
        "",
    ),
    (  # "False" in another case
        qwen("Grep", pattern="x", case_insensitive="False"),
        [("Grep", {"pattern": "x", "case_insensitive": False})],
        [],
        "",
    ),
    (  # array of $ref objects given as JSON text
        qwen("TodoWrite", todos='[{"content": "a", "status": "pending"}]'),
        [("TodoWrite", {"todos": [{"content": "a", "status": "pending"}]})],
        [],
        "",
    ),
    (  # two calls in two wrappers, text between kept
        qwen("FileRead", file_path="a.py") + "\nand\n" + qwen("FileRead", file_path="b.py"),
        [("FileRead", {"file_path": "a.py"}), ("FileRead", {"file_path": "b.py"})],
        [],
        "and",
    ),
    (  # two functions inside one wrapper
        "<tool_call>\n<function=FileRead>\n<parameter=file_path>\na\n</parameter>\n</function>\n"
        "<function=FileRead>\n<parameter=file_path>\nb\n</parameter>\n</function>\n</tool_call>",
        [("FileRead", {"file_path": "a"}), ("FileRead", {"file_path": "b"})],
        [],
        "",
    ),
    (  # missing </parameter> closed by the next parameter and by </function>
        "<tool_call><function=FileRead><parameter=file_path>a.py<parameter=limit>5</function>"
        "</tool_call>",
        [("FileRead", {"file_path": "a.py", "limit": 5})],
        [],
        "",
    ),
    (  # missing </function>, but the wrapper closed: the body is complete
        "<tool_call>\n<function=FileRead>\n<parameter=file_path>\na.py\n</parameter>\n</tool_call>",
        [("FileRead", {"file_path": "a.py"})],
        [],
        "",
    ),
    (  # a tool without parameters
        qwen("ExitPlanMode"),
        [("ExitPlanMode", {})],
        [],
        "",
    ),
    (  # name differs only in case: fixed
        qwen("fileread", file_path="a.py"),
        [("FileRead", {"file_path": "a.py"})],
        [],
        "",
    ),
    (  # a value that is not an int stays as written (validation reports it downstream)
        qwen("FileRead", file_path="a.py", limit="ten"),
        [("FileRead", {"file_path": "a.py", "limit": "ten"})],
        [],
        "",
    ),
    (  # "null" for an optional int
        qwen("FileRead", file_path="a.py", limit="null"),
        [("FileRead", {"file_path": "a.py", "limit": None})],
        [],
        "",
    ),
    # --- Hermes JSON -----------------------------------------------------------------------------
    (
        'Sure.\n<tool_call>\n{"name": "FileRead", "arguments": {"file_path": "a.py"}}\n'
        "</tool_call>",
        [("FileRead", {"file_path": "a.py"})],
        [],
        "Sure.",
    ),
    (  # numbers as strings coerced
        '<tool_call>{"name": "FileRead", "arguments": {"file_path": "a", "limit": "7"}}'
        "</tool_call>",
        [("FileRead", {"file_path": "a", "limit": 7})],
        [],
        "",
    ),
    (  # double-encoded arguments
        '<tool_call>{"name": "FileRead", "arguments": "{\\"file_path\\": \\"a\\"}"}</tool_call>',
        [("FileRead", {"file_path": "a"})],
        [],
        "",
    ),
    (  # "parameters" alias
        '<tool_call>{"name": "Grep", "parameters": {"pattern": "x"}}</tool_call>',
        [("Grep", {"pattern": "x"})],
        [],
        "",
    ),
    (  # complete JSON, closing tag missing at the end: complete, accepted
        '<tool_call>{"name": "FileRead", "arguments": {"file_path": "a"}}',
        [("FileRead", {"file_path": "a"})],
        [],
        "",
    ),
    (  # an int given where a string is wanted
        '<tool_call>{"name": "FileWrite", "arguments": {"file_path": "n", "content": 42}}'
        "</tool_call>",
        [("FileWrite", {"file_path": "n", "content": "42"})],
        [],
        "",
    ),
    # --- fenced JSON -----------------------------------------------------------------------------
    (
        'Calling:\n```json\n{"name": "FileRead", "arguments": {"file_path": "a.py"}}\n```\nok',
        [("FileRead", {"file_path": "a.py"})],
        [],
        "Calling:\n\nok",
    ),
    (  # unlabelled fence, "parameters" alias
        '```\n{"name": "Grep", "parameters": {"pattern": "x", "context_lines": "2"}}\n```',
        [("Grep", {"pattern": "x", "context_lines": 2})],
        [],
        "",
    ),
    (  # an ordinary code block stays text
        "Run this:\n```python\nprint({'name': 1})\n```\n",
        [],
        [],
        "Run this:\n```python\nprint({'name': 1})\n```\n",
    ),
    (  # a JSON block that is not a call object stays text
        'Config:\n```json\n{"name": "demo", "version": 2}\n```',
        [],
        [],
        'Config:\n```json\n{"name": "demo", "version": 2}\n```',
    ),
    (  # a call object with extra keys is an example, not a call
        '```json\n{"name": "FileRead", "arguments": {}, "note": "example"}\n```',
        [],
        [],
        '```json\n{"name": "FileRead", "arguments": {}, "note": "example"}\n```',
    ),
    (  # markup inside <think> is the model musing, not a call
        "<think>maybe <tool_call>{...}</tool_call></think>Answer.",
        [],
        [],
        "<think>maybe <tool_call>{...}</tool_call></think>Answer.",
    ),
    (  # prose that mentions the syntax is not a call
        "Qwen writes <function=NAME ...> inside <tool_call> tags, e.g. <function= name>.",
        [],
        [],
        "Qwen writes <function=NAME ...> inside <tool_call> tags, e.g. <function= name>.",
    ),
    (  # plain prose: untouched
        "No tools needed, the answer is 4.",
        [],
        [],
        "No tools needed, the answer is 4.",
    ),
    # --- unknown, malformed, truncated -----------------------------------------------------------
    (
        qwen("Deploy", target="prod"),
        [],
        [("unknown_tool", "Deploy")],
        "",
    ),
    (
        '<tool_call>{"name": "rm_rf", "arguments": {}}</tool_call>',
        [],
        [("unknown_tool", "rm_rf")],
        "",
    ),
    (  # invalid JSON inside a closed wrapper
        '<tool_call>{"name": "FileRead", "arguments": {file_path: a}}</tool_call>',
        [],
        [("malformed", "FileRead")],
        "",
    ),
    (  # an empty wrapper
        "<tool_call></tool_call>",
        [],
        [("malformed", None)],
        "",
    ),
    (  # JSON without name/arguments
        '<tool_call>{"tool": "FileRead"}</tool_call>',
        [],
        [("malformed", None)],
        "",
    ),
    (  # Qwen XML cut inside a parameter value: a half-written file must never be written
        "Writing.\n<tool_call>\n<function=FileWrite>\n<parameter=file_path>\na.py\n</parameter>\n"
        "<parameter=content>\nimport os\ndef ",
        [],
        [("truncated", "FileWrite")],
        "Writing.",
    ),
    (  # cut after a closed parameter, before </function>
        "<tool_call>\n<function=FileWrite>\n<parameter=file_path>\na.py\n</parameter>\n",
        [],
        [("truncated", "FileWrite")],
        "",
    ),
    (  # cut inside the function tag itself
        "<tool_call>\n<function=FileWr",
        [],
        [("truncated", None)],
        "",
    ),
    (  # cut right after the wrapper opened
        "Let me write it.\n<tool_call>\n",
        [],
        [("truncated", None)],
        "Let me write it.",
    ),
    (  # cut inside the first tag of the body
        "<tool_call>\n<func",
        [],
        [("truncated", None)],
        "",
    ),
    (  # Hermes JSON cut off
        '<tool_call>\n{"name": "FileWrite", "arguments": {"file_path": "a.py", "content": "impo',
        [],
        [("truncated", "FileWrite")],
        "",
    ),
    (  # fenced JSON cut off
        'Here:\n```json\n{"name": "FileWrite", "arguments": {"file_path": "a", "content": "x',
        [],
        [("truncated", "FileWrite")],
        "Here:",
    ),
    (  # a good call followed by a truncated one: the good one survives, the cut one is reported
        qwen("FileRead", file_path="a.py") + "\n<tool_call>\n<function=FileWrite>\n<parameter=",
        [("FileRead", {"file_path": "a.py"})],
        [("truncated", "FileWrite")],
        "",
    ),
]


@pytest.mark.parametrize(("text", "calls", "problems", "cleaned"), CASES)
def test_recovery(
    text: str,
    calls: list[tuple[str, dict[str, Any]]],
    problems: list[tuple[str, str | None]],
    cleaned: str,
) -> None:
    rec = recover_tool_calls(text, TOOLS)
    assert [(c.name, c.arguments) for c in rec.calls] == calls
    assert [(p.kind, p.name) for p in rec.problems] == problems
    assert rec.text == cleaned


def test_case_count_meets_the_bar() -> None:
    assert len(CASES) >= 30


def test_truncated_problem_says_nothing_ran() -> None:
    rec = recover_tool_calls("<tool_call>\n<function=FileWrite>\n<parameter=content>\nabc", TOOLS)
    (prob,) = rec.problems
    assert prob.truncated
    assert "NOT run" in prob.message
    assert "FileWrite" in prob.message
    assert rec.calls == []


def test_unknown_tool_message_lists_the_real_tools() -> None:
    rec = recover_tool_calls(qwen("Deploy"), TOOLS)
    assert "FileRead" in rec.problems[0].message
    assert "'Deploy'" in rec.problems[0].message


def test_without_tools_any_name_is_accepted_and_values_stay_strings() -> None:
    rec = recover_tool_calls(qwen("Anything", n="5"), None)
    assert [(c.name, c.arguments) for c in rec.calls] == [("Anything", {"n": "5"})]


def test_formats_and_positions_are_reported() -> None:
    text = 'a\n<tool_call>{"name": "Grep", "arguments": {"pattern": "p"}}</tool_call>\n' + qwen(
        "FileRead", file_path="f"
    )
    rec = recover_tool_calls(text, TOOLS)
    assert [c.format for c in rec.calls] == ["hermes", "qwen_xml"]
    assert rec.calls[0].start < rec.calls[1].start
    assert rec.found
