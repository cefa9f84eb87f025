"""The agent loop: a short driver (`_run`) whose steps each live in their own module.

`open_agent` wires a loop to a model, an executor, permissions and a session file; `AgentLoop` runs
turns and reports `LoopEvent`s to a sink (the CLI renders them; ACP will forward them).
"""

from openmono.loop._agent import Agent, open_agent, probe_model, web_access
from openmono.loop._catalog import ToolCatalog
from openmono.loop._dispatch import Asker, CallOutcome, DispatchContext, Dispatcher
from openmono.loop._events import (
    EventSink,
    LoopEvent,
    Notice,
    PermissionAsked,
    ReasoningChunk,
    StopReason,
    TextChunk,
    ToolFinished,
    ToolStarted,
    TurnDone,
    UsageReport,
    discard,
)
from openmono.loop._guards import DoomLoopGuard, RepetitionDetector, call_signature, is_repetitive
from openmono.loop._run import AgentLoop, LoopOptions
from openmono.loop._state import Conversation, estimate_tokens, replay

__all__ = [
    "Agent",
    "AgentLoop",
    "Asker",
    "CallOutcome",
    "Conversation",
    "DispatchContext",
    "Dispatcher",
    "DoomLoopGuard",
    "EventSink",
    "LoopEvent",
    "LoopOptions",
    "Notice",
    "PermissionAsked",
    "ReasoningChunk",
    "RepetitionDetector",
    "StopReason",
    "TextChunk",
    "ToolCatalog",
    "ToolFinished",
    "ToolStarted",
    "TurnDone",
    "UsageReport",
    "call_signature",
    "discard",
    "estimate_tokens",
    "is_repetitive",
    "open_agent",
    "probe_model",
    "replay",
    "web_access",
]
