"""The output-schema correction's `response_format` against the real llama.cpp server (xllamacpp +
SmolLM2-135M): llama.cpp turns the JSON Schema into a grammar, so even this tiny model, which
answers such a request in prose when unconstrained, can only reply with JSON of that shape."""

from __future__ import annotations

import json
from contextlib import aclosing

import jsonschema_rs
import pytest
from openmono.llm import ChatMessage, LLMSettings, OpenAICompatModel, TextDelta

from tests.support.llama import LlamaServer

pytestmark = pytest.mark.integration

SCHEMA = {
    "type": "object",
    "properties": {
        "animal": {"type": "string", "enum": ["cat", "dog"]},
        "legs": {"type": "integer", "minimum": 0, "maximum": 8},
    },
    "required": ["animal", "legs"],
    "additionalProperties": False,
}


async def test_a_json_schema_response_format_constrains_the_real_model(llama: LlamaServer) -> None:
    settings = LLMSettings(endpoint=llama.url, api_key=llama.api_key, first_token_timeout_s=120)
    messages = [ChatMessage(role="user", content="Tell me about cats and how many legs they have.")]
    response_format = {
        "type": "json_schema",
        "json_schema": {"name": "animal", "schema": SCHEMA, "strict": True},
    }
    parts: list[str] = []
    async with OpenAICompatModel(settings) as model:
        stream = model.stream(
            messages, max_tokens=48, temperature=0, response_format=response_format
        )
        async with aclosing(stream) as events:
            async for event in events:
                if isinstance(event, TextDelta):
                    parts.append(event.text)
    value = json.loads("".join(parts))
    assert jsonschema_rs.validator_for(SCHEMA).is_valid(value), value
