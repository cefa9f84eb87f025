"""The LLM client layer: a `Model` protocol, our own stream events, an OpenAI-compatible client.

    from openmono.llm import ChatMessage, LLMSettings, OpenAICompatModel, TextDelta

    model = OpenAICompatModel(LLMSettings(endpoint="http://127.0.0.1:7474", api_key="..."))
    info = await model.probe()                      # ModelInfo(model=..., n_ctx=...)
    async with aclosing(model.stream([ChatMessage(role="user", content="hi")], tools)) as events:
        async for ev in events:                     # TextDelta, ReasoningDelta, ToolCallDelta, ...
            ...                                     # ToolCallComplete, RecoveredText, Usage, Done

SSE parsing, tool-call fragment assembly and text tool-call recovery (`openmono.llm.textcalls`)
live here and nowhere else; the loop sees only `StreamEvent`s and `LLMError`s.
"""

from openmono.llm._errors import (
    AuthError,
    ContextOverflowError,
    FirstTokenTimeout,
    HTTPStatusError,
    LLMError,
    LLMTimeoutError,
    StallTimeout,
    StreamError,
    TransportError,
)
from openmono.llm._events import (
    Done,
    ReasoningDelta,
    RecoveredText,
    StreamEvent,
    TextDelta,
    ToolCallComplete,
    ToolCallDelta,
    Usage,
)
from openmono.llm._messages import ChatMessage, ModelInfo, ToolCall, ToolSpec
from openmono.llm._model import Model
from openmono.llm._settings import LLMSettings

__all__ = [
    "AuthError",
    "ChatMessage",
    "ContextOverflowError",
    "Done",
    "FirstTokenTimeout",
    "HTTPStatusError",
    "LLMError",
    "LLMSettings",
    "LLMTimeoutError",
    "Model",
    "ModelInfo",
    "ReasoningDelta",
    "RecoveredText",
    "StallTimeout",
    "StreamError",
    "StreamEvent",
    "TextDelta",
    "ToolCall",
    "ToolCallComplete",
    "ToolCallDelta",
    "ToolSpec",
    "TransportError",
    "Usage",
]
