"""The LLM client layer: a `Model` protocol, our own stream events, an OpenAI-compatible client.

    from openmono.llm import ChatMessage, LLMSettings, OpenAICompatModel, TextDelta

    model = OpenAICompatModel(LLMSettings(endpoint="http://127.0.0.1:7474", api_key="..."))
    info = await model.probe()                      # ModelInfo(model=..., n_ctx=...)
    async with aclosing(model.stream([ChatMessage(role="user", content="hi")], tools)) as events:
        async for ev in events:                     # TextDelta, ReasoningDelta, ToolCallDelta, ...
            ...                                     # ToolCallComplete, RecoveredText, Usage, Done

SSE parsing, tool-call fragment assembly and text tool-call recovery (`openmono.llm.textcalls`)
live here and nowhere else; the loop sees only `StreamEvent`s and `LLMError`s. So does the tool
protocol: for a template without tools, `prompted` puts the tools in the system prompt and reads
the calls from the text (`_protocol`, `_prompted`, `_grammar`), the loop never sees the difference
but in its context estimate (`prompted_overhead`).
"""

from openmono.config import LLMSettings
from openmono.llm._affinity import conversation, current_conversation
from openmono.llm._client import OpenAICompatModel, RequestOptions
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
    TrustError,
)
from openmono.llm._events import (
    Done,
    Note,
    ReasoningDelta,
    RecoveredText,
    StreamEvent,
    TextDelta,
    ToolCallComplete,
    ToolCallDelta,
    Usage,
)
from openmono.llm._messages import ChatMessage, ModelInfo, ToolCall, ToolSpec, model_label
from openmono.llm._model import Model
from openmono.llm._prompted import prompted_overhead
from openmono.llm._protocol import ProtocolSetting, ToolProtocol
from openmono.llm._wire import EndpointError, normalize_endpoint
from openmono.llm.textcalls import TAG_MARKERS, CallProblem, Recovery, TextCall, recover_tool_calls

__all__ = [
    "TAG_MARKERS",
    "AuthError",
    "CallProblem",
    "ChatMessage",
    "ContextOverflowError",
    "Done",
    "EndpointError",
    "FirstTokenTimeout",
    "HTTPStatusError",
    "LLMError",
    "LLMSettings",
    "LLMTimeoutError",
    "Model",
    "ModelInfo",
    "Note",
    "OpenAICompatModel",
    "ProtocolSetting",
    "ReasoningDelta",
    "RecoveredText",
    "Recovery",
    "RequestOptions",
    "StallTimeout",
    "StreamError",
    "StreamEvent",
    "TextCall",
    "TextDelta",
    "ToolCall",
    "ToolCallComplete",
    "ToolCallDelta",
    "ToolProtocol",
    "ToolSpec",
    "TransportError",
    "TrustError",
    "Usage",
    "conversation",
    "current_conversation",
    "model_label",
    "normalize_endpoint",
    "prompted_overhead",
    "recover_tool_calls",
]
