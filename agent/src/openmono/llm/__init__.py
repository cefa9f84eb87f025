"""The LLM client layer: a `Model` protocol, our own stream events, an OpenAI-compatible client.

    from openmono.llm import ChatMessage, LLMSettings, OpenAICompatModel, PromptedTools, TextDelta

    model = PromptedTools(OpenAICompatModel(LLMSettings(endpoint=..., api_key=...)), settings)
    info = await model.probe()                      # ModelInfo(model=..., n_ctx=..., tool_protocol)
    async with aclosing(model.stream([ChatMessage(role="user", content="hi")], tools)) as events:
        async for ev in events:                     # TextDelta, ReasoningDelta, ToolCallDelta, ...
            ...                                     # ToolCallComplete, Usage, Done

SSE parsing and tool-call fragment assembly live in the client and nowhere else. The tool protocol
is a `Model` wrapper (`PromptedTools`): for a template without tools, `prompted` puts the tools in
the system prompt and reads the calls from the text (`_prompted`, `_grammar`, `textcalls`); calls
written as text are recovered under either protocol, and their markup held back from the text.
So the loop sees only clean text, whole calls and `LLMError`s, and never which protocol is used;
what the tools cost in the prompt it asks the model (`Model.tool_tokens`).
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
    StreamEvent,
    TextDelta,
    ToolCallComplete,
    ToolCallDelta,
    Usage,
)
from openmono.llm._examples import MAX_EXAMPLES
from openmono.llm._messages import (
    ChatMessage,
    ModelInfo,
    ToolCall,
    ToolSpec,
    estimate_tokens,
    model_label,
    native_tool_tokens,
)
from openmono.llm._model import Model
from openmono.llm._protocol import ProtocolSetting, ToolProtocol
from openmono.llm._tools import GROUND_TIMEOUT_S, PromptedTools
from openmono.llm._wire import EndpointError, normalize_endpoint
from openmono.llm.textcalls import CallProblem, Recovery, TextCall, recover_tool_calls

__all__ = [
    "GROUND_TIMEOUT_S",
    "MAX_EXAMPLES",
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
    "PromptedTools",
    "ProtocolSetting",
    "ReasoningDelta",
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
    "estimate_tokens",
    "model_label",
    "native_tool_tokens",
    "normalize_endpoint",
    "recover_tool_calls",
]
