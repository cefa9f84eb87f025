"""The prompted tool protocol: tools described in the system prompt, calls read back from the text.

For a chat template that cannot render tools, `prompted_messages` rewrites the conversation before
it goes on the wire (the session keeps the native shape, so a session can change protocol):

    system      `tool_block(tools)` + the system prompt: one compact line per tool and the call
                format (a `<tool_call>` block holding `{"name": ..., "arguments": {...}}`); the
                block comes first, a prefix every session shares (llama-server keeps it cached)
    examples    a few worked example turns built from the offered tools (`_examples`): a request,
                the call, its result, the answer; the one closest to the user's request last
    assistant   a message with `tool_calls` becomes its text followed by one `<tool_call>` block
                per call, exactly the shape the model is asked to write
    tool        results become a user message (there is no `tool` role in such a template), each
                result inside `<tool_response name="...">`; results in a row, and a user message
                right after them, are merged into one message so user/assistant turns alternate

The model's reply is parsed by the text-call recovery (`textcalls`) like any text-written call.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from openmono.llm._calltext import RESULT_CLOSE, call_text, result_text
from openmono.llm._coerce import resolve_ref
from openmono.llm._examples import example_turns
from openmono.llm._intent import latest_request
from openmono.llm._messages import ChatMessage, ToolSpec

_HEAD = """\
# Tools
You can call the tools below. To call one, reply with only this block, then stop:
<tool_call>
{{"name": "ToolName", "arguments": {{"key": "value"}}}}
</tool_call>
Take argument values from the user's request. Each result comes back to you in a
<tool_response> message. Once you have what you need, answer in plain text with no tool call.
{lines}"""


def _first_sentence(text: str, limit: int = 110) -> str:
    text = " ".join(text.split())
    cut = text.find(". ")
    if 0 <= cut < limit:
        return text[: cut + 1]
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def type_hint(schema: Mapping[str, Any], root: Mapping[str, Any], depth: int = 0) -> str:
    """A short type for one property: `string`, `integer`, `"a"|"b"`, `[string]`, `{k, k2?}`."""
    schema = resolve_ref(schema, root)
    if "enum" in schema:
        return "|".join(json.dumps(v) for v in schema["enum"])
    branches = schema.get("anyOf") or schema.get("oneOf")
    if isinstance(branches, list):
        hints = [type_hint(b, root, depth) for b in branches if b.get("type") != "null"]
        return "|".join(dict.fromkeys(hints)) or "null"
    kind = schema.get("type")
    if kind == "array":
        items = schema.get("items")
        inner = type_hint(items, root, depth + 1) if isinstance(items, Mapping) else "any"
        return f"[{inner}]"
    if kind == "object":
        props = schema.get("properties")
        if not isinstance(props, Mapping) or not props or depth > 1:
            return "object"
        required = set(schema.get("required") or ())
        keys = [k if k in required else f"{k}?" for k in props]
        return "{" + ", ".join(keys) + "}"
    if isinstance(kind, list):
        return "|".join(str(k) for k in kind if k != "null")
    return str(kind) if kind else "any"


def tool_line(tool: ToolSpec) -> str:
    """`- Name {"req": string, "opt"?: integer}: first sentence of the description.`"""
    params = tool.parameters
    props = params.get("properties") or {}
    required = set(params.get("required") or ())
    fields = []
    for key, schema in props.items():
        mark = "" if key in required else "?"
        hint = type_hint(schema, params) if isinstance(schema, Mapping) else "any"
        fields.append(f'"{key}"{mark}: {hint}')
    args = "{" + ", ".join(fields) + "}"
    return f"- {tool.name} {args}: {_first_sentence(tool.description)}"


def tool_block(tools: Sequence[ToolSpec]) -> str:
    """The part of the system prompt that describes the tools and how to call them."""
    return _HEAD.format(lines="\n".join(tool_line(t) for t in tools))


def prompted_overhead(tools: Sequence[ToolSpec]) -> list[ChatMessage]:
    """What the protocol adds to every request for `tools`: the block and the examples (for the
    context estimate; the system prompt itself is counted apart)."""
    if not tools:
        return []
    return [ChatMessage(role="system", content=tool_block(tools)), *example_turns(tools)]


def prompted_messages(
    messages: Sequence[ChatMessage],
    tools: Sequence[ToolSpec] | None,
    example_tools: Sequence[ToolSpec] | None = None,
    last: str | None = None,
) -> list[ChatMessage]:
    """The conversation rewritten for a template without tools (see the module docstring); the
    worked examples use `example_tools` (default: `tools`; `_intent` chooses them), the example
    of the tool `last` names nearest the request (`_pick` chose it)."""
    out: list[ChatMessage] = []
    names: dict[str, str] = {}
    rest = list(messages)
    if tools:
        # The block first: it is the same in every session, so llama-server can keep it cached
        # while the system prompt after it (workspace, notes, git) changes.
        system = rest.pop(0).content or "" if rest and rest[0].role == "system" else ""
        block = tool_block(tools)
        out.append(ChatMessage(role="system", content=f"{block}\n\n{system}" if system else block))
        shown = tools if example_tools is None else example_tools
        out.extend(example_turns(shown, latest_request(rest), last))
    for message in rest:
        if message.role == "assistant":
            for call in message.tool_calls:
                names[call.id] = call.name
            out.append(_assistant(message))
        elif message.role == "tool":
            name = names.get(message.tool_call_id or "") or message.name
            _add_user(out, result_text(name, message.content or ""))
        elif message.role == "user":
            _add_user(out, message.content or "")
        else:
            out.append(message)
    return out


def _assistant(message: ChatMessage) -> ChatMessage:
    if not message.tool_calls:
        return message
    parts = [message.content.strip()] if message.content and message.content.strip() else []
    parts += [call_text(c.name, c.arguments) for c in message.tool_calls]
    return ChatMessage(
        role="assistant", content="\n".join(parts), reasoning_content=message.reasoning_content
    )


def _add_user(out: list[ChatMessage], text: str) -> None:
    """Append a user message, merged into the previous one when that one holds results."""
    last = out[-1] if out else None
    if (
        last is not None
        and last.role == "user"
        and (last.content or "").rstrip().endswith(RESULT_CLOSE)
    ):
        out[-1] = ChatMessage(role="user", content=f"{last.content}\n{text}")
        return
    out.append(ChatMessage(role="user", content=text))
