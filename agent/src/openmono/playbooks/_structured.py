"""A step's answer checked against its `output-schema`, with one grammar-constrained correction.

The final answer is read as JSON (the whole text, or the one fenced block in it) and validated.
On failure one correction turn follows: the problems and the schema go back to the model in a
user message, and the request carries `response_format: {"type": "json_schema", ...}`, which
llama.cpp compiles into a grammar, so the reply can only be JSON of that shape. Both messages are
kept in the step's conversation. A second failure fails the step.
"""

from __future__ import annotations

import json
import re
from typing import Any

import jsonschema_rs

from openmono.llm import ChatMessage, Model, TextDelta
from openmono.loop import Conversation, EventSink, TextChunk
from openmono.playbooks._errors import ValueInvalid

_FENCE = re.compile(r"```(?:json)?\s*\n(.*?)\n?```", re.S)
MAX_PROBLEMS = 5


def parse_json(text: str) -> Any:
    """The JSON value in `text`; ValueError when there is none."""
    stripped = text.strip()
    try:
        return json.loads(stripped)
    except ValueError:
        pass
    blocks = _FENCE.findall(stripped)
    if len(blocks) == 1:
        return json.loads(blocks[0])
    raise ValueInvalid("the answer is not JSON (nor one fenced JSON block)")


def problems(schema: dict[str, Any], text: str) -> tuple[Any, list[str]]:
    """The parsed value and what is wrong with it (empty: it fits)."""
    try:
        value = parse_json(text)
    except ValueError as exc:
        return None, [str(exc)]
    found = []
    for error in jsonschema_rs.validator_for(schema).iter_errors(value):
        where = "/".join(str(p) for p in error.instance_path) or "(top level)"
        found.append(f"at {where}: {error.message}")
        if len(found) >= MAX_PROBLEMS:
            break
    return value, found


def response_format(name: str, schema: dict[str, Any]) -> dict[str, Any]:
    safe = re.sub(r"[^A-Za-z0-9_-]", "_", name)[:64] or "output"
    return {"type": "json_schema", "json_schema": {"name": safe, "schema": schema, "strict": True}}


def correction_prompt(step: str, schema: dict[str, Any], found: list[str]) -> str:
    listed = "\n".join(f"- {p}" for p in found)
    return (
        f"Your answer to step {step!r} must be a JSON value matching this JSON Schema:\n"
        f"{json.dumps(schema, indent=2)}\n\nWhat was wrong:\n{listed}\n\n"
        "Reply with only the corrected JSON value: no prose, no code fence."
    )


async def correct(
    model: Model,
    conv: Conversation,
    step: str,
    schema: dict[str, Any],
    found: list[str],
    emit: EventSink,
    *,
    max_tokens: int | None = None,
) -> str:
    """One correction turn (see the module docstring); the reply's text. Raises `LLMError`."""
    conv.add(ChatMessage(role="user", content=correction_prompt(step, schema, found)))
    parts: list[str] = []
    stream = model.stream(
        conv.wire(), None, max_tokens=max_tokens, response_format=response_format(step, schema)
    )
    try:
        async for event in stream:
            if isinstance(event, TextDelta):
                parts.append(event.text)
                emit(TextChunk(text=event.text))
    finally:
        # Close the stream (hence the HTTP response) also when stopped early.
        aclose = getattr(stream, "aclose", None)
        if aclose is not None:
            await aclose()
        text = "".join(parts)
        if text:
            conv.add(ChatMessage(role="assistant", content=text))
    return text
